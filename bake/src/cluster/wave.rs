//! The levels above the shards, baked by the cluster in waves
//! (`planet-bake wave W --task J PART... --out WAVE_FILE`), so the
//! merge only lays out.
//!
//! The key decision: the waves are a pure function of the shard count `N`
//! alone, so a scheduler submits the whole chain before any shard has run
//! (the root depth is not known until then). Wave `w` has `max(1, N/4^w)`
//! tasks (`N`, `N/4`, ... down to 1); while it has more than one task it
//! bakes the one level `k-1-w` (`k` the shards' root depth), and its last
//! wave, with one task, bakes every level left, down to depth 0. A level
//! has a quarter of the tiles of the level below, so every task of every
//! wave bakes about what one shard's share of the first coarse level is.
//! A coarse tile belongs to the task `part * tasks / N` of its wave, where
//! `part` is the plan's part for it (its first corner descendant's
//! subtree), so a task's tiles are a compact patch of ground, the patch of
//! `N / tasks` consecutive shards.
//!
//! A task filters its level from the level below as the shards or the
//! previous wave wrote it (the children and two rings of neighbours the
//! filter reads, `filter::needed_children`), through the same code as a
//! single-process bake, so its tiles are the same bytes. It writes them,
//! journaled (`--resume`), into a wave file (a pack of its own tiles plus a
//! shard section naming its wave and task, `shard_file`), audits every
//! tile against an independent evaluation of the filter of the level
//! below, and only then renames the file into place. A killed task resumes
//! alone.

use std::path::PathBuf;
use std::time::Instant;

use planet_terrain::TileAddress;
use planet_terrain::pack::{DecodedTile, PackWriter};

use crate::cluster::file::{WaveMeta, append_section};
use crate::cluster::parts::{LevelsAboveSink, Parts, PartsSource};
use crate::cluster::plan::WavePlan;
use crate::error::BakeError;
use crate::limits::MemoryPlan;
use crate::options::Progress;
use crate::report::cluster::WaveReport;
use crate::report::{AccuracyReport, BakeReport, MemoryReport, Report};
use crate::stages::audit::accuracy_audit_over;
use crate::stages::pipeline::TileBake;

/// What a wave task is told.
#[derive(Clone, Debug)]
pub struct WaveOptions {
    /// Every shard file, and the files of every wave before this one.
    pub parts: Vec<PathBuf>,
    pub out: PathBuf,
    pub wave: u32,
    pub task: u32,
    pub jobs: Option<usize>,
    pub memory: Option<u64>,
    /// Continue a killed task's journal.
    pub resume: bool,
}

/// The number of tasks of each wave of a bake cut into `shards` shards,
/// first to last: what a scheduler submits (`planet-bake wave-plan N`).
pub fn wave_tasks(shards: u32) -> Vec<u32> {
    WavePlan::new(shards).tasks()
}

impl From<crate::options::MergeOptions> for WaveOptions {
    /// A wave task of the parts, output, workers, memory and resumption a
    /// merge was told (wave and task 0 until set).
    fn from(m: crate::options::MergeOptions) -> WaveOptions {
        WaveOptions { parts: m.shards, out: m.out, wave: 0, task: 0, jobs: m.jobs, memory: m.memory, resume: m.resume }
    }
}

/// Bakes task `options.task` of wave `options.wave` into a wave file.
pub fn bake_wave(options: &WaveOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    crate::limits::check_jobs(options.jobs)?;
    crate::limits::in_pool(options.jobs, || wave_in_pool(options, progress))
}

