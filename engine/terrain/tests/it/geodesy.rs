//! Geodesy and the cube-sphere projection: round trips over the whole body,
//! the poles and the antimeridian included, on every preset and a triaxial
//! ellipsoid.

use std::f64::consts::PI;

use glam::DVec3;
use planet_terrain::geo::cube::{direction_to_face_grid, face_grid_to_direction};
use planet_terrain::{Body, Edge, Face, Geodetic, TileAddress};
use proptest::prelude::*;

fn bodies() -> Vec<Body> {
    vec![
        Body::earth(),
        Body::moon(),
        Body::mars(),
        Body::custom("triaxial", [6_378_137.0, 6_370_000.0, 6_356_752.0]).unwrap(),
    ]
}

/// Latitudes and longitudes in degrees with the awkward values over-weighted.
fn latitude() -> impl Strategy<Value = f64> {
    prop_oneof![Just(90.0), Just(-90.0), Just(0.0), Just(89.999_999_9), -90.0..=90.0f64]
}

fn longitude() -> impl Strategy<Value = f64> {
    prop_oneof![Just(180.0), Just(-180.0), Just(179.999_999_9), Just(0.0), -180.0..=180.0f64]
}

fn angle_difference(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(2.0 * PI);
    d.min(2.0 * PI - d)
}

/// One check for every geodetic round trip: latitude within 1e-12 rad,
/// longitude too wherever it is defined (off the poles), the point within 1e-6 m.
fn check_round_trip(body: &Body, original: Geodetic, back: Geodetic) {
    let e = body.ellipsoid();
    assert!((back.latitude - original.latitude).abs() <= 1e-12, "{}: lat {original:?} -> {back:?}", body.name());
    if original.latitude.cos() > 1e-9 {
        assert!(
            angle_difference(back.longitude, original.longitude) <= 1e-12,
            "{}: lon {original:?} -> {back:?}",
            body.name()
        );
    }
    assert!((back.height - original.height).abs() <= 1e-6, "{}: height {original:?} -> {back:?}", body.name());
    let (p, q) = (e.geodetic_to_point(original), e.geodetic_to_point(back));
    assert!((p - q).length() <= 1e-6, "{}: {original:?} -> {back:?} is {} m away", body.name(), (p - q).length());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn surface_point_round_trips(lat in latitude(), lon in longitude()) {
        for body in bodies() {
            let g = Geodetic::from_degrees(lat, lon, 0.0);
            let p = body.ellipsoid().geodetic_to_point(g);
            check_round_trip(&body, g, body.ellipsoid().surface_point_to_geodetic(p));
        }
    }

    #[test]
    fn direction_and_face_grid_round_trip(lat in latitude(), lon in longitude()) {
        for body in bodies() {
            let e = body.ellipsoid();
            let g = Geodetic::from_degrees(lat, lon, 0.0);
            let d = e.geodetic_to_direction(g);
            let (face, s, t) = direction_to_face_grid(d);
            let back = e.direction_to_geodetic(face_grid_to_direction(face, s, t));
            check_round_trip(&body, g, back);
        }
    }

    #[test]
    fn points_off_the_surface_round_trip(lat in latitude(), lon in longitude(), height in prop_oneof![
        -11_000.0..9_000.0f64, 9_000.0..40_000_000.0f64, Just(0.0), Just(2.0)]) {
        for body in bodies() {
            let g = Geodetic::from_degrees(lat, lon, height);
            let p = body.ellipsoid().geodetic_to_point(g);
            let back = body.ellipsoid().point_to_geodetic(p);
            check_round_trip(&body, g, back);
        }
    }
}

#[test]
fn face_centres_fall_where_the_face_table_says() {
    let earth = Body::earth();
    let centres = [(0.0, 0.0), (0.0, 90.0), (0.0, 180.0), (0.0, -90.0), (90.0, 0.0), (-90.0, 0.0)];
    for (face, (lat, lon)) in Face::ALL.into_iter().zip(centres) {
        let g = earth.ellipsoid().direction_to_geodetic(face_grid_to_direction(face, 0.0, 0.0));
        assert!((g.latitude.to_degrees() - lat).abs() < 1e-12, "face {face}");
        if lat.abs() < 90.0 {
            assert!(angle_difference(g.longitude, f64::to_radians(lon)) < 1e-12, "face {face}");
        }
    }
}

#[test]
fn adjacent_faces_build_identical_edge_directions() {
    // Every face edge at 2^12 cells, compared bit for bit with the same
    // points built by the adjacent face.
    let n = 1i64 << 12;
    for face in Face::ALL {
        let root = TileAddress::root(face);
        for edge in Edge::ALL {
            let neighbour = root.neighbour(edge);
            for k in 0..=n {
                let along = 2.0 * k as f64 / n as f64 - 1.0;
                let mirrored = if neighbour.reversed { -along } else { along };
                let here = match edge {
                    Edge::MinU => (-1.0, along),
                    Edge::MaxU => (1.0, along),
                    Edge::MinV => (along, -1.0),
                    Edge::MaxV => (along, 1.0),
                };
                let there = match neighbour.shared_edge {
                    Edge::MinU => (-1.0, mirrored),
                    Edge::MaxU => (1.0, mirrored),
                    Edge::MinV => (mirrored, -1.0),
                    Edge::MaxV => (mirrored, 1.0),
                };
                assert_eq!(
                    face_grid_to_direction(face, here.0, here.1),
                    face_grid_to_direction(neighbour.address.face(), there.0, there.1),
                    "face {face} {edge:?} at {along}"
                );
            }
        }
    }
}

#[test]
fn geodetic_normal_tilts_away_from_radial_on_earth() {
    // At 45 N the WGS84 normal is ~0.19 degrees off the radial direction.
    let e = *Body::earth().ellipsoid();
    let p = e.geodetic_to_point(Geodetic::from_degrees(45.0, 10.0, 0.0));
    let normal = Geodetic::from_degrees(45.0, 10.0, 0.0).normal();
    let tilt = normal.angle_between(p.normalize()).to_degrees();
    assert!((0.19..0.20).contains(&tilt), "tilt {tilt}");
    let equator = e.normal_at_direction(e.geodetic_to_direction(Geodetic::from_degrees(0.0, 0.0, 0.0)));
    assert!((equator - DVec3::X).length() < 1e-15, "{equator}");
}
