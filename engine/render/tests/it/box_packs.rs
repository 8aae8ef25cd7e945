//! Regional packs made here for the ground tests (imagery, inset edges):
//! the key decision is that each is written from a formula of latitude,
//! longitude and depth, so a test states its ground in a closure and CI
//! needs no demo data, and a formula that drops the octaves a depth cannot
//! hold gives the pack's coarse levels filtered, as a bake's are.

use std::path::{Path, PathBuf};

use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::{locate, sample_directions};
use planet_terrain::pack::{Codec, Coverage, PackSpec, PackWriter, TileContent};

/// What a box pack holds at a place: height (m), class, colour (sRGB).
pub type Sample = (f64, u8, [u8; 3]);

/// Writes `name` into a scratch directory (gone when the returned guard
/// drops; keep it while the pack is read) as a pack over `coverage`
/// measured to `depth`: the tiles a 81 x 81 grid of places in the box
/// meets at every depth to `depth` (a regional bake's tiles), each sample
/// `ground(lat, lon, tile depth)`. Codec 2 (heights, classes and colour)
/// with `colour`, else codec 0.
pub fn write_box_pack(
    name: &str,
    coverage: Coverage,
    depth: u8,
    colour: bool,
    ground: impl Fn(f64, f64, u8) -> Sample + Sync,
) -> (tempfile::TempDir, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("box-packs");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scratch = tempfile::tempdir_in(&dir).expect("temp dir");
    let path = scratch.path().join(format!("{name}.planetpack"));
    write(&path, coverage, depth, colour, &ground);
    (scratch, path)
}

fn write(path: &Path, coverage: Coverage, depth: u8, colour: bool, ground: &(impl Fn(f64, f64, u8) -> Sample + Sync)) {
    let body = Body::earth();
    let codec = if colour { Codec::HeightsClassesColour } else { Codec::Heights };
    let spec = PackSpec {
        body: body.clone(),
        tier: "test".into(),
        codec,
        height_data_depth: depth,
        colour_data_depth: if colour { depth } else { 0 },
        coverage,
        fingerprint: [5; 32],
        compression_level: 1,
    };
    let (height, width) = (coverage.north - coverage.south, coverage.east - coverage.west);
    let mut tiles: Vec<TileAddress> = (0..=80)
        .flat_map(|a| (0..=80).map(move |b| (a, b)))
        .map(|(a, b)| (coverage.south + height * f64::from(a) / 80.0, coverage.west + width * f64::from(b) / 80.0))
        .flat_map(|(lat, lon)| (0..=depth).map(move |d| (lat, lon, d)))
        .map(|(lat, lon, d)| locate(&body, Geodetic::from_degrees(lat, lon, 0.0), d).0)
        .collect();
    tiles.sort_by_key(|t| t.key());
    tiles.dedup();
    let writer = PackWriter::create(path, spec, tiles.iter().copied()).expect("a pack writer");
    let ellipsoid = *body.ellipsoid();
    std::thread::scope(|scope| {
        for part in tiles.chunks(tiles.len().div_ceil(2)) {
            let writer = &writer;
            scope.spawn(move || {
                for &tile in part {
                    let samples: Vec<Sample> = sample_directions(tile)
                        .into_iter()
                        .map(|d| ellipsoid.direction_to_geodetic(d))
                        .map(|g| ground(g.latitude.to_degrees(), g.longitude.to_degrees(), tile.depth()))
                        .collect();
                    let heights: Vec<f64> = samples.iter().map(|s| s.0).collect();
                    let classes: Vec<u8> = samples.iter().map(|s| s.1).collect();
                    let colours: Vec<[u8; 3]> = samples.iter().map(|s| s.2).collect();
                    let content = TileContent {
                        heights: &heights,
                        classes: colour.then_some(&classes[..]),
                        colour: colour.then_some(&colours[..]),
                        geometric_error: 1.0,
                        measured: true,
                        voids: None,
                    };
                    writer.put(tile, &content).expect("a tile");
                }
            });
        }
    });
    writer.finish().expect("the pack");
}

/// A smooth random field in about [-1, 1] with features `cell_deg`
/// degrees across: value noise (a hash per lattice point, smoothstep
/// between), seeded.
pub fn field(lat: f64, lon: f64, cell_deg: f64, seed: u32) -> f64 {
    let (x, y) = (lon / cell_deg, lat / cell_deg);
    let (i, j) = (x.floor(), y.floor());
    let (fx, fy) = (x - i, y - j);
    let s = |t: f64| t * t * (3.0 - 2.0 * t);
    let hash = |a: f64, b: f64| {
        let mut h = (a as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (b as i64 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ u64::from(seed).wrapping_mul(0x1656_67B1_9E37_79F9);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        (h % 20001) as f64 / 10000.0 - 1.0
    };
    let top = hash(i, j) + s(fx) * (hash(i + 1.0, j) - hash(i, j));
    let bottom = hash(i, j + 1.0) + s(fx) * (hash(i + 1.0, j + 1.0) - hash(i, j + 1.0));
    top + s(fy) * (bottom - top)
}
