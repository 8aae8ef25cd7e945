//! planet-pack end to end: the real binary on packs the tests write.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use planet_terrain::ground::sample_directions;
use planet_terrain::pack::{Codec, Coverage, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, Geodetic, TileAddress};

fn ground(d: glam::DVec3) -> f64 {
    2000.0 * (2.0 * d.x).sin() + 1000.0 * d.z
}

fn write_fixture(dir: &Path, codec: Codec) -> PathBuf {
    let path = dir.join("fixture.planetpack");
    let tiles: Vec<TileAddress> = (0..=1u8)
        .flat_map(|depth| {
            let n = 1u32 << depth;
            (0..6u8).flat_map(move |f| {
                (0..n).flat_map(move |x| (0..n).map(move |y| TileAddress::new(f, depth, x, y).unwrap()))
            })
        })
        .collect();
    let spec = PackSpec {
        body: Body::earth(),
        tier: "standard".into(),
        codec,
        height_data_depth: 1,
        colour_data_depth: if codec.has_colour() { 1 } else { 0 },
        coverage: Coverage::GLOBAL,
        fingerprint: [0xab; 32],
        compression_level: 3,
    };
    let writer = PackWriter::create(&path, spec, tiles.iter().copied()).unwrap();
    for tile in tiles {
        let directions = sample_directions(tile);
        let heights: Vec<f64> = directions.iter().map(|&d| ground(d)).collect();
        let classes: Vec<u8> = heights.iter().map(|&h| if h < 0.0 { 1 } else { 2 }).collect();
        let colour: Vec<[u8; 3]> =
            heights.iter().map(|&h| if h < 0.0 { [20, 60, 150] } else { [90, 140, 60] }).collect();
        let content = TileContent {
            heights: &heights,
            classes: codec.has_classes().then_some(&classes[..]),
            colour: codec.has_colour().then_some(&colour[..]),
            geometric_error: 10.0,
            measured: true,
            voids: None,
        };
        writer.put(tile, &content).unwrap();
    }
    writer.finish().unwrap();
    path
}

fn planet_pack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planet-pack")).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn info_reports_header_depths_counts_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::HeightsClassesColour);
    let p = pack.to_str().unwrap();
    let out = planet_pack(&["info", p, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["body"], "earth");
    assert_eq!(v["tier"], "standard");
    assert_eq!(v["codec"], 2);
    assert_eq!(v["tile_count"], 30);
    assert_eq!(v["tiles_per_depth"], serde_json::json!([6, 24]));
    assert_eq!(v["height_data_depth"], 1);
    assert!(v["compression_ratio"].as_f64().unwrap() > 1.0);
    assert_eq!(v["file_bytes"].as_u64().unwrap(), std::fs::metadata(&pack).unwrap().len());

    let out = planet_pack(&["info", p, "--json", "--tiles"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["tiles"].as_array().unwrap().len(), 30);
    assert_eq!(v["tiles"][0]["tile"], "0/0/0/0");

    let out = planet_pack(&["info", p]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("depth  1    24"), "{}", stdout(&out));
}

#[test]
fn verify_passes_a_sound_pack_and_names_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let p = pack.to_str().unwrap();
    let out = planet_pack(&["verify", p]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("ok: "));

    let mut bytes = std::fs::read(&pack).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 0xff;
    std::fs::write(&pack, &bytes).unwrap();
    let out = planet_pack(&["verify", p]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(p) && err.contains("checksum mismatch") && err.contains("tile 5/1/"), "{err}");

    bytes[0] = b'Q';
    std::fs::write(&pack, &bytes).unwrap();
    let out = planet_pack(&["verify", p]);
    assert!(!out.status.success() && stderr(&out).contains("bad magic at byte 0"), "{}", stderr(&out));
}

#[test]
fn sample_answers_where_a_person_stands() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let p = pack.to_str().unwrap();
    let earth = Body::earth();
    for (lat, lon) in [(46.5, 8.0), (-33.9, -70.2), (89.0, 179.0)] {
        // The measured ground alone (detail past the data depth is
        // `sample_says_where_detail_was_synthesized`'s).
        let (lat_text, lon_text) = (lat.to_string(), lon.to_string());
        let args = ["sample", p, "--lat", &lat_text, "--lon", &lon_text, "--json", "--detail", "off"];
        let out = planet_pack(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let expected = ground(earth.ellipsoid().geodetic_to_direction(Geodetic::from_degrees(lat, lon, 0.0)));
        let got = v["elevation_m"].as_f64().unwrap();
        assert!((got - expected).abs() < 25.0, "({lat}, {lon}): {got} vs {expected}");
        assert_eq!(v["depth"], 1);
        assert_eq!(v["measured"], true);
        assert_eq!((v["water_surface_m"].is_null(), v["water_depth_m"].is_null()), (true, true), "dry land");
    }
    // Under the sea (the fixture's ground 2.5 km down at 60 S, 180 E): the
    // floor, and the water's surface at 0 m over it.
    let v = sample_json(&[&pack], -60.0, 180.0, &["--detail", "off"]);
    let floor = v["elevation_m"].as_f64().unwrap();
    assert!(floor < -2000.0, "{v:#}");
    assert_eq!(v["water_surface_m"].as_f64(), Some(0.0), "{v:#}");
    assert!((v["water_depth_m"].as_f64().unwrap() + floor).abs() < 1e-6, "{v:#}");
    let out = planet_pack(&["sample", p, "--lat", "-60", "--lon", "180", "--detail", "off"]);
    assert!(stdout(&out).contains("under the sea: its surface at 0.00 m"), "{}", stdout(&out));
    let out = planet_pack(&["sample", p, "--lat", "95", "--lon", "0"]);
    assert!(!out.status.success() && stderr(&out).contains("--lat"));
}

