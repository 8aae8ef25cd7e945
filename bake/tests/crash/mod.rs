//! Crash safety, input identity and the bake's refusals, on the real
//! planet-bake binary.
//!
//! The key decision: every crash window is entered by really killing the
//! binary there (the `PLANET_ABORT_AT` test hook calls `abort()`, so no
//! destructor, flush or cleanup runs), then the test looks at what is on
//! disk and re-runs the same command; recovery counts only if the result is
//! byte for byte the pack an uninterrupted run writes.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use planet_bake::{BakeOptions, Region, bake};
use planet_terrain::pack::{Pack, journal_path, partial_path, tmp_path};

use super::{Quiet, nodes, options, path_str};
use crate::support::*;

const COMMON: [&str; 10] = ["--body", "earth", "--depth", "1", "--tier", "test", "--level", "3", "--jobs", "2"];
const REGION: &str = "10,20,15,30";

/// Runs planet-bake with `env` set (a crash hook) and `args`.
fn planet_bake(env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planet-bake")).envs(env.iter().copied()).args(args).output().unwrap()
}

fn bake_args<'a>(dem: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--dem", path_str(dem), "--out", path_str(out)];
    args.extend_from_slice(&COMMON);
    args.extend_from_slice(extra);
    args
}

/// `planet-bake patch` of `region` in `out` from `dem`, with the bake's
/// flags a patch takes (the pack's level is its own).
fn patch_args<'a>(dem: &'a Path, out: &'a Path, region: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["patch", "--region", region, "--dem", path_str(dem), "--out", path_str(out)];
    args.extend(COMMON.chunks(2).filter(|flag| flag[0] != "--level").flatten());
    args.extend_from_slice(extra);
    args
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the process died of the abort hook (SIGABRT), not of an error.
fn assert_aborted(o: &Output, window: &str) {
    assert_eq!(o.status.signal(), Some(6), "{window}: expected an abort, got {:?}: {}", o.status, stderr(o));
}

fn assert_ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: {}", stderr(o));
}

/// How many intact tile records a partial file holds (its layout is in
/// docs/planetpack.md, "The partial file").
fn staged_records(partial: &Path) -> usize {
    let bytes = std::fs::read(partial).unwrap();
    let (mut at, mut count) = (8 + 256 + 4, 0);
    while at + 36 <= bytes.len() && &bytes[at..at + 4] == b"TILE" {
        let length = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap()) as usize;
        at += 36 + length + 4;
        count += usize::from(at <= bytes.len());
    }
    count
}

