//! Pack size and encode time at each zstd level, on a finished pack's own
//! payloads: the measurement the bake's default level is chosen by
//! (PERFORMANCE.md, "Bake throughput"). Each payload is decompressed once to
//! the codec's raw planes, then compressed again at every level with one
//! reused context per level (as the bake's encoder does), so the figures are
//! zstd's alone, without sampling or the rest of the bake.
//!
//! usage: cargo run --release -p planet-bake --example zstd_levels -- PACK [LEVEL...]

use anyhow::{Context, Result, bail};
use planet_terrain::pack::Pack;
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((path, levels)) = args.split_first() else { bail!("usage: zstd_levels PACK [LEVEL...]") };
    let levels: Vec<i32> = if levels.is_empty() {
        (1..=9).collect()
    } else {
        levels.iter().map(|l| l.parse().with_context(|| format!("level {l}"))).collect::<Result<_>>()?
    };
    let pack = Pack::open(path).with_context(|| format!("opening {path}"))?;
    let capacity = pack.header().codec.decoded_length();
    let mut raws = Vec::new();
    for entry in pack.entries() {
        let entry = entry?;
        let payload = pack.payload(&entry)?;
        raws.push(zstd::bulk::decompress(&payload, capacity)?);
    }
    let raw_bytes: usize = raws.iter().map(Vec::len).sum();
    println!("{path}: {} tiles, {raw_bytes} raw bytes", raws.len());
    println!("| level | payload bytes | vs level 9 | encode s (one thread) | decode s |");
    println!("|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    for &level in &levels {
        let mut compressor = zstd::bulk::Compressor::new(level)?;
        let start = Instant::now();
        let compressed: Vec<Vec<u8>> = raws.iter().map(|r| compressor.compress(r)).collect::<std::io::Result<_>>()?;
        let encode_s = start.elapsed().as_secs_f64();
        let mut decompressor = zstd::bulk::Decompressor::new()?;
        let start = Instant::now();
        for c in &compressed {
            decompressor.decompress(c, capacity)?;
        }
        let decode_s = start.elapsed().as_secs_f64();
        rows.push((level, compressed.iter().map(Vec::len).sum::<usize>(), encode_s, decode_s));
    }
    let nine = rows.iter().find(|r| r.0 == 9).map_or(rows[0].1, |r| r.1) as f64;
    for (level, bytes, encode_s, decode_s) in rows {
        let ratio = (bytes as f64 / nine - 1.0) * 100.0;
        println!("| {level} | {bytes} | {ratio:+.1}% | {encode_s:.3} | {decode_s:.3} |");
    }
    Ok(())
}
