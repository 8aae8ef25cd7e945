//! The cluster scripts and manifests (tools/cluster): the Slurm path on a
//! real single-node cluster, the Kubernetes manifest's structure, and its
//! pods' command lines run as a Job's pods would run them.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use super::{nodes, path_str};
use crate::support::*;

fn cluster_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/cluster")
}

#[test]
fn a_slurm_chain_of_shards_waves_and_a_merge_in_stages_gives_the_single_process_bytes_and_cancelled_tasks_resume_alone()
{
    // The cluster script does the work and every check (tools/cluster/
    // slurm_test.sh): a real slurmctld, slurmd and munged on loopback.
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let script = cluster_dir().join("slurm_test.sh");
    let work = dir.path().join("work");
    let flags = ["--body", "earth", "--depth", "3", "--tier", "test", "--level", "3"];
    let out = Command::new("bash")
        .arg(&script)
        .args([env!("CARGO_BIN_EXE_planet-bake"), path_str(&dem), path_str(&work)])
        .args(flags)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "slurm_test.sh failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("byte-identical to the single-process bake"), "{stdout}");
    assert!(stdout.contains("re-submitted shard and the re-merged pack are byte-identical"), "{stdout}");
    assert!(stdout.contains("wave 0 task 1 cancelled mid-run"), "{stdout}");
    assert!(stdout.contains("re-submitted wave task and the re-merged pack are byte-identical"), "{stdout}");
    assert!(stdout.contains("copy task 1 cancelled mid-run"), "{stdout}");
    assert!(stdout.contains("re-submitted copy task and the committed pack are byte-identical"), "{stdout}");
}

#[test]
fn local_waves_runs_every_stage_after_the_shards_to_the_single_process_bytes_and_counts_its_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let bake = env!("CARGO_BIN_EXE_planet-bake");
    let flags = ["--body", "earth", "--depth", "3", "--tier", "test", "--level", "3", "--jobs", "1"];
    // A mode's subcommand (shard I/N) comes first; the flags after it.
    let run = |mode: &[&str], extra: &[&str]| {
        let out =
            Command::new(bake).args(mode).args(["--dem", path_str(&dem)]).args(flags).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let single = dir.path().join("single.planetpack");
    run(&[], &["--out", path_str(&single)]);
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    // 8 shards: three waves (8, 2 and 1 tasks).
    for i in 0..8 {
        let out = shards.join(format!("shard-{i}-of-8.planetshard"));
        run(&["shard", &format!("{i}/8")], &["--out", path_str(&out)]);
    }
    // The merge in stages (3 copy tasks), then in one process: the same bytes.
    for (copies, merged, stages) in [("3", "merged.planetpack", "copy (3 tasks)"), ("0", "whole.planetpack", "whole ")]
    {
        let out = Command::new("bash")
            .arg(cluster_dir().join("local-waves.sh"))
            .args([bake, path_str(&shards), "8", path_str(&shards.join(merged))])
            .env("PLANET_PARALLEL", "2")
            .env("PLANET_COPY_TASKS", copies)
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "local-waves.sh failed:\n{stdout}\n{stderr}");
        assert!(std::fs::read(&single).unwrap() == std::fs::read(shards.join(merged)).unwrap(), "{merged}");
        assert!(stderr.contains("0 filtered here"), "the merge only laid out: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert!(lines[0].contains("wave 0 (8 tasks)") && lines[0].contains("wave 2 (1 tasks)"), "{stdout}");
        assert!(lines[0].contains(stages), "{stdout}");
        let total: f64 = lines.last().unwrap().parse().unwrap_or_else(|_| panic!("a number last: {stdout}"));
        assert!(total > 0.0, "{stdout}");
    }
}

