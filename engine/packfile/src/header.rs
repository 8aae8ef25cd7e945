//! The decoded header (`PackHeader`, its patch history) and its encoding
//! into the 256 bytes docs/planetpack.md lays out.
//!
//! The key decision: encoding is one pass in layout order over the field
//! offsets of `format::at`, every byte written or left zero, then the
//! checksum over all of them, so the bytes of a header are a pure function
//! of its fields. Decoding and its rules are beside it (`header_decode`).

use crate::format::{
    COMPRESSION_ZSTD, Codec, Coverage, DETAIL_EXPONENT_DEFAULT, DetailLaw, FINGERPRINT_LENGTH, HEADER_CHECKSUM_OFFSET,
    HEADER_LENGTH, MAGIC, VERSION, VERSION_TILE_PROVENANCE, VERSION_WITHOUT_DETAIL_LAW, at, put_f64, put_u16, put_u32,
    put_u64,
};
use crate::law::bf16_bits;
use planet_geo::address::{TILE_APRON, TILE_CORE_SAMPLES};
use planet_geo::body::Body;

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

fn put_name(b: &mut [u8], at: usize, name: &str) {
    b[at..at + name.len()].copy_from_slice(name.as_bytes());
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
