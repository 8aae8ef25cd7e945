//! planet-view end to end, as a user runs it: a window under Xvfb on
//! lavapipe with the validation layers on (any message fails the run), and
//! headless fly-throughs. Each test runs the real binary in its own process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use planet_terrain::geo::body::Geodetic;
use planet_terrain::ground::PackSource;
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::pack::Pack;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
/// Where the path ends: mountains of the procedural test Earth (about
/// 2,700 m up; the demo flies the same shape of path over the Himalaya).
const END: (f64, f64) = (-47.0, 39.0);

/// An X server for one test, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        // `-displayfd` makes Xvfb choose a free display itself and write
        // its number only once it accepts clients. Polling for the socket
        // file instead raced: a viewer started in that window failed with
        // "Failed to open connection to X server" (seen once in CI). And
        // `-noreset`: an X server resets when its last client leaves, so
        // the readiness check's own disconnect started a reset that a
        // viewer connecting under load met as the same error (the first
        // window test of a run, with the render tests beside it).
        let ready = tempfile::NamedTempFile::new().expect("a temp file for the display number");
        let child = Command::new("sh")
            .args(["-c", "exec Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp -noreset 3>\"$1\"", "xvfb"])
            .arg(ready.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh and Xvfb are installed (tools/deps.sh installs xvfb)");
        let mut child = child;
        let start = std::time::Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("Xvfb exited ({status}) before it was ready");
            }
            let written = std::fs::read_to_string(ready.path()).unwrap_or_default();
            if let Some(number) = written.strip_suffix('\n') {
                let display = format!(":{}", number.trim());
                // Belt and braces: a real client must get in before a test
                // starts the viewer.
                let answered = Command::new("xdotool")
                    .env("DISPLAY", &display)
                    .arg("getdisplaygeometry")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if answered {
                    return Xvfb { child, display };
                }
            }
            if start.elapsed().as_secs() > 60 {
                let _ = child.kill();
                let _ = child.wait();
                panic!("Xvfb did not accept clients within 60 s (display file said {written:?})");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM lets the server remove its lock file; SIGKILL if it lingers.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        for _ in 0..40 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn test_pack() -> PathBuf {
    let shared = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer-procedural-earth-2.planetpack");
    if Pack::open(&shared).is_err() {
        let private = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let path = private.path().join("pack.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 2).expect("write the test pack");
        std::fs::rename(&path, &shared).expect("move the pack into place");
    }
    shared
}

/// The ground under a point as the viewer reads it with `--detail off`
/// (same source, same fixed 5 m spacing; see [`fly`]).
fn ground(pack: &Path, lat: f64, lon: f64) -> f64 {
    let source = PackSource::new(std::sync::Arc::new(Pack::open(pack).expect("pack")));
    let depth = depth_for_spacing(&source, 5.0);
    GroundReader::new(&source, depth).height(Geodetic::from_degrees(lat, lon, 0.0)).expect("ground")
}

/// From 20,000 km down to 2 m above the ground.
fn write_path(dir: &Path, pack: &Path) -> PathBuf {
    let end_alt = ground(pack, END.0, END.1) + 2.0;
    assert!(end_alt > 100.0, "the path ends over land, not sea: {end_alt} m");
    let text = format!(
        r#"{{"keyframes": [
            {{"t": 0, "lat": -40.0, "lon": 30.0, "alt": 20000000, "heading": 0, "pitch": -90}},
            {{"t": 2, "lat": -46.5, "lon": 38.5, "alt": 200000, "heading": 30, "pitch": -45}},
            {{"t": 4, "lat": -46.95, "lon": 38.95, "alt": {:.3}, "heading": 45, "pitch": -12}},
            {{"t": 5, "lat": {}, "lon": {}, "alt": {end_alt:.3}, "heading": 60, "pitch": -3}}
        ]}}"#,
        end_alt + 3000.0,
        END.0,
        END.1
    );
    let path = dir.join("path.json");
    std::fs::write(&path, text).expect("write path");
    path
}

