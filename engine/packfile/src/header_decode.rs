//! Reading a header back: its fields decoded, then every rule of
//! docs/planetpack.md's header table applied, in the order it lists them.
//!
//! The key decision: one validation per field, each one `if` with one
//! named error ([`PackError::HeaderField`] and its kin) in layout order, so
//! a rule can be tested with one crafted file; the rules that differ
//! between versions (the index's length, the detail law, the reserved
//! bytes) are decided by the version the caller asks for.

use crate::error::PackError;
use crate::format::{
    COMPRESSION_ZSTD, Codec, Coverage, DETAIL_EXPONENT_DEFAULT, DetailLaw, ENTRY_LENGTH, FINGERPRINT_LENGTH,
    HEADER_CHECKSUM_OFFSET, HEADER_LENGTH, LastPatch, MAGIC, MAX_COMPRESSION_LEVEL, MIN_COMPRESSION_LEVEL, NAME_LENGTH,
    PackHeader, PatchHistory, VERSION, VERSION_FLAT_INDEX, VERSION_TILE_PROVENANCE, VERSION_TWIST_LAW,
    VERSION_WITHOUT_DETAIL_LAW, at, get_f32, get_f64, get_u16, get_u32, get_u64,
};
use crate::law::bf16_value;
use planet_geo::address::{MAX_DEPTH, TILE_APRON, TILE_CORE_SAMPLES};
use planet_geo::body::{Body, Ellipsoid};

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
#[expect(
    clippy::too_many_lines,
    reason = "one validation per header field in layout order, line for line with docs/planetpack.md's header table"
)]
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
            let layout = crate::index::IndexLayout::for_tiles(tile_count)
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
