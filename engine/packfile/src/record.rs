//! The partial file's tile records: how a writer stages a tile, and how a
//! resume reads the records back, trusting only whole ones.
//!
//! The key decision: a record carries its own CRC and is read through a
//! bounded buffer, so a torn tail (a kill mid-write) or a corrupt length is
//! "the end of the journal", never an allocation of gigabytes or a tile
//! believed half-written. docs/planetpack.md, "The partial file", has the
//! layout.

use std::io::Read;

use crate::format::{FLAG_MEASURED, FLAG_VOIDS, IndexEntry, get_u32, get_u64};
use crate::staged::Staged;
use planet_geo::address::TileKey;

pub(crate) const RECORD_MAGIC: u32 = u32::from_le_bytes(*b"TILE");
/// Record: magic u32, key u64, length u32, checksum u32, min f32, max f32,
/// error f32, measured u8, 3 zero bytes; then the payload; then a CRC-32
/// of everything before it in the record.
pub(crate) const RECORD_HEAD: usize = 36;

/// Reads the next record's bytes into `record`, as far as its head says it
/// runs: `false` (nothing to parse: a torn tail) when fewer than a head's
/// bytes remain, the head is not a record's, or the record would run past
/// the `remaining` bytes of the file or hold more than `largest_payload`
/// (a corrupt length, which must not allocate gigabytes).
pub(crate) fn read_record(
    reader: &mut impl Read,
    record: &mut Vec<u8>,
    remaining: u64,
    largest_payload: usize,
) -> std::io::Result<bool> {
    if remaining < RECORD_HEAD as u64 {
        return Ok(false);
    }
    record.resize(RECORD_HEAD, 0);
    reader.read_exact(record)?;
    if get_u32(record, 0) != RECORD_MAGIC {
        return Ok(false);
    }
    let length = get_u32(record, 12) as usize;
    let total = RECORD_HEAD + length + 4;
    if length > largest_payload || total as u64 > remaining {
        return Ok(false);
    }
    record.resize(total, 0);
    reader.read_exact(&mut record[RECORD_HEAD..])?;
    Ok(true)
}

/// One intact record at the start of `bytes` (which lies at `at` in the
/// file), or `None` if it is torn, truncated or corrupt.
pub(crate) fn parse_record(bytes: &[u8], at: u64) -> Option<(usize, Staged)> {
    if bytes.len() < RECORD_HEAD || get_u32(bytes, 0) != RECORD_MAGIC {
        return None;
    }
    let length = get_u32(bytes, 12) as usize;
    let total = RECORD_HEAD + length + 4;
    if bytes.len() < total {
        return None;
    }
    if crc32fast::hash(&bytes[..total - 4]) != get_u32(bytes, total - 4) {
        return None;
    }
    let key = TileKey::from_raw(get_u64(bytes, 4)).ok()?;
    let f32_at = |k: usize| f32::from_le_bytes(bytes[k..k + 4].try_into().expect("four bytes"));
    let checksum = get_u32(bytes, 16);
    if crc32fast::hash(&bytes[RECORD_HEAD..RECORD_HEAD + length]) != checksum {
        return None;
    }
    let entry = IndexEntry {
        key,
        payload_offset: 0,
        payload_length: length as u32,
        payload_checksum: checksum,
        min_elevation: f32_at(20),
        max_elevation: f32_at(24),
        geometric_error: f32_at(28),
        measured: bytes[32] & FLAG_MEASURED != 0,
        voids: bytes[32] & FLAG_VOIDS != 0,
    };
    Some((total, Staged { payload_at: at + RECORD_HEAD as u64, entry }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(length: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&RECORD_MAGIC.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&length.to_le_bytes());
        b.resize(RECORD_HEAD, 0);
        b
    }

    #[test]
    fn a_streamed_record_is_read_whole_and_a_torn_or_absurd_one_is_a_tail() {
        let mut record = Vec::new();
        // A whole record: head, 5 payload bytes, CRC.
        let mut whole = head(5);
        whole.extend_from_slice(&[1, 2, 3, 4, 5, 0, 0, 0, 0]);
        let remaining = whole.len() as u64;
        assert!(read_record(&mut &whole[..], &mut record, remaining, 100).unwrap());
        assert_eq!(record, whole);
        // Cut short: the file ends before the record does.
        assert!(!read_record(&mut &whole[..], &mut record, remaining - 1, 100).unwrap());
        // Shorter than a head.
        assert!(!read_record(&mut &whole[..], &mut record, 10, 100).unwrap());
        // A length beyond the codec's largest payload is corrupt, and is not
        // allocated even when the file is long enough to hold it.
        assert!(!read_record(&mut &head(u32::MAX)[..], &mut record, u64::MAX, 100).unwrap());
        assert!(record.len() <= RECORD_HEAD, "nothing beyond the head was allocated");
        // Not a record's magic.
        let mut other = whole.clone();
        other[0] ^= 1;
        assert!(!read_record(&mut &other[..], &mut record, remaining, 100).unwrap());
    }
}
