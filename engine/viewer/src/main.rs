//! planet-view: fly a body from a pack (or a procedural source, or only its
//! ellipsoid) in a window, or render headless: one shot (`--shot`) or a
//! scripted fly-through written frame by frame (`--path --frames`).
//!
//! The key decision: every mode draws through the same frame path
//! ([`session::Session::draw`] over `planet_render::scene::TerrainScene`), so
//! a shot, a recorded fly-through and the window show the same frames. A
//! shot renders until the cut is fully resident (or a stated frame cap), so
//! it is what a user sees once streaming settles, and the statistics say
//! whether it did.

mod authoring;
mod bodies;
mod cli;
mod flight;
mod gpu_counts;
mod ground_ahead;
mod hud;
mod journey;
mod keys;
mod open;
mod panels;
mod session;
mod stats;
mod system;
mod views;
mod window;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, FRAMES_IN_FLIGHT, MIN_SLOTS, node_budget, slots, start_time};
use open::{Opened, camera_height, open_source};
use planet_cli::args;
use planet_cli::stack::PackOpener;
use planet_remote::{HttpPacks, RemoteOptions};
use planet_render::scene::{
    Delivery, FrameRequest, Loading, ReadBack, SceneSettings, ShadowMode, TerrainScene, Unreachable, sun_at,
};
use planet_render::{GpuSettings, RenderError, Renderer, RendererSettings};
use planet_terrain::camera::{CameraPose, View};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::HeightSource;
use planet_terrain::lod::SelectionSettings;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Where the user named no place, a regional pack alone is flown over.
    let placed = ["lat", "lon"].iter().any(|id| matches.value_source(id) == Some(ValueSource::CommandLine));
    planet_cli::exit_code(run(cli, placed))
}

/// A renderer error for a person: a setting the device cannot hold is
/// named by the flag that asked for it.
fn renderer_error(error: RenderError) -> anyhow::Error {
    match error {
        RenderError::Limit { setting, value, max, why } => {
            let flag = match setting {
                "slots" => "--slots",
                "max_nodes" => "--budget",
                "uploads_per_frame" => "--uploads",
                other => other,
            };
            anyhow::anyhow!("{flag} {value}: this device allows at most {max} ({why})")
        }
        other => anyhow::Error::new(other).context("starting the renderer"),
    }
}

/// `placed`: the command line named the camera's latitude or longitude.
fn run(mut cli: Cli, placed: bool) -> Result<()> {
    debug_assert_eq!(MIN_SLOTS as usize, planet_terrain::lod::min_slots(FRAMES_IN_FLIGHT));
    let size = cli.size;
    let r = &cli.remote;
    let http = HttpPacks::new(RemoteOptions::from_flags(
        r.cache.clone(),
        r.cache_bytes,
        r.request_timeout_s,
        r.read_deadline_s,
    ));
    let opener = PackOpener::reading_urls(http.opener());
    cli.check_paths()?;
    let Opened { body, source, framing, packs, others, journey } = open_source(&cli, &opener)?;
    cli.other_bodies = others.len() as u64;
    let fewest = system::fewest_slots(others.len() + 1);
    if slots(&cli, size) < fewest {
        bail!(
            "--slots {}: a session of {} bodies needs at least {fewest} slots ({MIN_SLOTS} for each)",
            slots(&cli, size),
            others.len() + 1
        );
    }
    if let Some(framing) = framing.filter(|_| !placed) {
        (cli.lat, cli.lon) = (framing.lat, framing.lon);
        if cli.alt.is_none() && cli.agl.is_none() {
            cli.alt = Some(framing.alt);
        }
    }
    if let Some(dir) = &cli.frames {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(shot) = cli.shot.clone() {
        return shot_mode(&cli, &http, (body, source, others), size, &shot);
    }
    let display = std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty());
    if display && !cli.headless {
        let other_bodies: Vec<Body> = others.iter().map(|(other, _)| other.clone()).collect();
        let places = flight::places(&packs, &body, &other_bodies);
        return window_mode(&cli, &http, (body, source, places), others, size, journey);
    }
    match journey {
        Some(journey) => path_mode(&cli, &http, (body, source, others), size, &journey),
        None => bail!(
            "no display to open a window on (DISPLAY is not set); pass --shot OUT.png for one frame, \
             or --path FILE.json --frames DIR for a headless fly-through"
        ),
    }
}