#[test]
fn tile_writes_a_picture_and_refuses_what_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    for codec in [Codec::Heights, Codec::HeightsClasses, Codec::HeightsClassesColour] {
        let pack = write_fixture(dir.path(), codec);
        let png_path = dir.path().join("tile.png");
        let out = planet_pack(&["tile", pack.to_str().unwrap(), "0/1/1/0", "--png", png_path.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png_path).unwrap()));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (524, 524));
    }
    let pack = dir.path().join("fixture.planetpack");
    let out = planet_pack(&["tile", pack.to_str().unwrap(), "0/4/1/0", "--png", "/dev/null"]);
    assert!(!out.status.success() && stderr(&out).contains("deepest stored ancestor is 0/1/0/0"), "{}", stderr(&out));
    let out = planet_pack(&["tile", pack.to_str().unwrap(), "7/0/0/0", "--png", "/dev/null"]);
    assert!(!out.status.success() && stderr(&out).contains("face 7"), "{}", stderr(&out));
}

/// Regression (#31): `map P --png P`, `tile P KEY --png P` and
/// `upgrade P --out LINK-TO-P` replaced the pack they read, and `tile --png
/// X --heights X` let one output replace the other, each with exit 0.
#[test]
fn no_output_is_written_over_the_pack_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let original = std::fs::read(&pack).unwrap();
    let link = dir.path().join("link.planetpack");
    std::os::unix::fs::symlink(&pack, &link).unwrap();
    let png = dir.path().join("tile.png");
    let p = |path: &Path| path.to_str().unwrap().to_owned();
    let cases: [(Vec<String>, &str); 4] = [
        (vec!["map".into(), p(&pack), "--png".into(), p(&pack)], "is the same file as PACK"),
        (vec!["tile".into(), p(&pack), "0/1/1/0".into(), "--png".into(), p(&link)], "is the same file as PACK"),
        (vec!["upgrade".into(), p(&pack), "--out".into(), p(&link)], "is the same file as PACK"),
        (
            vec!["tile".into(), p(&pack), "0/1/1/0".into(), "--png".into(), p(&png), "--heights".into(), p(&png)],
            "are one file",
        ),
    ];
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = planet_pack(&args);
        assert!(!out.status.success() && stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(&pack).unwrap(), original, "the pack is untouched");
    assert!(!png.exists(), "nothing was written");
}

