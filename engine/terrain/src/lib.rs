//! planet-terrain: the host-only terrain core.
//!
//! Everything a bake, a server, a test or the renderer needs to ask about the
//! ground without a GPU: where a tile is, where its samples lie on the body,
//! what the ground is there, and how to hand it to a GPU in f32 without
//! losing the precision that f64 holds on the host. This crate links no
//! Vulkan, GDAL or windowing crate, and no part of it forms a planet-scale
//! position in f32.
//!
//! The modules are layers; each uses only those before it (a tidy test
//! holds this):
//!
//! 1. [`layout`]: how GPU-shared structs declare their layout;
//! 2. [`geo`]: faces, tiles and keys, the cube-sphere projection, geodesy,
//!    bounds, the node lattice and the f32 vertex path;
//! 3. [`abi`]: the GPU ABI (records, push constants, flags, bindings);
//! 4. [`pack`]: the `.planetpack` format;
//! 5. [`layers`]: editable ground, the ordered layer stack and scenes;
//! 6. [`ground`]: height sources, the authoritative `HeightFunction`, and
//!    ground queries;
//! 7. [`camera`]: views, the frame crossing, scripted paths (beside the
//!    ground: it knows geometry only);
//! 8. [`lod`]: cut selection, GPU records, residency;
//! 9. `testing` (feature `testing`, for tests, benches and fuzzers only):
//!    helpers that craft packs; not in a production build.

pub mod layout;

pub mod abi;
pub mod camera;
pub mod files;
pub mod geo;
pub mod ground;
pub mod layers;
pub mod lod;
pub mod pack;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use abi::NodeRecord;
pub use camera::View;
pub use geo::{
    AddressError, Body, BodyError, BoundingSphere, Edge, Ellipsoid, Face, FaceSample, Geodetic, MAX_DEPTH, Neighbour,
    NodeCentre, NodeFrame, TILE_APRON, TILE_CELLS, TILE_CORE_SAMPLES, TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES,
    TileAddress, TileKey,
};
pub use ground::{HeightFunction, HeightSource};
