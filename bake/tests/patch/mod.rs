//! Region patches never invent ground. The key decision these tests hold
//! the bake to: the pack being patched is the base, and a patch replaces
//! only what its DEM measured inside the box. So every check compares the
//! patched pack with the pack as it was (outside the box, over the DEM's
//! nodata) and with the patch DEM (inside the box), sample by sample, at
//! every depth, rather than with a fresh bake of the patch DEM.

use std::path::{Path, PathBuf};

use planet_bake::{BakeOptions, Region, bake};
use planet_terrain::ground::{locate, sample_directions};
use planet_terrain::pack::{DecodedTile, Pack};
use planet_terrain::{Body, Geodetic, TileAddress};

use super::support::{GEO, colour_and_class_tiffs, earth_tiff, write_tiff};
use super::{Quiet, nodes, options};

/// The patch DEMs' ground: a plane in latitude and longitude, which the
/// bilinear filter reproduces exactly between pixel centres.
fn plane(lat: f64, lon: f64) -> f64 {
    1500.0 + 20.0 * lat - 10.0 * lon
}

const PIXEL: f64 = 0.25;
/// The blend border the bake states: two of the patch DEM's pixels.
const BORDER: f64 = 2.0 * PIXEL;

/// Writes a geographic DEM of `plane` over `south..north`, `west..east`,
/// with `hole` (a box of pixels) set to nodata.
fn patch_dem(dir: &Path, name: &str, bounds: (f64, f64, f64, f64), hole: Option<Region>) -> PathBuf {
    patch_dem_of(dir, name, bounds, hole, PIXEL)
}

fn patch_dem_of(
    dir: &Path,
    name: &str,
    (south, west, north, east): (f64, f64, f64, f64),
    hole: Option<Region>,
    pixel: f64,
) -> PathBuf {
    let (w, h) = (((east - west) / pixel) as usize, ((north - south) / pixel) as usize);
    let mut v = vec![0f32; w * h];
    for r in 0..h {
        for c in 0..w {
            let (lat, lon) = (north - pixel * (r as f64 + 0.5), west + pixel * (c as f64 + 0.5));
            let in_hole = hole.is_some_and(|b| (b.south..=b.north).contains(&lat) && (b.west..=b.east).contains(&lon));
            v[r * w + c] = if in_hole { -9999.0 } else { plane(lat, lon) as f32 };
        }
    }
    let path = dir.join(name);
    write_tiff(&path, (w, h), [west, pixel, 0.0, north, 0.0, -pixel], Some(4326), &[v], Some(-9999.0));
    path
}

fn base_pack(dir: &Path, depth: u8) -> (PathBuf, PathBuf) {
    let dem = earth_tiff(dir, "earth.tif", nodes(), GEO);
    let out = dir.join("earth.planetpack");
    bake(&BakeOptions { depth: Some(depth), ..options(&dem, &out) }, &Quiet).unwrap();
    (dem, out)
}

fn patch_options(dem: &Path, out: &Path, region: Region) -> BakeOptions {
    BakeOptions { region: Some(region), depth: None, ..options(dem, out) }
}

const BOX: Region = Region { south: 10.0, west: 10.0, north: 20.0, east: 20.0 };

/// Every decoded tile of a pack, by address.
fn tiles(path: &Path) -> Vec<(TileAddress, DecodedTile)> {
    let pack = Pack::open(path).unwrap();
    pack.all_entries().unwrap().iter().map(|e| (e.tile(), pack.decode(e).unwrap())).collect()
}

/// Bilinear height at a point from the tile of `depth` that holds it.
fn height_at(path: &Path, lat: f64, lon: f64, depth: u8) -> f64 {
    let (tile, u, v) = locate(&Body::earth(), Geodetic::from_degrees(lat, lon, 0.0), depth);
    let t = Pack::open(path).unwrap().read_tile(tile).unwrap();
    let (i, j) = (u.floor().min(127.0), v.floor().min(127.0));
    let (fu, fv) = (u - i, v - j);
    let at = |di: f64, dj: f64| t.elevation((i + di) as i32, (j + dj) as i32);
    (at(0.0, 0.0) * (1.0 - fu) + at(1.0, 0.0) * fu) * (1.0 - fv) + (at(0.0, 1.0) * (1.0 - fu) + at(1.0, 1.0) * fu) * fv
}

