//! Roughness versus scale of a pack, measured and synthesized: the figures
//! docs/PERFORMANCE.md quotes for detail synthesis.
//!
//! `cargo run --release -p planet-terrain --example detail_stats -- PACK [MIN_RELIEF_M] [PIXEL_M]`
//!
//! With `PIXEL_M` (the source DEM's pixel size) it also fits the DEM's own
//! law, `roughness = a * window^H` over the windows of 10 pixels and more
//! (detail off), and judges every depth past the data depth against it
//! continued: within 0.4..1.5 of the law over windows of at least
//! `JUDGED_FROM_M`, and falling level by level everywhere
//! (`roughness::judge_against_law`). Finer windows are printed but not held
//! to the law: there the geometry's octaves fall as a smooth surface's (the
//! cut could not meet its target 2 m above ground rough at every scale),
//! and the shading's micro-relief carries the texture.
//!
//! Seeds are the data-depth tiles wholly inside the pack's box whose index
//! relief (max - min) is at least MIN_RELIEF_M (default 1000 m) and that
//! lie above -200 m (land, so heights-only packs without a water class are
//! judged on land; `roughness::relief_seeds`). Depths
//! down to `data + 3` with detail off are windows of 128 down to 16 measured
//! samples (the ancestor resampled bilinearly changes nothing at those
//! scales); depths `data + 6` and deeper with detail on are synthesized.

use std::sync::Arc;

use planet_terrain::ground::roughness::{
    JUDGED_FROM_M, fit_exponent, judge_against_law, relief_seeds, roughness_by_depth,
};
use planet_terrain::ground::{DetailSource, HeightSource, PackSource};
use planet_terrain::pack::Pack;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: detail_stats PACK [MIN_RELIEF_M]");
    let min_relief: f64 = args.get(1).map_or(1000.0, |s| s.parse().expect("a number"));
    let inner: Arc<dyn HeightSource> = Arc::new(PackSource::new(Arc::new(Pack::open(path).expect("a pack"))));
    let data = inner.data_depth().expect("a pack has a data depth");
    let coverage = Pack::open(path).expect("a pack").header().coverage;
    // A regional pack holds only the tiles over its box: seeds are the
    // tiles wholly inside it (their descendants, the synthesized depths,
    // lie inside too).
    let seeds = relief_seeds(&*inner, coverage, min_relief);
    println!("{path}: data depth {data}, {} seed tiles", seeds.len());
    let detail = DetailSource::within(inner.clone(), coverage);
    println!("first octave per metre of twist, continuing the data's law: {:.3}", detail.first_octave());
    let depths = || data.saturating_sub(1)..=data + 14;
    let off = roughness_by_depth(&*inner, &seeds, depths(), 3).unwrap();
    let on = roughness_by_depth(&detail, &seeds, depths(), 3).unwrap();
    let estimated = DetailSource::exponent_within(&*inner, coverage);
    println!("exponent estimated by DetailSource::within (inside the coverage): {estimated:?} (H, octave gain)");
    let h = estimated.map_or(0.8, |(h, _)| h);
    let anchor = off.iter().find(|&&(d, _)| d == data + 3).map_or(1.0, |&(_, s)| s);
    println!("{:>5} {:>12} {:>12} {:>12} {:>12}", "depth", "window m", "off m", "on m", "on / line");
    for ((d, a), (_, b)) in off.iter().zip(&on) {
        let window = inner.body().tile_size_m(*d);
        let line = anchor * 2f64.powf(-h * (f64::from(*d) - f64::from(data + 3)));
        println!("{d:>5} {window:>12.1} {a:>12.4} {b:>12.4} {:>12.3}", b / line);
    }
    let pick = |v: &[(u8, f64)], lo: u8, hi: u8| -> Vec<(u8, f64)> {
        v.iter().copied().filter(|&(d, _)| (lo..=hi).contains(&d)).collect()
    };
    let measured = fit_exponent(&pick(&off, data, data + 3));
    let synthesized = fit_exponent(&pick(&on, data + 6, data + 14));
    let joined = fit_exponent(&pick(&on, data, data + 14));
    println!(
        "exponent H: measured (depths {}..={}) {measured:.3}, synthesized ({}..={}) {synthesized:.3}, all on {joined:.3}",
        data,
        data + 3,
        data + 6,
        data + 14
    );
    let Some(pixel_m) = args.get(2).map(|s| s.parse::<f64>().expect("a pixel size in metres")) else { return };
    let judged =
        judge_against_law(&*inner, &detail, &seeds, pixel_m, 3).unwrap().expect("two windows of 10 pixels or more");
    println!(
        "the DEM's law over windows of 10 pixels ({:.0} m) and more: H {:.3}",
        10.0 * pixel_m,
        judged.law_exponent
    );
    println!("{:>5} {:>12} {:>12} {:>12} {:>10}", "depth", "window m", "law m", "on m", "on / law");
    for row in &judged.rows {
        println!(
            "{:>5} {:>12.1} {:>12.4} {:>12.4} {:>10.3}{}{}",
            row.depth,
            row.window_m,
            row.law_m,
            row.synthesized_m,
            row.ratio(),
            if row.judged { "" } else { "  (not judged)" },
            if row.falls { "" } else { "  (not falling)" }
        );
    }
    println!(
        "past the data depth, within 0.4..1.5 of the law over windows of {JUDGED_FROM_M} m and more, \
         and falling at every level: {}",
        judged.holds()
    );
}
