//! A writer's declared tiles, and where each staged one lies, kept on disk.
//!
//! The key decision: a bake of a planet declares tens of millions of tiles,
//! and anything held per tile in memory makes its peak grow with the pack.
//! So the declared keys, sorted, go to one unlinked scratch file beside the
//! pack and each tile's 32-byte slot (where its record lies in the journal,
//! and its index fields) to a second one, addressed by the tile's ordinal
//! in the sorted set. The process holds one key in 512 (the first of each
//! 4 KiB block, to find a key's block with one read) and a tally per depth:
//! 16 bytes per 512 tiles instead of 40 per tile. The slots file starts
//! sparse: all zeros reads "not staged", since no record can lie at offset 0
//! of a journal (its preamble does). What is read back goes through the
//! kernel's page cache, which gives it up under pressure; and the scratch
//! files are unlinked as soon as they are open, so a killed writer leaves
//! nothing of them behind (a resume rebuilds them from the journal).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::format::IndexEntry;
use planet_geo::address::{MAX_DEPTH, TileAddress, TileKey};

/// Keys per block of the keys file: 4 KiB, one page.
const BLOCK_KEYS: usize = 512;
/// Bytes per slot in the slots file.
const SLOT_BYTES: usize = 32;
/// Tiles read per chunk when the set is walked in order.
const WALK_CHUNK: usize = 4096;

/// Where a staged tile's record lies in the partial file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Staged {
    pub(crate) payload_at: u64,
    pub(crate) entry: IndexEntry,
}

/// An unlinked scratch file in `dir`: it lives as long as the handle.
fn scratch_file(dir: &Path, stem: &str, what: &str) -> io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".{stem}.{what}.{}.{n}.scratch", std::process::id()));
    let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// What is known of the sorted keys as they are written, in one pass.
#[derive(Debug)]
struct KeysSummary {
    len: u64,
    block_first: Vec<u64>,
    per_depth: [u64; MAX_DEPTH as usize + 1],
    crc: crc32fast::Hasher,
}

impl KeysSummary {
    fn new() -> KeysSummary {
        KeysSummary { len: 0, block_first: Vec::new(), per_depth: [0; MAX_DEPTH as usize + 1], crc: Default::default() }
    }

    fn push(&mut self, key: TileKey, out: &mut impl Write) -> io::Result<()> {
        if self.len.is_multiple_of(BLOCK_KEYS as u64) {
            self.block_first.push(key.raw());
        }
        self.len += 1;
        self.per_depth[usize::from(key.depth())] += 1;
        self.crc.update(&key.raw().to_le_bytes());
        out.write_all(&key.raw().to_le_bytes())
    }
}

/// Every declared tile of a writer, staged or not, on disk.
#[derive(Debug)]
pub(crate) struct StagedSet {
    keys: File,
    slots: File,
    len: u64,
    /// The first key of each block of the keys file.
    block_first: Vec<u64>,
    per_depth: [u64; MAX_DEPTH as usize + 1],
    crc: u32,
    staged: u64,
    /// The block read last: lookups come in runs (a parent's four
    /// children, a window of one level), so most find their block here.
    cached: Option<(usize, Vec<u64>)>,
}

