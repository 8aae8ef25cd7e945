//! The paged index against the tile count: open time, resident memory and
//! lookup latency for packs of 10^2 to 10^7 tiles, next to what reading and
//! checking the whole index costs (what a version 1 open did).
//!
//! `cargo bench -p planet-terrain --bench index_scale [-- MAX_TILES]`
//!
//! The packs are synthetic (`testing::write_synthetic_index_pack`: real
//! index, 9-byte stand-in payloads), written to a temporary directory and
//! removed. Lookups are of random stored tiles: "cold" opens a fresh pack
//! for every lookup (header, root, one directory and one leaf page read),
//! "warm" repeats lookups on one open pack (pages cached in its LRU).

use std::time::Instant;

use planet_terrain::pack::Pack;
use planet_terrain::testing::write_synthetic_index_pack;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A deterministic stream of indices in 0..n (SplitMix64).
fn random_indices(n: u64, count: usize) -> Vec<u64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        })
        .collect()
}

fn main() {
    let max: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000_000);
    let dir = tempfile::tempdir().expect("a temporary directory");
    println!(
        "| tiles | file MB | index MB | open us (p50) | RSS after open KiB | cold lookup us p50 / p99 | warm lookup us p50 / p99 | pages read (warm, 20k lookups) | whole index read+check ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut n = 100u64;
    while n <= max {
        let path = dir.path().join(format!("synthetic-{n}.planetpack"));
        let length = write_synthetic_index_pack(&path, n).expect("writing the synthetic pack");
        // Every stored key, to draw lookups from (read once, outside the timings).
        let keys: Vec<_> = Pack::open(&path).unwrap().keys().map(|k| k.unwrap().address()).collect();

        let mut opens: Vec<f64> = (0..51)
            .map(|_| {
                let start = Instant::now();
                let pack = Pack::open(&path).unwrap();
                let t = start.elapsed().as_secs_f64() * 1e6;
                std::hint::black_box(pack.tile_count());
                t
            })
            .collect();
        opens.sort_by(f64::total_cmp);

        let before = resident_kib();
        let pack = Pack::open(&path).unwrap();
        let after_open = resident_kib().saturating_sub(before);

        let mut cold: Vec<f64> = random_indices(n, 300)
            .into_iter()
            .map(|i| {
                let start = Instant::now();
                let fresh = Pack::open(&path).unwrap();
                let found = fresh.entry(keys[i as usize]).unwrap();
                let t = start.elapsed().as_secs_f64() * 1e6;
                assert!(found.is_some());
                t
            })
            .collect();
        cold.sort_by(f64::total_cmp);

        let mut warm: Vec<f64> = random_indices(n, 20_000)
            .into_iter()
            .map(|i| {
                let start = Instant::now();
                let found = pack.entry(keys[i as usize]).unwrap();
                let t = start.elapsed().as_secs_f64() * 1e6;
                assert!(found.is_some());
                t
            })
            .collect();
        warm.sort_by(f64::total_cmp);

        let start = Instant::now();
        let all = pack.all_entries().unwrap().len();
        let whole = start.elapsed().as_secs_f64() * 1e3;
        assert_eq!(all as u64, n);

        println!(
            "| {n} | {:.1} | {:.2} | {:.1} | {after_open} | {:.1} / {:.1} | {:.2} / {:.2} | {} | {whole:.1} |",
            length as f64 / 1e6,
            pack.layout().bytes() as f64 / 1e6,
            percentile(&opens, 0.5),
            percentile(&cold, 0.5),
            percentile(&cold, 0.99),
            percentile(&warm, 0.5),
            percentile(&warm, 0.99),
            pack.pages_read(),
        );
        drop(pack);
        std::fs::remove_file(&path).ok();
        n *= 10;
    }
    writer_state(dir.path());
}

/// What a writer holds in memory per declared tile while a bake runs,
/// measured as resident growth when declaring every tile of a global pack
/// to depth 8, 9 and 10 in key order (as a bake declares them). The staged
/// set itself lives in scratch files (`pack/staged.rs`), so what remains
/// resident is its sparse in-memory key sample. Beside it, the `BTreeMap`
/// of keys to `Option<(payload offset, entry)>` the first writer held,
/// built from the same keys.
fn writer_state(dir: &std::path::Path) {
    use planet_terrain::Body;
    use planet_terrain::pack::{Codec, Coverage, IndexEntry, PackSpec, PackWriter};
    let global = |depth: u8| {
        (0..=depth).flat_map(|d| {
            (0..6u64).flat_map(move |f| {
                let base = (u64::from(d) << 59) | (f << 56);
                (0..1u64 << (2 * u32::from(d))).map(move |h| {
                    planet_terrain::geo::address::TileKey::from_raw(base | h).expect("in range").address()
                })
            })
        })
    };
    println!();
    println!("| depth | tiles | writer state KiB | writer state B/tile | BTreeMap before B/tile |");
    println!("|---:|---:|---:|---:|---:|");
    // Every writer first, then every map: memory freed by a map stays in
    // the allocator and would hide a later writer's growth.
    let depths = [8u8, 9, 10];
    let writer_bytes: Vec<f64> = depths
        .iter()
        .map(|&depth| {
            let spec = PackSpec {
                body: Body::earth(),
                tier: "bench".into(),
                codec: Codec::Heights,
                height_data_depth: depth,
                colour_data_depth: 0,
                coverage: Coverage::GLOBAL,
                fingerprint: [1; 32],
                compression_level: 1,
            };
            let before = resident_kib();
            let writer = PackWriter::create(&dir.join("state.planetpack"), spec, global(depth)).expect("a writer");
            let bytes = resident_kib().saturating_sub(before) as f64 * 1024.0;
            std::hint::black_box(writer.pending_count());
            bytes
        })
        .collect();
    for (&depth, writer_bytes) in depths.iter().zip(writer_bytes) {
        let tiles = global(depth).count() as f64;
        let before = resident_kib();
        let map: std::collections::BTreeMap<_, Option<(u64, IndexEntry)>> =
            global(depth).map(|t| (t.key(), None)).collect();
        let map_bytes = resident_kib().saturating_sub(before) as f64 * 1024.0;
        std::hint::black_box(map.len());
        drop(map);
        println!(
            "| {depth} | {tiles:.0} | {:.0} | {:.3} | {:.0} |",
            writer_bytes / 1024.0,
            writer_bytes / tiles,
            map_bytes / tiles
        );
    }
}
