//! What `--stats` writes: a shot's statistics ([`ShotStats`]) and a run's
//! per-frame log with its summary ([`FlightLog`]), as typed structs.
//!
//! The key decision: the structs are the schema. The field names are the
//! keys the flight tests, the benches' scripts and PERFORMANCE.md's commands
//! read, built in one place from the renderer's typed reports, so a figure
//! cannot be spelt one way in the shot and another in the log; and the
//! summary line the run prints reads the same fields, not keys of a map.

use planet_remote::Transfers;
use planet_render::scene::{FrameReport, SecondViewReport};
use planet_render::{PassTimes, Renderer, WorkCounts};
use serde::Serialize;

use crate::bodies::BodyLog;
use crate::gpu_counts::GpuCounts;
use crate::session::{FrameLog, percentile};
use crate::views::SecondViewer;

/// `--stats` of a `--shot`: the last frame's figures.
#[derive(Debug, Serialize)]
pub struct ShotStats {
    pub device: String,
    pub width: u32,
    pub height: u32,
    /// The body the camera is at, and the others the picture shows.
    pub body: String,
    pub other_bodies: Vec<String>,
    /// Where the camera stood (degrees; metres above the ellipsoid): given,
    /// or framing a regional pack when no place was.
    pub camera_lat: f64,
    pub camera_lon: f64,
    pub camera_alt_m: f64,
    pub frames_rendered: u32,
    /// The picture is the one asked for: nothing streams still, and no
    /// tile was given up (its data unreadable, its source unreachable).
    pub complete: bool,
    /// Why it is not, in words (empty when complete).
    pub unfinished: Vec<String>,
    pub nodes_selected: usize,
    pub nodes_culled: usize,
    pub nodes_drawn: usize,
    pub nodes_dropped: usize,
    pub nodes_on_ancestors: usize,
    pub effective_screen_error_pixels: f64,
    pub selection_cpu_ms: f64,
    pub frame_cpu_ms: f64,
    pub resident_slots: usize,
    pub uploads: usize,
    pub upload_bytes: usize,
    pub pending_requests: usize,
    pub covers_body: bool,
    pub failed_tiles: usize,
    pub tiles_in_flight: usize,
    pub retrying_tiles: usize,
    pub unreachable_tiles: usize,
    pub source_failing: bool,
    pub analytic_body_drawn: bool,
    /// Pixels of ground no pack measured (drawn as no data: a neutral grey
    /// under a graticule), and their share of the picture; `None` where
    /// the frame's counters were not read back.
    pub no_data_pixels: Option<u32>,
    pub no_data_share: Option<f64>,
    pub triangles: u64,
    pub draw_calls: ShotDrawCalls,
    pub gpu_ms: Option<GpuMs>,
    pub horizon_map: HorizonMapStats,
    pub remote: Option<Transfers>,
    pub gpu_counts_available: bool,
    pub gpu_counts: Option<GpuCounts>,
    /// The second view (`--view2`), `null` without one. The figures above
    /// are the main view's cut; residency figures (slots, uploads, pending)
    /// and the pixel counts are the frame's, both views together.
    pub view2: Option<SecondViewStats>,
}

/// What the second view's cut reached.
#[derive(Clone, Debug, Serialize)]
pub struct SecondViewStats {
    pub lat: f64,
    pub lon: f64,
    pub alt_m: f64,
    pub above_ground_m: Option<f64>,
    pub target_error_px: f64,
    pub effective_screen_error_pixels: f64,
    pub nodes_selected: usize,
    pub nodes_drawn: usize,
    pub nodes_dropped: usize,
    pub nodes_on_ancestors: usize,
}

impl SecondViewStats {
    pub fn new(viewer: &SecondViewer, report: &SecondViewReport) -> SecondViewStats {
        let s = &report.statistics;
        SecondViewStats {
            lat: viewer.camera.lat,
            lon: viewer.camera.lon,
            alt_m: viewer.camera.alt,
            above_ground_m: viewer.above_ground_m(),
            target_error_px: viewer.target_error_px,
            effective_screen_error_pixels: s.effective_screen_error_pixels,
            nodes_selected: s.nodes_selected,
            nodes_drawn: s.nodes_drawn,
            nodes_dropped: s.nodes_dropped,
            nodes_on_ancestors: report.nodes_on_ancestors,
        }
    }
}

/// What the shot's frame drew, per pass.
#[derive(Debug, Serialize)]
pub struct ShotDrawCalls {
    pub terrain_depth: u32,
    pub terrain_shaded: u32,
    pub analytic_body: u32,
    pub sky: u32,
    pub ui: u32,
}

