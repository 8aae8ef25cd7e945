//! The bake's memory budget (`--memory`), how it is shared out, and what a
//! bake refuses before it starts: a budget too small for its fixed needs, a
//! `--depth` whose tile set would not fit in it, and a `--jobs` no machine
//! can use.
//!
//! The key decision: refuse with a number, not crash with an allocation
//! failure an hour in, and give every memory consumer a share of one stated
//! budget. What does not grow with the job is fixed: the process itself,
//! per worker thread one tile's buffers and at most `CHUNKS_IN_FLIGHT`
//! source chunks, the decoded-chunk cache and GDAL's block cache (both
//! sized here; their contents are evicted, never grown past). What grows
//! with the pack is one key in 512 of the writer's staged set (the rest of
//! it, the tile set and the pending tiles are on disk or walked a batch at
//! a time); the level held while the level above is filtered from it is a
//! bounded window (`held_level_tiles`); a region patch holds that window
//! too (the pack's level and its patched copy share it), reads the pack it
//! patches with positioned reads rather than a map, and keeps its re-baked
//! payloads in an unnamed scratch file beside the pack (`patch_tiles`),
//! journaled a payload at a time. The tile count of the coverage at the asked depth is
//! estimated in closed form (exact for a global pack, area plus border for a
//! box), multiplied by those per-tile costs and compared with what the
//! budget leaves for them. The default budget is half the machine's memory
//! (`MemTotal` in /proc/meminfo; 2 GiB without that file). The disk the bake
//! will need is estimated too, from the codec's largest legal payload, and
//! named in the refusal, but disk space is not checked (that needs statvfs,
//! outside safe std).

use planet_cli::memory::{DEFAULT_FRACTION, budget_or_default, human_bytes as bytes, whole_mib};
use planet_terrain::pack::{Codec, Coverage};

use crate::error::BakeError;
use crate::stages::raster::{CHUNK_BYTES, CHUNKS_IN_FLIGHT, MIN_CACHED_CHUNKS};

/// Bytes the bake keeps in memory per tile of the pack: the writer's one
/// key per 512 declared tiles (`pack::staged`), with a quarter for the
/// allocator. Everything else per tile is on disk (the staged set, the
/// tile set's levels) or walked (pending tiles, the audit's tiles) a batch
/// at a time; docs/PERFORMANCE.md, "Bake memory", has the measurement.
pub(crate) const BYTES_PER_TILE: f64 = 8.0 / 512.0 * 1.25;
/// Disk per tile besides the payloads: the staged set's key and slot.
const SCRATCH_BYTES_PER_TILE: f64 = 8.0 + 32.0;
/// Bytes per tile of the level below held while a level is filtered from it
/// (`filter`): its 131 x 131 quantised heights and the map's slot.
pub(crate) const BYTES_PER_LEVEL_TILE: f64 = 2.0 * 131.0 * 131.0 + 128.0;
/// Tiles of the level below held at once while a level is filtered from it
/// (or audited against it): this many, plus `HELD_LEVEL_TILES_PER_WORKER`
/// per worker (a window must give every worker parents to filter).
pub(crate) const HELD_LEVEL_TILES: usize = 256;
pub(crate) const HELD_LEVEL_TILES_PER_WORKER: usize = 64;
/// Working memory per worker thread: one tile's samples in f64 with their
/// void flags, classes and colour, and the encoder's buffers (2 MiB); the
/// source chunks one evaluation holds (`CHUNKS_IN_FLIGHT`) and GDAL's read
/// buffer for one chunk in f64.
pub(crate) const BYTES_PER_WORKER: f64 = 2.0 * MIB + (CHUNKS_IN_FLIGHT * CHUNK_BYTES) as f64 + 2.0 * CHUNK_BYTES as f64;
/// The process before it holds any tile: code, GDAL, PROJ and their data,
/// the allocator's arenas, thread stacks (measured: a depth-1 bake of a
/// small raster peaks at about this; docs/PERFORMANCE.md, "Bake memory").
pub(crate) const BASELINE_BYTES: f64 = 64.0 * MIB;
/// The smallest GDAL block cache a bake runs with.
pub(crate) const MIN_GDAL_CACHE: f64 = 16.0 * MIB;
/// The largest chunk cache and GDAL block cache worth having: a worker's
/// working set is a few tiles' chunks, so more only helps revisits.
const MAX_CHUNK_CACHE: f64 = 1024.0 * MIB;
const MAX_GDAL_CACHE: f64 = 256.0 * MIB;
const MIB: f64 = 1024.0 * 1024.0;
/// The most worker threads per core `--jobs` may ask for.
pub(crate) const JOBS_PER_CORE: usize = 4;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `work` on a pool of `jobs` worker threads (`None`: one per core),
/// so every rayon call inside it uses exactly those workers.
pub(crate) fn in_pool<T: Send>(
    jobs: Option<usize>,
    work: impl FnOnce() -> Result<T, BakeError> + Send,
) -> Result<T, BakeError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|cause| BakeError::Threads { jobs: jobs.unwrap_or(0), cause })?;
    pool.install(work)
}

