//! One viewing session: the renderer, the scene, the ground under the
//! camera, and a log of every frame. The window, the headless fly-through
//! and the shot all draw through [`Session::draw`].
//!
//! The key decision: each frame's log entry is written when the frame is
//! recorded (host figures) and completed when the GPU reports it (GPU time
//! and the hole count), so the log is exact even with frames in flight.

use planet_terrain::ground::BoundsAt;
use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use planet_render::scene::{Delivery, FrameReport, FrameRequest, ReadBack, TerrainScene, sun_at};
use planet_render::{PassTimes, Renderer, WorkCounts};
use planet_terrain::camera::{Instant, View};
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::{GroundCache, GroundReader, RayHit, depth_for_spacing, raycast};
use planet_terrain::ground::{HeightSource, Provenance, SourceTile, locate};

use crate::flight::Flight;

/// Spacing (metres) at which the camera reads the ground: fixed, not the
/// view's detail, so it agrees with physics and placement queries, and the
/// depth `planet-pack sample` reads (1 m). Fine enough that the detail
/// octaves it leaves out stay under the 2 m a person stands above the
/// ground: read at 5 m (10 m for --agl) near Everest they added metres,
/// and a camera "2 m up" stood inside the ground drawn beneath it.
/// Higher up, the spacing grows with the height above the ground (see
/// `Session::ground_spacing_m`): within a kilometre of it, it is this.
pub const GROUND_SPACING_M: f64 = 1.0;

/// Near plane: a fraction of the height above the ground (nothing can be
/// nearer than that), capped; reversed-Z keeps the depth precision.
pub fn near_plane(above_ground: f64) -> f64 {
    (above_ground.abs() * 0.05).clamp(0.05, 1000.0)
}

/// Ground tiles the session keeps between frames; past it the farthest
/// go ([`evict_far`]).
const GROUND_CACHE_TILES: usize = 128;

/// Drops the cached tiles farthest from `at` until three quarters of
/// [`GROUND_CACHE_TILES`] are left: nearest are those at `depth` and the
/// next finer one (where the camera reads, and reads next when
/// descending), by how many tiles they lie from the one under `at`.
/// Returns the dropped tiles.
fn evict_far(cache: &mut GroundCache, body: &Body, at: Geodetic, depth: u8) -> Vec<SourceTile> {
    let finer = (depth + 1).min(planet_terrain::geo::address::MAX_DEPTH);
    let under = [locate(body, at, depth).0, locate(body, at, finer).0];
    let distance = |t: TileAddress| -> u32 {
        match under.iter().find(|u| u.depth() == t.depth() && u.face() == t.face()) {
            Some(u) => u.x().abs_diff(t.x()).max(u.y().abs_diff(t.y())),
            // Another depth, or across a face edge: after the rest.
            None => u32::MAX,
        }
    };
    let mut tiles: Vec<(u32, TileAddress)> = cache.tiles().map(|t| (distance(t), t)).collect();
    tiles.sort_unstable();
    let keep: std::collections::HashSet<TileAddress> =
        tiles.into_iter().take(GROUND_CACHE_TILES * 3 / 4).map(|(_, t)| t).collect();
    cache.retain(|t| keep.contains(&t))
}

/// Which of a logged frame's renderer frames one is: the camera body's
/// (the picture's own counts), or another body's drawn under it (its GPU
/// time adds to the frame's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    Camera,
    OtherBody,
}

/// One frame, as the log keeps it.
#[derive(Clone, Debug, Default)]
pub struct FrameLog {
    pub at: crate::stats::FrameTiming,
    /// Of `at.thread_cpu_ms`, reading the ground under the camera.
    pub ground_ms: f64,
    pub report: FrameReport,
    pub gpu: Option<PassTimes>,
    pub hole_pixels: Option<u32>,
    /// Pixels of ground no pack measured, drawn as no data.
    pub no_data_pixels: Option<u32>,
    /// The terrain passes' work as the device counted it.
    pub counts: Option<WorkCounts>,
}

