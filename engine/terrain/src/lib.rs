//! planet-terrain: the host-only terrain core.
//!
//! Everything a bake, a server, a test or the renderer needs to ask about the
//! ground without a GPU: where a tile is, where its samples lie on the body,
//! and how to hand those positions to a GPU in f32 without losing the
//! precision that f64 holds on the host. This crate links no Vulkan, GDAL or
//! windowing crate, and no part of it forms a planet-scale position in f32.
//!
//! Map: [`face`] (cube faces and their bases), [`address`] (tiles, keys,
//! neighbours, the sample layout), [`cube`] (the warped cube-sphere
//! projection), [`body`] (ellipsoids and geodesy), [`precision`] (the f32
//! vertex path and its reference), [`pack`] (the pack format), [`source`]
//! (height sources), [`select`] (cut selection, residency, the view).

pub mod address;
pub mod body;
pub mod cube;
mod dd;
pub mod face;
pub mod layers;
pub mod pack;
pub mod precision;
pub mod select;
pub mod source;

pub use address::{
    AddressError, FaceSample, MAX_DEPTH, Neighbour, TILE_APRON, TILE_CELLS, TILE_CORE_SAMPLES,
    TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES, TileAddress, TileKey,
};
pub use body::{Body, BodyError, Ellipsoid, Geodetic};
pub use face::{Edge, Face};
pub use precision::{NodeCentre, NodeFrame};