/// GPU time per pass and in all.
#[derive(Debug, Serialize)]
pub struct GpuMs {
    pub terrain_depth: f64,
    pub terrain_shaded: f64,
    pub sky: f64,
    /// Every pass of the second view (0 without one).
    pub second_view: f64,
    pub total: f64,
}

impl From<PassTimes> for GpuMs {
    fn from(g: PassTimes) -> GpuMs {
        GpuMs {
            terrain_depth: g.terrain_depth_ms,
            terrain_shaded: g.terrain_shaded_ms,
            sky: g.sky_ms,
            second_view: g.second_view_ms,
            total: g.total_ms(),
        }
    }
}

/// How often the shadow and openness map was built, and the last build's time.
#[derive(Debug, Serialize)]
pub struct HorizonMapStats {
    pub builds: usize,
    pub last_build_ms: f64,
}

/// What a shot's statistics are made from besides its last frame.
pub struct ShotContext<'a> {
    pub renderer: &'a Renderer,
    pub size: (u32, u32),
    /// The camera: latitude, longitude (degrees), height (m).
    pub camera: (f64, f64, f64),
    /// Why the picture is not the one asked for ([`unfinished`]).
    pub unfinished: &'a [String],
    pub frames: u32,
    pub horizon_map: HorizonMapStats,
    pub remote: Option<Transfers>,
    /// The shot frame's no-data pixels (`CompletedFrame::no_data_pixels`).
    pub no_data_pixels: Option<u32>,
}

impl ShotStats {
    pub fn new(context: ShotContext<'_>, report: &FrameReport, counts: Option<&WorkCounts>) -> ShotStats {
        let s = &report.statistics;
        let d = &report.draw_calls;
        ShotStats {
            device: context.renderer.device_name().to_owned(),
            width: context.size.0,
            height: context.size.1,
            body: String::new(),
            other_bodies: Vec::new(),
            camera_lat: context.camera.0,
            camera_lon: context.camera.1,
            camera_alt_m: context.camera.2,
            frames_rendered: context.frames,
            complete: context.unfinished.is_empty(),
            unfinished: context.unfinished.to_vec(),
            nodes_selected: s.nodes_selected,
            nodes_culled: s.nodes_culled,
            nodes_drawn: s.nodes_drawn,
            nodes_dropped: s.nodes_dropped,
            nodes_on_ancestors: report.nodes_on_ancestors,
            effective_screen_error_pixels: s.effective_screen_error_pixels,
            selection_cpu_ms: s.selection_cpu_ms,
            frame_cpu_ms: report.host_ms,
            resident_slots: s.resident_slots,
            uploads: s.uploads,
            upload_bytes: s.upload_bytes,
            pending_requests: s.pending_requests,
            covers_body: s.covers_body,
            failed_tiles: s.failed_tiles,
            tiles_in_flight: s.tiles_in_flight,
            retrying_tiles: s.retrying_tiles,
            unreachable_tiles: s.unreachable_tiles,
            source_failing: s.source_failing,
            analytic_body_drawn: report.analytic_body,
            no_data_pixels: context.no_data_pixels,
            no_data_share: context
                .no_data_pixels
                .map(|p| f64::from(p) / (f64::from(context.size.0) * f64::from(context.size.1)).max(1.0)),
            triangles: report.triangles,
            draw_calls: ShotDrawCalls {
                terrain_depth: d.terrain_depth,
                terrain_shaded: d.terrain_shaded,
                analytic_body: d.body,
                sky: d.sky,
                ui: d.ui,
            },
            gpu_ms: report.gpu.map(GpuMs::from),
            horizon_map: context.horizon_map,
            remote: context.remote,
            gpu_counts_available: context.renderer.counts_work(),
            gpu_counts: GpuCounts::of(counts, crate::gpu_counts::instances(report)),
            view2: None,
        }
    }
}

/// Why the picture of `report`'s frame is not the one asked for, in
/// words; empty when it is.
pub fn unfinished(report: &FrameReport) -> Vec<String> {
    let s = &report.statistics;
    let mut why = Vec::new();
    if !report.complete {
        let on_ancestors = report.nodes_on_ancestors + report.second.map_or(0, |s| s.nodes_on_ancestors);
        why.push(format!(
            "the frame cap was reached with {} tiles still to stream and {on_ancestors} nodes on ancestors",
            s.pending_requests + s.retrying_tiles,
        ));
    }
    if s.unreachable_tiles > 0 {
        why.push(format!(
            "{} tiles could not be read from their source, which is failing or slow",
            s.unreachable_tiles
        ));
    }
    if s.failed_tiles > 0 {
        why.push(format!("{} tiles have unreadable data", s.failed_tiles));
    }
    why
}