pub struct Session {
    pub scene: TerrainScene,
    pub vertical_fov: f64,
    /// Where the view axis crosses the window, in pixels right of its
    /// centre: the middle of the strip the panels leave free.
    pub axis_offset_px: f64,
    /// The instant the next frame is drawn at: where the sun stands.
    pub clock: Instant,
    /// Tiles the ground reads keep between frames (dropped on every edit:
    /// they belong to the ground before it).
    ground_cache: GroundCache,
    /// The scene's edit count the cache was read at.
    ground_generation: usize,
    /// The spacing the camera reads the ground at: 1 m near the ground,
    /// coarser in proportion to the height above it (a thousandth), so a
    /// camera in orbit does not synthesize metre tiles it cannot see.
    ground_spacing_m: f64,
    /// Tiles of the coarser grounds a frame may draw under the camera (a
    /// coarse cut's lattice, a stand-in ancestor: [`Session::ground_height`]).
    drawn_ground_cache: GroundCache,
    /// Reads the ground ahead of the camera off the frame.
    ground_ahead: crate::ground_ahead::GroundAhead,
    /// Where the camera was at the last ground read (lat, lon), for the
    /// extrapolation ahead.
    last_ground_at: Option<(f64, f64)>,
    pub log: Vec<FrameLog>,
    /// What was said about the ground's source failing and answering again.
    pub(crate) source_notices: Vec<String>,
    /// The log entry each frame in flight belongs to, and which it is.
    logged: HashMap<u64, (usize, FrameKind)>,
    /// When the session began ([`crate::stats::FrameTiming::wall_s`]).
    began: std::time::Instant,
    /// Balls and crates dropped on the ground (B and V in a window).
    pub bodies: crate::bodies::Bodies,
    /// The second view (`--view2`), drawn in every frame with the main one.
    pub second: Option<crate::views::SecondViewer>,
    /// The session's other bodies, drawn before the camera's
    /// (`crate::system`); empty with one body.
    pub others: Vec<TerrainScene>,
    /// The shadows the camera's body is drawn with (others go without).
    pub shadows: planet_render::scene::ShadowMode,
    // Declared last, so dropped last here; the window that owns the surface
    // is dropped after the whole session.
    pub renderer: Renderer,
}

impl Session {
    pub fn new(renderer: Renderer, scene: TerrainScene) -> Session {
        Session {
            scene,
            vertical_fov: 50f64.to_radians(),
            axis_offset_px: 0.0,
            clock: Instant::J2000,
            ground_cache: GroundCache::default(),
            drawn_ground_cache: GroundCache::default(),
            ground_generation: usize::MAX,
            ground_spacing_m: GROUND_SPACING_M,
            ground_ahead: crate::ground_ahead::GroundAhead::default(),
            last_ground_at: None,
            log: Vec::new(),
            source_notices: Vec::new(),
            logged: HashMap::new(),
            began: std::time::Instant::now(),
            bodies: crate::bodies::Bodies::default(),
            second: None,
            others: Vec::new(),
            shadows: planet_render::scene::ShadowMode::On,
            renderer,
        }
    }

    pub fn body(&self) -> &Body {
        self.scene.body()
    }

    /// Drops what was read of the ground (a new body under the camera).
    pub(crate) fn forget_the_ground(&mut self) {
        self.ground_cache = GroundCache::default();
        self.drawn_ground_cache = GroundCache::default();
        self.ground_generation = usize::MAX;
        self.ground_ahead = crate::ground_ahead::GroundAhead::default();
        self.last_ground_at = None;
    }

