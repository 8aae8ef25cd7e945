//! Rewriting a set of existing tiles of a finished pack in place.
//!
//! The key decision: a patched tile goes back into its own slot when its new
//! payload fits (no longer than the payload it replaces), and is appended
//! after the last payload when it does not; the index pages that hold the
//! patched tiles, the directory pages above them, the root and the header
//! are rewritten last. Tiles outside the patch keep their bytes
//! and their offsets. Every byte the patch will write is first made durable
//! in a redo journal beside the pack (`journal`), so a patch killed at any
//! moment is completed by replaying it (docs/planetpack.md, "Crash
//! windows"): the pack is never left in a state only a re-bake can mend.

use std::collections::BTreeMap;
use std::path::Path;

use crate::codec::EncodedTile;
use crate::crash::abort_point;
use crate::error::PackError;
use crate::format::{Coverage, IndexEntry, LastPatch, PackHeader, PatchHistory, encode_entry, encode_header};
use crate::index::{DIRECTORY_REFS, PageRef, encode_refs};
use crate::journal::{IndexWrite, JournalPayload, PatchJournal, finish_patch, journal_path};
use crate::reader::Pack;

/// What a patch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchSummary {
    pub tiles: u64,
    pub rewritten_in_place: u64,
    pub appended: u64,
    pub file_length: u64,
}

/// What a patch writes into the header besides its tiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchStamp {
    /// The pack's fingerprint after the patch (chained from the one before).
    pub fingerprint: [u8; 32],
    /// The patch's box.
    pub region: Coverage,
    /// The first 16 bytes of the digest of the patch's inputs.
    pub inputs: [u8; 16],
    /// The detail law a version 2 pack (which records none) is to record:
    /// the one measured from it before the patch, so its detail is what it
    /// was. A version 4 pack keeps its own; this is then unused.
    pub detail: Option<crate::DetailLaw>,
}

impl PatchStamp {
    /// The patched pack's header: the new fingerprint, one more patch and
    /// this one as the last, and the law a version 2 pack is to record.
    fn apply_to(&self, header: &mut PackHeader) {
        header.fingerprint = self.fingerprint;
        header.detail = header.detail.or(self.detail);
        // The box as the header stores it (f32), so the header read back is
        // the header written.
        let r = |v: f64| f64::from(v as f32);
        let b = self.region;
        header.patches = PatchHistory {
            count: header.patches.count.saturating_add(1),
            last: Some(LastPatch {
                region: Coverage { south: r(b.south), west: r(b.west), north: r(b.north), east: r(b.east) },
                inputs: self.inputs,
            }),
        };
    }
}

/// The re-encoded tiles a patch writes: each tile's index figures, and its
/// payload, asked for only when the journal is written, so a caller may
/// keep the payloads on disk and a patch of any size hold one at a time.
pub trait PatchTiles {
    /// How many tiles the patch writes.
    fn count(&self) -> usize;
    /// Tile `i`'s index entry (its `payload_offset` is the patch's to choose).
    fn entry(&self, i: usize) -> IndexEntry;
    /// Tile `i`'s payload, `entry(i).payload_length` bytes.
    fn payload(&self, i: usize) -> std::io::Result<Vec<u8>>;
}

/// Encoded tiles held in memory: a slice, an array or a vector.
impl<T: AsRef<[EncodedTile]> + ?Sized> PatchTiles for T {
    fn count(&self) -> usize {
        self.as_ref().len()
    }

    fn entry(&self, i: usize) -> IndexEntry {
        self.as_ref()[i].entry_at(0)
    }

    fn payload(&self, i: usize) -> std::io::Result<Vec<u8>> {
        Ok(self.as_ref()[i].payload.clone())
    }
}

/// Rewrites `tiles` (already encoded with the pack's codec and level) in the
/// pack at `path`, through a redo journal that is removed once the pack is
/// synced. Every tile must already be in the pack. The stamp's fingerprint
/// replaces the header's, and the header counts the patch and records its
/// box and inputs: a patched pack no longer holds what its old fingerprint
/// names, so nothing may mistake it for the unpatched bake.
pub fn patch_tiles(
    path: &Path,
    tiles: &(impl PatchTiles + ?Sized),
    stamp: PatchStamp,
) -> Result<PatchSummary, PackError> {
    let summary = begin_patch(path, tiles, stamp)?;
    finish_patch(path)?;
    Ok(summary)
}

