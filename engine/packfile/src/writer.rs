//! Writing a pack: declare the tile set, accept tiles in any order from any
//! thread, and produce bytes that depend only on the tile set and contents.
//!
//! The key decision: tiles are staged, not placed. Each `put` appends the
//! compressed tile as one checksummed record to `OUT.partial` (memory stays
//! bounded whatever the pack size); `finish` lays the final file out in key
//! order, so a payload's offset is a pure function of the tile set and the
//! sizes before it, never of arrival order or thread count; the paged
//! index's leaf pages go out as they fill, so finishing holds one page of
//! the index, not all of it. The final file
//! is assembled in `OUT.tmp` (`assemble`), which the caller may check (the
//! bake audits every sample of it) before `Assembled::commit` renames it
//! over `OUT`, so a killed writer never leaves anything at `OUT` that looks
//! like a finished pack, and nothing unchecked ever appears there. The
//! partial file is also the resume journal: `resume` streams it record by
//! record (holding one record, not the file), keeps every record whose
//! checksum holds, drops a torn tail, and refuses a different bake.
//!
//! The parts beside this file: the spec in `spec`, finishing (assembly
//! and lay-out) in `finish`, the assembled pack and its commit in
//! `commit`. This file stages: creating and resuming the journal, `put`,
//! what is pending; and it names the files a writer keeps beside `OUT`.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::codec::{EncodedTile, TileContent};
pub use crate::commit::{Assembled, WriteSummary};
use crate::crash::after_tiles;
use crate::error::PackError;
use crate::format::{FINGERPRINT_LENGTH, HEADER_LENGTH, IndexEntry, encode_header};
use crate::record::{RECORD_HEAD, RECORD_MAGIC, parse_record, read_record};
pub use crate::spec::PackSpec;
use crate::staged::{Staged, StagedSet};
use planet_geo::address::TileAddress;

const PARTIAL_MAGIC: [u8; 8] = *b"PLNTPART";

/// A pack being written.
#[derive(Debug)]
pub struct PackWriter {
    pub(super) out: PathBuf,
    pub(super) partial_path: PathBuf,
    pub(super) spec: PackSpec,
    pub(super) state: Mutex<WriterState>,
}

#[derive(Debug)]
pub(super) struct WriterState {
    pub(super) partial: File,
    end: u64,
    pub(super) tiles: StagedSet,
    /// Tiles staged by this process (for the crash test hook).
    staged_here: usize,
}

pub use crate::names::{partial_path, scratch_dir, sibling, tmp_path};

/// The fingerprint in the preamble of the partial file beside `out`, if
/// there is one (which bake it stages tiles for).
pub fn partial_fingerprint(out: &Path) -> Option<[u8; FINGERPRINT_LENGTH]> {
    let file = File::open(partial_path(out)).ok()?;
    let mut preamble = [0u8; PARTIAL_MAGIC.len() + HEADER_LENGTH];
    file.read_exact_at(&mut preamble, 0).ok()?;
    let at = PARTIAL_MAGIC.len() + 144;
    (preamble[..PARTIAL_MAGIC.len()] == PARTIAL_MAGIC)
        .then(|| preamble[at..at + FINGERPRINT_LENGTH].try_into().expect("32 bytes"))
}

/// Takes the journal's lock, exclusive or `shared` (advisory, released
/// when the file is closed or the process dies), or says who holds it.
pub(crate) fn lock_journal(file: &File, path: &Path, shared: bool) -> Result<(), PackError> {
    match if shared { file.try_lock_shared() } else { file.try_lock() } {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(PackError::JournalLocked { path: path.to_owned() }),
        Err(std::fs::TryLockError::Error(e)) => Err(PackError::io("locking the partial file")(e).in_file(path)),
    }
}

impl PackWriter {
    /// Starts a new pack at `out` holding exactly `tile_set`, replacing any
    /// earlier partial bake of it.
    pub fn create(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
    ) -> Result<PackWriter, PackError> {
        PackWriter::create_inner(out, spec, tile_set, true)
    }

    /// Starts the writer of a sharded bake's merge: `tile_set` is only the
    /// levels above the shards' subtrees, so it may stop above the spec's
    /// data depths; [`PackWriter::assemble_with`] brings the rest.
    pub fn create_levels_above(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
    ) -> Result<PackWriter, PackError> {
        PackWriter::create_inner(out, spec, tile_set, false)
    }

