//! planet-view's flags and the defaults they derive from the viewport
//! (node budget, slots) and the place (the first frame's instant).
//!
//! The key decision: a default that depends on another setting is a
//! function of the parsed flags here, not a clap default, so `--help`
//! states the rule and every mode (window, shot, path) derives the same
//! number from it.

use anyhow::Result;
use clap::Parser;
use planet_cli::args::{self, Orientation};
use planet_terrain::camera::Instant;
use planet_terrain::geo::body::Body;
use planet_terrain::lod::residency::ROOTS;
use planet_terrain::lod::viewport_budget;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "planet-view",
    about = "Draw a planet from orbit to the ground; headless to PNG with --shot",
    // The window's keys, from their one table (`crate::keys`).
    after_help = crate::keys::help_text()
)]
pub(crate) struct Cli {
    /// Packs to draw, as a stack: later packs lie over earlier ones inside
    /// their coverage, over the body's ellipsoid at 0 m (or the procedural
    /// ground with --procedural) where none covers. Without any, the body is
    /// drawn procedurally (--procedural) or as its ellipsoid.
    #[arg(value_name = "PACK")]
    pub(crate) packs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) remote: args::Remote,
    /// Body when there is no pack: earth, moon or mars [default: earth].
    /// With packs it must be theirs: a session draws one body.
    #[arg(long)]
    pub(crate) body: Option<String>,
    /// Exit with an error when a pack cannot be opened (missing, corrupt,
    /// unreachable). Without it the viewer says which pack and why and
    /// draws its body without that pack (the other packs, or the analytic
    /// ground: the ellipsoid, or --procedural).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Draw a pack-less body from the procedural height source with this seed.
    #[arg(long)]
    pub(crate) procedural: Option<u64>,
    /// Latitude in degrees, north positive.
    #[arg(long, default_value_t = 0.0, value_parser = args::latitude, allow_hyphen_values = true)]
    pub(crate) lat: f64,
    /// Longitude in degrees, east positive (-360..=360).
    #[arg(long, default_value_t = 0.0, value_parser = args::longitude, allow_hyphen_values = true)]
    pub(crate) lon: f64,
    /// Camera height above the ellipsoid, metres.
    #[arg(long, conflicts_with = "agl", value_parser = args::altitude, allow_hyphen_values = true)]
    pub(crate) alt: Option<f64>,
    /// Camera height above the ground beneath it, metres (positive).
    #[arg(long, value_parser = args::above_ground, allow_hyphen_values = true)]
    pub(crate) agl: Option<f64>,
    #[command(flatten)]
    pub(crate) orientation: Orientation,
    /// Vertical field of view, degrees (1..=170).
    #[arg(long, default_value_t = 50.0, value_parser = args::field_of_view)]
    pub(crate) fov: f64,
    /// Write the frame here (PNG) and exit.
    #[arg(long)]
    pub(crate) shot: Option<PathBuf>,
    /// Fly a scripted camera path: {"keyframes": [{"t", "lat", "lon", "alt", "heading", "pitch"}, ...]}.
    #[arg(long, conflicts_with = "shot")]
    pub(crate) path: Option<PathBuf>,
    /// Write every frame as DIR/frame_NNNNN.png (headless without a display).
    #[arg(long, conflicts_with = "shot")]
    pub(crate) frames: Option<PathBuf>,
    /// Frames per second of path time (paths advance by fixed steps), in (0, 1000].
    #[arg(long, default_value_t = 30.0, value_parser = args::frame_rate)]
    pub(crate) fps: f64,
    /// Never open a window, even where there is a display.
    #[arg(long)]
    pub(crate) headless: bool,
    /// Present without waiting for vertical sync.
    #[arg(long)]
    pub(crate) no_vsync: bool,
    /// Draw the panels (default: on in a window, off in headless frames;
    /// never in --shot).
    #[arg(long, conflicts_with = "no_hud")]
    pub(crate) hud: bool,
    /// Leave the panels off, in a window too (H shows them).
    #[arg(long)]
    pub(crate) no_hud: bool,
    /// In a window with --path: close when the path ends (implied by --frames).
    #[arg(long)]
    pub(crate) exit_at_end: bool,
    /// A scene of layers (craters, pads, ...) to draw over the ground; in a
    /// window, also where Ctrl+S saves edits (created if missing).
    #[arg(long)]
    pub(crate) scene: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) detail: args::Detail,
    /// Test hook: input at given frames, as `FRAME:ACTION[@X,Y];...` with
    /// ACTION a bound key by winit's name (K, F12, DELETE, CTRL+Z), an
    /// action by its name (UNDO, REDO, SAVE, BALL, CRATE, SCREENSHOT; see
    /// `keys.rs`) or CLICK, and X,Y the cursor in pixels (headless paths
    /// take BALL and CRATE).
    #[arg(long, hide = true)]
    pub(crate) script: Option<String>,
    /// Test hook: at frame N ask the window for a new size, as N:WxH.
    #[arg(long, hide = true)]
    pub(crate) resize_at: Option<String>,
    /// Viewport, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x720", value_parser = args::size)]
    pub(crate) size: (u32, u32),
    /// Most nodes in the cut: at least the six roots; at most what the
    /// device's storage buffers and memory hold (checked at start). Default:
    /// from the viewport, 5,632 at 1920x1080 scaled by the square root of its
    /// pixels (at least 2,048), or the slots less the six roots when fewer, so the
    /// cut can settle (a cut with more drawn nodes than slots streams
    /// forever, its nodes on ancestors).
    #[arg(long, value_parser = |t: &str| count(t, ROOTS as u64..=u64::from(u32::MAX), "the node budget"))]
    pub(crate) budget: Option<u64>,
    /// Target screen-space error, pixels.
    #[arg(long, default_value_t = 2.0, value_parser = args::screen_error)]
    pub(crate) sse: f64,
    /// A second view, LAT,LON,ALT,HEADING,PITCH (degrees; metres above the
    /// ellipsoid), drawn in every frame with the first: beside it in --shot
    /// and --frames pictures (twice --size wide), as an inset in a window.
    /// It has its own cut and error target; both share the tile slots.
    #[arg(long, value_parser = crate::views::SecondCamera::parse, allow_hyphen_values = true)]
    pub(crate) view2: Option<crate::views::SecondCamera>,
    /// The second view's target screen-space error, pixels [default: --sse].
    #[arg(long, requires = "view2", value_parser = args::screen_error)]
    pub(crate) sse2: Option<f64>,
    /// The session's bodies besides the camera's (from the packs, --body
    /// and the path), once opened: their slots come out of the defaults.
    #[arg(skip)]
    pub(crate) other_bodies: u64,
    /// Write per-frame statistics as JSON here.
    #[arg(long)]
    pub(crate) stats: Option<PathBuf>,
    /// Write a --shot that could not finish (the frame cap reached while
    /// tiles stream, tiles that could not be read) and exit 0; without it
    /// such a shot writes no picture, only --stats, and exits 1.
    #[arg(long, requires = "shot")]
    pub(crate) accept_incomplete: bool,
    /// Stop after this many frames even if tiles are still streaming.
    #[arg(long, default_value_t = 240, value_parser = |t: &str| count(t, 1..=1_000_000, "the frame cap"))]
    pub(crate) max_frames: u64,
    /// Tile uploads per frame: at least one; at most what the staging
    /// memory holds (checked at start).
    #[arg(long, default_value_t = 64, value_parser = |t: &str| count(t, 1..=u64::from(u32::MAX), "uploads per frame"))]
    pub(crate) uploads: u64,
    /// Resident tile slots on the GPU: at least the six roots plus four per
    /// frame in flight (14); at most what half the device's memory holds
    /// (checked at start). Default: the viewport's node budget (each view's,
    /// with --view2) and the six roots, at most 8,192 (about 1 GB of slot
    /// images).
    #[arg(long, value_parser = |t: &str| count(t, MIN_SLOTS..=u64::from(u32::MAX), "tile slots"))]
    pub(crate) slots: Option<u64>,
    /// Where tiles are produced: `background` (worker threads; a frame
    /// never waits for a tile, a node draws its ancestor meanwhile) or
    /// `frame` (inside the frame that uploads them, so a sequence of
    /// frames is the same on every run). Default: `frame` when writing
    /// frames (--shot, --frames), `background` otherwise.
    #[arg(long, value_parser = ["background", "frame"])]
    pub(crate) loading: Option<String>,
    /// Turn on the Vulkan validation layers; any message fails the run.
    #[arg(long)]
    pub(crate) validation: bool,
    /// Leave the GPU work-counting queries off (as on a device without
    /// them): `--stats` then reports the counts as unavailable.
    #[arg(long)]
    pub(crate) no_gpu_counts: bool,
    /// The instant drawn (UTC, RFC 3339: 2026-06-21T06:00:00Z); a path's
    /// keyframe time adds to it, and in a window the clock runs from it.
    /// Default: 10:00 local solar time at the starting longitude on
    /// 2026-03-20 (the equinox: every latitude but the poles lit).
    #[arg(long, value_parser = args::utc_time)]
    pub(crate) time: Option<Instant>,
    /// Seconds of sky time per second of path (or window) time; 0 holds
    /// the sun still.
    #[arg(long, default_value_t = 1.0, value_parser = args::time_rate, allow_hyphen_values = true)]
    pub(crate) time_rate: f64,
    /// Cast shadows and ambient occlusion from the ground's horizon map:
    /// `on`, `off` (the ground lit by its slope alone, for comparison) or
    /// `mask` (white where the sun is seen, black where the ground hides it).
    #[arg(long, default_value = "on", value_parser = ["on", "off", "mask"])]
    pub(crate) shadows: String,
}

