//! planet-bake end to end on rasters the tests write: accuracy against the
//! analytic field, grid conventions accepted and misreadings refused, nodata,
//! projected rasters, imagery and classes, kill and resume, region patches,
//! and bad input.

mod base;
mod cluster;
mod crash;
mod filter;
mod memory;
mod patch;
mod shard;
mod support;

use planet_terrain::ground::BoundsAt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use planet_bake::{BakeError, BakeOptions, Progress, Region, bake};
use planet_terrain::ground::{HeightSource, sample_directions};
use planet_terrain::pack::Pack;
use planet_terrain::{Body, TileAddress};
use support::*;

struct Quiet;
impl Progress for Quiet {
    fn stage(&self, _: &str) {}
    fn tiles(&self, _: usize, _: usize) {}
}

fn nodes() -> &'static [f32] {
    static NODES: OnceLock<Vec<f32>> = OnceLock::new();
    NODES.get_or_init(earth_nodes)
}

fn options(dem: &Path, out: &Path) -> BakeOptions {
    BakeOptions {
        dem: dem.to_owned(),
        imagery: None,
        classes: None,
        body: Body::earth(),
        out: out.to_owned(),
        depth: Some(2),
        tier: "test".into(),
        jobs: Some(2),
        resume: false,
        region: None,
        landmarks: Vec::new(),
        memory: Some(512 << 20),
        compression_level: 3,
        if_unchanged: false,
        scene: None,
        void_value: None,
        shard: None,
        inputs_digest: None,
        base: None,
    }
}

/// Compares every stored sample of every tile at or below the pack's height
/// data depth with `expected(lat, lon)` (skipping `None`), and every core
/// sample of each shallower tile with the stated filter of its child
/// ([`check_filtered`]); returns the worst error in quantisation steps of
/// the first comparison.
fn check_pack(path: &Path, mut expected: impl FnMut(f64, f64) -> Option<f64>) -> f64 {
    let pack = Pack::open(path).unwrap();
    let body = pack.header().body.clone();
    let filter_from = pack.header().height_data_depth;
    let mut worst_steps: f64 = 0.0;
    for entry in &pack.all_entries().unwrap() {
        let tile = entry.tile();
        let decoded = pack.decode(entry).unwrap();
        if tile.depth() < filter_from {
            check_filtered(&pack, &decoded);
            continue;
        }
        let step = decoded.quantisation_step();
        for (k, d) in sample_directions(tile).into_iter().enumerate() {
            let g = body.ellipsoid().direction_to_geodetic(d);
            let Some(want) = expected(g.latitude.to_degrees(), g.longitude.to_degrees()) else { continue };
            let got = decoded.dequantise(decoded.quantised[k]);
            // Half a step, plus the f32 rounding of the raster's own values.
            let bound = 0.5 * step + 2e-3;
            assert!((got - want).abs() <= bound, "{tile} sample {k}: baked {got}, field {want}, bound {bound}");
            if step > 0.0 {
                worst_steps = worst_steps.max((got - want).abs() / step);
            }
        }
    }
    worst_steps
}

/// A coarse tile's core samples are `[1 2 1] x [1 2 1] / 16` of the child
/// samples around the coincident one, read here from the one child that
/// stores all nine (its apron included). The bake reads each child sample
/// from one owner tile, so a tap in an apron may differ by the quantisation
/// of the two tiles storing it (on a face edge, a tile of the next face):
/// the bound is half the parent's step plus the largest step at the
/// children's depth. Cube corners (their own rule) and tiles with an
/// absent tap (not measured: the taps are renormalised) are not checked.
fn check_filtered(pack: &Pack, parent: &planet_terrain::pack::DecodedTile) {
    let tile = parent.tile;
    if !parent.measured {
        return;
    }
    let n = 128u64 << tile.depth();
    let children: Vec<_> = tile.children().unwrap().iter().map(|&c| pack.read_tile(c).ok()).collect();
    let child_step = pack
        .all_entries()
        .unwrap()
        .iter()
        .filter(|e| e.tile().depth() == tile.depth() + 1)
        .map(|e| (f64::from(e.max_elevation) - f64::from(e.min_elevation)) / 65535.0)
        .fold(0.0, f64::max);
    let bound = 0.5 * parent.quantisation_step() + child_step + 1e-6;
    for j in 0..=128 {
        for i in 0..=128 {
            let s = tile.sample(i, j);
            if (s.i == 0 || s.i == n) && (s.j == 0 || s.j == n) {
                continue;
            }
            // A sample under the void mask was filtered from fill, or from
            // fewer taps at the footprint's edge (renormalised).
            if parent.is_void(planet_terrain::pack::codec::stored_index(i, j)) {
                continue;
            }
            let (ci, cj) = ((2 * i / 128).min(1), (2 * j / 128).min(1));
            let Some(child) = &children[(ci + 2 * cj) as usize] else { continue };
            let (li, lj) = (2 * i - 128 * ci, 2 * j - 128 * cj);
            // On a tile that holds voids, or of a regional pack (whose
            // tiles reach past its footprint), a sample whose taps reach the
            // child's apron is checked by the bake's own audit alone: the
            // bake reads the neighbour's samples there, and near a void or
            // the raster's edge the child's apron holds its own fill or
            // continuation.
            let in_apron = |l: i32| l - 1 < 0 || l + 1 > 128;
            let regional = !pack.header().coverage.is_global();
            if (parent.voids.is_some() || regional) && (in_apron(li) || in_apron(lj)) {
                continue;
            }
            let mut sum = 0.0;
            for b in -1..=1i32 {
                for a in -1..=1i32 {
                    sum += f64::from((2 - a.abs()) * (2 - b.abs())) * child.elevation(li + a, lj + b);
                }
            }
            let (want, got) = (sum / 16.0, parent.elevation(i, j));
            assert!(
                (got - want).abs() <= bound,
                "{tile} ({i}, {j}): baked {got}, filter of the child {want}, bound {bound}"
            );
        }
    }
}