    /// [`PackWriter::resume`] for [`PackWriter::create_levels_above`].
    pub fn resume_levels_above(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
    ) -> Result<PackWriter, PackError> {
        PackWriter::resume_inner(out, spec, tile_set, false)
    }

    fn create_inner(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
        whole: bool,
    ) -> Result<PackWriter, PackError> {
        let (tiles, preamble) = PackWriter::prepare(out, &spec, tile_set, whole)?;
        PackWriter::create_prepared(out, spec, tiles, preamble)
    }

    fn create_prepared(
        out: &Path,
        spec: PackSpec,
        tiles: StagedSet,
        preamble: Vec<u8>,
    ) -> Result<PackWriter, PackError> {
        let partial_path = partial_path(out);
        let wrap = |e: PackError| e.in_file(&partial_path);
        // Locked before it is emptied: a second writer of the same bake
        // (a re-submitted task while the first still runs) must fail, not
        // truncate the journal under the first.
        let mut partial = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&partial_path)
            .map_err(PackError::io("creating the partial file"))
            .map_err(wrap)?;
        lock_journal(&partial, &partial_path, false)?;
        partial.set_len(0).map_err(PackError::io("emptying the partial file")).map_err(wrap)?;
        partial.write_all(&preamble).map_err(PackError::io("writing the partial file")).map_err(wrap)?;
        let end = preamble.len() as u64;
        Ok(PackWriter {
            out: out.to_owned(),
            partial_path,
            spec,
            state: Mutex::new(WriterState { partial, end, tiles, staged_here: 0 }),
        })
    }

    /// Continues a killed writer for the same pack: keeps every intact staged
    /// tile, drops a torn tail, and refuses if the spec or tile set differ.
    /// With no partial file, starts afresh.
    pub fn resume(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
    ) -> Result<PackWriter, PackError> {
        PackWriter::resume_inner(out, spec, tile_set, true)
    }

    fn resume_inner(
        out: &Path,
        spec: PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
        whole: bool,
    ) -> Result<PackWriter, PackError> {
        let partial_path = partial_path(out);
        if !partial_path.exists() {
            return PackWriter::create_inner(out, spec, tile_set, whole);
        }
        let (mut tiles, preamble) = PackWriter::prepare(out, &spec, tile_set, whole)?;
        let wrap = |e: PackError| e.in_file(&partial_path);
        let mut partial = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&partial_path)
            .map_err(PackError::io("opening the partial file"))
            .map_err(wrap)?;
        lock_journal(&partial, &partial_path, false)?;
        // The journal is streamed record by record through a buffer: resume
        // holds one record, never the file.
        let file_length =
            partial.metadata().map_err(PackError::io("reading the partial file's length")).map_err(wrap)?.len();
        let mut reader = BufReader::with_capacity(1 << 20, &partial);
        let mut head = vec![0u8; preamble.len().min(usize::try_from(file_length).unwrap_or(usize::MAX))];
        reader.read_exact(&mut head).map_err(PackError::io("reading the partial file")).map_err(wrap)?;
        if head.len() < preamble.len() && preamble.starts_with(&head) {
            // Killed while the preamble was being written: nothing was staged.
            drop(reader);
            drop(partial);
            return PackWriter::create_prepared(out, spec, tiles, preamble);
        }
        if head[..] != preamble[..] {
            return Err(wrap(PackError::ResumeMismatch(
                "the partial bake was started with different inputs, parameters or tile set; delete it or bake without --resume".into(),
            )));
        }
        let largest_payload = spec.codec.payload_length_range().1 as usize;
        let mut at = preamble.len() as u64;
        let mut record = Vec::new();
        loop {
            let read = read_record(&mut reader, &mut record, file_length - at, largest_payload)
                .map_err(PackError::io("reading the partial file"))
                .map_err(wrap)?;
            let Some((record_length, staged)) = read.then(|| parse_record(&record, at)).flatten() else { break };
            match tiles.get(staged.entry.key).map_err(PackError::io("reading the staged set")).map_err(wrap)? {
                Some(None) => {
                    tiles.stage(staged).map_err(PackError::io("writing the staged set")).map_err(wrap)?;
                }
                // A record for an undeclared or already staged tile means the
                // journal is not this bake's: stop trusting it here.
                _ => break,
            }
            at += record_length as u64;
        }
        drop(reader);
        partial.set_len(at).map_err(PackError::io("truncating the partial file's torn tail")).map_err(wrap)?;
        partial.seek(SeekFrom::Start(at)).map_err(PackError::io("seeking the partial file")).map_err(wrap)?;
        Ok(PackWriter {
            out: out.to_owned(),
            partial_path,
            spec,
            state: Mutex::new(WriterState { partial, end: at, tiles, staged_here: 0 }),
        })
    }

    /// The staged set and the journal's preamble; `whole`: the set is the
    /// whole pack, so it must reach the spec's data depths.
    fn prepare(
        out: &Path,
        spec: &PackSpec,
        tile_set: impl IntoIterator<Item = TileAddress>,
        whole: bool,
    ) -> Result<(StagedSet, Vec<u8>), PackError> {
        spec.validate()?;
        // A pack is renamed over its path at the end: over a FIFO or a
        // device node that replaced the node (as root, `/dev/null`).
        if let Some(kind) = std::fs::metadata(out).ok().and_then(|m| crate::reader::not_a_file(&m.file_type())) {
            return Err(PackError::BadSpec(format!(
                "{} is {kind}: a pack is a file, made beside its path and renamed over it; give a file path",
                out.display()
            )));
        }
        let dir = scratch_dir(out);
        let stem = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tiles = StagedSet::declare(dir, &stem, tile_set.into_iter().map(TileAddress::key))
            .map_err(PackError::io("declaring the tile set in the staged set's scratch files"))
            .map_err(|e| e.in_file(dir))?;
        // A merge that only lays out other parts stages none of its own.
        if tiles.len() == 0 && whole {
            return Err(PackError::BadSpec("the tile set is empty".into()));
        }
        let max_depth = tiles.max_depth();
        if whole && (spec.height_data_depth > max_depth || spec.colour_data_depth > max_depth) {
            return Err(PackError::BadSpec(format!(
                "data depths (height {}, colour {}) exceed the deepest tile in the set ({max_depth})",
                spec.height_data_depth, spec.colour_data_depth
            )));
        }
        // The preamble identifies the bake: the header template (spec and
        // tile count) and a digest of the exact tile set.
        let mut preamble = Vec::with_capacity(8 + HEADER_LENGTH + 4);
        preamble.extend_from_slice(&PARTIAL_MAGIC);
        // (An empty set, a merge's that only lays out, is recorded as one
        // tile's: a template's count only has to be the same on resume.)
        preamble.extend_from_slice(&encode_header(&spec.header_of(tiles.len().max(1), tiles.max_depth())?));
        preamble.extend_from_slice(&tiles.keys_crc().to_le_bytes());
        Ok((tiles, preamble))
    }

    pub fn spec(&self) -> &PackSpec {
        &self.spec
    }

    /// Tiles declared but not yet written, ascending by key. This lists
    /// them all; a bake of a large pack takes them a batch at a time
    /// ([`PackWriter::pending_batch`]).
    pub fn pending(&self) -> Result<Vec<TileAddress>, PackError> {
        let state = self.state.lock().expect("writer lock");
        let everything = 0..state.tiles.len();
        Ok(state.tiles.pending_in(everything, usize::MAX).map_err(self.staged_set_error())?.0)
    }

    /// How many declared tiles are not written yet.
    pub fn pending_count(&self) -> u64 {
        self.state.lock().expect("writer lock").tiles.pending_count()
    }

    /// How many tiles were declared.
    pub fn tile_count(&self) -> u64 {
        self.state.lock().expect("writer lock").tiles.len()
    }

    /// The tiles declared at each depth, 0 to the deepest.
    pub fn tiles_per_depth(&self) -> Vec<u64> {
        let state = self.state.lock().expect("writer lock");
        (0..=state.tiles.max_depth()).map(|d| state.tiles.depth_range(d).count() as u64).collect()
    }

    /// Up to `max` tiles of `depth` not yet written, ascending by key,
    /// starting at `*cursor` (0 to begin; it is advanced past what was
    /// examined): so a bake holds one batch of its pending tiles, not the
    /// list. Empty once the depth is walked.
    pub fn pending_batch(&self, depth: u8, cursor: &mut u64, max: usize) -> Result<Vec<TileAddress>, PackError> {
        let state = self.state.lock().expect("writer lock");
        let range = state.tiles.depth_range(depth);
        let from = range.start.max(range.start + *cursor);
        let (tiles, examined) = state.tiles.pending_in(from..range.end, max).map_err(self.staged_set_error())?;
        *cursor = from + examined - range.start;
        Ok(tiles)
    }

    fn staged_set_error(&self) -> impl FnOnce(std::io::Error) -> PackError + '_ {
        move |e| PackError::io("reading the staged set")(e).in_file(&self.partial_path)
    }

    /// The index fields of a staged tile (its offset is not yet known), so a
    /// bake can derive a parent's geometric error from its children's.
    pub fn staged_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        let mut state = self.state.lock().expect("writer lock");
        Ok(state.tiles.get(tile.key()).map_err(self.staged_set_error())?.flatten().map(|s| s.entry))
    }

    /// A staged tile read back from the partial file and decoded (its
    /// checksum checked), so a bake can build a parent from its children's
    /// stored samples whether they were staged in this run or before a
    /// resume. `None` when the tile is not staged.
    pub fn staged_tile(&self, tile: TileAddress) -> Result<Option<crate::DecodedTile>, PackError> {
        let mut state = self.state.lock().expect("writer lock");
        let Some(staged) = state.tiles.get(tile.key()).map_err(self.staged_set_error())?.flatten() else {
            return Ok(None);
        };
        let mut payload = vec![0; staged.entry.payload_length as usize];
        state
            .partial
            .read_exact_at(&mut payload, staged.payload_at)
            .map_err(PackError::io("reading a staged tile back"))
            .map_err(|e| e.in_file(&self.partial_path))?;
        drop(state);
        crate::codec::decode_tile(&staged.entry, self.spec.codec, &payload, staged.payload_at).map(Some)
    }

    /// Encodes and stages one tile. Safe to call from many threads.
    pub fn put(&self, tile: TileAddress, content: &TileContent<'_>) -> Result<(), PackError> {
        let encoded = self.spec.encode(tile, content)?;
        self.put_encoded(&encoded)
    }

    /// Stages an already encoded tile.
    pub fn put_encoded(&self, tile: &EncodedTile) -> Result<(), PackError> {
        let mut record = Vec::with_capacity(RECORD_HEAD + tile.payload.len() + 4);
        record.extend_from_slice(&RECORD_MAGIC.to_le_bytes());
        record.extend_from_slice(&tile.tile.key().raw().to_le_bytes());
        record.extend_from_slice(&(tile.payload.len() as u32).to_le_bytes());
        record.extend_from_slice(&tile.checksum.to_le_bytes());
        record.extend_from_slice(&tile.min_elevation.to_le_bytes());
        record.extend_from_slice(&tile.max_elevation.to_le_bytes());
        record.extend_from_slice(&tile.geometric_error.to_le_bytes());
        record.extend_from_slice(&[crate::format::entry_flags(tile.measured, tile.voids), 0, 0, 0]);
        record.extend_from_slice(&tile.payload);
        let crc = crc32fast::hash(&record);
        record.extend_from_slice(&crc.to_le_bytes());

        let mut state = self.state.lock().expect("writer lock");
        match state.tiles.get(tile.tile.key()).map_err(self.staged_set_error())? {
            None => return Err(PackError::Undeclared { tile: tile.tile }),
            Some(Some(_)) => {
                return Err(PackError::BadContent { tile: tile.tile, reason: "written twice".into() });
            }
            Some(None) => {}
        }
        let at = state.end;
        state.partial.write_all(&record).map_err(PackError::io("appending to the partial file"))?;
        state.end += record.len() as u64;
        let entry = tile.entry_at(0);
        state.tiles.stage(Staged { payload_at: at + RECORD_HEAD as u64, entry }).map_err(self.staged_set_error())?;
        state.staged_here += 1;
        after_tiles(state.staged_here);
        Ok(())
    }
}