fn lat_lon(tile: TileAddress) -> Vec<(f64, f64)> {
    let e = Body::earth();
    sample_directions(tile)
        .into_iter()
        .map(|d| {
            let g = e.ellipsoid().direction_to_geodetic(d);
            (g.latitude.to_degrees(), g.longitude.to_degrees())
        })
        .collect()
}

fn inside(b: &Region, (lat, lon): (f64, f64), pad: f64) -> bool {
    lat >= b.south + pad && lat <= b.north - pad && lon >= b.west + pad && lon <= b.east - pad
}

/// What a sample inside the box should hold.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// The patch DEM's plane (beyond the blend border).
    Dem,
    /// The pack's old value (the DEM has no data there).
    Kept,
    /// Not checked (next to a DEM void, where the filter reads fewer taps).
    Skip,
}

/// Checks a patched pack sample by sample against the pack before it:
/// outside `region` (and wherever `inside_box` says `Kept`) every value is
/// the old one (bit for bit when the tile kept its range, else within the
/// new step); deeper than the blend border inside it, the patch DEM's plane.
/// Tiles above the pack's height data depth are filtered from the level
/// below, so a sample there is judged only where everything within
/// `reach` of it (two sample spacings of its depth) is judged alike, and
/// the plane is met within `FILTERED_PLANE_M`. Returns how many samples
/// took the plane, per depth.
fn check_composite(
    before: &[(TileAddress, DecodedTile)],
    after: &Path,
    region: &Region,
    inside_box: impl Fn((f64, f64)) -> Expect,
) -> Vec<usize> {
    let filter_from = Pack::open(after).unwrap().header().height_data_depth;
    let after = tiles(after);
    // The largest quantisation step at each depth after the patch.
    let mut steps = vec![0.0f64; 32];
    for (tile, t) in &after {
        let d = usize::from(tile.depth());
        steps[d] = steps[d].max(t.quantisation_step());
    }
    let mut from_dem = vec![0; 8];
    let judge = |p: (f64, f64)| match inside(region, p, -1e-9) {
        false => Expect::Kept,
        true => match inside_box(p) {
            Expect::Dem if !inside(region, p, BORDER + 1e-6) => Expect::Skip,
            e => e,
        },
    };
    for ((tile, old), (same, new)) in before.iter().zip(&after) {
        assert_eq!(tile, same);
        let step = new.quantisation_step();
        let same_range = (old.min_elevation, old.max_elevation) == (new.min_elevation, new.max_elevation);
        let filtered = tile.depth() < filter_from;
        let reach = 2.0 * 90.0 / f64::from(128u32 << tile.depth());
        for (k, p) in lat_lon(*tile).into_iter().enumerate() {
            let (was, now) = (old.dequantise(old.quantised[k]), new.dequantise(new.quantised[k]));
            let expect = match filtered {
                false => judge(p),
                true => {
                    let probes: Vec<Expect> = [-1.0, 0.0, 1.0]
                        .iter()
                        .flat_map(|a| [-1.0, 0.0, 1.0].map(|b| judge((p.0 + a * reach, p.1 + b * reach))))
                        .collect();
                    if probes.iter().all(|e| *e == probes[0]) { probes[0] } else { Expect::Skip }
                }
            };
            if expect == Expect::Kept {
                // A filtered tile's kept samples are filters of children the
                // patch may have re-quantised (a child straddling the box):
                // they move within the children's step and their own, never
                // by the patch's heights.
                if filtered {
                    let bound = step + steps[usize::from(tile.depth()) + 1] + 1e-6;
                    assert!((now - was).abs() <= bound, "{tile} sample {k} at {p:?}: {was} -> {now}, bound {bound}");
                } else if same_range {
                    assert_eq!(now.to_bits(), was.to_bits(), "{tile} sample {k} at {p:?} lies outside the patch");
                } else {
                    assert!((now - was).abs() <= step + 1e-6, "{tile} sample {k} at {p:?}: {was} -> {now}");
                }
            } else if expect == Expect::Dem {
                let want = plane(p.0, p.1);
                let bound = 0.5 * step + 2e-3 + if filtered { FILTERED_PLANE_M } else { 0.0 };
                assert!((now - want).abs() <= bound, "{tile} sample {k} at {p:?}: {now}, DEM {want}");
                from_dem[usize::from(tile.depth())] += 1;
            }
        }
        if new.classes.is_some() {
            assert_eq!(new.classes, old.classes, "{tile}: a heights-only patch keeps classes");
            assert_eq!(new.colour, old.colour, "{tile}: a heights-only patch keeps colour");
        }
    }
    from_dem
}

