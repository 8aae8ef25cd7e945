//! A merge whose payloads are copied by many tasks: laid out first, then
//! copied range by range, then committed.
//!
//! The key decision: every tile's offset in the finished pack follows from
//! the tile set and the payload sizes alone, so the index can be written
//! before any payload ([`crate::PackWriter::lay_out`]), and the
//! payloads cut into ranges of about equal bytes that separate processes,
//! on separate nodes, copy into their own bytes of the one file
//! ([`copy_range`], positioned writes). Each task reads its ranges' entries
//! from the laid-out index itself, finds each tile in the part that holds
//! it, checks that part's entry against the laid-out one field by field and
//! its payload against its checksum, writes, reads back and checks again,
//! and syncs. A copy is idempotent, so a killed task is run again alone.
//! The journal beside the pack (`OUT.partial`) is the stages' lock: the
//! layout and the commit hold it exclusively, copy tasks shared, so no
//! layout starts over `OUT.tmp` while a copy writes into it and no commit
//! renames it before every copy running has stopped. Which ranges are done
//! is the caller's record (the bake writes one marker per task).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::assemble::{COPY_CHUNK_BYTES, COPY_CHUNK_TILES, write_runs};
use crate::crash::{abort_point, delay_tiles};
use crate::error::PackError;
use crate::format::IndexEntry;
use crate::parts::TileParts;
use crate::reader::Pack;
use crate::writer::{Assembled, WriteSummary, lock_journal, partial_path, tmp_path};

/// Copy ranges start at multiples of this many tiles: about 64 possible
/// starts per task, so ranges come out within a few percent of equal bytes,
/// and at most one start per 4,096 tiles, so a pack of billions of tiles
/// keeps few.
pub(crate) fn range_step(tiles: u64, tasks: u32) -> u64 {
    (tiles / (u64::from(tasks) * 64)).clamp(1, 4096)
}

/// One copy task's share of a laid-out pack: the tiles at positions
/// `first_tile..first_tile + tiles` of the key order, whose payloads fill
/// the bytes `start..end` of the file. A range may be empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyRange {
    pub first_tile: u64,
    pub tiles: u64,
    pub start: u64,
    pub end: u64,
}

/// What [`crate::PackWriter::lay_out`] wrote: the pack's figures and
/// its copy tasks' ranges, in order, covering every payload once. It holds
/// the journal's lock until dropped, so the caller records the ranges
/// before any copy task or commit can start.
#[derive(Debug)]
pub struct LaidOut {
    pub summary: WriteSummary,
    pub ranges: Vec<CopyRange>,
    pub(crate) _journal: File,
}

/// `tasks` ranges of about equal bytes from the index pass's marks (the
/// position and offset of every [`range_step`]-th tile, the first at 0) and where the payloads end (`(tiles, file length)`). A cut goes at
/// the first mark at or past its share of the bytes, so ranges start on
/// marks; a pack smaller than the task count leaves ranges empty.
pub(crate) fn cut_ranges(marks: &[(u64, u64)], end: (u64, u64), tasks: u32) -> Vec<CopyRange> {
    let (tiles, file_length) = end;
    let payload_start = marks.first().map_or(file_length, |m| m.1);
    let bytes = file_length - payload_start;
    let mut cuts: Vec<(u64, u64)> = (1..u64::from(tasks))
        .map(|k| {
            let share = payload_start + (u128::from(bytes) * u128::from(k) / u128::from(tasks)) as u64;
            marks.get(marks.partition_point(|m| m.1 < share)).copied().unwrap_or((tiles, file_length))
        })
        .collect();
    cuts.insert(0, (0, payload_start));
    cuts.push((tiles, file_length));
    cuts.windows(2)
        .map(|w| CopyRange { first_tile: w[0].0, tiles: w[1].0 - w[0].0, start: w[0].1, end: w[1].1 })
        .collect()
}

/// What one copy task copied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RangeCopied {
    pub tiles: u64,
    pub bytes: u64,
}

