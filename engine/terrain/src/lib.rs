//! planet-terrain: the host-only terrain core.
//!
//! Everything a bake, a server, a test or the renderer needs to ask about the
//! ground without a GPU: where a tile is, where its samples lie on the body,
//! what the ground is there, and how to hand it to a GPU in f32 without
//! losing the precision that f64 holds on the host. This crate links no
//! Vulkan, GDAL or windowing crate, and no part of it forms a planet-scale
//! position in f32.
//!
//! It is a facade over the crates the core is built from, each a layer
//! that depends only on those before it (cargo holds the order):
//!
//! 1. `planet-geo` ([`geo`], with [`layout`] and [`abi`]): faces, tiles and
//!    keys, the cube-sphere projection, geodesy, bounds, the node lattice,
//!    the f32 vertex path, the GPU ABI, time and the sun;
//! 2. `planet-packfile` ([`pack`], with [`files`]): the `.planetpack`
//!    format; the writer behind its `write` feature;
//! 3. `planet-ground` ([`ground`], with [`layers`]): height sources, the
//!    authoritative `HeightFunction`, editable layers and ground queries;
//! 4. `planet-lod` ([`lod`], with [`camera`]): views and scripted paths,
//!    cut selection, GPU records, residency;
//! 5. `testing` (feature `testing`, for tests, benches and fuzzers only):
//!    helpers that craft packs; not in a production build.
//!
//! The facade keeps every `planet_terrain::...` path of the one-crate core
//! for a release; new code names the layer's own crate.

pub use planet_geo as geo;
pub use planet_geo::{abi, layout};
pub use planet_ground as ground;
pub use planet_ground::layers;
pub use planet_lod as lod;
pub use planet_lod::camera;
pub use planet_packfile as pack;
pub use planet_packfile::files;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use abi::NodeRecord;
pub use camera::View;
pub use geo::{
    AddressError, Body, BodyError, BoundingSphere, Edge, Ellipsoid, Face, FaceSample, Geodetic, MAX_DEPTH, Neighbour,
    NodeBasis, NodeCentre, TILE_APRON, TILE_CELLS, TILE_CORE_SAMPLES, TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES,
    TileAddress, TileKey,
};
pub use ground::{HeightFunction, HeightSource};
