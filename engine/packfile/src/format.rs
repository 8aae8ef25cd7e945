//! The byte layout of a `.planetpack`: header and index entry encoding, and
//! the validation of each. docs/planetpack.md is the authority; every
//! constant here is named there, and the tests check the two agree through
//! the test vectors.
//!
//! Decoding is split from validating on purpose: `decode_*` only reads
//! fields, `validate_*` applies the rules, so a rule is one `if` with one
//! error and can be tested with one crafted file.
//!
//! The parts live beside this file, which re-exports them so every path
//! stays `pack::format::*`: the decoded header and its encoding in
//! `header`, its decoding and rules in `header_decode`, one index entry in
//! `entry`. Here: the constants, the field offsets (`at`), the byte
//! helpers, and the two field types the rest share ([`Codec`], [`Coverage`]).

pub use crate::entry::{IndexEntry, decode_entry, encode_entry, entry_flags};
pub use crate::header::{LastPatch, PackHeader, PatchHistory, encode_header};
pub use crate::header_decode::{decode_header, decode_header_as};
pub use crate::law::DetailLaw;
use planet_geo::address::TILE_STORED_SAMPLE_COUNT;

pub const MAGIC: [u8; 8] = *b"PLNTPACK";
/// The version a pack is written as: version 4 plus provenance per sample
/// (#49): a tile holding voids keeps its measured samples measured, and a
/// void mask after its payload's blocks says which samples were filled.
pub const VERSION: u16 = 5;
/// Version 2 plus the detail law of ground shaped like the real place (#49:
/// a cell's relief, the gain rolled off below the data), provenance per
/// tile: a tile with any void sample is not measured. Still read as it is
/// (its tiles carry no void mask); `planet-pack upgrade` of a version 2 or
/// 3 pack writes it, and a region patch keeps it.
pub const VERSION_TILE_PROVENANCE: u16 = 4;
/// Version 2 plus the law of the detail before #49 (white noise, a cell's
/// twist, the gain unbent): still read, its law set aside and measured
/// again when it is opened, as a version 2 pack's is (applied to the new
/// detail, it drew twice the relief it was measured for), and made
/// version 4 by `planet-pack upgrade` or by its first region patch.
pub const VERSION_TWIST_LAW: u16 = 3;
/// The paged index without a recorded detail law: still read (its law is
/// measured when it is opened), and made version 4 by `planet-pack upgrade`
/// or by its first region patch.
pub const VERSION_WITHOUT_DETAIL_LAW: u16 = 2;
/// The flat-index version `planet-pack upgrade` converts from.
pub const VERSION_FLAT_INDEX: u16 = 1;
pub const HEADER_LENGTH: usize = 256;
pub const ENTRY_LENGTH: usize = 40;
/// Byte offset of the header checksum (the last four header bytes).
pub const HEADER_CHECKSUM_OFFSET: usize = 252;
pub const NAME_LENGTH: usize = 32;
pub const FINGERPRINT_LENGTH: usize = 32;
/// Compression code 1: one zstd frame per tile.
pub const COMPRESSION_ZSTD: u8 = 1;
pub const MIN_COMPRESSION_LEVEL: i8 = -7;
pub const MAX_COMPRESSION_LEVEL: i8 = 22;
/// Smallest legal zstd frame: magic (4) + frame header (2) + block header (3).
pub const MIN_PAYLOAD_LENGTH: u32 = 9;

/// Header code of `detail_exponent` for "the data gave no exponent": the
/// default octave gain `2^-0.8`.
pub const DETAIL_EXPONENT_DEFAULT: u8 = 255;
/// The largest first-octave amplitude a law may record (metres of octave
/// amplitude per metre of twist).
pub const MAX_FIRST_OCTAVE: f32 = 120.0;

