//! The host half of the renderer: what a frame draws, decided in f64
//! without a GPU. [`view`] is the camera and the frame crossing, [`cut`]
//! the selection of the quadtree cut, [`residency`] the tiles' GPU slots.

pub mod cut;
pub mod record;
pub mod residency;
pub mod view;

pub use cut::{
    BoundingSphere, Culled, Cut, EdgeRelation, SelectedNode, SelectionSettings, SelectionStatistics, select,
};
pub use record::{NodeRecord, build_records, node_record, reference_vertex};
pub use residency::{Binding, Residency, ResidencySettings, UvRect};
pub use view::{BodyRotation, Plane, View, east_north_up};