/// The renderer for main views of `size`: a target that holds the second
/// view too where it is drawn beside (`layout`), and records for every view.
fn renderer_settings(cli: &Cli, size: (u32, u32), layout: views::Layout) -> RendererSettings {
    let target = if cli.view2.is_some() { views::SecondViewer::target_size(layout, size) } else { size };
    RendererSettings {
        size: target,
        slots: slots(cli, size) as u32,
        max_nodes: (cli::views(cli) as usize * node_budget(cli, size) as usize).max(64),
        frames_in_flight: FRAMES_IN_FLIGHT as usize,
        uploads_per_frame: cli.uploads as usize,
        gpu: GpuSettings { validation: cli.validation, skip_work_counts: cli.no_gpu_counts },
    }
}

fn scene_settings(cli: &Cli, size: (u32, u32), near_m: f64) -> SceneSettings {
    SceneSettings {
        selection: SelectionSettings { target_error_px: cli.sse, node_budget: node_budget(cli, size) as usize, near_m },
        uploads_per_frame: cli.uploads as usize,
        loading: loading(cli),
        shadows: match cli.shadows.as_str() {
            "off" => ShadowMode::Off,
            "mask" => ShadowMode::Mask,
            _ => ShadowMode::On,
        },
        // A shot does not wait on a source that failed: it ends and says so.
        unreachable: if cli.shot.is_some() { Unreachable::GiveUp } else { Unreachable::RetryLater },
        slots: None,
    }
}

/// `--loading`, or its default (see the flag).
fn loading(cli: &Cli) -> Loading {
    let writes_frames = cli.shot.is_some() || cli.frames.is_some();
    match cli.loading.as_deref() {
        Some("frame") => Loading::OnFrame,
        None if writes_frames => Loading::OnFrame,
        _ => Loading::Background { threads: std::thread::available_parallelism().map_or(2, |n| n.get()) },
    }
}

fn check_validation(renderer: &Renderer) -> Result<()> {
    let messages = renderer.validation_messages();
    if !messages.is_empty() {
        for m in &messages {
            planet_cli::report::message(&format!("validation: {m}"));
        }
        bail!("{} Vulkan validation message(s)", messages.len());
    }
    Ok(())
}

/// The camera's body and ground, and the session's other bodies with theirs.
type Grounds = (Body, Option<Arc<dyn HeightSource>>, Vec<(Body, Option<Arc<dyn HeightSource>>)>);

