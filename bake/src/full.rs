//! The full bake: choose the tiles, write them through `PackWriter`, audit
//! the assembled pack, rename it into place, report. The pack's header
//! (`PackSpec`) is settled before any tile is chosen, because its
//! fingerprint decides both `--if-unchanged` (keep a pack baked from the
//! same inputs) and `--resume` (continue only a journal of the same bake).
//!
//! The key decision: the accuracy audit reads `OUT.tmp`, and only a pack
//! that passed it is renamed to `OUT`, so whatever the moment a bake dies,
//! a file at `OUT` with this bake's fingerprint was audited, and
//! `--if-unchanged` may trust it. The crash windows (staging, assembling,
//! auditing, renaming, removing the partial) and what recovers each are in
//! docs/planetpack.md, "Crash windows".

use std::time::Instant;

use planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
use planet_terrain::pack::crash::abort_point;
use planet_terrain::pack::writer::scratch_dir;
use planet_terrain::pack::{Pack, PackSpec, partial_path, tmp_path};

use crate::error::BakeError;
use crate::report::{
    AccuracyReport, BakeReport, BytesReport, CoverageReport, FullReport, InputsReport, LandmarkReport, MemoryReport,
    Report, Timings, UpToDateReport,
};
use crate::run::{Prepared, Run, open_writer, record_detail_law, settle_spec};
use crate::stages::audit::accuracy_audit;
use crate::stages::pipeline::TileBake;
use crate::stages::tile_set::{TileSet, tile_set, until_error};
use planet_terrain::ground::LawSummary;

/// Bakes the whole pack `run.options` describe.
#[expect(
    clippy::too_many_lines,
    reason = "the full bake's stages in order (tile set, pipeline, assembly, audit, report), each one call; debt: shares stage functions with bake_shard and merge_in_pool"
)]
pub(crate) fn bake_full(run: &Run) -> Result<BakeReport, BakeError> {
    let (options, progress) = (run.options, run.progress);
    let (prepared, digests) = run.prepare_and_digest()?;
    let (spec, depth, tile_state) = settle_spec(run, &prepared, &digests)?;
    let Prepared { inputs, data_depth, landmarks, pixel_spacing, base, .. } = prepared;
    let (codec, coverage) = (spec.codec, spec.coverage);
    if let Some(kept) = up_to_date(run, &spec, &landmarks) {
        return Ok(kept);
    }
    progress.stage(&format!("choosing tiles to depth {depth} (the data supports depth {data_depth})"));
    let tiles = tile_set(&inputs, &options.body, &coverage, depth, scratch_dir(&options.out))?;
    if options.out.exists() && !options.resume && !partial_path(&options.out).exists() {
        progress.stage(&format!("replacing {}", options.out.display()));
    }
    let mut failed = None;
    let (writer, resumed) = open_writer(run, &spec, until_error(tiles.iter(), &mut failed))?;
    if let Some(e) = failed {
        return Err(e);
    }
    progress.stage(&format!("baking {} tiles", writer.pending_count()));
    let bake_start = Instant::now();
    let voids = TileBake {
        source: &inputs,
        spec: &spec,
        data_depth,
        progress,
        already_done: resumed,
        total: tiles.len() as usize,
        held_level_tiles: run.memory.held_level_tiles(),
    }
    .run(&writer, &writer)?;
    progress.stage(&format!("laying out {} in key order", options.out.display()));
    let assembled = writer.assemble_reporting(&[], &mut |done, total| progress.tiles(done as usize, total as usize))?;
    let detail_law = record_detail_law(&assembled, progress)?;
    let bake_seconds = bake_start.elapsed().as_secs_f64();

    abort_point("bake-audit");
    progress.stage(&format!(
        "accuracy audit of {}: re-reading every tile and comparing every sample with the source",
        assembled.path().display()
    ));
    let audit_start = Instant::now();
    let audit = accuracy_audit(&inputs, assembled.path(), 0..u8::MAX, run.memory.held_level_tiles(), progress)?;
    let per_depth = audit.passed(assembled.path())?;
    let audit_seconds = audit_start.elapsed().as_secs_f64();
    abort_point("bake-rename");
    let (tiles_measured, tiles_with_filled_voids) = provenance_counts(assembled.path())?;
    let summary = assembled.commit()?;
    let samples = tiles.len() as usize * TILE_STORED_SAMPLE_COUNT;
    let report = FullReport {
        inputs: InputsReport {
            dem: options.dem.display().to_string(),
            imagery: options.imagery.as_ref().map(|p| p.display().to_string()),
            classes: options.classes.as_ref().map(|p| p.display().to_string()),
            dem_size: inputs.dem.size(),
            dem_projected: inputs.dem.is_projected(),
            dem_pixel_spacing_m: [pixel_spacing.along_row_m, pixel_spacing.along_column_m],
        },
        out: options.out.display().to_string(),
        body: options.body.name().to_owned(),
        radii_m: options.body.ellipsoid().radii().to_array(),
        tier: options.tier.clone(),
        codec: codec.code(),
        coverage: CoverageReport::from(coverage),
        depth,
        data_depth,
        data_depth_spacing_m: options.body.sample_spacing_m(data_depth),
        height_data_depth: spec.height_data_depth,
        colour_data_depth: spec.colour_data_depth,
        tiles: tiles.len() as usize,
        tiles_per_depth: tiles_per_depth(&tiles, depth),
        tiles_resumed: resumed,
        samples,
        nodata_policy: nodata_policy(options.void_value),
        void_value: options.void_value,
        samples_read: voids.read,
        samples_filled: voids.voids,
        tiles_measured,
        tiles_with_filled_voids,
        bytes: BytesReport { file: summary.file_length, payload: summary.payload_bytes },
        landmarks: LandmarkReport::from(&landmarks),
        base_audit: base,
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        timings_s: Timings {
            bake: bake_seconds,
            audit: Some(audit_seconds),
            total: run.started.elapsed().as_secs_f64(),
        },
        output_samples_per_second: (samples - resumed * TILE_STORED_SAMPLE_COUNT) as f64 / bake_seconds.max(1e-9),
        jobs: rayon::current_num_threads(),
        memory: MemoryReport::new(&run.memory, Some(tile_state)),
        detail_law: LawSummary::of(&detail_law),
    };
    Ok(BakeReport::new(Report::Bake(Box::new(report))))
}