/// Which part holds a tile, by key (`None`: no part given holds it).
pub type Holder<'a> = dyn Fn(planet_geo::address::TileKey) -> Option<&'a dyn TileParts> + Sync + 'a;

/// Copies `range` of the pack laid out for `out` (in `OUT.tmp`) from the
/// parts `holder` finds, checks what it wrote by reading it back, and syncs
/// it; `progress` is told (tiles done, tiles) after each chunk. Runs beside
/// other copy tasks of the same pack, never beside its layout or commit:
/// the caller takes [`lock_for_copy`] first and reads the layout's record
/// under it.
pub fn copy_range(
    out: &Path,
    range: &CopyRange,
    holder: &Holder<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RangeCopied, PackError> {
    let tmp = tmp_path(out);
    copy_locked(&tmp, range, holder, progress).map_err(|e| e.in_file(&tmp))
}

/// The shared lock a copy task holds on the journal beside `out` while it
/// reads the layout's record and copies: no layout or commit runs until
/// every holder has dropped it.
pub fn lock_for_copy(out: &Path) -> Result<File, PackError> {
    let journal = partial_path(out);
    let lock =
        File::open(&journal).map_err(PackError::io("opening the layout's journal")).map_err(|e| e.in_file(&journal))?;
    lock_journal(&lock, &journal, true)?;
    Ok(lock)
}

/// The exclusive lock on the journal beside `out`, if there is one: what
/// a commit finishing an earlier commit's cleanup holds while it looks and
/// removes, so no layout starts meanwhile.
pub fn lock_if_laid_out(out: &Path) -> Result<Option<File>, PackError> {
    let journal = partial_path(out);
    match File::open(&journal) {
        Ok(lock) => lock_journal(&lock, &journal, false).map(|()| Some(lock)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(PackError::io("opening the layout's journal")(e).in_file(&journal)),
    }
}

fn copy_locked(
    tmp: &Path,
    range: &CopyRange,
    holder: &Holder<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RangeCopied, PackError> {
    let pack = Pack::open_unmapped(tmp)?;
    let header = pack.header();
    let last = range.first_tile.checked_add(range.tiles);
    if last.is_none_or(|l| l > header.tile_count)
        || range.start < header.payload_offset
        || range.end > header.file_length
        || range.start > range.end
    {
        return Err(PackError::BadSpec(format!(
            "copy range {range:?} lies outside the laid-out pack ({} tiles, payloads {}..{})",
            header.tile_count, header.payload_offset, header.file_length
        )));
    }
    let file =
        OpenOptions::new().write(true).read(true).open(tmp).map_err(PackError::io("opening the pack to copy into"))?;
    let mut copy =
        RangeCopy { file: &file, holder, at: range.start, chunk: Vec::new(), laid: Vec::new(), bytes: 0, done: 0 };
    for entry in pack.entries_in(range.first_tile..range.first_tile + range.tiles) {
        let laid = entry?;
        if laid.payload_offset != copy.at + copy.bytes {
            return Err(PackError::BadContent {
                tile: laid.key.address(),
                reason: format!("its payload is not where its copy range {range:?} puts it"),
            });
        }
        copy.push(laid)?;
        if copy.chunk.len() == COPY_CHUNK_TILES || copy.bytes >= COPY_CHUNK_BYTES {
            copy.flush()?;
            progress(copy.done, range.tiles);
        }
    }
    copy.flush()?;
    if copy.at != range.end || copy.done != range.tiles {
        return Err(PackError::BadSpec(format!(
            "copy range {range:?}: its entries hold {} tiles ending at byte {}",
            copy.done, copy.at
        )));
    }
    file.sync_data().map_err(PackError::io("syncing the copied range"))?;
    progress(copy.done, range.tiles);
    Ok(RangeCopied { tiles: copy.done, bytes: range.end - range.start })
}

/// A copy task's progress through its range: the chunk gathered (each
/// tile's part and that part's entry, and the laid-out entries), where it
/// goes, and the tiles copied before it.
struct RangeCopy<'a, 'h> {
    file: &'a File,
    holder: &'a Holder<'h>,
    at: u64,
    chunk: Vec<(&'h dyn TileParts, IndexEntry)>,
    laid: Vec<IndexEntry>,
    bytes: u64,
    done: u64,
}

impl<'h> RangeCopy<'_, 'h> {
    /// Finds the laid-out tile in the part that holds it; every field but
    /// the offset must agree, or the parts are not the ones laid out.
    fn push(&mut self, laid: IndexEntry) -> Result<(), PackError> {
        let tile = laid.key.address();
        let part = (self.holder)(laid.key)
            .ok_or_else(|| PackError::BadContent { tile, reason: "no part given holds it".into() })?;
        let held = part.part_entry(laid.key)?.ok_or_else(|| PackError::BadContent {
            tile,
            reason: format!("laid out from {}, which does not hold it", part.part_name()),
        })?;
        if (IndexEntry { payload_offset: 0, ..held }) != (IndexEntry { payload_offset: 0, ..laid }) {
            return Err(PackError::BadContent {
                tile,
                reason: format!(
                    "{} holds a different tile than was laid out: not the parts of this layout",
                    part.part_name()
                ),
            });
        }
        self.chunk.push((part, held));
        self.laid.push(laid);
        self.bytes += u64::from(laid.payload_length);
        Ok(())
    }

    /// Copies the gathered chunk, reads it back against the laid-out
    /// checksums, and moves on past it.
    fn flush(&mut self) -> Result<(), PackError> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        write_runs(self.file, self.at, &self.chunk, &|(part, held), into| part.part_payload(held, into))?;
        abort_point("merge-copy");
        delay_tiles(self.chunk.len());
        let bytes = self.bytes;
        let mut back = vec![0u8; bytes as usize];
        self.file.read_exact_at(&mut back, self.at).map_err(PackError::io("reading the copied range back"))?;
        let mut within = 0usize;
        for e in &self.laid {
            let payload = &back[within..within + e.payload_length as usize];
            let computed = crc32fast::hash(payload);
            if computed != e.payload_checksum {
                return Err(PackError::PayloadChecksum {
                    tile: e.key.address(),
                    offset: e.payload_offset,
                    stored: e.payload_checksum,
                    computed,
                });
            }
            within += payload.len();
        }
        self.at += bytes;
        self.done += self.chunk.len() as u64;
        self.bytes = 0;
        self.chunk.clear();
        self.laid.clear();
        Ok(())
    }
}

/// The pack laid out and copied for `out`, taken up for its last checks
/// and its commit: the journal locked exclusively first (every copy task
/// has stopped, no layout can start), then `OUT.tmp`'s figures read from
/// its header. The caller reads the layout's record under this lock.
pub fn take_up_copied(out: &Path) -> Result<Assembled, PackError> {
    Assembled::take_up(out).map_err(|e| e.in_file(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_payload_once_cut_on_marks_by_bytes() {
        // 10,000 tiles: marks at 0, 4096 and 8192; the first 4,096 tiles
        // hold most of the bytes.
        let marks = [(0, 100), (4096, 9100), (8192, 9900)];
        let ranges = cut_ranges(&marks, (10_000, 10_000), 3);
        assert_eq!(
            ranges,
            vec![
                CopyRange { first_tile: 0, tiles: 4096, start: 100, end: 9100 },
                CopyRange { first_tile: 4096, tiles: 0, start: 9100, end: 9100 },
                CopyRange { first_tile: 4096, tiles: 5904, start: 9100, end: 10_000 },
            ]
        );
        // One task takes everything; more tasks than marks leave the rest empty.
        assert_eq!(
            cut_ranges(&marks, (10_000, 10_000), 1),
            vec![CopyRange { first_tile: 0, tiles: 10_000, start: 100, end: 10_000 }]
        );
        let many = cut_ranges(&marks, (10_000, 10_000), 8);
        assert_eq!(many.len(), 8);
        assert_eq!(many.iter().map(|r| r.tiles).sum::<u64>(), 10_000);
        assert!(many.windows(2).all(|w| w[0].end == w[1].start && w[0].first_tile + w[0].tiles == w[1].first_tile));
    }
}