fn viewer() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_planet-view"));
    command.env("VK_DRIVER_FILES", LAVAPIPE).env("RUST_BACKTRACE", "1");
    command
}

/// planet-view flying `path` over `pack`: in a window on `display`, or
/// headless without one.
fn fly(pack: &Path, path: &Path, display: Option<&str>) -> Command {
    let mut command = viewer();
    // These paths were laid over the pack's own ground; the flights with
    // detail past the data depth (the default) are flight.rs's. (With the
    // path re-laid over the detailed ground, the orbit frame at t = 0.75 s
    // shows a 1-pixel hole whether detail is on or off: a camera position
    // the renderer's hole count catches, reported with the detail work.)
    command.args(["--detail", "off"]);
    match display {
        Some(display) => command.env("DISPLAY", display),
        None => command.env_remove("DISPLAY"),
    };
    command.arg(pack).arg("--path").arg(path);
    command
}

/// Runs `command`, which must succeed; its stderr.
fn run(mut command: Command) -> String {
    let output = command.output().expect("run planet-view");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "planet-view failed:\n{stderr}");
    stderr
}

/// The test path flown in a window under Xvfb with validation, 31 frames
/// at 6 fps from 160x100, resized at `resize_at` (FRAME:WxH), with `env`
/// set: the frames' directory (in `dir`), the `--stats` log, the stderr.
fn fly_in_a_window(
    dir: &Path,
    resize_at: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> (PathBuf, serde_json::Value, String) {
    let pack = test_pack();
    let path = write_path(dir, &pack);
    let frames = dir.join("frames");
    let stats_path = dir.join("stats.json");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--frames").arg(&frames).arg("--stats").arg(&stats_path);
    command.args(["--fps", "6", "--size", "160x100", "--validation", "--resize-at", resize_at]);
    command.args(extra).envs(env.iter().copied());
    let stderr = run(command);
    let log = stats(&stats_path);
    check_frames(&log, 31);
    (frames, log, stderr)
}

fn stats(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("stats written")).expect("stats are JSON")
}

fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("frame")));
    let info = decoder.read_info().expect("a PNG");
    let i = info.info();
    (i.width, i.height)
}

/// Every frame: no hole in the ground (counted on the GPU), the camera
/// above the ground.
fn check_frames(log: &serde_json::Value, expected: usize) {
    let frames = log["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), expected, "every frame of the path was drawn");
    for f in frames {
        let k = f["frame"].as_u64().expect("frame number");
        let holes = f["hole_pixels"].as_u64().expect("the GPU reported every frame");
        let analytic = f["analytic_body_drawn"].as_bool().expect("flag");
        assert!(holes == 0 || analytic, "frame {k}: {holes} pixels show through the ground");
        let above = f["above_ground_m"].as_f64().expect("height");
        assert!(above >= 1.5 - 1e-6, "frame {k}: camera {above} m above the ground");
        let views = 1 + u64::from(!f["view2"].is_null());
        assert!(
            f["draw_calls"]["terrain_depth"].as_u64().expect("draws") <= views,
            "one terrain draw per pass and view"
        );
    }
    let last = frames.last().expect("a last frame");
    let above = last["above_ground_m"].as_f64().expect("height");
    assert!((above - 2.0).abs() < 0.05, "the path ends 2 m above the ground, not {above} m");
}

#[test]
fn a_window_flies_from_orbit_to_two_metres_and_survives_a_resize() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (frames, log, _) = fly_in_a_window(dir.path(), "12:200x120", &[], &[]);
    let presented = log["frames"].as_array().expect("frames").iter().filter(|f| f["presented"] == true).count();
    assert!(presented >= 29, "frames reached the window: {presented} of 31");
    assert_eq!(png_size(&frames.join("frame_00000.png")), (160, 100));
    assert_eq!(png_size(&frames.join("frame_00030.png")), (200, 120), "rendering went on at the new size");
}

