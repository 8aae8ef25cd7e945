//! The camera: where it is in the body-fixed frame, how an observer's
//! frame crosses into it, and scripted paths that place it over time.
//!
//! The key decision: a camera knows geometry only ([`crate::geo`]), never
//! the ground. Paths are a pure function of time and views a pure function
//! of a pose, so level of detail, the viewer and tests all agree on where
//! the camera is without sharing any state.

pub mod path;
pub mod view;

pub use path::{CameraPath, CameraPose, Keyframe};
pub use view::{BodyRotation, Plane, View};
