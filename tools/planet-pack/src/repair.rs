//! `planet-pack repair PACK`: finish or clear away what an interrupted bake
//! or patch left beside a pack, and say what was done.
//!
//! The key decision: repair does only what is safe without the bake's
//! inputs. A complete patch journal is replayed (replay is idempotent and
//! writes exactly the bytes the patch would have); a torn or stale one is
//! discarded (the pack was never touched by it); an assembled `PACK.tmp` is
//! removed (a resumed bake re-assembles it from `PACK.partial`, a fresh one
//! rewrites it). `PACK.partial` is kept unless it staged the very pack now
//! at `PACK` (same fingerprint), because it is what `--resume` continues.
//! Repair cannot re-run an accuracy audit (that needs the source rasters),
//! and says so when it completes a patch whose audit had not finished.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use planet_terrain::pack::writer::partial_fingerprint;
use planet_terrain::pack::{Pack, Pending, finish_patch, journal_path, partial_path, replay_pending, tmp_path};

/// Repairs the pack at `pack` and prints one line per thing it did.
/// The writers' lock of `pack` for `command`, refused while another
/// writer holds it (`planet_terrain::pack::lock`).
pub(crate) fn writer_lock(pack: &Path, command: &str) -> Result<planet_terrain::pack::lock::WriterLock> {
    use planet_terrain::pack::lock::{Contention, WriterLock};
    Ok(WriterLock::acquire(pack, command, Contention::Refuse, |_| {})?)
}

/// Completes, or discards when it never was complete, a journal left
/// beside `pack` by a writer that is gone (the caller holds the writers'
/// lock), as `repair` does; what it did, if anything.
pub(crate) fn finish_left_journal(pack: &Path) -> Result<Option<String>> {
    if !journal_path(pack).exists() {
        return Ok(None);
    }
    Ok(match replay_pending(pack).context("replaying the pending journal")? {
        Pending::Replayed(_) => {
            finish_patch(pack).context("removing the replayed journal")?;
            Some("completed an interrupted write from its journal".to_owned())
        }
        Pending::Discarded { reason } | Pending::Stale { reason } => {
            Some(format!("discarded a journal that was never applied ({reason})"))
        }
        Pending::None => None,
    })
}

pub(crate) fn repair(pack: &Path) -> Result<()> {
    // Never under a running writer (#50): its journal and staging files are
    // in use, not left over.
    let _lock = writer_lock(pack, "planet-pack repair")?;
    let mut done = Vec::new();
    if !pack.exists() && !journal_path(pack).exists() {
        let partial = partial_path(pack);
        // Nothing at all: a mistyped path, which must not read as repaired.
        anyhow::ensure!(
            partial.exists(),
            "{}: nothing to repair: no pack, no patch journal and no unfinished bake ({}) there",
            pack.display(),
            partial.display()
        );
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}: no pack here (a bake that never finished)", pack.display())?;
        writeln!(
            out,
            "{}: kept {}: its staged tiles; planet-bake --resume with the same flags continues it",
            pack.display(),
            partial.display()
        )?;
        return Ok(());
    }
    match replay_pending(pack).context("replaying the pending patch journal")? {
        Pending::None => {}
        Pending::Discarded { reason } => {
            done.push(format!("discarded a patch journal that was never complete ({reason}); the pack was not touched"))
        }
        Pending::Stale { reason } => done.push(format!("discarded a stale patch journal ({reason})")),
        Pending::Replayed(journal) => {
            finish_patch(pack).context("removing the replayed patch journal")?;
            let s = journal.summary();
            done.push(format!(
                "completed an interrupted patch from its journal: {} tiles ({} in place, {} appended), index and header rewritten; its accuracy audit was not re-run (re-run the patch's planet-bake command to audit it)",
                s.tiles, s.rewritten_in_place, s.appended
            ));
        }
    }
    let tmp = tmp_path(pack);
    if tmp.exists() {
        std::fs::remove_file(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
        done.push(format!(
            "removed {}, an interrupted bake's assembled file that never passed its audit",
            tmp.display()
        ));
    }
    let opened = Pack::open(pack);
    let partial = partial_path(pack);
    if partial.exists() {
        let same = opened.as_ref().ok().map(|p| p.header().fingerprint) == partial_fingerprint(pack);
        if same {
            std::fs::remove_file(&partial).with_context(|| format!("removing {}", partial.display()))?;
            done.push(format!("removed {}: it staged the pack already in place", partial.display()));
        } else {
            done.push(format!(
                "kept {}: an interrupted bake's staged tiles; planet-bake --resume with the same flags continues it (or delete it)",
                partial.display()
            ));
        }
    }
    let mut out = std::io::stdout().lock();
    // A file that does not open as a pack is not "nothing to repair": its
    // error below says what is wrong with it.
    if done.is_empty() && opened.is_ok() {
        writeln!(out, "{}: nothing to repair (no patch journal, no leftover bake files)", pack.display())?;
    }
    for line in &done {
        writeln!(out, "{}: {line}", pack.display())?;
    }
    let pack_now = opened?;
    writeln!(out, "{}: opens: {} tiles", pack.display(), pack_now.tile_count() as usize)?;
    Ok(())
}
