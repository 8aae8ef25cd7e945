//! `planet-pack export PACK... --quantized-mesh DIR`: a stack as Cesium
//! quantized-mesh-1.0 tiles a static server serves as they are
//! (`planet_qmesh` makes each tile's bytes; docs/web.md says how packs map
//! to tiles).
//!
//! The key decision: a tile exists at a level only where some pack's
//! measured samples are as fine as the tile's grid needs (the level whose
//! grid spacing first reaches the pack's sample spacing), so a regional
//! pack over a global one goes deeper inside its box alone, and
//! `layer.json`'s `available` says exactly which tiles exist. Each tile is
//! written whole (staged, then renamed), so a killed export run again
//! skips the tiles already there and writes the same bytes for the rest.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use anyhow::{Context, Result};
use planet_cli::memory::{MIB, budget_or_default, human_bytes, whole_mib};
use planet_qmesh::GRID;
use planet_qmesh::encode::{SAMPLED, TileInput, encode, sample_position};
use planet_qmesh::layer::{Layer, child_availability};
use planet_qmesh::tiling::{Extent, TileId, TileRange, level_error_m};
use planet_terrain::geo::body::Geodetic;
use planet_terrain::ground::query::{GroundCache, GroundReader, depth_for_spacing};
use planet_terrain::ground::{GroundStack, HeightSource};
use planet_terrain::pack::Coverage;

thread_local! {
    /// Each worker's data tiles, kept between the export tiles it makes.
    static CACHES: std::cell::RefCell<GroundCache> = std::cell::RefCell::new(GroundCache::default());
}

/// `export`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Packs, bottom first: each later one over the earlier ones inside its
    /// coverage (paths, or http(s) URLs).
    #[arg(required = true, value_name = "PACK")]
    pub packs: Vec<PathBuf>,
    /// Write Cesium quantized-mesh-1.0 tiles and their layer.json into DIR
    /// (made if missing; tiles already there are kept: a killed export
    /// goes on where it stopped).
    #[arg(long, value_name = "DIR")]
    pub quantized_mesh: PathBuf,
    /// The deepest level written (default: as deep as the packs' data).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=20))]
    pub max_level: Option<u8>,
    /// Only the tiles over this box, S,W,N,E in degrees (the two level-0
    /// tiles are always written: a client starts from them).
    #[arg(long, value_parser = planet_cli::args::region, allow_hyphen_values = true, value_name = "S,W,N,E")]
    pub region: Option<Coverage>,
    /// Synthesize detail past the packs' height data depth: on or off (off
    /// by default: the measured ground only).
    #[arg(long, default_value = "off", value_parser = planet_cli::args::on_off, value_name = "on|off", action = clap::ArgAction::Set)]
    pub detail: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// The export's memory budget (e.g. 512M, 2G; default: half the
    /// machine's memory). It sizes the packs' data tiles each worker keeps
    /// between tiles; a budget too small for the fixed needs is refused.
    #[arg(long, value_parser = planet_cli::args::bytes, value_name = "BYTES")]
    pub memory: Option<u64>,
    /// Write each tile gzip-compressed, for a server that sends `.terrain`
    /// files with `Content-Encoding: gzip` (docs/web.md has an nginx
    /// example); uncompressed by default, which any static server serves.
    #[arg(long)]
    pub gzip: bool,
}