/// How far a filtered tile may stand from the patch DEM's plane: the plane
/// is linear in latitude and longitude, not in the face grid the filter
/// averages over, so its footprint mean departs from its centre value by
/// the curvature of that mapping over a sample spacing.
const FILTERED_PLANE_M: f64 = 0.5;

#[test]
fn a_patch_keeps_the_pack_outside_its_box_and_takes_the_dem_inside() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 3);
    let before = tiles(&pack);
    let bytes = std::fs::read(&pack).unwrap();
    let entries = Pack::open(&pack).unwrap().all_entries().unwrap();
    let places = [(30.0, 15.0), (0.0, 15.0), (15.0, 15.0), (12.0, 17.0)];
    let was: Vec<f64> = places.iter().map(|&(lat, lon)| height_at(&pack, lat, lon, 3)).collect();
    let dem = patch_dem(dir.path(), "patch.tif", (5.0, 5.0, 25.0, 25.0), None);
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet);
    let now: Vec<f64> = places.iter().map(|&(lat, lon)| height_at(&pack, lat, lon, 3)).collect();
    for ((p, a), b) in places.iter().zip(&was).zip(&now) {
        let tile = locate(&Body::earth(), Geodetic::from_degrees(p.0, p.1, 0.0), 3).0;
        let step = Pack::open(&pack).unwrap().read_tile(tile).unwrap().quantisation_step();
        eprintln!("{p:?}: {a:.4} m -> {b:.4} m (patch DEM {:.1} m, {tile} step {step:.4} m)", plane(p.0, p.1));
    }
    let report = report.unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true);
    // Outside the box: unchanged, bit for bit where the tile kept its range,
    // else within the tile's new quantisation step.
    for k in [0, 1] {
        let (lat, lon) = places[k];
        let tile = locate(&Body::earth(), Geodetic::from_degrees(lat, lon, 0.0), 3).0;
        let step = Pack::open(&pack).unwrap().read_tile(tile).unwrap().quantisation_step();
        assert!((now[k] - was[k]).abs() <= step, "{lat} N {lon} E lies outside the box: {} -> {}", was[k], now[k]);
    }
    for k in [2, 3] {
        assert!((now[k] - plane(places[k].0, places[k].1)).abs() < 0.1, "{:?}: {}", places[k], now[k]);
    }
    let from_dem = check_composite(&before, &pack, &BOX, |_| Expect::Dem);
    // (e) Ancestors: depths 0..2 over the box took the DEM too.
    for depth in 0..=3 {
        assert!(from_dem[depth] > 0, "depth {depth} took no sample from the DEM: {from_dem:?}");
    }
    let patched: Vec<String> =
        report["patched"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    let after_bytes = std::fs::read(&pack).unwrap();
    let after = Pack::open(&pack).unwrap();
    for old in &entries {
        if !patched.contains(&old.tile().to_string()) {
            assert_eq!(after.entry(old.tile()).unwrap().unwrap(), *old, "{} is outside the patch", old.tile());
            let range = old.payload_offset as usize..(old.payload_offset + u64::from(old.payload_length)) as usize;
            assert_eq!(after_bytes[range.clone()], bytes[range], "{}: bytes unchanged", old.tile());
        }
    }
    for depth in 0..=3u8 {
        let over = locate(&Body::earth(), Geodetic::from_degrees(15.0, 15.0, 0.0), depth).0;
        assert!(patched.contains(&over.to_string()), "{over} holds the box and was re-baked");
    }
}

