//! The bake: audit the raster, sample every tile, write the pack, re-read it
//! and audit every sample, and say what was done. This module is the entry
//! point and the first stage every mode shares; each later stage has a
//! module of its own.
//!
//! Order of work, and why:
//! 1. the landmark audit runs before a single byte is written, so a misread
//!    grid costs seconds, not hours (`audit`);
//! 2. tiles are baked deepest first, depth by depth in parallel, so a tile's
//!    geometric error can include its children's and the levels above the
//!    data depth can be filtered from the level below (`pipeline`, `filter`);
//! 3. tiles go through `PackWriter`, whose journal makes a killed bake
//!    resumable to the same bytes and whose layout does not depend on the
//!    order threads finish in (`full`), or patch an existing pack
//!    in place (`patch`: the pack is the base, the patch replaces only what
//!    it measured inside the box, `composite`);
//! 4. the assembled pack is opened like any reader would and every sample is
//!    compared with the source at that sample's own latitude/longitude
//!    (coarse tiles, filtered from the level below: with that filter),
//!    before it is renamed to `--out`; a patch's tiles are compared with the
//!    composite before anything is written, and read back against what was
//!    audited before its redo journal goes; a pack that fails is moved aside
//!    and the bake fails;
//! 5. what was done is reported as typed structs (`report`).
//!
//! The whole run executes inside a rayon pool of `--jobs` threads, so every
//! parallel stage shares one thread budget.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::base_audit::run_base_audit;
pub use crate::error::BakeError;
pub use crate::options::{BakeOptions, Progress, Region, parse_region};
pub use crate::report::BakeReport;
pub use crate::sampling::{MAX_SPACING_IN_PIXELS, supported_depth};

use crate::audit::run_landmark_audit;
use crate::fingerprint::{InputDigests, input_digests};
use crate::full::bake_full;
use crate::landmarks::{LandmarkAudit, Verdict};
use crate::limits::MemoryPlan;
use crate::patch::patch_region;
use crate::raster::{Extent, PixelSpacing};
use crate::sampling::Inputs;

/// One run: what it was told, where its progress goes, and when it began.
pub(crate) struct Run<'a> {
    pub(crate) options: &'a BakeOptions,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) started: Instant,
    /// How the memory budget is shared out (`limits`).
    pub(crate) memory: MemoryPlan,
}

/// What every mode has once the inputs are open and the landmark audit has
/// accepted them.
pub(crate) struct Prepared {
    pub(crate) inputs: Inputs,
    /// The shallowest depth whose sample spacing keeps the DEM's pixels.
    pub(crate) data_depth: u8,
    /// The DEM's ground distance between pixels.
    pub(crate) pixel_spacing: PixelSpacing,
    pub(crate) landmarks: LandmarkAudit,
    /// The comparison with `--base`'s pack, when one was given.
    pub(crate) base: Option<crate::base_audit::BaseAudit>,
    pub(crate) extent: Extent,
}

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
            (None, Some(shard)) => crate::shard_bake::bake_shard(&run, shard),
            (None, None) => bake_full(&run),
        }
    })
}

impl Run<'_> {
    /// Opens the inputs and runs the landmark audit.
    pub(crate) fn prepare(&self) -> Result<Prepared, BakeError> {
        let (options, progress) = (self.options, self.progress);
        progress.stage(&format!("opening {}", options.dem.display()));
        let inputs = Inputs::open(options, &self.memory)?;
        let radius = options.body.ellipsoid().max_radius();
        let pixel_spacing = inputs.dem.pixel_spacing_m(radius)?;
        let data_depth = supported_depth(&options.body, pixel_spacing.finest_m());
        progress.stage("auditing the grid convention against landmarks");
        let landmarks = run_landmark_audit(options, &inputs)?;
        if landmarks.verdict == Verdict::NothingToCheck {
            progress.stage("no landmark lies inside this raster; pass --landmark LAT,LON,MIN,MAX to have it checked");
        }
        let extent = inputs.dem.extent()?;
        let base = match &options.base {
            Some(base) => {
                progress.stage(&format!("comparing the raster with the ground of {} (--base)", base.display()));
                let audit = run_base_audit(&options.dem, base, &options.body, &inputs, extent.bounds)?;
                progress.stage(&format!("--base: {}", audit.summary()));
                Some(audit)
            }
            None => None,
        };
        let mut inputs = inputs;
        // Coarser than the pixels: each sample the mean over its footprint
        // (within one pixel, the mean is the point's value).
        let coarser = options.depth.filter(|&d| d < data_depth).map(|depth| {
            let spacing = options.body.sample_spacing_m(depth);
            (depth, (spacing / pixel_spacing.along_row_m, spacing / pixel_spacing.along_column_m))
        });
        if let Some((depth, footprint)) = coarser.filter(|(_, f)| f.0.max(f.1) > 1.0) {
            progress.stage(&format!(
                "--depth {depth}: each sample is the DEM's mean over its {:.1} x {:.1} pixel footprint, so finer detail cannot alias (averaged as it is read, only where the bake reads)",
                footprint.0, footprint.1
            ));
            inputs.dem.read_averaged(footprint);
        }
        Ok(Prepared { inputs, data_depth, pixel_spacing, landmarks, base, extent })
    }

    /// [`Run::prepare`], with the inputs' digests for the fingerprint
    /// taken meanwhile: another worker reads and hashes the files while
    /// this one opens the rasters and audits their landmarks (one worker
    /// does one, then the other). A failed preparation stops the digest
    /// between chunks (a refused raster still costs seconds, however large
    /// the file) and is reported before any failed digest, as when they ran
    /// in turn.
    pub(crate) fn prepare_and_digest(&self) -> Result<(Prepared, InputDigests), BakeError> {
        let options = self.options;
        let stop = AtomicBool::new(false);
        let mut digests = None;
        let prepared = rayon::in_place_scope(|scope| {
            scope.spawn(|_| digests = Some(input_digests(options, &stop)));
            let prepared = self.prepare();
            stop.store(prepared.is_err(), Ordering::Relaxed);
            prepared
        });
        Ok((prepared?, digests.expect("the scope ran it")?))
    }
}
