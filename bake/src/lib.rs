//! planet-bake: GDAL rasters to `.planetpack` files. The only crate that
//! links GDAL.
//!
//! Map: [`raster`] (a GDAL raster sampled at latitude/longitude),
//! [`landmarks`] (the grid-convention audit), [`bake`] (the pipeline: audit,
//! sample, write, re-read and audit, report).

pub mod bake;
pub mod landmarks;
pub mod raster;

pub use bake::{BakeError, BakeOptions, BakeReport, Progress, Region, bake, supported_depth};
