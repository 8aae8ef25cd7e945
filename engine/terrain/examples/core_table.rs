//! Prints what the terrain core knows about a body, depth by depth: tile
//! counts, tile and sample sizes, and the measured error of the f32 vertex
//! path against a double-double reference (worst over random tiles and
//! lattice samples), beside naive f32 planet-space arithmetic.
//!
//! `cargo run --release -p planet-terrain --example core_table [earth|moon|mars] [SAMPLES]`

use planet_terrain::geo::lattice::lattice_step;
use planet_terrain::geo::precision::{
    NodeCentre, naive_f32_vertex_offset, offset_error, reference_vertex_offset, vertex_offset,
};
use planet_terrain::{Body, MAX_DEPTH, TileAddress};

/// splitmix64: a tiny deterministic generator, so the table is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Worst {
    ulps: f64,
    metres: f64,
}

fn measure(body: &Body, depth: u8, samples: usize, within_a_metre: bool, rng: &mut Rng) -> (Worst, f64) {
    let ellipsoid = body.ellipsoid();
    let mut worst = Worst { ulps: 0.0, metres: 0.0 };
    let mut naive_worst: f64 = 0.0;
    let size = 1u64 << depth;
    for _ in 0..samples {
        let tile = TileAddress::new(rng.below(6) as u8, depth, rng.below(size) as u32, rng.below(size) as u32)
            .expect("random address is in range");
        let centre_height = rng.uniform(-11_000.0, 9_000.0);
        let height =
            if within_a_metre { centre_height + rng.uniform(-1.0, 1.0) } else { rng.uniform(-11_000.0, 9_000.0) };
        let centre = NodeCentre::new(ellipsoid, tile, centre_height);
        let (ds, dt) = (lattice_step(depth, rng.below(33) as u32), lattice_step(depth, rng.below(33) as u32));
        let dh = (height - centre_height) as f32;
        let computed = vertex_offset(&centre.basis, ds, dt, dh, height as f32);
        // The reference sees the f32-rounded height difference the GPU sees.
        let reference = reference_vertex_offset(
            ellipsoid,
            tile,
            centre_height,
            f64::from(ds),
            f64::from(dt),
            centre_height + f64::from(dh),
        );
        let (ulps, metres) = offset_error(computed, reference);
        if ulps > worst.ulps {
            worst.ulps = ulps;
        }
        worst.metres = worst.metres.max(metres);
        let naive =
            naive_f32_vertex_offset(ellipsoid, tile, centre_height, ds, dt, (centre_height + f64::from(dh)) as f32);
        naive_worst = naive_worst.max((naive.as_dvec3() - reference).length());
    }
    (worst, naive_worst)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let body = match args.next() {
        Some(name) => Body::named(&name).unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2)
        }),
        None => Body::earth(),
    };
    let samples: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let mut rng = Rng(0x005e_ed0f_70e5);
    println!("Planet terrain core: {body}");
    println!("Tile: 129x129 core samples + 1-sample apron (131x131 stored); node lattice 33x33.");
    println!(
        "f32 vertex path vs double-double reference, worst of {samples} random tiles x lattice samples per depth."
    );
    println!(
        "  'any h': elevations anywhere in -11..+9 km; '|dh|<=1m': sample within a metre of the node centre's elevation."
    );
    println!();
    println!(
        "{:>5} {:>22} {:>12} {:>12} | {:>12} {:>13} | {:>13} {:>13}",
        "depth", "tiles", "tile size", "sample", "any h: ulps", "|dh|<=1m: m", "|dh|<=1m ulps", "naive f32 m"
    );
    for depth in 0..=MAX_DEPTH.min(24) {
        let tiles = 6u128 << (2 * u32::from(depth));
        let (any, _) = measure(&body, depth, samples, false, &mut rng);
        let (near, naive) = measure(&body, depth, samples, true, &mut rng);
        println!(
            "{:>5} {:>22} {:>12} {:>12} | {:>12.2} {:>13.3e} | {:>13.2} {:>13.3e}",
            depth,
            tiles,
            format_length(body.tile_size_m(depth)),
            format_length(body.sample_spacing_m(depth)),
            any.ulps,
            near.metres,
            near.ulps,
            naive,
        );
    }
}

fn format_length(metres: f64) -> String {
    if metres >= 1000.0 {
        format!("{:.1} km", metres / 1000.0)
    } else if metres >= 1.0 {
        format!("{metres:.2} m")
    } else if metres >= 0.01 {
        format!("{:.1} cm", metres * 100.0)
    } else {
        format!("{:.2} mm", metres * 1000.0)
    }
}