/// Regression (#31): with detail on, a small patch moved the ground 16.7 m
/// a quarter degree outside its box and over 1 m 110 km away, because the
/// detail's law was measured again from the patched data when the pack was
/// read. The law is now recorded at the bake and kept by the patch, so
/// outside the box the ground, detail on or off, is unchanged beyond the
/// rewritten tiles, and in them moves by the re-quantisation of their
/// samples alone (docs/planetpack.md, "What a patch changes").
#[test]
fn outside_its_box_a_patch_moves_ground_with_detail_only_by_requantisation() {
    use planet_terrain::ground::query::GroundReader;
    use planet_terrain::ground::{HeightSource, PackSource};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 3);
    let read = || PackSource::new(Arc::new(Pack::open(&pack).unwrap()));
    let law = read().pack().header().detail.expect("a bake records its detail law");
    assert_eq!(law, read().measure_detail_law().unwrap(), "the law recorded is the law measured");
    // Around the box: a tenth, a quarter and two degrees out, and far away.
    let mut places = Vec::new();
    for out in [0.1, 0.25, 2.0] {
        for (lat, lon) in [(15.0, BOX.west - out), (15.0, BOX.east + out), (BOX.south - out, 15.0)] {
            places.push((lat, lon));
        }
        places.extend([(BOX.north + out, 15.0), (BOX.north + out, BOX.east + out), (BOX.south - out, BOX.west - out)]);
    }
    places.extend([(45.0, 60.0), (-30.0, -100.0), (16.0, 40.0)]);
    const DEPTH: u8 = 9;
    let heights = |source: &dyn HeightSource| -> Vec<f64> {
        let mut reader = GroundReader::new(source, DEPTH);
        places.iter().map(|&(lat, lon)| reader.height(Geodetic::from_degrees(lat, lon, 0.0)).unwrap()).collect()
    };
    let (off_before, on_before) = (heights(&read()), heights(&read().with_detail()));

    let dem = patch_dem(dir.path(), "patch.tif", (5.0, 5.0, 25.0, 25.0), None);
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap().to_json();
    let after = read();
    assert_eq!(after.pack().header().detail, Some(law), "the patch keeps the law");
    let remeasured = after.measure_detail_law().unwrap();
    eprintln!("law recorded {law:?}; measured again after the patch {remeasured:?}");
    assert_ne!(remeasured, law, "this patch changes what the data measures, so the test can tell");
    let (off_after, on_after) = (heights(&after), heights(&after.with_detail()));

    let patched: Vec<String> =
        report["patched"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    let data_depth = after.pack().header().height_data_depth;
    let detail = after.with_detail();
    assert!(law.twist_cap.is_finite(), "the law caps a cell's relief, so the bound below is finite");
    let (mut exact, mut bounded) = (0, 0);
    for (k, &(lat, lon)) in places.iter().enumerate() {
        let tile = locate(&Body::earth(), Geodetic::from_degrees(lat, lon, 0.0), data_depth).0;
        let (d_off, d_on) = (off_after[k] - off_before[k], on_after[k] - on_before[k]);
        eprintln!("{lat} N {lon} E ({tile}): detail off moved {d_off:+.4} m, on {d_on:+.4} m");
        if patched.contains(&tile.to_string()) {
            // The tile was rewritten: its samples outside the box moved by
            // half its new step at most, and detail's amplitude and fall
            // lines with them (`DetailSource::requantisation_bound`).
            let half_step = after.pack().read_tile(tile).unwrap().quantisation_step() / 2.0;
            assert!(d_off.abs() <= half_step + 1e-3, "{lat} N {lon} E, detail off: {d_off} m > {half_step} m");
            let bound = detail.requantisation_bound(data_depth, DEPTH, half_step) + 1e-3;
            eprintln!("  rewritten: half step {half_step:.4} m, bound with detail {bound:.3} m");
            assert!(d_on.abs() <= bound, "{lat} N {lon} E, detail on: {d_on} m > {bound} m");
            bounded += 1;
        } else {
            assert_eq!((d_off, d_on), (0.0, 0.0), "{lat} N {lon} E lies beyond the rewritten tiles");
            exact += 1;
        }
    }
    assert!(exact >= 3 && bounded >= 6, "points of both kinds were checked: {exact} exact, {bounded} bounded");
}

