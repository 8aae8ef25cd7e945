//! planet-bake: GDAL rasters to `.planetpack` files. The only crate that
//! links GDAL.
//!
//! Map, by stage: [`raster`] (a GDAL raster sampled at latitude/longitude),
//! [`landmarks`] (the grid-convention audit), [`bake`](mod@bake) (the entry point and
//! the shared first stage), then `options` (what a bake is told), `error`,
//! `fingerprint` (input identity), `sampling` (tile samples from the
//! rasters, voids), `filter` (coarse levels from the level below), `geometry` (tile boxes), `tile_set` (the
//! tiles a pack declares, streamed in key order), `pipeline`
//! (baking tiles in parallel), `audit` (landmark and accuracy audits),
//! `limits` (what `--depth` and `--jobs` may ask), `full` (the full bake),
//! `patch` (region patches), `composite` (what a patch stores: the pack as
//! base, the patch where it measured), `recovery` (finishing a patch, and an
//! interrupted one), `report` (the typed report); for sharded bakes `shard`
//! (the plan), `shard_bake` (one part), `shard_file` (what a part hands on),
//! `wave` (the levels above the shards, by the cluster), `parts` (the shard
//! and wave files opened and checked as one set) and `merge` (the parts laid
//! out as the pack).

mod audit;
pub mod bake;
mod base_audit;
mod composite;
mod digest;
mod error;
mod filter;
mod fingerprint;
mod full;
mod geometry;
pub mod landmarks;
mod limits;
mod merge;
mod merge_stages;
mod options;
mod parts;
mod patch;
mod patch_tiles;
mod pipeline;
pub mod raster;
mod recovery;
mod report;
mod sampling;
mod shard;
mod shard_bake;
mod shard_file;
mod shard_tiles;
mod tile_set;
mod void_fill;
mod vsi;
mod wave;

pub use bake::{
    BakeError, BakeOptions, BakeReport, MAX_SPACING_IN_PIXELS, Progress, Region, bake, parse_region, supported_depth,
};
pub use fingerprint::write_inputs_manifest;
pub use merge::{MergeOptions, MergeStage, merge};
pub use report::Outcome;
#[doc(hidden)]
pub use shard::{global_plan_for_bench, regional_plan_for_bench};
pub use wave::{WaveOptions, bake_wave, wave_tasks};
