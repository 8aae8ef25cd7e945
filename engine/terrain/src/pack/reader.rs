//! Opening a pack: adopt bytes, validate all of them, then serve tiles.
//!
//! The key decision: `Pack` only exists once every rule that can be checked
//! without reading payloads has passed (header, index, placement), so there
//! is no half-loaded state to observe. Opening touches the header and the
//! index only; payloads are read on demand through [`PackBytes`], a memory
//! map today and a ranged reader tomorrow, and each read verifies its
//! checksum before a byte of it is decoded.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::geo::address::{TileAddress, TileKey};
use crate::pack::codec::{DecodedTile, decode_tile};
use crate::pack::error::PackError;
use crate::pack::format::{ENTRY_LENGTH, HEADER_LENGTH, IndexEntry, PackHeader, decode_entry, decode_header};
use crate::pack::journal::journal_path;

/// Random access to a pack's bytes.
pub trait PackBytes: Send + Sync + fmt::Debug {
    fn len(&self) -> u64;
    /// `length` bytes from `offset`; the caller has checked the range.
    fn read(&self, offset: u64, length: usize) -> Result<Cow<'_, [u8]>, PackError>;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes held in memory (adopted from a caller, or read whole).
#[derive(Debug)]
pub struct OwnedBytes(pub Vec<u8>);

impl PackBytes for OwnedBytes {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read(&self, offset: u64, length: usize) -> Result<Cow<'_, [u8]>, PackError> {
        Ok(Cow::Borrowed(&self.0[offset as usize..offset as usize + length]))
    }
}

/// A read-only memory map of a pack file.
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    pub fn open(path: &Path) -> Result<MappedFile, PackError> {
        let file = std::fs::File::open(path).map_err(PackError::io("opening the pack"))?;
        // An empty file cannot be mapped; it is simply too short.
        if file.metadata().map_err(PackError::io("reading the pack's metadata"))?.len() == 0 {
            return Err(PackError::Truncated {
                section: "header",
                start: 0,
                end: HEADER_LENGTH as u64,
                file_length: 0,
            });
        }
        // SAFETY: the map is read-only and private to this process. Planet's
        // own writers never truncate or rewrite a finished pack except by
        // region patches, which only change bytes in place or append, and a
        // reader re-verifies every payload's checksum before decoding it, so
        // concurrently changed bytes surface as a checksum error, not as
        // unsound reads of Rust values. Truncation by another program while
        // mapped would fault; that is outside what a pack file promises.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(PackError::io("memory-mapping the pack"))?;
        Ok(MappedFile { map })
    }
}

impl PackBytes for MappedFile {
    fn len(&self) -> u64 {
        self.map.len() as u64
    }
    fn read(&self, offset: u64, length: usize) -> Result<Cow<'_, [u8]>, PackError> {
        Ok(Cow::Borrowed(&self.map[offset as usize..offset as usize + length]))
    }
}

/// A validated pack.
#[derive(Debug)]
pub struct Pack {
    bytes: Box<dyn PackBytes>,
    header: PackHeader,
    entries: Vec<IndexEntry>,
    path: Option<PathBuf>,
}

impl Pack {
    /// Opens and validates a pack file; errors name the file and, when an
    /// interrupted patch left its redo journal beside it, say how to
    /// complete that patch.
    pub fn open(path: impl AsRef<Path>) -> Result<Pack, PackError> {
        let path = path.as_ref();
        let adopt = || -> Result<Pack, PackError> {
            let mut pack = Pack::adopt(Box::new(MappedFile::open(path)?))?;
            pack.path = Some(path.to_owned());
            Ok(pack)
        };
        adopt()
            .map_err(|e| {
                let journal = journal_path(path);
                match journal.exists() {
                    true => PackError::Interrupted { journal, source: Box::new(e) },
                    false => e,
                }
            })
            .map_err(|e| e.in_file(path))
    }

