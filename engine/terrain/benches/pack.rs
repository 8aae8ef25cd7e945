//! Pack benchmarks: open time against pack size, random tile read, and the
//! inputs for the side-by-side comparison with a GDAL Cloud Optimized GeoTIFF
//! (tools/bench/pack_vs_cog.sh runs this, then GDAL, in one run).
//!
//! `cargo bench -p planet-terrain --bench pack -- OUT_DIR [DEPTH]`
//!
//! Writes OUT_DIR/face0.planetpack (face 0 of a procedural Earth at DEPTH,
//! default 5: 1024 tiles), OUT_DIR/face0.f32 + .hdr (the same samples as one
//! mosaic, ENVI raw float32, for GDAL) and OUT_DIR/pack_bench.json.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use planet_terrain::ground::{HeightSource, ProceduralSource};
use planet_terrain::pack::{Codec, Coverage, Pack, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, TILE_CELLS, TILE_STORED_SAMPLES, TileAddress};

fn spec(codec: Codec, depth: u8) -> PackSpec {
    PackSpec {
        body: Body::earth(),
        tier: "bench".into(),
        codec,
        height_data_depth: depth,
        colour_data_depth: if codec.has_colour() { depth } else { 0 },
        coverage: Coverage::GLOBAL,
        fingerprint: [0; 32],
        compression_level: 9,
    }
}

struct Tile {
    address: TileAddress,
    heights: Vec<f64>,
    classes: Vec<u8>,
    colour: Vec<[u8; 3]>,
}

fn write(path: &Path, codec: Codec, depth: u8, tiles: &[Tile]) -> f64 {
    let start = Instant::now();
    let writer = PackWriter::create(path, spec(codec, depth), tiles.iter().map(|t| t.address)).unwrap();
    std::thread::scope(|scope| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        for chunk in tiles.chunks(tiles.len().div_ceil(threads)) {
            let writer = &writer;
            scope.spawn(move || {
                for t in chunk {
                    let content = TileContent {
                        heights: &t.heights,
                        classes: Some(&t.classes),
                        colour: Some(&t.colour),
                        geometric_error: 1.0,
                        measured: true,
                        voids: None,
                    };
                    writer.put(t.address, &content).unwrap();
                }
            });
        }
    });
    writer.finish().unwrap();
    start.elapsed().as_secs_f64()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn time_open(path: &Path, runs: usize) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let pack = Pack::open(path).unwrap();
            let elapsed = start.elapsed().as_secs_f64() * 1e6;
            std::hint::black_box(pack.tile_count() as usize);
            elapsed
        })
        .collect();
    t.sort_by(f64::total_cmp);
    percentile(&t, 0.5)
}

