//! The merge of a sharded bake (`planet-bake merge PART... --out PACK`):
//! the bytes a single-process bake of the same inputs writes.
//!
//! The key decision: the merge lays out. Given the shard files and every
//! wave's files (`wave`), every tile is baked and audited already; the
//! merge checks the parts are one bake holding the tile set exactly once
//! (`parts`), walks their indexes once in key order to write the index,
//! copies each payload once into its place (`PackWriter::assemble_with`,
//! checksums checked on the way), and verifies the result: every rule and
//! every checksum read back. Given the shards alone it also bakes the
//! levels above them itself, as one task of every wave would (the same
//! filter and code, staged in its own journal so a killed merge resumes),
//! and then decodes every payload and audits the levels it filtered. It
//! opens no raster either way, and renames the pack into place only once
//! it is verified.

use std::path::Path;
use std::time::Instant;

use planet_terrain::ground::LawSummary;
use planet_terrain::pack::{Pack, PackSpec, PackWriter, TileParts};
use rayon::prelude::*;

use crate::cluster::parts::{LevelsAboveSink, Parts, PartsSource};
use crate::error::BakeError;
use crate::limits::MemoryPlan;
use crate::options::{MergeOptions, MergeStage, Progress};
use crate::report::cluster::MergeReport;
use crate::report::{AccuracyReport, BakeReport, Report};
use crate::stages::audit::{FileBytes, accuracy_audit};
use crate::stages::pipeline::TileBake;

/// Merges `options.shards` into `options.out`.
pub fn merge(options: &MergeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    use crate::cluster::stages::{commit, copy, lay_out};
    crate::limits::check_jobs(options.jobs)?;
    refuse_writing_over_a_shard(options)?;
    if options.resume && options.stage != MergeStage::Whole {
        return Err(BakeError::Options(
            "a merge in stages is run again, not resumed: a copy task copies its range whole, a layout starts afresh"
                .into(),
        ));
    }
    crate::limits::in_pool(options.jobs, || match options.stage {
        MergeStage::Whole => merge_in_pool(options, progress),
        MergeStage::LayOut { copy_tasks } => lay_out(options, copy_tasks, progress),
        MergeStage::Copy { task } => copy(options, task, progress),
        MergeStage::Commit => commit(options, progress),
    })
}

/// The pack must not be written over one of its own shards.
fn refuse_writing_over_a_shard(options: &MergeOptions) -> Result<(), BakeError> {
    let same_file = |a: &Path, b: &Path| {
        use std::os::unix::fs::MetadataExt;
        matches!((std::fs::metadata(a), std::fs::metadata(b)), (Ok(x), Ok(y)) if (x.dev(), x.ino()) == (y.dev(), y.ino()))
    };
    match options.shards.iter().find(|s| same_file(s, &options.out)) {
        Some(shard) => Err(BakeError::Options(format!(
            "--out {} is the shard {}: the merge would write over its own input",
            options.out.display(),
            shard.display()
        ))),
        None => Ok(()),
    }
}

