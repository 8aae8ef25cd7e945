//! A sphere dropped into a crater comes to rest on its floor, where the
//! height function puts it: the ball's centre at rest stands the ball's
//! radius above the ground the height function gives under it, within
//! 5 mm, and no further from the crater's centre than the point where the
//! bowl is 1 cm above its floor.

use glam::DVec3;
use planet_physics::{GroundWorld, Shape};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::layers::{Layer, LayerKind, LayerStack};

use crate::support::{above_ground, earth_settings, flat_earth_with, from_frame_at, settle};

const RADIUS_M: f64 = 0.5;
const CRATER_RADIUS_M: f64 = 20.0;
const CRATER_DEPTH_M: f64 = 4.0;
const RIM_M: f64 = 1.0;

#[test]
fn a_ball_dropped_into_a_crater_rests_on_its_floor() {
    let body = Body::earth();
    let centre = Geodetic::from_degrees(-12.5, 131.25, 0.0);
    let mut layers = LayerStack::new();
    let crater =
        LayerKind::Crater { lat: -12.5, lon: 131.25, radius_m: CRATER_RADIUS_M, depth_m: CRATER_DEPTH_M, rim_m: RIM_M };
    layers.insert(body.ellipsoid(), Layer { order: 1, kind: crater }).expect("crater");
    let ground = flat_earth_with(layers);
    let mut world = GroundWorld::new(&ground, earth_settings(), centre).expect("world");
    // Dropped 7 m east and 3 m north of the centre, from 1 m above the rim's height.
    let drop = from_frame_at(&body, centre, DVec3::new(7.0, 3.0, RIM_M + 1.0));
    let id = world.add(&ground, Shape::Sphere { radius_m: RADIUS_M }, drop, DVec3::ZERO).expect("ball");
    let took = settle(&mut world, &ground, 120.0);
    let state = world.state(id).expect("ball");
    assert!(state.sleeping, "the ball came to rest within 120 s");

    let e = body.ellipsoid();
    let rest = e.point_to_geodetic(state.position);
    let mut reader = GroundReader::new(&ground, world.ground_depth());
    let floor = reader.height(centre).expect("floor");
    let off_centre = (e.geodetic_to_point(Geodetic { height: 0.0, ..rest }) - e.geodetic_to_point(centre)).length();
    let height_error = above_ground(&world, &ground, id) - RADIUS_M;
    // The bowl is -depth + (depth + rim) r^2 inside the radius: 1 cm above
    // its floor at this distance from the centre.
    let one_cm_ring = CRATER_RADIUS_M * (0.01 / (CRATER_DEPTH_M + RIM_M)).sqrt();
    println!(
        "crater: at rest after {took:.1} s, {off_centre:.3} m from the centre (allowed {one_cm_ring:.3} m); \
         centre {:.4} m above the floor's {floor:.4} m (radius {RADIUS_M} m); \
         above the ground under it by the radius {height_error:+.4} m (allowed 0.005 m)",
        rest.height - floor
    );
    assert!((floor + CRATER_DEPTH_M).abs() < 0.01, "the height function's floor is the crater's: {floor}");
    assert!(off_centre <= one_cm_ring, "the ball rests {off_centre} m from the crater's centre");
    assert!(height_error.abs() < 0.005, "the ball rests {height_error} m off the ground plus its radius");
    assert!((rest.height - floor - RADIUS_M).abs() < 0.015, "the ball's centre is its radius above the floor");
}
