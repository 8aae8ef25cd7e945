//! The merge in three stages, for a cluster: `merge layout --copy-tasks M`
//! lays the pack out, `merge copy K` (M tasks, on any nodes) copies one
//! range of its payloads each, `merge commit` checks and renames it into place. The bytes
//! are the one-process merge's.
//!
//! The key decision: the layout is the single-node part, and it walks only
//! indexes. It writes the header and index in `PACK.tmp` at the file's full
//! length, cuts the payloads into M ranges of about equal bytes, and records
//! them in `PACK.layout` with a nonce of this layout. A copy task copies
//! its range into its own bytes of the shared file (`pack::copy_range`
//! checks every tile against its part's entry and checksum, reads back what
//! it wrote, syncs) and only then writes its marker, `PACK.copy-K`, naming
//! the nonce: a marker of an earlier layout never counts, and a killed task
//! is run again alone (a copy is idempotent). The commit refuses while any
//! marker is missing, checks every rule of the file and reads no payload
//! but the few the detail law samples (each was read back by its task),
//! records the law and renames. A layout removes the markers of any
//! layout before it. Every stage takes the journal's lock (the layout and
//! commit exclusively, copy tasks shared) before it reads the record.

use std::path::{Path, PathBuf};
use std::time::Instant;

use planet_terrain::TileAddress;
use planet_terrain::ground::LawSummary;
use planet_terrain::pack::writer::sibling;
use planet_terrain::pack::{CopyRange, Pack, PackWriter, TileParts};
use serde::{Deserialize, Serialize};

use crate::cluster::parts::Parts;
use crate::error::BakeError;
use crate::options::MergeOptions;
use crate::options::Progress;
use crate::report::cluster::{CopyReport, LayoutReport, MergeReport};
use crate::report::{AccuracyReport, BakeReport, Report};
use crate::stages::audit::FileBytes;

/// What `PACK.layout` records: which layout, of what, from which parts,
/// and every copy task's range.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Layout {
    format: String,
    /// Names this layout: a marker counts only with the same nonce.
    nonce: String,
    tiles: u64,
    file_length: u64,
    payload_bytes: u64,
    parts: Vec<PartRecord>,
    ranges: Vec<CopyRange>,
}

/// A part as the layout saw it: copy tasks and the commit must be given
/// the same files (by name, tile count and length; their directory may
/// differ between nodes).
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct PartRecord {
    name: String,
    tiles: u64,
    bytes: u64,
}

/// What `PACK.copy-K` records: task K of the layout `nonce` copied its range.
#[derive(Debug, Serialize, Deserialize)]
struct CopyMarker {
    nonce: String,
    task: u32,
    range: CopyRange,
    seconds: f64,
}

const LAYOUT_FORMAT: &str = "planet-merge-layout 1";

fn layout_path(out: &Path) -> PathBuf {
    sibling(out, ".layout")
}

fn marker_path(out: &Path, task: u32) -> PathBuf {
    sibling(out, &format!(".copy-{task}"))
}

fn io_error(path: &Path, doing: &'static str) -> impl FnOnce(std::io::Error) -> BakeError + use<> {
    let path = path.to_owned();
    move |e| BakeError::Io { path, doing, cause: e.to_string() }
}

/// Writes `value` as JSON at `path` whole or not at all (temporary file,
/// sync, rename).
fn write_record(path: &Path, value: &impl Serialize) -> Result<(), BakeError> {
    let bytes = serde_json::to_vec_pretty(value).expect("records serialize");
    planet_cli::fs::write_atomic(path, &bytes).map_err(|e| BakeError::Io {
        path: path.to_owned(),
        doing: "writing",
        cause: format!("{e:#}"),
    })
}

fn read_layout(out: &Path) -> Result<Layout, BakeError> {
    let path = layout_path(out);
    let bytes = std::fs::read(&path).map_err(|e| BakeError::Io {
        path: path.clone(),
        doing: "reading the merge's layout (lay the pack out first with planet-bake merge layout --copy-tasks M)",
        cause: e.to_string(),
    })?;
    let layout: Layout = serde_json::from_slice(&bytes).map_err(|e| BakeError::Io {
        path: path.clone(),
        doing: "reading the merge's layout",
        cause: e.to_string(),
    })?;
    if layout.format != LAYOUT_FORMAT {
        return Err(BakeError::Io {
            path,
            doing: "reading the merge's layout",
            cause: format!("format {:?}, not {LAYOUT_FORMAT:?}", layout.format),
        });
    }
    Ok(layout)
}

