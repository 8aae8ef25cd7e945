//! planet-bake: GDAL rasters to `.planetpack` files. The only crate that
//! links GDAL.
//!
//! Map, by layer (ARCHITECTURE.md has the files): the foundation
//! (`options`, what a bake is told; `error`; `report`, the typed report;
//! `limits`, what `--depth` and `--jobs` may ask; `fingerprint` and `digest`,
//! input identity; [`landmarks`], the grid-convention audit; `geometry`,
//! tile boxes), then `stages` (the steps every mode is made of: the
//! [`raster`], sampling, filtering, the tile set, the pipeline, the audits),
//! then `run` (the shared run and prepared inputs), then the modes: `full`
//! (the full bake), `patch` (region patches) and `cluster` (a shard, waves,
//! the merge), and [`bake`](mod@bake), the entry point that picks one. Each
//! layer imports only the layers before it, so no file imports a file that
//! imports it.

pub mod bake;
mod cluster;
mod digest;
mod error;
mod fingerprint;
mod full;
mod geometry;
pub mod landmarks;
mod limits;
mod options;
mod patch;
mod report;
mod run;
mod stages;
mod vsi;

pub use stages::raster;

pub use bake::{
    BakeError, BakeOptions, BakeReport, MAX_SPACING_IN_PIXELS, Progress, Region, bake, parse_region, supported_depth,
};
pub use cluster::merge::merge;
#[doc(hidden)]
pub use cluster::plan::{global_plan_for_bench, regional_plan_for_bench};
pub use cluster::wave::{WaveOptions, bake_wave, wave_tasks};
pub use fingerprint::write_inputs_manifest;
pub use options::{MergeOptions, MergeStage};
pub use report::Outcome;