fn wave_in_pool(options: &WaveOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let memory = MemoryPlan::new(options.memory, rayon::current_num_threads(), 0)?;
    progress.stage(&format!("checking {} part files", options.parts.len()));
    let parts = Parts::open(&options.parts)?;
    let (wave, task) = (options.wave, options.task);
    let tasks = check_task(&parts, wave, task)?;
    let depths = parts.waves_plan.depths(wave, parts.plan.root_depth);
    let mine: Vec<TileAddress> =
        parts.coarse_tiles().iter().copied().filter(|&t| parts.wave_task_of(t) == (wave, task)).collect();
    let mut report = WaveReport {
        out: options.out.display().to_string(),
        wave,
        task,
        tasks,
        depths: depths.clone().collect(),
        tiles: mine.len(),
        tiles_resumed: 0,
        accuracy_audit: AccuracyReport { passed: true, per_depth: Vec::new() },
        seconds: 0.0,
        memory: MemoryReport::new(&memory, None),
    };
    if mine.is_empty() {
        // Nothing to bake (the levels ran out before this wave, or a
        // regional bake has no tile here): no file, which the next waves
        // and the merge expect of a task with no tiles.
        remove_earlier_bakes_files(&options.out, progress)?;
        progress.stage(&format!("wave {wave}, task {task} of {tasks}: no tiles to bake; nothing written"));
        return Ok(BakeReport::new(Report::Wave(Box::new(report))));
    }
    let spec = parts.spec();
    let writer = if options.resume {
        PackWriter::resume_levels_above(&options.out, spec.clone(), mine.iter().copied())?
    } else {
        PackWriter::create_levels_above(&options.out, spec.clone(), mine.iter().copied())?
    };
    report.tiles_resumed = (writer.tile_count() - writer.pending_count()) as usize;
    progress.stage(&format!(
        "wave {wave}, task {task} of {tasks}: filtering {} tiles at depths {depths:?} ({} resumed)",
        mine.len(),
        report.tiles_resumed
    ));
    let held = memory.held_level_tiles();
    TileBake {
        source: &PartsSource(&parts),
        spec: &spec,
        data_depth: parts.plan.root_depth,
        progress,
        already_done: report.tiles_resumed,
        total: mine.len(),
        held_level_tiles: held,
    }
    .run(&writer, &LevelsAboveSink { writer: &writer, parts: &parts, own: depths.clone() })?;
    let assembled = writer.assemble()?;
    progress.stage(&format!("accuracy audit of {}", assembled.path().display()));
    let below = |t: TileAddress| -> Result<Option<DecodedTile>, BakeError> {
        if depths.contains(&t.depth()) { Ok(None) } else { Ok(parts.stored(t)?) }
    };
    let root = parts.plan.root_depth;
    let audit = accuracy_audit_over(&PartsSource(&parts), assembled.path(), 0..root, held, progress, &below)?;
    report.accuracy_audit.per_depth = audit.passed(assembled.path())?;
    let mut meta = parts.meta().clone();
    meta.shard = parts.waves_plan.first_part(wave, task).min(meta.shards - 1);
    meta.wave = Some(WaveMeta { wave, task, tasks });
    append_section(assembled.path(), assembled.summary().file_length, &meta, &[], &[])?;
    assembled.commit()?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(BakeReport::new(Report::Wave(Box::new(report))))
}

/// Removes a file or journal at a task's path when the task has no tiles:
/// an earlier bake's, which the scripts' globs would hand on as this one's.
fn remove_earlier_bakes_files(out: &std::path::Path, progress: &dyn Progress) -> Result<(), BakeError> {
    for stale in [out.to_owned(), planet_terrain::pack::writer::partial_path(out)] {
        match std::fs::remove_file(&stale) {
            Ok(()) => progress.stage(&format!("removed {}, left by an earlier bake", stale.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                let doing = "removing an earlier bake's file";
                return Err(BakeError::Io { path: stale, doing, cause: e.to_string() });
            }
        }
    }
    Ok(())
}

/// Refuses a wave or task the plan does not have, and a wave whose inputs
/// (the earlier waves' files) are not all given; returns the wave's task
/// count.
fn check_task(parts: &Parts, wave: u32, task: u32) -> Result<u32, BakeError> {
    let (waves, shards) = (parts.waves_plan, parts.plan.count);
    let tasks = waves.tasks_of(wave).ok_or_else(|| {
        BakeError::Options(format!(
            "wave {wave}: a bake of {shards} shards has waves 0 to {} (planet-bake wave-plan {shards} lists them)",
            waves.count() - 1,
        ))
    })?;
    if task >= tasks {
        return Err(BakeError::Options(format!(
            "--task {task}: wave {wave} of a bake of {shards} shards has tasks 0 to {}",
            tasks - 1
        )));
    }
    parts.require_waves_before(wave)?;
    parts.check_wave_files()?;
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waves_quarter_their_tasks_down_to_one() {
        let cases: [(u32, &[u32]); 6] = [
            (1, &[1]),
            (2, &[2, 1]),
            (4, &[4, 1]),
            (8, &[8, 2, 1]),
            (64, &[64, 16, 4, 1]),
            (1000, &[1000, 250, 62, 15, 3, 1]),
        ];
        for (shards, tasks) in cases {
            assert_eq!(WavePlan::new(shards).tasks(), tasks, "{shards} shards");
        }
    }

    #[test]
    fn every_coarse_depth_belongs_to_exactly_one_wave_and_the_last_takes_the_rest() {
        for shards in [1, 2, 4, 8, 64, 1000] {
            let plan = WavePlan::new(shards);
            for root in 1..=12u8 {
                let mut seen = vec![0; usize::from(root)];
                for wave in 0..plan.count() {
                    for depth in plan.depths(wave, root) {
                        seen[usize::from(depth)] += 1;
                        assert_eq!(plan.wave_of(depth, root), wave, "{shards} shards, root {root}, depth {depth}");
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{shards} shards, root {root}: {seen:?}");
            }
        }
    }

    #[test]
    fn a_wave_task_bakes_the_coarse_tiles_of_consecutive_parts() {
        for shards in [3u32, 8, 1000] {
            let plan = WavePlan::new(shards);
            for wave in 0..plan.count() {
                let tasks = plan.tasks_of(wave).unwrap();
                let owners: Vec<u32> = (0..shards).map(|p| plan.task_of(wave, p)).collect();
                assert!(owners.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1), "{owners:?}");
                assert_eq!((owners[0], *owners.last().unwrap()), (0, tasks - 1));
                for task in 0..tasks {
                    let first = plan.first_part(wave, task);
                    assert_eq!(plan.task_of(wave, first), task);
                    assert!(first == 0 || plan.task_of(wave, first - 1) == task - 1);
                }
            }
        }
    }
}