fn shot_mode(cli: &Cli, http: &HttpPacks, grounds: Grounds, size: (u32, u32), shot: &Path) -> Result<()> {
    let (body, source, others) = grounds;
    let at = Geodetic::from_degrees(cli.lat, cli.lon, 0.0);
    let (height, above_ground) = camera_height(cli, source.as_deref(), at)?;
    if !height.is_finite() || height < -20_000.0 {
        bail!("camera height {height} m is not a usable altitude");
    }
    let at = Geodetic::from_degrees(cli.lat, cli.lon, height);
    let view =
        View::looking_from(&body, at, cli.orientation.heading, cli.orientation.pitch, cli.fov.to_radians(), size);
    let mut renderer = Renderer::new(renderer_settings(cli, size, views::Layout::Beside)).map_err(renderer_error)?;
    let settings = scene_settings(cli, size, session::near_plane(above_ground));
    let mut scene = new_scene(settings, &body, source, &renderer, cli.scene.as_deref())?;
    let mut others = other_scenes(others, settings, &renderer);
    system::share_out(renderer.settings().slots, &mut scene, &mut others);
    let start = start_time(cli, &body, cli.lon);
    scene.set_sky_turn(planet_render::scene::sky_turn_at(&body, start));
    scene.set_season(Some(planet_render::scene::season_at(start)));
    let sun = sun_at(&body, start);
    let mut tell = shot_progress();
    let mut second = second_viewer(cli, &body, views::Layout::Beside);
    let target = renderer.settings().size;
    let second_view = second
        .as_mut()
        .map(|s| s.request(&body, scene.source().map(|s| s.as_ref()), scene.edits(), cli.fov.to_radians(), target));
    let mut request = FrameRequest { second: second_view, ..FrameRequest::headless(view, sun, ReadBack::Never) };
    request.delivery.area = second.as_ref().and_then(|s| s.areas(target).0);
    let near = session::near_plane(above_ground);
    let (report, image, frames, other_bodies) = system::render_until_resident(
        &mut renderer,
        &mut scene,
        &mut others,
        &request,
        near,
        start,
        cli.max_frames as u32,
        &mut tell,
    )?;
    session::report_lost_device(&report);
    session::report_failures(&mut scene);
    let unfinished = stats::unfinished(&report);
    // Every frame completed: the newest is the one shot.
    let last = renderer.take_completed().into_iter().max_by_key(|c| c.frame);
    let (counts, no_data_pixels) = (last.and_then(|c| c.counts), last.map(|c| c.no_data_pixels));
    if let Some(path) = &cli.stats {
        let (builds, last_build_ms) = scene.horizon_map().1;
        let context = stats::ShotContext {
            renderer: &renderer,
            size: target,
            camera: (cli.lat, cli.lon, height),
            unfinished: &unfinished,
            frames,
            horizon_map: stats::HorizonMapStats { builds, last_build_ms },
            remote: http.transfers(),
            no_data_pixels,
        };
        let mut shot_stats = stats::ShotStats::new(context, &report, counts.as_ref());
        shot_stats.view2 = second.as_ref().zip(report.second.as_ref()).map(|(s, r)| stats::SecondViewStats::new(s, r));
        (shot_stats.body, shot_stats.other_bodies) = (body.name().to_string(), other_bodies);
        planet_cli::fs::write_json(path, &shot_stats)?;
    }
    check_validation(&renderer)?;
    if !unfinished.is_empty() && !cli.accept_incomplete {
        bail!(
            "the shot could not finish ({}); {} was not written (--accept-incomplete writes it anyway)",
            unfinished.join("; "),
            shot.display()
        );
    }
    image.save_png(shot).with_context(|| format!("writing {}", shot.display()))?;
    let said = ShotSaid { unfinished: &unfinished, no_data_pixels, counts: counts.as_ref() };
    say_shot(&body, &renderer, &report, frames, target, &said, shot);
    Ok(())
}

/// A shot waiting on many tiles says how it is coming along, every 2 s.
fn shot_progress() -> impl FnMut(u32, &planet_render::scene::FrameReport) {
    let mut said = std::time::Instant::now();
    move |frame, report| {
        session::report_lost_device(report);
        if said.elapsed() >= std::time::Duration::from_secs(2) {
            said = std::time::Instant::now();
            let s = &report.statistics;
            planet_cli::report::message(&format!(
                "planet-view: shot: frame {frame}, {} tiles pending, {} uploaded, {:.2} px error so far",
                s.pending_requests, s.uploads, s.effective_screen_error_pixels
            ));
        }
    }
}

/// What the shot's line says beside the frame's report.
struct ShotSaid<'a> {
    unfinished: &'a [String],
    no_data_pixels: Option<u32>,
    counts: Option<&'a planet_render::WorkCounts>,
}

/// The shot's one line: the body, the device, each view's cut and error,
/// the frames, and what is missing from the picture.
fn say_shot(
    body: &Body,
    renderer: &Renderer,
    report: &planet_render::scene::FrameReport,
    frames: u32,
    size: (u32, u32),
    said: &ShotSaid<'_>,
    shot: &Path,
) {
    let (unfinished, no_data_pixels) = (said.unfinished, said.no_data_pixels);
    let second_said = report.second.map_or(String::new(), |s| {
        let s = &s.statistics;
        format!(" (second view: {} nodes, {:.2} px error)", s.nodes_drawn, s.effective_screen_error_pixels)
    });
    planet_cli::report::message(&format!(
        "planet-view: {} on {}: {} nodes ({} drawn), {:.2} px error{second_said}, {} frames{}{}, {}, wrote {}",
        body.name(),
        renderer.device_name(),
        report.statistics.nodes_selected,
        report.statistics.nodes_drawn,
        report.statistics.effective_screen_error_pixels,
        frames,
        if unfinished.is_empty() { String::new() } else { format!(" (incomplete: {})", unfinished.join("; ")) },
        no_data_said(no_data_pixels, size),
        gpu_counts::summary(said.counts),
        shot.display()
    ));
}