fn part_records(parts: &Parts) -> Vec<PartRecord> {
    let mut records: Vec<PartRecord> = parts
        .all()
        .map(|(p, pack)| PartRecord {
            name: p.path.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            tiles: pack.tile_count(),
            bytes: std::fs::metadata(&p.path).map_or(0, |m| m.len()),
        })
        .collect();
    records.sort();
    records
}

/// The parts given to a copy task or the commit must be the layout's; the
/// first that differs is named.
fn check_same_parts(layout: &Layout, parts: &Parts, out: &Path) -> Result<(), BakeError> {
    let given = part_records(parts);
    let describe = |r: &PartRecord| format!("{} ({} tiles, {} bytes)", r.name, r.tiles, r.bytes);
    let not_in = |a: &[PartRecord], b: &[PartRecord]| a.iter().find(|r| !b.contains(r)).map(describe);
    let difference = match (not_in(&given, &layout.parts), not_in(&layout.parts, &given)) {
        (None, None) => return Ok(()),
        (Some(extra), _) => format!("{extra} is not one of them"),
        (None, Some(missing)) => format!("{missing} is not given"),
    };
    Err(BakeError::ShardSet(format!(
        "the parts given are not the {} files {} was laid out from: {difference}; give the same shard and wave files",
        layout.parts.len(),
        out.display()
    )))
}

/// Opens and checks the parts as one bake whose waves were baked: a pack
/// laid out for copy tasks takes every tile from them.
fn open_parts(options: &MergeOptions, progress: &dyn Progress) -> Result<Parts, BakeError> {
    progress.stage(&format!("checking {} part files", options.shards.len()));
    let parts = Parts::open(&options.shards)?;
    if !parts.waves_given() {
        return Err(BakeError::ShardSet(
            "a merge in stages lays out finished tiles only: bake the waves first (planet-bake wave W --task J) and give their files too".into(),
        ));
    }
    parts.require_waves_before(parts.waves_plan.count())?;
    Ok(parts)
}

/// `merge layout --copy-tasks M`: the header and index in `PACK.tmp`, the ranges in
/// `PACK.layout`.
pub(crate) fn lay_out(
    options: &MergeOptions,
    copy_tasks: u32,
    progress: &dyn Progress,
) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let parts = open_parts(options, progress)?;
    parts.check_tile_set(&[])?;
    let out = &options.out;
    // Locked first: no copy task of an earlier layout still writes.
    let writer = PackWriter::create_levels_above(out, parts.spec(), std::iter::empty::<TileAddress>())?;
    remove_records(out)?;
    progress.stage(&format!("laying out {} for {copy_tasks} copy tasks", out.display()));
    let sources: Vec<&dyn TileParts> = parts.sources();
    // `laid` holds the journal's lock until the ranges are recorded: no copy
    // task or commit reads a layout record that is not this file's.
    let laid = writer.lay_out(&sources, copy_tasks)?;
    let nonce = format!(
        "{:016x}{:08x}",
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        std::process::id()
    );
    let layout = Layout {
        format: LAYOUT_FORMAT.into(),
        nonce,
        tiles: laid.summary.tiles,
        file_length: laid.summary.file_length,
        payload_bytes: laid.summary.payload_bytes,
        parts: part_records(&parts),
        ranges: laid.ranges.clone(),
    };
    write_record(&layout_path(out), &layout)?;
    drop(laid);
    let report = LayoutReport {
        out: out.display().to_string(),
        tiles: layout.tiles,
        file_bytes: layout.file_length,
        copy_tasks,
        range_bytes: layout.ranges.iter().map(|r| r.end - r.start).collect(),
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok(BakeReport::new(Report::MergeLayout(report)))
}