/// Regression (second review of #33): a copy-task count that is not a
/// number was found only after every bake job was queued, and left them
/// queued. submit.sh now refuses it before its first sbatch.
#[test]
fn submit_refuses_a_bad_copy_task_count_before_submitting_anything() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = dir.path().join("sbatch-calls");
    let fake = bin.join("sbatch");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"$@\" >> {}\necho 1\n", calls.display())).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let dem = dir.path().join("dem.tif");
    std::fs::write(&dem, b"not read").unwrap();
    for bad in ["auto", "8x", "1.5"] {
        let out = Command::new("bash")
            .arg(cluster_dir().join("slurm/submit.sh"))
            .args([
                "4",
                path_str(&dir.path().join("shards")),
                path_str(&dir.path().join("p.planetpack")),
                path_str(&dem),
            ])
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
            .env("PLANET_BAKE", env!("CARGO_BIN_EXE_planet-bake"))
            .env("PLANET_COPY_TASKS", bad)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("PLANET_COPY_TASKS must be a whole number"), "{bad}: {stderr}");
        assert!(!calls.exists(), "{bad}: sbatch was called");
    }
}

/// The variables a script refuses to run without (`: "${NAME:?...}"`).
fn required_variables(script: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(script).unwrap();
    text.split("${").skip(1).filter_map(|s| s.split_once(":?").map(|(name, _)| name.to_owned())).collect()
}

/// A Job's one container: its command, env as pairs, mount paths and the
/// claim names of its pod's volumes.
struct Container {
    command: Vec<String>,
    env: Vec<(String, String)>,
    mounts: Vec<String>,
    claims: Vec<String>,
}

fn container(job: &Yaml) -> Container {
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"), "a failed pod is retried by the Job, not in place");
    let c = &pod["containers"][0];
    let command = c["command"].as_vec().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    let env = c["env"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_owned(), e["value"].as_str().unwrap().to_owned()))
        .collect();
    let mounts =
        c["volumeMounts"].as_vec().unwrap().iter().map(|m| m["mountPath"].as_str().unwrap().to_owned()).collect();
    let claims = pod["volumes"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|v| v["persistentVolumeClaim"]["claimName"].as_str().expect("a shared claim").to_owned())
        .collect();
    Container { command, env, mounts, claims }
}

fn var<'a>(env: &'a [(String, String)], name: &str) -> &'a str {
    env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("{name} is not set"))
}