/// ", 23% of the picture no data" where some of it was ground no pack
/// measured, else nothing.
fn no_data_said(pixels: Option<u32>, size: (u32, u32)) -> String {
    match pixels.filter(|&p| p > 0) {
        Some(p) => {
            let share = 100.0 * f64::from(p) / (f64::from(size.0) * f64::from(size.1)).max(1.0);
            format!(", {share:.1}% of the picture no data (no pack covers it)")
        }
        None => String::new(),
    }
}

fn start_pose(cli: &Cli, source: Option<&dyn HeightSource>, journey: Option<&journey::Journey>) -> Result<CameraPose> {
    if let Some(journey) = journey {
        return Ok(journey.first().1);
    }
    let at = Geodetic::from_degrees(cli.lat, cli.lon, 0.0);
    let (height, _) = camera_height(cli, source, at)?;
    Ok(CameraPose {
        lat: cli.lat,
        lon: cli.lon,
        alt: height,
        heading: cli.orientation.heading,
        pitch: cli.orientation.pitch,
    })
}

/// The scene of a body's ground, with the layers of `scene_file` applied.
fn new_scene(
    settings: SceneSettings,
    body: &Body,
    source: Option<Arc<dyn HeightSource>>,
    renderer: &Renderer,
    scene_file: Option<&Path>,
) -> Result<TerrainScene> {
    let mut scene = TerrainScene::new(body.clone(), source, renderer, settings);
    if let Some(file) = scene_file {
        authoring::Authoring::default().load(&mut scene, file, body.name())?;
    }
    Ok(scene)
}

fn new_session(
    settings: SceneSettings,
    vertical_fov: f64,
    body: &Body,
    source: Option<Arc<dyn HeightSource>>,
    renderer: Renderer,
    scene_file: Option<&Path>,
) -> Result<session::Session> {
    let scene = new_scene(settings, body, source, &renderer, scene_file)?;
    let mut session = session::Session::new(renderer, scene);
    session.vertical_fov = vertical_fov;
    Ok(session)
}

/// The scenes of the session's other bodies (their slots shared out by
/// the session or [`system::share_out`]).
fn other_scenes(
    others: Vec<(Body, Option<Arc<dyn HeightSource>>)>,
    settings: SceneSettings,
    renderer: &Renderer,
) -> Vec<TerrainScene> {
    let settings = SceneSettings { shadows: ShadowMode::Off, ..settings };
    others.into_iter().map(|(body, source)| TerrainScene::new(body, source, renderer, settings)).collect()
}

/// Says that the camera crossed to another body, if it did.
fn say_crossing(crossing: Option<String>) {
    if let Some(crossing) = crossing {
        planet_cli::report::message(&format!("planet-view: {crossing}"));
    }
}

/// `--view2`'s viewer on `body`, drawn as `layout` says, if asked for.
fn second_viewer(cli: &Cli, body: &Body, layout: views::Layout) -> Option<views::SecondViewer> {
    cli.view2.map(|camera| views::SecondViewer::new(camera, body, cli.sse2.unwrap_or(cli.sse), layout))
}