#[test]
fn a_global_bake_reproduces_the_analytic_field_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let report = bake(&options(&dem, &out), &Quiet).unwrap().to_json();
    check_pack(&out, |lat, lon| Some(field(lat, lon, nodes())));
    assert_eq!(report["tiles"], 126);
    assert_eq!(
        report["data_depth"], 3,
        "0.25 degrees is ~28 km: depth 2 samples every 20 km (0.703 pixel), depth 3 every 10 km (at most 0.7)"
    );
    assert_eq!(report["height_data_depth"], 2, "--depth 2 is coarser than the data: its own");
    assert_eq!(report["landmarks"]["verdict"], "accepted");
    assert_eq!(report["accuracy_audit"]["passed"], true);
    assert_eq!(report["accuracy_audit"]["per_depth"].as_array().unwrap().len(), 3);
    assert_eq!(report["coverage"]["global"], true);
    let again = bake(&BakeOptions { if_unchanged: true, ..options(&dem, &out) }, &Quiet).unwrap().to_json();
    assert_eq!(again["mode"], "up to date", "an unchanged bake is reused");
    // A pack whose recorded detail law this bake would not record (an
    // older calibration's) is baked again, and gets today's law back.
    let law = Pack::open(&out).unwrap().header().detail.expect("a law");
    // The header's `detail_first_octave` (f32 at byte 248, docs/planetpack.md)
    // halved, its checksum (bytes 252..256) made good: a law is never
    // replaced through the writer.
    let mut bytes = std::fs::read(&out).unwrap();
    bytes[248..252].copy_from_slice(&(law.first_octave * 0.5).to_le_bytes());
    let checksum = crc32fast::hash(&bytes[..252]);
    bytes[252..256].copy_from_slice(&checksum.to_le_bytes());
    std::fs::write(&out, bytes).unwrap();
    assert_ne!(Pack::open(&out).unwrap().header().detail, Some(law));
    let rebaked = bake(&BakeOptions { if_unchanged: true, ..options(&dem, &out) }, &Quiet).unwrap().to_json();
    assert_eq!(rebaked["mode"], "bake", "a pack with another calibration's law is baked again");
    assert_eq!(Pack::open(&out).unwrap().header().detail, Some(law));
    let deeper = bake(
        &BakeOptions { if_unchanged: true, depth: Some(1), ..options(&dem, &dir.path().join("d1.planetpack")) },
        &Quiet,
    )
    .unwrap()
    .to_json();
    assert_eq!(deeper["mode"], "bake");
    let pack = Pack::open(&out).unwrap();
    // Depth 2 is within what the data measured: measured throughout.
    assert!(pack.all_entries().unwrap().iter().all(|e| e.measured));
    // Depth 4 is deeper than the data supports: not presented as measured.
    let deepest = dir.path().join("d4.planetpack");
    bake(&BakeOptions { depth: Some(4), ..options(&dem, &deepest) }, &Quiet).unwrap();
    let d4 = Pack::open(&deepest).unwrap();
    assert!(d4.all_entries().unwrap().iter().all(|e| e.measured == (e.tile().depth() <= 3)));
    // Parents are never claimed more accurate than their children.
    for e in &pack.all_entries().unwrap() {
        for child in e.tile().children().unwrap().iter().filter_map(|c| pack.entry(*c).unwrap()) {
            assert!(e.geometric_error >= child.geometric_error, "{} vs child {}", e.tile(), child.tile());
        }
    }
}

#[test]
fn other_grid_conventions_are_accepted_and_read_right() {
    let dir = tempfile::tempdir().unwrap();
    // 0..360 longitudes.
    let shifted = remap(nodes(), |c, r| ((c + WIDTH / 2) % WIDTH, r));
    let dem = earth_tiff(dir.path(), "east.tif", &shifted, [0.0, STEP, 0.0, 90.0, 0.0, -STEP]);
    let out = dir.path().join("east.planetpack");
    bake(&BakeOptions { depth: Some(2), ..options(&dem, &out) }, &Quiet).unwrap();
    check_pack(&out, |lat, lon| Some(field(lat, lon, nodes())));
    // Rows south-up.
    let south_up = remap(nodes(), |c, r| (c, HEIGHT - 1 - r));
    let dem = earth_tiff(dir.path(), "south-up.tif", &south_up, [-180.0, STEP, 0.0, -90.0, 0.0, STEP]);
    let out = dir.path().join("south-up.planetpack");
    bake(&BakeOptions { depth: Some(2), ..options(&dem, &out) }, &Quiet).unwrap();
    check_pack(&out, |lat, lon| Some(field(lat, lon, nodes())));
    // A duplicated wrap column (the first column repeated at +180).
    let mut with_wrap = Vec::with_capacity((WIDTH + 1) * HEIGHT);
    for row in 0..HEIGHT {
        with_wrap.extend_from_slice(&nodes()[row * WIDTH..(row + 1) * WIDTH]);
        with_wrap.push(nodes()[row * WIDTH]);
    }
    let path = dir.path().join("wrap.tif");
    write_tiff(&path, (WIDTH + 1, HEIGHT), GEO, Some(4326), &[with_wrap], None);
    let out = dir.path().join("wrap.planetpack");
    bake(&BakeOptions { depth: Some(2), ..options(&path, &out) }, &Quiet).unwrap();
    check_pack(&out, |lat, lon| Some(field(lat, lon, nodes())));
}

#[test]
fn misread_grids_are_refused_with_the_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    type Misreading = Box<dyn Fn(usize, usize) -> (usize, usize)>;
    let cases: [(&str, Misreading, &str); 3] = [
        ("reversed.tif", Box::new(|c, r| (WIDTH - 1 - c, r)), "longitude runs backwards"),
        ("flipped.tif", Box::new(|c, r| (c, HEIGHT - 1 - r)), "latitude is flipped"),
        ("half-turn.tif", Box::new(|c, r| ((c + WIDTH / 2) % WIDTH, r)), "shifted by 180 degrees"),
    ];
    for (name, map, diagnosis) in cases {
        let dem = earth_tiff(dir.path(), name, &remap(nodes(), map), GEO);
        let out = dir.path().join(format!("{name}.planetpack"));
        let err = bake(&options(&dem, &out), &Quiet).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, BakeError::Landmarks { .. }), "{name}: {message}");
        assert!(message.contains(diagnosis) && message.contains(name), "{name}: {message}");
        assert!(message.contains("Mount Everest massif"), "names the landmarks that disagree: {message}");
        assert!(!out.exists() && !planet_terrain::pack::partial_path(&out).exists(), "nothing written for {name}");
    }
}