#[test]
fn every_crash_window_of_a_full_bake_recovers_to_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let reference = dir.path().join("reference.planetpack");
    assert_ok(&planet_bake(&[], &bake_args(&dem, &reference, &[])), "reference bake");
    let expected = std::fs::read(&reference).unwrap();
    let tiles = Pack::open(&reference).unwrap().tile_count() as usize;
    assert_eq!(tiles, 30);
    let windows: [(&str, &str, &str); 5] = [
        ("bake-stage", "PLANET_ABORT_AFTER_TILES", "10"),
        ("bake-assemble", "PLANET_ABORT_AT", "bake-assemble"),
        ("bake-audit", "PLANET_ABORT_AT", "bake-audit"),
        ("bake-rename", "PLANET_ABORT_AT", "bake-rename"),
        ("bake-cleanup", "PLANET_ABORT_AT", "bake-cleanup"),
    ];
    for (window, var, value) in windows {
        for rerun in ["--resume", "afresh", "--if-unchanged"] {
            let out = dir.path().join(format!("{window}-{}.planetpack", rerun.trim_start_matches('-')));
            let killed = planet_bake(&[(var, value)], &bake_args(&dem, &out, &[]));
            assert_aborted(&killed, window);
            let partial = partial_path(&out);
            match window {
                "bake-stage" => {
                    // The kill landed mid-bake: some tiles staged, not all.
                    assert_eq!(staged_records(&partial), 10, "{window}");
                    assert!(!tmp_path(&out).exists());
                }
                "bake-assemble" => {
                    assert_eq!(staged_records(&partial), tiles);
                    assert!(tmp_path(&out).metadata().unwrap().len() < expected.len() as u64, "a torn PACK.tmp");
                }
                "bake-audit" | "bake-rename" => assert_eq!(std::fs::read(tmp_path(&out)).unwrap(), expected),
                _ => assert!(partial.exists() && !tmp_path(&out).exists()),
            }
            // Nothing finished-looking at --out before its audit passed.
            assert_eq!(out.exists(), window == "bake-cleanup", "{window}");
            if window == "bake-cleanup" {
                assert_eq!(std::fs::read(&out).unwrap(), expected, "renamed only once audited");
            }
            let extra: &[&str] = match rerun {
                "afresh" => &[],
                flag => &[flag],
            };
            let again = planet_bake(&[], &bake_args(&dem, &out, extra));
            assert_ok(&again, &format!("{window}, re-run {rerun}"));
            let up_to_date = stderr(&again).contains("is up to date");
            assert_eq!(up_to_date, rerun == "--if-unchanged" && window == "bake-cleanup", "{window} {rerun}");
            assert!(std::fs::read(&out).unwrap() == expected, "{window}, re-run {rerun}: bytes differ");
            assert!(!partial.exists() && !tmp_path(&out).exists(), "{window} {rerun}: leftovers");
        }
    }
}

#[test]
fn every_crash_window_of_a_patch_recovers_to_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "before.tif", nodes(), GEO);
    let mut changed = nodes().to_vec();
    for (k, v) in changed.iter_mut().enumerate() {
        let (lat, lon) = node(k % WIDTH, k / WIDTH);
        if (10.0..=15.0).contains(&lat) && (20.0..=30.0).contains(&lon) {
            *v += 750.0;
        }
    }
    let dem_after = earth_tiff(dir.path(), "after.tif", &changed, GEO);
    let base = dir.path().join("base.planetpack");
    assert_ok(&planet_bake(&[], &bake_args(&dem, &base, &[])), "base bake");
    let base_bytes = std::fs::read(&base).unwrap();
    let reference = dir.path().join("reference.planetpack");
    std::fs::copy(&base, &reference).unwrap();
    assert_ok(&planet_bake(&[], &patch_args(&dem_after, &reference, REGION, &[])), "reference patch");
    let expected = std::fs::read(&reference).unwrap();
    assert_ne!(expected, base_bytes);

    let windows = ["patch-compute", "patch-journal", "patch-payloads", "patch-index", "patch-header", "patch-cleanup"];
    for window in windows {
        let out = dir.path().join(format!("{window}.planetpack"));
        std::fs::copy(&base, &out).unwrap();
        let args = patch_args(&dem_after, &out, REGION, &[]);
        assert_aborted(&planet_bake(&[("PLANET_ABORT_AT", window)], &args), window);
        let journal = journal_path(&out);
        match window {
            "patch-compute" => assert!(!journal.exists() && std::fs::read(&out).unwrap() == base_bytes),
            // A torn journal; the pack not yet touched.
            "patch-journal" => assert!(journal.exists() && std::fs::read(&out).unwrap() == base_bytes),
            "patch-index" => {
                let e = Pack::open(&out).unwrap_err().to_string();
                assert!(e.contains("root directory checksum") && e.contains("planet-pack repair"), "{e}");
            }
            _ => assert!(journal.exists(), "{window}"),
        }
        let again = planet_bake(&[], &args);
        assert_ok(&again, window);
        let completed = stderr(&again).contains("completed the interrupted patch");
        assert_eq!(completed, !["patch-compute", "patch-journal"].contains(&window), "{window}: {}", stderr(&again));
        assert!(std::fs::read(&out).unwrap() == expected, "{window}: bytes differ from an uninterrupted patch");
        assert!(!journal.exists(), "{window}: journal left");
    }
}

