//! planet-view headless under the Vulkan validation layers, as a user runs
//! it: scripted flights from orbit to the ground over a coarse pack (with
//! plenty of slots and with nearly the fewest), a pack with one corrupt
//! tile, packs that fail at open, the sun at a given time (the night side
//! dark from orbit), and
//! every bound on the command line, and `--agl` over the sea.
//!
//! The key decision: each test runs the real binary over a pack it wrote
//! itself (depth 2, a few seconds on lavapipe), and judges only what the
//! binary reports: its exit status, its stderr and its `--stats` JSON, so a
//! test cannot pass through a path the binary does not take.

use crate::common::{run_ok, stats, viewer};

use std::path::{Path, PathBuf};

use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::locate;
use planet_terrain::pack::Pack;

/// Where the flights end: mountains of the procedural test Earth.
const END: (f64, f64) = (-47.0, 39.0);
/// The flights end at 1 m above the ellipsoid, below the ground there
/// (about 2,700 m): the binary holds the camera 1.5 m above the ground it
/// reads, so they end at the ground whatever its exact height.
const GROUND: f64 = 1.0;

fn pack(dir: &Path) -> PathBuf {
    let path = dir.join("earth-2.planetpack");
    planet_terrain::testing::write_procedural_pack(&path, 2).expect("write the test pack");
    path
}

/// From 20,000 km down to `end_alt` over `END`, in `seconds`.
fn descent(dir: &Path, seconds: f64, end_alt: f64) -> PathBuf {
    let text = format!(
        r#"{{"keyframes": [
            {{"t": 0, "lat": -40.0, "lon": 30.0, "alt": 20000000, "heading": 0, "pitch": -90}},
            {{"t": {a}, "lat": -46.5, "lon": 38.5, "alt": 200000, "heading": 30, "pitch": -45}},
            {{"t": {b}, "lat": -46.95, "lon": 38.95, "alt": {mid}, "heading": 45, "pitch": -12}},
            {{"t": {seconds}, "lat": {}, "lon": {}, "alt": {end_alt}, "heading": 60, "pitch": -3}}
        ]}}"#,
        END.0,
        END.1,
        a = seconds * 0.4,
        b = seconds * 0.8,
        mid = 6000.0 + end_alt,
    );
    let path = dir.join("descent.json");
    std::fs::write(&path, text).expect("write path");
    path
}

