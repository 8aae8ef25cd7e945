//! The bake's entry point: [`bake`] checks what it was told, sets up the
//! worker pool and the memory plan, and runs the one mode the options name:
//! the full bake (`full`), a region patch (`patch`) or one shard
//! (`cluster::shard`). Everything they share is in `run`, below them.
//!
//! The whole run executes inside a rayon pool of `--jobs` threads, so every
//! parallel stage shares one thread budget.

use std::time::Instant;

pub use crate::error::BakeError;
pub use crate::options::{BakeOptions, Progress, Region, parse_region};
pub use crate::report::BakeReport;
pub use crate::stages::sampling::{MAX_SPACING_IN_PIXELS, supported_depth};

use crate::full::bake_full;
use crate::limits::MemoryPlan;
use crate::patch::patch_region;
use crate::run::Run;

/// Bakes (or, with a region, patches) a pack as `options` say.
pub fn bake(options: &BakeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    crate::limits::check_jobs(options.jobs)?;
    // A bad --out fails before the bake, not at its final rename (which
    // left `OUT.tmp` behind) or at a scratch file's name.
    if let Some(problem) = planet_cli::fs::unwritable_destination("--out", &options.out) {
        return Err(BakeError::Options(problem));
    }
    if !options.has_dem() && options.region.is_none() {
        return Err(BakeError::Options(
            "a bake needs a DEM; only a region patch may leave it out, to patch imagery or classes alone".into(),
        ));
    }
    crate::limits::in_pool(options.jobs, || {
        let (dem, imagery, classes) = options.raster_weights();
        let rasters = [dem, imagery, classes].iter().filter(|&&w| w > 0).count();
        let memory = MemoryPlan::new(options.memory, rayon::current_num_threads(), rasters)?;
        memory.apply_gdal_cache();
        let run = Run { options, progress, started, memory };
        match (options.region, options.shard) {
            (Some(_), Some(_)) => {
                Err(BakeError::Options("--region and --shard do not combine: a patch is not sharded".into()))
            }
            (Some(region), None) => patch_region(&run, region),
            (None, Some(shard)) => crate::cluster::shard::bake_shard(&run, shard),
            (None, None) => bake_full(&run),
        }
    })
}
