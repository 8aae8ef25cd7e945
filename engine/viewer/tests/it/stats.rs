//! planet-view's `--stats` reports the terrain passes' GPU work counts, on
//! lavapipe with the validation layers on: in a shot, in every frame of a
//! path, and as unavailable where the counting queries are off.
//!
//! The key decision: like the flight tests, each test runs the real binary
//! over a pack it wrote itself and judges only its exit status, its stderr
//! and its JSON.

use crate::common::{run_ok, stats as json, viewer};

use std::path::Path;

/// Triangles one drawn node submits (lattice and skirt).
const NODE_TRIANGLES: u64 = 2304;

/// A shot of mountains from 3 km, with `extra` flags; its stats and stderr.
fn shot(dir: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let pack = dir.join("earth-2.planetpack");
    if !pack.exists() {
        planet_terrain::testing::write_procedural_pack(&pack, 2).expect("write the test pack");
    }
    let stats = dir.join("shot.json");
    let output = run_ok(
        viewer()
            .arg(&pack)
            .args(["--lat", "-46.95", "--lon", "38.95", "--agl", "3000", "--heading", "45", "--pitch", "-10"])
            .args(["--size", "160x120", "--validation", "--max-frames", "30"])
            .arg("--shot")
            .arg(dir.join("shot.png"))
            .arg("--stats")
            .arg(&stats)
            .args(extra),
    );
    (json(&stats), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_shot_reports_each_terrain_pass_s_work_and_the_pixels_covered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stats, stderr) = shot(dir.path(), &[]);
    assert_eq!(stats["gpu_counts_available"], true, "{stats:#}");
    let counts = &stats["gpu_counts"];
    let nodes = stats["nodes_drawn"].as_u64().expect("nodes drawn");
    assert!(nodes > 0);
    for pass in ["terrain_depth", "terrain_shaded"] {
        assert_eq!(counts[pass]["input_primitives"].as_u64(), Some(nodes * NODE_TRIANGLES), "{pass}: {counts:#}");
        let per_node = counts[pass]["vertex_invocations_per_node"].as_f64().expect("per node");
        assert!((1221.0..=6912.0).contains(&per_node), "{pass}: {per_node} vertex runs per node");
    }
    let covered = counts["covered_pixels"].as_u64().expect("covered pixels");
    assert!(covered > 0 && covered <= 160 * 120, "{counts:#}");
    let passed = counts["shaded_samples_per_covered_pixel"].as_f64().expect("ratio");
    assert!((1.0..=1.2).contains(&passed), "{passed} fragments through the depth test per covered pixel");
    assert!(stderr.contains("fragments through its depth test"), "the summary line says it: {stderr}");
}

#[test]
fn without_the_counting_queries_the_counts_are_reported_unavailable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stats, stderr) = shot(dir.path(), &["--no-gpu-counts"]);
    assert_eq!(stats["gpu_counts_available"], false);
    assert_eq!(stats["gpu_counts"], serde_json::Value::Null, "{stats:#}");
    assert!(stats["gpu_ms"].is_object(), "timestamps are unaffected");
    assert!(stderr.contains("GPU work counts unavailable"), "{stderr}");
}

#[test]
fn a_path_logs_the_counts_of_every_frame() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = dir.path().join("earth-2.planetpack");
    planet_terrain::testing::write_procedural_pack(&pack, 2).expect("write the test pack");
    let path = dir.path().join("path.json");
    std::fs::write(
        &path,
        r#"{"keyframes": [
            {"t": 0, "lat": -46.0, "lon": 38.0, "alt": 2000000, "heading": 0, "pitch": -90},
            {"t": 1, "lat": -46.9, "lon": 38.9, "alt": 20000, "heading": 45, "pitch": -20}
        ]}"#,
    )
    .expect("write path");
    let stats = dir.path().join("path-stats.json");
    let output = run_ok(viewer().arg(&pack).arg("--path").arg(&path).arg("--stats").arg(&stats).args([
        "--fps",
        "3",
        "--size",
        "160x120",
        "--validation",
        "--loading",
        "frame",
    ]));
    let log = json(&stats);
    assert_eq!(log["gpu_counts_available"], true);
    let frames = log["frames"].as_array().expect("frames");
    // Issue #32: a --path run said nothing until its end; now it counts
    // the frames it drew (in a log: at most every ten seconds, and the last).
    let said = String::from_utf8_lossy(&output.stderr);
    let n = frames.len();
    assert!(said.contains(&format!("{n}/{n} frames")), "the frame count in:\n{said}");
    assert_eq!(frames.len(), 4);
    // Wall time runs forward from the session's start, frame by frame.
    let wall: Vec<f64> = frames.iter().map(|f| f["wall_s"].as_f64().expect("wall seconds")).collect();
    assert!(wall[0] > 0.0 && wall.windows(2).all(|w| w[0] < w[1]), "wall seconds {wall:?}");
    for f in frames {
        let counts = &f["gpu_counts"];
        // Before the roots arrive no terrain is drawn (the body stands in).
        let terrain = f["draw_calls"]["terrain_shaded"] == 1;
        let drawn = if terrain { f["nodes_drawn"].as_u64().expect("nodes drawn") } else { 0 };
        let triangles = counts["terrain_shaded"]["input_primitives"].as_u64().expect("counted");
        assert_eq!(triangles, drawn * NODE_TRIANGLES, "frame {}: {counts:#}", f["frame"]);
        let covered = counts["covered_pixels"].as_u64().expect("covered pixels");
        assert!((1..=160 * 120).contains(&covered), "frame {}: ground, or the body, in view", f["frame"]);
        // The phases are parts of the frame thread's own CPU time.
        let phases = f["thread_cpu_phases_ms"].as_object().expect("phases");
        let parts: f64 = ["ground", "selection", "residency", "records", "render"]
            .iter()
            .map(|p| phases[*p].as_f64().expect("a phase's time"))
            .sum();
        let whole = f["thread_cpu_ms"].as_f64().expect("thread CPU");
        assert!(parts > 0.0 && parts <= whole + 1e-6, "frame {}: {parts} ms of phases in {whole} ms", f["frame"]);
        assert!(phases["staging"].as_f64().expect("staging") <= phases["render"].as_f64().expect("render"));
        assert!(f["uploads"].as_u64() <= f["upload_budget"].as_u64(), "frame {}: within its budget", f["frame"]);
    }
}
