//! How far two packs of the same tile set differ, tile by tile: the figure a
//! change to the sampling maths states (docs/performance-history.md, "Bake throughput", round 1).
//! Compares decoded samples, not bytes, since one changed sample moves every
//! later tile's bytes: tiles and samples that differ, the largest difference
//! in quantisation steps and in metres, and in geometric error.
//!
//! usage: cargo run --release -p planet-bake --example pack_diff -- A.planetpack B.planetpack

use anyhow::{Context, Result, bail};
use planet_terrain::pack::Pack;

fn main() -> Result<()> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = &paths[..] else { bail!("usage: pack_diff A.planetpack B.planetpack") };
    let open = |p: &String| Pack::open(p).with_context(|| format!("opening {p}"));
    let (a, b) = (open(a)?, open(b)?);
    let (mut tiles, mut tiles_differing, mut samples_differing) = (0usize, 0usize, 0usize);
    let (mut worst_steps, mut worst_m, mut worst_error_m) = (0u32, 0f64, 0f64);
    for key in a.keys() {
        let tile = key?.address();
        let (Some(ea), Some(eb)) = (a.entry(tile)?, b.entry(tile)?) else { bail!("tile {tile} is in one pack only") };
        let (da, db) = (a.read_tile(tile)?, b.read_tile(tile)?);
        let (ha, hb) = (da.heights(), db.heights());
        let differing = da.quantised.iter().zip(&db.quantised).filter(|(x, y)| x != y).count();
        let steps = da.quantised.iter().zip(&db.quantised).map(|(x, y)| u32::from(x.abs_diff(*y))).max().unwrap_or(0);
        let metres = ha.iter().zip(&hb).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        let error = (f64::from(ea.geometric_error) - f64::from(eb.geometric_error)).abs();
        tiles += 1;
        samples_differing += differing;
        let range_differs = (ea.min_elevation, ea.max_elevation) != (eb.min_elevation, eb.max_elevation);
        tiles_differing += usize::from(metres > 0.0 || error > 0.0 || range_differs || ea.measured != eb.measured);
        (worst_steps, worst_m, worst_error_m) = (worst_steps.max(steps), worst_m.max(metres), worst_error_m.max(error));
    }
    if b.keys().count() != tiles {
        bail!("the packs hold different tile sets");
    }
    println!(
        "{tiles} tiles, {tiles_differing} differing; {samples_differing} samples differing, by at most {worst_steps} quantisation steps ({worst_m:.3} m); geometric error differs by at most {worst_error_m} m"
    );
    Ok(())
}