    /// Validates bytes held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Pack, PackError> {
        Pack::adopt(Box::new(OwnedBytes(bytes)))
    }

    /// Validates every byte it can without reading payloads, then accepts.
    pub fn adopt(bytes: Box<dyn PackBytes>) -> Result<Pack, PackError> {
        let file_length = bytes.len();
        let head = bytes.read(0, (HEADER_LENGTH as u64).min(file_length) as usize)?;
        let header = decode_header(&head, file_length)?;
        let index_length = (header.payload_offset - header.index_offset) as usize;
        let index = bytes.read(header.index_offset, index_length)?;
        let computed = crc32fast::hash(&index);
        if computed != header.index_checksum {
            return Err(PackError::IndexChecksum {
                offset: header.index_offset,
                stored: header.index_checksum,
                computed,
            });
        }
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(header.tile_count as usize);
        for (n, raw) in index.chunks_exact(ENTRY_LENGTH).enumerate() {
            let offset = header.index_offset + (n * ENTRY_LENGTH) as u64;
            let entry = decode_entry(raw, n as u64, offset, &header)?;
            if let Some(previous) = entries.last() {
                let (tile, previous) = (entry.tile(), previous.tile());
                if entry.key == previous.key() {
                    return Err(PackError::DuplicateKey { entry: n as u64, offset, tile });
                }
                if entry.key < previous.key() {
                    return Err(PackError::IndexOrder { entry: n as u64, offset, tile, previous });
                }
            }
            entries.push(entry);
        }
        check_no_overlap(&header, &entries)?;
        drop(head);
        drop(index);
        Ok(Pack { bytes, header, entries, path: None })
    }

    pub fn header(&self) -> &PackHeader {
        &self.header
    }

    /// Every index entry, ascending by key.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn file_length(&self) -> u64 {
        self.bytes.len()
    }

    /// The index entry of `tile`, by binary search.
    pub fn entry(&self, tile: TileAddress) -> Option<&IndexEntry> {
        let key = tile.key();
        self.entries.binary_search_by_key(&key, |e| e.key).ok().map(|i| &self.entries[i])
    }

    /// The deepest stored tile that is `tile` or one of its ancestors.
    pub fn deepest_stored_ancestor(&self, tile: TileAddress) -> Option<&IndexEntry> {
        (0..=tile.depth()).rev().find_map(|depth| self.entry(tile.ancestor_at(depth)?))
    }

    /// The stored (compressed) payload of an entry.
    pub fn payload(&self, entry: &IndexEntry) -> Result<Cow<'_, [u8]>, PackError> {
        self.bytes.read(entry.payload_offset, entry.payload_length as usize)
    }

    /// Reads, verifies and decodes one tile.
    pub fn read_tile(&self, tile: TileAddress) -> Result<DecodedTile, PackError> {
        let entry = self.entry(tile).ok_or(PackError::TileNotFound { tile })?;
        self.decode(entry)
    }

    pub fn decode(&self, entry: &IndexEntry) -> Result<DecodedTile, PackError> {
        let payload = self.payload(entry)?;
        decode_tile(entry, self.header.codec, &payload, entry.payload_offset)
    }

    /// Reads and decodes every tile: all checksums, all payloads.
    pub fn verify(&self) -> Result<VerifySummary, PackError> {
        let mut summary = VerifySummary::default();
        for entry in &self.entries {
            self.decode(entry).map_err(|e| match &self.path {
                Some(path) => e.in_file(path),
                None => e,
            })?;
            summary.tiles += 1;
            summary.payload_bytes += u64::from(entry.payload_length);
        }
        Ok(summary)
    }

    /// Keys of all stored tiles.
    pub fn keys(&self) -> impl Iterator<Item = TileKey> + '_ {
        self.entries.iter().map(|e| e.key)
    }
}

/// What [`Pack::verify`] checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifySummary {
    pub tiles: u64,
    pub payload_bytes: u64,
}

fn check_no_overlap(header: &PackHeader, entries: &[IndexEntry]) -> Result<(), PackError> {
    let mut by_offset: Vec<usize> = (0..entries.len()).collect();
    by_offset.sort_by_key(|&i| entries[i].payload_offset);
    for pair in by_offset.windows(2) {
        let (a, b) = (&entries[pair[0]], &entries[pair[1]]);
        let a_end = a.payload_offset + u64::from(a.payload_length);
        if a_end > b.payload_offset {
            let n = pair[1] as u64;
            return Err(PackError::PayloadOverlap {
                entry: n,
                offset: header.index_offset + n * ENTRY_LENGTH as u64,
                tile: b.tile(),
                payload_offset: b.payload_offset,
                payload_end: b.payload_offset + u64::from(b.payload_length),
                other: a.tile(),
            });
        }
    }
    Ok(())
}
