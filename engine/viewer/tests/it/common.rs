//! What every headless planet-view test needs: the binary on lavapipe with
//! no display, run to success without a validation message, and its
//! `--stats` JSON read back. One copy, shared by the test modules.

use std::path::Path;
use std::process::{Command, Output};

pub const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// planet-view on lavapipe, headless.
pub fn viewer() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_planet-view"));
    command.env("VK_DRIVER_FILES", LAVAPIPE).env("RUST_BACKTRACE", "1").env_remove("DISPLAY");
    command
}

/// Runs `command`; it must succeed and print no validation message.
pub fn run_ok(command: &mut Command) -> Output {
    let output = command.output().expect("run planet-view");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "planet-view failed:\n{stderr}");
    assert!(!stderr.contains("validation:"), "validation messages:\n{stderr}");
    output
}

/// The `--stats` JSON at `path`.
pub fn stats(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("stats written")).expect("stats are JSON")
}
