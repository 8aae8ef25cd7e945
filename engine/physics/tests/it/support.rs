//! Grounds and measures shared by the tests: a uniform slope as a height
//! source (an `AnalyticSource`), the crater scene, and a body's height above the ground read at
//! the world's own depth (the ground the patches are made of).

use std::sync::Arc;

use glam::DVec3;
use planet_physics::{BodyId, GroundWorld, Settings};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::ground::{AnalyticSource, EllipsoidSource, HeightFunction, HeightSource};
use planet_terrain::layers::LayerStack;

/// A plane rising `grade` metres per metre east of `at` (measured along
/// the chord in the tangent plane there), flat beyond 500 m up or down: a
/// uniform slope as far as any test rolls.
pub fn uniform_slope(body: Body, at: Geodetic, grade: f64) -> AnalyticSource {
    let basis = planet_physics::LocalBasis::at(body.ellipsoid(), at);
    let (origin, east, limit_m) = (basis.origin(), basis.basis().col(0), 500.0);
    let ellipsoid = *body.ellipsoid();
    let height = move |d: DVec3| {
        (grade * (ellipsoid.surface_point_from_direction(d) - origin).dot(east)).clamp(-limit_m, limit_m)
    };
    // Land, all of it: on the Earth unclassified ground below 0 m is sea.
    let land = planet_terrain::ground::water::LAND_CLASS;
    AnalyticSource::within(body, height, (-limit_m, limit_m), |_| 0.0).with_classes(move |_| land)
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
    planet_physics::LocalBasis::at(body.ellipsoid(), at).to_body_fixed(local)
}
