//! The paged index (versions 2 and 3): a root directory, directory pages
//! and leaf pages, all placed by the tile count alone.
//!
//! The key decision: pages are fixed-size runs of the key-ordered entry
//! list (1,024 entries a leaf, 4,096 leaf references a directory page), so
//! every page's offset and length follow from `tile_count` and nothing
//! else. A reference carries only what cannot be derived (the page's first
//! key and its checksum), the layout is a pure function of the tile set
//! (resume, patches and sharded bakes keep their byte-identical bytes), and
//! a lookup reads the root (held since open), one directory page and one
//! leaf page. Empty subtrees have no entries, so they cost no bytes. The
//! root is capped at 1,024 references (16 KiB), which bounds what opening
//! reads whatever the pack's size, and the tile count at 2^42.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::error::PackError;
use crate::format::{ENTRY_LENGTH, HEADER_LENGTH, IndexEntry, PackHeader, decode_entry, get_u32, get_u64};
use planet_geo::address::TileKey;

/// Entries in a full leaf page.
pub const LEAF_ENTRIES: u64 = 1024;
/// Leaf references in a full directory page.
pub const DIRECTORY_REFS: u64 = 4096;
/// The most references the root may hold.
pub const MAX_ROOT_REFS: u64 = 1024;
/// Bytes of one page reference.
pub const REF_LENGTH: usize = 16;
/// The largest tile count the layout addresses (root x directory x leaf).
pub const MAX_TILES: u64 = MAX_ROOT_REFS * DIRECTORY_REFS * LEAF_ENTRIES;

/// Where every page of an index lies, derived from the tile count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexLayout {
    pub tiles: u64,
    pub leaves: u64,
    pub directories: u64,
}

impl IndexLayout {
    /// The layout of `tiles` entries; refuses a count the root cannot hold.
    pub fn for_tiles(tiles: u64) -> Result<IndexLayout, String> {
        if tiles == 0 {
            return Err("a pack holds at least one tile".into());
        }
        if tiles > MAX_TILES {
            return Err(format!("{tiles} tiles exceed the paged index's capacity of {MAX_TILES}"));
        }
        let leaves = tiles.div_ceil(LEAF_ENTRIES);
        Ok(IndexLayout { tiles, leaves, directories: leaves.div_ceil(DIRECTORY_REFS) })
    }

    pub fn root_offset(&self) -> u64 {
        HEADER_LENGTH as u64
    }

    pub fn root_length(&self) -> u64 {
        REF_LENGTH as u64 * self.directories
    }

    /// Directory pages start right after the root.
    pub fn directory_offset(&self, k: u64) -> u64 {
        self.root_offset() + self.root_length() + REF_LENGTH as u64 * DIRECTORY_REFS * k
    }

    /// Leaf references in directory page `k`.
    pub fn directory_refs(&self, k: u64) -> u64 {
        (self.leaves - k * DIRECTORY_REFS).min(DIRECTORY_REFS)
    }

    /// Leaf pages start after all directory pages (one reference per leaf).
    pub fn leaf_offset(&self, m: u64) -> u64 {
        self.root_offset()
            + self.root_length()
            + REF_LENGTH as u64 * self.leaves
            + ENTRY_LENGTH as u64 * LEAF_ENTRIES * m
    }

    /// Entries in leaf page `m`.
    pub fn leaf_entries(&self, m: u64) -> u64 {
        (self.tiles - m * LEAF_ENTRIES).min(LEAF_ENTRIES)
    }

    /// The end of the index region: where payloads begin.
    pub fn end(&self) -> u64 {
        self.leaf_offset(0) + ENTRY_LENGTH as u64 * self.tiles
    }

    /// Bytes of the whole index region (root, directories, leaves).
    pub fn bytes(&self) -> u64 {
        self.end() - self.root_offset()
    }
}

/// A reference to a page: its first key, entry count and checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRef {
    pub first_key: TileKey,
    pub count: u32,
    pub checksum: u32,
}

pub fn encode_refs(refs: &[PageRef]) -> Vec<u8> {
    let mut b = Vec::with_capacity(refs.len() * REF_LENGTH);
    for r in refs {
        b.extend_from_slice(&r.first_key.raw().to_le_bytes());
        b.extend_from_slice(&r.count.to_le_bytes());
        b.extend_from_slice(&r.checksum.to_le_bytes());
    }
    b
}

/// Which page a reference list came from, for errors.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RefPage {
    Root,
    Directory(u64),
}