/// Entry flag bit 0: the tile's samples on the data's footprint were
/// measured at this tile's depth, voids aside in version 5 (clear:
/// resampled from an ancestor, or invented).
pub const FLAG_MEASURED: u8 = 1;
/// Entry flag bit 1 (version 5): the payload ends with a void block: how
/// the bake filled voids, then a mask of one bit per stored sample, set
/// where the sample was a void it filled.
pub const FLAG_VOIDS: u8 = 2;
/// Bytes of a void block: the fill code (u8), the void value (f32), and the
/// mask, one bit per stored sample, least significant first.
pub const VOID_BLOCK_LENGTH: usize = 5 + TILE_STORED_SAMPLE_COUNT.div_ceil(8);

/// What a tile's payload holds. Each codec is the previous plus one block.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Codec {
    /// u16 elevations as fractions of the tile's own min..max range.
    Heights = 0,
    /// + one surface-class byte per sample.
    HeightsClasses = 1,
    /// + three colour bytes (R, G, B) per sample.
    HeightsClassesColour = 2,
}

impl Codec {
    pub fn from_code(code: u8) -> Option<Codec> {
        match code {
            0 => Some(Codec::Heights),
            1 => Some(Codec::HeightsClasses),
            2 => Some(Codec::HeightsClassesColour),
            _ => None,
        }
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn has_classes(self) -> bool {
        self >= Codec::HeightsClasses
    }

    pub fn has_colour(self) -> bool {
        self >= Codec::HeightsClassesColour
    }

    /// Length of the decompressed payload.
    pub fn decoded_length(self) -> usize {
        let n = TILE_STORED_SAMPLE_COUNT;
        2 * n + if self.has_classes() { n } else { 0 } + if self.has_colour() { 3 * n } else { 0 }
    }

    /// Length of the decompressed payload of a tile with or without a void
    /// mask ([`FLAG_VOIDS`]).
    pub fn decoded_length_with(self, voids: bool) -> usize {
        self.decoded_length() + if voids { VOID_BLOCK_LENGTH } else { 0 }
    }

    /// Legal compressed payload lengths: a zstd frame no longer than zstd's
    /// bound for the decoded length.
    pub fn payload_length_range(self) -> (u32, u32) {
        self.payload_length_range_with(false)
    }

    /// [`Codec::payload_length_range`] of a tile with or without a void mask.
    pub fn payload_length_range_with(self, voids: bool) -> (u32, u32) {
        let bound = zstd::zstd_safe::compress_bound(self.decoded_length_with(voids));
        (MIN_PAYLOAD_LENGTH, bound as u32)
    }
}

/// The geographic box a pack's data covers, in degrees. `west > east` means
/// the box crosses the antimeridian. The one latitude/longitude box type:
/// a pack's coverage, a patch's region, a raster's extent and every report
/// of them (it serialises as `{south, west, north, east}`).
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub struct Coverage {
    pub south: f64,
    pub west: f64,
    pub north: f64,
    pub east: f64,
}

impl Coverage {
    pub const GLOBAL: Coverage = Coverage { south: -90.0, west: -180.0, north: 90.0, east: 180.0 };

    pub fn validate(&self) -> Result<(), String> {
        let finite = [self.south, self.west, self.north, self.east].iter().all(|v| v.is_finite());
        if !finite {
            return Err("coverage contains a non-finite value".into());
        }
        if !(-90.0..=90.0).contains(&self.south) || !(-90.0..=90.0).contains(&self.north) || self.south >= self.north {
            return Err(format!(
                "latitudes must satisfy -90 <= south < north <= 90, got {} .. {}",
                self.south, self.north
            ));
        }
        if !(-180.0..=180.0).contains(&self.west) || !(-180.0..=180.0).contains(&self.east) || self.west == self.east {
            return Err(format!("longitudes must lie in -180..=180 and differ, got {} .. {}", self.west, self.east));
        }
        Ok(())
    }

    pub fn is_global(&self) -> bool {
        *self == Coverage::GLOBAL
    }

