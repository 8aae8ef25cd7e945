//! A body dropped on the sea floats at its surface, not on its floor
//! (issue #51, item 1): the ground world's patches are the top of the
//! surface the renderer draws, the sea's at 0 m over ground under it.

use glam::DVec3;
use planet_physics::{GroundWorld, Shape};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::AnalyticSource;
use planet_terrain::ground::query::GroundReader;

use crate::support::{earth_settings, from_frame_at, settle};

const RADIUS_M: f64 = 0.5;

#[test]
fn a_ball_dropped_on_the_sea_rests_on_its_surface() {
    let body = Body::earth();
    // Open sea 40 m deep: a level floor, no classes.
    let sea = AnalyticSource::within(body.clone(), |_| -40.0, (-40.0, -40.0), |_| 0.0);
    let at = Geodetic::from_degrees(-20.0, -140.0, 0.0);
    let mut world = GroundWorld::new(&sea, earth_settings(), at).expect("world");
    let drop = from_frame_at(&body, at, DVec3::new(0.0, 0.0, 5.0));
    let id = world.add(&sea, Shape::Sphere { radius_m: RADIUS_M }, drop, DVec3::ZERO).expect("ball");
    let took = settle(&mut world, &sea, 60.0);
    let state = world.state(id).expect("ball");
    let rest = body.ellipsoid().point_to_geodetic(state.position);
    let surface = GroundReader::new(&sea, world.ground_depth()).surface(at).expect("surface");
    println!(
        "sea: at rest after {took:.1} s, centre {:.4} m above the ellipsoid (floor {} m, water {:?} m, radius {RADIUS_M} m)",
        rest.height, surface.ground_m, surface.water_m
    );
    assert!(state.sleeping, "the ball came to rest within 60 s");
    assert_eq!((surface.ground_m, surface.water_m), (-40.0, Some(0.0)), "the floor and the water over it");
    assert!((rest.height - RADIUS_M).abs() < 0.015, "the ball rests on the water, {} m up", rest.height);
}
