//! The camera: where it is in the body-fixed frame, how an observer's
//! frame crosses into it, and scripted paths that place it over time.
//!
//! The key decision: a camera knows geometry only ([`planet_geo`]), never
//! the ground. Paths are a pure function of time and views a pure function
//! of a pose, so level of detail, the viewer and tests all agree on where
//! the camera is without sharing any state. The same holds for light:
//! [`time::Instant`] and [`sun`] give the sun's body-fixed direction as a
//! pure function of the instant, so the body turns under a fixed sun by
//! moving the sun in the body's frame.

pub mod path;
pub mod view;

/// The instant and the sun live with the geometry (planet-geo): the sky
/// and a bake's report need them without a camera.
pub use planet_geo::{orbits, sun, time};

pub use path::{CameraPath, CameraPose, Keyframe};
pub use planet_geo::rotation::BodyRotation;
pub use sun::{local_solar_time_hours, solar_position, subsolar_point, sun_direction};
pub use time::{Instant, TimeError};
pub use view::{Plane, View};