/// Makes the pack at `path` a version 2 pack (no detail law), as packs
/// baked before version 3 are: the law bytes cleared, the header CRC made
/// again; or a version 3 one, as packs baked before #49 are: its law bytes
/// kept, made for the detail before it.
fn as_version(path: &Path, version: u16) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[8..10].copy_from_slice(&version.to_le_bytes());
    if version == 2 {
        bytes[21..24].fill(0);
        bytes[248..252].fill(0);
    }
    let crc = crc32fast::hash(&bytes[..252]);
    bytes[252..256].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, bytes).unwrap();
}

/// A version 2 pack records no law, and a version 3 pack's law (for the
/// detail before #49) is set aside; the first patch of either records the
/// law it was read with (measured from it before the patch), so its
/// detail outside the patch is what it was, and the pack is version 4
/// from then on.
#[test]
fn the_first_patch_of_a_version_2_or_3_pack_records_the_law_it_was_read_with() {
    use planet_terrain::ground::PackSource;
    use std::sync::Arc;
    for version in [2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let (_, pack) = base_pack(dir.path(), 3);
        as_version(&pack, version);
        let read = || PackSource::new(Arc::new(Pack::open(&pack).unwrap()));
        assert_eq!(read().pack().header().detail, None, "version {version}");
        let law = read().measure_detail_law().unwrap();
        let dem = patch_dem(dir.path(), "patch.tif", (5.0, 5.0, 25.0, 25.0), None);
        bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap();
        let after = read().pack().header().clone();
        assert_eq!((after.version(), after.detail), (4, Some(law)), "version {version}: the law measured before");
        assert_ne!(read().measure_detail_law().unwrap(), law, "not the law the patched data measures");
    }
}

#[test]
fn ancestors_are_rebuilt_from_the_same_composite_at_their_own_depth() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 2);
    let before = tiles(&pack);
    let old_entries = Pack::open(&pack).unwrap().all_entries().unwrap();
    let dem = patch_dem(dir.path(), "patch.tif", (5.0, 5.0, 25.0, 25.0), None);
    bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap();
    let from_dem = check_composite(&before, &pack, &BOX, |_| Expect::Dem);
    assert!(from_dem[..3].iter().all(|&n| n > 0), "{from_dem:?}");
    // A tile with samples kept from a measured tile and samples measured by
    // the 0.25-degree DEM (data depth 3) stays measured; errors are never
    // below the children's.
    let after = Pack::open(&pack).unwrap();
    for e in &after.all_entries().unwrap() {
        let old = old_entries.iter().find(|o| o.key == e.key).unwrap();
        assert_eq!(e.measured, old.measured, "{}", e.tile());
        for child in e.tile().children().into_iter().flatten() {
            if let Some(c) = after.entry(child).unwrap() {
                assert!(e.geometric_error >= c.geometric_error, "{} vs child {child}", e.tile());
            }
        }
    }
}

#[test]
fn a_dem_smaller_than_the_tiles_it_touches_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 2);
    let before = tiles(&pack);
    let dem = patch_dem(dir.path(), "small.tif", (11.0, 11.0, 14.0, 14.0), None);
    let region = Region { south: 11.5, west: 11.5, north: 13.5, east: 13.5 };
    let report = bake(&patch_options(&dem, &pack, region), &Quiet).unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true);
    let from_dem = check_composite(&before, &pack, &region, |_| Expect::Dem);
    assert!(from_dem[2] > 0, "{from_dem:?}");
}

#[test]
fn a_dem_that_does_not_cover_the_box_is_refused_and_the_pack_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 1);
    let bytes = std::fs::read(&pack).unwrap();
    let dem = patch_dem(dir.path(), "south.tif", (5.0, 5.0, 15.0, 25.0), None);
    let message = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap_err().to_string();
    assert!(message.contains("--region 10,10,20,20 reaches beyond south.tif's data"), "{message}");
    assert!(message.contains("15..20 N is not covered"), "{message}");
    assert!(message.contains("the DEM covers 5..15 N, 5..25 E"), "{message}");
    assert!(std::fs::read(&pack).unwrap() == bytes, "a refused patch writes nothing");
}