/// Regression (#49): a tile holding one filled void was marked not
/// measured, so a clipped national DEM read 0% measured. Now the tile stays
/// measured, its void mask names the filled samples, and they read filled.
#[test]
fn nodata_is_filled_reported_and_kept_per_sample() {
    let dir = tempfile::tempdir().unwrap();
    let mut values = nodes().to_vec();
    // A void over the central Pacific, 4 x 4 degrees.
    let mut holes = 0;
    for row in 0..HEIGHT {
        for column in 0..WIDTH {
            let (lat, lon) = node(column, row);
            if (0.0..4.0).contains(&lat) && (-150.0..-146.0).contains(&lon) {
                values[row * WIDTH + column] = -32768.0;
                holes += 1;
            }
        }
    }
    assert!(holes > 200);
    let path = dir.path().join("void.tif");
    write_tiff(&path, (WIDTH, HEIGHT), GEO, Some(4326), &[values], Some(-32768.0));
    let out = dir.path().join("void.planetpack");
    let baked = bake(&options(&path, &out), &Quiet).unwrap();
    // The terminal says so too (#55 item 4: 210,320 samples were filled in
    // silence): how many, of how many, and what filled them.
    let line = baked.voids_line().expect("a line on the voids");
    assert!(line.starts_with("voids: ") && line.contains("filled from the measured samples around them"), "{line}");
    let report = baked.to_json();
    let filled = report["samples_filled"].as_u64().unwrap();
    assert!(filled > 0);
    let read = report["samples_read"].as_u64().unwrap();
    assert!(line.replace(',', "").contains(&format!("{filled} of {read} samples read from the DEM (")), "{line}");
    // What the DEM lacked, not more: the void's pixels resampled at the
    // data depth, a few samples each.
    assert!(filled < 40 * holes as u64, "{filled} samples filled for {holes} void pixels");
    assert!(report["nodata_policy"].as_str().unwrap().contains("fill"));
    assert!(report["tiles_with_filled_voids"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["tiles_measured"], report["tiles"], "every tile holds measured samples: {report}");
    let pack = Pack::open(&out).unwrap();
    assert_eq!(pack.header().version(), planet_terrain::pack::format::VERSION);
    let hole = planet_terrain::Geodetic::from_degrees(2.0, -148.0, 0.0);
    let (hole_tile, u, v) = planet_terrain::ground::locate(&Body::earth(), hole, 1);
    let e = pack.entry(hole_tile).unwrap().unwrap();
    assert!(e.measured && e.voids, "a tile with filled samples keeps its measured ones measured: {e:?}");
    let voids = pack.decode(&e).unwrap().voids.expect("a void mask");
    assert_eq!(voids.fill, planet_terrain::pack::codec::VoidFill::Surrounding);
    let n = planet_terrain::geo::address::TILE_STORED_SAMPLES as usize;
    let at = |u: f64, v: f64| (v.round() as usize + 1) * n + u.round() as usize + 1;
    assert!(voids.samples[at(u, v)], "the sample in the hole is a void");
    let count = voids.samples.iter().filter(|&&s| s).count();
    assert!(count > 0 && count < n * n / 4, "a 4 x 4 degree hole in a depth 1 tile: {count} voids");
    // Each sample says what it is: filled in the hole, measured beside it.
    let packs = vec![planet_terrain::ground::StackedPack {
        name: "void".into(),
        source: planet_terrain::ground::PackSource::new(std::sync::Arc::new(Pack::open(&out).unwrap())),
    }];
    let stack = planet_terrain::ground::GroundStack::of_packs(packs).unwrap().unwrap();
    let origin = stack.origin_at(hole).unwrap();
    assert_eq!(origin.filled, Some(planet_terrain::pack::codec::VoidFill::Surrounding), "{origin:?}");
    let beside = stack.origin_at(planet_terrain::Geodetic::from_degrees(10.0, -148.0, 0.0)).unwrap();
    assert_eq!((beside.filled, beside.provenance), (None, planet_terrain::ground::Provenance::Measured));
    // Filled values come from the surroundings (ocean floor near -4 km
    // here), not a silent zero.
    let decoded = pack.decode(&e).unwrap();
    assert!(decoded.max_elevation < 1000.0 && decoded.min_elevation > -1000.0 - 10_000.0);
    let sample = planet_terrain::ground::sample_ground(
        &planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack)),
        planet_terrain::Geodetic::from_degrees(2.0, -148.0, 0.0),
        1,
    )
    .unwrap();
    assert!(sample.elevation_m.abs() > 50.0, "filled, not zero: {}", sample.elevation_m);

    // NaN-only and all-nodata rasters are refused.
    let nan = dir.path().join("nan.tif");
    write_tiff(&nan, (64, 32), [-180.0, 5.625, 0.0, 90.0, 0.0, -5.625], Some(4326), &[vec![f32::NAN; 64 * 32]], None);
    let err = bake(&options(&nan, &dir.path().join("nan.planetpack")), &Quiet).unwrap_err();
    assert!(err.to_string().contains("no valid elevation"), "{err}");
    let empty = dir.path().join("empty.tif");
    write_tiff(
        &empty,
        (64, 32),
        [-180.0, 5.625, 0.0, 90.0, 0.0, -5.625],
        Some(4326),
        &[vec![-9999.0f32; 64 * 32]],
        Some(-9999.0),
    );
    assert!(bake(&options(&empty, &dir.path().join("e.planetpack")), &Quiet).is_err());
}

/// Regression (#49): voids were filled tile by tile, so a void across a
/// tile edge gave the shared edge two heights and the ground cracked open
/// there (the sky showed through a wall of Yosemite Valley). The fill is
/// now a function of the place: both tiles store the same edge.
#[test]
fn a_void_across_a_tile_edge_is_filled_the_same_in_both_tiles() {
    let dir = tempfile::tempdir().unwrap();
    let left = TileAddress::new(0, 2, 1, 1).unwrap();
    let right = TileAddress::new(0, 2, 2, 1).unwrap();
    let centre = planet_terrain::geo::cube::sample_direction(left.sample(128, 64));
    let g = Body::earth().ellipsoid().direction_to_geodetic(centre);
    let (lat0, lon0) = (g.latitude.to_degrees(), g.longitude.to_degrees());
    let mut values = nodes().to_vec();
    for row in 0..HEIGHT {
        for column in 0..WIDTH {
            let (lat, lon) = node(column, row);
            if (lat - lat0).abs() < 3.0 && (lon - lon0).abs() < 3.0 {
                values[row * WIDTH + column] = -32768.0;
            }
        }
    }
    let path = dir.path().join("void.tif");
    write_tiff(&path, (WIDTH, HEIGHT), GEO, Some(4326), &[values], Some(-32768.0));
    let out = dir.path().join("void.planetpack");
    bake(&options(&path, &out), &Quiet).unwrap();
    let pack = Pack::open(&out).unwrap();
    let (a, b) = (pack.read_tile(left).unwrap(), pack.read_tile(right).unwrap());
    let bound = 0.5 * (a.quantisation_step() + b.quantisation_step()) + 1e-6;
    let mut voids_on_the_edge = 0;
    for j in -1..=129 {
        let k = planet_terrain::pack::codec::stored_index(128, j);
        voids_on_the_edge += usize::from(a.is_void(k));
        assert_eq!(a.is_void(k), b.is_void(planet_terrain::pack::codec::stored_index(0, j)), "row {j}");
        let (ha, hb) = (a.elevation(128, j), b.elevation(0, j));
        assert!((ha - hb).abs() <= bound, "row {j}: {ha} and {hb} on the shared edge (bound {bound})");
    }
    assert!(voids_on_the_edge > 10, "the void crosses the edge: {voids_on_the_edge} void samples on it");
}

