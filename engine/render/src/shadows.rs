//! The frame's horizon map on the host (`planet_terrain::ground::horizon`):
//! when it is rebuilt, on which thread, and what a frame hands the renderer.
//!
//! The key decision: a map is planned every frame but rebuilt only when the
//! plan it was built for no longer serves the view
//! ([`HorizonPlan::serves`]) or the ground changed (an edit makes a new
//! source). A frame that produces its own tiles (shots, tests, frame-by-frame
//! captures) builds the map on the spot, so what it draws is the same on
//! every run; a frame with loader threads keeps shading with the last map
//! while the next one is built on a thread of its own, and never waits.
//! Ground that cannot be read never fails a frame: coarser ground stands
//! in for it in the map, which a window rebuilds a few seconds later.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use glam::DVec3;
use planet_terrain::abi::HorizonBasis;
use planet_terrain::ground::HeightSource;
use planet_terrain::ground::horizon::{HorizonMap, HorizonPlan, LEVEL_RATIO};
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};

/// Half the angle (radians) over which the sun goes from hidden to seen as
/// it clears a horizon: a little more than the sun's own radius (0.27
/// degrees), for the map's interpolated horizons.
const PENUMBRA_HALF_ANGLE: f32 = 0.006;

/// How long a map that met unreadable tiles serves before a window
/// rebuilds it (a failing server may have recovered; a corrupt tile is
/// read again no more often than this).
const UNREADABLE_RETRY: Duration = Duration::from_secs(5);

/// A map being built on a thread, and the source it reads.
#[derive(Debug)]
struct Pending {
    source: usize,
    build: JoinHandle<(HorizonMap, f64)>,
}

/// Whether the ground is shaded with the horizon map.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShadowMode {
    /// Lit by its slope alone and open to the whole sky, for comparison.
    Off,
    /// Cast shadows and ambient occlusion.
    #[default]
    On,
    /// The shadow mask painted instead of the ground (white where the sun
    /// is seen, black where it is hidden): a debug view, and the GPU
    /// conformance test's.
    Mask,
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct Shadows {
    mode: ShadowMode,
    current: Option<HorizonMap>,
    /// The identity of the source `current` was read from.
    built_from: usize,
    pending: Option<Pending>,
    /// `current`'s texels until a frame takes them to the GPU.
    unsent: Option<Vec<u8>>,
    /// When `current` was installed.
    installed_at: Instant,
    /// Maps built so far, and the last one's milliseconds.
    builds: usize,
    last_build_ms: f64,
}

/// A source's identity: an edit replaces the source, and the map with it.
fn identity(source: &Arc<dyn HeightSource>) -> usize {
    Arc::as_ptr(source) as *const () as usize
}

impl Shadows {
    pub(crate) fn new(mode: ShadowMode) -> Shadows {
        Shadows {
            mode,
            current: None,
            built_from: 0,
            pending: None,
            unsent: None,
            installed_at: Instant::now(),
            builds: 0,
            last_build_ms: 0.0,
        }
    }

    pub(crate) fn set_mode(&mut self, mode: ShadowMode) {
        self.mode = mode;
    }

    /// The push constants' flag bits this mode sets.
    pub(crate) fn flags(&self) -> u32 {
        if self.mode == ShadowMode::Mask { planet_terrain::abi::FLAG_SHADOW_MASK } else { 0 }
    }

    fn enabled(&self) -> bool {
        self.mode != ShadowMode::Off
    }

    pub(crate) fn map(&self) -> Option<&HorizonMap> {
        self.current.as_ref().filter(|_| self.enabled())
    }

    /// Maps built so far and the last one's milliseconds.
    pub(crate) fn builds(&self) -> (usize, f64) {
        (self.builds, self.last_build_ms)
    }

