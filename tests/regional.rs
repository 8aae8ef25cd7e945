//! A regional DEM, end to end: a GeoTIFF of one 10 x 10 degree box is baked
//! into a regional pack, sampled and drawn alone (the ellipsoid stands in
//! outside its box), and drawn as an inset over a global pack, where the
//! two meet, with the validation layers on.
//!
//! Expectations come from GDAL reading the fixture back, and from the base
//! pack read alone, never from the stack under test.

use std::path::Path;

use gdal::raster::Buffer;
use gdal::spatial_ref::SpatialRef;
use gdal::{Dataset, DriverManager};
use planet_system_tests::{json, run, run_ok};

/// The same body as the global fixture of `e2e`, so the two stack.
const RADII: &str = "3396190,3396190,3376200";
const NAME: &str = "testworld";
/// The regional box: 10..20 N, 10..20 E, at 0.05 degree pixels.
const STEP: f64 = 0.05;
const SIDE: usize = 200;
/// The shots' size, pixels.
const WIDTH: usize = 192;
const HEIGHT: usize = 144;

/// A dome 2 km high in the box's middle over a 400 m plateau: nothing like
/// the global field, so a stack that ignores the inset shows.
fn regional_field(lat: f64, lon: f64) -> f64 {
    let r2 = ((lat - 15.0).powi(2) + (lon - 15.0).powi(2)) / 9.0;
    400.0 + 2000.0 * (-r2).exp()
}

pub(crate) fn write_regional(path: &Path) {
    let mut values = vec![0f32; SIDE * SIDE];
    for row in 0..SIDE {
        for column in 0..SIDE {
            let (lat, lon) = (20.0 - STEP * (row as f64 + 0.5), 10.0 + STEP * (column as f64 + 0.5));
            values[row * SIDE + column] = regional_field(lat, lon) as f32;
        }
    }
    let driver = DriverManager::get_driver_by_name("GTiff").expect("GDAL has GTiff");
    let mut dataset = driver.create_with_band_type::<f32, _>(path, SIDE, SIDE, 1).expect("create the GeoTIFF");
    dataset.set_geo_transform(&[10.0, STEP, 0.0, 20.0, 0.0, -STEP]).expect("georeference");
    dataset.set_spatial_ref(&SpatialRef::from_epsg(4326).expect("EPSG:4326")).expect("CRS");
    let mut buffer = Buffer::new((SIDE, SIDE), values);
    dataset.rasterband(1).expect("band 1").write((0, 0), (SIDE, SIDE), &mut buffer).expect("write pixels");
    drop(dataset);
    // What GDAL reads back is what the pack must answer.
    let reread = Dataset::open(path).expect("GDAL opens the fixture");
    assert_eq!(reread.raster_size(), (SIDE, SIDE));
}

fn sample(packs: &[&str], lat: f64, lon: f64) -> serde_json::Value {
    let (lat, lon) = (lat.to_string(), lon.to_string());
    let mut args = vec!["sample"];
    args.extend_from_slice(packs);
    // The packs' own ground (detail past the data depth is planet-pack's
    // tests' business).
    args.extend(["--lat", &lat, "--lon", &lon, "--json", "--detail", "off"]);
    json(&run_ok("planet-pack", &args))
}

/// Draws `packs` looking straight down from `alt_m` over (lat, lon) with
/// validation on; returns the RGBA pixels.
fn shot(dir: &Path, name: &str, packs: &[&str], lat: f64, lon: f64, alt_m: f64) -> Vec<u8> {
    let (png, stats) = (dir.join(format!("{name}.png")), dir.join(format!("{name}.json")));
    let (lat, lon, alt) = (lat.to_string(), lon.to_string(), alt_m.to_string());
    let mut args: Vec<&str> = packs.to_vec();
    args.extend(["--headless", "--validation", "--lat", &lat, "--lon", &lon, "--alt", &alt, "--pitch", "-90"]);
    let size = format!("{WIDTH}x{HEIGHT}");
    args.extend(["--size", &size, "--shot", png.to_str().unwrap(), "--stats", stats.to_str().unwrap()]);
    let view = run("planet-view", &args);
    assert!(view.status.success(), "planet-view {name} failed:\n{}", String::from_utf8_lossy(&view.stderr));
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["complete"], true, "{name}: {stats:#}");
    assert!(stats["nodes_drawn"].as_u64().unwrap() > 0, "{name}: {stats:#}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    pixels.truncate(info.buffer_size());
    pixels
}

/// Mean absolute difference of the RGB channels of two RGBA spans.
fn mean_abs_difference(a: &[u8], b: &[u8]) -> f64 {
    let rgb = |k: &usize| k % 4 != 3;
    let sum: f64 = (0..a.len()).filter(rgb).map(|k| f64::from(a[k].abs_diff(b[k]))).sum();
    sum / (a.len() / 4 * 3) as f64
}

/// The fixture written and baked into `dir` as `valley.planetpack`.
fn bake_valley(dir: &Path) {
    let p = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    write_regional(Path::new(&p("valley.tif")));
    run_ok(
        "planet-bake",
        &["--dem", &p("valley.tif"), "--radii", RADII, "--name", NAME, "--out", &p("valley.planetpack")],
    );
}

