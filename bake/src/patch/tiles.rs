//! The re-baked tiles of a patch between baking and journaling: their index
//! figures in memory, their payloads in an unnamed scratch file beside the
//! pack.
//!
//! The key decision: a patch's payloads grow with its box (a 7,070-tile
//! patch held them three times over and peaked past 1 GiB under `--memory
//! 256M`), so each goes to disk as it is made, and every later step (the
//! level above, the audit, the journal, the read-back) reads back the one
//! it needs. The file has no name, so nothing is left behind whatever ends
//! the process.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use planet_terrain::TileAddress;
use planet_terrain::pack::codec::decode_tile;
use planet_terrain::pack::{Codec, DecodedTile, EncodedTile, IndexEntry, PatchTiles};

use crate::error::BakeError;

/// Tiles added from the workers of one depth while the tiles of the depth
/// below are read: the figures sit behind one lock, the payloads are read
/// and written with positioned I/O outside it.
pub(crate) struct SpilledTiles {
    figures: Mutex<Figures>,
    file: File,
    /// The pack the scratch file lies beside, for errors.
    beside: PathBuf,
}

#[derive(Default)]
struct Figures {
    /// Each tile's index entry, its `payload_offset` the payload's place in
    /// the scratch file.
    entries: Vec<IndexEntry>,
    by_tile: BTreeMap<TileAddress, usize>,
    end: u64,
}

impl SpilledTiles {
    /// An empty set whose scratch file lies in the directory of `pack`.
    pub(crate) fn beside(pack: &Path) -> Result<SpilledTiles, BakeError> {
        let dir = pack.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let file = tempfile::tempfile_in(dir).map_err(scratch_error(pack))?;
        Ok(SpilledTiles { figures: Mutex::default(), file, beside: pack.to_owned() })
    }

    fn figures(&self) -> std::sync::MutexGuard<'_, Figures> {
        // Poisoned only by a panic elsewhere, which ends the bake anyway.
        self.figures.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds re-baked tiles, their payloads written to the scratch file.
    pub(crate) fn insert(&self, tiles: impl IntoIterator<Item = EncodedTile>) -> Result<(), BakeError> {
        for tile in tiles {
            // Room first, then the bytes, then the entry: a tile is visible
            // only once its payload is in the file.
            let at = {
                let mut f = self.figures();
                let at = f.end;
                f.end += tile.payload.len() as u64;
                at
            };
            self.file.write_all_at(&tile.payload, at).map_err(scratch_error(&self.beside))?;
            let mut f = self.figures();
            let i = f.entries.len();
            assert!(f.by_tile.insert(tile.tile, i).is_none(), "tile {} re-baked twice in one patch", tile.tile);
            f.entries.push(tile.entry_at(at));
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.figures().entries.len()
    }

    pub(crate) fn contains(&self, tile: TileAddress) -> bool {
        self.figures().by_tile.contains_key(&tile)
    }

    /// The tiles, in ascending address order.
    pub(crate) fn tiles(&self) -> Vec<TileAddress> {
        self.figures().by_tile.keys().copied().collect()
    }

    /// The geometric error recorded for `tile`, if it was re-baked.
    pub(crate) fn geometric_error(&self, tile: TileAddress) -> Option<f32> {
        let f = self.figures();
        f.by_tile.get(&tile).map(|&i| f.entries[i].geometric_error)
    }

    /// `tile`'s payload, read back from the scratch file.
    pub(crate) fn payload_of(&self, tile: TileAddress) -> Result<Vec<u8>, BakeError> {
        let entry = self.entry_of(tile);
        self.read(&entry).map_err(scratch_error(&self.beside))
    }

    /// `tile` decoded from its payload.
    pub(crate) fn decode(&self, tile: TileAddress, codec: Codec) -> Result<DecodedTile, BakeError> {
        let entry = self.entry_of(tile);
        let bytes = self.read(&entry).map_err(scratch_error(&self.beside))?;
        Ok(decode_tile(&IndexEntry { payload_offset: 0, ..entry }, codec, &bytes, 0)?)
    }

    /// `tile`'s index entry, its `payload_offset` its place in the scratch file.
    pub(crate) fn entry_of(&self, tile: TileAddress) -> IndexEntry {
        let f = self.figures();
        f.entries[f.by_tile[&tile]]
    }

    fn read(&self, entry: &IndexEntry) -> std::io::Result<Vec<u8>> {
        let mut bytes = vec![0u8; entry.payload_length as usize];
        self.file.read_exact_at(&mut bytes, entry.payload_offset)?;
        Ok(bytes)
    }
}

impl PatchTiles for SpilledTiles {
    fn count(&self) -> usize {
        self.len()
    }

    fn entry(&self, i: usize) -> IndexEntry {
        self.figures().entries[i]
    }

    fn payload(&self, i: usize) -> std::io::Result<Vec<u8>> {
        let entry = self.figures().entries[i];
        self.read(&entry)
    }
}

fn scratch_error(pack: &Path) -> impl Fn(std::io::Error) -> BakeError {
    let path = pack.to_owned();
    move |e| BakeError::Io { path: path.clone(), doing: "the patch's scratch file beside it", cause: e.to_string() }
}
