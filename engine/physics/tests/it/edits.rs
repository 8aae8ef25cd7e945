//! A body follows an edit made under it: a pad raised under a resting
//! ball and box lifts them onto it (they rest on the new ground), the same
//! pad lowered lets them fall onto the ground beneath, and a body the
//! edit's journaled footprint does not reach is left asleep, its patch
//! not read again.

use glam::DVec3;
use planet_physics::{BodyId, GroundWorld, Shape};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::{HeightFunction, HeightSource};
use planet_terrain::layers::{Layer, LayerKind, LayerStack, Target};

use crate::support::{above_ground, earth_settings, flat_earth_with, from_frame_at, settle};

const BALL_M: f64 = 0.5;
const BOX_HALF_M: f64 = 0.4;
/// How far a resting body's centre may stand from where it should (metres).
const REST_TOLERANCE_M: f64 = 0.01;

fn pad(lat: f64, lon: f64, elevation_m: f64) -> Layer {
    let kind = LayerKind::Flatten { lat, lon, radius_m: 8.0, target: Target::Elevation(elevation_m), blend_m: 6.0 };
    Layer { order: 1, kind }
}

/// Applies `mutate` to the ground's layers and tells the world through the
/// stack's journal, as the viewer does.
fn edit(world: &mut GroundWorld, ground: &mut HeightFunction, mutate: impl FnOnce(&mut LayerStack, &Body)) -> usize {
    let body = ground.body().clone();
    mutate(ground.layers_mut(), &body);
    let footprints = ground.layers_mut().drain_journal();
    world.ground_edited(ground, &footprints).expect("patches rebuilt")
}

fn rests_at(world: &GroundWorld, ground: &HeightFunction, id: BodyId, lift_m: f64, what: &str) {
    let state = world.state(id).expect("body");
    let height = ground.body().ellipsoid().point_to_geodetic(state.position).height;
    let above = above_ground(world, ground, id);
    println!("edits: {what}: centre at {height:.4} m, {above:.4} m above the ground (expected {lift_m} m)");
    assert!(state.sleeping, "{what}: at rest");
    assert!((above - lift_m).abs() < REST_TOLERANCE_M, "{what}: {above} m above the ground, expected {lift_m}");
}

#[test]
fn bodies_follow_the_ground_up_and_down_when_it_is_edited_under_them() {
    let body = Body::earth();
    let (lat, lon) = (46.5, 7.25);
    let at = Geodetic::from_degrees(lat, lon, 0.0);
    let mut ground = flat_earth_with(LayerStack::new());
    let mut world = GroundWorld::new(&ground, earth_settings(), at).expect("world");
    let ball = from_frame_at(&body, at, DVec3::new(-1.5, 0.0, 1.0));
    let cube = from_frame_at(&body, at, DVec3::new(1.5, 0.0, 1.0));
    let far = from_frame_at(&body, at, DVec3::new(0.0, 120.0, 1.0));
    let ball = world.add(&ground, Shape::Sphere { radius_m: BALL_M }, ball, DVec3::ZERO).expect("ball");
    let cube =
        world.add(&ground, Shape::Box { half_extents_m: DVec3::splat(BOX_HALF_M) }, cube, DVec3::ZERO).expect("box");
    let far = world.add(&ground, Shape::Sphere { radius_m: BALL_M }, far, DVec3::ZERO).expect("far ball");
    settle(&mut world, &ground, 20.0);
    rests_at(&world, &ground, ball, BALL_M, "ball on the flat ground");
    rests_at(&world, &ground, cube, BOX_HALF_M, "box on the flat ground");

    let far_before = world.state(far).expect("far").position;
    let rebuilt = edit(&mut world, &mut ground, |layers, body| {
        layers.insert(body.ellipsoid(), pad(lat, lon, 3.0)).expect("pad");
    });
    // The basis starts under the first body, so the ball and the box share
    // the origin's cell; the far ball's cell lies beyond the pad's reach.
    assert_eq!(rebuilt, 1, "the edit rebuilt the one patch under the ball and the box");
    assert!(world.state(far).expect("far").sleeping, "a body the edit does not reach sleeps on");
    settle(&mut world, &ground, 20.0);
    rests_at(&world, &ground, ball, BALL_M, "ball after the pad rose to 3 m");
    rests_at(&world, &ground, cube, BOX_HALF_M, "box after the pad rose to 3 m");
    let ball_height =
        |world: &GroundWorld| body.ellipsoid().point_to_geodetic(world.state(ball).unwrap().position).height;
    assert!((ball_height(&world) - (3.0 + BALL_M)).abs() < REST_TOLERANCE_M, "the ball stands on the raised pad");

    let rebuilt = edit(&mut world, &mut ground, |layers, body| {
        layers.rewrite(body.ellipsoid(), pad(lat, lon, -2.0)).expect("pad lowered");
    });
    assert_eq!(rebuilt, 1, "the lowering rebuilt the same one patch");
    settle(&mut world, &ground, 20.0);
    rests_at(&world, &ground, ball, BALL_M, "ball after the pad sank to -2 m");
    rests_at(&world, &ground, cube, BOX_HALF_M, "box after the pad sank to -2 m");
    assert!((ball_height(&world) - (-2.0 + BALL_M)).abs() < REST_TOLERANCE_M, "the ball followed the pad down");

    let statistics = world.statistics();
    println!("edits: patch statistics {statistics:?}");
    assert_eq!(world.state(far).expect("far").position, far_before, "the far ball never moved");
    assert_eq!(statistics.rebuilt_for_edits, 2, "two edits, one patch each; the far ball's never");
}
