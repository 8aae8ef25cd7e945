//! The two audits. The landmark audit runs before a single byte is written,
//! so a misread grid (swapped, flipped or shifted axes) costs seconds, not
//! hours; it checks the source itself, through the same sampling the bake
//! uses. The accuracy audit runs after the pack is finished: it opens the
//! pack as any reader would and compares every stored sample with the source
//! at that sample's own latitude/longitude (coarse tiles: with the stated
//! filter of the level below as stored), within half a quantisation step;
//! a pack that fails is moved aside and the bake fails, so nothing at the
//! output path looks like a good pack. The accuracy audit reads the pack
//! with positioned reads (`FileBytes`), not a memory map: a map's pages
//! count in the process's resident memory, and reading every tile through
//! one would make the bake's peak grow with the pack.

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use planet_terrain::TileAddress;
use planet_terrain::geo::address::TILE_STORED_SAMPLES;
use planet_terrain::pack::{Codec, DecodedTile, Pack, PackBytes, PackError};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::BakeError;
use crate::landmarks::{LandmarkAudit, Verdict, table};
use crate::options::BakeOptions;
use crate::stages::filter::for_each_window;
use crate::stages::pipeline::TileSource;
use crate::stages::sampling::Inputs;

/// Checks the source against the body's landmark table plus the caller's
/// landmarks; refuses a raster they show to be misread.
pub(crate) fn run_landmark_audit(options: &BakeOptions, inputs: &Inputs) -> Result<LandmarkAudit, BakeError> {
    let mut landmarks = table(options.body.name());
    landmarks.extend(options.landmarks.iter().cloned());
    let audit = LandmarkAudit::run(&landmarks, |lat, lon| inputs.heights(&[(lat, lon)]).map(|v| v[0]))?;
    let path = options.dem.clone();
    let list = |audit: &LandmarkAudit| audit.disagreeing().map(|c| format!("\n  {c}")).collect::<String>();
    match &audit.verdict {
        Verdict::Accepted | Verdict::NothingToCheck => Ok(audit),
        Verdict::Misread { reading, agree_if_undone, of } => Err(BakeError::Landmarks {
            path,
            message: format!(
                "{}: {agree_if_undone} of {of} landmarks agree if that is undone; as given, these disagree:{}",
                reading.describe(),
                list(&audit)
            ),
        }),
        Verdict::Disagree => Err(BakeError::Landmarks {
            path,
            message: format!(
                "landmarks disagree and no simple misreading (reversed, flipped or shifted axes) explains them; check the units, vertical datum and georeferencing:{}",
                list(&audit)
            ),
        }),
    }
}

/// Per-depth worst errors found by the accuracy audit; serialised as is into
/// the report's `accuracy_audit.per_depth`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct DepthAudit {
    pub(crate) depth: u8,
    pub(crate) tiles: usize,
    #[serde(rename = "samples_compared")]
    pub(crate) samples: usize,
    #[serde(rename = "samples_filled_not_compared")]
    pub(crate) skipped_filled: usize,
    #[serde(rename = "worst_height_error_m")]
    pub(crate) worst_m: f64,
    #[serde(rename = "worst_height_error_steps")]
    pub(crate) worst_steps: f64,
    #[serde(rename = "worst_colour_error")]
    pub(crate) worst_colour: u8,
    pub(crate) class_mismatches: usize,
    pub(crate) violations: usize,
}

impl DepthAudit {
    /// Counts one height compared: `got` from the pack, `want` what it
    /// should hold, `step` the tile's quantisation step. Returns the bound
    /// it broke, if it broke it: half a step of quantisation, plus the f32
    /// rounding of the stored range and of the decode (the filter is the
    /// same on both sides, so it contributes nothing).
    pub(crate) fn height(&mut self, got: f64, want: f64, step: f64) -> Option<f64> {
        let error = (got - want).abs();
        let bound = 0.5 * step + 1e-6 * (1.0 + want.abs());
        self.samples += 1;
        self.worst_m = self.worst_m.max(error);
        if step > 0.0 {
            self.worst_steps = self.worst_steps.max(error / step);
        }
        (error > bound).then(|| {
            self.violations += 1;
            bound
        })
    }
}

/// What the accuracy audit found.
#[derive(Debug)]
pub(crate) struct AccuracyAudit {
    /// One entry per depth the pack holds, including depths with no tile
    /// audited.
    per_depth: Vec<DepthAudit>,
    /// The first violation, if any.
    violation: Option<String>,
}