    /// The top of the surface (metres) under a latitude/longitude
    /// (degrees): the sea's over water, else the edited ground, as the
    /// renderer draws them.
    pub fn ground_height(&mut self, lat: f64, lon: f64) -> f64 {
        let Some(source) = self.scene.source().cloned() else { return 0.0 };
        let generation = self.scene.edits();
        let mut cache = std::mem::take(&mut self.ground_cache);
        if generation != self.ground_generation {
            cache = GroundCache::default();
            self.drawn_ground_cache = GroundCache::default();
            self.ground_generation = generation;
        }
        let depth = depth_for_spacing(source.as_ref(), self.ground_spacing_m);
        let at = Geodetic::from_degrees(lat, lon, 0.0);
        if cache.len() > GROUND_CACHE_TILES {
            // Not all at once: the tiles nearest the camera at this depth
            // and the next are where it reads next (wiping the cache made
            // the frame read the tile under the camera again). Dropped ones
            // may be read ahead again, and are freed off the frame.
            let dropped = evict_far(&mut cache, source.body(), at, depth);
            for tile in &dropped {
                self.ground_ahead.forget(generation, tile.tile);
            }
            self.ground_ahead.free(dropped);
        }
        for tile in self.ground_ahead.take(generation) {
            cache.insert(tile);
        }
        // The tiles under the camera's next second at this frame's motion
        // (about 8 frames), at this depth and the next finer one (where a
        // descending camera reads next), read off the frame.
        if let Some((last_lat, last_lon)) = self.last_ground_at {
            let (dlat, dlon) = (lat - last_lat, lon - last_lon);
            if dlat.abs() < 1.0 && dlon.abs() < 1.0 {
                for k in 1..=8 {
                    let ahead = Geodetic::from_degrees(lat + dlat * f64::from(k), lon + dlon * f64::from(k), 0.0);
                    for d in [depth, (depth + 1).min(planet_terrain::geo::address::MAX_DEPTH)] {
                        let (tile, _, _) = locate(source.body(), ahead, d);
                        if !cache.contains(tile) {
                            self.ground_ahead.ask(generation, &source, tile);
                        }
                    }
                }
            }
        }
        self.last_ground_at = Some((lat, lon));
        let mut reader = GroundReader::with_cache(source.as_ref(), depth, cache);
        let height = reader.top(at);
        self.ground_cache = reader.into_cache();
        // A tile that cannot be read (a bad payload; the renderer reports it
        // once) is stood in for by the nearest shallower ground that can, as
        // the renderer draws its ancestor: the camera keeps clear of what is
        // drawn. Only with nothing readable at all is it the ellipsoid.
        let height = height.unwrap_or_else(|_| {
            (0..depth).rev().find_map(|d| GroundReader::new(source.as_ref(), d).top(at).ok()).unwrap_or(0.0)
        });
        // The frame draws a coarser ground than the finest where the cut is
        // coarse (a budget, slot pressure) or the tile under the camera is
        // still loading and an ancestor stands in (after a jump), and that
        // ground may lie above the finest: a camera held 1.5 m over the
        // finest ground then stood under the ground it was shown and saw sky
        // through it. It keeps clear of the higher of the two.
        let mut cache = std::mem::take(&mut self.drawn_ground_cache);
        if cache.len() > 8 {
            cache = GroundCache::default();
        }
        let mut highest = height;
        for drawn_depth in self.scene.drawn_ground_depths_at(at).into_iter().flatten().filter(|&d| d < depth) {
            let mut reader = GroundReader::with_cache(source.as_ref(), drawn_depth, cache);
            if let Ok(drawn) = reader.top(at) {
                highest = highest.max(drawn);
            }
            cache = reader.into_cache();
        }
        self.drawn_ground_cache = cache;
        highest
    }

    /// Where the ray through pixel `(x, y)` meets the (edited) ground, read
    /// at `spacing_m` with at most `budget` ground evaluations (`None` past
    /// the budget: never a guess).
    pub fn cursor_hit(&self, view: &View, x: f64, y: f64, spacing_m: f64, budget: usize) -> Option<Geodetic> {
        let source = self.scene.source()?;
        let direction = view.pixel_ray(x, y);
        let depth = depth_for_spacing(source.as_ref(), spacing_m);
        let reach = 3.0 * self.body().ellipsoid().radii().x;
        match raycast(source.as_ref(), view.position, direction, reach, depth, budget).ok()? {
            RayHit::Hit { point, .. } => Some(self.body().ellipsoid().point_to_geodetic(point)),
            _ => None,
        }
    }

