//! Remote packs against real servers on loopback: Debian's nginx for what
//! a deployment looks like, and a fault-injecting server for what breaks
//! (5xx answers, truncated bodies, a slow server, ignored ranges, a pack
//! replaced mid-session). Every transfer is counted by the client.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use planet_remote::testing::{FaultServer, Nginx, file_bytes};
use planet_remote::{RemoteError, RemoteOptions, open_pack};
use planet_terrain::ground::{PackSource, sample_ground};
use planet_terrain::pack::{Codec, Coverage, FetchFailure, Pack, PackError, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, Geodetic, TILE_STORED_SAMPLE_COUNT, TileAddress};

/// Tiles of depths 0..=3 plus the first of depth 4: 1,000 tiles.
fn tile_set() -> Vec<TileAddress> {
    let all = (0..=4u8).flat_map(|d| {
        let n = 1u32 << d;
        (0..6u8).flat_map(move |f| (0..n).flat_map(move |x| (0..n).map(move |y| TileAddress::new(f, d, x, y).unwrap())))
    });
    all.take(1000).collect()
}

/// A ~100 MB codec-2 pack of incompressible noise (so its size is real):
/// `(directory, path, bytes)`. Written once into the target's test scratch
/// directory and moved into place whole, then reused by every test process
/// and every later run: a temporary directory held in a static is never
/// dropped, so each process (nextest runs one per test) left its 100 MB in
/// /tmp. Bump the directory's version when the content changes.
fn big_pack() -> &'static (PathBuf, PathBuf, u64) {
    static PACK: OnceLock<(PathBuf, PathBuf, u64)> = OnceLock::new();
    PACK.get_or_init(|| {
        let shared_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("remote-big-pack-v1");
        let shared = shared_dir.join("big.planetpack");
        if Pack::open(&shared).is_ok() {
            let length = std::fs::metadata(&shared).unwrap().len();
            return (shared_dir, shared, length);
        }
        std::fs::create_dir_all(&shared_dir).unwrap();
        let private = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let path = private.path().join("big.planetpack");
        let tiles = tile_set();
        let spec = PackSpec {
            body: Body::earth(),
            tier: "noise".into(),
            codec: Codec::HeightsClassesColour,
            height_data_depth: 4,
            colour_data_depth: 4,
            coverage: Coverage::GLOBAL,
            fingerprint: [9; 32],
            compression_level: 1,
        };
        let writer = PackWriter::create(&path, spec, tiles.iter().copied()).unwrap();
        std::thread::scope(|scope| {
            for part in tiles.chunks(500) {
                let writer = &writer;
                scope.spawn(move || {
                    for &tile in part {
                        let mut state = tile.key().raw().wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                        let mut next = move || {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            state
                        };
                        let heights: Vec<f64> =
                            (0..TILE_STORED_SAMPLE_COUNT).map(|_| (next() % 8000) as f64 - 2000.0).collect();
                        let classes: Vec<u8> = (0..TILE_STORED_SAMPLE_COUNT).map(|_| next() as u8).collect();
                        let colour: Vec<[u8; 3]> =
                            (0..TILE_STORED_SAMPLE_COUNT).map(|_| [next() as u8, next() as u8, next() as u8]).collect();
                        let content = TileContent {
                            heights: &heights,
                            classes: Some(&classes),
                            colour: Some(&colour),
                            geometric_error: 1.0,
                            measured: true,
                            voids: None,
                        };
                        writer.put(tile, &content).unwrap();
                    }
                });
            }
        });
        writer.finish().unwrap();
        let length = std::fs::metadata(&path).unwrap().len();
        // Atomic: a concurrent test process sees the whole pack or none.
        std::fs::rename(&path, &shared).unwrap();
        (shared_dir, shared, length)
    })
}

fn quick() -> RemoteOptions {
    RemoteOptions {
        retries: 3,
        backoff: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..Default::default()
    }
}

fn everest() -> Geodetic {
    Geodetic::from_degrees(27.988, 86.925, 0.0)
}