impl AccuracyAudit {
    /// The depths with audited tiles, shallowest first, if no sample broke
    /// its bound; otherwise the pack at `out` is moved aside and the bake
    /// fails with the first violation.
    pub(crate) fn passed(self, out: &Path) -> Result<Vec<DepthAudit>, BakeError> {
        match self.violation {
            Some(message) => Err(reject(out, message)),
            None => Ok(self.per_depth.into_iter().filter(|a| a.tiles > 0).collect()),
        }
    }
}

/// Re-reads `tiles` from the pack at `path` and compares every sample with
/// what it should hold: tiles at and below the pack's height data depth
/// with the source at the sample's own latitude/longitude; shallower tiles
/// with the stated filter of the level below as the pack stores it,
/// evaluated by [`crate::stages::filter::Level::filtered_separable`] (not the bake's window),
/// so the chain from the source to depth 0 is checked link by link without
/// reading the source for coarse heights. Returns per-depth results and the
/// first violation.
/// A pack file read with positioned reads: every read is a copy into a
/// buffer the caller drops, so nothing of the file stays resident.
#[derive(Debug)]
pub(crate) struct FileBytes {
    file: File,
    length: u64,
}

impl FileBytes {
    pub(crate) fn open(path: &Path) -> Result<FileBytes, PackError> {
        let opened = File::open(path).and_then(|file| Ok(FileBytes { length: file.metadata()?.len(), file }));
        opened.map_err(|cause| in_file(path, PackError::Io { doing: "opening the pack", cause }))
    }
}

impl PackBytes for FileBytes {
    fn len(&self) -> u64 {
        self.length
    }

    fn read(&self, offset: u64, length: usize) -> Result<Cow<'_, [u8]>, PackError> {
        let mut bytes = vec![0; length];
        self.file
            .read_exact_at(&mut bytes, offset)
            .map_err(|cause| PackError::Io { doing: "reading the pack", cause })?;
        Ok(Cow::Owned(bytes))
    }
}

/// Tiles audited against the source between two folds of their results.
const AUDIT_BATCH: usize = 4096;

/// `error`, naming the pack's file.
fn in_file(path: &Path, error: PackError) -> PackError {
    PackError::File { path: path.to_owned(), cause: Box::new(error) }
}

/// The pack's own tiles with depths in `depths`, in key order, a batch of
/// at most `max` at a time: the audit lists no tile set, it walks the
/// index. Keys order by depth first, so the walk stops past the range.
fn for_each_batch(
    pack: &Pack,
    max: usize,
    depths: std::ops::Range<u8>,
    mut each: impl FnMut(&[TileAddress]) -> Result<(), BakeError>,
) -> Result<(), BakeError> {
    let mut batch = Vec::with_capacity(max.min(1 << 16));
    for key in pack.keys() {
        let tile = key?.address();
        if tile.depth() >= depths.end {
            break;
        }
        if depths.contains(&tile.depth()) {
            batch.push(tile);
            if batch.len() == max {
                each(&batch)?;
                batch.clear();
            }
        }
    }
    if batch.is_empty() { Ok(()) } else { each(&batch) }
}

/// Coarse tiles audited per window walk: 64 Ki.
const COARSE_BATCH: usize = 1 << 16;

/// Audits every tile of the pack at `path` whose depth is in `depths` (a
/// merge audits only the levels it filtered; see the module comment).
/// `progress` counts the tiles audited (the audit is 40% of an ETOPO5
/// bake's time, and showed nothing while it ran).
pub(crate) fn accuracy_audit(
    inputs: &dyn TileSource,
    path: &Path,
    depths: std::ops::Range<u8>,
    held_level_tiles: usize,
    progress: &dyn crate::Progress,
) -> Result<AccuracyAudit, BakeError> {
    accuracy_audit_over(inputs, path, depths, held_level_tiles, progress, &|_| Ok(None))
}

/// The level below a coarse tile a pack does not hold itself (a wave file
/// holds one level; the level below it lies in the shards or an earlier
/// wave's files): `Ok(None)` where it lies in the pack, or nowhere.
pub(crate) type LevelBelow<'a> = dyn Fn(TileAddress) -> Result<Option<DecodedTile>, BakeError> + Sync + 'a;