#[test]
fn nodata_inside_the_box_keeps_the_pack() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 2);
    let before = tiles(&pack);
    let hole = Region { south: 12.0, west: 12.0, north: 14.0, east: 16.0 };
    let dem = patch_dem(dir.path(), "holed.tif", (5.0, 5.0, 25.0, 25.0), Some(hole));
    let was = height_at(&pack, 13.0, 14.0, 2);
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true);
    // Every tap of a sample more than a pixel inside the hole is nodata;
    // within a pixel of it the filter reads the valid taps only.
    let in_hole = |p: (f64, f64)| match (inside(&hole, p, PIXEL), inside(&hole, p, -PIXEL)) {
        (true, _) => Expect::Kept,
        (false, true) => Expect::Skip,
        _ => Expect::Dem,
    };
    let from_dem = check_composite(&before, &pack, &BOX, in_hole);
    assert!(from_dem[2] > 0);
    let now = height_at(&pack, 13.0, 14.0, 2);
    let tile = locate(&Body::earth(), Geodetic::from_degrees(13.0, 14.0, 0.0), 2).0;
    let step = Pack::open(&pack).unwrap().read_tile(tile).unwrap().quantisation_step();
    assert!((now - was).abs() <= step, "13 N 14 E is in the DEM's hole: {was} -> {now}, step {step}");
}

/// A codec-2 pack at depth 1 with imagery and classes over the globe.
fn colour_pack(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let dem = earth_tiff(dir, "earth.tif", nodes(), GEO);
    let (imagery, classes) = colour_and_class_tiffs(dir);
    let out = dir.join("colour.planetpack");
    let o = BakeOptions {
        depth: Some(1),
        imagery: Some(imagery.clone()),
        classes: Some(classes.clone()),
        ..options(&dem, &out)
    };
    bake(&o, &Quiet).unwrap();
    (out, imagery, classes)
}

#[test]
fn a_codec_2_pack_is_patched_in_heights_colour_or_classes_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (pack, _, _) = colour_pack(dir.path());
    let before = tiles(&pack);
    let dem = patch_dem(dir.path(), "patch.tif", (5.0, 5.0, 25.0, 25.0), None);
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true);
    // Classes and colour bit for bit (checked inside), heights composited.
    check_composite(&before, &pack, &BOX, |_| Expect::Dem);

    // Colour alone: a white image over 5..25 N, 5..25 E.
    let white = dir.path().join("white.tif");
    let band = vec![255u8; 80 * 80];
    write_tiff(
        &white,
        (80, 80),
        [5.0, PIXEL, 0.0, 25.0, 0.0, -PIXEL],
        Some(4326),
        &[band.clone(), band.clone(), band],
        None,
    );
    let heights = tiles(&pack);
    let colour_only =
        BakeOptions { dem: PathBuf::new(), imagery: Some(white), ..patch_options(Path::new(""), &pack, BOX) };
    let report = bake(&colour_only, &Quiet).unwrap().to_json();
    assert_eq!(report["accuracy_audit"]["passed"], true);
    let mut whitened = 0;
    for ((tile, old), (_, new)) in heights.iter().zip(tiles(&pack)) {
        assert_eq!(new.quantised, old.quantised, "{tile}: colour alone keeps heights");
        assert_eq!((new.min_elevation, new.max_elevation), (old.min_elevation, old.max_elevation));
        assert_eq!(new.classes, old.classes, "{tile}: colour alone keeps classes");
        let (a, b) = (old.colour.as_ref().unwrap(), new.colour.as_ref().unwrap());
        for (k, p) in lat_lon(*tile).into_iter().enumerate() {
            if !inside(&BOX, p, -1e-9) {
                assert_eq!(a[k], b[k], "{tile} sample {k} at {p:?} lies outside the box");
            } else if inside(&BOX, p, 2.0 * BORDER) {
                assert_eq!(b[k], [255; 3], "{tile} sample {k} at {p:?}");
                whitened += 1;
            }
        }
    }
    assert!(whitened > 0);

    // Classes alone: class 7 over 5..25 N, 5..25 E switches at weight 1/2.
    let sevens = dir.path().join("sevens.tif");
    write_tiff(&sevens, (80, 80), [5.0, PIXEL, 0.0, 25.0, 0.0, -PIXEL], Some(4326), &[vec![7u8; 80 * 80]], None);
    let before = tiles(&pack);
    let classes_only =
        BakeOptions { dem: PathBuf::new(), classes: Some(sevens), ..patch_options(Path::new(""), &pack, BOX) };
    assert_eq!(bake(&classes_only, &Quiet).unwrap().to_json()["accuracy_audit"]["passed"], true);
    let mut sevened = 0;
    for ((tile, old), (_, new)) in before.iter().zip(tiles(&pack)) {
        assert_eq!((&new.quantised, &new.colour), (&old.quantised, &old.colour), "{tile}: classes alone");
        let (a, b) = (old.classes.as_ref().unwrap(), new.classes.as_ref().unwrap());
        for (k, p) in lat_lon(*tile).into_iter().enumerate() {
            if !inside(&BOX, p, -1e-9) {
                assert_eq!(a[k], b[k], "{tile} sample {k} at {p:?} lies outside the box");
            } else if inside(&BOX, p, BORDER) {
                assert_eq!(b[k], 7, "{tile} sample {k} at {p:?}");
                sevened += 1;
            }
        }
    }
    assert!(sevened > 0);
}

