//! Selection time for Earth from orbit to the ground, per node budget,
//! against the algorithm it replaced.
//!
//! `cargo bench -p planet-terrain --bench select`
//!
//! A procedural Earth (bounds and geometric errors from the source, no tile
//! decodes), cameras looking 30 degrees below the horizon over the Alps,
//! 1920 x 1080, 60-degree vertical field of view. Each figure is the median
//! of 300 selections on one thread. With a 1-pixel target real relief needs
//! a few hundred nodes, so the budgets are exercised with 0.05- and
//! 0.02-pixel targets as well (up to 4k-node cuts).
//!
//! The key decision: the old algorithm (the integration tests' bit-for-bit
//! reference, included by path) runs interleaved with the current one, one
//! selection each in turn (alternating which goes first), so both columns
//! see the same load on a shared
//! machine and the before/after ratio is honest even when the absolute
//! figures drift. `SELECT_BENCH_AFTER_ONLY=1` skips the old algorithm (for
//! a profiler's view of the current one); `SELECT_BENCH_SELECTOR_ONLY=1`
//! also runs `select` only once per row, so a profile is the `Selector`'s.
//!
//! Three more columns time the frame-to-frame `Selector` (`select`'s cut
//! bit for bit, reusing last frame's geometry): on the same view every
//! frame (the floor), on a camera moving 1% of its altitude forward and
//! turning 0.1 degrees each frame (a flight), and on a fast flight (20% of
//! the altitude and 2 degrees of turn per frame).

#[path = "../tests/it/select_reference.rs"]
mod select_reference;

use std::time::Instant;

use planet_terrain::camera::View;
use planet_terrain::ground::{HeightSource, ProceduralSource};
use planet_terrain::lod::{Cut, SelectionSettings, Selector, select};
use planet_terrain::{Body, Geodetic};

const RUNS: usize = 300;

#[expect(
    clippy::too_many_lines,
    reason = "a bench binary: each measured case set up, timed and printed in turn, in the order PERFORMANCE.md lists them"
)]
fn main() {
    let after_only = std::env::var_os("SELECT_BENCH_AFTER_ONLY").is_some();
    let selector_only = std::env::var_os("SELECT_BENCH_SELECTOR_ONLY").is_some();
    let source = ProceduralSource::new(Body::earth(), 2026);
    println!(
        "| altitude | target px | budget | nodes | drawn | effective error px | before median ms | after median ms | after p99 ms | speed-up | Selector, same view | Selector, moving | Selector, fast |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, altitude) in [("400 km", 400_000.0), ("10 km", 10_000.0), ("100 m", 100.0), ("2 m", 2.0)] {
        let ground = planet_terrain::ground::sample_ground(&source, Geodetic::from_degrees(46.5, 8.0, 0.0), 14)
            .unwrap()
            .elevation_m;
        let flight = |run: usize, speed: f64, turn: f64| {
            // `speed` of the altitude per frame, heading 30 degrees (north-east).
            let step = speed * altitude / 6_371_000.0 * f64::from(run as u32);
            View::looking_from(
                source.body(),
                Geodetic::from_degrees(
                    46.5 + (step * 30f64.to_radians().cos()).to_degrees(),
                    8.0 + (step * 30f64.to_radians().sin() / 46.5f64.to_radians().cos()).to_degrees(),
                    ground.max(0.0) + altitude,
                ),
                30.0 + turn * run as f64,
                -30.0,
                60f64.to_radians(),
                (1920, 1080),
            )
        };
        let view = flight(0, 0.0, 0.0);
        let moving: Vec<View> = (0..RUNS).map(|run| flight(run, 0.01, 0.1)).collect();
        let fast: Vec<View> = (0..RUNS).map(|run| flight(run, 0.2, 2.0)).collect();
        for (target, budget) in [(1.0, 1024usize), (0.05, 1024), (0.05, 4096), (0.02, 4096), (0.02, 16384)] {
            let settings = SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
            let (mut before, mut after) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
            let mut last = None;
            for run in 0..if selector_only { 1 } else { RUNS } {
                // Alternate which goes first, so neither always inherits the
                // other's cache.
                let (mut old, mut cut) = (None, None);
                for turn in [run % 2, 1 - run % 2] {
                    let start = Instant::now();
                    if turn == 0 && !after_only {
                        old = Some(select_reference::select_reference(&source, &view, &settings).unwrap());
                        before.push(start.elapsed().as_secs_f64() * 1e3);
                    } else if turn == 1 {
                        cut = Some(select(&source, &view, &settings).unwrap());
                        after.push(start.elapsed().as_secs_f64() * 1e3);
                    }
                }
                let cut = cut.unwrap();
                if let Some(old) = old {
                    assert_eq!(cut.nodes, old.nodes, "the cut must not change");
                } else {
                    before.push(f64::NAN);
                }
                last = Some(cut);
            }
            for times in [&mut before, &mut after] {
                times.sort_by(f64::total_cmp);
            }
            let cut = last.unwrap();
            let (old_median, median) = (before[before.len() / 2], after[after.len() / 2]);
            let median_of = |views: &mut dyn Iterator<Item = &View>, select: &mut dyn FnMut(&View) -> Cut| {
                let mut times: Vec<f64> = views
                    .map(|view| {
                        let start = Instant::now();
                        std::hint::black_box(select(view));
                        start.elapsed().as_secs_f64() * 1e3
                    })
                    .collect();
                times.sort_by(f64::total_cmp);
                times[times.len() / 2]
            };
            let mut selector = Selector::new();
            let same_view = median_of(&mut std::iter::repeat_n(&view, RUNS), &mut |view: &View| {
                selector.select(&source, view, &settings).unwrap()
            });
            let mut selector = Selector::new();
            let flying =
                median_of(&mut moving.iter(), &mut |view: &View| selector.select(&source, view, &settings).unwrap());
            let mut selector = Selector::new();
            let darting =
                median_of(&mut fast.iter(), &mut |view: &View| selector.select(&source, view, &settings).unwrap());
            println!(
                "| {label} | {target} | {budget} | {} | {} | {:.3} | {old_median:.3} | {median:.3} | {:.3} | {:.1}x | {same_view:.3} | {flying:.3} | {darting:.3} |",
                cut.nodes.len(),
                cut.statistics.nodes_drawn,
                cut.effective_screen_error_px,
                after[after.len() * 99 / 100],
                old_median / median,
            );
        }
    }
}
