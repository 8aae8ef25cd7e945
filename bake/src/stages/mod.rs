//! The steps every mode of the bake is made of, below the modes: a GDAL
//! [`raster`] sampled at latitude and longitude, tile samples from the
//! rasters with their voids (`sampling`, `void_fill`), the coarse levels
//! filtered from the level below (`filter`), the tiles a pack declares
//! (`tile_set`), tiles baked in parallel (`pipeline`), and the audits
//! (`audit`: landmarks and every sample re-read; `base_audit`: a regional
//! raster against the pack under it).
//!
//! The key decision: a stage knows nothing of the mode that runs it. A
//! full bake, a patch, a shard and a wave call the same stages with their
//! own tile sets, so they write the same bytes for the same tiles.

pub(crate) mod audit;
pub(crate) mod base_audit;
pub(crate) mod filter;
pub(crate) mod pipeline;
pub mod raster;
pub(crate) mod sampling;
pub(crate) mod tile_set;
pub(crate) mod void_fill;