#[test]
fn a_projected_regional_raster_bakes_its_coverage() {
    let dir = tempfile::tempdir().unwrap();
    // UTM 32N, 100 m pixels, 400 x 400 over the Swiss Alps; an affine field
    // in easting/northing, which bilinear filtering reproduces exactly.
    let (e0, n0, px, size) = (400_000.0, 5_150_000.0, 100.0, 400usize);
    let height = |e: f64, n: f64| 1000.0 + 0.01 * (e - e0) + 0.02 * (n0 - n);
    let mut values = vec![0f32; size * size];
    for row in 0..size {
        for column in 0..size {
            values[row * size + column] = height(e0 + px * (column as f64 + 0.5), n0 - px * (row as f64 + 0.5)) as f32;
        }
    }
    let path = dir.path().join("utm.tif");
    write_tiff(&path, (size, size), [e0, px, 0.0, n0, 0.0, -px], Some(32632), &[values], None);
    let out = dir.path().join("utm.planetpack");
    let mut o = options(&path, &out);
    // The data depth (11, 38 m samples): a shallower one averages the
    // field over each sample's footprint.
    o.depth = None;
    // The raster's centre (E 420 km, N 5130 km) is near 46.32 N, 7.96 E.
    o.landmarks = vec![planet_bake::landmarks::Landmark::parse("46.32,7.96,1000,2500").unwrap()];
    let baked = bake(&o, &Quiet).unwrap();
    // Regression (#55 item 4): a raster without a void reports none. The
    // coarse levels' samples past the box were counted as nodata (a
    // void-free SRTM window read "15.3% nodata" and warned).
    assert_eq!(baked.voids_line(), None, "no voids, no line");
    let report = baked.to_json();
    assert_eq!(report["samples_filled"], 0, "{report}");
    assert_eq!(report["coverage"]["global"], false);
    assert_eq!(report["inputs"]["dem_projected"], true);
    assert_eq!(report["landmarks"]["verdict"], "accepted");
    assert!(
        report["landmarks"]["checks"].as_array().unwrap().iter().any(|c| c["name"]
            .as_str()
            .unwrap()
            .contains("user landmark")
            && c["ok"] == true)
    );
    let pack = Pack::open(&out).unwrap();
    let c = pack.header().coverage;
    assert!(c.contains(46.32, 7.96) && c.north - c.south < 0.5 && c.east - c.west < 0.7, "{c:?}");
    // Depth 11 (38 m samples for 100 m pixels): about 10 x 10 tiles of
    // 4.9 km over the 40 km raster, their edge neighbours and ancestors;
    // the whole face at that depth would be 4 million.
    assert!(pack.tile_count() < 250, "only the tiles over the raster: {}", pack.tile_count() as usize);
    drop(pack);
    // Inside the raster (a pixel in from its edges), every sample is the field.
    let mut utm = gdal::spatial_ref::SpatialRef::from_epsg(32632).unwrap();
    utm.set_axis_mapping_strategy(gdal::spatial_ref::AxisMappingStrategy::TraditionalGisOrder);
    let mut wgs = gdal::spatial_ref::SpatialRef::from_epsg(4326).unwrap();
    wgs.set_axis_mapping_strategy(gdal::spatial_ref::AxisMappingStrategy::TraditionalGisOrder);
    let to_utm = gdal::spatial_ref::CoordTransform::new(&wgs, &utm).unwrap();
    let inside = (e0 + px..e0 + px * (size as f64 - 1.0), n0 - px * (size as f64 - 1.0)..n0 - px);
    let mut checked = 0;
    check_pack(&out, |lat, lon| {
        let (mut x, mut y) = ([lon], [lat]);
        to_utm.transform_coords(&mut x, &mut y, &mut []).unwrap();
        let ok = inside.0.contains(&x[0]) && inside.1.contains(&y[0]);
        checked += usize::from(ok);
        ok.then(|| height(x[0], y[0]))
    });
    assert!(checked > 20_000, "{checked} samples inside the raster");
}

/// A projected raster's box is found from its border, which misses a pole
/// inside it and, crossing the antimeridian, went the long way round: a
/// polar stereographic DEM of the South Pole must cover (and bake) the pole,
/// and a UTM 60 S raster over 180 E a few degrees west of the antimeridian
/// to a few east, not the whole band of longitudes.
#[test]
fn a_projected_raster_covers_a_pole_inside_it_and_crosses_the_antimeridian_the_short_way() {
    let dir = tempfile::tempdir().unwrap();
    let affine = |x: f64, y: f64| 1000.0 + 0.001 * x + 0.002 * y;
    let raster = |name: &str, epsg: u32, (x0, y0): (f64, f64), px: f64, size: usize| {
        let mut values = vec![0f32; size * size];
        for row in 0..size {
            for column in 0..size {
                values[row * size + column] =
                    affine(x0 + px * (column as f64 + 0.5), y0 - px * (row as f64 + 0.5)) as f32;
            }
        }
        let path = dir.path().join(name);
        write_tiff(&path, (size, size), [x0, px, 0.0, y0, 0.0, -px], Some(epsg), &[values], None);
        path
    };
    // Antarctic polar stereographic, 10 km pixels, 320 km each side of the pole.
    let polar = raster("polar.tif", 3031, (-320_000.0, 320_000.0), 10_000.0, 64);
    let out = dir.path().join("polar.planetpack");
    bake(&options(&polar, &out), &Quiet).unwrap();
    let c = Pack::open(&out).unwrap().header().coverage;
    assert_eq!((c.south, c.west, c.east), (-90.0, -180.0, 180.0), "{c:?}");
    assert!(c.north > -86.5 && c.north < -85.0, "the corners, 85.8 S: {c:?}");
    let mut to_polar = gdal::spatial_ref::SpatialRef::from_epsg(3031).unwrap();
    to_polar.set_axis_mapping_strategy(gdal::spatial_ref::AxisMappingStrategy::TraditionalGisOrder);
    let mut wgs = gdal::spatial_ref::SpatialRef::from_epsg(4326).unwrap();
    wgs.set_axis_mapping_strategy(gdal::spatial_ref::AxisMappingStrategy::TraditionalGisOrder);
    let to_polar = gdal::spatial_ref::CoordTransform::new(&wgs, &to_polar).unwrap();
    let mut near_pole = 0;
    check_pack(&out, |lat, lon| {
        let (mut x, mut y) = ([lon], [lat]);
        to_polar.transform_coords(&mut x, &mut y, &mut []).unwrap();
        let inside = x[0].abs() < 310_000.0 && y[0].abs() < 310_000.0;
        near_pole += usize::from(inside && lat < -89.0);
        inside.then(|| affine(x[0], y[0]))
    });
    assert!(near_pole > 100, "{near_pole} samples within a degree of the pole were baked");
    // UTM 60 S, 10 km pixels, 300 km square over 180 E near 15 S.
    let utm = raster("fiji.tif", 32760, (700_000.0, 8_500_000.0), 10_000.0, 30);
    let out = dir.path().join("fiji.planetpack");
    bake(&options(&utm, &out), &Quiet).unwrap();
    let c = Pack::open(&out).unwrap().header().coverage;
    assert!(c.west > 178.0 && c.east < -178.0 && c.east > -179.5, "crosses 180 E, a few degrees wide: {c:?}");
}

/// The tile set's 33 x 33 lattice is a quarter of the samples' density,
/// and a raster narrower than its spacing slipped between its points at
/// the deepest level too: a 1 x 1 raster was refused as meeting "no tile".
#[test]
fn a_one_pixel_raster_bakes_the_tile_it_falls_in() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.tif");
    write_tiff(&path, (1, 1), [8.0, 0.1, 0.0, 46.0, 0.0, -0.1], Some(4326), &[vec![1234.0f32]], None);
    let out = dir.path().join("one.planetpack");
    let mut o = options(&path, &out);
    o.depth = None;
    let report = bake(&o, &Quiet).unwrap().to_json();
    // The tile it falls in, and that tile's ancestors up to its root (so
    // selection, which starts at the roots, finds it).
    assert_eq!(report["tiles_per_depth"], serde_json::json!([1, 1, 1, 1, 1]), "{report}");
    let mut inside = 0;
    check_pack(&out, |lat, lon| {
        let hit = (45.9..46.0).contains(&lat) && (8.0..8.1).contains(&lon);
        inside += usize::from(hit);
        hit.then_some(1234.0)
    });
    assert!(inside > 0, "a sample of the baked tile lies in the pixel");
}