#[test]
fn opening_a_100_mb_pack_and_sampling_a_point_transfers_under_one_percent() {
    let (dir, path, length) = big_pack();
    assert!(*length > 100_000_000, "the pack is {length} bytes");
    let nginx = Nginx::serve(dir);
    let (pack, stats) = open_pack(&nginx.url("big.planetpack"), &quick()).unwrap();
    let source = PackSource::new(Arc::new(pack));
    let remote = sample_ground(&source, everest(), 4).unwrap();
    let local = sample_ground(&PackSource::new(Arc::new(Pack::open(path).unwrap())), everest(), 4).unwrap();
    assert_eq!(remote.elevation_m, local.elevation_m, "the same ground over HTTP");
    let share = stats.bytes() as f64 / *length as f64;
    println!(
        "sampled one point: {} requests, {} bytes, {:.3}% of {length}",
        stats.requests(),
        stats.bytes(),
        share * 100.0
    );
    assert!(share < 0.01, "{} bytes transferred, {:.2}% of the pack", stats.bytes(), share * 100.0);
}

#[test]
fn every_page_and_payload_reads_back_the_same_through_nginx() {
    let (dir, path, _) = big_pack();
    let nginx = Nginx::serve(dir);
    let options = RemoteOptions { memory_bytes: 8 << 20, ..quick() };
    let (remote, stats) = open_pack(&nginx.url("big.planetpack"), &options).unwrap();
    let local = Pack::open(path).unwrap();
    assert_eq!(remote.verify().unwrap(), local.verify().unwrap());
    let (a, b) = (remote.all_entries().unwrap(), local.all_entries().unwrap());
    assert_eq!(a, b);
    for e in a.iter().step_by(97) {
        assert_eq!(remote.payload(e).unwrap(), local.payload(e).unwrap(), "{}", e.tile());
    }
    // Adjacent payloads come in runs: far fewer requests than tiles.
    assert!(stats.requests() < a.len() as u64 / 4, "{} requests for {} tiles", stats.requests(), a.len());
    let requests = stats.requests() as usize;
    assert!(nginx.requests_logged_reaching(requests) >= requests, "nginx served every request the client counted");
}

#[test]
fn adjacent_tiles_are_fetched_in_one_range_and_connections_are_kept() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    let (pack, stats) = open_pack(&server.url(), &quick()).unwrap();
    // Forty tiles next to each other in key order: their payloads are too.
    let mut in_key_order = tile_set();
    in_key_order.sort_by_key(|t| t.key());
    let tiles: Vec<TileAddress> = in_key_order[600..640].to_vec();
    let before = stats.requests();
    pack.prefetch(&tiles).unwrap();
    let after_prefetch = stats.requests();
    for &tile in &tiles {
        pack.read_tile(tile).unwrap();
    }
    // Index pages (directory and leaf) were read first; then one range for
    // the 40 payloads, which lie next to each other in key order; reading
    // them after the prefetch costs nothing more.
    assert!(after_prefetch - before <= 3, "{} requests", after_prefetch - before);
    assert_eq!(stats.requests(), after_prefetch, "every tile came from the prefetched blocks");
    assert_eq!(server.connections.load(Ordering::SeqCst), 1, "one kept-alive connection for every request");
}

#[test]
fn transient_failures_are_retried_with_backoff() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    server.faults.fail_next.store(2, Ordering::SeqCst);
    let (pack, stats) = open_pack(&server.url(), &quick()).unwrap();
    assert_eq!(stats.retries(), 2, "two 503 answers, then the open went through");
    server.faults.truncate_next.store(1, Ordering::SeqCst);
    let tile = tile_set()[700];
    pack.read_tile(tile).expect("a truncated body is fetched again");
    assert_eq!(stats.retries(), 3);
    // A server that keeps failing: the error names the URL, the range and the attempts.
    server.faults.fail_next.store(100, Ordering::SeqCst);
    let e = pack.read_tile(tile_set()[900]).unwrap_err();
    let chain = format!("{e}: {}", std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default());
    assert!(
        chain.contains(&server.url()) && chain.contains("HTTP 503") && chain.contains("after 4 attempts"),
        "{chain}"
    );
}

