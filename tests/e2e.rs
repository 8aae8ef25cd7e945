//! A raster through every tool: a GeoTIFF written with GDAL is baked by
//! `planet-bake`, sampled and verified by `planet-pack`, patched in a region,
//! and drawn by `planet-view --shot` with the validation layers on.
//!
//! The key decision: expectations come from GDAL reading the source files
//! back (and a bilinear interpolation written here), never from the pack or
//! the project's samplers, so a misread raster, a wrong patch or a pack that
//! lies about its samples fails even if every tool agrees with itself.

use std::path::Path;

use gdal::raster::Buffer;
use gdal::spatial_ref::SpatialRef;
use gdal::{Dataset, DriverManager};
use planet_system_tests::{json, run, run_ok};

/// Pixel size of the fixture grid, degrees (pixel centres at 0.125 + k / 4).
const STEP: f64 = 0.25;
const WIDTH: usize = 1440;
const HEIGHT: usize = 720;
/// A body with no landmark table, so the audit takes the raster as it is.
const RADII: &str = "3396190,3396190,3376200";
const NAME: &str = "testworld";

/// The fixture field: smooth relief of a few kilometres.
fn field(lat: f64, lon: f64) -> f64 {
    let (lat, lon) = (lat.to_radians(), lon.to_radians());
    1500.0 * (2.0 * lat).sin() * (3.0 * lon).cos() + 700.0 * (2.0 * lon).sin() * lat.cos() - 200.0
}

pub(crate) fn write_geotiff(path: &Path, offset_m: f64) {
    let mut values = vec![0f32; WIDTH * HEIGHT];
    for row in 0..HEIGHT {
        for column in 0..WIDTH {
            let (lat, lon) = (90.0 - STEP * (row as f64 + 0.5), -180.0 + STEP * (column as f64 + 0.5));
            values[row * WIDTH + column] = (field(lat, lon) + offset_m) as f32;
        }
    }
    let driver = DriverManager::get_driver_by_name("GTiff").expect("GDAL has GTiff");
    let mut dataset = driver.create_with_band_type::<f32, _>(path, WIDTH, HEIGHT, 1).expect("create the GeoTIFF");
    dataset.set_geo_transform(&[-180.0, STEP, 0.0, 90.0, 0.0, -STEP]).expect("georeference");
    dataset.set_spatial_ref(&SpatialRef::from_epsg(4326).expect("EPSG:4326")).expect("CRS");
    let mut buffer = Buffer::new((WIDTH, HEIGHT), values);
    dataset.rasterband(1).expect("band 1").write((0, 0), (WIDTH, HEIGHT), &mut buffer).expect("write pixels");
}

/// What GDAL reads back from the file: the band and its geotransform.
struct Reread {
    values: Vec<f32>,
    geo: [f64; 6],
}

impl Reread {
    fn open(path: &Path) -> Reread {
        let dataset = Dataset::open(path).expect("GDAL opens the fixture");
        let geo = dataset.geo_transform().expect("a geotransform");
        let (w, h) = dataset.raster_size();
        let band = dataset.rasterband(1).expect("band 1");
        let values = band.read_as::<f32>((0, 0), (w, h), (w, h), None).expect("read").data().to_vec();
        assert_eq!((w, h), (WIDTH, HEIGHT));
        Reread { values, geo }
    }

    /// Bilinear between pixel centres, wrapping in longitude.
    fn elevation(&self, lat: f64, lon: f64) -> f64 {
        let x = (lon - self.geo[0]) / self.geo[1] - 0.5;
        let y = ((lat - self.geo[3]) / self.geo[5] - 0.5).clamp(0.0, (HEIGHT - 1) as f64);
        let (x0, y0) = (x.floor(), y.floor().min((HEIGHT - 2) as f64));
        let (fx, fy) = (x - x0, y - y0);
        let at = |c: f64, r: f64| f64::from(self.values[r as usize * WIDTH + c.rem_euclid(WIDTH as f64) as usize]);
        let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1.0, y0) * fx;
        let bottom = at(x0, y0 + 1.0) * (1.0 - fx) + at(x0 + 1.0, y0 + 1.0) * fx;
        top * (1.0 - fy) + bottom * fy
    }
}