/// Removes every copy marker beside `out`, then the layout record: the
/// record last, so a cleanup cut short leaves markers only beside a record
/// that names them.
fn remove_records(out: &Path) -> Result<(), BakeError> {
    remove_markers(out)?;
    remove_layout_record(out)
}

/// Removes every copy marker beside `out`, and the temporary file of one
/// whose writer died.
fn remove_markers(out: &Path) -> Result<(), BakeError> {
    let dir = planet_terrain::pack::writer::scratch_dir(out);
    let prefix = format!("{}.copy-", out.file_name().unwrap_or_default().to_string_lossy());
    let listing = std::fs::read_dir(dir).map_err(io_error(dir, "listing the merge's copy markers"))?;
    for entry in listing {
        let entry = entry.map_err(io_error(dir, "listing the merge's copy markers"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let task = name.strip_prefix(&prefix).map(|t| t.strip_suffix(".partial").unwrap_or(t));
        if task.is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())) {
            remove_if_there(&entry.path(), "removing a copy marker")?;
        }
    }
    Ok(())
}

fn remove_layout_record(out: &Path) -> Result<(), BakeError> {
    let layout = layout_path(out);
    // Where builds before the staging files became unique staged it.
    remove_if_there(&planet_terrain::pack::writer::sibling(&layout, ".partial"), "removing the merge's layout")?;
    remove_if_there(&layout, "removing the merge's layout")
}

fn remove_if_there(path: &Path, doing: &'static str) -> Result<(), BakeError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(path, doing)(e)),
        _ => Ok(()),
    }
}

/// `merge copy K`: task K's range of `PACK.tmp`, then its marker.
pub(crate) fn copy(options: &MergeOptions, task: u32, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let out = &options.out;
    require_layout(out)?;
    // Shared, held to the end: no layout or commit runs while this copies.
    let _lock = planet_terrain::pack::lock_for_copy(out)?;
    let layout = read_layout(out)?;
    let Some(range) = layout.ranges.get(task as usize) else {
        return Err(BakeError::Options(format!(
            "merge copy {task}: {} was laid out for {} copy tasks (0 to {})",
            out.display(),
            layout.ranges.len(),
            layout.ranges.len().saturating_sub(1)
        )));
    };
    let parts = open_parts(options, progress)?;
    check_same_parts(&layout, &parts, out)?;
    progress.stage(&format!(
        "copying range {task} of {} ({} tiles, {} bytes)",
        out.display(),
        range.tiles,
        range.end - range.start
    ));
    let holder = |key: planet_terrain::TileKey| parts.holder(key.address()).map(|p| p as &dyn TileParts);
    let copied = planet_terrain::pack::copy_range(out, range, &holder, &mut |done, total| {
        progress.tiles(done as usize, total as usize)
    })
    .map_err(|e| parts.blame(&e).unwrap_or_else(|| e.into()))?;
    let seconds = started.elapsed().as_secs_f64();
    write_record(&marker_path(out, task), &CopyMarker { nonce: layout.nonce.clone(), task, range: *range, seconds })?;
    let report = CopyReport { out: out.display().to_string(), task, tiles: copied.tiles, bytes: copied.bytes, seconds };
    Ok(BakeReport::new(Report::MergeCopy(report)))
}

/// Which tasks have not written a marker of this layout.
fn unfinished_tasks(out: &Path, layout: &Layout) -> Vec<u32> {
    (0..layout.ranges.len() as u32)
        .filter(|&task| {
            let marker =
                std::fs::read(marker_path(out, task)).ok().and_then(|b| serde_json::from_slice::<CopyMarker>(&b).ok());
            !marker
                .is_some_and(|m| m.nonce == layout.nonce && m.task == task && m.range == layout.ranges[task as usize])
        })
        .collect()
}