/// Decodes and validates a reference list at `offset`: keys valid and
/// strictly ascending, each `count` as the layout derives it
/// (`expected(i)`), the first key `first` when the parent names one and
/// every key below `next`, the parent's bound.
pub(crate) fn decode_refs(
    b: &[u8],
    offset: u64,
    page: RefPage,
    expected: impl Fn(u64) -> u64,
    bounds: (Option<TileKey>, Option<TileKey>),
) -> Result<Vec<PageRef>, PackError> {
    let what = match page {
        RefPage::Root => "root directory".to_owned(),
        RefPage::Directory(k) => format!("directory page {k}"),
    };
    let mut refs: Vec<PageRef> = Vec::with_capacity(b.len() / REF_LENGTH);
    for (i, raw) in b.chunks_exact(REF_LENGTH).enumerate() {
        let at = offset + (i * REF_LENGTH) as u64;
        let bad = |reason: String| PackError::IndexPage { page: what.clone(), offset: at, reason };
        let key = TileKey::from_raw(get_u64(raw, 0))
            .map_err(|e| bad(format!("reference {i}: {:#018x} is not a tile key: {e}", get_u64(raw, 0))))?;
        let count = get_u32(raw, 8);
        if u64::from(count) != expected(i as u64) {
            return Err(bad(format!("reference {i}: count {count}, the layout says {}", expected(i as u64))));
        }
        if let Some(previous) = refs.last()
            && previous.first_key >= key
        {
            return Err(bad(format!("reference {i}: first key {} does not ascend", key.address())));
        }
        if i == 0
            && let Some(first) = bounds.0
            && key != first
        {
            return Err(bad(format!("first key {} differs from the parent's {}", key.address(), first.address())));
        }
        if let Some(next) = bounds.1
            && key >= next
        {
            return Err(bad(format!(
                "reference {i}: key {} is not below the next page's {}",
                key.address(),
                next.address()
            )));
        }
        refs.push(PageRef { first_key: key, count, checksum: get_u32(raw, 12) });
    }
    Ok(refs)
}

/// A leaf page's place: its number, reference, and the first key of the
/// page after it (the bound its last entry stays below).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafPlace {
    pub(crate) number: u64,
    pub(crate) reference: PageRef,
    pub(crate) next: Option<TileKey>,
}

/// Decodes and validates a whole leaf page: its checksum, every entry's
/// fields, strictly ascending keys inside its reference's bounds, and no two
/// payloads of the page overlapping.
pub(crate) fn decode_leaf(
    b: &[u8],
    layout: &IndexLayout,
    header: &PackHeader,
    place: LeafPlace,
) -> Result<Vec<IndexEntry>, PackError> {
    let offset = layout.leaf_offset(place.number);
    let computed = crc32fast::hash(b);
    if computed != place.reference.checksum {
        return Err(PackError::PageChecksum {
            page: format!("leaf page {}", place.number),
            offset,
            stored: place.reference.checksum,
            computed,
        });
    }
    let first_entry = place.number * LEAF_ENTRIES;
    let mut entries: Vec<IndexEntry> = Vec::with_capacity(b.len() / ENTRY_LENGTH);
    for (i, raw) in b.chunks_exact(ENTRY_LENGTH).enumerate() {
        let n = first_entry + i as u64;
        let at = offset + (i * ENTRY_LENGTH) as u64;
        let entry = decode_entry(raw, n, at, header)?;
        let tile = entry.tile();
        match entries.last() {
            Some(previous) if entry.key == previous.key => {
                return Err(PackError::DuplicateKey { entry: n, offset: at, tile });
            }
            Some(previous) if entry.key < previous.key => {
                return Err(PackError::IndexOrder { entry: n, offset: at, tile, previous: previous.tile() });
            }
            None if entry.key != place.reference.first_key => {
                return Err(PackError::IndexPage {
                    page: format!("leaf page {}", place.number),
                    offset: at,
                    reason: format!(
                        "first tile {tile} differs from the reference's {}",
                        place.reference.first_key.address()
                    ),
                });
            }
            _ => {}
        }
        if let Some(next) = place.next
            && entry.key >= next
        {
            return Err(PackError::IndexOrder { entry: n, offset: at, tile, previous: next.address() });
        }
        entries.push(entry);
    }
    check_no_overlap(&entries, |i| (first_entry + i as u64, offset + (i * ENTRY_LENGTH) as u64))?;
    Ok(entries)
}

