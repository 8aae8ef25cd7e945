//! Time of the raster's bilinear evaluation alone, over tile-shaped blocks of
//! places (131 x 131, the core's longitudes shared column by column, as on
//! an equatorial face) covering the raster: the minimum of several rounds,
//! so a change to `Raster::bilinear_tile` or `Raster::bilinear_at` can be
//! judged on a machine shared with other builds, where a whole bake's time
//! moves by more than the change.
//!
//! BLOCK_DEGREES (default 15) sets a block's side: a block as wide as 131
//! of the raster's pixels spaces its places as a bake at the raster's
//! supported depth does (one pixel apart), where each block's pixels are
//! read once; 15 degrees spaces them several pixels apart on a fine raster.
//!
//! usage: cargo run --release -p planet-bake --example bilinear_bench -- RASTER [ROUNDS] [BLOCK_DEGREES]

use anyhow::{Context, Result, bail};
use planet_bake::raster::Raster;
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else { bail!("usage: bilinear_bench RASTER [ROUNDS]") };
    let rounds: usize = args.get(1).map_or(Ok(7), |r| r.parse()).context("ROUNDS")?;
    let side: f64 = args.get(2).map_or(Ok(15.0), |r| r.parse()).context("BLOCK_DEGREES")?;
    if !(side > 0.0 && side <= 15.0) {
        bail!("BLOCK_DEGREES must be in (0, 15]");
    }
    let raster = Raster::open(std::path::Path::new(path), 2 << 30)?;
    let n = 131;
    // 24 x 12 blocks of 131 x 131 places, each `side` degrees square (15:
    // covering the raster), slightly bent (latitude varies along a row
    // too, as on a cube face).
    let blocks: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = (0..12)
        .flat_map(|by| (0..24).map(move |bx| (bx, by)))
        .map(|(bx, by)| {
            let west = -180.0 + 15.0 * f64::from(bx);
            let south = -90.0 + 15.0 * f64::from(by);
            let columns: Vec<f64> = (1..n - 1).map(|i| west + side * (i as f64 - 0.5) / 129.0).collect();
            let (mut lat, mut lon) = (Vec::with_capacity(n * n), Vec::with_capacity(n * n));
            for j in 0..n {
                for i in 0..n {
                    let x = west + side * (i as f64 - 1.5) / 129.0;
                    let bend = 0.3 * ((i as f64 - 65.0) / 65.0).powi(2);
                    lat.push((south + side * (j as f64 - 1.5) / 129.0 + bend * side / 15.0).clamp(-90.0, 90.0));
                    lon.push(if (1..n - 1).contains(&i) && (1..n - 1).contains(&j) { columns[i - 1] } else { x });
                }
            }
            (lat, lon, columns)
        })
        .collect();
    // Blocks about the poles, as on the polar faces: every longitude within
    // a block (the tap sets' wrap is then unpredictable sample to sample).
    let polar: Vec<(Vec<f64>, Vec<f64>)> = (0..48)
        .map(|b| {
            let (mut lat, mut lon) = (Vec::with_capacity(n * n), Vec::with_capacity(n * n));
            let (cx, cy) = (f64::from(b % 8) - 3.5, f64::from(b / 8 % 6) - 2.5);
            let pole = if b % 2 == 0 { 1.0 } else { -1.0 };
            for j in 0..n {
                for i in 0..n {
                    let (x, y) = (cx + (i as f64 - 65.0) / 130.0, cy + (j as f64 - 65.0) / 130.0);
                    lat.push(pole * (90.0 - 7.0 * x.hypot(y)));
                    lon.push(y.atan2(x).to_degrees());
                }
            }
            (lat, lon)
        })
        .collect();
    let mut out = Vec::with_capacity(n * n);
    let mut checksum = 0.0;
    for (name, shared) in [("bilinear_tile (shared columns)", true), ("bilinear_at (every tap set)", false)] {
        let mut best = f64::INFINITY;
        for _ in 0..rounds {
            let start = Instant::now();
            for (lat, lon, columns) in &blocks {
                out.clear();
                raster.bilinear_tile(1, lat, lon, shared.then_some(&columns[..]), &mut out)?;
                checksum += out.iter().flatten().sum::<f64>();
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        let samples = blocks.len() * n * n;
        println!(
            "{name}: {samples} samples, best of {rounds}: {best:.4} s, {:.1} ns a sample",
            best / samples as f64 * 1e9
        );
    }
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        for (lat, lon) in &polar {
            out.clear();
            raster.bilinear_at(1, lat, lon, &mut out)?;
            checksum += out.iter().flatten().sum::<f64>();
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    let samples = polar.len() * n * n;
    println!(
        "bilinear_at about the poles: {samples} samples, best of {rounds}: {best:.4} s, {:.1} ns a sample",
        best / samples as f64 * 1e9
    );
    println!("checksum {checksum:e}");
    Ok(())
}