/// `merge commit`: every copy done, every rule of `PACK.tmp` checked, the
/// detail law recorded, renamed into place.
pub(crate) fn commit(options: &MergeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let out = &options.out;
    let parts = open_parts(options, progress)?;
    if let Some(report) = finish_cleanup(options, &parts, started)? {
        return Ok(report);
    }
    if let Some(report) = committed_and_cleaned(options, &parts, started, progress)? {
        return Ok(report);
    }
    require_layout(out)?;
    // Locked first: every copy task has stopped and no layout can start, so
    // the record and the markers read next are this `PACK.tmp`'s.
    let assembled = planet_terrain::pack::take_up_copied(out)?;
    let layout = read_layout(out)?;
    check_same_parts(&layout, &parts, out)?;
    check_copies_done(out, &layout)?;
    let path = assembled.path().to_owned();
    let summary = assembled.summary();
    if (summary.tiles, summary.file_length) != (layout.tiles, layout.file_length) {
        return Err(BakeError::ShardSet(format!(
            "{}: holds {} tiles in {} bytes, not the {} tiles in {} bytes {} records; lay it out again",
            path.display(),
            summary.tiles,
            summary.file_length,
            layout.tiles,
            layout.file_length,
            layout_path(out).display()
        )));
    }
    let verify_started = Instant::now();
    progress.stage(&format!("verifying {}: every rule (each range was read back by its copy task)", path.display()));
    Pack::adopt(Box::new(FileBytes::open(&path)?))
        .and_then(|p| {
            p.verify_batched(&mut |done, total| progress.tiles(done as usize, total as usize), &|_, _| Ok(()))
        })
        .map_err(|e| e.in_file(&path))?;
    // A commit killed after recording the law, before the rename, left it
    // in the header: measured from these very bytes, so it stands.
    let detail_law = match Pack::open_unmapped(&path)?.header().detail {
        Some(law) => law,
        None => crate::run::record_detail_law(&assembled, progress)?,
    };
    let verify_seconds = verify_started.elapsed().as_secs_f64();
    planet_terrain::pack::crash::abort_point("bake-rename");
    // The markers go while the journal's lock is held, so no layout starts
    // before they are gone; the record goes last, after the journal: a
    // commit killed in between finds the pack its record describes in place
    // and finishes the cleanup (`finish_cleanup`).
    assembled.commit_then(|| remove_markers(out))?;
    remove_layout_record(out)?;
    Ok(commit_report(options, &parts, &layout, detail_law, started, verify_seconds))
}

/// A copy task or commit needs a layout: its journal, its `PACK.tmp` and
/// its record beside `out`.
fn require_layout(out: &Path) -> Result<(), BakeError> {
    let missing = [planet_terrain::pack::partial_path(out), planet_terrain::pack::tmp_path(out), layout_path(out)]
        .into_iter()
        .find(|p| !p.exists());
    match missing {
        None => Ok(()),
        Some(path) => Err(BakeError::Options(format!(
            "{}: nothing is laid out here ({} is missing); lay the pack out first with planet-bake merge layout --copy-tasks M PARTS...",
            out.display(),
            path.display()
        ))),
    }
}

/// Refuses, naming them, while any copy task has not marked its range of
/// this layout done.
fn check_copies_done(out: &Path, layout: &Layout) -> Result<(), BakeError> {
    let unfinished = unfinished_tasks(out, layout);
    if unfinished.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = unfinished.iter().map(u32::to_string).collect();
    Err(BakeError::ShardSet(format!(
        "{}: copy tasks {} of {} have not finished (no marker {} of this layout); run them with planet-bake merge copy K, then merge commit",
        out.display(),
        list.join(", "),
        layout.ranges.len(),
        marker_path(out, unfinished[0]).display()
    )))
}

/// A commit killed after its rename, run again: the pack its layout
/// describes is in place, so the journal and the records go and the
/// commit reports it.
fn finish_cleanup(options: &MergeOptions, parts: &Parts, started: Instant) -> Result<Option<BakeReport>, BakeError> {
    let out = &options.out;
    // Held while it looks and removes: no layout starts meanwhile.
    let _lock = planet_terrain::pack::lock_if_laid_out(out)?;
    if planet_terrain::pack::tmp_path(out).exists() || !layout_path(out).exists() {
        return Ok(None);
    }
    let layout = read_layout(out)?;
    let Some(law) = committed_already(out, &layout) else { return Ok(None) };
    remove_markers(out)?;
    remove_if_there(&planet_terrain::pack::partial_path(out), "removing the journal")?;
    remove_layout_record(out)?;
    Ok(Some(commit_report(options, parts, &layout, law, started, 0.0)))
}