#[test]
fn imagery_and_classes_make_a_codec_2_pack_that_audits() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let (imagery, classes) = colour_and_class_tiffs(dir.path());
    let out = dir.path().join("colour.planetpack");
    let mut o = options(&dem, &out);
    o.depth = Some(1);
    o.imagery = Some(imagery);
    o.classes = Some(classes);
    let report = bake(&o, &Quiet).unwrap().to_json();
    assert_eq!(report["codec"], 2);
    assert_eq!(
        report["colour_data_depth"], 1,
        "1-degree imagery (111 km): depth 0's 78 km is 0.703 pixel, depth 1's 39 km"
    );
    for d in report["accuracy_audit"]["per_depth"].as_array().unwrap() {
        assert_eq!(d["worst_colour_error"], 0);
        assert_eq!(d["class_mismatches"], 0);
    }
    let pack = Pack::open(&out).unwrap();
    let north = pack.read_tile(TileAddress::root(planet_terrain::Face::new(4).unwrap())).unwrap();
    assert!(north.classes.unwrap().iter().all(|&c| c == 1), "the northern hemisphere is class 1");
    assert!(north.colour.unwrap().iter().any(|c| c[1] < 60), "green follows the row");
}

fn planet_bake(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planet-bake")).args(args).output().unwrap()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_report_names_a_provenance_picture_drawn_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let report_path = dir.path().join("bake.json");
    let args = ["--dem", path_str(&dem), "--out", path_str(&out), "--body", "earth", "--depth", "1"];
    let o = planet_bake(&[&args[..], &["--tier", "test", "--report", path_str(&report_path)]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let picture = dir.path().join("bake.provenance.png");
    assert_eq!(report["provenance_png"].as_str(), Some(path_str(&picture)), "{report:#}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&picture).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut rgb).unwrap();
    let (w, h) = (reader.info().width, reader.info().height);
    assert_eq!((w, h), (720, 360 + planet_cli::picture::legend_height(720)));
    // A global bake measured everywhere: the map is the measured colour
    // under its graticule and coast.
    let map = &rgb[..(3 * w * 360) as usize];
    use planet_cli::map::{COAST, GRATICULE, MEASURED};
    assert!(map.chunks(3).all(|p| p == MEASURED || p == GRATICULE || p == COAST), "a pixel of the map is not measured");
    let measured = map.chunks(3).filter(|p| *p == MEASURED).count();
    assert!(measured * 10 > 9 * (w * 360) as usize, "mostly measured ({measured} pixels)");
    assert!(map.chunks(3).any(|p| p == GRATICULE), "the graticule is drawn");
    let legend = &rgb[(3 * w * 360) as usize..];
    assert!(legend.chunks(3).any(|p| p == planet_cli::map::INVENTED), "the legend names invented ground");
}

#[test]
fn a_killed_bake_resumes_to_identical_bytes_with_one_and_two_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let reference = dir.path().join("reference.planetpack");
    let common = ["--body", "earth", "--depth", "2", "--tier", "test", "--level", "3"];
    let run = |out: &Path, jobs: &str, extra: &[&str]| {
        let mut args = vec!["--dem", path_str(&dem), "--out", path_str(out), "--jobs", jobs];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        planet_bake(&args)
    };
    assert!(run(&reference, "2", &[]).status.success());
    let expected = std::fs::read(&reference).unwrap();
    for jobs in ["1", "2"] {
        for kill_after_ms in [150u64, 400, 900] {
            let out = dir.path().join(format!("killed-{jobs}-{kill_after_ms}.planetpack"));
            let mut args = vec![
                "--dem".to_owned(),
                path_str(&dem).to_owned(),
                "--out".into(),
                path_str(&out).to_owned(),
                "--jobs".into(),
                jobs.into(),
            ];
            args.extend(common.iter().map(|s| s.to_string()));
            let mut child = Command::new(env!("CARGO_BIN_EXE_planet-bake"))
                .args(&args)
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(kill_after_ms));
            let _ = child.kill(); // SIGKILL: no chance to clean up
            let _ = child.wait();
            // Killed before the journal existed, mid-bake, or after the pack
            // was renamed into place: only mid-bake leaves a journal, and
            // then a differently parameterised resume is refused.
            if !out.exists() && planet_terrain::pack::partial_path(&out).exists() {
                let refused = run(&out, jobs, &["--resume", "--landmark", "0,0,-11000,9000"]);
                assert!(!refused.status.success());
                assert!(
                    String::from_utf8_lossy(&refused.stderr).contains("cannot resume"),
                    "{}",
                    String::from_utf8_lossy(&refused.stderr)
                );
            }
            let resumed = run(&out, jobs, &["--resume"]);
            assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
            assert!(
                std::fs::read(&out).unwrap() == expected,
                "jobs {jobs}, killed after {kill_after_ms} ms: bytes differ"
            );
        }
    }
}

#[test]
fn a_region_patch_rewrites_exactly_the_tiles_over_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "before.tif", nodes(), GEO);
    let region = Region { south: 10.0, west: 20.0, north: 15.0, east: 30.0 };
    let changed = {
        let mut v = nodes().to_vec();
        for row in 0..HEIGHT {
            for column in 0..WIDTH {
                let (lat, lon) = node(column, row);
                if (region.south..=region.north).contains(&lat) && (region.west..=region.east).contains(&lon) {
                    v[row * WIDTH + column] += 750.0;
                }
            }
        }
        v
    };
    let dem_after = earth_tiff(dir.path(), "after.tif", &changed, GEO);
    let patched = dir.path().join("patched.planetpack");
    bake(&options(&dem, &patched), &Quiet).unwrap();
    let before = std::fs::read(&patched).unwrap();
    let original = Pack::open(&patched).unwrap();
    let original_entries = original.all_entries().unwrap();
    drop(original);

    let report =
        bake(&BakeOptions { region: Some(region), ..options(&dem_after, &patched) }, &Quiet).unwrap().to_json();
    let patched_count = report["tiles_patched"].as_u64().unwrap();
    assert!((3..126).contains(&patched_count), "{patched_count}");
    assert_eq!(report["accuracy_audit"]["passed"], true);

    let after_bytes = std::fs::read(&patched).unwrap();
    let after = Pack::open(&patched).unwrap();
    let patched_tiles: Vec<String> =
        report["patched"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    assert_eq!(patched_tiles.len() as u64, patched_count);
    for old in &original_entries {
        let tile = old.tile();
        let now = after.entry(tile).unwrap().unwrap();
        // (What the patched tiles hold, sample by sample, is checked in
        // tests/patch: the pack outside the box, the DEM inside.)
        if !patched_tiles.contains(&tile.to_string()) {
            assert_eq!(now, *old, "{tile} is outside the patch: its entry is unchanged");
            let range = old.payload_offset as usize..(old.payload_offset + u64::from(old.payload_length)) as usize;
            assert_eq!(
                after_bytes[range.clone()],
                before[range],
                "{tile} is outside the patch: its bytes are unchanged"
            );
        }
    }
    // The region's own tiles really changed.
    let inside =
        planet_terrain::ground::locate(&Body::earth(), planet_terrain::Geodetic::from_degrees(12.5, 25.0, 0.0), 2).0;
    assert!(patched_tiles.contains(&inside.to_string()));
    assert_ne!(
        after.entry(inside).unwrap().unwrap().max_elevation,
        original_entries.iter().find(|e| e.tile() == inside).unwrap().max_elevation
    );

    // A patch that would change the pack's codec or tier is refused.
    let mut wrong_tier = options(&dem_after, &patched);
    wrong_tier.region = Some(region);
    wrong_tier.tier = "other".into();
    assert!(bake(&wrong_tier, &Quiet).unwrap_err().to_string().contains("tier"));
    let mut wrong_codec = options(&dem_after, &patched);
    wrong_codec.region = Some(region);
    wrong_codec.classes = Some(dem_after.clone());
    assert!(bake(&wrong_codec, &Quiet).unwrap_err().to_string().contains("codec"));
    let mut wrong_body = options(&dem_after, &patched);
    wrong_body.region = Some(region);
    wrong_body.body = Body::mars();
    assert!(bake(&wrong_body, &Quiet).unwrap_err().to_string().contains("mars"));
}