fn sample(pack: &Path, lat: f64, lon: f64) -> f64 {
    let lat_text = lat.to_string();
    let lon_text = lon.to_string();
    // The measured ground (GDAL's reads judge it), without detail past it.
    let args = ["sample", pack.to_str().unwrap(), "--lat", &lat_text, "--lon", &lon_text, "--json", "--detail", "off"];
    let output = run_ok("planet-pack", &args);
    json(&output)["elevation_m"].as_f64().expect("elevation_m")
}

/// Points across the body: inside the patch box, and far from every tile
/// it touches, in both hemispheres and on both sides of the antimeridian.
/// (A patch re-bakes the whole tiles its box touches; at this data depth a
/// tile spans about 20 degrees, so nearby points move too.)
const PLACES: [(f64, f64); 6] =
    [(15.0, 15.0), (12.5, 18.25), (-40.0, -100.0), (63.1, 171.9), (-7.3, -179.6), (-30.0, 120.0)];
const IN_PATCH: [bool; 6] = [true, true, false, false, false, false];

#[test]
fn a_geotiff_bakes_patches_verifies_and_draws() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (dem, better, pack) =
        (dir.path().join("dem.tif"), dir.path().join("better.tif"), dir.path().join("w.planetpack"));
    write_geotiff(&dem, 0.0);
    write_geotiff(&better, 300.0);
    let source = Reread::open(&dem);
    let improved = Reread::open(&better);

    let report = dir.path().join("report.json");
    let p = |path: &Path| path.to_str().unwrap().to_owned();
    run_ok(
        "planet-bake",
        &["--dem", &p(&dem), "--radii", RADII, "--name", NAME, "--out", &p(&pack), "--report", &p(&report)],
    );
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["accuracy_audit"]["passed"], true, "{report:#}");
    // The pack answers what GDAL reads from the raster, to interpolation
    // and quantisation (a misread grid is off by hundreds of metres).
    let before: Vec<f64> = PLACES.iter().map(|&(lat, lon)| sample(&pack, lat, lon)).collect();
    for (&(lat, lon), &got) in PLACES.iter().zip(&before) {
        let want = source.elevation(lat, lon);
        assert!((got - want).abs() < 2.0, "{lat}, {lon}: pack {got:.2} m, GDAL {want:.2} m");
    }

    // A better DEM for one box: inside it the pack takes the new ground,
    // far from it nothing moves.
    let (better, pack_path) = (p(&better), p(&pack));
    let patch = ["patch", "--dem", &better, "--radii", RADII, "--name", NAME, "--out", &pack_path];
    run_ok("planet-bake", &[&patch[..], &["--region", "10,10,20,20"]].concat());
    for (k, &(lat, lon)) in PLACES.iter().enumerate() {
        let got = sample(&pack, lat, lon);
        if IN_PATCH[k] {
            let want = improved.elevation(lat, lon);
            assert!((got - want).abs() < 2.0, "{lat}, {lon} in the patch: pack {got:.2} m, GDAL {want:.2} m");
        } else {
            assert_eq!(got, before[k], "{lat}, {lon} lies outside the patch and must not move");
        }
    }
    let verify = run_ok("planet-pack", &["verify", &p(&pack)]);
    assert!(String::from_utf8_lossy(&verify.stdout).contains("every rule holds"));

    // The patched pack drawn from 3,000 km over the patch, validation on.
    let (shot, stats) = (dir.path().join("shot.png"), dir.path().join("stats.json"));
    let view = run(
        "planet-view",
        &[
            &p(&pack),
            "--headless",
            "--validation",
            "--lat",
            "15",
            "--lon",
            "15",
            "--alt",
            "3000000",
            "--size",
            "256x192",
            "--shot",
            &p(&shot),
            "--stats",
            &p(&stats),
        ],
    );
    assert!(view.status.success(), "planet-view failed:\n{}", String::from_utf8_lossy(&view.stderr));
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["complete"], true, "the shot waits until the cut is resident: {stats:#}");
    assert_eq!(stats["draw_calls"]["terrain_shaded"], 1, "{stats:#}");
    assert!(stats["nodes_drawn"].as_u64().unwrap() > 0, "{stats:#}");
    // Looking straight down from 3,000 km, the middle of the frame is lit
    // ground with relief, not one flat colour and not the sky.
    let (width, rgba) = decode_png(&shot);
    let middle: Vec<f64> = (72..120)
        .flat_map(|y| (96..160).map(move |x| (y * width + x) * 4))
        .map(|i| 0.2126 * f64::from(rgba[i]) + 0.7152 * f64::from(rgba[i + 1]) + 0.0722 * f64::from(rgba[i + 2]))
        .collect();
    let mean = middle.iter().sum::<f64>() / middle.len() as f64;
    let spread = (middle.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / middle.len() as f64).sqrt();
    assert!(mean > 10.0 && spread > 0.5, "the middle of the shot: mean luminance {mean:.1}, spread {spread:.2}");
}

