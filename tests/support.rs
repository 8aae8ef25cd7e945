//! Support for the system tests: where the workspace and its binaries are,
//! and how to run one and read what it said.
//!
//! The key decision: these tests drive the real binaries a user runs
//! (`planet-bake`, `planet-pack`, `planet-view`), built by the workspace
//! beside this crate (`tools/test.sh` builds them first), and judge them
//! against expectations computed independently of the project's own code:
//! GDAL's reads of the source raster, not the pack the bake wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

/// A binary of the workspace, from the profile these tests were built in.
pub fn binary(name: &str) -> PathBuf {
    // target/<profile>/deps/system-HASH -> target/<profile>/NAME
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile = exe.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let path = profile.join(name);
    assert!(
        path.exists(),
        "{} is not built; build the workspace's binaries first (cargo build --workspace --bins)",
        path.display()
    );
    path
}

/// Runs a binary and returns its output; panics with its stderr if it fails.
pub fn run_ok(name: &str, args: &[&str]) -> Output {
    let output = run(name, args);
    assert!(
        output.status.success(),
        "{name} {args:?} failed ({:?}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs a binary and returns its output, whatever its status.
pub fn run(name: &str, args: &[&str]) -> Output {
    Command::new(binary(name))
        .args(args)
        .env("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// Parses a binary's stdout as JSON.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", String::from_utf8_lossy(&output.stdout)))
}