    /// Brings the map up to date for a camera at body-fixed `camera` under
    /// `sun`: now when `wait`, else on a thread (the current map serves
    /// meanwhile). Unreadable ground never fails a frame: the map stands
    /// in coarser ground for it ([`HorizonMap::build`]), and without
    /// `wait` it is rebuilt after [`UNREADABLE_RETRY`].
    pub(crate) fn update(&mut self, source: &Arc<dyn HeightSource>, camera: DVec3, sun: DVec3, wait: bool) {
        if !self.enabled() {
            return;
        }
        let id = identity(source);
        if self.pending.as_ref().is_some_and(|p| p.build.is_finished()) {
            let pending = self.pending.take().expect("checked");
            if let (Ok((map, ms)), true) = (pending.build.join(), pending.source == id) {
                self.install(map, id, ms);
            }
        }
        let body = source.body();
        let plan = HorizonPlan::for_camera(body, camera, self.altitude(source, camera), sun);
        let retry = !wait && self.installed_at.elapsed() > UNREADABLE_RETRY;
        let serves =
            |m: &HorizonMap| self.built_from == id && m.plan.serves(&plan, body) && !(retry && m.unreadable_tiles > 0);
        if self.current.as_ref().is_some_and(serves) {
            return;
        }
        if wait {
            let started = Instant::now();
            let map = HorizonMap::build(&**source, plan);
            self.install(map, id, started.elapsed().as_secs_f64() * 1e3);
        } else if self.pending.is_none() {
            // One build at a time: a plan overtaken while it builds is
            // replaced once it lands.
            let source = source.clone();
            let build = std::thread::Builder::new()
                .name("horizon map".into())
                .spawn(move || {
                    let started = Instant::now();
                    (HorizonMap::build(&*source, plan), started.elapsed().as_secs_f64() * 1e3)
                })
                .expect("a thread for the horizon map");
            self.pending = Some(Pending { source: id, build });
        }
    }

    /// The camera's height above the ground under it: from the map where
    /// it covers the camera, else read at a kilometre's spacing (above the
    /// ellipsoid where that cannot be read).
    fn altitude(&self, source: &Arc<dyn HeightSource>, camera: DVec3) -> f64 {
        let e = source.body().ellipsoid();
        let at = e.point_to_geodetic(camera);
        let ground = self.current.as_ref().and_then(|m| m.height_at(camera)).unwrap_or_else(|| {
            let depth = depth_for_spacing(&**source, 1000.0);
            GroundReader::new(&**source, depth).height(planet_terrain::Geodetic { height: 0.0, ..at }).unwrap_or(0.0)
        });
        at.height - ground
    }

    /// The device was made again: the current map's texels go up again.
    pub(crate) fn device_lost(&mut self) {
        self.unsent = self.current.as_ref().map(HorizonMap::texel_bytes);
    }

    fn install(&mut self, map: HorizonMap, source: usize, ms: f64) {
        self.unsent = Some(map.texel_bytes());
        self.current = Some(map);
        self.installed_at = Instant::now();
        self.built_from = source;
        self.builds += 1;
        self.last_build_ms = ms;
    }

    /// What a frame from `camera` shades with: where the map lies relative
    /// to the camera (differences formed in f64) and, the first time, its
    /// texels. `None` without a map (or with shadows off).
    pub(crate) fn frame_input(&mut self, camera: DVec3) -> Option<(HorizonBasis, Option<Vec<u8>>)> {
        let basis = self.basis_from(camera)?;
        Some((basis, self.unsent.take()))
    }

    /// Where the map lies relative to `camera` (a frame's second view
    /// shades with the main view's map from its own camera).
    pub(crate) fn basis_from(&self, camera: DVec3) -> Option<HorizonBasis> {
        let map = self.map()?;
        let d = camera - map.centre;
        let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
        Some(HorizonBasis {
            camera_in_map: f(DVec3::new(d.dot(map.east), d.dot(map.north), d.dot(map.up)), map.plan.finest_extent_m),
            east: f(map.east, map.levels.len() as f64),
            north: f(map.north, LEVEL_RATIO),
            up: [map.up.x as f32, map.up.y as f32, map.up.z as f32, PENUMBRA_HALF_ANGLE],
        })
    }
}
