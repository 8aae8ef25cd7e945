//! Helpers for fuzzers and tests that craft packs (feature `testing`).
//!
//! Mutated bytes almost never survive the header checksum, so a fuzzer
//! that only mutates never reaches the index rules or the payload decoder.
//! [`refresh_checksums`] recomputes every checksum a pack carries, payloads
//! and index pages (as far as its header lets it find them), so crafted files fail on the rule they
//! target rather than on the first checksum.

use crate::format::{ENTRY_LENGTH, HEADER_CHECKSUM_OFFSET, HEADER_LENGTH, get_u32, get_u64};
use crate::index::{DIRECTORY_REFS, IndexLayout, REF_LENGTH};

const TILE_COUNT: usize = 112;
const INDEX_CHECKSUM: usize = 208;

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Recomputes, in order, each payload checksum whose payload lies inside
/// the file, each leaf page's checksum in its directory reference, each
/// directory page's in its root reference and the root's in the header (as
/// far as the index lies inside the file), and the header checksum. Never
/// panics, whatever the bytes.
pub fn refresh_checksums(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LENGTH {
        return;
    }
    let layout = IndexLayout::for_tiles(get_u64(bytes, TILE_COUNT)).ok();
    if let Some(layout) = layout.filter(|l| l.end() <= bytes.len() as u64) {
        for k in 0..layout.tiles as usize {
            let at = layout.leaf_offset(0) as usize + k * ENTRY_LENGTH;
            let (offset, length) = (get_u64(bytes, at + 8), u64::from(get_u32(bytes, at + 16)));
            if let Some(payload_end) = offset.checked_add(length).filter(|&e| e <= bytes.len() as u64) {
                let crc = crc32fast::hash(&bytes[offset as usize..payload_end as usize]);
                put_u32(bytes, at + 20, crc);
            }
        }
        for m in 0..layout.leaves {
            let at = layout.leaf_offset(m) as usize;
            let crc = crc32fast::hash(&bytes[at..at + layout.leaf_entries(m) as usize * ENTRY_LENGTH]);
            let reference =
                layout.directory_offset(m / DIRECTORY_REFS) as usize + (m % DIRECTORY_REFS) as usize * REF_LENGTH;
            put_u32(bytes, reference + 12, crc);
        }
        for k in 0..layout.directories {
            let at = layout.directory_offset(k) as usize;
            let crc = crc32fast::hash(&bytes[at..at + layout.directory_refs(k) as usize * REF_LENGTH]);
            put_u32(bytes, layout.root_offset() as usize + k as usize * REF_LENGTH + 12, crc);
        }
        let root = layout.root_offset() as usize;
        let crc = crc32fast::hash(&bytes[root..root + layout.root_length() as usize]);
        put_u32(bytes, INDEX_CHECKSUM, crc);
    }
    let crc = crc32fast::hash(&bytes[..HEADER_CHECKSUM_OFFSET]);
    put_u32(bytes, HEADER_CHECKSUM_OFFSET, crc);
}

/// Writes a synthetic version 4 pack of the first `n` tiles in key order
/// (every tile of depth 0, then depth 1, ...) to `path`, each with a
/// distinct 9-byte payload that is not a tile (never decode one): the large
/// end of the index benches and tests, where what matters is the index, not
/// the ground. Streams: one leaf page and the page references in memory.
pub fn write_synthetic_index_pack(path: &std::path::Path, n: u64) -> Result<u64, crate::PackError> {
    use crate::format::{Codec, Coverage, IndexEntry, PackHeader, PatchHistory, encode_header};
    use crate::index::IndexBuilder;
    use planet_geo::address::TileKey;
    use planet_geo::body::Body;
    use std::io::{BufWriter, Seek, SeekFrom, Write};
    use std::os::unix::fs::FileExt;

    let layout = IndexLayout::for_tiles(n).map_err(crate::PackError::BadSpec)?;
    let payload_length = crate::format::MIN_PAYLOAD_LENGTH;
    let keys = (0u64..=28).flat_map(|depth| {
        (0u64..6).flat_map(move |face| (0u64..1 << (2 * depth)).map(move |h| (depth << 59) | (face << 56) | h))
    });
    let io = || crate::PackError::io("writing the synthetic pack");
    let file = std::fs::File::create(path).map_err(io())?;
    let mut index = IndexBuilder::new(layout);
    let mut w = BufWriter::with_capacity(1 << 20, &file);
    w.seek(SeekFrom::Start(layout.end())).map_err(io())?;
    let mut offset = layout.end();
    let mut max_depth = 0;
    for (k, raw) in keys.take(n as usize).enumerate() {
        let key = TileKey::from_raw(raw).expect("a key of the enumeration");
        max_depth = key.address().depth();
        let mut payload = [0u8; 9];
        payload[..8].copy_from_slice(&(k as u64).to_le_bytes());
        w.write_all(&payload).map_err(io())?;
        let entry = IndexEntry {
            key,
            payload_offset: offset,
            payload_length,
            payload_checksum: crc32fast::hash(&payload),
            min_elevation: 0.0,
            max_elevation: 1.0,
            geometric_error: 1.0,
            measured: true,
            voids: false,
        };
        index.push(&entry, &file).map_err(io())?;
        offset += u64::from(payload_length);
    }
    w.flush().map_err(io())?;
    drop(w);
    let root_checksum = index.finish(&file).map_err(io())?;
    let header = PackHeader {
        codec: Codec::Heights,
        height_data_depth: max_depth,
        colour_data_depth: 0,
        max_depth,
        compression_level: 1,
        body: Body::earth(),
        tier: "synthetic".into(),
        tile_count: n,
        index_offset: layout.root_offset(),
        payload_offset: layout.end(),
        file_length: offset,
        fingerprint: [0; 32],
        coverage: Coverage::GLOBAL,
        index_checksum: root_checksum,
        patches: PatchHistory::default(),
        detail: Some(crate::format::DetailLaw::rounded(None, 17.32, f64::INFINITY)),
        sample_voids: true,
    };
    file.write_all_at(&encode_header(&header), 0).map_err(io())?;
    Ok(offset)
}