    /// Drops a ball or a crate where the ray through pixel `(x, y)` meets
    /// the ground (the cursor's rule for edits); says what happened.
    pub fn drop_at_pixel(&mut self, flight: &Flight, kind: crate::bodies::Kind, x: f64, y: f64) -> Result<String> {
        let view = self.view(flight);
        let Some(g) = self.cursor_hit(&view, x, y, 4.0 * GROUND_SPACING_M, 50_000) else {
            return Ok("no ground under the cursor".to_string());
        };
        let above = flight.alt - self.ground_height(flight.lat, flight.lon);
        self.bodies.drop_at(&self.scene, kind, g.latitude.to_degrees(), g.longitude.to_degrees(), above)
    }

    pub fn view(&self, flight: &Flight) -> View {
        flight.view(self.body(), self.vertical_fov, self.main_size()).with_axis_offset(self.axis_offset_px)
    }

    /// The main view's viewport: the target, or its half beside a second view.
    pub fn main_size(&self) -> (u32, u32) {
        let size = self.renderer.settings().size;
        self.second.as_ref().map_or(size, |second| second.main_size(size))
    }

    /// Where the main view is drawn: its half beside a second view.
    fn main_area(&self) -> Option<planet_render::PixelRect> {
        self.second.as_ref().and_then(|second| second.areas(self.renderer.settings().size).0)
    }

    /// The second view of the next frame, if the session has one and the
    /// camera is at the body it was given on (it shows that body only).
    fn second_view(&mut self) -> Option<planet_render::scene::SecondView> {
        let size = self.renderer.settings().size;
        let source = self.scene.source().cloned();
        let (body, edits) = (self.scene.body().clone(), self.scene.edits());
        let second = self.second.as_mut().filter(|s| s.body == body.name())?;
        Some(second.request(&body, source.as_deref(), edits, self.vertical_fov, size))
    }

    /// Draws the camera's view and logs it (`t`: the path time, if any).
    pub fn draw(&mut self, flight: &Flight, t: f64, delivery: Delivery<'_>) -> Result<FrameReport> {
        let started = std::time::Instant::now();
        let cpu_started = planet_render::clock::thread_cpu_time();
        let above_ground = flight.alt - self.ground_height(flight.lat, flight.lon);
        let ground_ms = (planet_render::clock::thread_cpu_time() - cpu_started).as_secs_f64() * 1e3;
        // Within a kilometre of the ground this is the fixed 1 m.
        self.ground_spacing_m = (above_ground / 1000.0).clamp(GROUND_SPACING_M, 10_000.0);
        let (view, sun) = self.aim(flight, above_ground);
        let area = self.main_area();
        let first_other_frame = self.renderer.frames_submitted();
        let others =
            self.draw_other_bodies(&view, near_plane(above_ground), area).context("drawing the other bodies")?;
        let other_frames = first_other_frame..self.renderer.frames_submitted();
        self.renderer.set_bodies(&self.bodies.draws(view.position));
        let compose = planet_render::Compose { over_previous: !others.is_empty(), sky: true };
        let delivery = Delivery { compose, area, ..delivery };
        let request = FrameRequest { view, sun, delivery, second: self.second_view() };
        let report = self.scene.frame(&mut self.renderer, &request).context("drawing a frame")?;
        report_lost_device(&report);
        if report.device_lost.is_some() {
            self.others_lost_the_gpu();
        }
        self.source_notices.extend(report_failures(&mut self.scene));
        let at = crate::stats::FrameTiming {
            frame: self.log.len() as u64,
            body: self.body().name().to_string(),
            other_bodies: others,
            t,
            lat: flight.lat,
            lon: flight.lon,
            alt: flight.alt,
            above_ground_m: above_ground,
            wall_s: self.began.elapsed().as_secs_f64(),
            // Host work only: time blocked on the GPU is the GPU's.
            cpu_ms: started.elapsed().as_secs_f64() * 1e3 - report.waited_ms,
            // The frame thread's own CPU time: the host work, without the
            // time the OS gave other threads (lavapipe's, the loader's).
            thread_cpu_ms: (planet_render::clock::thread_cpu_time() - cpu_started).as_secs_f64() * 1e3,
        };
        let entry =
            FrameLog { at, ground_ms, report, gpu: None, hole_pixels: None, no_data_pixels: None, counts: None };
        // The other bodies' frames add their GPU time to this one's.
        for frame in other_frames {
            self.logged.insert(frame, (self.log.len(), FrameKind::OtherBody));
        }
        self.logged.insert(self.renderer_frame_of_last(), (self.log.len(), FrameKind::Camera));
        self.log.push(entry);
        self.collect();
        Ok(report)
    }