#[test]
fn bad_flags_and_bad_files_fail_clearly_and_leave_no_pack() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.planetpack");
    let garbage = dir.path().join("garbage.tif");
    std::fs::write(&garbage, b"this is not a raster").unwrap();
    let missing: PathBuf = dir.path().join("missing.tif");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--dem", path_str(&missing), "--body", "earth", "--out", path_str(&out)], "missing.tif: no such file"),
        (vec!["--dem", path_str(&garbage), "--body", "earth", "--out", path_str(&out)], "garbage.tif"),
        (vec!["--dem", path_str(&garbage), "--body", "vulcan", "--out", path_str(&out)], "unknown body 'vulcan'"),
        (vec!["--dem", path_str(&garbage), "--out", path_str(&out)], "--body"),
        (
            vec![
                "patch",
                "--region",
                "1,2,3,4",
                "--dem",
                path_str(&garbage),
                "--body",
                "earth",
                "--out",
                path_str(&out),
            ],
            "does not exist",
        ),
        (
            vec!["--dem", path_str(&garbage), "--body", "earth", "--out", path_str(&out), "--region", "1,2,3,4"],
            "--region",
        ),
        (vec!["--dem", path_str(&garbage), "--body", "earth", "--out", path_str(&out), "--jobs", "0"], "--jobs"),
        (
            vec!["--dem", path_str(&garbage), "--body", "earth", "--out", path_str(&out), "--landmark", "1,2"],
            "LAT,LON,MIN,MAX",
        ),
        (vec!["--dem", path_str(&garbage), "--radii", "1,2", "--out", path_str(&out)], "radii"),
        (
            vec![
                "shard",
                "1/4",
                "--count",
                "8",
                "--dem",
                path_str(&garbage),
                "--body",
                "earth",
                "--out",
                path_str(&out),
            ],
            "--count 8 disagrees",
        ),
    ];
    for (args, needle) in cases {
        let o = planet_bake(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} left a pack");
    }
}

/// An `--out` in a missing directory failed with an error naming only "the
/// tile set's scratch file", and one that is a directory failed at the final
/// rename, after the whole bake, leaving `OUT.tmp` beside it: both are
/// refused before any work, naming the path.
#[test]
fn an_out_path_no_pack_can_be_put_at_is_refused_before_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let missing = dir.path().join("no-such-dir").join("x.planetpack");
    let outs: [(&Path, &str); 2] = [(&missing, "no-such-dir does not exist"), (dir.path(), "is a directory")];
    for (out, needle) in outs {
        let err = bake(&options(&dem, out), &Quiet).unwrap_err().to_string();
        assert!(err.contains(&out.display().to_string()) && err.contains(needle), "{err}");
        assert!(!planet_terrain::pack::tmp_path(out).exists(), "{} left behind", out.display());
    }
}

