//! Rewriting a set of existing tiles of a finished pack in place.
//!
//! The key decision: a patched tile goes back into its own slot when its new
//! payload fits (the slot is the span up to the next payload), and is
//! appended after the last payload when it does not; the index entries and
//! the header are rewritten last. Tiles outside the patch keep their bytes
//! and their offsets. What a reader sees if the patching process dies (see
//! docs/planetpack.md, "Patching in place"):
//!
//! 1. while payloads are written: the index still describes the old tiles. A
//!    tile rewritten in its own slot no longer matches its old checksum and
//!    fails to read with `PayloadChecksum` (torn, never silently read);
//!    appended payloads lie past `file_length` and are ignored.
//! 2. while the index and header are written: the index no longer matches
//!    the header's index checksum and the pack refuses to open
//!    (`IndexChecksum`).
//!
//! In both cases running the same patch again completes it.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::pack::codec::EncodedTile;
use crate::pack::error::PackError;
use crate::pack::format::{ENTRY_LENGTH, IndexEntry, encode_entry, encode_header};
use crate::pack::reader::Pack;

/// What a patch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchSummary {
    pub tiles: u64,
    pub rewritten_in_place: u64,
    pub appended: u64,
    pub file_length: u64,
}

/// Rewrites `tiles` (already encoded with the pack's codec and level) in the
/// pack at `path`. Every tile must already be in the pack. `fingerprint`
/// replaces the header's: a patched pack no longer holds what its old
/// fingerprint names, so nothing may mistake it for the unpatched bake.
pub fn patch_tiles(path: &Path, tiles: &[EncodedTile], fingerprint: [u8; 32]) -> Result<PatchSummary, PackError> {
    patch_inner(path, tiles, fingerprint).map_err(|e| e.in_file(path))
}

fn patch_inner(path: &Path, tiles: &[EncodedTile], fingerprint: [u8; 32]) -> Result<PatchSummary, PackError> {
    let pack = Pack::open(path)?;
    let mut header = pack.header().clone();
    let mut entries: Vec<IndexEntry> = pack.entries().to_vec();
    drop(pack);

    // Slot capacity: from a payload to the next one in file order.
    let mut by_offset: Vec<usize> = (0..entries.len()).collect();
    by_offset.sort_by_key(|&i| entries[i].payload_offset);
    let mut capacity = vec![0u64; entries.len()];
    for (k, &i) in by_offset.iter().enumerate() {
        let next = by_offset.get(k + 1).map_or(header.file_length, |&j| entries[j].payload_offset);
        capacity[i] = next - entries[i].payload_offset;
    }

    let file =
        OpenOptions::new().read(true).write(true).open(path).map_err(PackError::io("opening the pack to patch"))?;
    let mut summary = PatchSummary::default();
    let mut end = header.file_length;
    let mut seen = std::collections::HashSet::new();
    for tile in tiles {
        let i = entries
            .binary_search_by_key(&tile.tile.key(), |e| e.key)
            .map_err(|_| PackError::TileNotFound { tile: tile.tile })?;
        if !seen.insert(i) {
            return Err(PackError::BadContent { tile: tile.tile, reason: "patched twice in one patch".into() });
        }
        let length = tile.payload.len() as u64;
        let at = if length <= capacity[i] {
            summary.rewritten_in_place += 1;
            entries[i].payload_offset
        } else {
            summary.appended += 1;
            let at = end;
            end += length;
            at
        };
        file.write_all_at(&tile.payload, at).map_err(PackError::io("writing a patched payload"))?;
        entries[i] = tile.entry_at(at);
        summary.tiles += 1;
    }
    file.sync_data().map_err(PackError::io("syncing patched payloads"))?;

    let mut index = Vec::with_capacity(entries.len() * ENTRY_LENGTH);
    for e in &entries {
        index.extend_from_slice(&encode_entry(e));
    }
    header.file_length = end;
    header.fingerprint = fingerprint;
    header.index_checksum = crc32fast::hash(&index);
    file.write_all_at(&index, header.index_offset).map_err(PackError::io("rewriting the index"))?;
    file.write_all_at(&encode_header(&header), 0).map_err(PackError::io("rewriting the header"))?;
    file.sync_all().map_err(PackError::io("syncing the patched pack"))?;
    summary.file_length = end;
    Ok(summary)
}