#[test]
fn a_slow_server_times_out_and_is_retried() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    // A timeout far above a loopback answer (even on a loaded machine) and
    // far below the delay.
    let options = RemoteOptions { timeout: Duration::from_millis(600), ..quick() };
    server.faults.delay_ms.store(2000, Ordering::SeqCst);
    server.faults.delay_next.store(1, Ordering::SeqCst);
    let (_, stats) = open_pack(&server.url(), &options).expect("the second attempt is answered in time");
    assert_eq!(stats.retries(), 1);
    server.faults.delay_all.store(true, Ordering::SeqCst);
    let e = open_pack(&server.url(), &options).unwrap_err();
    assert!(matches!(e, RemoteError::Request { attempts: 4, .. }), "{e}");
    assert!(e.to_string().to_lowercase().contains("timeout") || e.to_string().contains("timed out"), "{e}");
}

/// Regression (#31): a dead-slow server took 77 s to fail a read (15 s a
/// request, four retries). A read now gives up at its deadline, attempts
/// and waits included.
#[test]
fn a_dead_slow_server_fails_a_read_by_its_deadline() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    server.faults.delay_ms.store(5000, Ordering::SeqCst);
    server.faults.delay_all.store(true, Ordering::SeqCst);
    let options = RemoteOptions {
        timeout: Duration::from_millis(800),
        deadline: Duration::from_millis(1500),
        retries: 10,
        backoff: Duration::from_millis(50),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let e = open_pack(&server.url(), &options).unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2500), "gave up after {took:?}");
    assert!(e.to_string().contains("deadline"), "{e}");
}

#[test]
fn a_pack_replaced_mid_session_is_an_error_never_a_mix() {
    let (_, path, _) = big_pack();
    let bytes = file_bytes(path);
    let server = FaultServer::serve(bytes.clone());
    let cache = tempfile::tempdir().unwrap();
    let options = RemoteOptions { cache_dir: Some(cache.path().to_owned()), ..quick() };
    let (pack, _) = open_pack(&server.url(), &options).unwrap();
    let early = tile_set()[10];
    let before = pack.read_tile(early).unwrap();
    let mut changed = bytes;
    let n = changed.len();
    changed[n - 5] ^= 0xff;
    server.replace(changed);
    let e = pack.read_tile(tile_set()[999]).unwrap_err();
    let chain = format!("{e}: {}", std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default());
    assert!(chain.contains("changed while it was being read") && chain.contains("\"v1\""), "{chain}");
    // Cached blocks of the old version still serve the old pack whole...
    assert_eq!(pack.read_tile(early).unwrap().heights(), before.heights());
    // ...and a new session sees the new version, never the old blocks.
    let (fresh, stats) = open_pack(&server.url(), &options).unwrap();
    // The byte changed lies in the last payload: the tile with the largest key.
    let last = tile_set().into_iter().max_by_key(|t| t.key()).unwrap();
    assert!(matches!(
        fresh.read_tile(last).unwrap_err().rule(),
        planet_terrain::pack::PackError::PayloadChecksum { .. }
    ));
    assert!(stats.requests() >= 2, "the new version's blocks were fetched, not taken from the cache");
}

#[test]
fn the_disk_cache_serves_a_second_session() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    let cache = tempfile::tempdir().unwrap();
    let options = RemoteOptions { cache_dir: Some(cache.path().to_owned()), cache_bytes: 4 << 20, ..quick() };
    let tiles = &tile_set()[100..110];
    let (first, _) = open_pack(&server.url(), &options).unwrap();
    let decoded: Vec<_> = tiles.iter().map(|&t| first.read_tile(t).unwrap().heights()).collect();
    let (second, stats) = open_pack(&server.url(), &options).unwrap();
    let again: Vec<_> = tiles.iter().map(|&t| second.read_tile(t).unwrap().heights()).collect();
    assert_eq!(decoded, again);
    assert_eq!(stats.requests(), 1, "only the open's request (the validator): every block came from disk");
    // The budget holds: reading more than 4 MiB leaves at most 4 MiB on disk.
    for &t in &tile_set()[200..300] {
        second.read_tile(t).unwrap();
    }
    let on_disk: u64 = walk(cache.path());
    assert!(on_disk <= 4 << 20, "{on_disk} bytes on disk");
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| if e.path().is_dir() { walk(&e.path()) } else { e.metadata().unwrap().len() })
        .sum()
}

