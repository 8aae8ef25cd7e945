//! Scenes from files: read, checked against the body, and stacked.
//!
//! The key decision: a scene is loaded whole before anything uses it. A
//! scene for another body, a malformed layer or two layers with one order
//! fail here, naming the file, so a bake, a sample and the viewer refuse
//! the same files with the same words.

use std::path::Path;

use anyhow::{Context, Result};
use planet_terrain::Body;
use planet_terrain::layers::{LayerStack, Scene};

/// Reads and parses a scene, checking it is for the body named `body`.
pub fn load_scene(path: &Path, body: &str) -> Result<(Scene, String)> {
    // Told by type before it is opened (#50: a FIFO blocked `sample` and
    // `planet-bake` forever, waiting for a writer).
    if let Some(kind) =
        std::fs::metadata(path).ok().and_then(|m| planet_terrain::pack::reader::not_a_file(&m.file_type()))
    {
        anyhow::bail!("the scene {} is {kind}, not a file: give the path of a scene file", path.display());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading the scene {}", path.display()))?;
    let scene = Scene::from_json(&text, body).with_context(|| format!("the scene {}", path.display()))?;
    Ok((scene, text))
}

/// The scene's layers as a stack in their orders, and the scene's text.
pub fn load_layer_stack(path: &Path, body: &Body) -> Result<(LayerStack, String)> {
    let (scene, text) = load_scene(path, body.name())?;
    let mut stack = LayerStack::new();
    for layer in scene.layers {
        stack.insert(body.ellipsoid(), layer).with_context(|| format!("the scene {}", path.display()))?;
    }
    Ok((stack, text))
}
