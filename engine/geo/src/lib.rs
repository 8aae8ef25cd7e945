//! planet-geo: geometry, the bottom layer of the terrain core, with no
//! notion of ground.
//!
//! [`face`] (cube faces and their integer bases), [`address`] (tiles, keys,
//! neighbours, the sample layout), [`cube`] (the warped cube-sphere
//! projection), [`body`] (ellipsoids and geodesy), [`bounds`] (a tile's
//! bounding sphere), [`precision`] (the f32 vertex path and its reference),
//! [`layout`] and [`abi`] (what the GPU shares with the host, declared
//! once), [`time`] and [`sun`] (the instant and the sun's direction, a pure
//! function of it), [`system`] (where the preset bodies stand and how
//! they are turned: the frame several bodies share).
//!
//! The key decision: everything here is a pure function of integers and
//! radii, so two callers that ask about the same sample get the same bits.
//! Packs, ground, layers and level of detail are built on top; nothing in
//! this crate reaches up to them (cargo holds that: it depends on none).

pub mod layout;

pub mod abi;
pub mod address;
pub mod atan;
pub mod body;
pub mod bounds;
pub mod cube;
pub(crate) mod dd;
pub mod face;
pub mod lattice;
pub mod orbits;
pub mod precision;
pub mod rotation;
pub mod sun;
pub mod system;
pub mod time;

pub use address::{
    AddressError, FaceSample, MAX_DEPTH, Neighbour, TILE_APRON, TILE_CELLS, TILE_CORE_SAMPLES,
    TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES, TileAddress, TileKey,
};
pub use body::{Body, BodyError, Ellipsoid, Geodetic, east_north_up};
pub use bounds::{BoundingSphere, SurfacePoint, TangentBox};
pub use face::{Edge, Face};
pub use precision::{NodeBasis, NodeCentre};