/// Flies the descent headless with validation; returns the per-frame log.
fn fly(dir: &Path, pack: &Path, end_alt: f64, extra: &[&str]) -> (serde_json::Value, String) {
    let path = descent(dir, 4.0, end_alt);
    let stats_path = dir.join("stats.json");
    let output = run_ok(
        viewer()
            .arg(pack)
            .arg("--path")
            .arg(&path)
            .arg("--stats")
            .arg(&stats_path)
            .args(["--fps", "3", "--size", "160x120", "--validation"])
            .args(extra),
    );
    (stats(&stats_path), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Flies `path` over `packs` headless, every frame written to `dir/name/`
/// and the log to `dir/name.json`; returns the frames' directory, the
/// log and stderr. `args` add flags (--validation among them), `env` the
/// environment's test hooks.
fn record(
    dir: &Path,
    name: &str,
    (packs, path): (&[&Path], &Path),
    args: &[&str],
    env: &[(&str, String)],
) -> (PathBuf, serde_json::Value, String) {
    let (frames, stats_path) = (dir.join(name), dir.join(format!("{name}.json")));
    let mut command = viewer();
    command.args(packs).arg("--path").arg(path).arg("--frames").arg(&frames).arg("--stats").arg(&stats_path);
    command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
    let output = run_ok(&mut command);
    (frames, stats(&stats_path), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// How tiles were produced in a flight (`--loading`).
#[derive(Clone, Copy, PartialEq)]
enum Loading {
    /// On the frame: the roots asked for in frame 0 are drawn from frame 1.
    Frame,
    /// In the background: terrain is drawn from whenever the roots arrive.
    Background,
}

/// Every frame drawn (13 at 3 fps over 4 s) and the last at the ground.
fn check_flight(log: &serde_json::Value, loading: Loading) {
    let frames = log["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 13, "every frame of the path was rendered");
    assert_eq!(log["summary"]["frames"], 13);
    let mut terrain_from = None;
    for f in frames {
        let k = f["frame"].as_u64().expect("frame number");
        let holes = f["hole_pixels"].as_u64().expect("the GPU reported every frame");
        assert!(holes == 0 || f["analytic_body_drawn"] == true, "frame {k}: {holes} pixels show through");
        let draws = f["draw_calls"]["terrain_depth"].as_u64().expect("draws");
        assert!(draws <= 1, "frame {k}: one instanced draw at most");
        if draws == 1 {
            terrain_from.get_or_insert(k);
        }
        // Once the roots are resident they stay (pinned): terrain in every later frame.
        assert!(terrain_from.is_none() || draws == 1, "frame {k}: terrain drawn before, not now");
        if draws == 0 {
            assert_eq!(f["analytic_body_drawn"], true, "frame {k}: no terrain yet, so the body stands in");
        }
    }
    match loading {
        // The first frame only asks for the roots; from the next on, terrain.
        Loading::Frame => assert_eq!(terrain_from, Some(1), "one terrain draw once roots are resident"),
        Loading::Background => assert!(terrain_from.is_some_and(|k| k <= 6), "roots arrived by frame {terrain_from:?}"),
    }
    let above = frames.last().expect("a frame")["above_ground_m"].as_f64().expect("height");
    assert!((1.5..2.0).contains(&above), "the flight ends just above the ground, not {above} m");
}

#[test]
fn a_validation_flight_from_orbit_to_the_ground_over_a_coarse_pack() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (log, _) = fly(dir.path(), &pack(dir.path()), GROUND, &["--loading", "frame"]);
    check_flight(&log, Loading::Frame);
    assert_eq!(log["summary"]["failed_tiles"], 0);
    // The default: tiles produced in the background, never on the frame.
    let (log, _) = fly(dir.path(), &pack(dir.path()), GROUND, &[]);
    check_flight(&log, Loading::Background);
    assert_eq!(log["summary"]["failed_tiles"], 0);
}

#[test]
fn a_validation_flight_with_nearly_the_fewest_slots_streams_resampled_tiles() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 16 slots: the six roots, the eight the two frames in flight may hold,
    // two spare: every frame evicts, and near the ground the cut is deeper
    // than the pack's depth 2, so the tiles streamed are resampled ones.
    // An explicit budget far past the slots: the cut is larger than
    // what can be resident, so ancestors stand in all the way down.
    let (log, _) = fly(dir.path(), &pack(dir.path()), GROUND, &["--slots", "16", "--uploads", "4", "--budget", "2048"]);
    check_flight(&log, Loading::Background);
    let frames = log["frames"].as_array().expect("frames");
    assert!(frames.iter().any(|f| f["pending_requests"].as_u64() > Some(0)), "slots ran short");
    assert!(frames.iter().map(|f| f["uploads"].as_u64().expect("uploads")).sum::<u64>() > 16, "slots were reused");
}

#[test]
fn a_corrupt_tile_is_reported_once_and_its_ancestor_drawn_instead() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack_path = pack(dir.path());
    // The depth-2 tile under the end of the flight: every node near the
    // ground there reads it (itself or resampled from it).
    let (bad, _, _) = locate(&Body::earth(), Geodetic::from_degrees(END.0, END.1, 0.0), 2);
    let entry = Pack::open(&pack_path).expect("pack").entry(bad).expect("index").expect("stored");
    let mut bytes = std::fs::read(&pack_path).expect("read pack");
    bytes[(entry.payload_offset + u64::from(entry.payload_length) / 2) as usize] ^= 0x5a;
    std::fs::write(&pack_path, bytes).expect("corrupt one payload byte");

    // Down to the ground: the cut there is deeper than the pack, so tiles
    // resampled from the corrupt one are asked for too (and fail on its
    // payload: still one failed tile), and the camera's own ground read
    // stands on the same ancestor the renderer draws.
    let (log, stderr) = fly(dir.path(), &pack_path, GROUND, &[]);
    let reports: Vec<&str> = stderr.lines().filter(|l| l.contains("could not be read")).collect();
    assert_eq!(reports.len(), 1, "reported exactly once:\n{stderr}");
    assert!(reports[0].contains(&format!("tile {bad} payload")) && reports[0].contains("checksum"), "{}", reports[0]);
    assert_eq!(log["summary"]["failed_tiles"], 1, "one failed tile in the stats");
    let frames = log["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 13, "the flight went on to its end");
    let last = frames.last().expect("a frame");
    assert_eq!((&last["failed_tiles"], &last["covers_body"]), (&1.into(), &true.into()), "an ancestor stands in");
    assert!(frames.iter().all(|f| f["hole_pixels"] == 0 || f["analytic_body_drawn"] == true), "no hole");
    // The ground there is about 2,700 m high; the camera stands on the
    // ancestor drawn in the bad tile's place, not on the ellipsoid beneath it.
    let alt = last["alt"].as_f64().expect("altitude");
    assert!(alt > 1000.0, "the camera read the ellipsoid under the bad tile and sank to {alt} m");
}

/// planet-view with `args`; must fail with every one of `expected` on stderr.
fn refused(args: &[&str], expected: &[&str]) {
    let output = viewer().args(args).output().expect("run planet-view");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{args:?} should fail");
    for e in expected {
        assert!(stderr.contains(e), "{args:?}: expected '{e}' in:\n{stderr}");
    }
}

#[test]
fn every_number_on_the_command_line_is_bounded_with_the_flag_value_and_range_named() {
    let shot = ["--shot", "never.png", "--size", "32x24"];
    for (flag, value, expected) in [
        ("--slots", "0", "0: tile slots must lie in 14..=4294967295"),
        ("--slots", "3", "3: tile slots must lie in 14..=4294967295"),
        ("--uploads", "0", "0: uploads per frame must lie in 1..=4294967295"),
        ("--uploads", "99999999999999999999", "not a whole number (expected uploads per frame in 1..=4294967295)"),
        ("--budget", "5", "5: the node budget must lie in 6..=4294967295"),
        ("--max-frames", "0", "0: the frame cap must lie in 1..=1000000"),
        ("--fov", "nan", "'nan' is not a finite number"),
        ("--fov", "200", "200: the field of view must lie in 1..=170 degrees"),
        ("--fps", "inf", "'inf' is not a finite number"),
        ("--fps", "0", "0: frames per second must lie in (0, 1000]"),
        ("--sse", "nan", "'nan' is not a finite number"),
        ("--lat", "inf", "'inf' is not a finite number"),
        ("--lon", "nan", "'nan' is not a finite number"),
        ("--agl", "nan", "'nan' is not a finite number"),
        // Regression (#31): a camera under the ground drew garbage, exit 0.
        ("--agl", "-100", "-100: the height above the ground must lie in (0, 1e9] m"),
        ("--agl", "0", "0: the height above the ground must lie in (0, 1e9] m"),
        ("--time", "yesterday", "'yesterday' is not a UTC time: too short"),
        ("--time", "2026-02-30T00:00:00Z", "day 30 does not exist in 2026-02"),
        ("--time", "2026-06-21T06:00:00+02:00", "only UTC is accepted"),
        ("--time", "1492-10-12T12:00:00Z", "the year must lie in 1900..=2100"),
        ("--time-rate", "1e7", "10000000: the time rate must lie in -1e6..=1e6"),
        ("--time-rate", "nan", "'nan' is not a finite number"),
    ] {
        let mut args = shot.to_vec();
        args.extend([flag, value]);
        refused(&args, &[&format!("invalid value '{value}' for '{flag} <"), expected]);
    }
    // Past what the device holds: refused at renderer creation, with the
    // device's own number (its memory, or its layers and their size).
    refused(
        &[&shot[..], &["--slots", "4000000000"]].concat(),
        &["--slots 4000000000: this device allows at most", "memory heap"],
    );
    // Regression (#31): --stats over --shot was written over it, exit 0.
    refused(
        &[&shot[..], &["--stats", "./never.png"]].concat(),
        &["--shot never.png and --stats ./never.png are one file"],
    );
    refused(
        &[&shot[..], &["--budget", "4000000000"]].concat(),
        &["--budget 4000000000: this device allows at most", "maxStorageBufferRange is"],
    );
    refused(
        &[&shot[..], &["--uploads", "4000000000"]].concat(),
        &["--uploads 4000000000: this device allows at most", "host-visible memory heap"],
    );
    assert!(!Path::new("never.png").exists());
}

#[test]
fn keyframe_times_past_the_bound_are_refused_naming_the_file_the_keyframe_and_the_rule() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("far.json");
    let key = r#""lat": 0, "lon": 0, "alt": 1000, "heading": 0, "pitch": -90"#;
    std::fs::write(&file, format!(r#"{{"keyframes": [{{"t": 0, {key}}}, {{"t": 1e300, {key}}}]}}"#)).expect("write");
    let name = file.display().to_string();
    refused(&["--headless", "--path", &name], &[&name, "keyframes[1]: t 1e300 s must lie in 0..=1e6 s"]);
}

/// Mean luminance (0..255) of the pixels in columns `xs`, rows `ys` of a PNG.
fn luminance(path: &Path, xs: std::ops::Range<usize>, ys: std::ops::Range<usize>) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the shot exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let width = info.width as usize;
    let (count, sum) = ys.flat_map(|y| xs.clone().map(move |x| 4 * (y * width + x))).fold((0.0, 0.0), |(n, s), i| {
        let l = 0.2126 * f64::from(pixels[i]) + 0.7152 * f64::from(pixels[i + 1]) + 0.0722 * f64::from(pixels[i + 2]);
        (n + 1.0, s + l)
    });
    sum / count
}

#[test]
fn from_orbit_at_dusk_the_night_side_is_dark_and_the_day_side_lit() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Over (0 N, 0 E) looking down, north up: at 18:07 UTC on the March
    // equinox the sun sets there, so the west (left) half of the disc is day
    // and the east (right) half night; twelve hours later the body has
    // turned and the halves swap. The disc spans about x 48..112.
    let shot = |name: &str, time: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut command = viewer();
        command.args(["--headless", "--validation", "--size", "160x120", "--alt", "20000000", "--pitch", "-90"]);
        command.args(["--time", time, "--shot"]).arg(&out).args(extra);
        run_ok(&mut command);
        let (west, east) = (luminance(&out, 52..68, 52..68), luminance(&out, 92..108, 52..68));
        eprintln!("{name}: west {west:.1}, east {east:.1}");
        (west, east)
    };
    let pack = pack(dir.path());
    let pack = pack.to_str().expect("utf-8");
    // The analytic body (body.frag, `light_at`) and the terrain
    // (terrain.frag, `light_ground`) both go dark past the terminator.
    for name in ["analytic", "terrain"] {
        let extra = if name == "terrain" { &[pack][..] } else { &[][..] };
        for (time, day_west) in [("2026-03-20T18:07:00Z", true), ("2026-03-21T06:07:00Z", false)] {
            let (west, east) = shot(&format!("{name}-{time}.png"), time, extra);
            let (day, night) = if day_west { (west, east) } else { (east, west) };
            assert!(day > 30.0 && night < 6.0, "{name} at {time}: day side {day:.1}, night side {night:.1}");
        }
    }
}

#[test]
fn a_path_adds_its_time_to_the_start_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A camera held over (0 N, 0 E) for twelve hours, one frame at each end:
    // dusk at the start, dawn at the end, as in the shots above.
    let path = dir.path().join("half-day.json");
    let key = r#""lat": 0, "lon": 0, "alt": 20000000, "heading": 0, "pitch": -90"#;
    std::fs::write(&path, format!(r#"{{"keyframes": [{{"t": 0, {key}}}, {{"t": 43200, {key}}}]}}"#)).expect("write");
    let frames = dir.path().join("frames");
    let mut command = viewer();
    command.args(["--headless", "--validation", "--size", "160x120", "--time", "2026-03-20T18:07:00Z"]);
    command.args(["--fps", &(1.0 / 43_200.0).to_string(), "--path"]).arg(&path).arg("--frames").arg(&frames);
    run_ok(&mut command);
    let halves = |k: usize| {
        let frame = frames.join(format!("frame_{k:05}.png"));
        (luminance(&frame, 52..68, 52..68), luminance(&frame, 92..108, 52..68))
    };
    let ((west0, east0), (west1, east1)) = (halves(0), halves(1));
    assert!(west0 > 30.0 && east0 < 6.0, "dusk: west {west0:.1}, east {east0:.1}");
    assert!(west1 < 6.0 && east1 > 30.0, "dawn, twelve hours on: west {west1:.1}, east {east1:.1}");
    assert!(!frames.join("frame_00002.png").exists(), "two frames");
}

/// Issue #32: `--help` listed no keys (they were only in the README) and
/// `--no-hud` had no text.
#[test]
fn help_teaches_the_keys_and_describes_every_flag() {
    let output = viewer().arg("--help").output().expect("run planet-view");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{help}");
    for key in ["Keys in a window:", "Tab ", "Ctrl+S", "Esc "] {
        assert!(help.contains(key), "{key} in:\n{help}");
    }
    // Every flag has a line of its own text after its name.
    for line in help.lines().filter(|l| l.trim_start().starts_with("--")) {
        let text = line.trim_start().split_once("  ").map(|(_, t)| t.trim());
        assert!(text.is_some_and(|t| !t.is_empty()), "a flag without text: {line}");
    }
}

/// Regression (#31): `--shot` over the pack it reads replaced the pack, exit 0.
#[test]
fn a_shot_is_never_written_over_the_pack_it_draws() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let original = std::fs::read(&pack).expect("the pack");
    let path = pack.to_str().expect("a UTF-8 path");
    refused(&[path, "--shot", path, "--size", "32x24"], &[&format!("--shot {path} is the same file as PACK")]);
    assert_eq!(std::fs::read(&pack).expect("the pack"), original, "the pack is untouched");
}

/// The default node budget fits the slots: a 2,048-node cut over detailed
/// ground once wanted 1,699 tiles of 1,024 slots, and the demo's 2 m shot
/// streamed for its whole 240-frame cap without ever settling.
#[test]
fn the_default_budget_fits_the_slots_so_a_shot_settles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (pack, shot, stats) = (pack(dir.path()), dir.path().join("low.png"), dir.path().join("low.json"));
    run_ok(
        viewer()
            .arg(&pack)
            .args(["--lat", "-46.95", "--lon", "38.95", "--agl", "30", "--heading", "45", "--pitch", "-8"])
            .args(["--slots", "48", "--size", "160x120", "--validation", "--max-frames", "60"])
            .arg("--shot")
            .arg(&shot)
            .arg("--stats")
            .arg(&stats),
    );
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats")).expect("json");
    assert_eq!(stats["complete"], true, "the cut settled: {stats:#}");
    assert!(stats["nodes_selected"].as_u64() <= Some(42), "48 slots less the six roots: {stats:#}");
}

