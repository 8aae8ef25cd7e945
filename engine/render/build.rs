//! Compiles the GLSL in `shaders/` to SPIR-V with Debian's glslangValidator.
//!
//! Why an external compiler and not a crate: shaderc builds for minutes from
//! source and naga does not take combined image samplers; glslangValidator is
//! one apt package (glslang-tools) and takes 0.07 s per shader.

use std::path::PathBuf;
use std::process::Command;

/// (output name, source file, preprocessor defines)
const SHADERS: &[(&str, &str, &[&str])] = &[
    ("terrain.vert.spv", "terrain.vert", &[]),
    ("terrain_depth.vert.spv", "terrain.vert", &["DEPTH_ONLY"]),
    ("terrain_capture.vert.spv", "terrain.vert", &["CAPTURE"]),
    ("terrain.frag.spv", "terrain.frag", &[]),
    ("sky.vert.spv", "sky.vert", &[]),
    ("sky.frag.spv", "sky.frag", &[]),
    ("body.frag.spv", "body.frag", &[]),
    ("bodies.vert.spv", "bodies.vert", &[]),
    ("bodies.frag.spv", "bodies.frag", &[]),
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let shaders = manifest.join("../../shaders");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", shaders.display());
    for dir in [shaders.clone(), shaders.join("generated")] {
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(&dir).expect("the shaders/ directories exist") {
            println!("cargo:rerun-if-changed={}", entry.expect("readable").path().display());
        }
    }
    for (name, source, defines) in SHADERS {
        let mut command = Command::new("glslangValidator");
        command.arg("-V").arg("--target-env").arg("vulkan1.3");
        for define in *defines {
            command.arg(format!("-D{define}"));
        }
        command.arg("-o").arg(out.join(name)).arg(shaders.join(source));
        let output = command.output().unwrap_or_else(|e| {
            panic!("cannot run glslangValidator ({e}); install Debian's glslang-tools (tools/deps.sh does)")
        });
        if !output.status.success() {
            panic!(
                "glslangValidator failed on shaders/{source} {defines:?}:\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}
