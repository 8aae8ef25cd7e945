//! How a patch finishes and how a re-run finishes an interrupted one.
//!
//! The key decision: a patch's redo journal (planet_terrain::pack::journal)
//! stays beside the pack until the accuracy audit of the patched tiles has
//! passed, so "a journal is pending" means exactly "this patch is not
//! finished", whichever window the process died in. Re-running a patch
//! first replays any complete pending journal. If that journal is this very
//! patch (its resulting fingerprint is the one these inputs and this region
//! chain from the pack's fingerprint before it), the pack now holds what an
//! uninterrupted run would have written, byte for byte: the run audits the
//! journal's tiles, removes the journal and reports the completed patch
//! without baking again. A journal of another patch is replayed too (the
//! pack cannot be made whole otherwise) and the run says its audit could
//! not be redone, then patches as asked.

use planet_terrain::TileAddress;
use planet_terrain::pack::{Pending, finish_patch, journal_path, replay_pending};
use rayon::prelude::*;

use crate::audit::{DepthAudit, accuracy_audit};
use crate::bake::{Prepared, Run};
use crate::error::BakeError;
use crate::fingerprint::patch_fingerprint;
use crate::options::Region;
use crate::report::{AccuracyReport, BakeReport, LandmarkReport, PatchReport, RegionReport, Report, Timings};
use crate::sampling::Inputs;

/// Audits the tiles a patch just wrote (its journal still pending), then
/// removes the journal. A failed audit moves the pack aside, and with it
/// goes the journal: it patches a pack no longer there.
pub(crate) fn audit_patch(run: &Run, inputs: &Inputs, tiles: &[TileAddress]) -> Result<Vec<DepthAudit>, BakeError> {
    let out = &run.options.out;
    run.progress.stage("accuracy audit of the patched tiles");
    let passed = accuracy_audit(inputs, out, tiles).and_then(|audit| audit.passed(out));
    if passed.is_err() && !out.exists() {
        let _ = std::fs::remove_file(journal_path(out));
    }
    let per_depth = passed?;
    finish_patch(out)?;
    Ok(per_depth)
}

/// Replays an interrupted patch of `run.options.out`, if one is pending.
/// Returns the report of the completed patch when it was this same patch;
/// `None` when the caller should patch as usual.
pub(crate) fn complete_interrupted_patch(run: &Run, region: Region) -> Result<Option<BakeReport>, BakeError> {
    let (options, progress) = (run.options, run.progress);
    let journal = match replay_pending(&options.out)? {
        Pending::None => return Ok(None),
        Pending::Discarded { reason } => {
            progress.stage(&format!(
                "discarded the journal of a patch that died before touching the pack ({reason}); patching afresh"
            ));
            return Ok(None);
        }
        Pending::Stale { reason } => {
            progress.stage(&format!("discarded a stale patch journal ({reason})"));
            return Ok(None);
        }
        Pending::Replayed(journal) => journal,
    };
    let tiles = journal.tiles();
    if patch_fingerprint(&journal.base_fingerprint(), options, &region)? != journal.fingerprint() {
        finish_patch(&options.out)?;
        progress.stage(&format!(
            "replayed an interrupted patch of other inputs or another region from its journal ({} tiles); its accuracy audit could not be redone here; now patching as asked",
            tiles.len()
        ));
        return Ok(None);
    }
    progress.stage(&format!(
        "completed the interrupted patch of these inputs and region from its journal ({} tiles); not baking them again",
        tiles.len()
    ));
    let Prepared { inputs, landmarks, .. } = run.prepare()?;
    let body = &options.body;
    let filled: usize = tiles
        .par_iter()
        .map(|&t| inputs.sample(body, t).map(|s| s.filled.iter().filter(|&&f| f).count()))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .sum();
    let audit_start = std::time::Instant::now();
    let per_depth = audit_patch(run, &inputs, &tiles)?;
    let summary = journal.summary();
    Ok(Some(BakeReport::new(&Report::Patch(PatchReport {
        out: options.out.display().to_string(),
        region: RegionReport { south: region.south, west: region.west, north: region.north, east: region.east },
        body: body.name().to_owned(),
        tiles_patched: summary.tiles,
        patched: tiles.iter().map(|t| t.to_string()).collect(),
        rewritten_in_place: summary.rewritten_in_place,
        appended: summary.appended,
        samples_filled: filled,
        landmarks: LandmarkReport::from(&landmarks),
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        timings_s: Timings {
            bake: 0.0,
            audit: Some(audit_start.elapsed().as_secs_f64()),
            total: run.started.elapsed().as_secs_f64(),
        },
    }))))
}
