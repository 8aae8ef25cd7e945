//! The memory budget (`--memory`) on the real planet-bake binary: a budget
//! too small is refused naming the flag, the value and what it must hold; a
//! bake at the smallest budget it accepts (its chunk cache smaller than the
//! raster, so chunks are evicted and read again) writes the same bytes as
//! one with room to spare; the report states the budget and its shares.

use std::path::Path;

use super::{nodes, path_str, planet_bake};
use crate::support::*;

const COMMON: [&str; 10] = ["--body", "earth", "--depth", "2", "--tier", "test", "--level", "3", "--jobs", "2"];

fn bake_with(dem: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--dem", path_str(dem), "--out", path_str(out)];
    args.extend_from_slice(&COMMON);
    args.extend_from_slice(extra);
    planet_bake(&args)
}

/// The smallest `--memory` the refusal names ("give --memory 119M or more").
fn smallest_budget(stderr: &str) -> String {
    let (_, after) = stderr.split_once("give --memory ").unwrap_or_else(|| panic!("no smallest budget in: {stderr}"));
    after.split_whitespace().next().unwrap().to_owned()
}

#[test]
fn a_budget_too_small_is_refused_and_the_smallest_one_bakes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("small.planetpack");
    let refused = bake_with(&dem, &out, &["--memory", "8M"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    for needle in ["--memory 8.0 MiB is too small", "the process itself", "2 worker threads", "GDAL's block cache"] {
        assert!(stderr.contains(needle), "'{needle}' missing from: {stderr}");
    }
    assert!(!out.exists() && !planet_terrain::pack::partial_path(&out).exists(), "a refused bake writes nothing");

    let smallest = smallest_budget(&stderr);
    let report = dir.path().join("small.json");
    let small = bake_with(&dem, &out, &["--memory", &smallest, "--report", path_str(&report)]);
    assert!(small.status.success(), "--memory {smallest}: {}", String::from_utf8_lossy(&small.stderr));
    let roomy = dir.path().join("roomy.planetpack");
    assert!(bake_with(&dem, &roomy, &["--memory", "4G"]).status.success());
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&roomy).unwrap(), "the budget changed the pack's bytes");

    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let memory = &json["memory"];
    let budget = memory["budget"].as_u64().unwrap();
    assert_eq!(budget, planet_cli::args::bytes(&smallest).unwrap());
    assert_eq!(memory["budget_from"], "--memory");
    let shares = memory["fixed"].as_u64().unwrap() + memory["tile_state_estimate"].as_u64().unwrap();
    assert!(shares <= budget, "{memory}");
    // 1440 x 720 pixels are 18 chunks: the smallest cache (16) must evict.
    assert!(memory["chunk_cache"].as_u64().unwrap() < 18 * 256 * 256 * 4, "{memory}");
}

#[test]
fn a_depth_the_budget_cannot_hold_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("deep.planetpack");
    let mut args = vec!["--dem", path_str(&dem), "--out", path_str(&out), "--body", "earth"];
    // Depth 16: 3.4e10 tiles, whose one key in 512 (0.02 B a tile) is
    // more than what 200 MiB leaves after the fixed shares.
    args.extend_from_slice(&["--depth", "16", "--memory", "200M", "--jobs", "1"]);
    let o = planet_bake(&args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    for needle in ["--depth 16", "--memory 200.0 MiB leaves", "bytes per tile", "a larger --memory"] {
        assert!(stderr.contains(needle), "'{needle}' missing from: {stderr}");
    }
    assert!(!out.exists());
}
