//! Level of detail: the host half of the renderer, what a frame draws,
//! decided in f64 without a GPU. [`cut`] selects the quadtree cut (frame after
//! frame with a [`Selector`]), [`record`] turns it into the GPU's per-node records, [`residency`] keeps
//! the tiles' GPU slots.
//!
//! The key decision: this is the top layer of the terrain core. It reads
//! the ground through [`crate::ground::HeightSource`] and the camera from
//! [`crate::camera`], and nothing below it knows it exists, so a server or
//! a physics step can use the ground without any of this.

mod cull;
pub mod cut;
mod heap;
mod outcome;
pub mod record;
mod refine;
pub mod residency;

pub use cut::{Culled, Cut, EdgeRelation, SelectedNode, SelectionSettings, SelectionStatistics, select};
pub use record::{build_records, centre_height_within, node_record, reference_vertex};
pub use refine::{FreshSplitLimit, Selector};
pub use residency::{Binding, Residency, ResidencySettings, UvRect, min_slots};

/// Everything a frame reports about the host half: selection and residency.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStatistics {
    pub nodes_selected: usize,
    pub nodes_culled: usize,
    pub nodes_drawn: usize,
    pub effective_screen_error_pixels: f64,
    pub selection_cpu_ms: f64,
    pub resident_slots: usize,
    pub uploads: usize,
    pub upload_bytes: usize,
    pub pending_requests: usize,
    pub nodes_dropped: usize,
    pub covers_body: bool,
    /// Tiles whose stored data could not be read (a payload failing its
    /// checksum or decode), counted once each since the scene began; their
    /// nodes draw an ancestor's coarser ground.
    pub failed_tiles: usize,
    /// Tiles the loader is producing or has queued (background loading).
    pub tiles_in_flight: usize,
    /// Tiles that failed for now (a network error) and wait, drawing an
    /// ancestor, to be asked for again after a backoff.
    pub retrying_tiles: usize,
}

impl FrameStatistics {
    pub fn new(selection: &SelectionStatistics, plan: &residency::FramePlan) -> FrameStatistics {
        FrameStatistics {
            nodes_selected: selection.nodes_selected,
            nodes_culled: selection.nodes_culled,
            nodes_drawn: selection.nodes_drawn,
            effective_screen_error_pixels: selection.effective_screen_error_pixels,
            selection_cpu_ms: selection.selection_cpu_ms,
            resident_slots: plan.resident,
            uploads: plan.uploads.len(),
            upload_bytes: plan.upload_bytes,
            pending_requests: plan.pending,
            nodes_dropped: plan.dropped.len(),
            covers_body: plan.covers_body,
            failed_tiles: 0,
            tiles_in_flight: 0,
            retrying_tiles: 0,
        }
    }
}