    /// Draws unlogged frames of the camera's view until the ground covers
    /// the body (the roots are resident), at most `max_frames`; returns how
    /// many it drew. A recording's first frame is then ground, not the bare
    /// ellipsoid that stands in before any tile (the demo's first frame was
    /// a plain blue ball).
    pub fn settle_roots(&mut self, flight: &Flight, max_frames: u32) -> Result<u32> {
        let above_ground = flight.alt - self.ground_height(flight.lat, flight.lon);
        let (view, sun) = self.aim(flight, above_ground);
        for k in 1..=max_frames {
            let mut request =
                FrameRequest { second: self.second_view(), ..FrameRequest::headless(view, sun, ReadBack::Never) };
            request.delivery.area = self.main_area();
            let report = self.scene.frame(&mut self.renderer, &request).context("drawing a frame")?;
            report_lost_device(&report);
            if !report.analytic_body {
                return Ok(k);
            }
            // Background loading: give the workers the time a frame takes.
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Ok(max_frames)
    }

    /// Sets the scene up for the camera `above_ground` metres over the
    /// ground (its near plane, the sky's turn at the clock) and returns its
    /// view and the sun: what every frame of the camera draws with.
    fn aim(&mut self, flight: &Flight, above_ground: f64) -> (View, glam::DVec3) {
        self.scene.set_near(near_plane(above_ground));
        self.scene.set_sky_turn(planet_render::scene::sky_turn_at(self.body(), self.clock));
        self.scene.set_season(Some(planet_render::scene::season_at(self.clock)));
        (self.view(flight), sun_at(self.body(), self.clock))
    }

    fn renderer_frame_of_last(&self) -> u64 {
        self.renderer.frames_submitted() - 1
    }

    /// Attaches what the GPU has reported to the frames it belongs to.
    pub fn collect(&mut self) {
        for done in self.renderer.take_completed() {
            let Some((k, kind)) = self.logged.remove(&done.frame) else { continue };
            let log = &mut self.log[k];
            log.gpu = match (log.gpu, done.gpu) {
                (Some(a), Some(b)) => Some(PassTimes {
                    terrain_depth_ms: a.terrain_depth_ms + b.terrain_depth_ms,
                    terrain_shaded_ms: a.terrain_shaded_ms + b.terrain_shaded_ms,
                    sky_ms: a.sky_ms + b.sky_ms,
                    second_view_ms: a.second_view_ms + b.second_view_ms,
                }),
                (a, b) => a.or(b),
            };
            if kind == FrameKind::Camera {
                // The pixel counts and work counts are the camera body's
                // frame's: the hole count is its sky's.
                log.hole_pixels = Some(done.hole_pixels);
                log.no_data_pixels = Some(done.no_data_pixels);
                log.counts = done.counts;
            }
        }
    }

    /// Waits for the GPU and completes the log.
    pub fn finish(&mut self) -> Result<()> {
        self.renderer.finish()?;
        self.collect();
        Ok(())
    }

    /// Reads back the last frame (drawn with `ReadBack::Always`) to `path`.
    pub fn save_last_frame(&mut self, path: &Path) -> Result<()> {
        let image = self.renderer.take_image()?.context("the frame was not read back")?;
        self.collect();
        image.save_png(path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Whether the ground under the pixel `(x, y)` is measured, resampled
    /// from coarser measurements, or invented; "-" when the ray meets no
    /// ground within reach or the work budget; `None` with no ground at all.
    pub fn ground_under(&self, view: &View, x: f64, y: f64) -> Option<String> {
        let source = self.scene.base()?;
        // Coarse and cheap: the frame panel asks every few frames.
        let Some(g) = self.cursor_hit(view, x, y, 100.0, 2000) else { return Some("-".to_string()) };
        provenance_label(source.as_ref(), g)
    }

    /// What the panels show for the latest frame (`speed` is the window's).
    pub fn readout(&mut self, flight: &Flight, mode: &str, cursor: Option<&str>) -> crate::panels::Readout {
        let above_ground = flight.alt - self.ground_height(flight.lat, flight.lon);
        let last = self.log.last().cloned().unwrap_or_default();
        let gpu_ms = self.log.iter().rev().find_map(|l| l.gpu).map(|g| g.total_ms());
        let (w, h) = self.renderer.settings().size;
        let no_data_share = self
            .log
            .iter()
            .rev()
            .find_map(|l| l.no_data_pixels)
            .map(|p| f64::from(p) / (f64::from(w) * f64::from(h)).max(1.0));
        let s = last.report.statistics;
        crate::panels::Readout {
            body: self.body().name().to_string(),
            lat: flight.lat,
            lon: flight.lon,
            alt: flight.alt,
            above_ground,
            speed: 0.0,
            mode: mode.to_string(),
            clock: crate::hud::clock_line(self.body(), self.clock, flight.lon),
            cpu_ms: last.at.cpu_ms,
            gpu_ms,
            nodes_selected: s.nodes_selected,
            nodes_drawn: s.nodes_drawn,
            slots: s.resident_slots,
            uploads: s.uploads,
            pending: s.pending_requests,
            error_px: s.effective_screen_error_pixels,
            no_data_share,
            aim: None,
            cursor: cursor.map(str::to_string),
            status: None,
        }
    }

    /// Per-frame figures and their summary, as `--stats` writes them
    /// (`remote`: what reading remote packs cost).
    pub fn flight_log(&self, remote: Option<planet_remote::Transfers>) -> crate::stats::FlightLog {
        crate::stats::FlightLog {
            device: self.renderer.device_name().to_owned(),
            width: self.renderer.settings().size.0,
            height: self.renderer.settings().size.1,
            gpu_counts_available: self.renderer.counts_work(),
            summary: crate::stats::FlightSummary::of(&self.log, remote, self.source_notices.clone()),
            frames: self.log.iter().map(crate::stats::FrameStats::from).collect(),
            bodies: self.bodies.log(&self.scene),
        }
    }
}

/// One line on stderr when a frame's device was lost and made again.
pub fn report_lost_device(report: &FrameReport) {
    if let Some(during) = report.device_lost {
        planet_cli::report::message(&format!(
            "planet-view: the GPU device was lost during {during}; made it again and re-uploading the tiles the \
             cut needs (the cut, caches, layers, physics and the flight go on)"
        ));
    }
}

/// One line on stderr per tile the scene found unreadable (each stored
/// tile once): the run goes on, drawing the tile's ancestor there; and one
/// per notice about the source failing or answering again, returned too.
pub fn report_failures(scene: &mut TerrainScene) -> Vec<String> {
    let notices = scene.take_source_notices();
    for notice in &notices {
        planet_cli::report::message(&format!("planet-view: {notice}"));
    }
    for failure in scene.take_failures() {
        planet_cli::report::message(&format!(
            "planet-view: tile {} could not be read, drawing its nearest resident ancestor instead: {}",
            failure.tile, failure.message
        ));
    }
    notices
}

/// The `q` quantile (nearest rank) of `values`; `None` when empty.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// How `frames DIR` names frame `k`.
pub fn frame_path(dir: &Path, k: usize) -> std::path::PathBuf {
    dir.join(format!("frame_{k:05}.png"))
}

/// Read back every frame when frames are written; otherwise never.
pub fn read_back_for(frames: Option<&Path>) -> ReadBack {
    if frames.is_some() { ReadBack::Always } else { ReadBack::Never }
}

/// What the ground at `g` is made of, as the frame panel says it. Read at the
/// depth the camera stands on ([`GROUND_SPACING_M`]), where any detail
/// synthesized past the data is invented, and at the data depth beneath,
/// so invented detail over measured ground says both. (Reading the data
/// depth alone said MEASURED over synthesized relief.)
pub fn provenance_label(source: &dyn HeightSource, g: Geodetic) -> Option<String> {
    let body = source.body();
    let fine = depth_for_spacing(source, GROUND_SPACING_M);
    let data_depth = source.data_depth().unwrap_or(0).min(fine);
    let at = |depth: u8| source.tile_bounds(locate(body, g, depth).0).ok();
    let (here, beneath) = (at(fine)?.provenance, at(data_depth)?);
    // A void of a DEM its bake filled (and no pack below shows through):
    // the index says whether the tile holds one, its mask whether this is.
    let (tile, u, v) = locate(body, g, data_depth);
    if beneath.voids && source.tile(tile).ok()?.nearest_void(u, v) {
        return Some(match here {
            Provenance::Invented => "DETAIL INVENTED OVER A VOID THE BAKE FILLED".to_string(),
            _ => "A VOID OF THE DEM, FILLED BY THE BAKE".to_string(),
        });
    }
    Some(match (here, beneath.provenance) {
        (Provenance::Measured, _) => "MEASURED".to_string(),
        (Provenance::Resampled { from_depth }, _) => format!("MEASURED AT DEPTH {from_depth}, RESAMPLED"),
        (Provenance::Invented, Provenance::Measured) => format!("DETAIL INVENTED OVER DEPTH {data_depth} DATA"),
        (Provenance::Invented, Provenance::Resampled { from_depth }) => {
            format!("DETAIL INVENTED OVER DEPTH {from_depth} DATA")
        }
        (Provenance::Invented, Provenance::Invented) => "INVENTED".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::ground::{EllipsoidSource, GroundStack};

    /// One regression per answer: the detailed stack, the same without
    /// detail, and outside any pack.
    #[test]
    fn the_cursor_says_invented_wherever_detail_is_drawn() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 2).expect("pack");
        let packs = planet_cli::stack::PackOpener::default().open_packs(&[path]).expect("open");
        let stack = GroundStack::of_packs(packs).expect("one body").expect("one pack");
        let body = Body::earth();
        let land = Geodetic::from_degrees(-47.0, 39.0, 0.0);
        let label = |on: bool| provenance_label(&stack.with_detail(on), land).expect("a label");
        assert_eq!(label(true), "DETAIL INVENTED OVER DEPTH 2 DATA");
        assert_eq!(label(false), "MEASURED AT DEPTH 2, RESAMPLED");
        let bare = EllipsoidSource::new(body);
        assert_eq!(provenance_label(&bare, land).as_deref(), Some("INVENTED"));
    }
    /// Regression: past 128 tiles the camera's ground cache dropped every
    /// tile (the read-ahead filled it at two depths), so the next frame read
    /// the tile under the camera on the frame thread (3 ms past the data).
    #[test]
    fn a_full_ground_cache_keeps_the_tiles_nearest_the_camera() {
        let body = Body::earth();
        let source = EllipsoidSource::new(body.clone());
        let at = Geodetic::from_degrees(27.96, 86.93, 0.0);
        let depth = 12;
        let (under, _, _) = locate(&body, at, depth);
        let (finer, _, _) = locate(&body, at, depth + 1);
        let mut cache = GroundCache::default();
        // A 9 x 9 block around the camera's tile at both depths, and a far
        // shallower tile: 163 tiles.
        for (centre, _) in [(under, 0), (finer, 1)] {
            for dy in -4i64..=4 {
                for dx in -4i64..=4 {
                    let (x, y) = ((i64::from(centre.x()) + dx) as u32, (i64::from(centre.y()) + dy) as u32);
                    let tile = TileAddress::new(centre.face().index(), centre.depth(), x, y).expect("on the face");
                    cache.insert(source.tile(tile).expect("the ellipsoid always reads"));
                }
            }
        }
        cache.insert(source.tile(under.ancestor_at(3).expect("shallower")).expect("reads"));
        let dropped = evict_far(&mut cache, &body, at, depth);
        assert_eq!((cache.len(), dropped.len()), (96, 163 - 96));
        assert!(cache.contains(under) && cache.contains(finer), "the tiles under the camera stay");
        let ring = |t: TileAddress, c: TileAddress| c.x().abs_diff(t.x()).max(c.y().abs_diff(t.y()));
        for tile in &dropped {
            let centre = if tile.tile.depth() == depth { under } else { finer };
            assert!(tile.tile.depth() == 3 || ring(tile.tile, centre) >= 3, "dropped {} near the camera", tile.tile);
        }
    }
}