/// Regression (#31): `--out` over the DEM replaced it with the pack,
/// `--report` over `--out` replaced the pack with JSON, and `--report` or
/// the digest's `--out` over the DEM overwrote it, each with exit 0.
/// Refused before any work by file identity, however the path is spelt.
#[test]
fn no_output_is_written_over_an_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let original = std::fs::read(&dem).unwrap();
    let linked = dir.path().join("linked.tif");
    std::os::unix::fs::symlink(&dem, &linked).unwrap();
    let out = dir.path().join("earth.planetpack");
    let dotted = dir.path().join(".").join("earth.planetpack");
    let base = ["--dem", path_str(&dem), "--body", "earth", "--depth", "1"];
    let report = dir.path().join("r.json");
    let cases: [(&[&str], &str); 4] = [
        (&["--out", path_str(&linked)], "is the same file as --dem"),
        (&["--out", path_str(&out), "--report", path_str(&dotted)], "are one file"),
        (&["--out", path_str(&out), "--report", path_str(&dem)], "is the same file as --dem"),
        (&["digest", "--out", path_str(&dem)], "is the same file as --dem"),
    ];
    for (extra, needle) in cases {
        // A subcommand comes before the bake's flags.
        let args = match extra {
            ["digest", rest @ ..] => [&["digest"][..], &base[..], rest].concat(),
            _ => [&base[..], extra].concat(),
        };
        let o = planet_bake(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(!out.exists(), "{extra:?}: nothing is baked");
    }
    assert_eq!(std::fs::read(&dem).unwrap(), original, "the DEM is untouched");
    // Distinct paths still bake.
    let o = planet_bake(&[&base[..], &["--out", path_str(&out), "--report", path_str(&report)]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue #32: the accuracy audit, 40% of an ETOPO5 bake's time, printed
/// no count while it ran. In a log its tiles are counted after its stage
/// line, to the whole pack.
#[test]
fn the_accuracy_audit_counts_its_tiles_in_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let o = planet_bake(&["--dem", path_str(&dem), "--out", path_str(&out), "--body", "earth", "--depth", "1"]);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    let tiles = planet_terrain::pack::Pack::open(&out).unwrap().header().tile_count;
    let after_audit = log.split_once("accuracy audit of").map(|(_, rest)| rest).expect("the audit's stage line");
    assert!(after_audit.contains(&format!("{tiles}/{tiles} tiles")), "the audit's count in:\n{log}");
}

/// Issue #32: `--help` printed "`{i}` and `" then a line break for the
/// shard placeholders (clap turns `{n}` into a newline).
#[test]
fn help_prints_the_shard_placeholders_whole() {
    let o = planet_bake(&["shard", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && help.contains("`{i}` and `{count}` become I and N"), "{help}");
    assert!(!help.lines().any(|l| l.trim_start().starts_with('`')), "a line broken at a placeholder:\n{help}");
}

/// Regression (#31): a bake with its stderr closed panicked on its first
/// progress line (status 101) and left no pack. Messages end; the bake
/// does not.
#[test]
fn a_closed_stderr_ends_the_messages_not_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_planet-bake"))
        .args(["--dem", path_str(&dem), "--out", path_str(&out), "--body", "earth", "--depth", "1"])
        .stderr(writer)
        .status()
        .unwrap();
    assert!(status.success(), "status {status:?}");
    planet_terrain::pack::Pack::open(&out).expect("the pack is in place");
}

/// Regression: a `--report` in a missing directory failed only after the
/// pack was baked and put in place (exit 1, no report).
#[test]
fn a_report_path_no_file_can_be_written_at_is_refused_before_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let out = dir.path().join("earth.planetpack");
    let missing = dir.path().join("no-such-dir").join("bake.json");
    let reports: [(&Path, &str); 2] = [(&missing, "no-such-dir does not exist"), (dir.path(), "is a directory")];
    for (report, needle) in reports {
        let args = ["--dem", path_str(&dem), "--out", path_str(&out), "--body", "earth", "--depth", "1"];
        let o = planet_bake(&[&args[..], &["--report", path_str(report)]].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && stderr.contains(path_str(report)) && stderr.contains(needle), "{stderr}");
        assert!(!out.exists(), "{} was baked before the report path was refused", out.display());
    }
}

#[test]
fn scale_offset_and_pixel_is_point_rasters_read_right() {
    use gdal::Metadata;
    let dir = tempfile::tempdir().unwrap();
    // Int16 with scale 0.5 and offset -2000: stored = (h + 2000) / 0.5.
    let quantised: Vec<f32> =
        nodes().iter().map(|&h| ((f64::from(h) + 2000.0) / 0.5).round() as f32 * 0.5 - 2000.0).collect();
    let raw: Vec<i16> = quantised.iter().map(|&h| ((f64::from(h) + 2000.0) / 0.5) as i16).collect();
    let path = dir.path().join("scaled.tif");
    {
        let driver = gdal::DriverManager::get_driver_by_name("GTiff").unwrap();
        let mut ds = driver.create_with_band_type::<i16, _>(&path, WIDTH, HEIGHT, 1).unwrap();
        ds.set_geo_transform(&GEO).unwrap();
        ds.set_spatial_ref(&gdal::spatial_ref::SpatialRef::from_epsg(4326).unwrap()).unwrap();
        let mut band = ds.rasterband(1).unwrap();
        band.set_scale(0.5).unwrap();
        band.set_offset(-2000.0).unwrap();
        band.write((0, 0), (WIDTH, HEIGHT), &mut gdal::raster::Buffer::new((WIDTH, HEIGHT), raw)).unwrap();
    }
    let out = dir.path().join("scaled.planetpack");
    bake(&BakeOptions { depth: Some(2), ..options(&path, &out) }, &Quiet).unwrap();
    check_pack(&out, |lat, lon| Some(field(lat, lon, &quantised)));

    // Pixel-is-point registration: GDAL presents its geotransform as pixel
    // corners whatever the file's registration, and the bake must agree.
    let path = dir.path().join("point.tif");
    {
        let driver = gdal::DriverManager::get_driver_by_name("GTiff").unwrap();
        let mut ds = driver.create_with_band_type::<f32, _>(&path, WIDTH, HEIGHT, 1).unwrap();
        ds.set_metadata_item("AREA_OR_POINT", "Point", "").unwrap();
        ds.set_geo_transform(&GEO).unwrap();
        ds.set_spatial_ref(&gdal::spatial_ref::SpatialRef::from_epsg(4326).unwrap()).unwrap();
        let mut band = ds.rasterband(1).unwrap();
        band.write((0, 0), (WIDTH, HEIGHT), &mut gdal::raster::Buffer::new((WIDTH, HEIGHT), nodes().to_vec())).unwrap();
    }
    assert_eq!(gdal::Dataset::open(&path).unwrap().metadata_item("AREA_OR_POINT", ""), Some("Point".to_owned()));
    let out = dir.path().join("point.planetpack");
    bake(&BakeOptions { depth: Some(2), ..options(&path, &out) }, &Quiet).unwrap();
    check_pack(&out, |lat, lon| Some(field(lat, lon, nodes())));
}

#[test]
fn a_scene_bakes_its_layers_into_the_ground() {
    use planet_terrain::layers::{LayerStack, Scene};
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let text = r#"{"version": 1, "body": "earth", "layers": [
        {"kind": "crater", "order": 1, "lat": -20, "lon": -120, "radius_m": 400000, "depth_m": 2000, "rim_m": 300},
        {"kind": "flatten", "order": 2, "lat": 20, "lon": 60, "radius_m": 300000, "target": "mean", "blend_m": 100000}]}"#;
    let scene = Scene::from_json(text, "earth").unwrap();
    let mut stack = LayerStack::new();
    for layer in scene.layers {
        stack.insert(Body::earth().ellipsoid(), layer).unwrap();
    }
    let out = dir.path().join("scene.planetpack");
    let report =
        bake(&BakeOptions { scene: Some((stack, text.to_owned())), ..options(&dem, &out) }, &Quiet).unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true, "the audit compares against source plus layers");
    let pack = std::sync::Arc::new(Pack::open(&out).unwrap());
    let source = planet_terrain::ground::PackSource::new(pack);
    let at = planet_terrain::Geodetic::from_degrees(-20.0, -120.0, 0.0);
    let got = planet_terrain::ground::sample_ground(&source, at, 2).unwrap().elevation_m;
    let want = field(-20.0, -120.0, nodes()) - 2000.0;
    assert!((got - want).abs() < 150.0, "crater floor {got} vs {want}");
    // A changed scene is a changed bake.
    let plain = dir.path().join("plain.planetpack");
    bake(&options(&dem, &plain), &Quiet).unwrap();
    assert_ne!(Pack::open(&plain).unwrap().header().fingerprint, Pack::open(&out).unwrap().header().fingerprint);
}