/// The process before it holds any tile: code, the packs' index pages,
/// allocator arenas and thread stacks (a small export peaks at about 20 MiB).
const BASELINE_BYTES: f64 = 48.0 * MIB;
/// Synthesized detail's caches (`detail/cache.rs`: a 50 MiB budget and its
/// queues), held only with `--detail on`.
const DETAIL_CACHE_BYTES: f64 = 80.0 * MIB;
/// One worker's tile in the making: its 67 x 67 grid, the network's
/// errors, the mesh and its bytes.
const WORKING_BYTES: f64 = 2.0 * MIB;
/// One of the packs' data tiles as a worker keeps it decoded: 131 x 131
/// heights, classes and colour.
const DATA_TILE_BYTES: f64 = 160.0 * 1024.0;
/// Data tiles one export tile reads at most: its grid is read eight samples
/// to a grid step, 512 samples across, four or five data tiles a side, and
/// six where it straddles a cube edge.
const TILES_READ_PER_TILE: f64 = 36.0;
/// What a worker keeps between export tiles, at least and at most.
const MIN_KEPT_TILES: usize = 16;
const MAX_KEPT_TILES: usize = 2048;

/// How the export's memory budget is shared out.
#[derive(Clone, Copy, Debug)]
struct MemoryPlan {
    budget: f64,
    /// Data tiles each worker keeps from one export tile to the next.
    kept_tiles: usize,
}

impl MemoryPlan {
    /// The plan for `workers` threads, or the refusal that names the flag,
    /// the value, what it must hold and the smallest budget that does.
    fn new(args: &ExportArgs, workers: usize) -> Result<MemoryPlan> {
        let budget = budget_or_default(args.memory);
        let detail = if args.detail { DETAIL_CACHE_BYTES } else { 0.0 };
        let per_worker = WORKING_BYTES + TILES_READ_PER_TILE * DATA_TILE_BYTES;
        let fixed = BASELINE_BYTES + detail + workers as f64 * per_worker;
        let kept = ((budget - fixed) / (workers as f64 * DATA_TILE_BYTES)).floor();
        if kept < MIN_KEPT_TILES as f64 {
            let minimum = fixed + (workers * MIN_KEPT_TILES) as f64 * DATA_TILE_BYTES;
            let named = match args.memory {
                Some(_) => format!("--memory {}", human_bytes(budget)),
                None => format!("the default memory budget ({}, half of MemTotal)", human_bytes(budget)),
            };
            anyhow::bail!(
                "{named} is too small for the export: it needs the process itself ({}){}, {workers} worker threads \
                 ({} each: a tile's buffers and the {TILES_READ_PER_TILE} data tiles it reads) and {MIN_KEPT_TILES} \
                 data tiles kept per worker ({} each); give --memory {} or more, or fewer --jobs",
                human_bytes(BASELINE_BYTES),
                if args.detail {
                    format!(", synthesized detail's caches ({})", human_bytes(DETAIL_CACHE_BYTES))
                } else {
                    String::new()
                },
                human_bytes(per_worker),
                human_bytes(DATA_TILE_BYTES),
                whole_mib(minimum),
            );
        }
        Ok(MemoryPlan { budget, kept_tiles: (kept as usize).min(MAX_KEPT_TILES) })
    }
}

/// What shapes a tile's bytes, kept beside the tiles: a re-run into the
/// same directory must ask for the same, or the directory would hold two
/// exports.
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
struct Settings {
    /// [`TILES_REVISION`] of the planet-pack that wrote the tiles (0 for
    /// one before it was kept).
    #[serde(default)]
    tiles_revision: u32,
    /// The packs' fingerprints, bottom first.
    packs: Vec<String>,
    detail: bool,
    gzip: bool,
}

/// Raised whenever the same ground makes other tile bytes (2: chords sag
/// with the body's curvature; 3: every sample within the error of the
/// triangle over it), so a resumed export never mixes the two.
const TILES_REVISION: u32 = 3;

/// The settings file's name in the export's directory.
const SETTINGS_FILE: &str = ".planet-export.json";