#[test]
fn a_regional_pack_flies_alone_and_as_an_inset_over_a_global_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    bake_valley(dir.path());
    let info = json(&run_ok("planet-pack", &["info", &p("valley.planetpack"), "--json"]));
    assert_eq!(info["coverage"]["north"], 20.0, "a regional pack: {info:#}");

    // Alone: its own ground inside the box, the ellipsoid (invented) far away.
    let regional = p("valley.planetpack");
    let top = sample(&[&regional], 15.0, 15.0);
    assert!((top["elevation_m"].as_f64().unwrap() - 2400.0).abs() < 15.0, "{top:#}");
    assert_eq!(top["measured"], true, "{top:#}");
    let far = sample(&[&regional], -40.0, -100.0);
    assert_eq!(far["elevation_m"].as_f64(), Some(0.0), "{far:#}");
    assert!(far["provenance"].as_str().unwrap().starts_with("invented"), "{far:#}");
    // Flown alone from orbit and from 8 km, as a user first tries it.
    shot(dir.path(), "alone-orbit", &[&regional], 15.0, 15.0, 4.0e6);
    shot(dir.path(), "alone-8km", &[&regional], 15.0, 15.0, 8_000.0 + 2_400.0);
    let inside: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("alone-8km.json")).unwrap()).unwrap();
    assert_eq!(inside["no_data_pixels"], 0, "all of it measured ground: {inside:#}");
    let out = run_ok("planet-pack", &["cut", &regional, "--lat", "15", "--lon", "15", "--alt", "8000", "--json"]);
    assert!(json(&out)["nodes_drawn"].as_u64().unwrap() > 0);

    // As an inset over a global pack of the same body.
    let base_dem = p("base.tif");
    crate::e2e::write_geotiff(Path::new(&base_dem), 0.0);
    let base = p("base.planetpack");
    run_ok("planet-bake", &["--dem", &base_dem, "--radii", RADII, "--name", NAME, "--out", &base, "--depth", "3"]);
    let stacked = sample(&[&base, &regional], 15.0, 15.0);
    assert_eq!(stacked["elevation_m"], sample(&[&regional], 15.0, 15.0)["elevation_m"], "the inset wins in its box");
    for (lat, lon) in [(-40.0, -100.0), (30.0, 15.0), (15.0, 25.0)] {
        assert_eq!(
            sample(&[&base, &regional], lat, lon)["elevation_m"],
            sample(&[&base], lat, lon)["elevation_m"],
            "({lat}, {lon}) lies outside the inset's box: the base answers alone"
        );
    }
    // Where the two meet (the box's north edge), drawn from 1,500 km: the
    // inset changes the picture, and validation stays silent.
    let with_inset = shot(dir.path(), "meet", &[&base, &regional], 20.0, 15.0, 1.5e6);
    let base_alone = shot(dir.path(), "base", &[&base], 20.0, 15.0, 1.5e6);
    // The frame's top quarter lies north of the box: the base's ground
    // there is the same bits with or without the inset. Its bottom half
    // looks into the box.
    let rows = |from: usize, to: usize| from * WIDTH * 4..to * WIDTH * 4;
    let north = mean_abs_difference(&with_inset[rows(0, HEIGHT / 4)], &base_alone[rows(0, HEIGHT / 4)]);
    let inside = mean_abs_difference(&with_inset[rows(HEIGHT / 2, HEIGHT)], &base_alone[rows(HEIGHT / 2, HEIGHT)]);
    assert!(north < 0.05, "north of the inset's box the picture changed (mean difference {north:.3})");
    assert!(inside > 0.3, "the inset does not show in its box (mean difference {inside:.3})");
    // Packs of a body no ephemeris places (one given by its radii) beside
    // another body's are refused, naming the bodies and their packs.
    let mars = p("mars.planetpack");
    run_ok("planet-bake", &["--dem", &p("valley.tif"), "--body", "mars", "--out", &mars, "--depth", "2"]);
    let refused = run("planet-view", &[&base, &mars, "--headless", "--shot", &p("never.png")]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && stderr.contains(&format!("and {NAME} has none"))
            && stderr.contains("mars.planetpack")
            && stderr.contains("base.planetpack"),
        "{stderr}"
    );
    assert!(!dir.path().join("never.png").exists());
}