/// #54 item 3 in a window: a device lost mid-flight (after a resize) is
/// made again on the same window, with a new surface and swapchain at the
/// window's size, and the flight goes on presenting, validation on.
#[test]
fn a_window_survives_a_lost_device() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (frames, log, stderr) = fly_in_a_window(dir.path(), "6:200x120", &[(planet_render::DEVICE_LOST_AT, "14")], &[]);
    assert_eq!(stderr.matches("GPU device was lost").count(), 1, "said once:\n{stderr}");
    let frames_log = log["frames"].as_array().expect("frames");
    let lost: Vec<usize> = (0..frames_log.len()).filter(|&k| !frames_log[k]["device_lost"].is_null()).collect();
    assert_eq!(lost.len(), 1, "one frame marked: {lost:?}");
    let presented_after = frames_log[lost[0]..].iter().filter(|f| f["presented"] == true).count();
    assert!(presented_after + 2 >= frames_log.len() - lost[0], "the new swapchain presents: {presented_after}");
    assert_eq!(png_size(&frames.join("frame_00030.png")), (200, 120), "the new device draws at the window's size");
}

/// #54 item 2 in a window: `--view2` is an inset over the main view's
/// lower right corner (the frame keeps the window's size), drawn in every
/// frame with its own cut, and it follows a resize.
#[test]
fn a_second_view_is_an_inset_in_a_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (frames, log, _) = fly_in_a_window(dir.path(), "12:200x120", &[], &["--view2", "10,20,30000,90,-20"]);
    assert_eq!(png_size(&frames.join("frame_00000.png")), (160, 100), "an inset, not a second picture beside");
    assert_eq!(png_size(&frames.join("frame_00030.png")), (200, 120));
    for frame in log["frames"].as_array().expect("frames") {
        let error = frame["view2"]["effective_screen_error_pixels"].as_f64();
        assert!(error.is_some_and(|e| e.is_finite() && e > 0.0), "every frame draws the inset: {frame:#}");
    }
}

#[test]
fn a_headless_fly_through_writes_every_frame() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_path(dir.path(), &pack);
    let frames = dir.path().join("frames");
    let stats_path = dir.path().join("stats.json");
    let mut command = fly(&pack, &path, None);
    command.arg("--frames").arg(&frames).arg("--stats").arg(&stats_path);
    command.args(["--fps", "4", "--size", "128x80", "--validation", "--hud"]);
    run(command);
    let log = stats(&stats_path);
    check_frames(&log, 21);
    assert!(frames.join("frame_00020.png").exists());
    // Issue #32: the first written frame was the bare ellipsoid standing in
    // before any tile arrived; it waits for the roots now.
    let first = &log["frames"][0];
    assert_eq!(first["analytic_body_drawn"], false, "frame 0 draws the ground: {first:#}");
    assert_eq!(first["draw_calls"]["terrain_shaded"], 1, "{first:#}");
}

#[test]
fn the_same_path_at_two_frame_rates_ends_at_the_same_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_path(dir.path(), &pack);
    let mut ends = Vec::new();
    for fps in ["3", "8"] {
        let stats_path = dir.path().join(format!("stats-{fps}.json"));
        let mut command = fly(&pack, &path, None);
        command.arg("--stats").arg(&stats_path).args(["--headless", "--fps", fps, "--size", "64x40"]);
        run(command);
        let log = stats(&stats_path);
        let last = log["frames"].as_array().expect("frames").last().cloned().expect("a frame");
        ends.push((last["lat"].as_f64().unwrap(), last["lon"].as_f64().unwrap(), last["alt"].as_f64().unwrap()));
    }
    let (a, b) = (ends[0], ends[1]);
    assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9 && (a.2 - b.2).abs() < 1e-6, "{a:?} vs {b:?}");
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad_path = dir.path().join("bad.json");
    std::fs::write(&bad_path, r#"{"keyframes": [{"t": 0, "lat": 95, "lon": 0, "alt": 10, "heading": 0, "pitch": 0}]}"#)
        .expect("write");
    for (args, expect) in [
        (vec!["--headless", "--path", bad_path.to_str().unwrap()], "keyframes[0]"),
        (vec!["--headless", "--shot", "x.png", "--size", "12x"], "invalid value '12x' for '--size"),
        (vec!["--headless", "--shot", "x.png", "--pitch", "120"], "invalid value '120' for '--pitch"),
        (vec!["--headless", "--shot", "x.png", "--heading", "nan"], "invalid value 'nan' for '--heading"),
        (vec!["--headless", "--shot", "x.png", "--alt", "inf"], "not a finite number"),
        (vec!["--headless", "/nonexistent.planetpack", "--strict", "--shot", "x.png"], "/nonexistent.planetpack"),
        (vec!["--headless"], "--path FILE.json --frames DIR"),
    ] {
        let output = viewer().current_dir(dir.path()).env_remove("DISPLAY").args(&args).output().expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(stderr.contains(expect), "{args:?}: expected '{expect}' in:\n{stderr}");
    }
    assert!(!dir.path().join("x.png").exists(), "nothing written on failure");
}