impl Settings {
    fn of(stack: &GroundStack, args: &ExportArgs) -> Settings {
        let packs = stack
            .stacked_packs()
            .iter()
            .map(|p| p.source.pack().header().fingerprint.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        Settings { tiles_revision: TILES_REVISION, packs, detail: args.detail, gzip: args.gzip }
    }

    /// Records these settings in `dir`, or refuses where it holds an export
    /// made with others.
    fn claim(&self, dir: &Path) -> Result<()> {
        let path = dir.join(SETTINGS_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let before: Settings = serde_json::from_slice(&bytes).with_context(|| {
                    format!("{}: not an export's settings (remove the directory to start over)", path.display())
                })?;
                if before == *self {
                    return Ok(());
                }
                let differs = if before.tiles_revision != self.tiles_revision {
                    format!(
                        "another planet-pack (tiles revision {}, this one writes {})",
                        before.tiles_revision, self.tiles_revision
                    )
                } else if before.packs != self.packs {
                    "other packs (their fingerprints differ)".to_owned()
                } else if before.gzip != self.gzip {
                    format!("--gzip {}", if before.gzip { "on" } else { "off" })
                } else {
                    format!("--detail {}", if before.detail { "on" } else { "off" })
                };
                anyhow::bail!(
                    "{} holds an export made from {differs}; its tiles would mix with this one's: export into another \
                     directory, or remove this one to start over",
                    dir.display()
                )
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let json = serde_json::to_vec_pretty(self)?;
                planet_terrain::files::write_whole(&path, |out| out.write_all(&json))
                    .with_context(|| format!("writing {}", path.display()))
            }
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
}

/// The tiles of each level, from 0: rectangles of tiles that exist.
fn availability(stack: &GroundStack, args: &ExportArgs) -> Vec<Vec<TileRange>> {
    let body = stack.body().clone();
    let metres_per_degree = body.ellipsoid().max_radius().to_radians();
    // The level whose grid spacing first reaches a pack's sample spacing.
    let level_of = |spacing_m: f64| {
        (0..=20u8).find(|&z| TileId::side_degrees(z) / (GRID - 1) as f64 * metres_per_degree <= spacing_m).unwrap_or(20)
    };
    let packs: Vec<(Extent, u8)> = stack
        .stacked_packs()
        .iter()
        .map(|p| {
            let header = p.source.pack().header();
            let c = header.coverage;
            let extent = Extent { west: c.west, south: c.south, east: c.east, north: c.north };
            (extent, level_of(body.sample_spacing_m(header.height_data_depth)))
        })
        .collect();
    let deepest = packs.iter().map(|p| p.1).max().unwrap_or(0);
    let max_level = args.max_level.map_or(deepest, |m| m.min(deepest));
    let world = Extent { west: -180.0, south: -90.0, east: 180.0, north: 90.0 };
    let region = args.region.map_or(world, |c| Extent { west: c.west, south: c.south, east: c.east, north: c.north });
    (0..=max_level)
        .map(|z| {
            if z == 0 {
                return vec![TileRange { start_x: 0, start_y: 0, end_x: 1, end_y: 0 }];
            }
            let mut ranges: Vec<TileRange> = packs
                .iter()
                .filter(|p| p.1 >= z)
                .filter_map(|(extent, _)| {
                    let clipped = Extent {
                        west: extent.west.max(region.west),
                        south: extent.south.max(region.south),
                        east: extent.east.min(region.east),
                        north: extent.north.min(region.north),
                    };
                    TileId::range_over(z, &clipped)
                })
                .collect();
            // A range inside another is said once.
            let all = ranges.clone();
            ranges.retain(|r| {
                !all.iter().any(|o| {
                    o != r
                        && o.start_x <= r.start_x
                        && o.start_y <= r.start_y
                        && o.end_x >= r.end_x
                        && o.end_y >= r.end_y
                })
            });
            ranges.dedup();
            ranges
        })
        .take_while(|ranges| !ranges.is_empty())
        .collect()
}

/// The depth a tile's samples are read at: the height data depth of the
/// finest pack over the tile (its vertices are then the measured ground
/// `planet-pack points` reads at that spacing, and the tile's stated error
/// is its simplification's alone), but no deeper than eight samples to one
/// of the tile's grid (coarser levels read the packs' averaged levels, as
/// any point sample of a coarse tile stands for its neighbourhood).
fn read_depth(stack: &GroundStack, ground: &dyn HeightSource, id: TileId) -> u8 {
    let extent = id.extent();
    let finest = stack
        .stacked_packs()
        .iter()
        .map(|p| p.source.pack().header())
        .filter(|h| {
            let c = h.coverage;
            c.is_global() || Extent { west: c.west, south: c.south, east: c.east, north: c.north }.touches(&extent)
        })
        .map(|h| h.height_data_depth)
        .max()
        .unwrap_or(0);
    let grid_m = TileId::side_degrees(id.z) / (GRID - 1) as f64 * ground.body().ellipsoid().max_radius().to_radians();
    finest.min(depth_for_spacing(ground, grid_m / 8.0))
}

/// The ground of one tile at `depth`: its grid with the margin, and its
/// water. `cache` carries the data tiles read from one export tile to the
/// next on this thread.
fn read_tile(
    ground: &dyn HeightSource,
    id: TileId,
    depth: u8,
    cache: GroundCache,
    kept_tiles: usize,
) -> Result<(Vec<f32>, Vec<bool>, GroundCache)> {
    let mut reader = GroundReader::with_cache(ground, depth, cache);
    let mut heights = Vec::with_capacity(SAMPLED * SAMPLED);
    let mut water = vec![false; GRID * GRID];
    for j in -1..=GRID as i32 {
        for i in -1..=GRID as i32 {
            let (lat, lon) = sample_position(id, i, j);
            // 180 E is read as 180 W, so the tiles either side of the
            // antimeridian read their shared edge at the same point.
            let lon = if lon >= 180.0 {
                lon - 360.0
            } else if lon < -180.0 {
                lon + 360.0
            } else {
                lon
            };
            let at = Geodetic::from_degrees(lat, lon, 0.0);
            let (h, class) =
                reader.height_and_class(at).with_context(|| format!("reading the ground at {lat}, {lon}"))?;
            if (0..GRID as i32).contains(&i) && (0..GRID as i32).contains(&j) {
                let class = class.unwrap_or(0);
                water[j as usize * GRID + i as usize] =
                    class == 3 || planet_terrain::ground::water::under_sea(h as f32, class);
            }
            heights.push(h as f32);
        }
    }
    let mut cache = reader.into_cache();
    if cache.len() > kept_tiles {
        // Not kept across export tiles past the memory plan's share.
        cache = GroundCache::default();
    }
    Ok((heights, water, cache))
}

/// Writes the export and says on stderr how many tiles it wrote and kept,
/// how fast, and how large they are.
pub fn export(stack: &GroundStack, args: &ExportArgs) -> Result<()> {
    let dir = &args.quantized_mesh;
    let pool = rayon_pool(args.jobs)?;
    let plan = MemoryPlan::new(args, pool.current_num_threads())?;
    std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    Settings::of(stack, args).claim(dir)?;
    let available = availability(stack, args);
    let tiles: Vec<TileId> = available
        .iter()
        .enumerate()
        .flat_map(|(z, ranges)| ranges.iter().flat_map(move |r| r.tiles(z as u8)))
        .collect();
    let ground = stack.with_detail(args.detail);
    let radius = stack.body().ellipsoid().max_radius();
    let (written, kept, bytes) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicU64::new(0));
    let started = std::time::Instant::now();
    let progress = std::sync::Mutex::new(std::time::Instant::now());
    let one = |id: &TileId| -> Result<()> {
        let path = dir.join(format!("{}/{}/{}.terrain", id.z, id.x, id.y));
        if path.exists() {
            kept.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let cache = CACHES.with(|c| std::mem::take(&mut *c.borrow_mut()));
        let depth = read_depth(stack, &ground, *id);
        let (heights, water, cache) =
            read_tile(&ground, *id, depth, cache, plan.kept_tiles).with_context(|| format!("tile {id}"))?;
        CACHES.with(|c| *c.borrow_mut() = cache);
        let max_error_m = level_error_m(radius, id.z) as f32;
        let metadata = child_availability(&available, *id);
        let input =
            TileInput { id: *id, heights: &heights, water: Some(&water), max_error_m, metadata: metadata.as_deref() };
        let tile = encode(stack.body().ellipsoid(), &input);
        let stored = if args.gzip { gzip(&tile.bytes)? } else { tile.bytes };
        write_tile(&path, &stored)?;
        bytes.fetch_add(stored.len() as u64, Ordering::Relaxed);
        let done = written.fetch_add(1, Ordering::Relaxed) + kept.load(Ordering::Relaxed) + 1;
        let mut said = progress.lock().unwrap_or_else(|p| p.into_inner());
        if said.elapsed().as_secs_f64() >= 2.0 {
            *said = std::time::Instant::now();
            planet_cli::report::message(&format!("export: {done} of {} tiles", tiles.len()));
        }
        Ok(())
    };
    pool.install(|| {
        use rayon::prelude::*;
        tiles.par_iter().try_for_each(one)
    })?;
    let levels = available.len();
    write_layer(stack, args, available)?;
    let (written, kept, bytes) = (written.into_inner(), kept.into_inner(), bytes.into_inner());
    let seconds = started.elapsed().as_secs_f64();
    let peak = planet_cli::memory::peak_resident_bytes().map_or_else(|| "unknown".to_owned(), human_bytes);
    planet_cli::report::message(&format!(
        "export: {} tiles in {} levels to {} ({written} written, {kept} already there), {:.1} tiles/s, {} bytes a tile written{}; \
         peak memory {peak} of a {} budget",
        tiles.len(),
        levels,
        dir.display(),
        written as f64 / seconds.max(1e-9),
        if written > 0 { bytes / written as u64 } else { 0 },
        if args.gzip { " (gzip)" } else { "" },
        human_bytes(plan.budget),
    ));
    Ok(())
}

/// `layer.json`, last: the tiles it lists are all there.
fn write_layer(stack: &GroundStack, args: &ExportArgs, available: Vec<Vec<TileRange>>) -> Result<()> {
    let dir = &args.quantized_mesh;
    let c = stack.packs().first().map(|p| p.1).unwrap_or(Coverage::GLOBAL);
    let bounds = match args.region {
        Some(r) => [r.west, r.south, r.east, r.north],
        None if stack.packs().iter().any(|p| p.1.is_global()) => [-180.0, -90.0, 180.0, 90.0],
        None => [c.west, c.south, c.east, c.north],
    };
    let names: Vec<String> = stack.packs().into_iter().map(|p| p.0).collect();
    let description = format!("exported by planet-pack from {}", names.join(", "));
    let layer = Layer::new("planet".to_owned(), description, available, bounds, true);
    let json = serde_json::to_vec_pretty(&layer)?;
    planet_terrain::files::write_whole(&dir.join("layer.json"), |out| out.write_all(&json))
        .with_context(|| format!("writing {}", dir.join("layer.json").display()))
}

/// A tile's bytes gzip-compressed with no name and no time in the header,
/// so the same tile is the same bytes on every run.
fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).context("compressing a tile")?;
    encoder.finish().context("compressing a tile")
}

/// A tile's file, written whole: a killed export never leaves half a tile.
fn write_tile(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("making {}", parent.display()))?;
    }
    planet_terrain::files::write_whole(path, |out| out.write_all(bytes))
        .with_context(|| format!("writing {}", path.display()))
}

fn rayon_pool(jobs: Option<u32>) -> Result<rayon::ThreadPool> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(jobs) = jobs {
        builder = builder.num_threads(jobs as usize);
    }
    builder.build().context("starting the export's workers")
}