/// Refuses a `--jobs` outside 1..=4 x the machine's cores: more threads do
/// not bake faster, and tens of thousands of them hang the machine.
pub(crate) fn check_jobs(jobs: Option<usize>) -> Result<(), BakeError> {
    let Some(jobs) = jobs else { return Ok(()) };
    let (cores, most) = (cores(), JOBS_PER_CORE * cores());
    if (1..=most).contains(&jobs) {
        return Ok(());
    }
    Err(BakeError::Options(format!(
        "--jobs {jobs}: worker threads must be 1..={most} (at most {JOBS_PER_CORE} per core; this machine has {cores} cores)"
    )))
}

/// The estimated number of tiles from depth 0 to `depth` that `coverage`
/// touches: exact for a global pack, area plus a border of tiles along the
/// box's edges for a regional one.
pub(crate) fn estimated_tiles(coverage: &Coverage, depth: u8) -> f64 {
    let (s, n) = (coverage.south.to_radians(), coverage.north.to_radians());
    let span = if coverage.west < coverage.east {
        coverage.east - coverage.west
    } else {
        360.0 + coverage.east - coverage.west
    };
    let span = if coverage.is_global() { 360.0 } else { span }.to_radians();
    let fraction = ((n.sin() - s.sin()) * span / (4.0 * std::f64::consts::PI)).clamp(0.0, 1.0);
    let perimeter = 2.0 * (n - s) + span * (s.cos() + n.cos());
    (0..=depth)
        .map(|d| {
            let all = 6.0 * 4f64.powi(i32::from(d));
            let tile_edge = std::f64::consts::FRAC_PI_2 / 2f64.powi(i32::from(d));
            let border = if fraction >= 1.0 { 0.0 } else { 2.0 * perimeter / tile_edge + 6.0 };
            (all * fraction + border).min(all)
        })
        .sum()
}

/// How one bake's memory budget is shared out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MemoryPlan {
    /// The whole budget, bytes.
    pub(crate) budget: f64,
    /// Whether `--memory` gave it (otherwise it is the default).
    pub(crate) given: bool,
    /// The decoded-chunk cache of all the bake's rasters together.
    pub(crate) chunk_cache: f64,
    /// GDAL's own block cache (`GDAL_CACHEMAX`).
    pub(crate) gdal_cache: f64,
    /// The process, its workers and the two caches: what the bake holds
    /// whatever its size.
    pub(crate) fixed: f64,
    /// Worker threads.
    pub(crate) jobs: usize,
}