#[test]
fn a_scene_file_edits_the_ground_it_draws() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let scene = dir.path().join("scene.json");
    std::fs::write(
        &scene,
        format!(
            r#"{{"version": 1, "body": "earth", "layers": [
                {{"kind": "crater", "order": 1, "lat": {}, "lon": {}, "radius_m": 2500, "depth_m": 500, "rim_m": 120}},
                {{"kind": "flatten", "order": 2, "lat": {}, "lon": {}, "radius_m": 1500, "elevation_m": 2350, "blend_m": 600}}
            ]}}"#,
            END.0,
            END.1,
            END.0 - 0.03,
            END.1 + 0.05
        ),
    )
    .expect("write scene");
    let shot = |name: &str, scene: Option<&Path>| {
        let out = dir.path().join(name);
        let mut command = viewer();
        command.env_remove("DISPLAY").arg(&pack).args(["--lat", "-47.12", "--lon", "38.95", "--alt", "14000"]);
        command.args(["--heading", "25", "--pitch", "-35", "--size", "128x80", "--validation", "--shot"]).arg(&out);
        if let Some(scene) = scene {
            command.arg("--scene").arg(scene);
        }
        run(command);
        std::fs::read(&out).expect("shot written")
    };
    let plain = shot("plain.png", None);
    let edited = shot("edited.png", Some(&scene));
    assert_ne!(plain, edited, "the crater and the pad change the picture");

    let mars = dir.path().join("mars.json");
    std::fs::write(&mars, r#"{"version": 1, "body": "mars", "layers": []}"#).expect("write");
    let output = viewer()
        .env_remove("DISPLAY")
        .arg(&pack)
        .args(["--shot", dir.path().join("x.png").to_str().expect("utf-8"), "--scene"])
        .arg(&mars)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("mars.json") && stderr.contains("'mars'"), "{stderr}");
}

#[test]
fn authoring_in_the_window_is_on_screen_the_next_frame_and_undoes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 3);
    let frames = dir.path().join("frames");
    let scene = dir.path().join("scene.json");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--frames").arg(&frames).arg("--scene").arg(&scene);
    // The sun held still (--time-rate 0), so a frame differs only by edits.
    command.args(["--fps", "6", "--size", "128x80", "--validation", "--no-hud", "--time-rate", "0"]);
    command.args(["--script", "8:K@64,44;11:UNDO;13:REDO;15:SAVE"]);
    run(command);
    let frame = |k: usize| std::fs::read(frames.join(format!("frame_{k:05}.png"))).expect("frame written");
    assert_eq!(frame(6), frame(7), "settled before the edit");
    assert_ne!(frame(7), frame(8), "the crater is drawn in the frame after the key");
    assert_eq!(frame(11), frame(7), "undo restores the picture");
    assert_eq!(frame(13), frame(10), "redo brings the crater back");
    let saved = std::fs::read_to_string(&scene).expect("Ctrl+S wrote the scene");
    let parsed = planet_terrain::layers::Scene::from_json(&saved, "earth").expect("a valid scene");
    assert_eq!(parsed.layers.len(), 1, "one crater: {saved}");
}

