//! Cesium's quantized-mesh-1.0 terrain format, written from a grid of
//! heights per tile: what `planet-pack export --quantized-mesh` writes for
//! web globes (CesiumJS and every client of the format).
//!
//! The key decision: every tile is the same regular grid of
//! [`GRID`] x [`GRID`] samples over its geographic extent, simplified as a
//! right-triangulated irregular network ([`rtin`]) to the geometric error
//! Cesium expects at its level, with every sample of its border kept. Two
//! neighbours of one level then share the same border samples (the same
//! latitudes and longitudes, read from the same ground), and a tile's
//! border samples are every other one of its children's: the border
//! vertices of a coarser level survive in the finer ones, so tiles drawn
//! at different levels meet without cracks beyond the skirts Cesium hangs
//! from the edge indices.
//!
//! - [`tiling`]: the geographic TMS scheme (two root tiles), tile extents,
//!   and the error Cesium expects per level.
//! - [`rtin`]: the grid's triangulation to an error.
//! - [`encode`]: the tile's bytes (header, zig-zag deltas, high-water-mark
//!   indices, edge indices, oct-encoded normals, water mask).
//! - [`layer`]: the tileset's `layer.json`.

pub mod encode;
pub mod layer;
pub mod rtin;
pub mod tiling;

/// Samples along each side of a tile's grid: 2^6 + 1, the size Cesium's own
/// heightmap tiles use and the right-triangulated network needs.
pub const GRID: usize = 65;