/// Refuses two payloads that overlap; `place(i)` names entry `i`'s number
/// and byte offset for the error.
pub(crate) fn check_no_overlap(entries: &[IndexEntry], place: impl Fn(usize) -> (u64, u64)) -> Result<(), PackError> {
    let mut by_offset: Vec<usize> = (0..entries.len()).collect();
    by_offset.sort_by_key(|&i| entries[i].payload_offset);
    for pair in by_offset.windows(2) {
        let (a, b) = (&entries[pair[0]], &entries[pair[1]]);
        if a.payload_offset + u64::from(a.payload_length) > b.payload_offset {
            let (entry, offset) = place(pair[1]);
            return Err(PackError::PayloadOverlap {
                entry,
                offset,
                tile: b.tile(),
                payload_offset: b.payload_offset,
                payload_end: b.payload_offset + u64::from(b.payload_length),
                other: a.tile(),
            });
        }
    }
    Ok(())
}

/// Writes an index into a pack file from entries arriving in key order:
/// each leaf page goes to its place in the file as soon as it is full, so a
/// writer holds one page at a time; only the references are kept (16 bytes
/// a page) for the directory pages and the root, written at `finish`. The
/// one way a pack's index is written (bake, upgrade, synthetic test packs).
#[derive(Debug)]
pub struct IndexBuilder {
    layout: IndexLayout,
    leaf: Vec<u8>,
    leaf_first: Option<TileKey>,
    leaves_done: u64,
    leaf_refs: Vec<PageRef>,
}

impl IndexBuilder {
    pub fn new(layout: IndexLayout) -> IndexBuilder {
        IndexBuilder { layout, leaf: Vec::new(), leaf_first: None, leaves_done: 0, leaf_refs: Vec::new() }
    }

    /// Adds the next entry, writing its leaf page into `file` when this
    /// entry completes one.
    pub fn push(&mut self, entry: &IndexEntry, file: &File) -> std::io::Result<()> {
        self.leaf_first.get_or_insert(entry.key);
        self.leaf.extend_from_slice(&crate::format::encode_entry(entry));
        let m = self.leaves_done;
        if self.leaf.len() as u64 == ENTRY_LENGTH as u64 * self.layout.leaf_entries(m) {
            file.write_all_at(&self.leaf, self.layout.leaf_offset(m))?;
            self.leaf_refs.push(PageRef {
                first_key: self.leaf_first.take().expect("a page has a first entry"),
                count: self.layout.leaf_entries(m) as u32,
                checksum: crc32fast::hash(&self.leaf),
            });
            self.leaf.clear();
            self.leaves_done += 1;
        }
        Ok(())
    }

    /// Writes the directory pages and the root once every entry was
    /// pushed; returns the root's checksum (the header's `root_checksum`).
    pub fn finish(self, file: &File) -> std::io::Result<u32> {
        assert_eq!(self.leaves_done, self.layout.leaves, "every entry pushed before the index is finished");
        let mut root_refs = Vec::with_capacity(self.layout.directories as usize);
        for (k, refs) in self.leaf_refs.chunks(DIRECTORY_REFS as usize).enumerate() {
            let bytes = encode_refs(refs);
            file.write_all_at(&bytes, self.layout.directory_offset(k as u64))?;
            root_refs.push(PageRef {
                first_key: refs[0].first_key,
                count: refs.len() as u32,
                checksum: crc32fast::hash(&bytes),
            });
        }
        let root = encode_refs(&root_refs);
        file.write_all_at(&root, self.layout.root_offset())?;
        Ok(crc32fast::hash(&root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_places_pages_by_count_alone() {
        let one = IndexLayout::for_tiles(1).unwrap();
        assert_eq!((one.leaves, one.directories), (1, 1));
        assert_eq!(one.end(), 256 + 16 + 16 + 40);
        let l = IndexLayout::for_tiles(5_000_000).unwrap();
        assert_eq!((l.leaves, l.directories), (4883, 2));
        assert_eq!(l.directory_refs(1), 4883 - 4096);
        assert_eq!(l.leaf_entries(4882), 5_000_000 - 4882 * 1024);
        assert_eq!(l.leaf_offset(0), 256 + 2 * 16 + 4883 * 16);
        assert!(IndexLayout::for_tiles(0).is_err());
        assert!(IndexLayout::for_tiles(MAX_TILES + 1).is_err());
        assert_eq!(IndexLayout::for_tiles(MAX_TILES).unwrap().root_length(), 16 * 1024);
    }
}