#[test]
fn a_server_without_ranges_is_refused_by_name() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    server.faults.ignore_ranges.store(true, Ordering::SeqCst);
    let e = open_pack(&server.url(), &quick()).unwrap_err();
    assert!(matches!(e, RemoteError::NoRanges { .. }), "{e}");
    assert!(e.to_string().contains("does not serve byte ranges"), "{e}");
    let e = open_pack("http://127.0.0.1:9/none.planetpack", &RemoteOptions { retries: 1, ..quick() }).unwrap_err();
    assert!(e.to_string().contains("http://127.0.0.1:9/none.planetpack"), "{e}");
}

/// Regression (#50): a server that turned slow after the open cost each
/// tile its own retries and deadline, one after another, minutes without a
/// word. A read that failed past its retries now starts an outage: reads
/// fail at once naming it until it ends, then the server is asked again.
#[test]
fn a_failed_read_starts_an_outage_that_later_reads_wait_out() {
    let (_, path, _) = big_pack();
    let server = FaultServer::serve(file_bytes(path));
    let (pack, stats) = open_pack(&server.url(), &quick()).unwrap();
    server.faults.fail_next.store(quick().retries + 1, Ordering::SeqCst);
    let failed = pack.read_tile(tile_set()[300]).unwrap_err();
    assert!(
        matches!(failed.rule(), PackError::Fetch { failure: FetchFailure::Failing, .. }),
        "a server answering 503 is failing, and may answer later: {failed}"
    );
    let requests = stats.requests();
    let started = std::time::Instant::now();
    let waited = pack.read_tile(tile_set()[600]).unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(200), "failed at once: {:?}", started.elapsed());
    let message = waited.to_string();
    assert!(
        message.contains(&server.url()) && message.contains("failing") && message.contains("HTTP 503"),
        "names the URL, what happened and the last answer: {message}"
    );
    assert_eq!(stats.requests(), requests, "nothing was asked during the outage");
    std::thread::sleep(Duration::from_millis(1100));
    pack.read_tile(tile_set()[600]).expect("after the outage the server is asked again, and answers");
}

#[test]
fn a_read_past_its_deadline_is_slow_and_a_pack_replaced_is_changed() {
    let (_, path, _) = big_pack();
    let bytes = file_bytes(path);
    let server = FaultServer::serve(bytes.clone());
    let options =
        RemoteOptions { timeout: Duration::from_millis(300), deadline: Duration::from_millis(800), ..quick() };
    let (pack, _) = open_pack(&server.url(), &options).unwrap();
    server.faults.delay_ms.store(2000, Ordering::SeqCst);
    server.faults.delay_all.store(true, Ordering::SeqCst);
    let slow = pack.read_tile(tile_set()[400]).unwrap_err();
    assert!(matches!(slow.rule(), PackError::Fetch { failure: FetchFailure::Slow, .. }), "{slow}");
    assert!(slow.to_string().contains("slow"), "{slow}");

    let fresh = FaultServer::serve(bytes.clone());
    let (pack, _) = open_pack(&fresh.url(), &quick()).unwrap();
    let mut changed = bytes;
    changed.push(0);
    fresh.replace(changed);
    let replaced = pack.read_tile(tile_set()[500]).unwrap_err();
    assert!(
        matches!(replaced.rule(), PackError::Fetch { failure: FetchFailure::Changed, .. }),
        "a replaced pack is given up, not waited for: {replaced}"
    );
    assert!(!FetchFailure::Changed.is_transient() && FetchFailure::Slow.is_transient());
}