/// [`accuracy_audit`] of a pack whose coarse tiles' level below may lie
/// elsewhere: a child tile the pack does not hold is asked of `elsewhere`.
pub(crate) fn accuracy_audit_over(
    inputs: &dyn TileSource,
    path: &Path,
    depths: std::ops::Range<u8>,
    held_level_tiles: usize,
    progress: &dyn crate::Progress,
    elsewhere: &LevelBelow<'_>,
) -> Result<AccuracyAudit, BakeError> {
    // A handful of index pages: the walk is in key order, and lookups
    // around a window stay within a few leaves of it.
    let pack = Pack::adopt(Box::new(FileBytes::open(path)?)).map_err(|e| in_file(path, e))?.with_cached_pages(16);
    let body = pack.header().body.clone();
    let codec = pack.header().codec;
    let max_depth = pack.header().max_depth;
    let filter_from = pack.header().height_data_depth;
    // Results are folded in batch by batch, never held per tile.
    let mut audit = AccuracyAudit::empty(max_depth);
    let mut total = 0;
    for key in pack.keys() {
        let depth = key?.address().depth();
        if depth >= depths.end {
            break;
        }
        total += usize::from(depths.contains(&depth));
    }
    let done = std::cell::Cell::new(0);
    let count = |n: usize| {
        done.set(done.get() + n);
        progress.tiles(done.get(), total);
    };
    let from_source = filter_from.max(depths.start)..depths.end;
    for_each_batch(&pack, AUDIT_BATCH, from_source, |batch| {
        let results: Vec<_> = batch
            .par_iter()
            .map(|&tile| -> Result<_, BakeError> {
                let decoded = pack.read_tile(tile)?;
                let source = inputs.sample(&body, tile)?;
                let want: Vec<Option<f64>> =
                    source.heights.iter().zip(&source.filled).map(|(&h, &f)| (!f).then_some(h)).collect();
                let (mut a, mut first) = compare(&decoded, &want, "source", codec, (&source.classes, &source.colour));
                check_void_mask(&decoded, &source, &mut a, &mut first);
                Ok((tile.depth(), a, first))
            })
            .collect::<Result<_, _>>()?;
        count(batch.len());
        audit.add(results);
        Ok(())
    })?;
    // Coarse tiles window by window (`filter::for_each_window`), the level
    // below read back from the pack: never a whole level in memory.
    let load = |t: TileAddress| -> Result<_, BakeError> {
        if pack.entry(t)?.is_some() { Ok(Some(pack.read_tile(t)?)) } else { elsewhere(t) }
    };
    for depth in (0..filter_from).rev().filter(|d| depths.contains(d)) {
        for_each_batch(&pack, COARSE_BATCH, depth..depth + 1, |here| {
            for_each_window(here, held_level_tiles, load, |window, below| {
                let audited: Vec<_> = window
                    .par_iter()
                    .map(|&tile| -> Result<_, BakeError> {
                        let decoded = pack.read_tile(tile)?;
                        let want = below.filtered_separable(tile);
                        let surface = if codec.has_classes() || codec.has_colour() {
                            inputs.surface(&body, tile)?
                        } else {
                            (Vec::new(), Vec::new())
                        };
                        let (a, first) =
                            compare(&decoded, &want, "filter of the level below", codec, (&surface.0, &surface.1));
                        Ok((depth, a, first))
                    })
                    .collect::<Result<_, _>>()?;
                count(window.len());
                audit.add(audited);
                Ok(())
            })
        })?;
    }
    Ok(audit)
}

/// Counts a violation where a tile's void mask is not the source's voids
/// inside the DEM's footprint (past its edge the pack stores a
/// continuation, which is neither), and says the first such sample.
fn check_void_mask(
    decoded: &DecodedTile,
    source: &crate::stages::sampling::Sampled,
    audit: &mut DepthAudit,
    first: &mut Option<String>,
) {
    let outside = |k: usize| source.outside.get(k).copied().unwrap_or(false);
    let Some(k) = (0..source.filled.len()).find(|&k| decoded.is_void(k) != (source.filled[k] && !outside(k))) else {
        return;
    };
    audit.violations += 1;
    let n = TILE_STORED_SAMPLES as usize;
    let what = |void: bool| if void { "a void" } else { "measured" };
    first.get_or_insert(format!(
        "tile {} sample ({}, {}): the void mask says {}, the source says {}",
        decoded.tile,
        (k % n) as i32 - 1,
        (k / n) as i32 - 1,
        what(decoded.is_void(k)),
        what(source.filled[k])
    ));
}