#[test]
fn inputs_are_identified_by_content_not_path_or_time() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let opts = |dem: &Path| BakeOptions { depth: Some(1), if_unchanged: true, ..options(dem, &out) };
    let mode = |dem: &Path| bake(&opts(dem), &Quiet).unwrap().to_json()["mode"].as_str().unwrap().to_owned();
    assert_eq!(mode(&dem), "bake");
    // A new modification time, same bytes: up to date.
    let file = std::fs::File::options().write(true).open(&dem).unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(3600)).unwrap();
    drop(file);
    assert_eq!(mode(&dem), "up to date");
    // The same bytes at another path: up to date.
    let copy: PathBuf = dir.path().join("copy-of-earth.tif");
    std::fs::copy(&dem, &copy).unwrap();
    assert_eq!(mode(&copy), "up to date");
    // One value changed (a few bytes of the file): baked again.
    let mut one = nodes().to_vec();
    one[WIDTH * 100 + 100] += 1.0;
    let edited = earth_tiff(dir.path(), "edited.tif", &one, GEO);
    let (a, b) = (std::fs::read(&dem).unwrap(), std::fs::read(&edited).unwrap());
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(&b).filter(|(x, y)| x != y).count() <= 4);
    assert_eq!(mode(&edited), "bake");
    assert_eq!(mode(&edited), "up to date");
    // A patched pack is not the plain bake of the original inputs.
    let region = Region { south: 10.0, west: 20.0, north: 15.0, east: 30.0 };
    bake(&BakeOptions { region: Some(region), if_unchanged: false, ..opts(&dem) }, &Quiet).unwrap();
    assert_eq!(mode(&edited), "bake", "a patched pack is baked again");
}

#[test]
fn absurd_depth_jobs_and_pixel_sizes_are_refused_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("never.planetpack");
    let refused = |args: &[&str], needles: &[&str]| {
        let o = planet_bake(&[], args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(o.status.code() == Some(1), "{args:?} did not fail cleanly: {:?} {}", o.status, stderr(&o));
        for needle in needles {
            assert!(stderr(&o).contains(needle), "{args:?}: no '{needle}' in {}", stderr(&o));
        }
        assert!(!out.exists() && !partial_path(&out).exists(), "{args:?} left files");
    };
    let base = ["--dem", path_str(&dem), "--body", "earth", "--out", path_str(&out)];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    refused(
        &with(&["--depth", "20"]),
        &["--depth 20", "tiles", "of memory", "the default memory budget", "data supports depth 3"],
    );
    refused(&with(&["--jobs", "100000"]), &["--jobs 100000", "worker threads must be 1..=", "per core"]);
    let wide = dir.path().join("wide.tif");
    write_tiff(&wide, (4, 4), [-180.0, 1000.0, 0.0, 90.0, 0.0, -45.0], Some(4326), &[vec![0.0; 16]], None);
    let wide_args = ["--dem", path_str(&wide), "--body", "earth", "--out", path_str(&out)];
    refused(&wide_args, &["wide.tif", "1000 x 45 degrees", "360 x 180 degrees at most"]);
    let flat = dir.path().join("flat.tif");
    write_tiff(&flat, (4, 4), [-180.0, 90.0, 0.0, 90.0, 0.0, 0.0], Some(4326), &[vec![0.0; 16]], None);
    let flat_args = ["--dem", path_str(&flat), "--body", "earth", "--out", path_str(&out)];
    refused(&flat_args, &["flat.tif", "zero size"]);
}