pub(crate) fn decode_png(path: &Path) -> (usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the shot exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    assert_eq!(info.color_type, png::ColorType::Rgba, "planet-view writes RGBA");
    pixels.truncate(info.buffer_size());
    (info.width as usize, pixels)
}

#[test]
fn a_corrupt_header_is_refused_by_every_tool_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (dem, pack) = (dir.path().join("dem.tif"), dir.path().join("w.planetpack"));
    write_geotiff(&dem, 0.0);
    let p = |path: &Path| path.to_str().unwrap().to_owned();
    run_ok("planet-bake", &["--dem", &p(&dem), "--radii", RADII, "--name", NAME, "--out", &p(&pack), "--depth", "1"]);
    // One bit of the tier name (header offset 80): the header checksum no longer holds.
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[81] ^= 0x01;
    std::fs::write(&pack, bytes).unwrap();
    let (pack, shot) = (p(&pack), p(&dir.path().join("x.png")));
    for (tool, args) in [
        ("planet-pack", vec!["verify", pack.as_str()]),
        ("planet-view", vec![pack.as_str(), "--strict", "--headless", "--shot", shot.as_str()]),
    ] {
        let output = run(tool, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{tool} accepted a corrupt pack");
        assert!(stderr.contains("w.planetpack") && stderr.contains("checksum"), "{tool}:\n{stderr}");
    }
    assert!(!dir.path().join("x.png").exists(), "nothing drawn from a corrupt pack");
    // Without --strict the viewer names the pack and the cause, and draws
    // the body without it (#54 item 4).
    let output = run("planet-view", &[pack.as_str(), "--headless", "--size", "64x48", "--shot", shot.as_str()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "planet-view without --strict:\n{stderr}");
    assert!(stderr.contains("drawing without pack") && stderr.contains("w.planetpack") && stderr.contains("checksum"));
    assert!(dir.path().join("x.png").exists(), "the body is drawn without the pack");
}

#[test]
fn the_committed_sample_pack_verifies_and_answers() {
    let sample = planet_system_tests::workspace().join("packs/samples/tethys.planetpack");
    let sample = sample.to_str().unwrap();
    let verify = run_ok("planet-pack", &["verify", sample]);
    assert!(String::from_utf8_lossy(&verify.stdout).contains("every rule holds"));
    let info = json(&run_ok("planet-pack", &["info", sample, "--json"]));
    assert_eq!((info["body"].as_str(), info["tile_count"].as_u64()), (Some("tethys"), Some(6)), "{info:#}");
    // The deepest crater of the synthetic DEM (35 S, 60 W, 3.2 km deep at
    // its centre, over plains of a few hundred metres) is well below zero.
    let floor = json(&run_ok("planet-pack", &["sample", sample, "--lat", "-35", "--lon", "-60", "--json"]));
    assert!(floor["elevation_m"].as_f64().unwrap() < -2000.0, "{floor:#}");
}
