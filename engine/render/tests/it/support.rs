//! Shared fixtures of the render tests: a renderer on lavapipe with the
//! validation layers on, small test packs made here, height sources with
//! known shapes, and the golden-image check.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::DVec3;
use planet_render::scene::{SceneSettings, TerrainScene, sun_for};
use planet_render::{GpuSettings, Renderer, RendererSettings, RgbaImage};
use planet_terrain::camera::View;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::{
    HeightSource, PackSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions,
};
use planet_terrain::lod::SelectionSettings;
use planet_terrain::pack::Pack;

/// Forces Mesa's lavapipe, so results do not depend on the machine's GPU.
pub fn use_lavapipe() {
    const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    if std::env::var_os("PLANET_TEST_ANY_GPU").is_none() {
        set_driver(LAVAPIPE);
    }
}

#[allow(unsafe_code)]
fn set_driver(path: &str) {
    // SAFETY: every test calls this first and with the same value; nothing
    // reads the environment concurrently in a way that could observe a torn
    // write (the loader reads it later, at instance creation).
    unsafe { std::env::set_var("VK_DRIVER_FILES", path) };
}

pub fn renderer(size: (u32, u32), slots: u32) -> Renderer {
    use_lavapipe();
    Renderer::new(RendererSettings {
        size,
        slots,
        max_nodes: 4096,
        frames_in_flight: 2,
        uploads_per_frame: 64,
        gpu: GpuSettings { validation: true, ..GpuSettings::default() },
    })
    .expect("a Vulkan device (lavapipe) with validation layers")
}

/// Fails the test on any validation message.
pub fn assert_no_validation_messages(renderer: &Renderer) {
    let messages = renderer.validation_messages();
    assert!(messages.is_empty(), "{} validation message(s):\n{}", messages.len(), messages.join("\n"));
}

/// The shared test pack (see [`write_procedural_pack`]), made once per
/// target directory: each test process writes its own copy in a private
/// directory and renames it into place, so concurrent tests never see a
/// half-written pack.
pub fn procedural_pack(depth: u8) -> PathBuf {
    let dir = scratch_dir();
    let shared = dir.join(format!("procedural-earth-{depth}.planetpack"));
    if Pack::open(&shared).is_ok() {
        return shared;
    }
    let private = tempfile::tempdir_in(&dir).expect("temp dir");
    let written = write_procedural_pack(private.path(), depth);
    std::fs::rename(&written, &shared).expect("move the pack into place");
    shared
}

/// The procedural test pack (`planet_terrain::testing`), in `dir`.
pub fn write_procedural_pack(dir: &Path, depth: u8) -> PathBuf {
    let path = dir.join(format!("procedural-earth-{depth}.planetpack"));
    planet_terrain::testing::write_procedural_pack(&path, depth).expect("write the test pack");
    path
}

pub fn pack_source(path: &Path) -> Arc<dyn HeightSource> {
    Arc::new(PackSource::new(Arc::new(Pack::open(path).expect("open test pack"))))
}

/// A range of parallel ridges around a point: 1.8 km high, 8 km apart,
/// running north-east, over a plain at 300 m. Closed form, so its error
/// bound is exact: a sinusoid of amplitude `a` and wavelength `l` sampled
/// every `s` departs from its linear interpolation by at most
/// `a (pi s / l)^2 / 2`.
#[derive(Debug)]
pub struct RidgeSource {
    pub body: Body,
    pub centre: DVec3,
}

const RIDGE_AMPLITUDE: f64 = 900.0;
const RIDGE_WAVELENGTH: f64 = 8_000.0;

impl RidgeSource {
    pub fn new(lat: f64, lon: f64) -> RidgeSource {
        let body = Body::earth();
        let centre = body.ellipsoid().geodetic_to_direction(Geodetic::from_degrees(lat, lon, 0.0));
        RidgeSource { body, centre }
    }

    pub fn elevation(&self, d: DVec3) -> f64 {
        let radius = self.body.ellipsoid().radii().x;
        let offset = (d - self.centre) * radius;
        let east = DVec3::Z.cross(self.centre).normalize();
        let north = self.centre.cross(east);
        let (x, y) = (offset.dot(east), offset.dot(north));
        let across = (x - y) / 2f64.sqrt();
        let along = (x + y) / 2f64.sqrt();
        let envelope = (-(x * x + y * y) / (2.0 * 40_000.0f64.powi(2))).exp();
        let ridge = 1.0 - (std::f64::consts::TAU * across / RIDGE_WAVELENGTH).cos();
        let saddles = 0.8 + 0.2 * (std::f64::consts::TAU * along / (2.7 * RIDGE_WAVELENGTH)).cos();
        300.0 + RIDGE_AMPLITUDE * ridge * saddles * envelope
    }
}

impl HeightSource for RidgeSource {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.body
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let heights = sample_directions(tile).iter().map(|&d| self.elevation(d) as f32).collect();
        Ok(SourceTile { tile, heights, classes: None, colour: None, provenance: Provenance::Invented, voids: None })
    }

    fn bounds(&self, tile: TileAddress, _reads: planet_terrain::ground::Reads) -> Result<TileBounds, SourceError> {
        let lattice_spacing = 4.0 * self.body.sample_spacing_m(tile.depth());
        let curvature =
            2.0 * RIDGE_AMPLITUDE * (std::f64::consts::PI * lattice_spacing / RIDGE_WAVELENGTH).powi(2) / 2.0;
        Ok(TileBounds {
            min_elevation: 300.0,
            max_elevation: 300.0 + 2.0 * RIDGE_AMPLITUDE,
            geometric_error: curvature.min(2.0 * RIDGE_AMPLITUDE),
            provenance: Provenance::Invented,
            voids: false,
        })
    }

    fn data_depth(&self) -> Option<u8> {
        None
    }

    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}

