//! What a shard spends planning a global bake before it bakes anything:
//! the shard plan of a global set whose every tile at DEPTH is a subtree
//! root (the 30 m Earth: depth 11, 25 M roots), cut SHARDS ways, planned by
//! units above the roots (as every shard and wave task now plans) and by
//! every root (the plan before units). Prints the minimum of ROUNDS rounds
//! of each, and how evenly each cut shares the work. Both include the tile
//! set's identity, which for a global set is a digest of its depth.
//!
//! usage: cargo run --release -p planet-bake --example plan_cost -- [DEPTH] [SHARDS] [ROUNDS]
//!        (defaults 11 1000 3)

use anyhow::{Context, Result};
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let depth: u8 = args.first().map_or(Ok(11), |a| a.parse()).context("DEPTH")?;
    let shards: u32 = args.get(1).map_or(Ok(1000), |a| a.parse()).context("SHARDS")?;
    let rounds: usize = args.get(2).map_or(Ok(3), |a| a.parse()).context("ROUNDS")?;
    for (what, by_roots) in [("by units", false), ("by every root", true)] {
        let mut best = f64::INFINITY;
        let mut work = Vec::new();
        for _ in 0..rounds {
            let started = Instant::now();
            work = planet_bake::global_plan_for_bench(depth, shards, by_roots)?;
            best = best.min(started.elapsed().as_secs_f64());
        }
        let (lo, hi) = (work.iter().min().copied().unwrap_or(0), work.iter().max().copied().unwrap_or(0));
        println!(
            "depth {depth}, {shards} shards, planned {what}: {best:.3} s (min of {rounds}); largest part's work {:.3}x the smallest's",
            hi as f64 / lo.max(1) as f64
        );
    }
    Ok(())
}
