//! Roughness versus scale of a pack, measured and synthesized: the figures
//! docs/PERFORMANCE.md quotes for detail synthesis.
//!
//! `cargo run --release -p planet-terrain --example detail_stats -- PACK [MIN_RELIEF_M] [PIXEL_M]`
//!
//! With `PIXEL_M` (the source DEM's pixel size) it also fits the DEM's own
//! law, `roughness = a * window^H` over the windows of 10 pixels and more
//! (detail off), and judges every depth past the data depth against it
//! continued: within 0.4..1.5 of the law, and falling level by level, over
//! windows of at least `2 * SMOOTH_BELOW_M`. Finer windows are printed but
//! not judged: there the geometry's octaves fall as a smooth surface's (the
//! cut could not meet its target 2 m above ground rough at every scale),
//! and the shading's micro-relief carries the texture.
//!
//! Seeds are the data-depth tiles whose index relief (max - min) is at
//! least MIN_RELIEF_M (default 1000 m) and that lie above -200 m (land, so
//! heights-only packs without a water class are judged on land). Depths
//! down to `data + 3` with detail off are windows of 128 down to 16 measured
//! samples (the ancestor resampled bilinearly changes nothing at those
//! scales); depths `data + 6` and deeper with detail on are synthesized.

use std::sync::Arc;

use planet_terrain::TileAddress;
use planet_terrain::geo::cube::sample_direction;
use planet_terrain::ground::roughness::{fit_exponent, roughness_by_depth};
use planet_terrain::ground::{DetailSource, HeightSource, PackSource};
use planet_terrain::pack::Pack;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: detail_stats PACK [MIN_RELIEF_M]");
    let min_relief: f64 = args.get(1).map_or(1000.0, |s| s.parse().expect("a number"));
    let inner: Arc<dyn HeightSource> = Arc::new(PackSource::new(Arc::new(Pack::open(path).expect("a pack"))));
    let data = inner.data_depth().expect("a pack has a data depth");
    let coverage = Pack::open(path).expect("a pack").header().coverage;
    let body = inner.body().clone();
    let n = 1u32 << data;
    let seeds: Vec<TileAddress> = (0..6u8)
        .flat_map(|f| (0..n).flat_map(move |x| (0..n).map(move |y| TileAddress::new(f, data, x, y).unwrap())))
        // A regional pack holds only the tiles over its box: seeds are the
        // tiles whose centre it measured (their descendants, the synthesized
        // depths, lie inside it).
        .filter(|&t| {
            let centre = body.ellipsoid().direction_to_geodetic(sample_direction(t.sample(64, 64)));
            coverage.contains(centre.latitude.to_degrees(), centre.longitude.to_degrees())
                && inner
                    .tile_bounds(t)
                    .is_ok_and(|b| b.max_elevation - b.min_elevation >= min_relief && b.min_elevation > -200.0)
        })
        .collect();
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
    // The DEM's own law over windows of 10 pixels and more.
    let window = |d: u8| inner.body().tile_size_m(d);
    let law_points: Vec<(f64, f64)> =
        off.iter().filter(|&&(d, _)| window(d) >= 10.0 * pixel_m).map(|&(d, s)| (window(d).ln(), s.ln())).collect();
    assert!(law_points.len() >= 2, "too few windows of 10 pixels or more");
    let n = law_points.len() as f64;
    let (mx, my) = law_points.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let sxy: f64 = law_points.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = law_points.iter().map(|&(x, _)| (x - mx).powi(2)).sum();
    let h_law = sxy / sxx;
    let law = |d: u8| (my + h_law * (window(d).ln() - mx)).exp();
    println!("the DEM's law over windows of 10 pixels ({:.0} m) and more: H {h_law:.3}", 10.0 * pixel_m);
    println!("{:>5} {:>12} {:>12} {:>12} {:>10}", "depth", "window m", "law m", "on m", "on / law");
    let mut previous = f64::INFINITY;
    let mut ok = true;
    let judged_from = 2.0 * planet_terrain::ground::SMOOTH_BELOW_M;
    for &(d, s) in on.iter().filter(|&&(d, _)| d > data) {
        let ratio = s / law(d);
        let falls = s < previous;
        if window(d) >= judged_from {
            ok &= (0.4..=1.5).contains(&ratio) && falls;
        } else {
            ok &= falls;
        }
        println!(
            "{d:>5} {:>12.1} {:>12.4} {s:>12.4} {ratio:>10.3}{}",
            window(d),
            law(d),
            if falls { "" } else { "  (not falling)" }
        );
        previous = s;
    }
    println!(
        "past the data depth, within 0.4..1.5 of the law over windows of {judged_from} m and more, \
         and falling at every level: {ok}"
    );
}