#[test]
fn missing_files_and_bad_flags_fail_clearly() {
    let out = planet_pack(&["info", "/nonexistent/earth.planetpack"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("/nonexistent/earth.planetpack") && stderr(&out).contains("opening the pack"),
        "{}",
        stderr(&out)
    );
    let out = planet_pack(&["info"]);
    assert!(!out.status.success());
    let out = planet_pack(&["frobnicate", "x"]);
    assert!(!out.status.success());
}

#[test]
fn sample_applies_a_scene() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let p = pack.to_str().unwrap();
    let scene = dir.path().join("scene.json");
    std::fs::write(
        &scene,
        r#"{"version": 1, "body": "earth", "layers": [
        {"kind": "crater", "order": 1, "lat": 46.5, "lon": 8.0, "radius_m": 5000, "depth_m": 300, "rim_m": 50}]}"#,
    )
    .unwrap();
    let read = |extra: &[&str]| {
        let mut args = vec!["sample", p, "--lat", "46.5", "--lon", "8.0", "--json"];
        args.extend_from_slice(extra);
        let out = planet_pack(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()
    };
    let bare = read(&[])["elevation_m"].as_f64().unwrap();
    let edited = read(&["--scene", scene.to_str().unwrap()]);
    assert_eq!(edited["layers_applied"], 1);
    let dug = edited["elevation_m"].as_f64().unwrap();
    assert!((bare - dug - 300.0).abs() < 5.0, "bare {bare}, with the crater {dug}");
    std::fs::write(&scene, r#"{"version": 1, "body": "mars", "layers": []}"#).unwrap();
    let out = planet_pack(&["sample", p, "--lat", "0", "--lon", "0", "--scene", scene.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("'mars'"), "{}", stderr(&out));
}

#[test]
fn cut_reports_what_a_camera_would_draw() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let p = pack.to_str().unwrap();
    let run = |alt: &str, pitch: &str| {
        let out = planet_pack(&["cut", p, "--lat", "46", "--lon", "8", "--alt", alt, "--pitch", pitch, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()
    };
    let orbit = run("20000000", "-90");
    let ground = run("3000", "-10");
    assert!(orbit["nodes_drawn"].as_u64().unwrap() >= 1);
    assert!(ground["deepest_drawn_depth"].as_u64() > orbit["deepest_drawn_depth"].as_u64(), "{ground} vs {orbit}");
    let s = ground["nodes_selected"].as_u64().unwrap();
    assert_eq!(s, ground["nodes_drawn"].as_u64().unwrap() + ground["nodes_culled"].as_u64().unwrap());
    let out = planet_pack(&["cut", p, "--lat", "46", "--lon", "8", "--alt", "100", "--size", "wide"]);
    assert!(!out.status.success() && stderr(&out).contains("WIDTHxHEIGHT"));
    // Regression (#50): a camera a million kilometres inside the body was
    // given a cut.
    let out = planet_pack(&["cut", p, "--lat", "46", "--lon", "8", "--alt", "-1e9"]);
    assert!(!out.status.success() && stderr(&out).contains("inside the body"), "{}", stderr(&out));
    // The drawn slopes (#49): over a global pack every drawn triangle counts.
    let slopes = run("3000", "-10");
    assert!(slopes.get("drawn_slopes").is_none(), "only when asked: {slopes}");
    let out = planet_pack(&[
        "cut",
        p,
        "--lat",
        "46",
        "--lon",
        "8",
        "--alt",
        "3000",
        "--pitch",
        "-10",
        "--drawn-slopes",
        "--json",
    ]);
    let asked: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = &asked["drawn_slopes"];
    assert_eq!(d["nodes"], asked["nodes_drawn"], "{asked}");
    assert_eq!(d["triangles"].as_u64().unwrap(), 2048 * d["nodes"].as_u64().unwrap());
    let (median, p999) = (d["median_deg"].as_f64().unwrap(), d["p99_9_deg"].as_f64().unwrap());
    assert!(0.0 < median && median <= p999 && p999 < 90.0, "{d}");
}

/// Regression (#31): `verify` with its stderr closed (a log reader that
/// left) panicked on its progress line, status 101. Messages end; the job
/// does not.
#[test]
fn a_closed_stderr_ends_the_messages_not_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(env!("CARGO_BIN_EXE_planet-pack"))
        .args(["verify", pack.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert!(status.success(), "status {status:?}");
}

/// Regression (#31): `info` on a FIFO blocked forever in the open, waiting
/// for a writer. Refused by its type, at once.
#[test]
fn a_fifo_is_refused_by_its_type_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pack.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_planet-pack"))
        .args(["info", fifo.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("info on a FIFO still blocked after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("it is a FIFO, not a pack file"), "{}", stderr(&out));
}

/// Regression (#31): `repair` of a path with nothing there said "no pack
/// here" and exited 0; `upgrade --out DIR` failed at its rename and left
/// `DIR.tmp`.
#[test]
fn repair_of_nothing_fails_and_upgrade_into_a_directory_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.planetpack");
    let out = planet_pack(&["repair", missing.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("nothing to repair"), "{}", stderr(&out));
    let pack = write_fixture(dir.path(), Codec::Heights);
    let target = dir.path().join("upgraded");
    std::fs::create_dir(&target).unwrap();
    let out = planet_pack(&["upgrade", pack.to_str().unwrap(), "--out", target.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert!(!dir.path().join("upgraded.tmp").exists(), "nothing left beside it");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    // The reader takes nothing and goes away: every write after that fails
    // with a broken pipe, which must end the command without a panic.
    let mut child = Command::new(env!("CARGO_BIN_EXE_planet-pack"))
        .args(["info", pack.to_str().unwrap(), "--tiles"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "status {:?}, stderr:\n{stderr}", output.status);
    assert!(stderr.is_empty(), "nothing said on a closed pipe, got:\n{stderr}");
}

#[test]
fn numbers_are_finite_and_negative_ones_need_no_equals_sign() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let pack = pack.to_str().unwrap();
    for (args, expect) in [
        (vec!["cut", pack, "--lat", "10", "--lon", "nan", "--alt", "1000"], "invalid value 'nan' for '--lon"),
        (vec!["cut", pack, "--lat", "10", "--lon", "5", "--alt", "1000", "--heading", "inf"], "not a finite number"),
        (vec!["sample", pack, "--lat", "91", "--lon", "5"], "latitude 91"),
        (vec!["cut", pack, "--lat", "1", "--lon", "1", "--alt", "100", "--budget", "3"], "--budget"),
    ] {
        let output = planet_pack(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(stderr.contains(expect), "{args:?}: expected '{expect}' in:\n{stderr}");
    }
    let below_sea = planet_pack(&["cut", pack, "--lat", "-33.9", "--lon", "-70.7", "--alt", "-430", "--pitch", "-20"]);
    assert!(below_sea.status.success(), "{}", String::from_utf8_lossy(&below_sea.stderr));
}

/// A regional pack holding a flat `height` over `coverage`, depths 0..=3:
/// the tiles over the box's centre, as a regional bake stores.
fn write_regional(dir: &Path, name: &str, body: Body, coverage: Coverage, height: f64) -> PathBuf {
    let path = dir.join(name);
    let centre =
        Geodetic::from_degrees(0.5 * (coverage.south + coverage.north), 0.5 * (coverage.west + coverage.east), 0.0);
    let tiles: Vec<TileAddress> = (0..=3).map(|d| planet_terrain::ground::locate(&body, centre, d).0).collect();
    let spec = PackSpec {
        body,
        tier: "standard".into(),
        codec: Codec::Heights,
        height_data_depth: 3,
        colour_data_depth: 0,
        coverage,
        fingerprint: [0xcd; 32],
        compression_level: 3,
    };
    let writer = PackWriter::create(&path, spec, tiles.iter().copied()).unwrap();
    for tile in tiles {
        let heights = vec![height; planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT];
        let content = TileContent {
            heights: &heights,
            classes: None,
            colour: None,
            geometric_error: 0.0,
            measured: true,
            voids: None,
        };
        writer.put(tile, &content).unwrap();
    }
    writer.finish().unwrap();
    path
}

const ALPS: Coverage = Coverage { south: 44.0, west: 5.0, north: 48.0, east: 12.0 };

fn sample_json(packs: &[&Path], lat: f64, lon: f64, extra: &[&str]) -> serde_json::Value {
    let (lat, lon) = (lat.to_string(), lon.to_string());
    let mut args = vec!["sample"];
    args.extend(packs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--lat", &lat, "--lon", &lon, "--json"]);
    args.extend_from_slice(extra);
    let out = planet_pack(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn a_regional_pack_alone_is_sampled_and_cut_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let alps = write_regional(dir.path(), "alps.planetpack", Body::earth(), ALPS, 1234.0);
    let inside = sample_json(&[&alps], 46.0, 8.5, &[]);
    assert!((inside["elevation_m"].as_f64().unwrap() - 1234.0).abs() < 1e-3, "{inside:#}");
    assert_eq!((inside["measured"].as_bool(), inside["provenance"].as_str()), (Some(true), Some("measured")));
    // Where the pack holds no tile at all, the ellipsoid answers, marked invented: never an error.
    let far = sample_json(&[&alps], -30.0, 120.0, &[]);
    assert_eq!(far["elevation_m"].as_f64(), Some(0.0), "{far:#}");
    assert!(far["provenance"].as_str().unwrap().starts_with("invented"), "{far:#}");
    // The cut a camera would draw, from orbit and low over the box.
    for alt in ["20000000", "8000"] {
        let out = planet_pack(&["cut", alps.to_str().unwrap(), "--lat", "46", "--lon", "8.5", "--alt", alt, "--json"]);
        assert!(out.status.success(), "{alt}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert!(v["nodes_drawn"].as_u64().unwrap() >= 1, "{v:#}");
    }
}

#[test]
fn a_later_pack_lies_over_an_earlier_one_inside_its_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let base = write_fixture(dir.path(), Codec::Heights);
    let alps = write_regional(dir.path(), "alps.planetpack", Body::earth(), ALPS, 1234.0);
    let over = sample_json(&[&base, &alps], 46.0, 8.5, &[]);
    assert!((over["elevation_m"].as_f64().unwrap() - 1234.0).abs() < 1e-3, "{over:#}");
    assert_eq!(over["packs"].as_array().unwrap().len(), 2);
    // Outside the inset's box the base answers, bit for bit as alone.
    for (lat, lon) in [(30.0, 8.5), (-33.9, -70.2)] {
        let stacked = sample_json(&[&base, &alps], lat, lon, &[]);
        let alone = sample_json(&[&base], lat, lon, &[]);
        assert_eq!(stacked["elevation_m"], alone["elevation_m"], "({lat}, {lon})");
        assert_eq!(stacked["provenance"], alone["provenance"]);
    }
    // The order is the user's: the base over the inset hides it.
    let under = sample_json(&[&alps, &base], 46.0, 8.5, &[]);
    assert_eq!(under["elevation_m"], sample_json(&[&base], 46.0, 8.5, &[])["elevation_m"]);
}

#[test]
fn packs_of_two_bodies_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let earth = write_fixture(dir.path(), Codec::Heights);
    let mars = write_regional(dir.path(), "mars.planetpack", Body::mars(), ALPS, 0.0);
    let out = planet_pack(&["sample", earth.to_str().unwrap(), mars.to_str().unwrap(), "--lat", "0", "--lon", "0"]);
    let e = stderr(&out);
    assert!(!out.status.success() && e.contains("mars.planetpack") && e.contains("fixture.planetpack"), "{e}");
    assert!(e.contains("a stack holds one body"), "{e}");
}

/// A layer changes nothing outside its footprint, bit for bit: `sample
/// --scene` far from every layer prints what `sample` alone prints (the two
/// once read the ground at different depths and differed by 1.7e-7 m).
#[test]
fn a_scene_changes_nothing_away_from_its_layers() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let scene = dir.path().join("scene.json");
    std::fs::write(
        &scene,
        r#"{"version": 1, "body": "earth", "layers": [
        {"kind": "crater", "order": 1, "lat": 46.5, "lon": 8.0, "radius_m": 5000, "depth_m": 300, "rim_m": 50},
        {"kind": "flatten", "order": 2, "lat": -10.0, "lon": 30.0, "radius_m": 2000, "blend_m": 500, "elevation_m": 100}]}"#,
    )
    .unwrap();
    for (lat, lon) in [(46.7, 8.0), (0.0, 0.0), (-33.9, -70.2), (27.99, 86.93)] {
        let bare = sample_json(&[&pack], lat, lon, &[]);
        let with = sample_json(&[&pack], lat, lon, &["--scene", scene.to_str().unwrap()]);
        assert_eq!(with["layers_applied"], 2);
        let (a, b) = (bare["elevation_m"].as_f64().unwrap(), with["elevation_m"].as_f64().unwrap());
        assert_eq!(a.to_bits(), b.to_bits(), "({lat}, {lon}): {a} vs {b}");
    }
}

/// Parses a .npy v1.0 file of '<f4' by hand: the header says little-endian
/// f32 of shape (131, 131), the data starts on a 64-byte boundary and holds
/// exactly 131 x 131 values.
fn read_npy(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<f4'") && header.contains("'fortran_order': False"), "{header}");
    assert!(header.contains("'shape': (131, 131)") && header.ends_with('\n'), "{header}");
    assert_eq!((10 + header_len) % 64, 0);
    let data = &bytes[10 + header_len..];
    assert_eq!(data.len(), 131 * 131 * 4);
    data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn tile_heights_are_written_as_npy_past_the_stored_depth_with_and_without_detail() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::HeightsClasses);
    let p = pack.to_str().unwrap();
    let npy = |key: &str, name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        let mut args = vec!["tile", p, key, "--heights", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = planet_pack(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        (read_npy(&path), stdout(&out))
    };
    // A stored, measured tile: detail changes nothing.
    let (on, text) = npy("0/1/1/0", "stored.npy", &[]);
    assert!(text.contains("measured"), "{text}");
    assert_eq!(on, npy("0/1/1/0", "stored-off.npy", &["--detail", "off"]).0);
    // Past the stored depth, on land: synthesized, and marked so.
    let (on, text) = npy("0/9/100/300", "deep.npy", &[]);
    assert!(text.contains("invented"), "{text}");
    let (off, text) = npy("0/9/100/300", "deep-off.npy", &["--detail", "off"]);
    assert!(text.contains("resampled from depth 1"), "{text}");
    assert!(on.iter().all(|h| h.is_finite()) && on != off);
    let out = planet_pack(&["tile", p, "0/1/1/0"]);
    assert!(!out.status.success() && stderr(&out).contains("--heights"), "{}", stderr(&out));
}

#[test]
fn sample_says_where_detail_was_synthesized() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::HeightsClasses);
    // The point stands on measured ground; the detail over it is named.
    let on = sample_json(&[&pack], 46.5, 8.0, &[]);
    assert_eq!(on["measured"], true);
    assert_eq!(on["detail_synthesized"], true);
    assert!(on["provenance"].as_str().unwrap().starts_with("measured, with detail synthesized past"), "{on}");
    let off = sample_json(&[&pack], 46.5, 8.0, &["--detail", "off"]);
    assert_eq!(off["measured"], true);
    assert_eq!(off["detail_synthesized"], false);
    let (a, b) = (on["elevation_m"].as_f64().unwrap(), off["elevation_m"].as_f64().unwrap());
    assert!(a != b && (a - b).abs() < 500.0, "{a} vs {b}");
}

/// Runs `planet-pack map` and decodes the picture it wrote.
fn map_png(packs: &[&Path], out: &Path, extra: &[&str]) -> (u32, u32, Vec<u8>) {
    let mut args: Vec<&str> = vec!["map"];
    args.extend(packs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--png", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = planet_pack(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut rgb).unwrap();
    let info = reader.info();
    (info.width, info.height, rgb)
}

/// The colour of the map pixel at a latitude/longitude.
fn colour_at(spec: &planet_cli::map::MapSpec, (width, rgb): (u32, &[u8]), lat: f64, lon: f64) -> [u8; 3] {
    let (x, y) = spec.pixel_of(lat, lon).expect("on the map");
    let k = 3 * (y * width + x) as usize;
    [rgb[k], rgb[k + 1], rgb[k + 2]]
}

#[test]
fn an_elevation_map_is_blue_below_sea_level_and_carries_its_legend() {
    use planet_cli::map::{MapSpec, What};
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let out = dir.path().join("map.png");
    let (w, h, rgb) = map_png(&[&pack], &out, &["--width", "256", "--detail", "off"]);
    let legend = planet_cli::picture::legend_height(256);
    assert_eq!((w, h), (256, 128 + legend));
    let spec = MapSpec { what: What::Elevation, region: Coverage::GLOBAL, width: 256, detail: false, range: None };
    // Off the graticule (every 45 degrees on a global map).
    for (lat, lon) in [(2.0, 137.0), (2.0, -43.0), (60.0, 2.0), (-60.0, 178.0), (-40.0, 100.0), (30.0, 60.0)] {
        let d = Body::earth().ellipsoid().geodetic_to_direction(Geodetic::from_degrees(lat, lon, 0.0));
        let height = ground(d);
        assert!(height.abs() > 500.0, "({lat}, {lon}) is too near the coast to judge: {height} m");
        let [r, g, b] = colour_at(&spec, (w, &rgb), lat, lon);
        let blue = b > r && b > g;
        assert_eq!(blue, height < 0.0, "({lat}, {lon}) at {height:.0} m drawn {r},{g},{b}");
    }
    // The legend strip under the map: a colour bar and text, not blank.
    let strip = &rgb[3 * (128 * w) as usize..];
    let marked = strip.chunks(3).filter(|p| *p != planet_cli::picture::LEGEND_BACKGROUND).count();
    assert!(marked > 8 * w as usize, "{marked} legend pixels drawn");
    assert!(staging_left(&out).is_empty(), "{:?}", staging_left(&out));
}

/// Staging files (`*.partial`) left beside `out`.
fn staging_left(out: &Path) -> Vec<String> {
    let dir = out.parent().unwrap();
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".partial"))
                .collect()
        })
        .unwrap_or_default()
}

/// The elevation ramp fits the map's own heights unless `--range` fixes
/// it: over the Alps pack alone (1,234 m inside, the ellipsoid's 0 m
/// around), the fitted ramp draws 1,234 m with the land palette's top and
/// 0 m with its foot; `--range 0,5000` draws 1,234 m as the palette's own
/// 1,234 m. A range that is not MIN < MAX is refused by name.
#[test]
fn an_elevation_ramp_fits_the_maps_heights_unless_a_range_is_given() {
    use planet_cli::map::{MapSpec, What, palette_metres};
    use planet_cli::picture::elevation_colour;
    let dir = tempfile::tempdir().unwrap();
    let alps = write_regional(dir.path(), "alps.planetpack", Body::earth(), ALPS, 1234.0);
    let region = Coverage { south: 40.0, west: 0.0, north: 52.0, east: 16.0 };
    let spec = MapSpec { what: What::Elevation, region, width: 320, detail: false, range: None };
    let (inside, outside) = ((46.3, 8.3), (41.3, 1.3));
    let out = dir.path().join("fitted.png");
    let (w, _, rgb) = map_png(&[&alps], &out, &["--region", "40,0,52,16", "--width", "320", "--detail", "off"]);
    assert_eq!(colour_at(&spec, (w, &rgb), inside.0, inside.1), elevation_colour(5000.0), "the top of the land ramp");
    assert_eq!(colour_at(&spec, (w, &rgb), outside.0, outside.1), elevation_colour(0.0), "its foot");
    let out = dir.path().join("given.png");
    let args = ["--region", "40,0,52,16", "--width", "320", "--detail", "off", "--range", "0,5000"];
    let (w, _, rgb) = map_png(&[&alps], &out, &args);
    assert_eq!(colour_at(&spec, (w, &rgb), inside.0, inside.1), elevation_colour(1234.0));
    assert_eq!(palette_metres(1234.0, (0.0, 5000.0)), 1234.0);
    assert_eq!(palette_metres(-50.0, (-100.0, 200.0)), -4000.0, "half the sea's depth");
    for bad in ["5000,0", "1,2,3", "x,1", "nan,4"] {
        let o = planet_pack(&["map", alps.to_str().unwrap(), "--png", out.to_str().unwrap(), "--range", bad]);
        assert!(!o.status.success(), "--range {bad} was accepted");
        assert!(stderr(&o).contains("--range"), "--range {bad}: {}", stderr(&o));
    }
}

#[test]
fn a_provenance_map_shows_measured_inside_a_regional_pack_and_invented_outside() {
    use planet_cli::map::{INVENTED, MEASURED, MapSpec, What};
    let dir = tempfile::tempdir().unwrap();
    let alps = write_regional(dir.path(), "alps.planetpack", Body::earth(), ALPS, 1234.0);
    let out = dir.path().join("provenance.png");
    let region = Coverage { south: 30.0, west: -10.0, north: 60.0, east: 30.0 };
    let (w, h, rgb) = map_png(&[&alps], &out, &["--what", "provenance", "--region", "30,-10,60,30", "--width", "400"]);
    let spec = MapSpec { what: What::Provenance, region, width: 400, detail: true, range: None };
    assert_eq!((w, h), (400, 300 + planet_cli::picture::legend_height(400)));
    assert_eq!(colour_at(&spec, (w, &rgb), 46.0, 8.5), MEASURED);
    // Off the graticule's lines (every 5 degrees here).
    for (lat, lon) in [(36.3, 1.2), (55.6, 24.2), (46.3, -4.3)] {
        assert_eq!(colour_at(&spec, (w, &rgb), lat, lon), INVENTED, "({lat}, {lon})");
    }
    // Depth and error maps of the regional pack over a global base: the
    // inset's deeper tiles show where it lies.
    let base = write_fixture(dir.path(), Codec::Heights);
    let (w, _, rgb) =
        map_png(&[&base, &alps], &out, &["--what", "depth", "--region", "30,-10,60,30", "--width", "400"]);
    let deepest = planet_cli::picture::ramp_colour(1.0);
    assert_eq!(colour_at(&spec, (w, &rgb), 46.0, 8.5), deepest);
    assert_ne!(colour_at(&spec, (w, &rgb), 35.0, 0.0), deepest);
    // With no box asked for, the stack's map frames its regional top.
    let (w, h, _) = map_png(&[&base, &alps], &out, &["--what", "error", "--width", "64"]);
    let alps_box = planet_terrain::pack::Pack::open(&alps).unwrap().header().coverage;
    let region = planet_cli::map::overview(What::Error, &alps_box, 64).region;
    let framed = MapSpec { what: What::Error, region, width: 64, detail: true, range: None };
    assert_eq!((w, h), (64, framed.map_height() + planet_cli::picture::legend_height(64)));
    assert_ne!(framed.map_height(), 32, "not the whole body");
}

#[test]
fn bad_map_requests_are_refused_naming_the_rule_and_leave_no_picture() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let garbage = dir.path().join("garbage.planetpack");
    std::fs::write(&garbage, b"not a pack").unwrap();
    let out = dir.path().join("never.png");
    let (pack, garbage, png) = (pack.to_str().unwrap(), garbage.to_str().unwrap(), out.to_str().unwrap());
    let cases: [(&[&str], &[&str]); 6] = [
        (&[pack, "--region", "50,0,40,10"], &["--region", "south < north"]),
        (&[pack, "--region", "1,2,3"], &["--region", "S,W,N,E"]),
        (&[pack, "--width", "0"], &["--width", "1..=16384"]),
        (&[pack, "--width", "16385"], &["--width", "1..=16384"]),
        (&[pack, "--what", "slope"], &["--what", "provenance"]),
        (&[garbage], &["garbage.planetpack"]),
    ];
    for (args, needles) in cases {
        let mut all = vec!["map"];
        all.extend_from_slice(args);
        all.extend(["--png", png]);
        let o = planet_pack(&all);
        assert!(!o.status.success(), "{all:?} succeeded");
        for needle in needles {
            assert!(stderr(&o).contains(needle), "{all:?}: no '{needle}' in {}", stderr(&o));
        }
        assert!(!out.exists() && staging_left(&out).is_empty(), "{all:?} left a picture");
    }
}

/// A pack written by version 1 (the committed sample as it was baked before
/// the paged index) upgrades in place: the same tiles with the same payload
/// bytes, now readable, and a second upgrade has nothing to do.
#[test]
fn upgrade_converts_a_version_1_pack_keeping_every_payload() {
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tethys-v1.planetpack");
    let old = std::fs::read(&v1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("tethys.planetpack");
    std::fs::write(&pack, &old).unwrap();
    let refused = planet_pack(&["verify", pack.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("planet-pack upgrade"), "the error says what to do");

    let o = planet_pack(&["upgrade", pack.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("version 1 -> 4"), "{}", stdout(&o));
    let upgraded = planet_terrain::pack::Pack::open(&pack).unwrap();
    upgraded.verify().unwrap();
    // The v1 index, read by hand: 40-byte entries from byte 256.
    let count = u64::from_le_bytes(old[112..120].try_into().unwrap()) as usize;
    assert_eq!(upgraded.tile_count() as usize, count);
    for (k, entry) in upgraded.all_entries().unwrap().iter().enumerate() {
        let at = 256 + 40 * k;
        assert_eq!(entry.key.raw(), u64::from_le_bytes(old[at..at + 8].try_into().unwrap()));
        let offset = u64::from_le_bytes(old[at + 8..at + 16].try_into().unwrap()) as usize;
        let length = entry.payload_length as usize;
        assert_eq!(upgraded.payload(entry).unwrap().as_ref(), &old[offset..offset + length], "{}", entry.tile());
    }
    assert!(!dir.path().join("tethys.planetpack.tmp").exists(), "nothing left beside it");
    let again = planet_pack(&["upgrade", pack.to_str().unwrap()]);
    assert!(again.status.success() && stdout(&again).contains("version 4, nothing to do"), "{}", stdout(&again));
}

/// A version 2 pack (the committed sample, baked before packs recorded
/// their detail law) is read with the law its data measures; `upgrade
/// --out` records exactly that law and changes no other byte but the
/// header's, so its ground with detail is the ground it was read with.
#[test]
fn upgrade_records_the_law_a_version_2_pack_was_read_with() {
    use planet_terrain::ground::{HeightSource, PackSource};
    let v2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packs/samples/tethys.planetpack");
    let old = std::fs::read(&v2).unwrap();
    assert_eq!(u16::from_le_bytes([old[8], old[9]]), 2, "the committed sample is version 2");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tethys-v3.planetpack");
    let o = planet_pack(&["upgrade", v2.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("version 2 -> 4") && stdout(&o).contains("detail law H "), "{}", stdout(&o));
    assert_eq!(std::fs::read(&v2).unwrap(), old, "the input is untouched");
    let new = std::fs::read(&out).unwrap();
    assert_eq!(new.len(), old.len());
    assert_eq!(new[256..], old[256..], "only the header changes");
    assert!(!planet_terrain::pack::tmp_path(&out).exists(), "nothing left beside it");

    let read_as = |path: &Path| PackSource::new(std::sync::Arc::new(planet_terrain::pack::Pack::open(path).unwrap()));
    let (before, after) = (read_as(&v2), read_as(&out));
    let recorded = after.pack().header().detail.expect("version 4 records a law");
    assert_eq!(before.pack().header().detail, None);
    assert_eq!(recorded, before.measure_detail_law().unwrap());
    // Past the sample's data depth (0), on a crater rim and off it.
    for tile in [TileAddress::new(4, 3, 2, 5).unwrap(), TileAddress::new(1, 4, 9, 11).unwrap()] {
        let (a, b) = (before.with_detail().tile(tile).unwrap(), after.with_detail().tile(tile).unwrap());
        assert_eq!(a.heights, b.heights, "{tile}");
    }
    let info: serde_json::Value =
        serde_json::from_slice(&planet_pack(&["info", out.to_str().unwrap(), "--json"]).stdout).unwrap();
    assert_eq!(info["version"], 4);
    assert_eq!(info["detail_law"]["first_octave"].as_f64(), Some(f64::from(recorded.first_octave)), "{info:#}");
}

/// A URL wherever a path goes: info, verify and sample read a pack served
/// by nginx and say what they say of the file.
#[test]
fn info_verify_and_sample_read_a_pack_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::HeightsClassesColour);
    let nginx = planet_remote::testing::Nginx::serve(dir.path());
    let url = nginx.url("fixture.planetpack");
    let local = planet_pack(&["sample", pack.to_str().unwrap(), "--lat", "27.99", "--lon", "86.93", "--json"]);
    let remote = planet_pack(&["sample", &url, "--lat", "27.99", "--lon", "86.93", "--json"]);
    assert!(remote.status.success(), "{}", String::from_utf8_lossy(&remote.stderr));
    let (l, r): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&local.stdout).unwrap(), serde_json::from_slice(&remote.stdout).unwrap());
    assert_eq!(l["elevation_m"], r["elevation_m"]);
    let verified = planet_pack(&["verify", &url]);
    assert!(verified.status.success() && stdout(&verified).contains("every rule holds"), "{}", stdout(&verified));
    let info = planet_pack(&["info", &url, "--json"]);
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["tile_count"], 30);
    let missing = planet_pack(&["info", &nginx.url("missing.planetpack")]);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("missing.planetpack") && err.contains("HTTP 404"), "{err}");
}