#[test]
fn a_patch_that_would_need_another_codec_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 0);
    let bytes = std::fs::read(&pack).unwrap();
    let white = dir.path().join("white.tif");
    write_tiff(&white, (4, 4), [5.0, 5.0, 0.0, 25.0, 0.0, -5.0], Some(4326), &vec![vec![255u8; 16]; 3], None);
    let colour_only =
        BakeOptions { dem: PathBuf::new(), imagery: Some(white), ..patch_options(Path::new(""), &pack, BOX) };
    let message = bake(&colour_only, &Quiet).unwrap_err().to_string();
    assert!(message.contains("codec 0, which stores no colour"), "{message}");
    let nothing = BakeOptions { dem: PathBuf::new(), ..patch_options(Path::new(""), &pack, BOX) };
    assert!(bake(&nothing, &Quiet).unwrap_err().to_string().contains("needs a DEM, imagery or classes"));
    assert!(std::fs::read(&pack).unwrap() == bytes);
    // Only a patch may leave the DEM out.
    let no_dem = options(Path::new(""), &dir.path().join("none.planetpack"));
    assert!(bake(&no_dem, &Quiet).unwrap_err().to_string().contains("a bake needs a DEM"));
}

#[test]
fn a_coarse_dem_leaves_the_tiles_deeper_than_its_data_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 2);
    let old = Pack::open(&pack).unwrap().all_entries().unwrap();
    // 2-degree pixels support depth 0 only.
    let dem = patch_dem_of(dir.path(), "coarse.tif", (4.0, 4.0, 26.0, 26.0), None, 2.0);
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap().to_json();
    assert!((report["blend_border_deg"].as_f64().unwrap() - 4.0).abs() < 1e-9, "{report:#}");
    let patched: Vec<String> =
        report["patched"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    let after = Pack::open(&pack).unwrap();
    for e in &old {
        let now = after.entry(e.tile()).unwrap().unwrap();
        // Re-baked, with some stored sample inside the box (a tile touched
        // only through its padding keeps every sample it had).
        let in_box = sample_directions(e.tile()).into_iter().any(|d| {
            let g = Body::earth().ellipsoid().direction_to_geodetic(d);
            let (lat, lon) = (g.latitude.to_degrees(), g.longitude.to_degrees());
            (BOX.south..=BOX.north).contains(&lat) && (BOX.west..=BOX.east).contains(&lon)
        });
        let took_dem = patched.contains(&e.tile().to_string()) && in_box;
        let want = e.measured && (!took_dem || e.tile().depth() == 0);
        assert_eq!(now.measured, want, "{}", e.tile());
    }
}

