//! One index entry: its decoded fields, its 40 bytes, and the rules one
//! entry must keep on its own.
//!
//! The key decision: an entry is decoded and validated in isolation
//! (its key, elevations, error, flags, payload length and bounds against
//! the header); order, overlap and placement need all entries, so the
//! index's reader checks them, not this.

use crate::error::PackError;
use crate::format::{ENTRY_LENGTH, FLAG_MEASURED, FLAG_VOIDS, PackHeader, get_f32, get_u32, get_u64, put_u32, put_u64};
use planet_geo::address::{TileAddress, TileKey};

/// One decoded index entry.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct IndexEntry {
    pub key: TileKey,
    pub payload_offset: u64,
    pub payload_length: u32,
    pub payload_checksum: u32,
    /// Elevation range of the tile's samples, apron included (metres).
    pub min_elevation: f32,
    pub max_elevation: f32,
    /// How far the surface this tile draws departs from the finest data it
    /// stands for (metres).
    pub geometric_error: f32,
    /// Every sample measured at this depth (not resampled or invented),
    /// voids aside where the pack keeps them per sample (version 5).
    pub measured: bool,
    /// The payload ends with a void mask (version 5): some samples were
    /// voids the bake filled.
    pub voids: bool,
}

impl IndexEntry {
    pub fn tile(&self) -> TileAddress {
        self.key.address()
    }
}

pub fn encode_entry(e: &IndexEntry) -> [u8; ENTRY_LENGTH] {
    let mut b = [0u8; ENTRY_LENGTH];
    put_u64(&mut b, 0, e.key.raw());
    put_u64(&mut b, 8, e.payload_offset);
    put_u32(&mut b, 16, e.payload_length);
    put_u32(&mut b, 20, e.payload_checksum);
    b[24..28].copy_from_slice(&e.min_elevation.to_le_bytes());
    b[28..32].copy_from_slice(&e.max_elevation.to_le_bytes());
    b[32..36].copy_from_slice(&e.geometric_error.to_le_bytes());
    b[36] = entry_flags(e.measured, e.voids);
    b
}

/// An entry's flags byte (also a staged tile record's).
pub fn entry_flags(measured: bool, voids: bool) -> u8 {
    (if measured { FLAG_MEASURED } else { 0 }) | (if voids { FLAG_VOIDS } else { 0 })
}

/// Decodes and validates one entry in isolation (order, overlap and
/// placement are checked by the caller, which sees all entries).
pub fn decode_entry(b: &[u8], entry: u64, offset: u64, header: &PackHeader) -> Result<IndexEntry, PackError> {
    let raw = get_u64(b, 0);
    let key = TileKey::from_raw(raw).map_err(|_| PackError::InvalidKey { entry, offset, raw })?;
    let tile = key.address();
    let bad = |field: &'static str, reason: String| PackError::EntryField { entry, offset, tile, field, reason };
    if tile.depth() > header.max_depth {
        return Err(bad(
            "key",
            format!("depth {} is deeper than the header's max_depth {}", tile.depth(), header.max_depth),
        ));
    }
    let e = IndexEntry {
        key,
        payload_offset: get_u64(b, 8),
        payload_length: get_u32(b, 16),
        payload_checksum: get_u32(b, 20),
        min_elevation: get_f32(b, 24),
        max_elevation: get_f32(b, 28),
        geometric_error: get_f32(b, 32),
        measured: b[36] & FLAG_MEASURED != 0,
        voids: b[36] & FLAG_VOIDS != 0,
    };
    if !(e.min_elevation.is_finite() && e.max_elevation.is_finite()) || e.min_elevation > e.max_elevation {
        return Err(bad(
            "min/max elevation",
            format!("{} .. {} must be finite with min <= max", e.min_elevation, e.max_elevation),
        ));
    }
    if !(e.geometric_error.is_finite() && e.geometric_error >= 0.0) {
        return Err(bad("geometric_error", format!("{} must be finite and >= 0", e.geometric_error)));
    }
    let defined = if header.sample_voids { FLAG_MEASURED | FLAG_VOIDS } else { FLAG_MEASURED };
    if b[36] & !defined != 0 || b[37..40].iter().any(|&c| c != 0) {
        return Err(bad(
            "flags",
            format!(
                "{:#04x} sets undefined bits for version {} or reserved bytes are not zero",
                b[36],
                header.version()
            ),
        ));
    }
    let (min, max) = header.codec.payload_length_range_with(e.voids);
    if !(min..=max).contains(&e.payload_length) {
        return Err(PackError::PayloadLength {
            entry,
            offset,
            tile,
            length: e.payload_length,
            codec: header.codec.code(),
            min,
            max,
        });
    }
    let end = e.payload_offset.saturating_add(u64::from(e.payload_length));
    if e.payload_offset < header.payload_offset || end > header.file_length {
        return Err(PackError::PayloadOutOfBounds {
            entry,
            offset,
            tile,
            payload_offset: e.payload_offset,
            payload_end: end,
            region_start: header.payload_offset,
            region_end: header.file_length,
        });
    }
    Ok(e)
}