/// The instant of the first frame: `--time`, or the demo default (see the flag).
pub(crate) fn start_time(cli: &Cli, body: &Body, lon: f64) -> Instant {
    let equinox = Instant::from_civil(2026, 3, 20, 12, 0, 0.0);
    cli.time.unwrap_or_else(|| planet_terrain::camera::sun::instant_at_local_time(body, equinox, lon, 10.0))
}

/// Frames the renderer keeps in flight.
pub(crate) const FRAMES_IN_FLIGHT: u64 = 2;
/// The most slots a default asks for (about 1 GB of slot images): a 4K
/// viewport's budget is held to what they keep resident.
pub(crate) const DEFAULT_MAX_SLOTS: u64 = 8192;

/// Views each frame draws: 1, or 2 with `--view2`.
pub(crate) fn views(cli: &Cli) -> u64 {
    1 + u64::from(cli.view2.is_some())
}

/// The slots: `--slots`, or the budget of each view of `size`, the roots
/// and each other body's share, at most 8,192.
pub(crate) fn slots(cli: &Cli, size: (u32, u32)) -> u64 {
    cli.slots.unwrap_or_else(|| {
        let others = cli.other_bodies * u64::from(crate::system::OTHER_BODY_SLOTS);
        (views(cli) * viewport_budget(size) + ROOTS as u64 + others).min(DEFAULT_MAX_SLOTS)
    })
}