#[test]
fn the_kubernetes_manifest_is_indexed_jobs_for_shards_each_wave_and_the_merge_copies_over_one_shared_volume_running_the_slurm_scripts()
 {
    let text = std::fs::read_to_string(cluster_dir().join("k8s/bake.yaml")).unwrap();
    let docs = YamlLoader::load_from_str(&text).expect("the manifest parses as YAML");
    for d in &docs {
        assert_eq!((d["apiVersion"].as_str(), d["kind"].as_str()), (Some("batch/v1"), Some("Job")));
    }
    let stage_of = |d: &Yaml| d["metadata"]["labels"]["planet.example/stage"].as_str().unwrap().to_owned();
    let shards = &docs[0];
    let waves: Vec<&Yaml> = docs.iter().filter(|d| stage_of(d).starts_with("wave-")).collect();
    let merges: Vec<&Yaml> = docs.iter().filter(|d| stage_of(d).starts_with("merge-")).collect();
    assert_eq!(merges.iter().map(|d| stage_of(d)).collect::<Vec<_>>(), ["merge-layout", "merge-copy", "merge-commit"]);
    assert_eq!(docs.len(), 1 + waves.len() + merges.len());
    let merge = merges[0];
    let spec = &shards["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let completions = spec["completions"].as_i64().unwrap();
    let parallelism = spec["parallelism"].as_i64().unwrap();
    assert!(completions >= 1 && (1..=completions).contains(&parallelism), "{completions} {parallelism}");

    let Container { command: shard_cmd, env: shard_env, mounts: shard_mounts, claims: shard_claims } =
        container(shards);
    let Container { command: merge_cmd, env: merge_env, mounts: merge_mounts, claims: merge_claims } = container(merge);
    // The same scripts as the Slurm path, every variable they require set.
    for (cmd, env, script) in [(&shard_cmd, &shard_env, "bake-shard.sbatch"), (&merge_cmd, &merge_env, "merge.sbatch")]
    {
        assert_eq!(cmd.len(), 1);
        assert!(cmd[0].ends_with(&format!("/cluster/slurm/{script}")), "{cmd:?}");
        let required = required_variables(&cluster_dir().join("slurm").join(script));
        assert!(required.contains(&"PLANET_SHARDS".to_owned()), "{script}: {required:?}");
        for name in required {
            var(env, &name);
        }
    }
    assert_eq!(var(&shard_env, "PLANET_SHARDS").parse::<i64>().unwrap(), completions, "N in the Job and the bake");
    assert_eq!(var(&merge_env, "PLANET_SHARDS"), var(&shard_env, "PLANET_SHARDS"));
    // One Indexed Job per wave, each of the task count the wave plan gives.
    let plan = Command::new(env!("CARGO_BIN_EXE_planet-bake"))
        .args(["wave-plan", var(&shard_env, "PLANET_SHARDS")])
        .output()
        .unwrap();
    let plan: Vec<i64> = String::from_utf8_lossy(&plan.stdout).split_whitespace().map(|t| t.parse().unwrap()).collect();
    assert_eq!(waves.len(), plan.len(), "one Job per wave of {plan:?}");
    for (w, (job, tasks)) in waves.iter().zip(&plan).enumerate() {
        assert_eq!(job["spec"]["completionMode"].as_str(), Some("Indexed"));
        assert_eq!(job["spec"]["completions"].as_i64(), Some(*tasks), "wave {w}");
        let wave = container(job);
        assert!(wave.command[0].ends_with("/cluster/slurm/bake-wave.sbatch"), "{:?}", wave.command);
        for name in required_variables(&cluster_dir().join("slurm/bake-wave.sbatch")) {
            var(&wave.env, &name);
        }
        assert_eq!(var(&wave.env, "PLANET_WAVE"), w.to_string());
        assert_eq!(var(&wave.env, "PLANET_SHARDS"), var(&shard_env, "PLANET_SHARDS"));
        assert_eq!(var(&wave.env, "PLANET_SHARD_DIR"), var(&shard_env, "PLANET_SHARD_DIR"));
        assert_eq!(wave.claims, shard_claims);
    }
    assert_eq!(var(&merge_env, "PLANET_SHARD_DIR"), var(&shard_env, "PLANET_SHARD_DIR"));
    // The merge's stages: each runs merge.sbatch on the same parts and pack;
    // the copy Job has one pod per range the layout cuts.
    for (job, stage) in merges.iter().zip(["layout", "copy", "commit"]) {
        let c = container(job);
        assert!(c.command[0].ends_with("/cluster/slurm/merge.sbatch"), "{:?}", c.command);
        assert_eq!(var(&c.env, "PLANET_MERGE_STAGE"), stage);
        for name in ["PLANET_SHARDS", "PLANET_SHARD_DIR", "PLANET_OUT"] {
            assert_eq!(var(&c.env, name), var(&merge_env, name), "{stage}: {name}");
        }
        assert_eq!(c.claims, shard_claims);
    }
    let copy = &merges[1]["spec"];
    assert_eq!(copy["completionMode"].as_str(), Some("Indexed"));
    let copy_tasks: i64 = var(&merge_env, "PLANET_COPY_TASKS").parse().unwrap();
    assert_eq!((copy["completions"].as_i64(), copy["parallelism"].as_i64()), (Some(copy_tasks), Some(copy_tasks)));
    // Shards, inputs and pack on the one shared volume.
    assert_eq!(shard_claims, merge_claims);
    let on_volume = |path: &str, mounts: &[String]| mounts.iter().any(|m| path.starts_with(m.as_str()));
    for (path, mounts) in [
        (var(&shard_env, "PLANET_SHARD_DIR"), &shard_mounts),
        (var(&shard_env, "PLANET_DEM"), &shard_mounts),
        (var(&merge_env, "PLANET_OUT"), &merge_mounts),
    ] {
        assert!(on_volume(path, mounts), "{path} is on the shared volume {mounts:?}");
    }
}

#[test]
fn the_pods_command_lines_bake_shards_and_waves_and_lay_them_out_to_the_single_process_bytes() {
    // What each pod of the Indexed Job runs, with the variables Kubernetes
    // and the manifest give it, then what the merge pod runs.
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let bake = env!("CARGO_BIN_EXE_planet-bake");
    let args = "--body earth --depth 2 --tier test --level 3";
    let single = dir.path().join("single.planetpack");
    let status = Command::new(bake)
        .args(["--dem", path_str(&dem), "--out", path_str(&single)])
        .args(args.split(' '))
        .output()
        .unwrap();
    assert!(status.status.success());
    let shards = dir.path().join("shards");
    let pack = dir.path().join("merged.planetpack");
    let pod_command = |script: &str, index: Option<u32>| {
        let mut c = Command::new(cluster_dir().join("slurm").join(script));
        c.env("PLANET_BAKE", bake)
            .env("PLANET_DEM", &dem)
            .env("PLANET_SHARDS", "3")
            .env("PLANET_SHARD_DIR", &shards)
            .env("PLANET_BAKE_ARGS", args)
            .env("PLANET_OUT", &pack)
            .env("PLANET_JOBS", "2")
            .env_remove("SLURM_ARRAY_TASK_ID");
        if let Some(i) = index {
            c.env("JOB_COMPLETION_INDEX", i.to_string());
        }
        c
    };
    let run = |c: &mut Command| {
        let out = c.output().unwrap();
        assert!(out.status.success(), "{c:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let pod = |script: &str, index: Option<u32>| run(&mut pod_command(script, index));
    let pod_in_wave = |c: &mut Command, wave: u32| run(c.env("PLANET_WAVE", wave.to_string()));
    std::fs::create_dir(&shards).unwrap();
    for i in [2, 0, 1] {
        pod("bake-shard.sbatch", Some(i));
    }
    // The waves (3 shards: 3 tasks, then 1), each pod with its index.
    for (wave, tasks) in [(0, 3), (1, 1)] {
        for j in (0..tasks).rev() {
            pod_in_wave(&mut pod_command("bake-wave.sbatch", Some(j)), wave);
        }
    }
    // The merge in stages: the layout pod, two copy pods (in either order), the commit pod.
    let pod_in_stage =
        |c: &mut Command, stage: &str| run(c.env("PLANET_MERGE_STAGE", stage).env("PLANET_COPY_TASKS", "2"));
    pod_in_stage(&mut pod_command("merge.sbatch", None), "layout");
    // A copy pod killed after its first write (the `merge-copy` crash window) marks nothing done;
    // run again, it copies its range whole.
    let killed = pod_command("merge.sbatch", Some(1))
        .env("PLANET_MERGE_STAGE", "copy")
        .env("PLANET_ABORT_AT", "merge-copy")
        .output()
        .unwrap();
    assert!(!killed.status.success(), "the crash hook killed the copy");
    assert!(String::from_utf8_lossy(&killed.stderr).contains("PLANET_ABORT_AT=merge-copy"));
    assert!(!dir.path().join("merged.planetpack.copy-1").exists(), "a killed copy marked its range done");
    for k in [1, 0] {
        pod_in_stage(&mut pod_command("merge.sbatch", Some(k)), "copy");
    }
    // A commit killed after recording the detail law, before its rename, then after it: each run
    // again finishes, the second by cleaning up alone.
    for window in ["bake-rename", "bake-cleanup"] {
        let killed = pod_command("merge.sbatch", None)
            .env("PLANET_MERGE_STAGE", "commit")
            .env("PLANET_ABORT_AT", window)
            .output()
            .unwrap();
        assert!(!killed.status.success(), "{window}: the crash hook killed the commit");
        assert_eq!(pack.exists(), window == "bake-cleanup", "{window}: nothing at the pack before its rename");
        if window == "bake-cleanup" {
            pod_in_stage(&mut pod_command("merge.sbatch", None), "commit");
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("merged.planetpack."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(std::fs::read(&single).unwrap(), std::fs::read(&pack).unwrap(), "merged pack, byte for byte");
}

#[test]
fn inputs_over_http_through_vsicurl_bake_the_bytes_of_the_same_files_on_disk() {
    // Identity by content: the same DEM and imagery, read by GDAL over
    // HTTP byte ranges from a loopback nginx, make the same pack as from
    // disk (same fingerprint); and a shard baked from the URL merges with
    // shards baked from the local path.
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir(&served).unwrap();
    let dem = earth_tiff(&served, "earth.tif", nodes(), GEO);
    let (imagery, _) = colour_and_class_tiffs(&served);
    let nginx = planet_remote::testing::Nginx::serve(&served);
    let remote_dem = format!("/vsicurl/{}", nginx.url("earth.tif"));
    let remote_imagery = format!("/vsicurl/{}", nginx.url("rgb.tif"));
    let bake = env!("CARGO_BIN_EXE_planet-bake");
    let run = |dem: &str, imagery: &str, out: &Path, mode: &[&str]| {
        let o = Command::new(bake)
            .args(mode)
            .args(["--dem", dem, "--imagery", imagery, "--out", path_str(out)])
            .args(["--body", "earth", "--depth", "2", "--tier", "test", "--level", "3"])
            .env("GDAL_HTTP_MAX_RETRY", "0")
            .output()
            .unwrap();
        assert!(o.status.success(), "{dem}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let local = dir.path().join("local.planetpack");
    let remote = dir.path().join("remote.planetpack");
    run(path_str(&dem), path_str(&imagery), &local, &[]);
    run(&remote_dem, &remote_imagery, &remote, &[]);
    assert!(nginx.requests_logged_reaching(2) >= 2, "GDAL read the inputs over HTTP");
    assert_eq!(std::fs::read(&local).unwrap(), std::fs::read(&remote).unwrap(), "the same bytes from disk and HTTP");

    let shards: Vec<PathBuf> = (0..2).map(|i| dir.path().join(format!("s{i}.planetshard"))).collect();
    run(&remote_dem, &remote_imagery, &shards[0], &["shard", "0/2"]);
    run(path_str(&dem), path_str(&imagery), &shards[1], &["shard", "1/2"]);
    let merged = dir.path().join("merged.planetpack");
    let o = Command::new(bake)
        .args(["merge", path_str(&shards[0]), path_str(&shards[1]), "--out", path_str(&merged)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&local).unwrap(), std::fs::read(&merged).unwrap(), "one shard from HTTP, one from disk");

    // A URL that does not answer is a clear error naming it.
    let missing = format!("/vsicurl/{}", nginx.url("missing.tif"));
    let o = Command::new(bake)
        .args(["--dem", &missing, "--out", path_str(&dir.path().join("x.planetpack")), "--body", "earth"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.tif"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn shards_given_a_digest_manifest_make_the_same_pack_and_refuse_a_changed_input() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let bake = env!("CARGO_BIN_EXE_planet-bake");
    let common = ["--body", "earth", "--depth", "2", "--tier", "test", "--level", "3"];
    // `mode` is the subcommand and what follows it; `common` is the bake's flags.
    let run = |out: &Path, mode: &[&str]| {
        Command::new(bake)
            .args(mode)
            .args(["--dem", path_str(&dem), "--out", path_str(out)])
            .args(common)
            .output()
            .unwrap()
    };
    let ok = |o: std::process::Output| assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest = dir.path().join("inputs.digest.json");
    ok(run(&manifest, &["digest"]));
    let single = dir.path().join("single.planetpack");
    ok(run(&single, &[]));
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.path().join(format!("s{i}.planetshard"))).collect();
    for (i, shard) in shards.iter().enumerate() {
        ok(run(shard, &["shard", &format!("{i}/2"), "--inputs-digest", path_str(&manifest)]));
    }
    let merged = dir.path().join("merged.planetpack");
    ok(Command::new(bake)
        .args(["merge", path_str(&shards[0]), path_str(&shards[1]), "--out", path_str(&merged)])
        .output()
        .unwrap());
    assert_eq!(std::fs::read(&single).unwrap(), std::fs::read(&merged).unwrap(), "same fingerprint, same bytes");

    // The DEM re-written with other heights: its digest no longer matches.
    let other: Vec<f32> = nodes().iter().map(|v| v + 1.0).collect();
    earth_tiff(dir.path(), "earth.tif", &other, GEO);
    let o = run(&dir.path().join("x.planetshard"), &["shard", "0/2", "--inputs-digest", path_str(&manifest)]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("does not match the --inputs-digest manifest"), "{stderr}");
    assert!(stderr.contains("earth.tif"), "{stderr}");
}
