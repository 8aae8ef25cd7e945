//! How a re-run finishes an interrupted patch.
//!
//! The key decision: a patch's redo journal (planet_terrain::pack::journal)
//! is written only after the patched tiles passed the composite audit
//! (`patch`), and stays beside the pack until the pack reads back as the
//! journal holds it, so "a journal is pending" means exactly "this audited
//! patch is not yet known to be in the pack", whichever window the process
//! died in. Re-running a patch first replays any complete pending journal.
//! If that journal is this very patch (its resulting fingerprint is the one
//! these inputs and this region chain from the pack's fingerprint before
//! it), the pack now holds what an uninterrupted run would have written,
//! byte for byte: the run reads the patched tiles back against the journal,
//! removes it and reports the completed patch without baking again (the
//! composite audit cannot run a second time: the ground it composed over is
//! gone, and it passed before anything was written). A journal of another
//! patch is replayed too (the pack cannot be made whole otherwise), checked
//! the same way, and the run then patches as asked.

use std::path::Path;

use planet_terrain::TileAddress;
use planet_terrain::pack::{IndexEntry, Pack, PatchJournal, Pending, finish_patch, journal_path, replay_pending};

use crate::error::BakeError;
use crate::fingerprint::{patch_fingerprint, patch_inputs_digest};
use crate::options::Region;
use crate::report::{
    AlreadyAppliedReport, BakeReport, CompletedPatchReport, LandmarkReport, PatchTarget, PatchedTiles, Report,
};
use crate::run::Run;
use crate::stages::audit::reject;

/// After a pack that failed its read-back was moved aside, its journal
/// patches a pack no longer there: remove it.
pub(crate) fn drop_journal_of_rejected(out: &Path) {
    if !out.exists() {
        let _ = std::fs::remove_file(journal_path(out));
    }
}

/// The pack's index entry of `tile` when the pack holds `bytes` as its
/// payload and they pass the entry's checksum; `None` when it does not:
/// the read-back both a patch and its recovery make of what they wrote.
pub(crate) fn reads_back(
    pack: &Pack,
    out: &Path,
    tile: TileAddress,
    bytes: &[u8],
) -> Result<Option<IndexEntry>, BakeError> {
    let Some(entry) = pack.entry(tile)? else { return Ok(None) };
    let got = pack.payload(&entry).map_err(|e| e.in_file(out))?;
    Ok((got.as_ref() == bytes && crc32fast::hash(&got) == entry.payload_checksum).then_some(entry))
}

/// Every payload the journal wrote must be in the pack, byte for byte and
/// passing its checksum, at the place the pack's index says; otherwise the
/// pack is moved aside.
fn read_back(out: &Path, journal: &PatchJournal) -> Result<(), BakeError> {
    let pack = Pack::open_unmapped(out)?;
    let path = journal_path(out);
    let io = |doing: &'static str| {
        let path = path.clone();
        move |e: std::io::Error| BakeError::Io { path, doing, cause: e.to_string() }
    };
    let file = std::fs::File::open(&path).map_err(io("opening the patch journal to read the patch back"))?;
    for written in &journal.payloads {
        let bytes = written.read_from(&file).map_err(io("reading a payload back from the patch journal"))?;
        let holds = reads_back(&pack, out, written.tile, &bytes)?.is_some_and(|e| e.payload_offset == written.offset);
        if !holds {
            drop(pack);
            let error = reject(out, format!("tile {} reads back other than its patch journal holds", written.tile));
            drop_journal_of_rejected(out);
            return Err(error);
        }
    }
    Ok(())
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
    read_back(&options.out, &journal)?;
    finish_patch(&options.out)?;
    let tiles = journal.tiles();
    let inputs = patch_inputs_digest(options)?;
    if patch_fingerprint(&journal.base_fingerprint(), &inputs, &region) != journal.fingerprint() {
        progress.stage(&format!(
            "completed an interrupted patch of other inputs or another region from its journal ({} tiles, audited before \
             they were journaled, read back byte for byte); now patching as asked",
            tiles.len()
        ));
        return Ok(None);
    }
    progress.stage(&format!(
        "completed the interrupted patch of these inputs and region from its journal ({} tiles, audited before they \
         were journaled, read back byte for byte); not baking them again",
        tiles.len()
    ));
    let (_, landmarks, _) = crate::patch::composite::open_sources(run)?;
    let summary = journal.summary();
    Ok(Some(BakeReport::new(Report::PatchCompleted(CompletedPatchReport {
        target: PatchTarget::of(options, region),
        tiles: PatchedTiles::new(&summary, &tiles),
        read_back_as_journaled: true,
        landmarks: LandmarkReport::from(&landmarks),
    }))))
}

/// The patch asked for is the pack's last one (the same inputs digest and
/// box): it is applied already, so the run says so and changes nothing. A
/// patch killed after its journal was removed but before it exited is then
/// not applied a second time by the documented recovery ("run the same
/// command again"), which re-blended its border tiles and chained a new
/// fingerprint with exit 0.
/// `inputs` is the patch's inputs digest (`patch_inputs_digest`).
pub(crate) fn patch_already_applied(
    run: &Run,
    region: Region,
    inputs: &[u8; 32],
) -> Result<Option<BakeReport>, BakeError> {
    let options = run.options;
    let Some(last) = Pack::open(&options.out)?.header().patches.last else { return Ok(None) };
    let asked = region;
    // The box is stored as f32 (about a metre).
    let stored = |a: f64, b: f64| a as f32 == b as f32;
    let same_box = stored(last.region.south, asked.south)
        && stored(last.region.west, asked.west)
        && stored(last.region.north, asked.north)
        && stored(last.region.east, asked.east);
    if !same_box || last.inputs[..] != inputs[..16] {
        return Ok(None);
    }
    run.progress.stage(
        "this patch (the same inputs and --region) is the pack's last one: it is applied already; nothing was changed",
    );
    let (_, landmarks, _) = crate::patch::composite::open_sources(run)?;
    Ok(Some(BakeReport::new(Report::PatchAlreadyApplied(AlreadyAppliedReport {
        target: PatchTarget::of(options, region),
        tiles_patched: 0,
        landmarks: LandmarkReport::from(&landmarks),
    }))))
}