#[expect(
    clippy::too_many_lines,
    reason = "a bench binary: each measured case set up, timed and printed in turn, in the order PERFORMANCE.md lists them"
)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let out = PathBuf::from(args.first().map_or("target/pack-bench", String::as_str));
    let depth: u8 = args.get(1).and_then(|d| d.parse().ok()).unwrap_or(5);
    std::fs::create_dir_all(&out).unwrap();
    let n = 1u32 << depth;

    // Face 0 of a procedural Earth, every tile at `depth`.
    let source = Arc::new(ProceduralSource::new(Body::earth(), 2026));
    let addresses: Vec<TileAddress> =
        (0..n).flat_map(|x| (0..n).map(move |y| TileAddress::new(0, depth, x, y).unwrap())).collect();
    let start = Instant::now();
    let tiles: Vec<Tile> = std::thread::scope(|scope| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let handles: Vec<_> = addresses
            .chunks(addresses.len().div_ceil(threads))
            .map(|chunk| {
                let source = source.clone();
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&address| {
                            let heights: Vec<f64> =
                                source.tile(address).unwrap().heights.iter().map(|&h| f64::from(h)).collect();
                            let classes = heights.iter().map(|&h| if h < 0.0 { 1 } else { 2 }).collect();
                            let colour = heights
                                .iter()
                                .map(|&h| {
                                    let v = ((h + 6000.0) / 14000.0 * 255.0).clamp(0.0, 255.0) as u8;
                                    if h < 0.0 { [10, 40, v] } else { [v / 2, v, v / 3] }
                                })
                                .collect();
                            Tile { address, heights, classes, colour }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    eprintln!("generated {} procedural tiles in {:.1} s", tiles.len(), start.elapsed().as_secs_f64());

    // The same samples as one mosaic for GDAL: (128 n + 1)^2 core samples.
    let side = (TILE_CELLS * n + 1) as usize;
    let mut mosaic = vec![0f32; side * side];
    let stored = TILE_STORED_SAMPLES as usize;
    for t in &tiles {
        for j in 0..=TILE_CELLS as usize {
            for i in 0..=TILE_CELLS as usize {
                let gx = t.address.x() as usize * TILE_CELLS as usize + i;
                let gy = t.address.y() as usize * TILE_CELLS as usize + j;
                let row = side - 1 - gy; // north (high v) at the top
                mosaic[row * side + gx] = t.heights[(j + 1) * stored + (i + 1)] as f32;
            }
        }
    }
    let raw: Vec<u8> = mosaic.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(out.join("face0.f32"), raw).unwrap();
    std::fs::write(
        out.join("face0.hdr"),
        format!("ENVI\nsamples = {side}\nlines = {side}\nbands = 1\nheader offset = 0\nfile type = ENVI Standard\ndata type = 4\ninterleave = bsq\nbyte order = 0\n"),
    )
    .unwrap();

    // Packs for open time: growing tile counts, codec 0 and codec 2.
    let mut open_rows = Vec::new();
    let mut count = 16;
    while count <= tiles.len() {
        for codec in [Codec::Heights, Codec::HeightsClassesColour] {
            let path = out.join(format!("open-{count}-{}.planetpack", codec.code()));
            write(&path, codec, depth, &tiles[..count]);
            let bytes = std::fs::metadata(&path).unwrap().len();
            let micros = time_open(&path, 300);
            open_rows.push((count, codec.code(), bytes, micros));
        }
        count *= 4;
    }

    let pack_path = out.join("face0.planetpack");
    let write_seconds = write(&pack_path, Codec::Heights, depth, &tiles);
    let pack_bytes = std::fs::metadata(&pack_path).unwrap().len();
    let pack = Pack::open(&pack_path).unwrap();

    // Random tile reads: read + checksum + zstd + transform to u16, and
    // then to f32 metres.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let reads = 4000;
    let mut decode_us = Vec::with_capacity(reads);
    let mut metres_us = Vec::with_capacity(reads);
    let picks: Vec<TileAddress> = (0..reads).map(|_| tiles[(next() % tiles.len() as u64) as usize].address).collect();
    for &tile in &picks {
        let start = Instant::now();
        let decoded = pack.read_tile(tile).unwrap();
        decode_us.push(start.elapsed().as_secs_f64() * 1e6);
        let metres: Vec<f32> = decoded.quantised.iter().map(|&q| decoded.dequantise(q) as f32).collect();
        metres_us.push(start.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(metres);
    }
    decode_us.sort_by(f64::total_cmp);
    metres_us.sort_by(f64::total_cmp);
    // The same reads through positioned reads (`Pack::open_unmapped`), in
    // the same run: what reading a pack without a map costs.
    let unmapped = Pack::open_unmapped(&pack_path).unwrap();
    let mut pread_us: Vec<f64> = picks
        .iter()
        .map(|&tile| {
            let start = Instant::now();
            std::hint::black_box(unmapped.read_tile(tile).unwrap());
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    pread_us.sort_by(f64::total_cmp);

    println!("# planet-terrain pack bench: face 0 of a procedural Earth at depth {depth}");
    println!("tiles {}  samples per tile {}  mosaic {side}x{side}", tiles.len(), stored * stored);
    println!(
        "write (codec 0, zstd 9, {} threads): {:.2} s, {:.0} tiles/s",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
        write_seconds,
        tiles.len() as f64 / write_seconds
    );
    println!(
        "pack size (codec 0): {pack_bytes} bytes ({:.3} bytes/sample)",
        pack_bytes as f64 / (tiles.len() * stored * stored) as f64
    );
    println!("\nopen time (median of 300), mmap + validate header and index:");
    println!("{:>6} {:>6} {:>12} {:>10}", "tiles", "codec", "file bytes", "open us");
    for (count, codec, bytes, micros) in &open_rows {
        println!("{count:>6} {codec:>6} {bytes:>12} {micros:>10.1}");
    }
    println!("\nrandom tile read ({reads} reads, page cache warm):");
    println!(
        "  read+verify+decompress+decode to u16: median {:.1} us, p99 {:.1} us",
        percentile(&decode_us, 0.5),
        percentile(&decode_us, 0.99)
    );
    println!(
        "  ... and dequantise to f32 metres:     median {:.1} us, p99 {:.1} us",
        percentile(&metres_us, 0.5),
        percentile(&metres_us, 0.99)
    );
    println!(
        "  read+verify+decompress+decode, positioned reads (open_unmapped): median {:.1} us, p99 {:.1} us",
        percentile(&pread_us, 0.5),
        percentile(&pread_us, 0.99)
    );
    let json = format!(
        "{{\"depth\": {depth}, \"tiles\": {}, \"pack_bytes\": {pack_bytes}, \"mosaic_side\": {side}, \"read_median_us\": {:.2}, \"read_p99_us\": {:.2}, \"read_f32_median_us\": {:.2}, \"samples_per_tile\": {}}}\n",
        tiles.len(),
        percentile(&decode_us, 0.5),
        percentile(&decode_us, 0.99),
        percentile(&metres_us, 0.5),
        stored * stored
    );
    std::fs::write(out.join("pack_bench.json"), json).unwrap();
}
