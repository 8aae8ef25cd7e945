//! Assembling a pack's file: the index pass, then the payload pass.
//!
//! The key decision: the index pass walks every source's entries once in
//! key order and gives each payload its place from the sizes before it, so
//! the index, the root and the header are written before any payload; the
//! payload pass then copies chunks of consecutive tiles on every worker at
//! once, each worker a run of tiles into its own bytes of the file
//! (`pwrite`). Since the places are fixed first, the payloads can as well
//! be left to copy tasks on other nodes (`pack::ranged`).

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::crash::abort_point;
use crate::error::PackError;
use crate::format::{IndexEntry, PackHeader, encode_header};
use crate::index::{IndexBuilder, IndexLayout};
use crate::parts::TileParts;

/// What assembling does with the payloads: copies them into place, or
/// leaves them to `tasks` copy tasks ([`PackWriter::lay_out`]).
pub(crate) enum Payloads<'a> {
    Copy(&'a mut dyn FnMut(u64, u64)),
    Leave { tasks: u32 },
}

/// The index pass: every entry `walk` yields (key order) given its place
/// from `header.payload_offset` on, its leaf page written as it fills, then
/// the directory pages, the root and the header (its length and index
/// checksum set here). Returns the position and place of every `step`-th
/// tile, the first included: where copy ranges may start.
pub(crate) fn index_pass(
    file: &File,
    header: &mut PackHeader,
    layout: IndexLayout,
    walk: impl Iterator<Item = Result<(usize, IndexEntry), PackError>>,
    step: u64,
) -> Result<Vec<(u64, u64)>, PackError> {
    let write_error = |e: std::io::Error| PackError::io("writing the pack")(e);
    let mut index = IndexBuilder::new(layout);
    let mut offset = header.payload_offset;
    let mut walked = 0u64;
    let mut marks = Vec::new();
    for item in walk {
        let (_, e) = item?;
        if walked.is_multiple_of(step) {
            marks.push((walked, offset));
        }
        index.push(&IndexEntry { payload_offset: offset, ..e }, file).map_err(write_error)?;
        offset += u64::from(e.payload_length);
        walked += 1;
    }
    if walked != header.tile_count {
        return Err(PackError::BadSpec(format!(
            "the sources declared {} tiles but their indexes hold {walked}",
            header.tile_count
        )));
    }
    header.file_length = offset;
    header.index_checksum = index.finish(file).map_err(write_error)?;
    file.write_all_at(&encode_header(header), 0).map_err(write_error)?;
    Ok(marks)
}

/// Where an assembly's payloads lie: this writer's partial file (part 0)
/// and the other parts.
pub(crate) struct PayloadSources<'a> {
    pub(crate) partial: &'a File,
    pub(crate) others: &'a [&'a dyn TileParts],
}

/// Tiles whose payloads are gathered before they are copied, at most; and
/// bytes (the payload pass holds one such chunk).
pub(crate) const COPY_CHUNK_TILES: usize = 4096;
pub(crate) const COPY_CHUNK_BYTES: u64 = 64 << 20;

/// Where the payload pass stands: the chunk gathered (entries and bytes),
/// where it goes in the file, and the tiles copied before it.
struct CopyPass {
    chunk: Vec<(usize, IndexEntry)>,
    at: u64,
    bytes: u64,
    done: u64,
}