/// F12 (the script's SCREENSHOT, named through the key table) writes the
/// next frame beside the scene file: exactly one `planet-view-*.png`, the
/// frame `--frames` wrote for it, byte for byte.
#[test]
fn the_screenshot_key_writes_the_frame_beside_the_scene() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 2);
    let frames = dir.path().join("frames");
    let scenes = dir.path().join("scenes");
    std::fs::create_dir_all(&scenes).expect("scene folder");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--frames").arg(&frames).arg("--scene").arg(scenes.join("scene.json"));
    command.args(["--fps", "6", "--size", "128x80", "--validation", "--no-hud", "--time-rate", "0"]);
    command.args(["--script", "4:SCREENSHOT"]);
    run(command);
    let shots: Vec<PathBuf> = std::fs::read_dir(&scenes)
        .expect("scene folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("planet-view-")))
        .collect();
    assert_eq!(shots.len(), 1, "one screenshot beside the scene: {shots:?}");
    assert_eq!(
        std::fs::read(&shots[0]).expect("the screenshot"),
        std::fs::read(frames.join("frame_00004.png")).expect("frame 4"),
        "the screenshot is the frame"
    );
}

/// A path that holds still over the mountains for `seconds`, looking down
/// at them: where the authoring tests dig.
fn write_hover_path(dir: &Path, seconds: u32) -> PathBuf {
    let hover = r#""lat": -47.12, "lon": 38.95, "alt": 14000, "heading": 25, "pitch": -35"#;
    let path = dir.join("hover.json");
    std::fs::write(&path, format!(r#"{{"keyframes": [{{"t": 0, {hover}}}, {{"t": {seconds}, {hover}}}]}}"#))
        .expect("write path");
    path
}

/// Sends real input through the X server (XTEST, as a person's keyboard
/// would), not through the viewer's `--script` hook.
fn xdotool(display: &str, args: &[&str]) {
    let status = Command::new("xdotool")
        .env("DISPLAY", display)
        .args(args)
        .status()
        .expect("xdotool is installed (tools/deps.sh installs it)");
    assert!(status.success(), "xdotool {args:?}");
}

/// Whether planet-view's window is mapped on `display` (xdotool finds it).
fn window_shown(display: &str) -> bool {
    Command::new("xdotool")
        .env("DISPLAY", display)
        .args(["search", "--onlyvisible", "--name", "planet-view"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits (two minutes at most) until `done`; a viewer that exited
/// meanwhile never will, so its stderr is the failure.
fn wait_until(viewer: &mut std::process::Child, what: &str, done: &dyn Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        if let Ok(Some(status)) = viewer.try_wait() {
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(&mut viewer.stderr.take().expect("piped"), &mut stderr);
            panic!("planet-view exited ({status}) while the test waited for {what}:\n{stderr}");
        }
        assert!(start.elapsed().as_secs() < 120, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn real_key_events_reach_the_viewer_through_the_x_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 600);
    let scene = dir.path().join("scene.json");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--scene").arg(&scene).args(["--size", "128x80", "--validation", "--no-hud"]);
    let mut viewer = command.stderr(Stdio::piped()).spawn().expect("start planet-view");
    let mut wait_for = |what: &str, done: &dyn Fn() -> bool| wait_until(&mut viewer, what, done);
    // The window is mapped once xdotool can find it; then it takes the
    // keyboard focus and the pointer goes over the ground.
    wait_for("the window", &|| window_shown(&x.display));
    std::thread::sleep(std::time::Duration::from_secs(2));
    xdotool(&x.display, &["search", "--onlyvisible", "--name", "planet-view", "windowfocus", "--sync"]);
    xdotool(&x.display, &["mousemove", "64", "44"]);
    xdotool(&x.display, &["key", "k"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    xdotool(&x.display, &["key", "ctrl+s"]);
    wait_for("Ctrl+S to write the scene", &|| scene.exists());
    let saved = std::fs::read_to_string(&scene).expect("the saved scene");
    let parsed = planet_terrain::layers::Scene::from_json(&saved, "earth").expect("a valid scene");
    // Under load the X server may auto-repeat a held key, so count, don't pin.
    let dug = parsed.layers.len();
    assert!(dug >= 1, "K dug a crater under the pointer: {saved}");
    // Undo through the keyboard, save again: the crater is gone.
    std::fs::remove_file(&scene).expect("remove the first save");
    xdotool(&x.display, &["key", "ctrl+z"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    xdotool(&x.display, &["key", "ctrl+s"]);
    wait_for("the second save", &|| scene.exists());
    let saved = std::fs::read_to_string(&scene).expect("the second save");
    let parsed = planet_terrain::layers::Scene::from_json(&saved, "earth").expect("a valid scene");
    assert!(parsed.layers.len() < dug, "Ctrl+Z undid a crater: {saved}");
    xdotool(&x.display, &["key", "Escape"]);
    let start = std::time::Instant::now();
    while viewer.try_wait().expect("wait").is_none() {
        if start.elapsed().as_secs() > 30 {
            let _ = viewer.kill();
            panic!("Escape did not close the window");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let output = viewer.wait_with_output().expect("the viewer's output");
    assert!(output.status.success(), "planet-view failed:\n{}", String::from_utf8_lossy(&output.stderr));
}

/// B and V (through the `--script` hook) drop a ball and a crate where the
/// cursor meets the ground, after a crater was dug there: they fall, land
/// on the edited ground and stay on it. The run's log holds each body's
/// centre above the ground under it by at least its smallest half-size
/// (less 5 cm), and nearer than its drop height.
#[test]
fn dropped_bodies_fall_onto_the_edited_ground_and_stay_on_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 4);
    let log = dir.path().join("stats.json");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.args(["--fps", "10", "--size", "128x80", "--validation", "--no-hud", "--time-rate", "0", "--stats"]);
    command.arg(&log).args(["--exit-at-end", "--script", "3:K@64,44;5:BALL@64,44;6:CRATE@70,40"]);
    run(command);
    let log = stats(&log);
    let bodies = log["bodies"].as_array().expect("the log lists the bodies");
    assert_eq!(bodies.len(), 2, "a ball and a crate: {bodies:?}");
    for body in bodies {
        let above = body["above_ground_m"].as_f64().expect("ground under the body");
        let size = body["smallest_half_size_m"].as_f64().expect("a size");
        println!("dropped: {body}");
        assert!(above >= size - 0.05, "the body went into the ground: {body}");
        assert!(above < 6.0 * size, "the body fell from its drop height: {body}");
    }
}

/// The share of pixels in columns `xs` (every row) of a PNG that are
/// exactly `rgb`.
fn share_of(path: &Path, xs: std::ops::Range<usize>, rgb: [u8; 3]) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the frame exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let (width, height) = (info.width as usize, info.height as usize);
    let at = |x: usize, y: usize| &pixels[4 * (y * width + x)..4 * (y * width + x) + 3];
    let hits = (0..height).flat_map(|y| xs.clone().map(move |x| (x, y))).filter(|&(x, y)| at(x, y) == rgb).count();
    hits as f64 / (height * xs.len()) as f64
}

/// The panels in a real window under Xvfb: the frames the window presented
/// (read back) carry egui's panels down both sides, the ground between
/// them. `PLANET_BLESS=1` keeps the last frame as docs/images/panels.png,
/// docs/tools.md's picture of the panels.
#[test]
fn the_panels_show_in_a_real_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 2);
    let scene = dir.path().join("scene.json");
    // A crater where the hovering camera looks, so the layers panel lists one.
    let crater = r#"{"kind": "crater", "order": 1, "lat": -46.99, "lon": 39.04, "radius_m": 3000, "depth_m": 600, "rim_m": 150}"#;
    std::fs::write(&scene, format!(r#"{{"version": 1, "body": "earth", "layers": [{crater}]}}"#))
        .expect("write the scene");
    planet_terrain::layers::Scene::from_json(&std::fs::read_to_string(&scene).unwrap(), "earth")
        .expect("a valid scene");
    let frames = dir.path().join("frames");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--scene").arg(&scene).arg("--frames").arg(&frames);
    // N (the shortcut, through the script hook) selects the crater: the
    // layers panel shows its parameters.
    command.args(["--fps", "3", "--size", "1024x640", "--validation", "--time-rate", "0", "--script", "0:N"]);
    run(command);
    let last = frames.join("frame_00006.png");
    // egui's dark panel fill, as the window showed it.
    const PANEL: [u8; 3] = [27, 27, 27];
    let (left, right) = (share_of(&last, 2..12, PANEL), share_of(&last, 1012..1022, PANEL));
    assert!(left > 0.8 && right > 0.8, "panels down both sides: {left:.2} left, {right:.2} right");
    let middle = share_of(&last, 500..510, PANEL);
    assert!(middle < 0.05, "the ground shows between the panels: {middle:.2} of it is panel");
    if std::env::var_os("PLANET_BLESS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images");
        std::fs::create_dir_all(&docs).expect("docs/images");
        std::fs::copy(&last, docs.join("panels.png")).expect("keep the picture");
    }
}

/// A real pointer click through the X server on the layers panel's "Add
/// here" (where egui lays it out in a 1024x640 window) adds a crater where
/// the view's centre meets the ground (the camera, 14 km up, looks 35
/// degrees down toward north-north-east: about 20 km ahead), and Ctrl+S, a
/// shortcut, still saves it after the click: egui-winit hands the panels
/// the window's real events.
#[test]
fn a_real_click_on_the_layers_panel_adds_a_layer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = test_pack();
    let path = write_hover_path(dir.path(), 600);
    let scene = dir.path().join("scene.json");
    let x = Xvfb::start();
    let mut command = fly(&pack, &path, Some(&x.display));
    command.arg("--scene").arg(&scene).args(["--size", "1024x640", "--validation", "--time-rate", "0"]);
    let mut viewer = command.stderr(Stdio::piped()).spawn().expect("start planet-view");
    wait_until(&mut viewer, "the window", &|| window_shown(&x.display));
    // A few frames first, so egui has laid the panels out.
    std::thread::sleep(std::time::Duration::from_secs(4));
    xdotool(&x.display, &["search", "--onlyvisible", "--name", "planet-view", "windowfocus", "--sync"]);
    let mut layers = 0;
    for _attempt in 0..5 {
        xdotool(&x.display, &["mousemove", "931", "35"]);
        std::thread::sleep(std::time::Duration::from_millis(1500));
        xdotool(&x.display, &["click", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(1500));
        xdotool(&x.display, &["key", "ctrl+s"]);
        let saved = std::time::Instant::now();
        while !scene.exists() && saved.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let text = std::fs::read_to_string(&scene).expect("Ctrl+S wrote the scene");
        let parsed = planet_terrain::layers::Scene::from_json(&text, "earth").expect("a valid scene");
        layers = parsed.layers.len();
        if let Some(first) = parsed.layers.first() {
            let planet_terrain::layers::LayerKind::Crater { lat, lon, .. } = first.kind else {
                panic!("the panel's default kind is a crater: {text}")
            };
            let (north, east) = (lat + 47.12, lon - 38.95);
            assert!(
                (0.08..0.3).contains(&north) && (0.03..0.25).contains(&east),
                "where the view's centre meets the ground, ahead of the camera: {text}"
            );
            break;
        }
        // Not laid out yet when clicked (a slow frame): click again.
        std::fs::remove_file(&scene).expect("remove the empty save");
    }
    assert!(layers >= 1, "the click added a layer");
    xdotool(&x.display, &["key", "Escape"]);
    let output = viewer.wait_with_output().expect("the viewer's output");
    assert!(output.status.success(), "planet-view failed:\n{}", String::from_utf8_lossy(&output.stderr));
}