impl MemoryPlan {
    /// Shares `memory` (or the default budget) among `jobs` workers and
    /// `rasters` source rasters; refuses a budget that cannot hold even the
    /// process, the workers and the smallest caches.
    pub(crate) fn new(memory: Option<u64>, jobs: usize, rasters: usize) -> Result<MemoryPlan, BakeError> {
        let budget = budget_or_default(memory);
        let min_chunks = (rasters.max(1) * MIN_CACHED_CHUNKS * CHUNK_BYTES) as f64;
        let held_level = (HELD_LEVEL_TILES + jobs * HELD_LEVEL_TILES_PER_WORKER) as f64 * BYTES_PER_LEVEL_TILE;
        let workers = jobs as f64 * BYTES_PER_WORKER + held_level;
        let minimum = BASELINE_BYTES + workers + min_chunks + MIN_GDAL_CACHE;
        if budget < minimum {
            let flag = match memory {
                Some(_) => format!("--memory {}", self::bytes(budget)),
                None => format!(
                    "the default memory budget ({} of this machine's MemTotal, {})",
                    DEFAULT_FRACTION,
                    self::bytes(budget)
                ),
            };
            return Err(BakeError::Options(format!(
                "{flag} is too small: a bake needs at least {} before its first tile: the process itself ({}), {jobs} worker threads at {} each (one tile's buffers and up to {CHUNKS_IN_FLIGHT} source chunks in flight), the window of the level below while a level is filtered ({}), the smallest chunk cache for {rasters} raster(s) ({}) and GDAL's block cache ({}); give --memory {} or more, or fewer --jobs",
                self::bytes(minimum),
                self::bytes(BASELINE_BYTES),
                self::bytes(BYTES_PER_WORKER),
                self::bytes(held_level),
                self::bytes(min_chunks),
                self::bytes(MIN_GDAL_CACHE),
                whole_mib(minimum),
            )));
        }
        let spare = budget - minimum;
        let chunk_cache = min_chunks + (spare / 4.0).min(MAX_CHUNK_CACHE);
        let gdal_cache = MIN_GDAL_CACHE + (spare / 16.0).min(MAX_GDAL_CACHE);
        let fixed = BASELINE_BYTES + workers + chunk_cache + gdal_cache;
        Ok(MemoryPlan { budget, given: memory.is_some(), chunk_cache, gdal_cache, fixed, jobs })
    }

    /// The most tiles of the level below held at once (`filter`).
    pub(crate) fn held_level_tiles(&self) -> usize {
        HELD_LEVEL_TILES + self.jobs * HELD_LEVEL_TILES_PER_WORKER
    }

    /// What the budget leaves for the state that grows with the pack.
    pub(crate) fn for_tiles(&self) -> f64 {
        self.budget - self.fixed
    }

    /// The chunk cache of one raster given `weight` of `total` (the DEM and
    /// imagery weigh 4, classes 1: classes are read nearest, once a tile).
    pub(crate) fn raster_cache(&self, weight: usize, total: usize) -> usize {
        (self.chunk_cache * weight as f64 / total.max(1) as f64) as usize
    }

    /// Tells GDAL its block cache share. GDAL reads `GDAL_CACHEMAX` once,
    /// when it first caches a block, so in one process the first bake's
    /// share stands.
    pub(crate) fn apply_gdal_cache(&self) {
        let mib = (self.gdal_cache / MIB).floor().max(1.0);
        // Only fails on a NUL byte in the key or value, which these lack.
        let _ = gdal::config::set_config_option("GDAL_CACHEMAX", &format!("{mib:.0}"));
    }
}

/// The memory that grows with the pack, for `tiles` tiles.
pub(crate) fn tile_state_bytes(tiles: f64) -> f64 {
    tiles * BYTES_PER_TILE
}