fn merge_in_pool(options: &MergeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let memory = MemoryPlan::new(options.memory, rayon::current_num_threads(), 0)?;
    progress.stage(&format!("checking {} part files", options.shards.len()));
    let parts = Parts::open(&options.shards)?;
    // With the waves' files given, every tile is baked and audited already:
    // the merge lays out. Without them it filters the levels above the
    // shards itself, as a one-node bake of every wave.
    let layout_only = parts.waves_given();
    if layout_only {
        parts.require_waves_before(parts.waves_plan.count())?;
    }
    let coarse = if layout_only { Vec::new() } else { parts.coarse_tiles().to_vec() };
    parts.check_tile_set(&coarse)?;
    let spec = parts.spec();
    let writer = if options.resume {
        PackWriter::resume_levels_above(&options.out, spec.clone(), coarse.iter().copied())?
    } else {
        PackWriter::create_levels_above(&options.out, spec.clone(), coarse.iter().copied())?
    };
    let filter_started = Instant::now();
    if !coarse.is_empty() {
        filter_levels_above(&parts, &writer, &spec, memory.held_level_tiles(), progress)?;
    }
    let filter_seconds = filter_started.elapsed().as_secs_f64();
    progress.stage(&format!("laying out {} with the parts' tiles", options.out.display()));
    let assemble_started = Instant::now();
    let sources: Vec<&dyn TileParts> = parts.sources();
    let assembled =
        writer.assemble_reporting(&sources, &mut |done, total| progress.tiles(done as usize, total as usize))?;
    let detail_law = crate::run::record_detail_law(&assembled, progress)?;
    let assemble_seconds = assemble_started.elapsed().as_secs_f64();
    let verify_started = Instant::now();
    let merged = verify(&parts, assembled.path(), layout_only, progress)?;
    let per_depth = if coarse.is_empty() {
        Vec::new()
    } else {
        progress.stage(&format!("accuracy audit of the {} tiles the merge filtered", coarse.len()));
        let source = PartsSource(&parts);
        let held = memory.held_level_tiles();
        accuracy_audit(&source, assembled.path(), 0..parts.plan.root_depth, held, progress)?.passed(assembled.path())?
    };
    let verify_seconds = verify_started.elapsed().as_secs_f64();
    let summary = assembled.commit()?;
    let report = MergeReport {
        out: options.out.display().to_string(),
        shards: options.shards.iter().map(|p| p.display().to_string()).collect(),
        tiles: merged.tiles,
        tiles_from_shards: parts.shards.iter().filter_map(|s| s.pack.as_ref()).map(Pack::tile_count).sum(),
        tiles_filtered: coarse.len(),
        wave_files: parts.waves.iter().flatten().flatten().count(),
        copy_tasks: None,
        file_bytes: summary.file_length,
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        seconds: started.elapsed().as_secs_f64(),
        filter_seconds,
        assemble_seconds,
        verify_seconds,
        detail_law: LawSummary::of(&detail_law),
    };
    Ok(BakeReport::new(Report::Merge(Box::new(report))))
}

/// The levels above the shards, filtered here from the shards' tiles (a
/// merge given no wave files): the same filter and code as every bake.
fn filter_levels_above(
    parts: &Parts,
    writer: &PackWriter,
    spec: &PackSpec,
    held_level_tiles: usize,
    progress: &dyn Progress,
) -> Result<(), BakeError> {
    let total = writer.tile_count() as usize;
    let pending = writer.pending_count() as usize;
    progress.stage(&format!(
        "filtering {pending} tiles above depth {} from the shards' tiles ({} resumed)",
        parts.plan.root_depth,
        total - pending
    ));
    TileBake {
        source: &PartsSource(parts),
        spec,
        data_depth: parts.plan.root_depth,
        progress,
        already_done: total - pending,
        total,
        held_level_tiles,
    }
    .run(writer, &LevelsAboveSink { writer, parts, own: 0..parts.plan.root_depth })?;
    Ok(())
}

/// Verifies the assembled pack at `path`: every rule of the format, and
/// every payload read back against its checksum; decoded too, on every
/// worker, unless every payload came from a part that decoded and audited
/// it before (`copied_only`: the copy checked each one's checksum on the
/// way, so the bytes are the ones audited).
fn verify(
    parts: &Parts,
    path: &Path,
    copied_only: bool,
    progress: &dyn Progress,
) -> Result<planet_terrain::pack::VerifySummary, BakeError> {
    let what =
        if copied_only { "every rule, every checksum" } else { "every rule, every checksum, every payload decoded" };
    progress.stage(&format!("verifying {}: {what}", path.display()));
    Pack::adopt(Box::new(FileBytes::open(path)?))
        .and_then(|p| {
            let count = &mut |done, total| progress.tiles(done as usize, total as usize);
            if copied_only {
                p.verify_batched(count, &|pack, batch| {
                    batch.par_iter().try_for_each_init(Vec::new, |buffer, e| pack.part_payload(e, buffer))
                })
            } else {
                p.verify_batched(count, &|pack, batch| batch.par_iter().try_for_each(|e| pack.decode(e).map(drop)))
            }
        })
        .map_err(|e| parts.blame(&e).unwrap_or_else(|| e.in_file(path).into()))
}