/// Headless, the script's BALL and CRATE drop bodies where the centre ray
/// meets the ground a few metres ahead of a camera standing on it: the
/// frames draw them (one draw each), and at the end each stands on the
/// ground by its size (its centre at least its smallest half-size above the
/// ground under it, less 5 cm), below where it was dropped.
#[test]
fn bodies_dropped_headless_land_on_the_ground_and_are_drawn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let (lat, lon) = END;
    // At 1 m the camera is held 1.5 m above the ground, looking 20 degrees down.
    let pose = format!(r#""lat": {lat}, "lon": {lon}, "alt": 1, "heading": 60, "pitch": -20"#);
    let path = dir.path().join("stand.json");
    std::fs::write(&path, format!(r#"{{"keyframes": [{{"t": 0, {pose}}}, {{"t": 3, {pose}}}]}}"#)).expect("path");
    let stats_path = dir.path().join("stats.json");
    let output = run_ok(viewer().arg(&pack).arg("--path").arg(&path).arg("--stats").arg(&stats_path).args([
        "--fps",
        "10",
        "--size",
        "160x120",
        "--validation",
        "--script",
        "2:BALL;4:CRATE@90,70",
    ]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ball dropped") && stderr.contains("crate dropped"), "{stderr}");
    let log = stats(&stats_path);
    let frames = log["frames"].as_array().expect("frames");
    assert_eq!(frames.last().expect("a frame")["draw_calls"]["bodies"], 2, "both bodies drawn");
    let bodies = log["bodies"].as_array().expect("the log lists the bodies");
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    for body in bodies {
        let above = body["above_ground_m"].as_f64().expect("ground under the body");
        let size = body["smallest_half_size_m"].as_f64().expect("a size");
        println!("dropped headless: {body}");
        assert!(above >= size - 0.05, "the body went into the ground: {body}");
        assert!(above < 2.5 * size, "the body fell from its drop height (3 sizes up): {body}");
    }
}

/// #28 item 3: at the fewest slots the viewer accepts, at 256 and at the
/// default, no frame of the descent shows sky where the ground is, and no
/// frame reports an infinite error. The frame after the path drops from 9 km
/// to 1.5 m draws stand-ins (ancestors) that can lie above the finest
/// ground; the camera keeps clear of the ground drawn, so it never stands
/// under it (4,115 hole pixels in that frame before).
#[test]
fn no_sky_shows_through_the_ground_at_any_slot_count() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    for slots in [&["--slots", "14"][..], &["--slots", "256"], &[]] {
        for loading in ["frame", "background"] {
            let (log, _) = fly(dir.path(), &pack, GROUND, &[slots, &["--loading", loading]].concat());
            for f in log["frames"].as_array().expect("frames") {
                let holes = f["hole_pixels"].as_u64().expect("the GPU reported every frame");
                let drawn = f["draw_calls"]["terrain_depth"].as_u64() == Some(1);
                assert!(!drawn || holes == 0, "{slots:?} {loading}, frame {}: {holes} hole pixels", f["frame"]);
                let error = f["effective_screen_error_pixels"].as_f64();
                assert!(
                    error.is_some_and(f64::is_finite),
                    "{slots:?} {loading}, frame {}: error {error:?}",
                    f["frame"]
                );
            }
        }
    }
}

/// `--agl` over the sea is above the water, not its floor (issue #51,
/// item 1): over the deepest point of the test Earth's oceans the shot's
/// camera stands 100 m above the ellipsoid (the sea's surface), where it
/// stood 100 m above a floor kilometres down, under the water it drew.
#[test]
fn agl_over_the_sea_is_above_the_water() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(Pack::open(&pack).expect("open")));
    let mut reader = planet_terrain::ground::query::GroundReader::new(&source, 2);
    let (lat, lon, floor) = (-6..=6)
        .flat_map(|i| (-9..9).map(move |j| (f64::from(i) * 10.0, f64::from(j) * 20.0)))
        .map(|(lat, lon)| (lat, lon, reader.height(Geodetic::from_degrees(lat, lon, 0.0)).expect("ground")))
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .expect("points");
    assert!(floor < -1000.0, "an ocean to stand over: {floor} m at {lat}, {lon}");
    let shot_stats = dir.path().join("sea.json");
    run_ok(
        viewer()
            .arg(&pack)
            .args(["--lat", &lat.to_string(), "--lon", &lon.to_string(), "--agl", "100", "--pitch", "0"])
            .args(["--size", "96x54", "--validation", "--max-frames", "30", "--shot"])
            .arg(dir.path().join("sea.png"))
            .arg("--stats")
            .arg(&shot_stats),
    );
    let altitude = stats(&shot_stats)["camera_alt_m"].as_f64().expect("camera_alt_m");
    eprintln!("--agl 100 over the sea at {lat}, {lon} (floor {floor:.0} m): camera at {altitude:.2} m");
    assert!((altitude - 100.0).abs() < 0.5, "the camera stands 100 m above the water, not at {altitude} m");
}

/// #54 item 4: a pack that fails at open (missing, a corrupt header, an
/// unreachable URL) is named with its cause, and the body is drawn without
/// it: on the packs that opened, or on analytic ground when none did.
/// `--strict` keeps the exit for scripts, and writes no picture.
#[test]
fn a_pack_failing_at_open_leaves_its_body_on_the_rest_or_on_analytic_ground() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = pack(dir.path());
    let corrupt = dir.path().join("corrupt.planetpack");
    let mut bytes = std::fs::read(&good).expect("the pack");
    bytes[81] ^= 0x01; // the header checksum no longer holds
    std::fs::write(&corrupt, bytes).expect("write");
    let missing = dir.path().join("missing.planetpack");
    // Nothing listens on the discard port: the connection is refused at once.
    let unreachable = "http://127.0.0.1:9/earth.planetpack";
    let shot = dir.path().join("shot.png");
    let stats_path = dir.path().join("shot.json");
    let shoot = |packs: &[&str], extra: &[&str]| {
        let _ = std::fs::remove_file(&shot);
        viewer()
            .args(packs)
            .args(["--headless", "--validation", "--size", "96x64", "--lat", "-47", "--lon", "39", "--alt", "3000000"])
            .arg("--shot")
            .arg(&shot)
            .arg("--stats")
            .arg(&stats_path)
            .args(["--request-timeout", "2", "--read-deadline", "3"])
            .args(extra)
            .output()
            .expect("run planet-view")
    };
    let (good, corrupt, missing) = (good.to_str().unwrap(), corrupt.to_str().unwrap(), missing.to_str().unwrap());
    // The good pack with three that fail: drawn from the good one.
    let output = shoot(&[good, corrupt, missing, unreachable], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for (pack, cause) in [(corrupt, "checksum"), (missing, "No such file"), (unreachable, "127.0.0.1:9")] {
        let line = stderr.lines().find(|l| l.contains("drawing without pack") && l.contains(pack));
        assert!(line.is_some_and(|l| l.contains(cause)), "{pack}: expected its cause '{cause}' in:\n{stderr}");
    }
    assert!(shot.exists(), "drawn without the packs that failed");
    let shot_stats = stats(&stats_path);
    assert_eq!(shot_stats["covers_body"], true, "the good pack covers the body: {shot_stats:#}");
    // Every pack fails: the body on analytic ground (the ellipsoid).
    let output = shoot(&[missing], &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(shot.exists(), "the ellipsoid is drawn");
    let shot_stats = stats(&stats_path);
    assert_eq!(shot_stats["analytic_body_drawn"], true, "analytic ground: {shot_stats:#}");
    // --strict: today's exit, and no picture.
    let output = shoot(&[good, missing], &["--strict"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "--strict exits");
    assert!(stderr.contains(missing) && stderr.contains("--strict"), "{stderr}");
    assert!(!shot.exists(), "no picture with --strict");
}

/// #54 item 3: a device lost mid-flight (`PLANET_DEVICE_LOST_AT`) is made
/// again; the flight goes on, says so once, marks the frame in `--stats`,
/// and its frames after the loss settle to the same pictures as a flight
/// that kept its device, with the validation layers on throughout.
#[test]
fn a_device_lost_mid_flight_is_made_again_and_the_flight_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let path = descent(dir.path(), 4.0, 3000.0);
    let flight = |name: &str, lose_at: Option<u32>| {
        let env: Vec<(&str, String)> =
            lose_at.iter().map(|frame| (planet_render::DEVICE_LOST_AT, frame.to_string())).collect();
        let args = ["--fps", "3", "--size", "128x96", "--validation"];
        record(dir.path(), name, (&[pack.as_path()], &path), &args, &env)
    };
    let (kept, kept_log, _) = flight("kept", None);
    let (lost, lost_log, stderr) = flight("lost", Some(8));
    assert_eq!(stderr.matches("GPU device was lost").count(), 1, "said once:\n{stderr}");
    let marked: Vec<usize> = lost_log["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .enumerate()
        .filter(|(_, f)| !f["device_lost"].is_null())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(marked.len(), 1, "one frame marked: {marked:?}");
    assert!(kept_log["frames"].as_array().expect("frames").iter().all(|f| f["device_lost"].is_null()));
    let count = kept_log["frames"].as_array().expect("frames").len();
    assert_eq!(lost_log["frames"].as_array().expect("frames").len(), count, "every frame drawn");
    let picture = |dir: &Path, k: usize| std::fs::read(dir.join(format!("frame_{k:05}.png"))).expect("a frame");
    // Before the loss, and from two frames after it (the new device's
    // slots filled), the same pictures.
    for k in (0..marked[0]).chain(marked[0] + 2..count) {
        assert!(picture(&kept, k) == picture(&lost, k), "frame {k} differs from the flight that kept its device");
    }
}

/// The instant the Earth-Moon tests draw: the day before the full Moon of
/// 2026-04-02, its near side lit.
const NEAR_FULL_MOON: &str = "2026-04-01T12:00:00Z";

/// Where the Moon stands over the Earth at `NEAR_FULL_MOON` (the sub-lunar
/// point, degrees), from the system the viewer places bodies with.
fn sub_lunar_point() -> (f64, f64) {
    use planet_terrain::camera::Instant;
    use planet_terrain::geo::system::placement;
    let at = Instant::parse_rfc3339(NEAR_FULL_MOON).expect("a time");
    let earth = placement(&Body::earth(), at).expect("the Earth");
    let moon = placement(&Body::moon(), at).expect("the Moon");
    let d = earth.direction_to_body(moon.centre.normalize());
    (d.z.asin().to_degrees(), d.y.atan2(d.x).to_degrees())
}

/// #54 item 1: `--body moon` beside an Earth pack was silently ignored,
/// then refused. Now the camera starts at the Moon, on analytic ground,
/// with the Earth (drawn from its pack) in the Moon's sky.
#[test]
fn body_moon_beside_an_earth_pack_starts_at_the_moon_with_the_earth_in_its_sky() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let (shot, stats_path) = (dir.path().join("moon.png"), dir.path().join("moon.json"));
    // Over the Moon's near side, looking up: the Earth stands within the
    // libration (8 degrees) of the zenith there.
    run_ok(
        viewer()
            .arg(&pack)
            .arg("--shot")
            .arg(&shot)
            .arg("--stats")
            .arg(&stats_path)
            .args(["--body", "moon", "--lat", "0", "--lon", "0", "--alt", "100000", "--pitch", "89", "--fov", "30"])
            .args(["--size", "160x100", "--time", NEAR_FULL_MOON, "--validation"]),
    );
    let shot_stats = stats(&stats_path);
    assert_eq!(shot_stats["body"], "moon", "{shot_stats:#}");
    assert_eq!(shot_stats["other_bodies"], serde_json::json!(["earth"]), "{shot_stats:#}");
    assert_eq!(shot_stats["complete"], true, "{shot_stats:#}");
    // The Earth, about 6 pixels across at this field of view, drawn in
    // colour over the black sky; the Moon's ground is not in view.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).expect("the shot")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    reader.next_frame(&mut pixels).expect("pixels");
    let lit = pixels.chunks_exact(4).filter(|p| p[..3].iter().map(|&c| u32::from(c)).sum::<u32>() > 150).count();
    assert!((4..400).contains(&lit), "{lit} lit pixels: the Earth's disc, a few stars");
    // Each body streams with 14 slots at least: fewer is refused, named.
    let pack = pack.to_str().unwrap();
    let few = dir.path().join("few.png");
    let few = few.to_str().unwrap();
    refused(
        &[pack, "--body", "moon", "--slots", "20", "--headless", "--shot", few],
        &["--slots 20: a session of 2 bodies needs at least 28 slots"],
    );
    assert!(!Path::new(few).exists(), "nothing drawn");
}

/// #54 item 1: a scripted flight from low Earth orbit to 2 m above the
/// Moon, headless with validation: the camera's frame follows the nearest
/// body (one crossing, said once), the Moon is drawn as a disc from the
/// Earth's side, every frame has no hole, and it ends 2 m above the
/// Moon's ground, which it reads at its own scale there.
#[test]
fn a_flight_from_low_earth_orbit_lands_two_metres_above_the_moon() {
    use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let (lat, lon) = sub_lunar_point();
    // The Moon's ground under the landing: procedural (seed 7), read at
    // the metre the camera reads it at; a keyframe's altitude is above the
    // ellipsoid and positive, so the landing is where the ground is above it.
    let moon = planet_terrain::ground::ProceduralSource::new(Body::moon(), 7);
    let mut reader = GroundReader::new(&moon, depth_for_spacing(&moon, 1.0));
    let ((landing_lat, landing_lon), ground) = (0..64)
        .map(|k| (0.5 + 0.25 * f64::from(k % 8), 0.5 + 0.25 * f64::from(k / 8)))
        .map(|(lat, lon)| ((lat, lon), reader.top(Geodetic::from_degrees(lat, lon, 0.0)).expect("the Moon's ground")))
        .find(|&(_, ground)| ground > 10.0)
        .expect("ground above the ellipsoid near the landing");
    let path = dir.path().join("earth-to-moon.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"keyframes": [
                {{"t": 0, "lat": {lat}, "lon": {lon}, "alt": 400000, "heading": 0, "pitch": -60}},
                {{"t": 2, "lat": {lat}, "lon": {lon}, "alt": 600000, "heading": 0, "pitch": 80}},
                {{"t": 8, "body": "moon", "lat": 0, "lon": 0, "alt": 200000, "heading": 0, "pitch": -90}},
                {{"t": 11, "body": "moon", "lat": {landing_lat}, "lon": {landing_lon}, "alt": {end}, "heading": 90, "pitch": 5}}
            ]}}"#,
            end = ground + 2.0
        ),
    )
    .expect("write the path");
    // The Earth on its pack over procedural ground (seed 7), the Moon on
    // procedural ground alone.
    let args = ["--procedural", "7", "--fps", "3", "--size", "160x100", "--time", NEAR_FULL_MOON, "--validation"];
    let (frames, log, stderr) = record(dir.path(), "flight", (&[pack.as_path()], &path), &args, &[]);
    assert_eq!(stderr.matches("the camera left the earth for the moon").count(), 1, "{stderr}");
    let logged = log["frames"].as_array().expect("frames");
    assert_eq!(logged.len(), 34, "every frame of 11 s at 3 per second");
    let bodies: Vec<&str> = logged.iter().map(|f| f["body"].as_str().expect("a body")).collect();
    let crossing = bodies.iter().position(|&b| b == "moon").expect("the camera reaches the Moon");
    assert!(crossing > 6 && bodies[..crossing].iter().all(|&b| b == "earth"), "{bodies:?}");
    assert!(bodies[crossing..].iter().all(|&b| b == "moon"), "one crossing: {bodies:?}");
    let moon_seen = logged[..crossing].iter().filter(|f| f["other_bodies"] == serde_json::json!(["moon"])).count();
    assert!(moon_seen >= 3, "the Moon drawn from the Earth's side in {moon_seen} frames");
    for (k, frame) in logged.iter().enumerate() {
        assert!(frame["hole_pixels"] == 0 || frame["analytic_body_drawn"] == true, "frame {k}: {frame:#}");
        assert!(frames.join(format!("frame_{k:05}.png")).exists(), "frame {k} written");
    }
    let last = logged.last().expect("a frame");
    let above = last["above_ground_m"].as_f64().expect("height");
    assert!((above - 2.0).abs() < 0.05, "the flight ends 2 m above the Moon's ground, not {above} m");
    assert!(last["nodes_drawn"].as_u64() > Some(20), "the Moon's ground drawn at the end: {last:#}");
}