/// Each view's node budget: `--budget`, or by default the viewport's held
/// to what the camera body's slots can keep resident for every view beside
/// the six pinned roots.
pub(crate) fn node_budget(cli: &Cli, size: (u32, u32)) -> u64 {
    cli.budget.unwrap_or_else(|| {
        let slots = slots(cli, size);
        let others = cli.other_bodies * u64::from(crate::system::other_body_slots(slots as u32));
        let camera = slots.saturating_sub(others).saturating_sub(ROOTS as u64);
        viewport_budget(size).min(camera / views(cli)).max(1)
    })
}

/// The fewest slots streaming needs (`planet_terrain::lod::min_slots`).
pub(crate) const MIN_SLOTS: u64 = (ROOTS + 4 * FRAMES_IN_FLIGHT as usize) as u64;

pub(crate) fn count(text: &str, range: std::ops::RangeInclusive<u64>, what: &str) -> Result<u64, String> {
    args::count_in(text, range, what)
}

impl Cli {
    /// Refuses, before any work, outputs (`--shot`, `--stats`) that name an
    /// input (a pack, `--path`, `--scene`) or each other (`planet_cli::paths`).
    pub(crate) fn check_paths(&self) -> Result<()> {
        use planet_cli::paths::named;
        let mut inputs: Vec<_> = self.packs.iter().map(|p| named("PACK", p)).collect();
        inputs.extend(self.path.as_deref().map(|p| named("--path", p)));
        inputs.extend(self.scene.as_deref().map(|p| named("--scene", p)));
        let outputs: Vec<_> = [("--shot", &self.shot), ("--stats", &self.stats)]
            .into_iter()
            .filter_map(|(flag, p)| p.as_deref().map(|p| named(flag, p)))
            .collect();
        planet_cli::paths::check_paths(&inputs, &outputs).map_err(anyhow::Error::msg)
    }
}

/// Every flag and argument `planet-view --help` lists says what it does.
#[cfg(test)]
#[test]
fn every_argument_says_what_it_does() {
    planet_cli::args::assert_every_argument_described(&<Cli as clap::CommandFactory>::command());
}