/// A regional pack given alone with no place opens over itself, in
/// daylight (#55 item 3): the viewer opened on a beige ball at 0 N, 0 E;
/// around the box the ground no pack measured is drawn and counted as no
/// data (#51 item 4).
/// The camera frames the box's middle from high enough to see it whole,
/// and the clock's default (10:00 local solar time) is the box's.
#[test]
fn a_regional_pack_alone_opens_over_itself_in_daylight() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    bake_valley(dir.path());
    let size = format!("{WIDTH}x{HEIGHT}");
    let (png, stats) = (p("open.png"), p("open.json"));
    let args = ["--headless", "--validation", "--size", &size, "--shot", &png, "--stats", &stats];
    run_ok("planet-view", &[&[p("valley.planetpack").as_str()][..], &args].concat());
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let at = |key: &str| stats[key].as_f64().unwrap_or_else(|| panic!("{key}: {stats:#}"));
    assert_eq!((at("camera_lat"), at("camera_lon")), (15.0, 15.0), "over the box's middle: {stats:#}");
    // The box is 10 degrees (about 590 km on this body): seen whole under
    // the default 50 degrees, not from the default 20,000 km.
    assert!((600_000.0..1_500_000.0).contains(&at("camera_alt_m")), "{stats:#}");
    let pixels = crate::e2e::decode_png(Path::new(&png)).1;
    let middle = (HEIGHT / 2 * WIDTH + WIDTH / 2) * 4;
    let luminance = 0.2126 * f64::from(pixels[middle]) + 0.7152 * f64::from(pixels[middle + 1]);
    assert!(luminance > 40.0, "the dome in daylight: {:?}", &pixels[middle..middle + 4]);
    // Around the box, ground no pack measured is drawn as no data, grey
    // (it was a beige plain, shaded like the ground), and its share said.
    let share = at("no_data_share");
    assert!((0.05..0.9).contains(&share), "the no-data share: {stats:#}");
    let corner = &pixels[(WIDTH + 1) * 4..(WIDTH + 1) * 4 + 3];
    let spread = corner.iter().max().unwrap() - corner.iter().min().unwrap();
    assert!(spread < 16, "no data is a neutral grey, not ground: {corner:?}");
    // A place on the command line is kept.
    let placed = p("placed.json");
    let args = ["--headless", "--size", &size, "--lat", "-30", "--shot", &p("placed.png"), "--stats", &placed];
    run_ok("planet-view", &[&[p("valley.planetpack").as_str()][..], &args].concat());
    let placed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&placed).unwrap()).unwrap();
    assert_eq!((&placed["camera_lat"], &placed["camera_alt_m"]), (&(-30.0).into(), &20_000_000.0.into()), "{placed:#}");
}

/// A pack of a few hundred metres flies alone: with no shallow tiles of
/// its own it drew nothing (the roots took the ellipsoid's bounds with no
/// error, and selection never descended). Now its ancestors lead selection
/// down: from 5 km and from 200 m the cut reaches its data depth, its
/// measured ground is drawn, and a shot over it shows the DEM (validation
/// on). Real data: the 1 m lidar DEM of 400 m square from `tools/deps.sh`.
#[test]
fn a_pack_smaller_than_a_kilometre_flies_alone_down_to_its_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let dem = std::env::var("PLANET_DEM_DIR").unwrap_or_else(|_| "/usr/local/share/planet/dems".into());
    let dem = format!("{dem}/minnesota-lidar-1m-utm15n.tif");
    assert!(Path::new(&dem).exists(), "{dem} is missing: run tools/deps.sh");
    let pack = p("lidar.planetpack");
    run_ok("planet-bake", &["--dem", &dem, "--body", "earth", "--out", &pack]);
    let info = json(&run_ok("planet-pack", &["info", &pack, "--json"]));
    let data_depth = info["height_data_depth"].as_u64().expect("a data depth");
    let c = &info["coverage"];
    let (lat, lon) = (
        (c["south"].as_f64().unwrap() + c["north"].as_f64().unwrap()) / 2.0,
        (c["west"].as_f64().unwrap() + c["east"].as_f64().unwrap()) / 2.0,
    );
    let ground = sample(&[&pack], lat, lon);
    assert_eq!(ground["measured"], true, "{ground:#}");
    let ground_m = ground["elevation_m"].as_f64().unwrap();
    assert!((370.0..420.0).contains(&ground_m), "{ground:#}");
    let (lat, lon) = (lat.to_string(), lon.to_string());
    for above in [5_000.0, 200.0] {
        let alt = (ground_m + above).to_string();
        let args =
            ["cut", &pack, "--lat", &lat, "--lon", &lon, "--alt", &alt, "--pitch", "-90", "--json", "--detail", "off"];
        let cut = json(&run_ok("planet-pack", &args));
        assert!(cut["deepest_drawn_depth"].as_u64().unwrap() >= data_depth, "{above} m up: {cut:#}");
        assert!(cut["nodes_drawn_measured"].as_u64().unwrap() > 0, "{above} m up: {cut:#}");
    }
    let view = run(
        "planet-view",
        &[&pack, "--headless", "--validation", "--lat", &lat, "--lon", &lon, "--agl", "200", "--pitch", "-90"]
            .into_iter()
            .chain(["--size", "128x96", "--shot", &p("lidar.png"), "--stats", &p("lidar.json")])
            .collect::<Vec<_>>(),
    );
    assert!(view.status.success(), "planet-view failed:\n{}", String::from_utf8_lossy(&view.stderr));
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p("lidar.json")).unwrap()).unwrap();
    assert_eq!(stats["complete"], true, "{stats:#}");
    assert!(stats["nodes_drawn"].as_u64().unwrap() > 0, "{stats:#}");
}
