//! planet-render: the Vulkan terrain renderer.
//!
//! The only crate with Vulkan unsafe code, all of it under `vk` behind a
//! safe `Renderer` (renderer.rs). A frame is: tile uploads into
//! array-image slots, a position-only depth pass, the shaded pass and the
//! sky/analytic-body pass; each terrain pass is one instanced draw of a
//! shared 33 x 33 lattice whose per-node data is a storage buffer of
//! `planet_terrain::abi::NodeRecord`s. [`scene::TerrainScene`] is the
//! host driver that turns a camera into a frame (selection, residency,
//! records) so the viewer and the tests share one path.

mod bodies;
pub mod clock;
mod conv;
mod error;
mod frame;
mod image;
mod limits;
mod loader;
mod look;
mod pacing;
mod recovery;
mod renderer;
pub mod scene;
mod selection;
mod shadows;
mod slot_layout;
mod tiles;
// Every Vulkan call: the crate denies unsafe code everywhere else.
#[allow(unsafe_code)]
mod vk;

pub use bodies::{BodyDraw, BodyShape};
pub use conv::{
    DataDepths, EncodedUpload, SlotContent, TILE_UPLOAD_BYTES, encode_tile, encode_upload, filled_record, quantise,
};
/// The UI library the renderer draws, for callers to build [`UiFrame`]s with.
pub use egui;
pub use error::{RenderError, Result};
pub use image::RgbaImage;
pub use limits::{DeviceLimits, SLOT_BYTES};
pub use recovery::DEVICE_LOST_AT;
pub use renderer::{
    CompletedFrame, Compose, DrawCalls, FrameInput, FrameOutcome, HorizonInput, NODE_VERTICES, PassCounts, PassTimes,
    PixelRect, Renderer, RendererSettings, SecondViewInput, UiFrame, WorkCounts, lattice_indices, lattice_indices_len,
};
pub use vk::device::{GpuSettings, WindowHandles};