/// Compares one decoded tile with the heights it should hold (`None`: a
/// void the bake filled, not compared) and the classes and colour its codec
/// stores. Heights, colour and classes each take a loop of their own (the
/// heights' loop with no per-sample test of the codec), and the first
/// violation reported is the one at the lowest sample, heights before
/// colour before classes at one sample, as one loop over all three finds.
fn compare(
    decoded: &DecodedTile,
    want: &[Option<f64>],
    what: &str,
    codec: Codec,
    (classes, colour): (&[u8], &[[u8; 3]]),
) -> (DepthAudit, Option<String>) {
    let tile = decoded.tile;
    let step = decoded.quantisation_step();
    let mut a = DepthAudit { tiles: 1, ..Default::default() };
    // (sample, kind, message): the first violation of each kind.
    let mut firsts: Vec<(usize, u8, String)> = Vec::new();
    let mut first_height = None;
    let mut worst_m = 0.0f64;
    for (k, (&q, &want)) in decoded.quantised.iter().zip(want).enumerate() {
        let Some(want) = want else {
            a.skipped_filled += 1;
            continue;
        };
        let got = decoded.dequantise(q);
        // `DepthAudit::height`'s bound, sample by sample.
        let error = (got - want).abs();
        let bound = 0.5 * step + 1e-6 * (1.0 + want.abs());
        worst_m = worst_m.max(error);
        if error > bound {
            a.violations += 1;
            first_height.get_or_insert((k, got, want, bound));
        }
    }
    a.samples = decoded.quantised.len().min(want.len()) - a.skipped_filled;
    a.worst_m = worst_m;
    if step > 0.0 {
        // Dividing by a positive step keeps the order: the worst ratio is
        // the worst error's.
        a.worst_steps = worst_m / step;
    }
    let n = TILE_STORED_SAMPLES as usize;
    if let Some((k, got, want, bound)) = first_height {
        let message = format!(
            "tile {tile} sample ({}, {}): pack {got:.3} m, {what} {want:.3} m, bound {bound:.4} m",
            k % n - 1,
            k / n - 1
        );
        firsts.push((k, 0, message));
    }
    if codec.has_colour() {
        let stored = decoded.colour.as_ref().expect("codec 2");
        for (k, (c, w)) in stored.iter().zip(colour).enumerate() {
            let d = (0..3).map(|i| c[i].abs_diff(w[i])).max().unwrap_or(0);
            a.worst_colour = a.worst_colour.max(d);
            if d > 0 {
                a.violations += 1;
                if firsts.iter().all(|f| f.1 != 1) {
                    firsts.push((k, 1, format!("tile {tile}: colour {c:?} vs source {w:?}")));
                }
            }
        }
    }
    if codec.has_classes() {
        let stored = decoded.classes.as_ref().expect("codec >= 1");
        for (k, (c, w)) in stored.iter().zip(classes).enumerate() {
            if c != w {
                a.class_mismatches += 1;
                a.violations += 1;
                if firsts.iter().all(|f| f.1 != 2) {
                    firsts.push((k, 2, format!("tile {tile}: surface class differs from the source")));
                }
            }
        }
    }
    let first = firsts.into_iter().min_by_key(|f| (f.0, f.1)).map(|f| f.2);
    (a, first)
}

impl AccuracyAudit {
    /// Sums per-tile results `(depth, tally, first violation)` by depth.
    pub(crate) fn collect(max_depth: u8, results: Vec<(u8, DepthAudit, Option<String>)>) -> AccuracyAudit {
        let mut audit = AccuracyAudit::empty(max_depth);
        audit.add(results);
        audit
    }

    /// No tile audited yet.
    fn empty(max_depth: u8) -> AccuracyAudit {
        let per_depth = (0..=max_depth).map(|depth| DepthAudit { depth, ..Default::default() }).collect();
        AccuracyAudit { per_depth, violation: None }
    }

    /// Folds in the results of more tiles, in order: the first violation
    /// kept is the first of all the results added.
    fn add(&mut self, results: Vec<(u8, DepthAudit, Option<String>)>) {
        let (per_depth, first) = (&mut self.per_depth, &mut self.violation);
        for (depth, a, f) in results {
            let d = &mut per_depth[usize::from(depth)];
            d.tiles += a.tiles;
            d.samples += a.samples;
            d.skipped_filled += a.skipped_filled;
            d.worst_m = d.worst_m.max(a.worst_m);
            d.worst_steps = d.worst_steps.max(a.worst_steps);
            d.worst_colour = d.worst_colour.max(a.worst_colour);
            d.class_mismatches += a.class_mismatches;
            d.violations += a.violations;
            if first.is_none() {
                *first = f;
            }
        }
    }

    /// Like [`AccuracyAudit::passed`], for an audit of tiles not yet
    /// written: a failure leaves the pack as it was.
    pub(crate) fn passed_before_writing(self, out: &Path) -> Result<Vec<DepthAudit>, BakeError> {
        match self.violation {
            Some(message) => Err(BakeError::PatchAudit { message, pack: out.to_owned() }),
            None => Ok(self.per_depth.into_iter().filter(|a| a.tiles > 0).collect()),
        }
    }
}

/// Moves a pack that failed the accuracy audit aside (`.rejected`), so
/// nothing at the output path looks like a good pack, and says why.
pub(crate) fn reject(out: &Path, message: String) -> BakeError {
    let rejected = out.with_extension("rejected");
    match std::fs::rename(out, &rejected) {
        Ok(()) => BakeError::Audit { message, rejected },
        Err(cause) => BakeError::RejectFailed { message, pack: out.to_owned(), cause },
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
