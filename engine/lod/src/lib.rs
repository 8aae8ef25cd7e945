//! planet-lod: level of detail, the host half of the renderer, what a frame draws,
//! decided in f64 without a GPU. [`cut`] selects the quadtree cut (frame after
//! frame with a [`Selector`]), [`record`] turns it into the GPU's per-node records, [`residency`] keeps
//! the tiles' GPU slots.
//!
//! The key decision: this is the top layer of the terrain core. It reads
//! the ground through [`planet_ground::HeightSource`] and the camera from
//! [`crate::camera`], and nothing below it knows it exists, so a server or
//! a physics step can use the ground without any of this.

pub mod camera;
mod cull;
pub mod cut;
mod heap;
mod kept;
mod outcome;
pub mod record;
mod refine;
pub mod residency;

pub use cut::{Culled, Cut, EdgeRelation, SelectedNode, SelectionSettings, SelectionStatistics, select};
pub use kept::FrameSelector;
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
    /// Tiles given up because their source could not be reached (a shot
    /// does not wait on a failing server); their nodes draw an ancestor.
    pub unreachable_tiles: usize,
    /// The source failed a read for now and has not answered since.
    pub source_failing: bool,
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
            unreachable_tiles: 0,
            source_failing: false,
        }
    }
}

/// The node budget a viewport of `size` needs for its target: 5,632 at
/// 1920x1080, scaled by the viewport's linear size (the square root of its
/// pixels), in steps of 256, at least 2,048. The cut 2 m above North
/// Palisade looking 2 degrees down (the demo's end, detail on) meets 2 px
/// with 1,719 nodes at 640x360, 2,379 at 960x540, 3,105 at 1280x720, 4,953
/// at 1920x1080 and 7,278 at 2560x1440: near the ground the nodes a cut
/// needs grow with the pixels per radian, not their square (the nearest
/// rings of every depth, half of them out of view, take most of them).
/// (5,120 held them until the detail's exponent took in windows of 256
/// data samples and grew the roughness near the ground toward the data's
/// law, and the band outside the Sierra's box, 3 km east of the camera,
/// stated what its lattice misses of the edge: 1440p then needed 7,278
/// against 6,912.)
pub fn viewport_budget((width, height): (u32, u32)) -> u64 {
    let pixels = f64::from(width) * f64::from(height) / (1920.0 * 1080.0);
    let scaled = (5632.0 * pixels.sqrt()).ceil() as u64;
    scaled.div_ceil(256).max(8) * 256
}

#[cfg(test)]
mod tests {
    use super::viewport_budget;

    /// The default budgets, with the nodes the cut 2 m above North Palisade
    /// needed for 2 px at each size (`viewport_budget`): each budget holds them.
    #[test]
    fn viewport_budgets_hold_the_cut_the_demo_needs_at_each_size() {
        for (size, needed, budget) in [
            ((160, 120), 0, 2048),
            ((640, 360), 1719, 2048),
            ((960, 540), 2379, 2816),
            ((1280, 720), 3105, 3840),
            ((1920, 1080), 4953, 5632),
            ((2560, 1440), 7278, 7680),
            ((3840, 2160), 0, 11264),
        ] {
            assert_eq!(viewport_budget(size), budget, "{size:?}");
            assert!(budget >= needed, "{size:?}: {needed} nodes needed");
        }
    }
}
