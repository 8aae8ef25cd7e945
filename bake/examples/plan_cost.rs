//! What a shard spends planning a bake before it bakes anything, from no
//! data: the shard plan of a global set whose every tile at DEPTH is a
//! subtree root (the 30 m Earth: depth 11, 25 M roots), cut SHARDS ways,
//! planned by units above the roots (as every shard and wave task plans)
//! and by every root (the plan before units); and the plan of a regional
//! set of the same depth over Africa's box (35 S to 38 N, 18 W to 52 E),
//! planned from the coverage: whole tiles inside it, roots on its rim.
//! Prints the minimum of ROUNDS rounds of each, and how evenly each cut
//! shares the work.
//!
//! usage: cargo run --release -p planet-bake --example plan_cost -- [DEPTH] [SHARDS] [ROUNDS]
//!        (defaults 11 1000 3)

use anyhow::{Context, Result};
use std::time::Instant;

/// Africa's box: south, west, north, east.
const AFRICA: [f64; 4] = [-35.0, -18.0, 38.0, 52.0];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let depth: u8 = args.first().map_or(Ok(11), |a| a.parse()).context("DEPTH")?;
    let shards: u32 = args.get(1).map_or(Ok(1000), |a| a.parse()).context("SHARDS")?;
    let rounds: usize = args.get(2).map_or(Ok(3), |a| a.parse()).context("ROUNDS")?;
    type Plan = Box<dyn Fn() -> Result<Vec<u64>, planet_bake::BakeError>>;
    let plans: [(&str, Plan); 3] = [
        ("global, by units", Box::new(move || planet_bake::global_plan_for_bench(depth, shards, false))),
        ("global, by every root", Box::new(move || planet_bake::global_plan_for_bench(depth, shards, true))),
        (
            "regional (Africa), from its coverage",
            Box::new(move || planet_bake::regional_plan_for_bench(AFRICA, depth, shards)),
        ),
    ];
    for (what, plan) in plans {
        let mut best = f64::INFINITY;
        let mut work = Vec::new();
        for _ in 0..rounds {
            let started = Instant::now();
            work = plan()?;
            best = best.min(started.elapsed().as_secs_f64());
        }
        let (lo, hi) = (work.iter().min().copied().unwrap_or(0), work.iter().max().copied().unwrap_or(0));
        println!(
            "depth {depth}, {shards} shards, {what}: {best:.3} s (min of {rounds}); largest part's work {:.3}x the smallest's",
            hi as f64 / lo.max(1) as f64
        );
    }
    Ok(())
}