/// The pack at `out` when it is the one `layout` laid out, committed by a
/// commit killed before its cleanup: `PACK.tmp` gone, the same tile count
/// and length, a detail law recorded (a commit renames no pack without
/// one), and every rule holds. Returns the law.
fn committed_already(out: &Path, layout: &Layout) -> Option<planet_terrain::pack::DetailLaw> {
    let pack = Pack::open_unmapped(out).ok()?;
    let law = pack.header().detail?;
    let same = pack.tile_count() == layout.tiles && pack.file_length() == layout.file_length;
    (same && pack.verify_batched(&mut |_, _| {}, &|_, _| Ok(())).is_ok()).then_some(law)
}

/// A commit run again after it finished (#50: it failed, "nothing is laid
/// out here"): nothing staged is left, and the pack at `out` is these
/// parts' (their fingerprint), with its law, and holds every rule.
fn committed_and_cleaned(
    options: &MergeOptions,
    parts: &Parts,
    started: Instant,
    progress: &dyn Progress,
) -> Result<Option<BakeReport>, BakeError> {
    let out = &options.out;
    let staged = [planet_terrain::pack::partial_path(out), planet_terrain::pack::tmp_path(out), layout_path(out)];
    if staged.iter().any(|p| p.exists()) {
        return Ok(None);
    }
    let Ok(pack) = Pack::open(out) else { return Ok(None) };
    let ours = crate::cluster::file::hex(&pack.header().fingerprint) == parts.meta().fingerprint;
    let Some(law) = pack.header().detail.filter(|_| ours) else { return Ok(None) };
    let verify_started = Instant::now();
    progress.stage(&format!("{} is committed already: verifying it is whole", out.display()));
    pack.verify_batched(&mut |done, total| progress.tiles(done as usize, total as usize), &|_, _| Ok(()))?;
    let report = MergeReport {
        out: out.display().to_string(),
        shards: options.shards.iter().map(|p| p.display().to_string()).collect(),
        tiles: pack.tile_count(),
        tiles_from_shards: parts.shards.iter().filter_map(|s| s.pack.as_ref()).map(Pack::tile_count).sum(),
        tiles_filtered: 0,
        wave_files: parts.waves.iter().flatten().flatten().count(),
        copy_tasks: None,
        file_bytes: pack.file_length(),
        accuracy_audit: AccuracyReport { passed: true, per_depth: Vec::new() },
        seconds: started.elapsed().as_secs_f64(),
        filter_seconds: 0.0,
        assemble_seconds: 0.0,
        verify_seconds: verify_started.elapsed().as_secs_f64(),
        detail_law: LawSummary::of(&law),
    };
    progress.stage(&format!("done already: {} holds these parts' pack, verified; nothing to commit", out.display()));
    Ok(Some(BakeReport::new(Report::Merge(Box::new(report)))))
}

fn commit_report(
    options: &MergeOptions,
    parts: &Parts,
    layout: &Layout,
    detail_law: planet_terrain::pack::DetailLaw,
    started: Instant,
    verify_seconds: f64,
) -> BakeReport {
    let report = MergeReport {
        out: options.out.display().to_string(),
        shards: options.shards.iter().map(|p| p.display().to_string()).collect(),
        tiles: layout.tiles,
        tiles_from_shards: parts.shards.iter().filter_map(|s| s.pack.as_ref()).map(Pack::tile_count).sum(),
        tiles_filtered: 0,
        wave_files: parts.waves.iter().flatten().flatten().count(),
        copy_tasks: Some(layout.ranges.len() as u32),
        file_bytes: layout.file_length,
        accuracy_audit: AccuracyReport { passed: true, per_depth: Vec::new() },
        seconds: started.elapsed().as_secs_f64(),
        filter_seconds: 0.0,
        assemble_seconds: 0.0,
        verify_seconds,
        detail_law: LawSummary::of(&detail_law),
    };
    BakeReport::new(Report::Merge(Box::new(report)))
}
