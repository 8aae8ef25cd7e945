//! Nothing falls through at seams. Bodies are thrown across the corner of
//! four tiles at the edge between cube faces 0 and 1 (the equator at 45 E:
//! a tile seam at every depth and a face seam), over seeded procedural
//! ground with a smooth dip (a lowering layer) across that corner, so
//! they cross tile seams, the face seam and the edges of the patch cells while rolling, tumbling
//! and settling. Every step, every body's centre must stand at least its
//! smallest half-size above the ground the height function gives under it,
//! less 2.5 cm: the solver lets a landing box sink 1.1 cm for a step before
//! pushing it out, and the patch departs from the height function between
//! its lattice vertices by up to curvature x spacing^2 / 4 (3.3 mm in this
//! dip at 0.6 m spacing). At the end, less 5 mm. Going through the ground
//! would cost a body its whole size (20 cm or more), and fails at once.

use std::collections::BTreeSet;
use std::sync::Arc;

use glam::DVec3;
use planet_physics::{GroundWorld, Shape};
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::ground::{HeightFunction, ProceduralSource, locate};
use planet_terrain::layers::{Layer, LayerKind, LayerStack};

use crate::support::{earth_settings, from_frame_at};

const SLACK_M: f64 = 0.025;
const FINAL_SLACK_M: f64 = 0.005;
const SECONDS: f64 = 8.0;

fn smallest_half_size(shape: Shape) -> f64 {
    match shape {
        Shape::Sphere { radius_m } => radius_m,
        Shape::Box { half_extents_m } => half_extents_m.min_element(),
    }
}

#[test]
fn bodies_thrown_across_tile_face_and_patch_seams_never_go_through_the_ground() {
    // The Earth's radii without its sea: the procedural ground at the
    // corner lies 140 m below sea level, and the seams are to be crossed
    // on its relief, not on a level sea.
    let radii = Body::earth().ellipsoid().radii();
    let body = Body::custom("earth without a sea", radii.to_array()).expect("radii");
    let corner = Geodetic::from_degrees(0.0, 45.0, 0.0);
    let mut layers = LayerStack::new();
    let dip = LayerKind::Raise { lat: 0.0, lon: 45.0, radius_m: 20.0, amount_m: -3.0 };
    layers.insert(body.ellipsoid(), Layer { order: 1, kind: dip }).expect("dip");
    let ground = HeightFunction::new(Arc::new(ProceduralSource::new(body.clone(), 7)), layers);
    let depth = GroundWorld::new(&ground, earth_settings(), corner).expect("world").ground_depth();
    let mut reader = GroundReader::new(&ground, depth);
    let e = *body.ellipsoid();
    let mut ground_under = |p: DVec3| {
        let g = e.point_to_geodetic(p);
        (g.height, reader.height(Geodetic { height: 0.0, ..g }).expect("ground"))
    };

    // A ring of bodies 18 m out, thrown inward across the corner at 4 m/s,
    // and a row thrown along the equator across the face edge. Each flies
    // alone, so what holds it up is the ground, never another body.
    let mut thrown = Vec::new();
    for k in 0..12 {
        let a = std::f64::consts::TAU * f64::from(k) / 12.0;
        let out = DVec3::new(a.cos(), a.sin(), 0.0);
        thrown.push((out * 18.0, -out * 4.0 + DVec3::new(0.0, 0.0, 1.0)));
    }
    for k in 0..6 {
        let north = -5.0 + 2.0 * f64::from(k);
        thrown.push((DVec3::new(-25.0, north, 0.0), DVec3::new(5.0, 0.3 * north, 0.0)));
    }
    let basis = planet_physics::LocalBasis::at(&e, corner);
    let (mut faces, mut tiles) = (BTreeSet::new(), BTreeSet::new());
    let (mut lowest, mut final_lowest, mut crossings, mut built) = (f64::INFINITY, f64::INFINITY, 0usize, 0usize);
    for (k, (local, velocity)) in thrown.iter().enumerate() {
        let shape = if k % 3 == 2 {
            Shape::Box { half_extents_m: DVec3::new(0.5, 0.3, 0.2) }
        } else {
            Shape::Sphere { radius_m: 0.3 + 0.1 * (k % 4) as f64 }
        };
        let surface = from_frame_at(&body, corner, *local);
        let (_, h) = ground_under(surface);
        let g = e.point_to_geodetic(surface);
        let start = e.geodetic_to_point(Geodetic { height: h + 1.5, ..g });
        let mut world = GroundWorld::new(&ground, earth_settings(), corner).expect("world");
        let id = world.add(&ground, shape, start, basis.direction_to_body_fixed(*velocity)).expect("body");
        let steps = (SECONDS / world.settings().step_s).round() as usize;
        let mut cell = world.grid().cell_of(world.basis().to_local(start));
        for step in 0..steps {
            world.step(&ground).expect("step");
            let state = world.state(id).expect("body");
            let (height, ground_m) = ground_under(state.position);
            let clearance = height - ground_m - smallest_half_size(shape);
            lowest = lowest.min(clearance);
            assert!(
                clearance > -SLACK_M,
                "body {k} ({shape:?}), step {step}: {clearance} m below its surface at {:?}",
                e.point_to_geodetic(state.position)
            );
            let now = world.grid().cell_of(world.basis().to_local(state.position));
            crossings += usize::from(now != cell);
            cell = now;
            let (tile, _, _) = locate(&body, e.point_to_geodetic(state.position), depth);
            faces.insert(tile.face());
            tiles.insert(tile);
        }
        let state = world.state(id).expect("body");
        let (height, ground_m) = ground_under(state.position);
        let last = height - ground_m - smallest_half_size(shape);
        final_lowest = final_lowest.min(last);
        assert!(last > -FINAL_SLACK_M, "body {k} ({shape:?}) ends {last} m below its surface");
        built += world.statistics().built;
    }
    println!(
        "seams: {} bodies for {SECONDS} s each over {} tiles of depth {depth} on faces {faces:?}; \
         lowest clearance {lowest:+.4} m (allowed -{SLACK_M} m), at the end {final_lowest:+.4} m \
         (allowed -{FINAL_SLACK_M} m); {crossings} patch cell crossings, {built} patches built",
        thrown.len(),
        tiles.len(),
    );
    assert!(faces.len() == 2 && tiles.len() >= 4, "the bodies crossed the face edge and the tile corner");
    assert!(crossings >= thrown.len(), "the bodies crossed patch cells ({crossings} crossings)");
}