impl StagedSet {
    /// The set of `tiles` (duplicates count once), none staged, its files
    /// beside the pack in `dir`. Tiles declared in ascending key order (as
    /// a bake declares them) are streamed to disk; any other order is
    /// sorted in memory first.
    pub(crate) fn declare(dir: &Path, stem: &str, tiles: impl IntoIterator<Item = TileKey>) -> io::Result<StagedSet> {
        let keys = scratch_file(dir, stem, "keys")?;
        let mut summary = KeysSummary::new();
        let mut ascending = true;
        let mut last: Option<TileKey> = None;
        {
            let mut out = BufWriter::with_capacity(1 << 16, &keys);
            for key in tiles {
                match last {
                    Some(l) if key == l => continue,
                    Some(l) if key < l => ascending = false,
                    _ => {}
                }
                last = Some(key);
                summary.push(key, &mut out)?;
            }
            out.flush()?;
        }
        if !ascending {
            let mut all = vec![0u8; summary.len as usize * 8];
            keys.read_exact_at(&mut all, 0)?;
            let mut sorted: Vec<u64> =
                all.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
            drop(all);
            sorted.sort_unstable();
            sorted.dedup();
            keys.set_len(0)?;
            // Writes through `&File` go to its cursor, still at the old end.
            (&keys).seek(SeekFrom::Start(0))?;
            summary = KeysSummary::new();
            let mut out = BufWriter::with_capacity(1 << 16, &keys);
            for raw in sorted {
                summary.push(TileKey::from_raw(raw).expect("declared keys are valid"), &mut out)?;
            }
            out.flush()?;
        }
        let slots = scratch_file(dir, stem, "slots")?;
        slots.set_len(summary.len * SLOT_BYTES as u64)?;
        Ok(StagedSet {
            keys,
            slots,
            len: summary.len,
            block_first: summary.block_first,
            per_depth: summary.per_depth,
            crc: summary.crc.finalize(),
            staged: 0,
            cached: None,
        })
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Declared tiles not staged yet.
    pub(crate) fn pending_count(&self) -> u64 {
        self.len - self.staged
    }

    /// The deepest declared depth (0 for an empty set).
    pub(crate) fn max_depth(&self) -> u8 {
        self.per_depth.iter().rposition(|&n| n > 0).unwrap_or(0) as u8
    }

    /// CRC-32 of the declared keys, ascending, as little-endian u64s.
    pub(crate) fn keys_crc(&self) -> u32 {
        self.crc
    }

    /// The ordinals of the declared tiles at `depth` (keys order by depth
    /// first).
    pub(crate) fn depth_range(&self, depth: u8) -> std::ops::Range<u64> {
        let d = usize::from(depth.min(MAX_DEPTH));
        let start: u64 = self.per_depth[..d].iter().sum();
        start..start + self.per_depth[d]
    }

    /// `key`'s ordinal in the sorted set, if declared.
    fn ordinal(&mut self, key: TileKey) -> io::Result<Option<u64>> {
        let block = self.block_first.partition_point(|&first| first <= key.raw());
        let Some(block) = block.checked_sub(1) else { return Ok(None) };
        if self.cached.as_ref().is_none_or(|(b, _)| *b != block) {
            let start = (block * BLOCK_KEYS) as u64;
            let n = (self.len - start).min(BLOCK_KEYS as u64) as usize;
            let mut keys = Vec::with_capacity(n);
            read_keys(&self.keys, start, n, &mut keys)?;
            self.cached = Some((block, keys));
        }
        let (_, keys) = self.cached.as_ref().expect("just filled");
        Ok(keys.binary_search(&key.raw()).ok().map(|k| (block * BLOCK_KEYS + k) as u64))
    }

    /// `None` if `key` is not declared; else whether (and where) it is staged.
    pub(crate) fn get(&mut self, key: TileKey) -> io::Result<Option<Option<Staged>>> {
        let Some(ordinal) = self.ordinal(key)? else { return Ok(None) };
        let mut slot = [0u8; SLOT_BYTES];
        self.slots.read_exact_at(&mut slot, ordinal * SLOT_BYTES as u64)?;
        Ok(Some(decode_slot(key, &slot)))
    }

    /// Records a declared, not yet staged tile as staged; `false` if it is
    /// not declared.
    pub(crate) fn stage(&mut self, staged: Staged) -> io::Result<bool> {
        let Some(ordinal) = self.ordinal(staged.entry.key)? else { return Ok(false) };
        self.slots.write_all_at(&encode_slot(&staged), ordinal * SLOT_BYTES as u64)?;
        self.staged += 1;
        Ok(true)
    }

    /// The declared tiles with ordinals in `range`, ascending, with their
    /// staging, read a chunk at a time.
    pub(crate) fn walk(&self, range: std::ops::Range<u64>) -> StagedWalk<'_> {
        StagedWalk {
            set: self,
            next: range.start,
            end: range.end.min(self.len),
            keys: Vec::new(),
            slots: Vec::new(),
            at: 0,
        }
    }