/// `--stats` of a run (a path, a window): every frame and a summary.
#[derive(Debug, Serialize)]
pub struct FlightLog {
    pub device: String,
    pub width: u32,
    pub height: u32,
    pub gpu_counts_available: bool,
    pub summary: FlightSummary,
    pub frames: Vec<FrameStats>,
    pub bodies: Vec<BodyLog>,
}

/// The run in a few figures.
#[derive(Debug, Serialize)]
pub struct FlightSummary {
    pub frames: usize,
    pub cpu_ms_median: Option<f64>,
    pub cpu_ms_p99: Option<f64>,
    pub thread_cpu_ms_median: Option<f64>,
    pub thread_cpu_ms_p99: Option<f64>,
    pub gpu_ms_median: Option<f64>,
    pub gpu_ms_p99: Option<f64>,
    pub peak_uploads: usize,
    pub min_above_ground_m: f64,
    pub failed_tiles: usize,
    /// What was said about the ground's source failing and answering
    /// again, in order.
    pub source_notices: Vec<String>,
    pub hole_pixels_total: u64,
    /// What reading remote packs cost (`null` when none was remote).
    pub remote: Option<Transfers>,
}

impl FlightSummary {
    pub fn of(log: &[FrameLog], remote: Option<Transfers>, source_notices: Vec<String>) -> FlightSummary {
        let cpu: Vec<f64> = log.iter().map(|l| l.at.cpu_ms).collect();
        let thread_cpu: Vec<f64> = log.iter().map(|l| l.at.thread_cpu_ms).collect();
        let gpu: Vec<f64> = log.iter().filter_map(|l| l.gpu.map(|g| g.total_ms())).collect();
        FlightSummary {
            frames: log.len(),
            cpu_ms_median: percentile(&cpu, 0.5),
            cpu_ms_p99: percentile(&cpu, 0.99),
            thread_cpu_ms_median: percentile(&thread_cpu, 0.5),
            thread_cpu_ms_p99: percentile(&thread_cpu, 0.99),
            gpu_ms_median: percentile(&gpu, 0.5),
            gpu_ms_p99: percentile(&gpu, 0.99),
            peak_uploads: log.iter().map(|l| l.report.statistics.uploads).max().unwrap_or(0),
            min_above_ground_m: log.iter().map(|l| l.at.above_ground_m).fold(f64::INFINITY, f64::min),
            failed_tiles: log.last().map_or(0, |l| l.report.statistics.failed_tiles),
            source_notices,
            hole_pixels_total: log.iter().filter_map(|l| l.hole_pixels).map(u64::from).sum(),
            remote,
        }
    }
}

/// Where and when a logged frame was, and what it cost the host: kept in
/// the session's log and written flat into each frame's `--stats` entry.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameTiming {
    pub frame: u64,
    /// The body the camera is at (nearest), whose ground `lat`, `lon`,
    /// `alt` and `above_ground_m` are on.
    pub body: String,
    /// The other bodies drawn in the frame (in view), far ones first.
    pub other_bodies: Vec<String>,
    pub t: f64,
    pub lat: f64,
    pub lon: f64,
    pub alt: f64,
    pub above_ground_m: f64,
    /// Wall-clock seconds from the session's start to the frame's end: what
    /// background loading had to work in (time to target after a jump).
    pub wall_s: f64,
    pub cpu_ms: f64,
    pub thread_cpu_ms: f64,
}

/// One frame of a run's log.
#[derive(Debug, Serialize)]
pub struct FrameStats {
    #[serde(flatten)]
    pub at: FrameTiming,
    pub thread_cpu_phases_ms: PhasesMs,
    pub upload_budget: usize,
    pub bounds_from_source: usize,
    pub selection_lagging: bool,
    pub selection_wait_ms: f64,
    pub gpu_ms: Option<f64>,
    pub hole_pixels: Option<u32>,
    /// Pixels of ground no pack measured, drawn as no data.
    pub no_data_pixels: Option<u32>,
    pub gpu_counts: Option<GpuCounts>,
    pub nodes_selected: usize,
    pub nodes_drawn: usize,
    pub effective_screen_error_pixels: f64,
    pub uploads: usize,
    pub pending_requests: usize,
    pub covers_body: bool,
    pub failed_tiles: usize,
    pub tiles_in_flight: usize,
    pub retrying_tiles: usize,
    pub unreachable_tiles: usize,
    pub source_failing: bool,
    pub analytic_body_drawn: bool,
    pub presented: bool,
    /// The GPU device was lost during this (what it was doing) and made
    /// again before the frame was drawn; `None` on a frame that kept it.
    pub device_lost: Option<&'static str>,
    pub draw_calls: FrameDrawCalls,
    /// The second view's cut (`--view2`), `null` without one; the figures
    /// above are the main view's, residency and pixel counts the frame's.
    pub view2: Option<SecondViewFrame>,
}