impl PayloadSources<'_> {
    /// The payload pass: every tile's payload in key order, written from
    /// `payload_offset` on; `progress` counts tiles (a phase of its own
    /// after the index pass's). The walk gathers a chunk of entries at a
    /// time; the chunk's payloads are read and written by every worker at
    /// once, each a run of consecutive tiles into its own byte range of the
    /// file (`pwrite`), since every tile's place follows from the sizes
    /// before it.
    pub(crate) fn copy(
        &self,
        file: &File,
        payload_offset: u64,
        tiles: impl Iterator<Item = Result<(usize, IndexEntry), PackError>>,
        tile_count: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), PackError> {
        // A kill halfway through the pass leaves a torn file (the crash
        // window `bake-assemble`): a chunk ends there.
        let halfway = tile_count / 2 + 1;
        let mut pass = CopyPass { chunk: Vec::with_capacity(COPY_CHUNK_TILES), at: payload_offset, bytes: 0, done: 0 };
        for item in tiles {
            let (part, e) = item?;
            pass.bytes += u64::from(e.payload_length);
            pass.chunk.push((part, e));
            let full = pass.chunk.len() == COPY_CHUNK_TILES || pass.bytes >= COPY_CHUNK_BYTES;
            if full || pass.done + pass.chunk.len() as u64 == halfway {
                self.flush(file, &mut pass, tile_count, progress)?;
                if pass.done == halfway {
                    abort_point("bake-assemble");
                }
            }
        }
        self.flush(file, &mut pass, tile_count, progress)?;
        file.sync_all().map_err(PackError::io("writing the pack"))?;
        progress(tile_count, tile_count);
        Ok(())
    }

    /// Copies the pass's gathered chunk and moves it on past it.
    fn flush(
        &self,
        file: &File,
        pass: &mut CopyPass,
        tile_count: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), PackError> {
        if pass.chunk.is_empty() {
            return Ok(());
        }
        self.copy_chunk(file, pass.at, &pass.chunk)?;
        pass.at += pass.bytes;
        pass.done += pass.chunk.len() as u64;
        pass.bytes = 0;
        pass.chunk.clear();
        progress(pass.done, tile_count);
        Ok(())
    }

    /// Copies `chunk`'s payloads, which lie from `at` on in the file, in
    /// runs on every worker.
    fn copy_chunk(&self, file: &File, at: u64, chunk: &[(usize, IndexEntry)]) -> Result<(), PackError> {
        let read_error = |e: std::io::Error| PackError::io("reading the partial file")(e);
        write_runs(file, at, chunk, &|(part, e), into| {
            if *part == 0 {
                into.resize(e.payload_length as usize, 0);
                self.partial.read_exact_at(into, e.payload_offset).map_err(read_error)
            } else {
                self.others[part - 1].part_payload(e, into)
            }
        })
    }
}

/// Consecutive tiles one worker reads into one buffer and writes with one
/// positioned write.
const COPY_RUN_TILES: usize = 64;

/// A payload reader for [`write_runs`]: one item's payload into the buffer.
pub(crate) type ReadPayload<'a, P> = dyn Fn(&(P, IndexEntry), &mut Vec<u8>) -> Result<(), PackError> + Sync + 'a;

/// Writes `chunk`'s payloads (each read by `read`), which lie one after
/// another from `at` on in `file`: on every worker at once, each a run of
/// consecutive tiles gathered in one buffer and written with one `pwrite`.
pub(crate) fn write_runs<P: Sync>(
    file: &File,
    at: u64,
    chunk: &[(P, IndexEntry)],
    read: &ReadPayload<'_, P>,
) -> Result<(), PackError> {
    use rayon::prelude::*;
    let mut starts = Vec::with_capacity(chunk.len().div_ceil(COPY_RUN_TILES));
    let mut offset = at;
    for run in chunk.chunks(COPY_RUN_TILES) {
        starts.push(offset);
        offset += run.iter().map(|(_, e)| u64::from(e.payload_length)).sum::<u64>();
    }
    let write_error = |e: std::io::Error| PackError::io("writing the pack")(e);
    chunk.par_chunks(COPY_RUN_TILES).zip(starts).try_for_each(|(run, start)| {
        let (mut bytes, mut one) = (Vec::new(), Vec::new());
        for item in run {
            read(item, &mut one)?;
            bytes.extend_from_slice(&one);
        }
        file.write_all_at(&bytes, start).map_err(write_error)
    })
}
