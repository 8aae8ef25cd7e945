//! Selection time for Earth from orbit to the ground, per node budget.
//!
//! `cargo bench -p planet-terrain --bench select`
//!
//! A procedural Earth (bounds and geometric errors from the source, no tile
//! decodes), cameras looking 30 degrees below the horizon over the Alps,
//! 1920 x 1080, 60-degree vertical field of view. Each figure is the median
//! of 300 selections on one thread. With a 1-pixel target real relief needs
//! a few hundred nodes, so the budgets are exercised with a 0.05-pixel
//! target as well.

use std::time::Instant;

use planet_terrain::camera::View;
use planet_terrain::ground::{HeightSource, ProceduralSource};
use planet_terrain::lod::{SelectionSettings, select};
use planet_terrain::{Body, Geodetic};

fn main() {
    let source = ProceduralSource::new(Body::earth(), 2026);
    println!("| altitude | target px | budget | nodes | drawn | effective error px | median ms | p99 ms |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, altitude) in [("400 km", 400_000.0), ("10 km", 10_000.0), ("100 m", 100.0), ("2 m", 2.0)] {
        let ground = planet_terrain::ground::sample_ground(&source, Geodetic::from_degrees(46.5, 8.0, 0.0), 14)
            .unwrap()
            .elevation_m;
        let view = View::looking_from(
            source.body(),
            Geodetic::from_degrees(46.5, 8.0, ground.max(0.0) + altitude),
            30.0,
            -30.0,
            60f64.to_radians(),
            (1920, 1080),
        );
        for (target, budget) in [(1.0, 1024usize), (1.0, 4096), (0.05, 1024), (0.05, 4096), (0.05, 16384)] {
            let settings = SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
            let mut times = Vec::with_capacity(300);
            let mut last = None;
            for _ in 0..300 {
                let start = Instant::now();
                let cut = select(&source, &view, &settings).unwrap();
                times.push(start.elapsed().as_secs_f64() * 1e3);
                last = Some(cut);
            }
            times.sort_by(f64::total_cmp);
            let cut = last.unwrap();
            println!(
                "| {label} | {target} | {budget} | {} | {} | {:.3} | {:.3} | {:.3} |",
                cut.nodes.len(),
                cut.statistics.nodes_drawn,
                cut.effective_screen_error_px,
                times[times.len() / 2],
                times[times.len() * 99 / 100]
            );
        }
    }
}
