//! Writes the fuzzer's seed corpus: one tiny pack per codec (0, 1 and 2),
//! all version 5, the first without a recorded detail law (its law bytes
//! zero) and a void block (so mutations reach one), the others with a law.
//!
//! The key decision: seeds are made by the real writer, so they start the
//! fuzzer on packs every rule accepts, one per payload layout, and they
//! stay small (one tile of a gentle ramp) so mutations reach every field.
//!
//! usage: cargo run -p planet-terrain --example fuzz_seeds -- DIR

use std::path::PathBuf;

use planet_terrain::pack::codec::{TileVoids, VoidFill};
use planet_terrain::pack::{Codec, Coverage, DetailLaw, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, TILE_STORED_SAMPLE_COUNT, TileAddress};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: fuzz_seeds DIR")?);
    std::fs::create_dir_all(&dir)?;
    let tile = TileAddress::new(0, 0, 0, 0)?;
    let n = TILE_STORED_SAMPLE_COUNT;
    let heights: Vec<f64> = (0..n).map(|k| (k % 131) as f64 * 0.5 - 20.0).collect();
    let classes: Vec<u8> = (0..n).map(|k| u8::from(k % 131 > 60) + 1).collect();
    let colour: Vec<[u8; 3]> = classes.iter().map(|&c| if c == 1 { [10, 40, 90] } else { [60, 110, 40] }).collect();
    // A small void in the middle of the ramp, filled with -5 m.
    let voids: Vec<bool> = (0..n).map(|k| (60..64).contains(&(k % 131)) && (60..64).contains(&(k / 131))).collect();
    for codec in [Codec::Heights, Codec::HeightsClasses, Codec::HeightsClassesColour] {
        let path = dir.join(format!("seed-codec{}.planetpack", codec.code()));
        let spec = PackSpec {
            body: Body::earth(),
            tier: "seed".into(),
            codec,
            height_data_depth: 0,
            colour_data_depth: 0,
            coverage: Coverage::GLOBAL,
            fingerprint: [0; 32],
            compression_level: 19,
        };
        let writer = PackWriter::create(&path, spec, [tile])?;
        writer.put(
            tile,
            &TileContent {
                heights: &heights,
                classes: codec.has_classes().then_some(&classes[..]),
                colour: codec.has_colour().then_some(&colour[..]),
                geometric_error: 1.0,
                measured: true,
                voids: (codec == Codec::Heights).then_some(TileVoids { fill: VoidFill::Value(-5.0), samples: &voids }),
            },
        )?;
        if codec == Codec::Heights {
            writer.finish()?;
        } else {
            let assembled = writer.assemble()?;
            assembled.record_detail_law(DetailLaw::rounded(Some(45), 23.5, 4.0))?;
            assembled.commit()?;
        }
        println!("{} ({} bytes)", path.display(), std::fs::metadata(&path)?.len());
    }
    Ok(())
}