/// Waits (at most a minute) for a writer stopped by `PLANET_PAUSE_AT` to
/// make its pause file.
fn until_paused(file: &Path, writer: &mut std::process::Child) {
    let start = std::time::Instant::now();
    while !file.exists() {
        if let Some(status) = writer.try_wait().unwrap() {
            panic!("the writer ended ({status}) before its pause point");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the writer never reached its pause point");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A box of latitudes, one of longitudes, and metres to raise the field there.
type Raise = ((f64, f64), (f64, f64), f32);

/// Regression (#50): patches took no lock. Two patches of one pack at once
/// both exited 0 and the first one's ground was gone; a patch beside a
/// full bake replacing the pack wrote the old ground into the new one. One
/// writer at a time now: a second refuses naming the first, or with
/// `--wait` waits for it, and the pack ends as the two in turn make it.
/// The race is driven by the pause hook, not by sleeps.
#[test]
fn a_second_writer_refuses_or_waits_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "before.tif", nodes(), GEO);
    let raise = |boxes: &[Raise]| {
        let mut v = nodes().to_vec();
        for (k, h) in v.iter_mut().enumerate() {
            let (lat, lon) = node(k % WIDTH, k / WIDTH);
            for &((s, n), (w, e), by) in boxes {
                if (s..=n).contains(&lat) && (w..=e).contains(&lon) {
                    *h += by;
                }
            }
        }
        v
    };
    let first = earth_tiff(dir.path(), "first.tif", &raise(&[((10.0, 15.0), (20.0, 30.0), 750.0)]), GEO);
    let both = raise(&[((10.0, 15.0), (20.0, 30.0), 750.0), ((-25.0, -20.0), (40.0, 50.0), -400.0)]);
    let second = earth_tiff(dir.path(), "second.tif", &both, GEO);
    let out = dir.path().join("p.planetpack");
    assert_ok(&planet_bake(&[], &bake_args(&dem, &out, &[])), "base bake");
    let reference = dir.path().join("reference.planetpack");
    std::fs::copy(&out, &reference).unwrap();
    assert_ok(&planet_bake(&[], &patch_args(&first, &reference, REGION, &[])), "first patch");
    assert_ok(&planet_bake(&[], &patch_args(&second, &reference, "-25,40,-20,50", &[])), "second patch");
    let expected = std::fs::read(&reference).unwrap();

    let pause = dir.path().join("paused");
    let pause_env = [("PLANET_PAUSE_AT", "patch-compute"), ("PLANET_PAUSE_FILE", path_str(&pause))];
    let mut a = Command::new(env!("CARGO_BIN_EXE_planet-bake"))
        .envs(pause_env)
        .args(patch_args(&first, &out, REGION, &[]))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    until_paused(&pause, &mut a);
    let before = std::fs::read(&out).unwrap();
    let refused = planet_bake(&[], &patch_args(&second, &out, "-25,40,-20,50", &[]));
    assert!(!refused.status.success(), "a second patch ran beside the first");
    assert!(stderr(&refused).contains("is being written by pid"), "{}", stderr(&refused));
    assert_eq!(std::fs::read(&out).unwrap(), before, "the refused patch touched the pack");
    let full = planet_bake(&[], &bake_args(&dem, &out, &[]));
    assert!(!full.status.success() && stderr(&full).contains("is being written by pid"), "{}", stderr(&full));
    // The waiting patch says whom it waits for; the first goes on only then.
    let mut b = Command::new(env!("CARGO_BIN_EXE_planet-bake"))
        .args(patch_args(&second, &out, "-25,40,-20,50", &["--wait"]))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(b.stderr.take().unwrap()));
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("waiting for pid") {
            break;
        }
    }
    assert!(said.contains("waiting for pid"), "{said}");
    std::fs::remove_file(&pause).unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(a.wait().unwrap().success(), "the first patch");
    assert!(b.wait().unwrap().success(), "the waiting patch: {said}{}", rest.join("\n"));
    assert_eq!(std::fs::read(&out).unwrap(), expected, "both patches, in turn");
    assert!(!planet_terrain::pack::lock::lock_path(&out).exists(), "the lock file is gone");
}
