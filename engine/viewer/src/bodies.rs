//! Bodies dropped on the ground: the viewer's consumer of planet-physics.
//!
//! The key decision: the physics world reads the same edited ground the
//! renderer draws (the scene's height function) and learns of edits by
//! comparing the scene's layer stack with the one it last saw (the
//! renderer drains the journal itself; `changed_footprints` gives the same
//! footprints), so a crater dug under a resting ball lets it fall in. It
//! steps at the physics world's fixed step by the frame's elapsed time; a
//! body's size follows the camera's height above the ground, so a drop is
//! visible from where the person stands.

use anyhow::{Context, Result, bail};
use glam::DVec3;
use planet_physics::{BodyState, GroundWorld, Settings, Shape, changed_footprints};
use planet_render::scene::TerrainScene;
use planet_render::{BodyDraw, BodyShape};
use planet_terrain::geo::body::Geodetic;
use planet_terrain::ground::query::GroundReader;
use planet_terrain::layers::LayerStack;

/// Bodies kept at most; dropping one more lets the oldest go.
pub const MAX_BODIES: usize = 64;

/// Linear RGB of balls and crates: warm colours that stand out on rock,
/// grass and snow alike.
const BALL_COLOUR: [f32; 3] = [0.9, 0.25, 0.05];
const CRATE_COLOUR: [f32; 3] = [0.55, 0.38, 0.15];

/// What a key drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ball,
    Crate,
}

/// The viewer's physics: none until the first drop.
#[derive(Debug, Default)]
pub struct Bodies {
    world: Option<GroundWorld>,
    /// The layers the world's patches were read from.
    seen: LayerStack,
}

impl Bodies {
    /// Drops a body at (`lat`, `lon`) degrees, sized for a camera
    /// `above_ground_m` up, from a few sizes above the ground.
    pub fn drop_at(
        &mut self,
        scene: &TerrainScene,
        kind: Kind,
        lat: f64,
        lon: f64,
        above_ground_m: f64,
    ) -> Result<String> {
        let Some(ground) = scene.source().cloned() else { bail!("a body with no ground has nothing to drop onto") };
        let at = Geodetic::from_degrees(lat, lon, 0.0);
        if self.world.is_none() {
            let settings = Settings::for_body(scene.body());
            self.world = Some(GroundWorld::new(ground.as_ref(), settings, at).context("starting the physics")?);
            self.seen = scene.layers().clone();
        }
        let world = self.world.as_mut().expect("made above");
        // Big enough to see, small enough for the patches' margin.
        let size = (0.02 * above_ground_m.max(0.0)).clamp(0.25, 0.5 * world.grid().margin_m());
        let shape = match kind {
            Kind::Ball => Shape::Sphere { radius_m: size },
            Kind::Crate => Shape::Box { half_extents_m: DVec3::new(size, 0.75 * size, 0.5 * size) },
        };
        let e = *scene.body().ellipsoid();
        let ground_m = GroundReader::new(ground.as_ref(), world.ground_depth())
            .top(at)
            .context("reading the ground under the cursor")?;
        let start = e.geodetic_to_point(Geodetic { height: ground_m + 3.0 * shape.reach_m(), ..at });
        if world.len() >= MAX_BODIES
            && let Some(oldest) = world.states().first().map(|s| s.id)
        {
            world.remove(oldest);
        }
        world.add(ground.as_ref(), shape, start, DVec3::ZERO).context("dropping a body")?;
        let count = match world.len() {
            1 => "1 body".to_string(),
            n => format!("{n} bodies"),
        };
        Ok(format!("{} dropped ({count})", if kind == Kind::Ball { "ball" } else { "crate" }))
    }

    /// Runs the physics for `elapsed_s` of the viewer's time, after telling
    /// it of any edit since the last call.
    pub fn advance(&mut self, scene: &TerrainScene, elapsed_s: f64) -> Result<()> {
        let (Some(world), Some(ground)) = (self.world.as_mut(), scene.source()) else { return Ok(()) };
        if *scene.layers() != self.seen {
            let footprints = changed_footprints(scene.body().ellipsoid(), &self.seen, scene.layers());
            world.ground_edited(ground.as_ref(), &footprints).context("following an edit with the bodies")?;
            self.seen = scene.layers().clone();
        }
        world.advance(ground.as_ref(), elapsed_s).context("stepping the physics")?;
        Ok(())
    }

    /// Every body as the renderer draws it: camera-relative, the
    /// difference taken in f64 before anything becomes f32.
    pub fn draws(&self, camera: DVec3) -> Vec<BodyDraw> {
        self.states()
            .iter()
            .map(|s| {
                let (shape, half, colour) = match s.shape {
                    Shape::Sphere { radius_m } => (BodyShape::Sphere, DVec3::splat(radius_m), BALL_COLOUR),
                    Shape::Box { half_extents_m } => (BodyShape::Box, half_extents_m, CRATE_COLOUR),
                };
                let axis = |k: usize| (s.orientation * (DVec3::AXES[k] * half[k])).as_vec3().to_array();
                BodyDraw {
                    centre_from_camera: (s.position - camera).as_vec3().to_array(),
                    axes: [axis(0), axis(1), axis(2)],
                    shape,
                    colour,
                }
            })
            .collect()
    }

    /// Every body, body-fixed.
    pub fn states(&self) -> Vec<BodyState> {
        self.world.as_ref().map_or_else(Vec::new, GroundWorld::states)
    }

    /// Each body as the log keeps it: where it is and how far above the
    /// ground under it its centre stands.
    pub fn log(&self, scene: &TerrainScene) -> Vec<BodyLog> {
        let (Some(world), Some(ground)) = (self.world.as_ref(), scene.source()) else { return Vec::new() };
        let e = scene.body().ellipsoid();
        let mut reader = GroundReader::new(ground.as_ref(), world.ground_depth());
        world
            .states()
            .iter()
            .map(|s| {
                let g = e.point_to_geodetic(s.position);
                let ground_m = reader.top(Geodetic { height: 0.0, ..g }).ok();
                let (kind, size) = match s.shape {
                    Shape::Sphere { radius_m } => ("ball", radius_m),
                    Shape::Box { half_extents_m } => ("crate", half_extents_m.min_element()),
                };
                BodyLog {
                    kind,
                    smallest_half_size_m: size,
                    lat: g.latitude.to_degrees(),
                    lon: g.longitude.to_degrees(),
                    height_m: g.height,
                    above_ground_m: ground_m.map(|h| g.height - h),
                    sleeping: s.sleeping,
                }
            })
            .collect()
    }
}

/// Where one dropped body came to rest, for the run's log.
#[derive(Debug, serde::Serialize)]
pub struct BodyLog {
    pub kind: &'static str,
    pub smallest_half_size_m: f64,
    pub lat: f64,
    pub lon: f64,
    pub height_m: f64,
    pub above_ground_m: Option<f64>,
    pub sleeping: bool,
}
