//! `Assembled`: a finished pack synced beside its destination, checked by
//! its caller, then committed: renamed over `OUT`, its journal removed.
//!
//! The key decision: the journal stays open and locked from assembly to
//! commit, so no second writer starts over `OUT.tmp` while the caller
//! checks it, and nothing unchecked ever appears at `OUT`; the rename is
//! the one moment the pack changes, and the journal goes only after it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::crash::abort_point;
use crate::error::PackError;
use crate::writer::{lock_journal, partial_path, tmp_path};

/// What a finished pack holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    pub tiles: u64,
    pub file_length: u64,
    pub payload_bytes: u64,
}

/// A finished pack assembled and synced beside its destination, not yet in
/// place: the caller checks it at [`Assembled::path`], then commits it.
#[derive(Debug)]
#[must_use = "an assembled pack is only in place once committed"]
pub struct Assembled {
    pub(super) out: PathBuf,
    pub(super) tmp: PathBuf,
    pub(super) partial_path: PathBuf,
    pub(super) summary: WriteSummary,
    /// The journal, still open and locked until the pack is committed, so
    /// no second writer starts over `OUT.tmp` while this one is checked.
    pub(super) _journal: File,
}

impl Assembled {
    /// A pack laid out and copied by separate tasks (`pack::ranged`), taken
    /// up by its commit: the journal locked exclusively first, so no copy
    /// task still writes and no layout starts over it, then `OUT.tmp`'s
    /// figures read from its header.
    pub(crate) fn take_up(out: &Path) -> Result<Assembled, PackError> {
        let partial_path = partial_path(out);
        let journal = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&partial_path)
            .map_err(PackError::io("opening the layout's journal"))
            .map_err(|e| e.in_file(&partial_path))?;
        lock_journal(&journal, &partial_path, false)?;
        let tmp = tmp_path(out);
        let header = crate::reader::Pack::open_unmapped(&tmp)?.header().clone();
        let summary = WriteSummary {
            tiles: header.tile_count,
            file_length: header.file_length,
            payload_bytes: header.file_length - header.payload_offset,
        };
        Ok(Assembled { out: out.to_owned(), tmp, partial_path, summary, _journal: journal })
    }

    /// The assembled file, complete and synced, not yet at `OUT`.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    pub fn summary(&self) -> WriteSummary {
        self.summary
    }

    /// Records the detail law the caller measured from the assembled tiles
    /// (the law changes no tile) in the header, before the pack is
    /// committed: a bake always records one ([`PackWriter::finish`](crate::PackWriter::finish), which
    /// records none, writes version 2 for tests and tools that write packs
    /// without a bake).
    pub fn record_detail_law(&self, law: crate::DetailLaw) -> Result<(), PackError> {
        crate::upgrade::record_detail_law_in_new_file(&self.tmp, law)
    }

    /// Renames the assembled file over `OUT`, then removes the partial
    /// file. A patch journal left beside an older pack at `OUT` is removed
    /// first: it describes bytes this pack does not have.
    pub fn commit(self) -> Result<WriteSummary, PackError> {
        self.commit_then(|| Ok::<(), PackError>(()))
    }

    /// [`Assembled::commit`], running `then` after the rename and before
    /// the journal goes, while its lock is still held: a merge in stages
    /// removes its records there, so no layout can start before they are
    /// gone.
    pub fn commit_then<E: From<PackError>>(self, then: impl FnOnce() -> Result<(), E>) -> Result<WriteSummary, E> {
        let summary = self.rename_into_place().map_err(|e| e.in_file(&self.out))?;
        then()?;
        abort_point("bake-cleanup");
        std::fs::remove_file(&self.partial_path)
            .map_err(PackError::io("removing the partial file"))
            .map_err(|e| e.in_file(&self.out))?;
        Ok(summary)
    }

    /// Renames the assembled file over `OUT` (and syncs the directory);
    /// the journal and its lock stay while `self` lives.
    fn rename_into_place(&self) -> Result<WriteSummary, PackError> {
        let journal = crate::journal::journal_path(&self.out);
        if journal.exists() {
            std::fs::remove_file(&journal).map_err(PackError::io("removing an older pack's patch journal"))?;
        }
        std::fs::rename(&self.tmp, &self.out).map_err(PackError::io("renaming the finished pack into place"))?;
        if let Some(dir) = self.out.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(self.summary)
    }
}