/// A camera at a place, as planet-view places it.
pub fn view_at(body: &Body, lat: f64, lon: f64, height: f64, heading: f64, pitch: f64, size: (u32, u32)) -> View {
    View::looking_from(body, Geodetic::from_degrees(lat, lon, height), heading, pitch, 50f64.to_radians(), size)
}

pub struct Shot {
    pub report: planet_render::scene::FrameReport,
    pub image: RgbaImage,
    pub frames: u32,
}

/// Pixels that differ at all between two pictures of one size.
pub fn differing_pixels(a: &RgbaImage, b: &RgbaImage) -> usize {
    a.pixels.chunks_exact(4).zip(b.pixels.chunks_exact(4)).filter(|(p, q)| p != q).count()
}

/// Renders `view` until resident (or `max_frames`), checks validation.
pub fn shoot(
    renderer: &mut Renderer,
    body: Body,
    source: Option<Arc<dyn HeightSource>>,
    view: &View,
    settings: SceneSettings,
    max_frames: u32,
) -> Shot {
    let mut scene = TerrainScene::new(body.clone(), source, renderer, settings);
    let sun = sun_for(&body, view);
    let (report, image, frames) = scene.render_until_resident(renderer, view, sun, max_frames).expect("render");
    assert_no_validation_messages(renderer);
    Shot { report, image, frames }
}

/// Writes `image` for a reviewer to `<scratch>/<area>/<name>.png`: the
/// picture a statistic was taken from.
pub fn save_for_review(area: &str, name: &str, image: &RgbaImage) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(area);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    image.save_png(&dir.join(format!("{name}.png"))).expect("png");
}

pub fn settings(budget: usize, sse: f64, near_m: f64) -> SceneSettings {
    SceneSettings {
        selection: SelectionSettings { target_error_px: sse, node_budget: budget, near_m },
        uploads_per_frame: 64,
        ..SceneSettings::default()
    }
}

/// How far an image may drift from its golden and still pass.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// A channel differing by more than this counts the pixel as different.
    pub channel: u8,
    /// Fraction of pixels allowed to differ.
    pub pixels: f64,
}

/// Lavapipe's output is bit-identical run to run; the tolerance absorbs
/// other Mesa versions and real GPUs, not noise.
pub const GOLDEN: Tolerance = Tolerance { channel: 6, pixels: 0.005 };

/// Where test packs are shared between test processes. `PLANET_TEST_TMPDIR`
/// overrides it, so the test binary runs on a machine without this
/// checkout's target directory (the GPU machine).
fn scratch_dir() -> PathBuf {
    let dir = std::env::var_os("PLANET_TEST_TMPDIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    std::fs::create_dir_all(&dir).expect("the scratch directory");
    dir
}

/// The goldens (`PLANET_GOLDEN_DIR` overrides, for a copied test binary).
fn golden_dir() -> PathBuf {
    std::env::var_os("PLANET_GOLDEN_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden"), PathBuf::from)
}

/// Where mismatches are written (`PLANET_GOLDEN_FAILURES` overrides).
fn failure_dir() -> PathBuf {
    std::env::var_os("PLANET_GOLDEN_FAILURES")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/golden-failures"), PathBuf::from)
}

/// Compares `image` with `tests/golden/NAME.png`. `PLANET_BLESS=1` writes
/// the golden instead. On mismatch, writes the actual image and a diff
/// (differing pixels red, scaled by how far) under target/golden-failures/.
pub fn check_golden(name: &str, image: &RgbaImage, tolerance: Tolerance) {
    let golden_path = golden_dir().join(format!("{name}.png"));
    if std::env::var_os("PLANET_BLESS").is_some() {
        image.save_png(&golden_path).expect("write golden");
        return;
    }
    let golden = RgbaImage::load_png(&golden_path)
        .unwrap_or_else(|e| panic!("{e}; render it once with PLANET_BLESS=1 and review it before committing"));
    assert_eq!((golden.width, golden.height), (image.width, image.height), "{name}: size differs from the golden");
    let mut differing = 0usize;
    let mut worst = 0u8;
    let mut diff = Vec::with_capacity(image.pixels.len());
    for (a, b) in image.pixels.chunks_exact(4).zip(golden.pixels.chunks_exact(4)) {
        let d = (0..3).map(|k| a[k].abs_diff(b[k])).max().expect("three channels");
        worst = worst.max(d);
        if d > tolerance.channel {
            differing += 1;
        }
        let shade = (d as u32 * 8).min(255) as u8;
        diff.extend_from_slice(&[shade, 0, 0, 255]);
    }
    let fraction = differing as f64 / (image.width * image.height) as f64;
    if fraction > tolerance.pixels {
        let dir = failure_dir();
        std::fs::create_dir_all(&dir).expect("failure dir");
        image.save_png(&dir.join(format!("{name}.actual.png"))).expect("write actual");
        RgbaImage { width: image.width, height: image.height, pixels: diff }
            .save_png(&dir.join(format!("{name}.diff.png")))
            .expect("write diff");
        panic!(
            "{name}: {:.3}% of pixels differ by more than {} (allowed {:.3}%; worst channel difference {worst}); \
             actual and diff written to {}",
            fraction * 100.0,
            tolerance.channel,
            tolerance.pixels * 100.0,
            dir.display()
        );
    }
}

/// Fraction of pixels that show only space/sky (the background colour the
/// sky pass leaves where the ray meets nothing drawn).
pub fn fraction_matching(image: &RgbaImage, predicate: impl Fn([u8; 4]) -> bool) -> f64 {
    let n = image.pixels.chunks_exact(4).filter(|p| predicate([p[0], p[1], p[2], p[3]])).count();
    n as f64 / (image.width * image.height) as f64
}
