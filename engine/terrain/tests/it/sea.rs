//! Ground queries over the sea (issue #51, item 1): a ray, a camera kept
//! above the ground and a collision patch meet the water's surface at 0 m,
//! while the ground read stays the floor.

use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::AnalyticSource;
use planet_terrain::ground::query::{GroundReader, RayHit, collision_patch, keep_above_ground, raycast};

#[test]
fn rays_cameras_and_collision_patches_meet_the_water_not_the_floor() {
    let body = Body::earth();
    let e = *body.ellipsoid();
    // Open sea 40 m deep: a level floor, no classes.
    let sea = AnalyticSource::within(body.clone(), |_| -40.0, (-40.0, -40.0), |_| 0.0);
    let at = Geodetic::from_degrees(-20.0, -140.0, 0.0);
    let depth = 16;
    let mut reader = GroundReader::new(&sea, depth);
    assert_eq!(reader.height(at).expect("floor"), -40.0, "the ground read is the floor");
    let surface = reader.surface(at).expect("surface");
    assert_eq!((surface.water_m, surface.depth_m()), (Some(0.0), 40.0));

    let above = e.geodetic_to_point(Geodetic { height: 500.0, ..at });
    let hit = raycast(&sea, above, -at.normal(), 1000.0, depth, 10_000).expect("cast");
    let RayHit::Hit { distance, .. } = hit else { panic!("the ray meets the sea: {hit:?}") };
    assert!((distance - 500.0).abs() < 0.01, "the ray stops at the water, {distance} m down");

    let under = e.geodetic_to_point(Geodetic { height: -10.0, ..at });
    let kept = e.point_to_geodetic(keep_above_ground(&mut reader, under, 2.0).expect("kept"));
    assert!((kept.height - 2.0).abs() < 1e-6, "a camera 10 m under the sea is lifted above it: {}", kept.height);

    let patch = collision_patch(&sea, at, 30.0, depth).expect("patch");
    let highest = patch.vertices.iter().map(|&v| e.point_to_geodetic(v).height).fold(f64::NEG_INFINITY, f64::max);
    let lowest = patch.vertices.iter().map(|&v| e.point_to_geodetic(v).height).fold(f64::INFINITY, f64::min);
    assert!(lowest.abs() < 1e-6 && highest.abs() < 1e-6, "the patch lies on the water: {lowest}..{highest} m");
}