/// Journals and applies a patch like [`patch_tiles`] but leaves the journal
/// in place, so the caller can audit the patched pack before calling
/// [`finish_patch`]; a crash before then replays the patch
/// ([`replay_pending`](crate::journal::replay_pending)). Refuses
/// while another patch's journal is pending.
pub fn begin_patch(
    path: &Path,
    tiles: &(impl PatchTiles + ?Sized),
    stamp: PatchStamp,
) -> Result<PatchSummary, PackError> {
    (|| {
        let journal = journal_path(path);
        if journal.exists() {
            return Err(PackError::PatchPending { journal });
        }
        if let Some(law) = stamp.detail {
            law.check_to_record()?;
        }
        let (journal, sources) = plan(path, tiles, stamp)?;
        abort_point("patch-compute");
        // A payload whose bytes are not the ones its entry was made for
        // (a scratch store that went bad) never reaches the journal.
        journal.write(path, |i| {
            let (entry, bytes) = (tiles.entry(sources[i]), tiles.payload(sources[i])?);
            match crc32fast::hash(&bytes) == entry.payload_checksum {
                true => Ok(bytes),
                false => Err(std::io::Error::other(format!(
                    "tile {}'s payload from the patch's store fails its checksum",
                    entry.key.address()
                ))),
            }
        })?;
        journal.apply(path)?;
        Ok(journal.summary())
    })()
    .map_err(|e| e.in_file(path))
}

/// Where each payload goes, and the index pages and header that describe
/// them: only the leaf pages holding patched tiles, the directory pages
/// referring to those, and the root change.
fn plan(
    path: &Path,
    tiles: &(impl PatchTiles + ?Sized),
    stamp: PatchStamp,
) -> Result<(PatchJournal, Vec<usize>), PackError> {
    let pack = Pack::open(path)?;
    let mut header = pack.header().clone();
    let old_header = encode_header(&header);
    let layout = *pack.layout();

    // Key order, so appended payloads land where they would whatever order
    // the tiles were baked in.
    let mut ordered: Vec<(usize, IndexEntry)> = (0..tiles.count()).map(|i| (i, tiles.entry(i))).collect();
    ordered.sort_by_key(|(_, e)| e.key);
    let mut leaves: BTreeMap<u64, Vec<IndexEntry>> = BTreeMap::new();
    let mut payloads = Vec::with_capacity(ordered.len());
    let mut sources = Vec::with_capacity(ordered.len());
    let mut end = header.file_length;
    let mut seen = std::collections::HashSet::new();
    for (source, entry) in ordered {
        let (key, tile) = (entry.key, entry.key.address());
        let m = pack.leaf_for(key)?.ok_or(PackError::TileNotFound { tile })?;
        let entries = match leaves.entry(m) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(pack.leaf(m)?.to_vec()),
        };
        let i = entries.binary_search_by_key(&key, |e| e.key).map_err(|_| PackError::TileNotFound { tile })?;
        if !seen.insert(key) {
            return Err(PackError::BadContent { tile, reason: "patched twice in one patch".into() });
        }
        // A payload goes back into its own slot when it fits there;
        // otherwise it is appended after the last payload.
        let length = u64::from(entry.payload_length);
        let at = if length <= u64::from(entries[i].payload_length) {
            entries[i].payload_offset
        } else {
            let at = end;
            end += length;
            at
        };
        payloads.push(JournalPayload { tile, offset: at, length: entry.payload_length, at: 0 });
        sources.push(source);
        entries[i] = IndexEntry { payload_offset: at, ..entry };
    }

    // The changed leaves, then the directory pages that refer to them, then
    // the root, each with its new checksum.
    let mut index_writes = Vec::new();
    let mut directories: BTreeMap<u64, Vec<PageRef>> = BTreeMap::new();
    for (m, entries) in &leaves {
        let bytes: Vec<u8> = entries.iter().flat_map(encode_entry).collect();
        let k = m / DIRECTORY_REFS;
        let refs = match directories.entry(k) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(pack.directory(k)?.to_vec()),
        };
        refs[(m % DIRECTORY_REFS) as usize].checksum = crc32fast::hash(&bytes);
        index_writes.push(IndexWrite { offset: layout.leaf_offset(*m), bytes });
    }
    let mut root = pack.root().to_vec();
    for (k, refs) in &directories {
        let bytes = encode_refs(refs);
        root[*k as usize].checksum = crc32fast::hash(&bytes);
        index_writes.push(IndexWrite { offset: layout.directory_offset(*k), bytes });
    }
    let root = encode_refs(&root);
    header.index_checksum = crc32fast::hash(&root);
    index_writes.push(IndexWrite { offset: layout.root_offset(), bytes: root });
    drop(pack);

    header.file_length = end;
    stamp.apply_to(&mut header);
    let mut journal = PatchJournal { old_header, new_header: encode_header(&header), index_writes, payloads };
    journal.place_payloads();
    Ok((journal, sources))
}