/// In place, a version 2 pack gains its law through a redo journal (its
/// readers may hold it): refused while a patch journal is pending (the
/// header that journal expects would be replaced), done once, and a
/// recorded law is never replaced.
#[test]
fn upgrade_in_place_records_the_law_once_and_never_beside_a_running_writer() {
    let v2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packs/samples/tethys.planetpack");
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("tethys.planetpack");
    std::fs::copy(&v2, &pack).unwrap();
    // A running writer holds the lock: the upgrade refuses, naming it.
    let held = planet_terrain::pack::lock::WriterLock::acquire(
        &pack,
        "a test's patch",
        planet_terrain::pack::lock::Contention::Refuse,
        |_| {},
    )
    .unwrap();
    let refused = planet_pack(&["upgrade", pack.to_str().unwrap()]);
    assert!(!refused.status.success() && stderr(&refused).contains("a test's patch"), "{}", stderr(&refused));
    assert_eq!(std::fs::read(&pack).unwrap(), std::fs::read(&v2).unwrap(), "the pack is untouched");
    drop(held);
    // A journal no writer holds (#50: a re-run asked for `repair`): one that
    // was never complete is discarded, the pack untouched, and the upgrade
    // goes on.
    let journal = planet_terrain::pack::journal_path(&pack);
    std::fs::write(&journal, b"a patch's journal").unwrap();
    let o = planet_pack(&["upgrade", pack.to_str().unwrap()]);
    assert!(o.status.success() && stdout(&o).contains("discarded a journal"), "{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success() && stdout(&o).contains("version 2 -> 4"), "{}{}", stdout(&o), stderr(&o));
    assert!(!journal.exists(), "the header's journal is removed once the header is in place");
    let law = planet_terrain::pack::Pack::open(&pack).unwrap().header().detail.expect("a law");
    let again = planet_pack(&["upgrade", pack.to_str().unwrap()]);
    assert!(again.status.success() && stdout(&again).contains("version 4, nothing to do"), "{}", stdout(&again));
    let other = planet_terrain::pack::DetailLaw::rounded(Some(40), 5.0, 1.0);
    let replaced = planet_terrain::pack::record_detail_law(&pack, other).unwrap_err();
    assert!(replaced.to_string().contains("never replaced"), "{replaced}");
    assert_eq!(planet_terrain::pack::Pack::open(&pack).unwrap().header().detail, Some(law));
    let short = dir.path().join("short.planetpack");
    std::fs::write(&short, b"PLNT").unwrap();
    let o = planet_pack(&["upgrade", short.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("shorter than a pack's header"), "{}", stderr(&o));
}

/// Regression (#50): `upgrade new.planetpack.tmp --out new.planetpack`
/// staged the new pack over its own input (SIGBUS, the input left at 0
/// bytes), and `map` over a pack named like its picture's staging file
/// wrote over the pack. Both are refused by name, nothing touched.
#[test]
fn an_input_named_like_an_outputs_staging_file_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = write_fixture(dir.path(), Codec::Heights);
    let input = dir.path().join("new.planetpack.tmp");
    std::fs::rename(&fixture, &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = dir.path().join("new.planetpack");
    let o = planet_pack(&["upgrade", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("is staged"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert!(!out.exists());
    let pack = dir.path().join("m.png.partial");
    std::fs::rename(&input, &pack).unwrap();
    let png = dir.path().join("m.png");
    let o = planet_pack(&["map", pack.to_str().unwrap(), "--png", png.to_str().unwrap(), "--width", "64"]);
    assert!(!o.status.success() && stderr(&o).contains("is staged"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&pack).unwrap(), before);
}

/// Regression (#50): `--png` and `--heights` naming a FIFO or a device
/// node replaced it with a regular file. They are written into and stay
/// what they were (nodes made in a temporary directory, never the
/// system's; a character device only where this user may make one).
#[test]
fn a_fifo_or_a_device_as_an_output_is_written_into_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let fifo = dir.path().join("map.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = planet_pack(&["map", pack.to_str().unwrap(), "--png", fifo.to_str().unwrap(), "--width", "64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(reader.join().unwrap().starts_with(b"\x89PNG"), "the PNG went down the pipe");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A copy of /dev/null's node (1, 3): as root, or not made at all.
    let null = dir.path().join("null");
    let made = Command::new("mknod").arg(&null).args(["c", "1", "3"]).status().is_ok_and(|s| s.success());
    if made {
        let o = planet_pack(&["tile", pack.to_str().unwrap(), "0/0/0/0", "--heights", null.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::metadata(&null).unwrap().file_type().is_char_device(), "still the device node");
    } else {
        eprintln!("mknod is not permitted here: the device case is left to a root run (CI)");
    }
    // A directory or a socket is refused by name.
    let o = planet_pack(&["map", pack.to_str().unwrap(), "--png", dir.path().to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("is a directory"), "{}", stderr(&o));
}

/// Regression (#50): `--scene FIFO` blocked `planet-pack sample` forever,
/// waiting for a writer. A scene that is no file is refused by its type.
#[test]
fn a_scene_that_is_a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_fixture(dir.path(), Codec::Heights);
    let fifo = dir.path().join("scene.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o =
        planet_pack(&["sample", pack.to_str().unwrap(), "--lat", "1", "--lon", "2", "--scene", fifo.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("is a FIFO, not a file"), "{}", stderr(&o));
}