/// Refuses a `--depth` whose bake would not fit in the memory budget.
pub(crate) fn check_depth(
    coverage: &Coverage,
    depth: u8,
    codec: Codec,
    plan: &MemoryPlan,
    data_depth: u8,
) -> Result<f64, BakeError> {
    let tiles = estimated_tiles(coverage, depth);
    let memory = tile_state_bytes(tiles);
    if memory <= plan.for_tiles() {
        return Ok(memory);
    }
    // The partial file and the assembled pack both hold every payload.
    let disk = tiles * (2.0 * f64::from(codec.payload_length_range().1) + SCRATCH_BYTES_PER_TILE);
    let budget = if plan.given {
        format!("--memory {}", bytes(plan.budget))
    } else {
        format!("the default memory budget ({}, half of MemTotal)", bytes(plan.budget))
    };
    Err(BakeError::Options(format!(
        "--depth {depth}: baking this coverage to depth {depth} means about {tiles:.3e} tiles, which need about {} of memory ({BYTES_PER_TILE} bytes per tile) and up to {} of disk; {budget} leaves {} for them after {} for the process, workers and caches. Give a smaller --depth (the data supports depth {data_depth}) or a larger --memory",
        bytes(memory),
        bytes(disk),
        bytes(plan.for_tiles().max(0.0)),
        bytes(plan.fixed),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_estimate_is_exact_and_a_box_is_a_fraction() {
        let global = Coverage { south: -90.0, west: -180.0, north: 90.0, east: 180.0 };
        assert_eq!(estimated_tiles(&global, 0), 6.0);
        assert_eq!(estimated_tiles(&global, 2), 6.0 + 24.0 + 96.0);
        let small = Coverage { south: 10.0, west: 20.0, north: 11.0, east: 21.0 };
        let at_12 = estimated_tiles(&small, 12);
        assert!(at_12 < estimated_tiles(&global, 12) / 1000.0, "{at_12}");
        assert!(at_12 > 6.0 * 4f64.powi(12) * 1e-5, "{at_12}");
    }

    #[test]
    fn jobs_are_bounded_by_cores() {
        assert!(check_jobs(Some(1)).is_ok() && check_jobs(None).is_ok());
        let e = check_jobs(Some(100_000)).unwrap_err().to_string();
        assert!(e.starts_with("--jobs 100000: worker threads must be 1..="), "{e}");
        assert!(check_jobs(Some(0)).is_err());
    }

    #[test]
    fn a_plan_shares_out_no_more_than_its_budget_and_refuses_below_its_minimum() {
        for (budget, jobs, rasters) in [(256u64 << 20, 2, 1), (2 << 30, 8, 3), (64 << 30, 64, 2)] {
            let plan = MemoryPlan::new(Some(budget), jobs, rasters).unwrap();
            assert!(plan.given && plan.budget == budget as f64);
            assert!(plan.fixed + plan.for_tiles() <= budget as f64 + 1.0, "{plan:?}");
            assert!(plan.for_tiles() > 0.0 && plan.chunk_cache <= MAX_CHUNK_CACHE + 48.0 * MIB, "{plan:?}");
            let caches = plan.raster_cache(4, 9) + plan.raster_cache(4, 9) + plan.raster_cache(1, 9);
            assert!(caches as f64 <= plan.chunk_cache, "{plan:?}");
        }
        let e = MemoryPlan::new(Some(8 << 20), 2, 1).unwrap_err().to_string();
        assert!(e.starts_with("--memory 8.0 MiB is too small: a bake needs at least"), "{e}");
        let smallest = e.split("give --memory ").nth(1).unwrap().split_whitespace().next().unwrap();
        let smallest = planet_cli::args::bytes(smallest).unwrap();
        assert!(MemoryPlan::new(Some(smallest), 2, 1).is_ok(), "the named minimum is accepted");
        assert!(MemoryPlan::new(Some(smallest - (1 << 20)), 2, 1).is_err(), "a MiB less is not");
        let default = MemoryPlan::new(None, 1, 1).unwrap();
        assert!(!default.given);
        if let Some(total) = planet_cli::memory::meminfo("MemTotal") {
            assert_eq!(default.budget, total * DEFAULT_FRACTION);
        }
    }
}