/// A patch records itself in the header: the count, the last box, and a
/// digest of the inputs that made it; a second patch counts on. The digest
/// is of the bytes, so the same DEM under another name records the same.
#[test]
fn a_patch_records_itself_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pack) = base_pack(dir.path(), 1);
    assert_eq!(Pack::open(&pack).unwrap().header().patches, planet_terrain::pack::PatchHistory::default());
    let dem = patch_dem(dir.path(), "small.tif", (11.0, 11.0, 14.0, 14.0), None);
    let first = Region { south: 11.5, west: 11.5, north: 13.5, east: 13.5 };
    bake(&patch_options(&dem, &pack, first), &Quiet).unwrap();
    let h = Pack::open(&pack).unwrap().header().patches;
    let last = h.last.expect("a last patch");
    assert_eq!(h.count, 1);
    assert_eq!((last.region.south, last.region.west, last.region.north, last.region.east), (11.5, 11.5, 13.5, 13.5));
    // Regression (#31): the same patch again (the documented recovery of a
    // patch killed after its journal went) was applied a second time: count
    // 2, a new fingerprint, the border re-blended, exit 0.
    let bytes = std::fs::read(&pack).unwrap();
    let report = bake(&patch_options(&dem, &pack, first), &Quiet).unwrap().to_json();
    assert_eq!(report["mode"], "patch already applied", "{report:#}");
    assert_eq!(std::fs::read(&pack).unwrap(), bytes, "nothing changed");
    let copy = dir.path().join("renamed.tif");
    std::fs::copy(&dem, &copy).unwrap();
    let second = Region { south: 12.0, west: 12.0, north: 13.0, east: 13.25 };
    bake(&patch_options(&copy, &pack, second), &Quiet).unwrap();
    let again = Pack::open(&pack).unwrap().header().patches;
    assert_eq!(again.count, 2);
    let latest = again.last.unwrap();
    assert_eq!((latest.region.north, latest.region.east), (13.0, 13.25));
    assert_eq!(latest.inputs, last.inputs, "the same bytes under another name are the same inputs");
    let other = patch_dem_of(dir.path(), "other.tif", (11.0, 11.0, 14.0, 14.0), None, PIXEL / 2.0);
    bake(&patch_options(&other, &pack, second), &Quiet).unwrap();
    assert_ne!(Pack::open(&pack).unwrap().header().patches.last.unwrap().inputs, last.inputs);
}

/// A patch from the very raster a pack was baked from changes nothing: every
/// tile it re-bakes, the coarse ones refiltered from the patched level below
/// included, holds what the full bake stored, with the same error and flags.
#[test]
fn a_patch_from_the_bakes_own_raster_gives_the_tiles_the_full_bake_gave() {
    let dir = tempfile::tempdir().unwrap();
    let (dem, pack) = base_pack(dir.path(), 2);
    let before = tiles(&pack);
    let entries = Pack::open(&pack).unwrap().all_entries().unwrap();
    let report = bake(&patch_options(&dem, &pack, BOX), &Quiet).unwrap().to_json();
    let patched = report["patched"].as_array().unwrap();
    assert!(patched.iter().any(|t| t.as_str().unwrap().split('/').nth(1) == Some("0")), "{patched:?}");
    let after = tiles(&pack);
    let now = Pack::open(&pack).unwrap();
    for ((tile, old), (_, new)) in before.iter().zip(&after) {
        assert_eq!(old, new, "{tile}");
        let (e, n) = (entries.iter().find(|e| e.tile() == *tile).unwrap(), now.entry(*tile).unwrap().unwrap());
        assert_eq!(e.measured, n.measured, "{tile}");
        // The error is the lattice's departure from the samples, taken of
        // exact heights in a bake and of decoded ones in a patch.
        let error = (f64::from(e.geometric_error) - f64::from(n.geometric_error)).abs();
        assert!(error <= old.quantisation_step() + 1e-3, "{tile}: {} vs {}", e.geometric_error, n.geometric_error);
    }
}