    /// Every declared tile, ascending, with its staging.
    pub(crate) fn iter(&self) -> StagedWalk<'_> {
        self.walk(0..self.len)
    }

    /// The unstaged tiles among the ordinals in `range`, at most `max`, and
    /// how many ordinals were examined to find them.
    pub(crate) fn pending_in(&self, range: std::ops::Range<u64>, max: usize) -> io::Result<(Vec<TileAddress>, u64)> {
        let mut tiles = Vec::new();
        let mut examined = 0;
        for item in self.walk(range) {
            if tiles.len() == max {
                break;
            }
            let (key, staged) = item?;
            examined += 1;
            if staged.is_none() {
                tiles.push(key.address());
            }
        }
        Ok((tiles, examined))
    }
}

/// Reads `n` keys from ordinal `start` of the keys file into `out`.
fn read_keys(file: &File, start: u64, n: usize, out: &mut Vec<u64>) -> io::Result<()> {
    let mut bytes = vec![0u8; n * 8];
    file.read_exact_at(&mut bytes, start * 8)?;
    out.clear();
    out.extend(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))));
    Ok(())
}

fn encode_slot(staged: &Staged) -> [u8; SLOT_BYTES] {
    let e = &staged.entry;
    let mut slot = [0u8; SLOT_BYTES];
    slot[0..8].copy_from_slice(&staged.payload_at.to_le_bytes());
    slot[8..12].copy_from_slice(&e.payload_length.to_le_bytes());
    slot[12..16].copy_from_slice(&e.payload_checksum.to_le_bytes());
    slot[16..20].copy_from_slice(&e.min_elevation.to_le_bytes());
    slot[20..24].copy_from_slice(&e.max_elevation.to_le_bytes());
    slot[24..28].copy_from_slice(&e.geometric_error.to_le_bytes());
    slot[28] = crate::format::entry_flags(e.measured, e.voids);
    slot
}

fn decode_slot(key: TileKey, slot: &[u8]) -> Option<Staged> {
    let u32_at = |k: usize| u32::from_le_bytes(slot[k..k + 4].try_into().expect("4 bytes"));
    let payload_at = u64::from_le_bytes(slot[0..8].try_into().expect("8 bytes"));
    (payload_at != 0).then(|| Staged {
        payload_at,
        entry: IndexEntry {
            key,
            payload_offset: 0,
            payload_length: u32_at(8),
            payload_checksum: u32_at(12),
            min_elevation: f32::from_bits(u32_at(16)),
            max_elevation: f32::from_bits(u32_at(20)),
            geometric_error: f32::from_bits(u32_at(24)),
            measured: slot[28] & crate::format::FLAG_MEASURED != 0,
            voids: slot[28] & crate::format::FLAG_VOIDS != 0,
        },
    })
}

/// A walk over part of a [`StagedSet`] in key order.
pub(crate) struct StagedWalk<'a> {
    set: &'a StagedSet,
    next: u64,
    end: u64,
    keys: Vec<u64>,
    slots: Vec<u8>,
    at: usize,
}