/// A scripted path flown headless: every frame drawn (and written with
/// --frames), at fixed steps of 1/fps seconds of path time; across bodies
/// when its keyframes name several (the camera at the nearest).
fn path_mode(cli: &Cli, http: &HttpPacks, grounds: Grounds, size: (u32, u32), path: &journey::Journey) -> Result<()> {
    let (body, source, others) = grounds;
    let renderer = Renderer::new(renderer_settings(cli, size, views::Layout::Beside)).map_err(renderer_error)?;
    let fov = cli.fov.to_radians();
    let settings = scene_settings(cli, size, 1.0);
    let mut session = new_session(settings, fov, &body, source, renderer, cli.scene.as_deref())?;
    let others = other_scenes(others, settings, &session.renderer);
    session.set_other_bodies(others);
    session.shadows = settings.shadows;
    session.second = second_viewer(cli, &body, views::Layout::Beside);
    let first = path.first().1;
    let mut flight = flight::Flight::new(first, flight::Mode::Free);
    let frames = path_frames(path.duration(), cli.fps)?;
    let read_back = session::read_back_for(cli.frames.as_deref());
    let start = start_time(cli, &body, first.lon);
    let script = cli.script.as_deref().map(window::parse_script).transpose()?.unwrap_or_default();
    let centre = (f64::from(size.0) / 2.0, f64::from(size.1) / 2.0);
    // Recorded frames carry the readouts (camera, frame), not the controls.
    let mut panels = cli.hud.then(|| {
        let mut panels = panels::Panels::new(true);
        panels.interactive = false;
        panels
    });
    // Where a body stands at a path time.
    let place = |body: &Body, t: f64| system::placed(body, start.plus_seconds(t * cli.time_rate));
    // Frames written, on a terminal as a bar, in a log as a line every ten
    // seconds with the tiles still pending (a long --frames run said
    // nothing until its end).
    if cli.frames.is_some() {
        session.clock = start.plus_seconds(path.start() * cli.time_rate);
        say_crossing(session.place_camera(&mut flight, path.at(path.start(), &place)));
        session.settle_roots(&flight, 200)?;
    }
    let progress = planet_cli::progress::JobProgress::new("frames");
    let mut said_pending = std::time::Instant::now();
    for k in 0..frames {
        let t = path.start() + k as f64 / cli.fps;
        session.clock = start.plus_seconds(t * cli.time_rate);
        let before = (session.body().name().to_string(), flight.pose());
        say_crossing(session.place_camera(&mut flight, path.at(t, &place)));
        let ground = session.ground_height(flight.lat, flight.lon);
        flight.keep_above(ground);
        // Headless, the script drops bodies (BALL, CRATE) and nothing else.
        for input in script.iter().filter(|s| s.frame == k) {
            let Some(kind) = input.key.and_then(|(code, ctrl)| window::body_kind(code, ctrl)) else {
                bail!("--script without a window takes BALL and CRATE only (frame {})", input.frame);
            };
            let (x, y) = input.at.unwrap_or(centre);
            planet_cli::report::message(&format!("planet-view: {}", session.drop_at_pixel(&flight, kind, x, y)?));
        }
        session.bodies.advance(&session.scene, 1.0 / cli.fps)?;
        let ui = panels.as_mut().map(|p| {
            // The speed over the last step (body-fixed metres per second;
            // 0 on the step that crossed to another body).
            let camera = session.body().clone();
            let at = |pose: CameraPose| {
                camera.ellipsoid().geodetic_to_point(Geodetic::from_degrees(pose.lat, pose.lon, pose.alt))
            };
            let crossed = before.0 != camera.name();
            let speed = if k == 0 || crossed { 0.0 } else { (at(flight.pose()) - at(before.1)).length() * cli.fps };
            headless_panels(p, &mut session, &flight, size, speed)
        });
        let delivery = Delivery { ui: ui.as_ref(), ..Delivery::headless(read_back) };
        let report = session.draw(&flight, t, delivery)?;
        if let (Some(panels), Some(_)) = (&panels, report.device_lost) {
            panels.textures_lost();
        }
        if let Some(dir) = &cli.frames {
            session.save_last_frame(&session::frame_path(dir, k))?;
        }
        progress.update(k + 1, frames);
        if said_pending.elapsed() >= std::time::Duration::from_secs(10) {
            said_pending = std::time::Instant::now();
            let pending = session.log.last().map_or(0, |l| l.report.statistics.pending_requests);
            progress.stage(&format!("frame {} of {frames}: {pending} tiles pending", k + 1));
        }
    }
    session.finish()?;
    finish_run(cli, &session, &body, http)
}

/// The panels over a headless frame: no input, the path's figures.
fn headless_panels(
    panels: &mut panels::Panels,
    session: &mut session::Session,
    flight: &flight::Flight,
    size: (u32, u32),
    speed: f64,
) -> planet_render::UiFrame {
    use planet_render::egui;
    let readout = panels::Readout { speed, ..session.readout(flight, "path", None) };
    let (error_px, budget) = session.scene.selection();
    let mut view = panels::ViewControls {
        error_px,
        budget,
        max_budget: session.renderer.settings().max_nodes,
        wireframe: false,
        wireframe_supported: session.renderer.supports_wireframe(),
        frozen: session.scene.is_frozen(),
        time_rate: 0,
        rate_labels: vec!["path".to_string()],
        time_paused: false,
    };
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size.0 as f32, size.1 as f32));
    let input = egui::RawInput { screen_rect: Some(screen), ..egui::RawInput::default() };
    let mut authoring = authoring::Authoring::default();
    let body = session.body().name().to_string();
    let edit = panels::LayerEdit { authoring: &mut authoring, editor: &mut session.scene, body: &body };
    panels.run(input, &readout, &mut view, edit).ui
}

