//! What a scene frame is asked to do and what it reports.
//!
//! The key decision: a frame is asked with one value ([`FrameRequest`]:
//! the view, the sun, how it is delivered) and reports one
//! ([`FrameReport`]: statistics, GPU times, host time split by phase), so
//! the viewer's stats and the tests read one value, not the scene's
//! internals.

use glam::DVec3;
use planet_terrain::camera::View;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::lod::FrameStatistics;

use crate::pacing::FramePhases;
use crate::renderer::{Compose, DrawCalls, PassTimes, PixelRect};

/// Everything one frame reports: the host statistics, the passes, the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    pub statistics: FrameStatistics,
    pub draw_calls: DrawCalls,
    pub triangles: u64,
    /// Nodes drawn from an ancestor's tile (streaming still under way).
    pub nodes_on_ancestors: usize,
    /// Whether the analytic ellipsoid was drawn beneath.
    pub analytic_body: bool,
    /// Whether every drawn node had its own tile and nothing waited.
    pub complete: bool,
    pub gpu: Option<PassTimes>,
    /// Host time of the frame, blocking on the GPU excluded.
    pub host_ms: f64,
    /// Time the frame spent blocked on the GPU.
    pub waited_ms: f64,
    pub presented: bool,
    /// The frame's thread CPU time inside the scene, phase by phase.
    pub phases: FramePhases,
    /// The device was lost during this (what it was doing) and made again
    /// before the frame was drawn: the frame uploads what its cut needs
    /// afresh.
    pub device_lost: Option<&'static str>,
    /// The second view's own figures, when the frame had one. The main
    /// view's `statistics` are its own cut's; the residency figures
    /// (resident slots, uploads, pending) are the frame's, shared by both.
    pub second: Option<SecondViewReport>,
}

/// What a frame's second view reached: its cut (nodes, the error it
/// reached against its own target) and its share of the shared residency.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SecondViewReport {
    /// Its cut's figures; residency figures as in [`FrameReport::statistics`].
    pub statistics: FrameStatistics,
    /// Its nodes drawn from an ancestor's tile.
    pub nodes_on_ancestors: usize,
}

/// A second view asked of a frame: its own camera, error target and near
/// plane, drawn over `area` of the target. Its cut shares the scene's node
/// budget setting and the renderer's slots: residency holds the union of
/// both cuts, most wanted first, and either view draws an ancestor where
/// its own tile did not fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecondView {
    /// Its camera, body-fixed; its viewport is `area`'s size.
    pub view: View,
    /// Its screen-space error target (pixels).
    pub target_error_px: f64,
    /// Its near plane (m).
    pub near_m: f64,
    /// Where it is drawn.
    pub area: PixelRect,
}

/// A tile the source could not produce, reported once.
#[derive(Clone, Debug, PartialEq)]
pub struct TileFailure {
    /// The tile a node asked for.
    pub tile: TileAddress,
    /// The stored tile whose data is unreadable (the tile itself, or the
    /// ancestor it is resampled from).
    pub stored: TileAddress,
    pub message: String,
}

/// One frame asked of a scene.
#[derive(Clone, Copy, Debug)]
pub struct FrameRequest<'a> {
    /// The camera, body-fixed.
    pub view: View,
    /// The direction toward the sun, body-fixed.
    pub sun: DVec3,
    pub delivery: Delivery<'a>,
    /// A second view drawn in the same frame, if any.
    pub second: Option<SecondView>,
}

impl FrameRequest<'_> {
    /// A frame of `view` lit from `sun`, not presented, read back as `read_back` says.
    pub fn headless(view: View, sun: DVec3, read_back: ReadBack) -> FrameRequest<'static> {
        FrameRequest { view, sun, delivery: Delivery::headless(read_back), second: None }
    }
}

/// How one frame is drawn and delivered.
#[derive(Clone, Copy, Debug)]
pub struct Delivery<'a> {
    pub read_back: ReadBack,
    pub wireframe: bool,
    /// egui's panels over the frame, if shown.
    pub ui: Option<&'a crate::UiFrame>,
    /// Present to the window (windowed renderers).
    pub present: bool,
    /// Over the previous frame's picture or cleared, with the sky or not
    /// (several bodies: the far ones first, the camera's last).
    pub compose: Compose,
    /// Where the main view is drawn (`None`: the whole target): its half
    /// beside a second view, for every body's frame alike.
    pub area: Option<PixelRect>,
}

impl Delivery<'_> {
    pub fn headless(read_back: ReadBack) -> Delivery<'static> {
        Delivery { read_back, wireframe: false, ui: None, present: false, compose: Compose::default(), area: None }
    }
}

/// When a frame's image comes back to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBack {
    Never,
    WhenComplete,
    Always,
}

impl ReadBack {
    /// Whether a frame that is (or is not) `complete` comes back.
    pub fn wants(self, complete: bool) -> bool {
        match self {
            ReadBack::Never => false,
            ReadBack::Always => true,
            ReadBack::WhenComplete => complete,
        }
    }
}
