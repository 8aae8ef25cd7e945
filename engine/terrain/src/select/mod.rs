//! The host half of the renderer: what a frame draws, decided in f64
//! without a GPU. [`view`] is the camera and the frame crossing, [`cut`]
//! the selection of the quadtree cut, [`residency`] the tiles' GPU slots,
//! [`path`] scripted camera paths.

pub mod cut;
pub mod path;
pub mod record;
pub mod residency;
pub mod view;

pub use cut::{
    BoundingSphere, Culled, Cut, EdgeRelation, SelectedNode, SelectionSettings, SelectionStatistics, select,
};
pub use path::{CameraPath, CameraPose, Keyframe};
pub use record::{NodeRecord, build_records, centre_height_within, node_record, reference_vertex};
pub use residency::{Binding, Residency, ResidencySettings, UvRect};
pub use view::{BodyRotation, Plane, View, east_north_up};

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
        }
    }
}
