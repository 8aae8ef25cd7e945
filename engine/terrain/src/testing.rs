//! Helpers for tests, benches and fuzzers (feature `testing`): what crafts
//! packs ([`planet_packfile::testing`]), and a procedural pack the render
//! and viewer tests fly over.

pub use planet_packfile::testing::{refresh_checksums, write_synthetic_index_pack};

use crate::geo::{Body, TileAddress};
use crate::ground::{BoundsAt, HeightSource};

/// Writes a small codec-2 pack of the seeded procedural Earth (seed 7) to
/// `depth` at `path`: the fixture render and viewer tests fly over. The
/// colour block is an elevation palette and the classes say ocean (1) or
/// land (2), so both colour paths of the renderer have data. Two threads.
pub fn write_procedural_pack(path: &std::path::Path, depth: u8) -> Result<(), crate::pack::PackError> {
    use crate::ground::ProceduralSource;
    use crate::pack::{Codec, Coverage, PackSpec, PackWriter, TileContent};

    let body = Body::earth();
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
                                voids: None,
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