    /// True if the point (degrees) lies in the box. The longitude may be in
    /// any convention (`-352` is `8`): a camera or a query given past
    /// +-180 must find the same pack a ray or a tile direction finds there.
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        if lat < self.south || lat > self.north {
            return false;
        }
        // Only a longitude past +-180 is turned, so both 180 and -180 keep
        // meaning the edge they name.
        let lon = if (-180.0..=180.0).contains(&lon) { lon } else { (lon + 180.0).rem_euclid(360.0) - 180.0 };
        if self.west <= self.east {
            (self.west..=self.east).contains(&lon)
        } else {
            lon >= self.west || lon <= self.east
        }
    }
}

pub(super) fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
pub(super) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
pub(super) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub(super) fn put_f64(b: &mut [u8], at: usize, v: f64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("two bytes"))
}
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}
pub(crate) fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}
pub(super) fn get_f64(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}
pub(super) fn get_f32(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

/// Checks a name fits the 32-byte NUL-padded field: 1..=32 bytes of UTF-8
/// with no NUL.
pub fn validate_name(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > NAME_LENGTH || name.contains('\0') {
        return Err(format!("{what} '{name}' must be 1..=32 bytes of UTF-8 without NUL"));
    }
    Ok(())
}

/// Header field offsets (see docs/planetpack.md, "Header").
pub(crate) mod at {
    pub const VERSION: usize = 8;
    pub const HEADER_LENGTH: usize = 10;
    pub const CORE_SAMPLES: usize = 12;
    pub const APRON: usize = 14;
    pub const CODEC: usize = 15;
    pub const COMPRESSION: usize = 16;
    pub const HEIGHT_DEPTH: usize = 17;
    pub const COLOUR_DEPTH: usize = 18;
    pub const MAX_DEPTH: usize = 19;
    pub const COMPRESSION_LEVEL: usize = 20;
    /// Version 2: bytes 21..24 reserved (zero).
    pub const RESERVED_A: usize = 21;
    pub const DETAIL_EXPONENT: usize = 21;
    pub const DETAIL_TWIST_CAP: usize = 22;
    pub const RADII: usize = 24;
    pub const BODY: usize = 48;
    pub const TIER: usize = 80;
    pub const TILE_COUNT: usize = 112;
    pub const INDEX_OFFSET: usize = 120;
    pub const PAYLOAD_OFFSET: usize = 128;
    pub const FILE_LENGTH: usize = 136;
    pub const FINGERPRINT: usize = 144;
    pub const COVERAGE: usize = 176;
    pub const INDEX_CHECKSUM: usize = 208;
    pub const PATCH_COUNT: usize = 212;
    pub const LAST_PATCH_REGION: usize = 216;
    pub const LAST_PATCH_INPUTS: usize = 232;
    /// Version 2: bytes 248..252 reserved (zero).
    pub const RESERVED: usize = 248;
    pub const DETAIL_FIRST_OCTAVE: usize = 248;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_lengths_match_the_spec() {
        // docs/planetpack.md, "Payloads".
        assert_eq!(Codec::Heights.decoded_length(), 34_322);
        assert_eq!(Codec::HeightsClasses.decoded_length(), 51_483);
        assert_eq!(Codec::HeightsClassesColour.decoded_length(), 102_966);
        assert_eq!(Codec::Heights.payload_length_range(), (9, 34_503));
        assert_eq!(Codec::HeightsClasses.payload_length_range(), (9, 51_722));
        assert_eq!(Codec::HeightsClassesColour.payload_length_range(), (9, 103_381));
        // With a void block (docs/planetpack.md, "Payloads").
        assert_eq!(VOID_BLOCK_LENGTH, 2_151);
        assert_eq!(Codec::Heights.payload_length_range_with(true), (9, 36_661));
        assert_eq!(Codec::HeightsClasses.payload_length_range_with(true), (9, 53_880));
        assert_eq!(Codec::HeightsClassesColour.payload_length_range_with(true), (9, 105_539));
    }

    #[test]
    fn checksum_is_crc32_iso_hdlc() {
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
    }
}
