//! One run of the bake, below its modes: what it was told and its memory
//! plan (`Run`), the inputs opened and audited (`Prepared`, by
//! [`Run::prepare`]), and the steps every mode that writes a pack takes the
//! same way: the pack's header settled before any tile is chosen
//! ([`settle_spec`]), the writer and its journal ([`open_writer`]), the
//! detail law recorded in the header ([`record_detail_law`]).
//!
//! The key decision: the modes (`full`, `patch`, `cluster`) import this
//! module and never each other, and it imports no mode: the stages a
//! full bake, a shard and a merge share live here, once.
//!
//! Order of work, and why:
//! 1. the landmark audit (and, with `--base`, the comparison with the pack
//!    under the raster) runs before a single byte is written, so a misread
//!    grid costs seconds, not hours (`stages::audit`, `stages::base_audit`);
//! 2. tiles are baked deepest first, depth by depth in parallel, so a tile's
//!    geometric error can include its children's and the levels above the
//!    data depth can be filtered from the level below (`stages::pipeline`,
//!    `stages::filter`);
//! 3. tiles go through `PackWriter`, whose journal makes a killed bake
//!    resumable to the same bytes and whose layout does not depend on the
//!    order threads finish in ([`open_writer`]), or patch an existing pack
//!    in place (`patch`: the pack is the base, the patch replaces only what
//!    it measured inside the box);
//! 4. the assembled pack is opened like any reader would and every sample is
//!    compared with the source at that sample's own latitude/longitude
//!    before it is renamed to `--out`; a pack that fails is moved aside and
//!    the bake fails;
//! 5. what was done is reported as typed structs (`report`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use planet_terrain::pack::{PackSpec, PackWriter};
use planet_terrain::{MAX_DEPTH, TileAddress};

use crate::error::BakeError;
use crate::fingerprint::{InputDigests, fingerprint_of, input_digests};
use crate::geometry::coverage_of;
use crate::landmarks::{LandmarkAudit, Verdict};
use crate::limits::{MemoryPlan, check_depth};
use crate::options::{BakeOptions, Progress};
use crate::stages::audit::run_landmark_audit;
use crate::stages::base_audit::run_base_audit;
use crate::stages::raster::{Extent, PixelSpacing};
use crate::stages::sampling::{Inputs, MAX_SPACING_IN_PIXELS, supported_depth};

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
    pub(crate) base: Option<crate::stages::base_audit::BaseAudit>,
    pub(crate) extent: Extent,
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
        if landmarks.verdict == Verdict::NothingToCheck && options.base.is_none() {
            progress.stage(
                "no landmark lies inside this raster; pass --base PACK (a global pack of the ground under it) or \
                 --landmark LAT,LON,MIN,MAX to have it checked",
            );
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

/// The pack a bake of `prepared` makes: its header settled before any tile
/// is chosen, the depth, and the estimated state its tiles hold.
pub(crate) fn settle_spec(
    run: &Run,
    prepared: &Prepared,
    digests: &InputDigests,
) -> Result<(PackSpec, u8, f64), BakeError> {
    let options = run.options;
    let Prepared { inputs, data_depth, extent, pixel_spacing, .. } = prepared;
    let data_depth = *data_depth;
    let depth = options.depth.unwrap_or(data_depth);
    let spacing = |d: u8| options.body.sample_spacing_m(d);
    run.progress.stage(&format!(
        "the DEM's pixels lie {:.1} m apart along its rows and {:.1} m along its columns; depth {data_depth} samples every {:.1} m, the shallowest at {MAX_SPACING_IN_PIXELS} pixel or finer, which keeps them as GDAL reads them",
        pixel_spacing.along_row_m,
        pixel_spacing.along_column_m,
        spacing(data_depth)
    ));
    if depth < data_depth {
        run.progress.stage(&format!(
            "warning: --depth {depth} samples every {:.1} m, {:.1}x coarser than the DEM's {:.1} m pixels: it drops resolution the data has (the default, depth {data_depth}, keeps it)",
            spacing(depth),
            spacing(depth) / pixel_spacing.finest_m(),
            pixel_spacing.finest_m()
        ));
    }
    if depth > MAX_DEPTH {
        return Err(BakeError::Options(format!(
            "--depth {depth} is deeper than the deepest addressable level {MAX_DEPTH}"
        )));
    }
    let codec = options.codec();
    let coverage = coverage_of(extent);
    let tile_state = check_depth(&coverage, depth, codec, &run.memory, data_depth)?;
    let spec = PackSpec {
        body: options.body.clone(),
        tier: options.tier.clone(),
        codec,
        height_data_depth: data_depth.min(depth),
        colour_data_depth: match &inputs.imagery {
            Some(i) => {
                supported_depth(&options.body, i.pixel_spacing_m(options.body.ellipsoid().max_radius())?.finest_m())
                    .min(depth)
            }
            None => 0,
        },
        coverage,
        fingerprint: fingerprint_of(options, digests, depth, codec),
        compression_level: options.compression_level,
    };
    Ok((spec, depth, tile_state))
}

/// Measures the law the assembled pack's own data continues past its
/// height data depth and records it in the header (docs/planetpack.md,
/// "Detail law"): fixed at the bake, so a region patch, which keeps it,
/// changes no synthesized ground beyond the tiles it rewrites. A function
/// of the pack's tiles alone, so a resumed or sharded bake records the
/// same bits.
pub(crate) fn record_detail_law(
    assembled: &planet_terrain::pack::Assembled,
    progress: &dyn crate::Progress,
) -> Result<planet_terrain::pack::DetailLaw, BakeError> {
    let path = assembled.path();
    progress.stage(&format!("measuring the detail law of {}", path.display()));
    let law = planet_terrain::ground::PackSource::measure_detail_law_at(path)?;
    assembled.record_detail_law(law)?;
    Ok(law)
}

/// The writer of `tiles` at `--out`, continuing its journal with
/// `--resume`; with how many tiles were resumed (the rest it hands out as
/// pending, `pipeline::PendingTiles`).
pub(crate) fn open_writer(
    run: &Run,
    spec: &PackSpec,
    tiles: impl IntoIterator<Item = TileAddress>,
) -> Result<(PackWriter, usize), BakeError> {
    let out = &run.options.out;
    let writer = if run.options.resume {
        PackWriter::resume(out, spec.clone(), tiles)?
    } else {
        PackWriter::create(out, spec.clone(), tiles)?
    };
    let resumed = (writer.tile_count() - writer.pending_count()) as usize;
    if resumed > 0 {
        run.progress.stage(&format!("resuming: {resumed} of {} tiles already baked", writer.tile_count()));
    }
    Ok((writer, resumed))
}
