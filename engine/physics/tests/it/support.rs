//! Grounds and measures shared by the tests: a uniform slope as a height
//! source, the crater scene, and a body's height above the ground read at
//! the world's own depth (the ground the patches are made of).

use std::sync::Arc;

use glam::DVec3;
use planet_physics::{BodyId, GroundWorld, Settings};
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::ground::{
    EllipsoidSource, HeightFunction, HeightSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions,
};
use planet_terrain::layers::LayerStack;

/// A plane rising `grade` metres per metre east of `origin` (measured along
/// the chord in the tangent plane there), flat beyond `limit_m`: a uniform
/// slope as far as any test rolls.
#[derive(Debug)]
pub struct UniformSlope {
    body: Body,
    origin: DVec3,
    east: DVec3,
    pub grade: f64,
    limit_m: f64,
}

impl UniformSlope {
    pub fn new(body: Body, at: Geodetic, grade: f64) -> UniformSlope {
        let frame = planet_physics::LocalFrame::at(body.ellipsoid(), at);
        UniformSlope { origin: frame.origin(), east: frame.basis().col(0), body, grade, limit_m: 500.0 }
    }

    fn height_at(&self, surface: DVec3) -> f64 {
        (self.grade * (surface - self.origin).dot(self.east)).clamp(-self.limit_m, self.limit_m)
    }
}

impl HeightSource for UniformSlope {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.body
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let e = self.body.ellipsoid();
        let heights = sample_directions(tile)
            .into_iter()
            .map(|d| self.height_at(e.surface_point_from_direction(d)) as f32)
            .collect();
        Ok(SourceTile { tile, heights, classes: None, colour: None, provenance: Provenance::Invented })
    }

    fn bounds(&self, _tile: TileAddress, _reads: planet_terrain::ground::Reads) -> Result<TileBounds, SourceError> {
        Ok(TileBounds {
            min_elevation: -self.limit_m,
            max_elevation: self.limit_m,
            geometric_error: 0.0,
            provenance: Provenance::Invented,
        })
    }

    fn data_depth(&self) -> Option<u8> {
        None
    }

    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}

/// The ellipsoid at 0 m with `layers` on it: the authoritative ground.
pub fn flat_earth_with(layers: LayerStack) -> HeightFunction {
    HeightFunction::new(Arc::new(EllipsoidSource::new(Body::earth())), layers)
}

/// A body's centre above the ground under it (metres, along the ellipsoid
/// normal), the ground read at the world's depth.
pub fn above_ground(world: &GroundWorld, ground: &dyn HeightSource, id: BodyId) -> f64 {
    let state = world.state(id).expect("the body exists");
    let e = ground.body().ellipsoid();
    let g = e.point_to_geodetic(state.position);
    let mut reader = GroundReader::new(ground, world.ground_depth());
    g.height - reader.height(Geodetic { height: 0.0, ..g }).expect("ground readable")
}

/// Steps until every body sleeps or `max_s` passes; returns the time taken.
pub fn settle(world: &mut GroundWorld, ground: &dyn HeightSource, max_s: f64) -> f64 {
    let dt = world.settings().step_s;
    let mut t = 0.0;
    while t < max_s && !world.states().iter().all(|s| s.sleeping) {
        world.step(ground).expect("a step");
        t += dt;
    }
    t
}

/// Earth settings for a test: defaults unless the test says otherwise.
pub fn earth_settings() -> Settings {
    Settings::for_body(&Body::earth())
}

/// The body-fixed point `local` (east, north, up metres) from the frame
/// at `at`.
pub fn from_frame_at(body: &Body, at: Geodetic, local: DVec3) -> DVec3 {
    planet_physics::LocalFrame::at(body.ellipsoid(), at).to_body_fixed(local)
}
