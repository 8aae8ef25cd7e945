//! Cost of a synthesized tile (131 x 131 samples past the data depth), one
//! core, in microseconds: the resampled ancestor alone, then with detail.
//!
//! `cargo bench -p planet-terrain --bench detail [-- PACK]`
//!
//! Without a pack, a codec-2 procedural Earth is written to depth 3 in a
//! temporary folder (a few seconds). "Warm" reuses the data tile's amplitude
//! field (a flight asks for many tiles under one data tile); "cold" drops it
//! first, so it pays one more decode of the data tile. Then the selection
//! of a cut over the pack's highest data tile from 3.5 km, 10 km and 100 km
//! (1920x1080, 1 px, 4096 nodes), with detail off and on (first selection
//! with cold caches, then again warm), in milliseconds.

use std::sync::Arc;
use std::time::Instant;

use planet_terrain::ground::roughness::high_ground_seeds;
use planet_terrain::ground::{DetailSource, HeightSource, PackSource};
use planet_terrain::lod::{SelectionSettings, select};
use planet_terrain::pack::Pack;
use planet_terrain::{Geodetic, TileAddress, View};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(source: &dyn HeightSource, tiles: &[TileAddress]) -> f64 {
    median(
        tiles
            .iter()
            .map(|&t| {
                let start = Instant::now();
                std::hint::black_box(source.tile(t).unwrap());
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = match std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            let p = dir.path().join("procedural.planetpack");
            planet_terrain::testing::write_procedural_pack(&p, 3).unwrap();
            p
        }
    };
    let pack = Arc::new(Pack::open(&path).unwrap());
    let inner: Arc<dyn HeightSource> = Arc::new(PackSource::new(pack));
    let data = inner.data_depth().unwrap();
    println!("{}: height data depth {data}", path.display());
    println!("{:>6} {:>14} {:>16} {:>16}", "depth", "resampled us", "+detail warm us", "+detail cold us");
    for k in [1u8, 4, 8, 12] {
        let depth = data + k;
        // 64 tiles along a diagonal of face 0's centre region.
        let n = 1u32 << depth;
        let tiles: Vec<TileAddress> =
            (0..64u32).map(|s| TileAddress::new(0, depth, (n / 3 + s) % n, (n / 3 + s * 7) % n).unwrap()).collect();
        let detail = DetailSource::new(inner.clone());
        let _ = time(&detail, &tiles); // fill the amplitude cache
        let warm = time(&detail, &tiles);
        let cold: Vec<f64> = tiles
            .iter()
            .map(|&t| {
                let fresh = DetailSource::new(inner.clone());
                let start = Instant::now();
                std::hint::black_box(fresh.tile(t).unwrap());
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        println!("{depth:>6} {:>14.0} {warm:>16.0} {:>16.0}", time(&*inner, &tiles), median(cold));
    }
    let Some(&high) = high_ground_seeds(&*inner, 1).first() else { return };
    let (u, v) = high.grid_centre();
    let d = planet_terrain::geo::cube::face_grid_to_direction(high.face(), u, v);
    let g = inner.body().ellipsoid().direction_to_geodetic(d);
    let ground = inner.tile(high).unwrap().height(64, 64);
    println!("cut over {high} ({:.2}, {:.2}), ground {ground:.0} m", g.latitude.to_degrees(), g.longitude.to_degrees());
    println!("{:>10} {:>10} {:>14} {:>14} {:>8}", "above m", "off ms", "on cold ms", "on warm ms", "nodes");
    let settings = SelectionSettings { target_error_px: 1.0, node_budget: 4096, near_m: 0.1 };
    for above in [3_500.0, 10_000.0, 100_000.0] {
        let at = Geodetic::from_degrees(g.latitude.to_degrees(), g.longitude.to_degrees(), f64::from(ground) + above);
        let view = View::looking_from(inner.body(), at, 30.0, -20.0, 60f64.to_radians(), (1920, 1080));
        let timed = |source: &dyn HeightSource| {
            let start = Instant::now();
            let cut = select(source, &view, &settings).unwrap();
            (start.elapsed().as_secs_f64() * 1e3, cut.nodes.len())
        };
        let (off, _) = timed(&*inner);
        let detail = DetailSource::new(inner.clone()).resampling_its_data(true);
        let (cold, _) = timed(&detail);
        let (warm, nodes) = timed(&detail);
        println!("{above:>10.0} {off:>10.2} {cold:>14.2} {warm:>14.2} {nodes:>8}");
    }
}
