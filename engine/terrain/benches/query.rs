//! Ground query cost: a height sample and a 10 km ray cast, in microseconds.
//!
//! `cargo bench -p planet-terrain --bench query`
//!
//! A procedural Earth with a crater and a flatten pad near the query point,
//! ground read at 1 m spacing. "Cold" builds a new reader (no tile cached)
//! per query, the cost a one-off query pays; "warm" reuses one reader, the
//! cost of a stream of nearby queries (a camera's keep-above-ground).

use std::sync::Arc;
use std::time::Instant;

use planet_terrain::ground::query::{GroundReader, RayHit, depth_for_spacing, raycast};
use planet_terrain::ground::{HeightFunction, ProceduralSource};
use planet_terrain::layers::{Layer, LayerKind, LayerStack, Target};
use planet_terrain::{Body, Geodetic};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let body = Body::earth();
    let e = *body.ellipsoid();
    let mut stack = LayerStack::new();
    stack
        .insert(
            &e,
            Layer {
                order: 1,
                kind: LayerKind::Crater { lat: 46.5, lon: 8.0, radius_m: 2500.0, depth_m: 200.0, rim_m: 40.0 },
            },
        )
        .unwrap();
    stack
        .insert(
            &e,
            Layer {
                order: 2,
                kind: LayerKind::Flatten {
                    lat: 46.52,
                    lon: 8.03,
                    radius_m: 300.0,
                    target: Target::Elevation(1500.0),
                    blend_m: 100.0,
                },
            },
        )
        .unwrap();
    let f = HeightFunction::new(Arc::new(ProceduralSource::new(body.clone(), 2026)), stack);
    let depth = depth_for_spacing(&f, 1.0);
    let at = Geodetic::from_degrees(46.51, 8.01, 0.0);

    let cold: Vec<f64> = (0..50)
        .map(|k| {
            let start = Instant::now();
            let g = Geodetic::from_degrees(46.51 + 1e-4 * f64::from(k), 8.01, 0.0);
            std::hint::black_box(GroundReader::new(&f, depth).height(g).unwrap());
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let mut reader = GroundReader::new(&f, depth);
    reader.height(at).unwrap();
    let warm: Vec<f64> = (0..2000)
        .map(|k| {
            let g = Geodetic::from_degrees(46.51 + 1e-8 * f64::from(k), 8.01, 0.0);
            let start = Instant::now();
            std::hint::black_box(reader.height(g).unwrap());
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    // A 10 km ray from 300 m above the ground, 2 degrees below horizontal.
    let ground = reader.height(at).unwrap();
    let origin = e.geodetic_to_point(Geodetic { height: ground + 300.0, ..at });
    let enu = planet_terrain::geo::east_north_up(at);
    let direction = (enu.col(0) * 2f64.to_radians().cos() - enu.col(2) * 2f64.to_radians().sin()).normalize();
    let mut outcome = RayHit::Miss;
    let rays: Vec<f64> = (0..20)
        .map(|_| {
            let start = Instant::now();
            outcome = raycast(&f, origin, direction, 10_000.0, depth, 1_000_000).unwrap();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    println!("| query | median us |");
    println!("|---|---:|");
    println!("| height sample, cold (tile generated) | {:.0} |", median(cold));
    println!("| height sample, warm (tile cached) | {:.2} |", median(warm));
    println!("| 10 km ray cast at 1 m resolution ({outcome:?}) | {:.0} |", median(rays));
}
