//! The byte layout of a `.planetpack`: header and index entry encoding, and
//! the validation of each. docs/planetpack.md is the authority; every
//! constant here is named there, and the tests check the two agree through
//! the test vectors.
//!
//! Decoding is split from validating on purpose: `decode_*` only reads
//! fields, `validate_*` applies the rules, so a rule is one `if` with one
//! error and can be tested with one crafted file.

use crate::geo::address::{MAX_DEPTH, TILE_APRON, TILE_CORE_SAMPLES, TILE_STORED_SAMPLE_COUNT, TileAddress, TileKey};
use crate::geo::body::{Body, Ellipsoid};
use crate::pack::error::PackError;
pub use crate::pack::law::DetailLaw;
use crate::pack::law::{bf16_bits, bf16_value};

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

/// The decoded header.
#[derive(Clone, PartialEq, Debug)]
pub struct PackHeader {
    pub codec: Codec,
    pub height_data_depth: u8,
    pub colour_data_depth: u8,
    pub max_depth: u8,
    /// The zstd level the payloads were compressed at, so a region patch
    /// writes the bytes a full bake would.
    pub compression_level: i8,
    pub body: Body,
    pub tier: String,
    pub tile_count: u64,
    pub index_offset: u64,
    pub payload_offset: u64,
    pub file_length: u64,
    pub fingerprint: [u8; FINGERPRINT_LENGTH],
    pub coverage: Coverage,
    /// CRC-32 of the root directory (version 1: of the whole flat index).
    pub index_checksum: u32,
    /// Region patches applied since the bake, and the last one.
    pub patches: PatchHistory,
    /// The law the pack's synthesized detail follows, recorded at the bake
    /// (version 4); `None` in a version 2 pack and a version 3 one (whose
    /// law was for the detail before #49), whose law its reader measures.
    pub detail: Option<DetailLaw>,
    /// Provenance per sample (version 5): a tile's `measured` flag leaves
    /// its voids aside and its void mask names them. False in versions 2
    /// to 4, whose tiles with voids are not measured and carry no mask.
    pub sample_voids: bool,
}

impl PackHeader {
    /// The version this header is written as: 5 with void masks (its law
    /// bytes zero until the bake records the law), 4 with a detail law but
    /// no masks, 2 with neither.
    pub fn version(&self) -> u16 {
        match (self.sample_voids, self.detail.is_some()) {
            (true, _) => VERSION,
            (false, true) => VERSION_TILE_PROVENANCE,
            (false, false) => VERSION_WITHOUT_DETAIL_LAW,
        }
    }
}

/// What a pack says of the region patches it has had: how many, and where
/// and from which inputs the last one came. The fingerprint (chained by
/// each patch) is the authority on identity; this is the part a person can
/// read.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct PatchHistory {
    /// Patches applied since the bake (0: as baked).
    pub count: u32,
    /// The last patch, when there was one.
    pub last: Option<LastPatch>,
}

/// The last region patch of a pack.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct LastPatch {
    /// The `--region` box, degrees (stored as f32: about a metre).
    pub region: Coverage,
    /// The first 16 bytes of the SHA-256 digest of the patch's inputs (the
    /// rasters' bytes and the flags that shape them).
    pub inputs: [u8; 16],
}

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

fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn put_f64(b: &mut [u8], at: usize, v: f64) {
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
fn get_f64(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}
fn get_f32(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

fn put_name(b: &mut [u8], at: usize, name: &str) {
    b[at..at + name.len()].copy_from_slice(name.as_bytes());
}

/// Checks a name fits the 32-byte NUL-padded field: 1..=32 bytes of UTF-8
/// with no NUL.
pub fn validate_name(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > NAME_LENGTH || name.contains('\0') {
        return Err(format!("{what} '{name}' must be 1..=32 bytes of UTF-8 without NUL"));
    }
    Ok(())
}

fn get_name(b: &[u8], at: usize, field: &'static str) -> Result<String, PackError> {
    let raw = &b[at..at + NAME_LENGTH];
    let end = raw.iter().position(|&c| c == 0).unwrap_or(NAME_LENGTH);
    let bad = |reason: String| PackError::HeaderField { field, offset: at as u64, reason };
    if raw[end..].iter().any(|&c| c != 0) {
        return Err(bad("bytes after the terminating NUL are not zero".into()));
    }
    let name = std::str::from_utf8(&raw[..end]).map_err(|e| bad(format!("not UTF-8: {e}")))?;
    if name.is_empty() {
        return Err(bad("empty".into()));
    }
    Ok(name.to_owned())
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

/// Encodes a header, computing its checksum.
pub fn encode_header(h: &PackHeader) -> [u8; HEADER_LENGTH] {
    let mut b = [0u8; HEADER_LENGTH];
    b[..8].copy_from_slice(&MAGIC);
    put_u16(&mut b, at::VERSION, h.version());
    put_u16(&mut b, at::HEADER_LENGTH, HEADER_LENGTH as u16);
    put_u16(&mut b, at::CORE_SAMPLES, TILE_CORE_SAMPLES as u16);
    b[at::APRON] = TILE_APRON as u8;
    b[at::CODEC] = h.codec.code();
    b[at::COMPRESSION] = COMPRESSION_ZSTD;
    b[at::HEIGHT_DEPTH] = h.height_data_depth;
    b[at::COLOUR_DEPTH] = h.colour_data_depth;
    b[at::MAX_DEPTH] = h.max_depth;
    b[at::COMPRESSION_LEVEL] = h.compression_level as u8;
    let radii = h.body.ellipsoid().radii();
    for (k, r) in radii.to_array().into_iter().enumerate() {
        put_f64(&mut b, at::RADII + 8 * k, r);
    }
    put_name(&mut b, at::BODY, h.body.name());
    put_name(&mut b, at::TIER, &h.tier);
    put_u64(&mut b, at::TILE_COUNT, h.tile_count);
    put_u64(&mut b, at::INDEX_OFFSET, h.index_offset);
    put_u64(&mut b, at::PAYLOAD_OFFSET, h.payload_offset);
    put_u64(&mut b, at::FILE_LENGTH, h.file_length);
    b[at::FINGERPRINT..at::FINGERPRINT + FINGERPRINT_LENGTH].copy_from_slice(&h.fingerprint);
    let c = h.coverage;
    for (k, v) in [c.south, c.west, c.north, c.east].into_iter().enumerate() {
        put_f64(&mut b, at::COVERAGE + 8 * k, v);
    }
    put_u32(&mut b, at::INDEX_CHECKSUM, h.index_checksum);
    put_u32(&mut b, at::PATCH_COUNT, h.patches.count);
    if let Some(last) = h.patches.last {
        let r = last.region;
        for (k, v) in [r.south, r.west, r.north, r.east].into_iter().enumerate() {
            b[at::LAST_PATCH_REGION + 4 * k..at::LAST_PATCH_REGION + 4 * k + 4]
                .copy_from_slice(&(v as f32).to_le_bytes());
        }
        b[at::LAST_PATCH_INPUTS..at::LAST_PATCH_INPUTS + 16].copy_from_slice(&last.inputs);
    }
    if let Some(law) = h.detail {
        b[at::DETAIL_EXPONENT] = law.exponent_64ths.unwrap_or(DETAIL_EXPONENT_DEFAULT);
        put_u16(&mut b, at::DETAIL_TWIST_CAP, bf16_bits(law.twist_cap));
        b[at::DETAIL_FIRST_OCTAVE..at::DETAIL_FIRST_OCTAVE + 4].copy_from_slice(&law.first_octave.to_le_bytes());
    }
    let checksum = crc32fast::hash(&b[..HEADER_CHECKSUM_OFFSET]);
    put_u32(&mut b, HEADER_CHECKSUM_OFFSET, checksum);
    b
}

/// Decodes and validates a header (version 5, version 4 without void masks,
/// version 3 with its law set aside, or version 2 without a detail law)
/// against the length of the file it came from. Checks run in the order
/// docs/planetpack.md lists them.
pub fn decode_header(bytes: &[u8], file_length: u64) -> Result<PackHeader, PackError> {
    let found = bytes.get(at::VERSION..at::VERSION + 2).map(|v| get_u16(v, 0));
    let version = match found {
        Some(v @ (VERSION_WITHOUT_DETAIL_LAW | VERSION_TWIST_LAW | VERSION_TILE_PROVENANCE)) => v,
        _ => VERSION,
    };
    decode_header_as(bytes, file_length, version)
}

/// Decodes a header of `version` (5 to 2, or the flat-index version 1 that
/// `planet-pack upgrade` reads); the index's length and the detail law are
/// the rules that differ between them.
pub fn decode_header_as(bytes: &[u8], file_length: u64, version: u16) -> Result<PackHeader, PackError> {
    if bytes.len() < HEADER_LENGTH {
        return Err(PackError::Truncated { section: "header", start: 0, end: HEADER_LENGTH as u64, file_length });
    }
    let b = &bytes[..HEADER_LENGTH];
    if b[..8] != MAGIC {
        return Err(PackError::BadMagic { found: b[..8].try_into().expect("eight bytes") });
    }
    let found = get_u16(b, at::VERSION);
    if found != version {
        return Err(PackError::UnsupportedVersion { found, supported: version });
    }
    let stored = get_u32(b, HEADER_CHECKSUM_OFFSET);
    let computed = crc32fast::hash(&b[..HEADER_CHECKSUM_OFFSET]);
    if stored != computed {
        return Err(PackError::HeaderChecksum { offset: HEADER_CHECKSUM_OFFSET as u64, stored, computed });
    }
    let field = |field: &'static str, offset: usize, reason: String| PackError::HeaderField {
        field,
        offset: offset as u64,
        reason,
    };
    let header_length = get_u16(b, at::HEADER_LENGTH);
    if usize::from(header_length) != HEADER_LENGTH {
        return Err(field("header_length", at::HEADER_LENGTH, format!("{header_length}, must be {HEADER_LENGTH}")));
    }
    let (core_samples, apron) = (get_u16(b, at::CORE_SAMPLES), b[at::APRON]);
    if u32::from(core_samples) != TILE_CORE_SAMPLES || u32::from(apron) != TILE_APRON {
        return Err(PackError::GeometryMismatch { offset: at::CORE_SAMPLES as u64, core_samples, apron });
    }
    let codec = Codec::from_code(b[at::CODEC])
        .ok_or_else(|| field("codec", at::CODEC, format!("{} is not a known codec (0, 1, 2)", b[at::CODEC])))?;
    if b[at::COMPRESSION] != COMPRESSION_ZSTD {
        return Err(field(
            "compression",
            at::COMPRESSION,
            format!("{} is not a known compression (1 = zstd)", b[at::COMPRESSION]),
        ));
    }
    let (height_data_depth, colour_data_depth, max_depth) =
        (b[at::HEIGHT_DEPTH], b[at::COLOUR_DEPTH], b[at::MAX_DEPTH]);
    if max_depth > MAX_DEPTH {
        return Err(field(
            "max_depth",
            at::MAX_DEPTH,
            format!("{max_depth} exceeds the deepest addressable level {MAX_DEPTH}"),
        ));
    }
    if height_data_depth > max_depth {
        return Err(field(
            "height_data_depth",
            at::HEIGHT_DEPTH,
            format!("{height_data_depth} exceeds max_depth {max_depth}"),
        ));
    }
    if colour_data_depth > max_depth || (!codec.has_colour() && colour_data_depth != 0) {
        return Err(field(
            "colour_data_depth",
            at::COLOUR_DEPTH,
            format!(
                "{colour_data_depth} with codec {} and max_depth {max_depth} (must be 0 without colour)",
                codec.code()
            ),
        ));
    }
    let compression_level = b[at::COMPRESSION_LEVEL] as i8;
    if !(MIN_COMPRESSION_LEVEL..=MAX_COMPRESSION_LEVEL).contains(&compression_level) {
        return Err(field(
            "compression_level",
            at::COMPRESSION_LEVEL,
            format!("{compression_level} is outside zstd's {MIN_COMPRESSION_LEVEL}..={MAX_COMPRESSION_LEVEL}"),
        ));
    }
    let radii = [get_f64(b, at::RADII), get_f64(b, at::RADII + 8), get_f64(b, at::RADII + 16)];
    let ellipsoid_ok =
        Ellipsoid::new(radii[0], radii[1], radii[2]).map_err(|e| field("radii", at::RADII, e.to_string()));
    ellipsoid_ok?;
    let name = get_name(b, at::BODY, "body")?;
    let body = Body::custom(&name, radii).map_err(|e| field("radii", at::RADII, e.to_string()))?;
    let tier = get_name(b, at::TIER, "tier")?;
    let tile_count = get_u64(b, at::TILE_COUNT);
    if tile_count == 0 {
        return Err(field("tile_count", at::TILE_COUNT, "a pack holds at least one tile".into()));
    }
    let index_offset = get_u64(b, at::INDEX_OFFSET);
    if index_offset != HEADER_LENGTH as u64 {
        return Err(field("index_offset", at::INDEX_OFFSET, format!("{index_offset}, must be {HEADER_LENGTH}")));
    }
    let (expected_payload, rule) = match version {
        VERSION_FLAT_INDEX => (
            tile_count.checked_mul(ENTRY_LENGTH as u64).and_then(|n| n.checked_add(index_offset)).ok_or_else(|| {
                field("tile_count", at::TILE_COUNT, format!("{tile_count} tiles overflow the index size"))
            })?,
            "index_offset + 40 x tile_count",
        ),
        _ => {
            let layout = crate::pack::index::IndexLayout::for_tiles(tile_count)
                .map_err(|reason| field("tile_count", at::TILE_COUNT, reason))?;
            (layout.end(), "the end of the paged index for tile_count")
        }
    };
    let payload_offset = get_u64(b, at::PAYLOAD_OFFSET);
    if payload_offset != expected_payload {
        return Err(field(
            "payload_offset",
            at::PAYLOAD_OFFSET,
            format!("{payload_offset}, must be {rule} = {expected_payload}"),
        ));
    }
    let declared_length = get_u64(b, at::FILE_LENGTH);
    if declared_length < payload_offset {
        return Err(field(
            "file_length",
            at::FILE_LENGTH,
            format!("{declared_length} is before the payload region at {payload_offset}"),
        ));
    }
    if file_length < payload_offset {
        return Err(PackError::Truncated { section: "index", start: index_offset, end: payload_offset, file_length });
    }
    if file_length < declared_length {
        return Err(PackError::Truncated {
            section: "payload region",
            start: payload_offset,
            end: declared_length,
            file_length,
        });
    }
    let mut fingerprint = [0u8; FINGERPRINT_LENGTH];
    fingerprint.copy_from_slice(&b[at::FINGERPRINT..at::FINGERPRINT + FINGERPRINT_LENGTH]);
    let coverage = Coverage {
        south: get_f64(b, at::COVERAGE),
        west: get_f64(b, at::COVERAGE + 8),
        north: get_f64(b, at::COVERAGE + 16),
        east: get_f64(b, at::COVERAGE + 24),
    };
    coverage.validate().map_err(|reason| field("coverage", at::COVERAGE, reason))?;
    let patches = decode_patch_history(b)?;
    let detail = decode_detail_law(b, version)?;
    Ok(PackHeader {
        codec,
        height_data_depth,
        colour_data_depth,
        max_depth,
        compression_level,
        body,
        tier,
        tile_count,
        index_offset,
        payload_offset,
        file_length: declared_length,
        fingerprint,
        coverage,
        index_checksum: get_u32(b, at::INDEX_CHECKSUM),
        patches,
        detail,
        sample_voids: version == VERSION,
    })
}

/// Version 4's detail law; versions 1 and 2 hold zero bytes in its place,
/// and version 3's law (checked by the same rules) is set aside.
fn decode_detail_law(b: &[u8], version: u16) -> Result<Option<DetailLaw>, PackError> {
    let field = |field: &'static str, offset: usize, reason: String| PackError::HeaderField {
        field,
        offset: offset as u64,
        reason,
    };
    let law_bytes_zero =
        b[at::RESERVED_A..at::RADII].iter().chain(&b[at::RESERVED..HEADER_CHECKSUM_OFFSET]).all(|&c| c == 0);
    if version == VERSION && law_bytes_zero {
        // A version 5 pack between its assembly and the bake recording its
        // law (read as a version 2 pack's: the law measured at open).
        return Ok(None);
    }
    if version < VERSION_TWIST_LAW {
        if b[at::RESERVED_A..at::RADII].iter().any(|&c| c != 0) {
            return Err(field("reserved", at::RESERVED_A, "reserved bytes must be zero".into()));
        }
        if b[at::RESERVED..HEADER_CHECKSUM_OFFSET].iter().any(|&c| c != 0) {
            return Err(field("reserved", at::RESERVED, "reserved bytes must be zero".into()));
        }
        return Ok(None);
    }
    let code = b[at::DETAIL_EXPONENT];
    let first_octave = get_f32(b, at::DETAIL_FIRST_OCTAVE);
    let twist_cap = bf16_value(get_u16(b, at::DETAIL_TWIST_CAP));
    let law = DetailLaw { exponent_64ths: (code != DETAIL_EXPONENT_DEFAULT).then_some(code), first_octave, twist_cap };
    law.check().map_err(|(name, offset, reason)| field(name, offset, reason))?;
    Ok((version != VERSION_TWIST_LAW).then_some(law))
}

/// The patch count and the last patch: all zero for a pack as baked; a
/// valid box otherwise.
fn decode_patch_history(b: &[u8]) -> Result<PatchHistory, PackError> {
    let field = |field: &'static str, offset: usize, reason: String| PackError::HeaderField {
        field,
        offset: offset as u64,
        reason,
    };
    let count = get_u32(b, at::PATCH_COUNT);
    let record = &b[at::LAST_PATCH_REGION..at::RESERVED];
    if count == 0 {
        if record.iter().any(|&c| c != 0) {
            return Err(field(
                "last_patch",
                at::LAST_PATCH_REGION,
                "a pack with no patches records no last patch".into(),
            ));
        }
        return Ok(PatchHistory::default());
    }
    let v = |k: usize| f64::from(get_f32(b, at::LAST_PATCH_REGION + 4 * k));
    let region = Coverage { south: v(0), west: v(1), north: v(2), east: v(3) };
    region.validate().map_err(|reason| field("last_patch_region", at::LAST_PATCH_REGION, reason))?;
    let inputs = b[at::LAST_PATCH_INPUTS..at::LAST_PATCH_INPUTS + 16].try_into().expect("16 bytes");
    Ok(PatchHistory { count, last: Some(LastPatch { region, inputs }) })
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
