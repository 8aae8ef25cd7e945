//! The f32 vertex path against a double-double reference.
//!
//! Stated bound (also in docs/design/conventions.md and docs/PERFORMANCE.md): the f32
//! offset of a lattice sample from its node centre is within
//! `OFFSET_BOUND_ULPS` f32 ulps of the offset's own length, at every depth
//! 0..=24, for elevations anywhere from -11 km to +9 km; and for depths
//! 20..=24 with the sample within a metre of the centre's elevation it is
//! within 1 micrometre.

use planet_terrain::geo::lattice::lattice_step;
use planet_terrain::geo::precision::{
    NodeCentre, naive_f32_vertex_offset, offset_error, reference_vertex_offset, vertex_offset,
};
use planet_terrain::{Body, TileAddress};
use proptest::prelude::*;

const OFFSET_BOUND_ULPS: f64 = 3.0;
const DEEP_BOUND_M: f64 = 1e-6;

#[derive(Debug, Clone)]
struct Case {
    tile: TileAddress,
    i: u32,
    j: u32,
    centre_height: f64,
    height: f64,
}

fn case(depths: std::ops::RangeInclusive<u8>, within_a_metre: bool) -> impl Strategy<Value = Case> {
    (
        0u8..6,
        depths,
        any::<u32>(),
        any::<u32>(),
        0u32..=32,
        0u32..=32,
        -11_000.0..9_000.0f64,
        -11_000.0..9_000.0f64,
        -1.0..=1.0f64,
    )
        .prop_map(move |(face, depth, x, y, i, j, centre_height, anywhere, near)| {
            let size = 1u32 << depth;
            let tile = TileAddress::new(face, depth, x % size, y % size).unwrap();
            let height = if within_a_metre { centre_height + near } else { anywhere };
            Case { tile, i, j, centre_height, height }
        })
}

/// Runs the f32 path and the reference on one case; returns (ulps, metres).
fn check(body: &Body, c: &Case) -> (f64, f64) {
    let e = body.ellipsoid();
    let centre = NodeCentre::new(e, c.tile, c.centre_height);
    let (ds, dt) = (lattice_step(c.tile.depth(), c.i), lattice_step(c.tile.depth(), c.j));
    let dh = (c.height - c.centre_height) as f32;
    let computed = vertex_offset(&centre.basis, ds, dt, dh, c.height as f32);
    let reference = reference_vertex_offset(
        e,
        c.tile,
        c.centre_height,
        f64::from(ds),
        f64::from(dt),
        c.centre_height + f64::from(dh),
    );
    offset_error(computed, reference)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6000))]

    #[test]
    fn offset_is_within_a_few_ulps_at_every_depth(c in case(0..=24, false)) {
        for body in [Body::earth(), Body::moon(), Body::mars()] {
            let (ulps, metres) = check(&body, &c);
            prop_assert!(ulps <= OFFSET_BOUND_ULPS, "{}: {c:?}: {ulps:.2} ulps ({metres:e} m)", body.name());
        }
    }

    #[test]
    fn deep_offsets_hold_a_micrometre(c in case(20..=24, true)) {
        let (ulps, metres) = check(&Body::earth(), &c);
        prop_assert!(metres <= DEEP_BOUND_M, "{c:?}: {metres:e} m ({ulps:.2} ulps)");
        prop_assert!(ulps <= OFFSET_BOUND_ULPS);
    }
}

#[test]
fn naive_f32_fails_the_same_bound() {
    // The test must be able to tell: naive planet-space f32 arithmetic, on
    // the same cases, misses the micrometre bound by five orders of magnitude.
    let earth = Body::earth();
    let e = earth.ellipsoid();
    let mut worst: f64 = 0.0;
    for k in 0..200u32 {
        let tile = TileAddress::new((k % 6) as u8, 20, (1000 + 7919 * k) % (1 << 20), (5000 + 104_729 * k) % (1 << 20))
            .unwrap();
        let centre_height = 100.0 + f64::from(k);
        let (ds, dt) = (lattice_step(20, k % 33), lattice_step(20, (k * 7) % 33));
        let reference =
            reference_vertex_offset(e, tile, centre_height, f64::from(ds), f64::from(dt), centre_height + 0.5);
        let naive = naive_f32_vertex_offset(e, tile, centre_height, ds, dt, (centre_height + 0.5) as f32);
        worst = worst.max((naive.as_dvec3() - reference).length());
        let centre = NodeCentre::new(e, tile, centre_height);
        let good = vertex_offset(&centre.basis, ds, dt, 0.5, (centre_height + 0.5) as f32);
        assert!(offset_error(good, reference).1 <= DEEP_BOUND_M);
    }
    assert!(worst > 0.1, "naive f32 worst error only {worst} m: the reference cannot tell");
}

#[test]
fn centre_point_is_the_geodesy_of_the_tile_centre() {
    let earth = Body::earth();
    let e = earth.ellipsoid();
    let tile: TileAddress = "2/13/4000/1234".parse().unwrap();
    let centre = NodeCentre::new(e, tile, 812.5);
    let (s, t) = tile.grid_centre();
    let d = planet_terrain::geo::cube::face_grid_to_direction(tile.face(), s, t);
    let expected = e.point_from_direction(d, 812.5);
    assert!((centre.point - expected).length() < 1e-8);
    // A sample at the centre itself is no offset at all.
    let zero = vertex_offset(&centre.basis, 0.0, 0.0, 0.0, 812.5);
    assert_eq!(zero.to_array(), [0.0; 3]);
}