/// #54 item 2: `--view2` draws a second camera beside the first in every
/// frame written, each with its own cut and error, both in one slot
/// budget. With sixteen slots, four uploads a frame and a budget far past
/// them (cuts far larger than what can be resident) neither view shows a
/// hole: both draw ancestors. A shot with room to spare meets each view's
/// own target; a malformed `--view2` is refused naming the part at fault.
#[test]
fn a_second_view_flies_beside_the_first_within_one_slot_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = pack(dir.path());
    let path = descent(dir.path(), 4.0, GROUND);
    let view2 = "-46.9,38.9,9000,45,-15";
    let args = ["--fps", "3", "--size", "128x96", "--slots", "16", "--uploads", "4", "--budget", "2048"];
    let args = [&args[..], &["--view2", view2, "--validation"]].concat();
    let (frames, log, _) = record(dir.path(), "frames", (&[pack.as_path()], &path), &args, &[]);
    let logged = log["frames"].as_array().expect("frames");
    assert!(logged.len() >= 12, "{}", logged.len());
    for (k, frame) in logged.iter().enumerate() {
        assert_eq!(frame["hole_pixels"], 0, "frame {k}: {frame:#}");
        let second = &frame["view2"];
        assert_eq!(second["nodes_dropped"], 0, "frame {k}: {second:#}");
        let error = second["effective_screen_error_pixels"].as_f64().expect("the second view's error");
        assert!(error.is_finite() && error > 0.0, "frame {k}: {error}");
        let picture = std::fs::read(frames.join(format!("frame_{k:05}.png"))).expect("a frame");
        let image = png::Decoder::new(std::io::Cursor::new(picture)).read_info().expect("a PNG");
        assert_eq!((image.info().width, image.info().height), (256, 96), "frame {k}: both views, side by side");
    }
    let on_ancestors: u64 = logged.iter().map(|f| f["view2"]["nodes_on_ancestors"].as_u64().unwrap_or(0)).sum();
    assert!(on_ancestors > 0, "sixteen slots leave the second view on ancestors somewhere");

    // A shot with room: each view meets its own target.
    let (shot, shot_stats) = (dir.path().join("two.png"), dir.path().join("two.json"));
    run_ok(
        viewer()
            .arg(&pack)
            .arg("--shot")
            .arg(&shot)
            .arg("--stats")
            .arg(&shot_stats)
            .args(["--lat", "-46", "--lon", "38", "--alt", "400000", "--size", "128x96", "--sse2", "4"])
            .args(["--view2", view2, "--validation"]),
    );
    let shot_log = stats(&shot_stats);
    assert_eq!(shot_log["complete"], true, "{shot_log:#}");
    assert_eq!(shot_log["width"], 256, "{shot_log:#}");
    let second = &shot_log["view2"];
    assert_eq!(second["target_error_px"], 4.0, "{second:#}");
    assert!(second["effective_screen_error_pixels"].as_f64().expect("its error") <= 4.0, "{second:#}");
    assert!(shot_log["effective_screen_error_pixels"].as_f64().expect("the main error") <= 2.0, "{shot_log:#}");

    // Malformed: named, nothing drawn.
    let pack = pack.to_str().unwrap();
    let bad = dir.path().join("bad.png");
    let bad = bad.to_str().unwrap();
    refused(&[pack, "--headless", "--shot", bad, "--view2", "-46,38,9000,45"], &["--view2", "five numbers"]);
    refused(&[pack, "--headless", "--shot", bad, "--view2", "-46,38,9000,45,-95"], &["--view2", "the pitch"]);
    assert!(!Path::new(bad).exists(), "nothing drawn");
}
