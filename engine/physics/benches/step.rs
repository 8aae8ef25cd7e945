//! Physics cost: a collision patch read from the ground (cold and warm) and
//! a fixed step with 1, 16 and 64 bodies, in milliseconds.
//!
//! `cargo bench -p planet-physics --bench step`
//!
//! A procedural Earth with a crater, ground read at 1 m spacing (depth 17,
//! lattice 0.6 m, cells of 16 m with 8 m margins: 55 x 55 vertices a
//! patch). "Cold" pays for the ground tiles the patch needs; "warm" reads
//! them from the world's cache (a re-centred basis's patches). Steps are
//! timed while the bodies fall, land and roll (the first 2 s), each body in
//! its own cell or sharing with neighbours as they drift.

use std::sync::Arc;
use std::time::Instant;

use glam::DVec3;
use planet_physics::{GroundWorld, LocalBasis, Settings, Shape};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::ground::{HeightFunction, ProceduralSource};
use planet_terrain::layers::{Layer, LayerKind, LayerStack};
use planet_terrain::{Body, Geodetic};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let body = Body::earth();
    let e = *body.ellipsoid();
    let (lat, lon) = (46.51, 8.01);
    let mut stack = LayerStack::new();
    let crater = LayerKind::Crater { lat, lon, radius_m: 40.0, depth_m: 6.0, rim_m: 1.5 };
    stack.insert(&e, Layer { order: 1, kind: crater }).unwrap();
    let ground = HeightFunction::new(Arc::new(ProceduralSource::new(body.clone(), 2026)), stack);
    let at = Geodetic::from_degrees(lat, lon, 0.0);
    let basis = LocalBasis::at(&e, at);
    let settings = Settings::for_body(&body);

    let mut world = GroundWorld::new(&ground, settings, at).unwrap();
    let start = Instant::now();
    world
        .add(&ground, Shape::Sphere { radius_m: 0.5 }, basis.to_body_fixed(DVec3::new(0.0, 0.0, 10.0)), DVec3::ZERO)
        .unwrap();
    let cold = ms(start);
    let warm = median(
        (0..20)
            .map(|k| {
                let start = Instant::now();
                let shift = DVec3::new(0.01 * f64::from(k + 1), 0.0, 0.0);
                world.recentre(&ground, basis.to_body_fixed(shift)).unwrap();
                ms(start)
            })
            .collect(),
    );
    println!("| collision patch, cold (ground tiles generated) | {cold:.1} |");
    println!("| collision patch, warm (tiles cached) | {warm:.2} |");

    let mut reader = GroundReader::new(&ground, world.ground_depth());
    for count in [1usize, 16, 64] {
        let mut world = GroundWorld::new(&ground, settings, at).unwrap();
        let side = (count as f64).sqrt().ceil() as usize;
        for k in 0..count {
            let local = DVec3::new((k % side) as f64 * 4.0 - 14.0, (k / side) as f64 * 4.0 - 14.0, 0.0);
            let surface = e.point_to_geodetic(basis.to_body_fixed(local));
            let h = reader.height(Geodetic { height: 0.0, ..surface }).unwrap();
            let start = e.geodetic_to_point(Geodetic { height: h + 2.0, ..surface });
            let shape = if k % 2 == 0 {
                Shape::Sphere { radius_m: 0.5 }
            } else {
                Shape::Box { half_extents_m: DVec3::new(0.5, 0.4, 0.3) }
            };
            world.add(&ground, shape, start, DVec3::ZERO).unwrap();
        }
        let steps: Vec<f64> = (0..240)
            .map(|_| {
                let start = Instant::now();
                world.step(&ground).unwrap();
                ms(start)
            })
            .collect();
        let statistics = world.statistics();
        println!(
            "| step, {count} bodies ({} patches held, {} read in all) | {:.3} median, {:.3} max |",
            statistics.live,
            statistics.built,
            median(steps.clone()),
            steps.iter().copied().fold(0.0, f64::max)
        );
    }
}