/// What a logged frame's second view reached.
#[derive(Debug, Serialize)]
pub struct SecondViewFrame {
    pub nodes_selected: usize,
    pub nodes_drawn: usize,
    pub nodes_dropped: usize,
    pub nodes_on_ancestors: usize,
    pub effective_screen_error_pixels: f64,
}

/// The frame thread's CPU time by phase.
#[derive(Debug, Serialize)]
pub struct PhasesMs {
    pub ground: f64,
    pub selection: f64,
    pub residency: f64,
    pub records: f64,
    pub render: f64,
    pub staging: f64,
}

/// What a logged frame drew of the terrain and the dropped bodies.
#[derive(Debug, Serialize)]
pub struct FrameDrawCalls {
    pub terrain_depth: u32,
    pub terrain_shaded: u32,
    pub bodies: u32,
}

impl From<&FrameLog> for FrameStats {
    fn from(l: &FrameLog) -> FrameStats {
        let s = &l.report.statistics;
        let p = &l.report.phases;
        let d = &l.report.draw_calls;
        FrameStats {
            at: l.at.clone(),
            thread_cpu_phases_ms: PhasesMs {
                ground: l.ground_ms,
                selection: p.selection_ms,
                residency: p.residency_ms,
                records: p.records_ms,
                render: p.render_ms,
                staging: p.staging_ms,
            },
            upload_budget: p.upload_budget,
            bounds_from_source: p.bounds_from_source,
            selection_lagging: p.selection_lagging,
            selection_wait_ms: p.selection_wait_ms,
            gpu_ms: l.gpu.map(|g| g.total_ms()),
            hole_pixels: l.hole_pixels,
            no_data_pixels: l.no_data_pixels,
            gpu_counts: GpuCounts::of(l.counts.as_ref(), crate::gpu_counts::instances(&l.report)),
            nodes_selected: s.nodes_selected,
            nodes_drawn: s.nodes_drawn,
            effective_screen_error_pixels: s.effective_screen_error_pixels,
            uploads: s.uploads,
            pending_requests: s.pending_requests,
            covers_body: s.covers_body,
            failed_tiles: s.failed_tiles,
            tiles_in_flight: s.tiles_in_flight,
            retrying_tiles: s.retrying_tiles,
            unreachable_tiles: s.unreachable_tiles,
            source_failing: s.source_failing,
            analytic_body_drawn: l.report.analytic_body,
            presented: l.report.presented,
            device_lost: l.report.device_lost,
            draw_calls: FrameDrawCalls {
                terrain_depth: d.terrain_depth,
                terrain_shaded: d.terrain_shaded,
                bodies: d.bodies,
            },
            view2: l.report.second.map(|v| SecondViewFrame {
                nodes_selected: v.statistics.nodes_selected,
                nodes_drawn: v.statistics.nodes_drawn,
                nodes_dropped: v.statistics.nodes_dropped,
                nodes_on_ancestors: v.nodes_on_ancestors,
                effective_screen_error_pixels: v.statistics.effective_screen_error_pixels,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys a frame of `--stats` has: the flight tests, the benches'
    /// scripts and PERFORMANCE.md's commands read them by name, so a
    /// renamed field must fail here first. The frame's place and timing
    /// sit flat beside its figures.
    #[test]
    fn a_logged_frame_writes_the_keys_its_readers_read() {
        let frame = serde_json::to_value(FrameStats::from(&FrameLog::default())).expect("serialises");
        let mut keys: Vec<&str> = frame.as_object().expect("an object").keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "above_ground_m",
                "alt",
                "analytic_body_drawn",
                "body",
                "bounds_from_source",
                "covers_body",
                "cpu_ms",
                "device_lost",
                "draw_calls",
                "effective_screen_error_pixels",
                "failed_tiles",
                "frame",
                "gpu_counts",
                "gpu_ms",
                "hole_pixels",
                "lat",
                "lon",
                "no_data_pixels",
                "nodes_drawn",
                "nodes_selected",
                "other_bodies",
                "pending_requests",
                "presented",
                "retrying_tiles",
                "selection_lagging",
                "selection_wait_ms",
                "source_failing",
                "t",
                "thread_cpu_ms",
                "thread_cpu_phases_ms",
                "tiles_in_flight",
                "unreachable_tiles",
                "upload_budget",
                "uploads",
                "view2",
                "wall_s",
            ]
        );
        let phases = frame["thread_cpu_phases_ms"].as_object().expect("phases");
        for phase in ["ground", "selection", "residency", "records", "render", "staging"] {
            assert!(phases.contains_key(phase), "{phase}");
        }
    }
}