/// With `--if-unchanged`, the report of a pack at `--out` that the same
/// inputs and parameters made (it passed its audit before it was put
/// there), which is then kept as it is.
fn up_to_date(run: &Run, spec: &PackSpec, landmarks: &crate::landmarks::LandmarkAudit) -> Option<BakeReport> {
    let (options, progress) = (run.options, run.progress);
    if !options.if_unchanged || options.resume {
        return None;
    }
    // A version 2, 3 or 4 pack (no law of today's detail, or no void
    // masks) is baked again, into version 5.
    let pack = Pack::open(&options.out).ok().filter(|p| {
        let h = p.header();
        h.fingerprint == spec.fingerprint && h.detail.is_some() && h.sample_voids
    })?;
    // So is a pack whose recorded detail law this planet-bake would not
    // record: the same inputs, measured by a later calibration, draw other
    // ground past the data (the demo's Sierra kept an older first octave).
    let recorded = pack.header().detail;
    let measured = planet_terrain::ground::PackSource::measure_detail_law_at(&options.out).ok();
    if measured != recorded {
        progress.stage(&format!(
            "{}: the detail law recorded ({}) is not the one this planet-bake measures ({}); baking again",
            options.out.display(),
            recorded.map_or_else(|| "none".to_owned(), |l| LawSummary::of(&l).to_string()),
            measured.map_or_else(|| "none".to_owned(), |l| LawSummary::of(&l).to_string()),
        ));
        return None;
    }
    progress.stage(&format!(
        "{} is up to date (same inputs and parameters, audited before it was put there); not baking again",
        options.out.display()
    ));
    remove_leftovers(options, &spec.fingerprint, progress);
    Some(BakeReport::new(Report::UpToDate(UpToDateReport {
        out: options.out.display().to_string(),
        tiles: pack.tile_count() as usize,
        landmarks: LandmarkReport::from(landmarks),
    })))
}

/// What the report says of voids.
fn nodata_policy(void_value: Option<f64>) -> String {
    let kept = "measured samples stay measured; each tile's void mask names the filled ones";
    match void_value {
        Some(v) => format!("voids take {v} m (--void-value); {kept}"),
        None => format!(
            "voids filled from the DEM around them (the nearest measured value in each of the face grid's four \
             directions, weighted by inverse distance); {kept}"
        ),
    }
}

/// Tiles marked measured, and tiles holding filled voids, in the pack at
/// `path` (read from its index).
fn provenance_counts(path: &std::path::Path) -> Result<(usize, usize), BakeError> {
    let (mut measured, mut voids) = (0, 0);
    for entry in Pack::open(path)?.entries() {
        let entry = entry?;
        measured += usize::from(entry.measured);
        voids += usize::from(entry.voids);
    }
    Ok((measured, voids))
}

/// With `OUT` up to date, an assembled file beside it is stale, and so is a
/// partial file of this same bake (left when a bake died after its rename).
fn remove_leftovers(options: &crate::options::BakeOptions, fingerprint: &[u8; 32], progress: &dyn crate::Progress) {
    let partial = partial_path(&options.out);
    let leftovers = [
        Some(tmp_path(&options.out)),
        (planet_terrain::pack::writer::partial_fingerprint(&options.out).as_ref() == Some(fingerprint))
            .then_some(partial),
    ];
    for path in leftovers.into_iter().flatten().filter(|p| p.exists()) {
        match std::fs::remove_file(&path) {
            Ok(()) => progress.stage(&format!("removed {}, left by an interrupted run of this bake", path.display())),
            Err(e) => progress.stage(&format!("could not remove the leftover {}: {e}", path.display())),
        }
    }
}

/// How many of `tiles` lie at each depth, 0 to `depth`.
pub(crate) fn tiles_per_depth(tiles: &TileSet, depth: u8) -> Vec<usize> {
    let mut counts: Vec<usize> = tiles.per_depth().into_iter().map(|n| n as usize).collect();
    counts.resize(usize::from(depth) + 1, 0);
    counts
}