#[test]
fn a_land_only_dem_bakes_with_an_explicit_void_value() {
    let dir = tempfile::tempdir().unwrap();
    // A void far larger than a tile (everything west of 100 W), as the
    // oceans are in a land-only DEM.
    let land_only: Vec<f32> = nodes()
        .iter()
        .enumerate()
        .map(|(k, &h)| if node(k % WIDTH, k / WIDTH).1 < -100.0 { -32768.0 } else { h })
        .collect();
    let path = dir.path().join("land.tif");
    write_tiff(&path, (WIDTH, HEIGHT), GEO, Some(4326), &[land_only], Some(-32768.0));
    let out = dir.path().join("land.planetpack");
    // Without a policy for voids larger than a tile, the bake refuses and says what to do.
    let err = bake(&options(&path, &out), &Quiet).unwrap_err();
    assert!(matches!(err, BakeError::NoData { .. }) && err.to_string().contains("--void-value"), "{err}");
    let baked = bake(&BakeOptions { void_value: Some(0.0), ..options(&path, &out) }, &Quiet).unwrap();
    // A third of the DEM void: the terminal warns, naming the policy.
    let line = baked.voids_line().expect("a line on the voids");
    assert!(line.starts_with("warning: ") && line.contains("set to 0 m (--void-value)"), "{line}");
    let report = baked.to_json();
    assert!(report["samples_filled"].as_u64().unwrap() > 100_000);
    assert!(report["nodata_policy"].as_str().unwrap().contains("voids take 0 m"));
    let pack = std::sync::Arc::new(Pack::open(&out).unwrap());
    let source = planet_terrain::ground::PackSource::new(pack.clone());
    let ocean = planet_terrain::Geodetic::from_degrees(0.0, -150.0, 0.0);
    assert_eq!(planet_terrain::ground::sample_ground(&source, ocean, 2).unwrap().elevation_m, 0.0);
    let tile = planet_terrain::ground::locate(&Body::earth(), ocean, 2).0;
    // All voids: nothing in the tile was measured, and each sample says how
    // it was filled.
    let entry = pack.entry(tile).unwrap().unwrap();
    assert!(!entry.measured && entry.voids);
    let voids = pack.decode(&entry).unwrap().voids.expect("a void mask");
    assert_eq!(voids.fill, planet_terrain::pack::codec::VoidFill::Value(0.0));
    assert!(voids.samples.iter().all(|&s| s));
}

/// #49: a regional DEM's voids let the pack below show through in a stack,
/// instead of covering the ground with the bake's fill; alone, the fill
/// stays and reads filled.
#[test]
fn a_regional_packs_voids_show_the_pack_below() {
    let dir = tempfile::tempdir().unwrap();
    let global = dir.path().join("global.planetpack");
    bake(&options(&earth_tiff(dir.path(), "earth.tif", nodes(), GEO), &global), &Quiet).unwrap();
    // 2 x 2 degrees of the South Pacific, 300 m above the global field,
    // with a void of 0.4 x 0.4 degrees in its middle.
    let (step, side) = (0.02, 100usize);
    let (west, north) = (-120.0, -38.0);
    let values: Vec<f32> = (0..side * side)
        .map(|k| {
            let (lat, lon) = (north - step * ((k / side) as f64 + 0.5), west + step * ((k % side) as f64 + 0.5));
            let hole = (-39.2..-38.8).contains(&lat) && (-119.2..-118.8).contains(&lon);
            if hole { -9999.0 } else { (field(lat, lon, nodes()) + 300.0) as f32 }
        })
        .collect();
    let dem = dir.path().join("regional.tif");
    write_tiff(&dem, (side, side), [west, step, 0.0, north, 0.0, -step], Some(4326), &[values], Some(-9999.0));
    let regional = dir.path().join("regional.planetpack");
    let report = bake(&BakeOptions { depth: None, ..options(&dem, &regional) }, &Quiet).unwrap().to_json();
    assert!(report["tiles_with_filled_voids"].as_u64().unwrap() > 0, "{report}");
    let open = |name: &str, path: &Path| planet_terrain::ground::StackedPack {
        name: name.into(),
        source: planet_terrain::ground::PackSource::new(std::sync::Arc::new(Pack::open(path).unwrap())),
    };
    let alone = planet_terrain::ground::GroundStack::of_packs(vec![open("regional", &regional)]).unwrap().unwrap();
    let stacked =
        planet_terrain::ground::GroundStack::of_packs(vec![open("global", &global), open("regional", &regional)])
            .unwrap()
            .unwrap();
    let global_alone = planet_terrain::ground::GroundStack::of_packs(vec![open("global", &global)]).unwrap().unwrap();
    let depth = Pack::open(&regional).unwrap().header().height_data_depth;
    let height = |stack: &planet_terrain::ground::GroundStack, g| {
        planet_terrain::ground::sample_ground(stack, g, depth).unwrap().elevation_m
    };
    let hole = planet_terrain::Geodetic::from_degrees(-39.0, -119.0, 0.0);
    let below = height(&global_alone, hole);
    // Alone, the fill (from the regional ground around, 300 m up) reads filled.
    let origin = alone.origin_at(hole).unwrap();
    assert_eq!((origin.pack.as_deref(), origin.filled.is_some()), (Some("regional"), true), "{origin:?}");
    assert!((height(&alone, hole) - below - 300.0).abs() < 30.0, "{} vs {below}", height(&alone, hole));
    // Stacked, the global pack shows through: its height, its provenance.
    let origin = stacked.origin_at(hole).unwrap();
    assert_eq!((origin.pack.as_deref(), origin.filled), (Some("global"), None), "{origin:?}");
    assert_eq!(origin.through_void_of.as_deref(), Some("regional"));
    assert!((height(&stacked, hole) - below).abs() < 1.0, "{} vs {below}", height(&stacked, hole));
    // Beside the void the regional pack's measured ground is untouched.
    let beside = planet_terrain::Geodetic::from_degrees(-38.3, -119.7, 0.0);
    let origin = stacked.origin_at(beside).unwrap();
    assert_eq!((origin.pack.as_deref(), origin.filled), (Some("regional"), None));
    assert_eq!(origin.provenance, planet_terrain::ground::Provenance::Measured);
    assert_eq!(height(&stacked, beside), height(&alone, beside));
    assert!((height(&stacked, beside) - height(&global_alone, beside) - 300.0).abs() < 30.0);
    // Nodes over the void hold both grounds in their bounds (no hole, no
    // false tight bound): the step at the void's edge is a coarse node's
    // error, as at the box's edge.
    let tile = planet_terrain::ground::locate(&Body::earth(), hole, depth).0;
    let b = stacked.tile_bounds(tile).unwrap();
    let t = stacked.tile(tile).unwrap();
    let (lo, hi) = t.heights.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    assert!(b.min_elevation <= f64::from(lo) && f64::from(hi) <= b.max_elevation, "{b:?} vs {lo}..{hi}");
}

/// Regression (#50): the bake staged its pack at `OUT.partial` and
/// `OUT.tmp` and never checked those names against its inputs, so
/// `--dem o.planetpack.partial --out o.planetpack` exited 0 with the DEM
/// gone. Such an input is refused by name before anything is read, and a
/// pack is never renamed over a FIFO.
#[test]
fn an_input_named_like_the_outputs_staging_file_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.planetpack");
    for staging in ["o.planetpack.partial", "o.planetpack.tmp", "o.planetpack.patch-journal", "o.rejected"] {
        let dem = earth_tiff(dir.path(), staging, nodes(), GEO);
        let before = std::fs::read(&dem).unwrap();
        let o = planet_bake(&["--dem", path_str(&dem), "--body", "earth", "--out", path_str(&out), "--depth", "1"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("where --out") && err.contains("is staged"), "{staging}: {err}");
        assert_eq!(std::fs::read(&dem).unwrap(), before, "{staging} is kept");
        assert!(!out.exists());
        std::fs::remove_file(&dem).unwrap();
    }
    let dem = earth_tiff(dir.path(), "dem.tif", nodes(), GEO);
    let fifo = dir.path().join("pack.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = planet_bake(&["--dem", path_str(&dem), "--body", "earth", "--out", path_str(&fifo), "--depth", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("is a FIFO: a pack is a file"), "{err}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
}