/// Frames a path of `duration` seconds takes at `fps`, the start and end
/// included: at least one, or an error (never a silent empty run).
fn path_frames(duration: f64, fps: f64) -> Result<usize> {
    let steps = (duration * fps).round();
    if !(0.0..=1e9).contains(&steps) {
        bail!("a path of {duration} s at {fps} frames per second gives no playable number of frames");
    }
    Ok(steps as usize + 1)
}

/// `ground`: the body, its ground and the places to go to.
fn window_mode(
    cli: &Cli,
    http: &HttpPacks,
    ground: (Body, Option<Arc<dyn HeightSource>>, Vec<flight::Place>),
    others: Vec<(Body, Option<Arc<dyn HeightSource>>)>,
    size: (u32, u32),
    path: Option<journey::Journey>,
) -> Result<()> {
    let (body, source, places) = ground;
    let start = start_pose(cli, source.as_deref(), path.as_ref())?;
    let resize_at = cli.resize_at.as_deref().map(parse_resize_at).transpose()?;
    let script = cli.script.as_deref().map(window::parse_script).transpose()?.unwrap_or_default();
    let (settings, fov, factory_body) = (scene_settings(cli, size, 1.0), cli.fov.to_radians(), body.clone());
    let scene_file = cli.scene.clone();
    let second = second_viewer(cli, &body, views::Layout::Inset);
    let run = window::WindowRun {
        settings: renderer_settings(cli, size, views::Layout::Inset),
        vsync: !cli.no_vsync,
        flight: flight::Flight::new(
            start,
            if cli.alt.unwrap_or(0.0) > 1e6 { flight::Mode::Orbit } else { flight::Mode::Free },
        ),
        path: path.map(|p| (p, cli.fps)),
        start_time: start_time(cli, &body, start.lon),
        time_rate: cli.time_rate,
        time_fixed: cli.time.is_some(),
        places,
        exit_at_end: cli.exit_at_end || cli.frames.is_some(),
        frames: cli.frames.clone(),
        panels: !cli.no_hud,
        resize_at,
        script,
        // In a window the scene file is also where Ctrl+S saves: it may not exist yet.
        make_session: Box::new(move |renderer| {
            let file = scene_file.as_deref().filter(|f| f.exists());
            let mut session = new_session(settings, fov, &factory_body, source.clone(), renderer, file)?;
            session.second.clone_from(&second);
            session.shadows = settings.shadows;
            let others = other_scenes(others.clone(), settings, &session.renderer);
            session.set_other_bodies(others);
            Ok(session)
        }),
        authoring: authoring::Authoring::for_file(
            cli.scene.clone(),
            // A scene names the stack it was authored over.
            cli.packs.iter().map(|p| p.display().to_string()).collect(),
        ),
    };
    let session = window::run(run)?;
    finish_run(cli, &session, &body, http)
}

fn parse_resize_at(text: &str) -> Result<(usize, (u32, u32))> {
    let (frame, size) = text.split_once(':').context("--resize-at: expected FRAME:WxH")?;
    Ok((
        frame.parse().context("--resize-at: the frame must be a number")?,
        args::size(size).map_err(|e| anyhow::anyhow!("--resize-at: {e}"))?,
    ))
}

/// Writes the per-frame log (--stats), prints a summary line and fails on
/// validation messages.
fn finish_run(cli: &Cli, session: &session::Session, body: &Body, http: &HttpPacks) -> Result<()> {
    let log = session.flight_log(http.transfers());
    if let Some(path) = &cli.stats {
        planet_cli::fs::write_json(path, &log)?;
    }
    let summary = &log.summary;
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    planet_cli::report::message(&format!(
        "planet-view: {} on {}: {} frames, CPU median {} ms p99 {} ms, GPU median {} ms p99 {} ms, \
         peak {} uploads, lowest {:.2} m above the ground{}",
        body.name(),
        session.renderer.device_name(),
        summary.frames,
        ms(summary.cpu_ms_median),
        ms(summary.cpu_ms_p99),
        ms(summary.gpu_ms_median),
        ms(summary.gpu_ms_p99),
        summary.peak_uploads,
        summary.min_above_ground_m,
        cli.frames.as_ref().map_or(String::new(), |d| format!(", frames in {}", d.display())),
    ));
    check_validation(&session.renderer)
}
