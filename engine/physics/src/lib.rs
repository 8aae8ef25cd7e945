//! planet-physics: rigid bodies on the authoritative ground.
//!
//! The key decision: the ground reaches the physics engine only as
//! collision patches read from the height function (the ground every other
//! consumer reads) at one fixed physical resolution, around each body, in
//! a floating east-north-up basis; edits reach it through the layer
//! stack's journal of touched footprints. Nothing here guesses where the
//! ground is.
//!
//! The engine is Rapier in double precision (`rapier3d-f64`): a maintained,
//! pure-Rust engine with continuous collision detection, sleeping, and
//! triangle meshes that repair internal edges (a ball rolling across a
//! mesh's triangle edges does not hop). It is built with `dim3`, `f64` and
//! `std` only: no parallel solver, serde, debug rendering or profiler, to
//! keep its build small. Its maths is `glam` 0.33 (through `glamx`), and
//! the workspace pins the same version so one glam is built; values still
//! cross into Rapier's types in one place (`convert`), so a future version
//! split touches one module.
//!
//! Layers: `basis` (the floating tangent basis) -> `patch` (the collision
//! lattice) -> `world` (the Rapier world, bodies, refreshes, edits);
//! `edits` recovers an edit's footprints from two stacks.

pub mod basis;
pub mod edits;
pub mod patch;
mod world;

pub use basis::LocalBasis;
pub use edits::changed_footprints;
pub use patch::{CellKey, PatchGrid, PatchMesh};
pub use world::{BodyId, BodyState, GroundWorld, MAX_STEPS_PER_ADVANCE, PatchStatistics, Settings, Shape};

use planet_terrain::ground::SourceError;

/// Everything that can go wrong on the physics side.
#[derive(Debug, thiserror::Error)]
pub enum PhysicsError {
    #[error("reading the ground for a collision patch at {lat:.7}, {lon:.7}")]
    Ground {
        lat: f64,
        lon: f64,
        #[source]
        source: SourceError,
    },
    #[error("physics setting {name} = {value}: {rule}")]
    Setting { name: &'static str, value: f64, rule: &'static str },
    #[error(
        "a body reaching {reach_m} m from its centre does not fit the collision patches' margin of {margin_m} m \
         (it could overhang its patch); raise Settings::margin_m or drop a smaller body"
    )]
    TooLarge { reach_m: f64, margin_m: f64 },
    #[error("body shape: {0}")]
    Shape(&'static str),
    #[error("the collision patch of cell ({east}, {north}) is not a valid triangle mesh: {reason}")]
    Patch { east: i64, north: i64, reason: String },
}

/// Values between the workspace's glam and Rapier's (see the crate
/// documentation): arrays in, arrays out.
mod convert {
    use rapier3d_f64::math::{Rotation, Vector};

    pub fn to_rapier(v: glam::DVec3) -> Vector {
        Vector::from_array(v.to_array())
    }

    pub fn from_rapier(v: Vector) -> glam::DVec3 {
        glam::DVec3::from_array(v.to_array())
    }

    pub fn rotation_to_rapier(q: glam::DQuat) -> Rotation {
        Rotation::from_array(q.to_array())
    }

    pub fn rotation_from_rapier(q: Rotation) -> glam::DQuat {
        glam::DQuat::from_array(q.to_array())
    }
}