impl Iterator for StagedWalk<'_> {
    type Item = io::Result<(TileKey, Option<Staged>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at == self.keys.len() {
            if self.next >= self.end {
                return None;
            }
            let n = (self.end - self.next).min(WALK_CHUNK as u64) as usize;
            self.slots.resize(n * SLOT_BYTES, 0);
            let read = read_keys(&self.set.keys, self.next, n, &mut self.keys)
                .and_then(|()| self.set.slots.read_exact_at(&mut self.slots, self.next * SLOT_BYTES as u64));
            if let Err(e) = read {
                self.next = self.end;
                self.keys.clear();
                self.at = 0;
                return Some(Err(e));
            }
            self.next += n as u64;
            self.at = 0;
        }
        let k = self.at;
        self.at += 1;
        let key = TileKey::from_raw(self.keys[k]).expect("declared keys are valid");
        Some(Ok((key, decode_slot(key, &self.slots[k * SLOT_BYTES..(k + 1) * SLOT_BYTES]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: TileKey, length: u32) -> IndexEntry {
        IndexEntry {
            key,
            payload_offset: 0,
            payload_length: length,
            payload_checksum: length ^ 0xabcd,
            min_elevation: -1.5,
            max_elevation: 2.5,
            geometric_error: 0.25,
            measured: length.is_multiple_of(2),
            voids: length.is_multiple_of(3),
        }
    }

    /// Every tile to `depth` on all six faces, in the order of `order`.
    fn keys_to(depth: u8) -> Vec<TileKey> {
        let mut keys = Vec::new();
        for d in 0..=depth {
            for f in 0..6 {
                for x in 0..1u32 << d {
                    for y in 0..1u32 << d {
                        keys.push(TileAddress::new(f, d, x, y).unwrap().key());
                    }
                }
            }
        }
        keys
    }

    #[test]
    fn a_declared_set_finds_stages_and_walks_its_tiles_in_key_order_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        // Depth 5: 8,190 tiles, 16 blocks; declared unsorted with a
        // duplicate, so the in-memory sort path runs.
        let mut declared = keys_to(5);
        declared.push(declared[100]);
        let mut set = StagedSet::declare(dir.path(), "t", declared.iter().copied()).unwrap();
        let mut sorted = declared.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(set.len(), sorted.len() as u64);
        assert_eq!(set.max_depth(), 5);
        assert_eq!(set.depth_range(5), (8190 - 6144)..8190);
        // Nothing of it is visible in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // Stage every third tile, at a position derived from its ordinal.
        for (n, &key) in sorted.iter().enumerate().step_by(3) {
            assert!(set.stage(Staged { payload_at: 100 + n as u64, entry: entry(key, n as u32) }).unwrap());
        }
        assert_eq!(set.pending_count(), sorted.len() as u64 - sorted.len().div_ceil(3) as u64);
        for (n, &key) in sorted.iter().enumerate() {
            let got = set.get(key).unwrap().expect("declared");
            match got {
                Some(s) => {
                    assert_eq!(n % 3, 0);
                    assert_eq!(s.payload_at, 100 + n as u64);
                    assert_eq!(s.entry, entry(key, n as u32));
                }
                None => assert_ne!(n % 3, 0),
            }
        }
        let walked: Vec<(TileKey, bool)> =
            set.iter().map(|r| r.map(|(k, s)| (k, s.is_some()))).collect::<Result<_, _>>().unwrap();
        let want: Vec<(TileKey, bool)> = sorted.iter().enumerate().map(|(n, &k)| (k, n % 3 == 0)).collect();
        assert_eq!(walked, want);
        // An undeclared key (depth 6) is neither found nor staged.
        let outside = TileAddress::new(0, 6, 0, 0).unwrap().key();
        assert!(set.get(outside).unwrap().is_none());
        assert!(!set.stage(Staged { payload_at: 7, entry: entry(outside, 1) }).unwrap());
    }

    #[test]
    fn ascending_declarations_stream_and_match_the_sorted_path_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let mut keys = keys_to(4);
        let shuffled = StagedSet::declare(dir.path(), "a", keys.iter().rev().copied()).unwrap();
        keys.sort_unstable();
        let streamed = StagedSet::declare(dir.path(), "b", keys.iter().copied()).unwrap();
        assert_eq!((shuffled.len(), shuffled.keys_crc()), (streamed.len(), streamed.keys_crc()));
        let mut crc = crc32fast::Hasher::new();
        keys.iter().for_each(|k| crc.update(&k.raw().to_le_bytes()));
        assert_eq!(streamed.keys_crc(), crc.finalize());
        assert_eq!(streamed.block_first, shuffled.block_first);
    }
}
