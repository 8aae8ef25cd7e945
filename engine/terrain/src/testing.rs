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

/// Writes a small codec-2 pack of the seeded procedural Earth (seed 7) to
/// `depth` at `path`: the fixture render and viewer tests fly over. The
/// colour block is an elevation palette and the classes say ocean (1) or
/// land (2), so both colour paths of the renderer have data. Two threads.
pub fn write_procedural_pack(path: &std::path::Path, depth: u8) -> Result<(), crate::pack::PackError> {
    use crate::geo::address::TileAddress;
    use crate::ground::{HeightSource, ProceduralSource};
    use crate::pack::{Codec, Coverage, PackSpec, PackWriter, TileContent};

    let body = crate::geo::body::Body::earth();
    let source = ProceduralSource::new(body.clone(), 7);
    let tiles: Vec<TileAddress> = (0..=depth)
        .flat_map(|d| {
            let n = 1u32 << d;
            (0..6u8).flat_map(move |f| {
                (0..n).flat_map(move |x| (0..n).map(move |y| TileAddress::new(f, d, x, y).expect("in range")))
            })
        })
        .collect();
    let spec = PackSpec {
        body,
        tier: "test".into(),
        codec: Codec::HeightsClassesColour,
        height_data_depth: depth,
        colour_data_depth: depth,
        coverage: Coverage::GLOBAL,
        fingerprint: [3; 32],
        compression_level: 1,
    };
    let writer = PackWriter::create(path, spec, tiles.iter().copied())?;
    let palette = |h: f64| -> [u8; 3] {
        match h {
            h if h < 0.0 => [10, 40, 90],
            h if h < 1500.0 => [60, 110, 40],
            h if h < 3500.0 => [140, 120, 90],
            _ => [235, 235, 240],
        }
    };
    std::thread::scope(|scope| -> Result<(), crate::pack::PackError> {
        let workers: Vec<_> = tiles
            .chunks(tiles.len().div_ceil(2))
            .map(|part| {
                let (writer, source) = (&writer, &source);
                scope.spawn(move || -> Result<(), crate::pack::PackError> {
                    for &tile in part {
                        let t = source.tile(tile).expect("a procedural source has every tile");
                        let heights: Vec<f64> = t.heights.iter().map(|&h| f64::from(h)).collect();
                        let classes: Vec<u8> = heights.iter().map(|&h| if h < 0.0 { 1 } else { 2 }).collect();
                        let colour: Vec<[u8; 3]> = heights.iter().map(|&h| palette(h)).collect();
                        let error = source.tile_bounds(tile).expect("bounds").geometric_error;
                        writer.put(
                            tile,
                            &TileContent {
                                heights: &heights,
                                classes: Some(&classes),
                                colour: Some(&colour),
                                geometric_error: error,
                                measured: true,
                            },
                        )?;
                    }
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("pack workers do not panic")?;
        }
        Ok(())
    })?;
    writer.finish()?;
    Ok(())
}
