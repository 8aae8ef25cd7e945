//! Helpers for fuzzers and tests that craft packs.
//!
//! Mutated bytes almost never survive the header checksum, so a fuzzer
//! that only mutates never reaches the index rules or the payload decoder.
//! [`refresh_checksums`] recomputes every checksum a pack carries (as far as
//! its header lets it find them), so crafted files fail on the rule they
//! target rather than on the first checksum.

use crate::pack::format::{ENTRY_LENGTH, HEADER_CHECKSUM_OFFSET, HEADER_LENGTH, get_u32, get_u64};

const TILE_COUNT: usize = 112;
const INDEX_CHECKSUM: usize = 208;

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Recomputes, in order, each payload checksum whose payload lies inside
/// the file, the index checksum (if the index lies inside the file), and the
/// header checksum. Never panics, whatever the bytes.
pub fn refresh_checksums(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LENGTH {
        return;
    }
    let count = get_u64(bytes, TILE_COUNT);
    let index_end = count.checked_mul(ENTRY_LENGTH as u64).and_then(|n| n.checked_add(HEADER_LENGTH as u64));
    if let Some(end) = index_end.filter(|&end| end <= bytes.len() as u64) {
        for k in 0..count as usize {
            let at = HEADER_LENGTH + k * ENTRY_LENGTH;
            let (offset, length) = (get_u64(bytes, at + 8), u64::from(get_u32(bytes, at + 16)));
            if let Some(payload_end) = offset.checked_add(length).filter(|&e| e <= bytes.len() as u64) {
                let crc = crc32fast::hash(&bytes[offset as usize..payload_end as usize]);
                put_u32(bytes, at + 20, crc);
            }
        }
        let crc = crc32fast::hash(&bytes[HEADER_LENGTH..end as usize]);
        put_u32(bytes, INDEX_CHECKSUM, crc);
    }
    let crc = crc32fast::hash(&bytes[..HEADER_CHECKSUM_OFFSET]);
    put_u32(bytes, HEADER_CHECKSUM_OFFSET, crc);
}
