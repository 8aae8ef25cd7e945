//! What a bake refuses before it starts: a `--depth` whose tile set would not
//! fit in memory, and a `--jobs` no machine can use.
//!
//! The key decision: refuse with a number, not crash with an allocation
//! failure an hour in. The tile count of the coverage at the asked depth is
//! estimated in closed form (exact for a global pack, area plus border for a
//! box) and multiplied by what the bake keeps per tile in memory for the
//! whole run, plus the height data depth's level, held while the coarser
//! levels are filtered from it; the sum is compared with the memory Linux says is available
//! (`MemAvailable` in /proc/meminfo; without that file the check is skipped,
//! and says so nowhere else). The disk the bake will need is estimated too,
//! from the codec's largest legal payload, and named in the refusal, but
//! disk space is not checked (that needs statvfs, outside safe std).

use planet_terrain::pack::{Codec, Coverage};

use crate::error::BakeError;

/// Bytes the bake keeps per tile for the whole run: the tile list (16), the
/// writer's staged-tile map (key and entry, ~64, twice for the B-tree's
/// slack), the pending list (16), the assembled index and layout (40 + 56),
/// the audit's per-tile result (~120) and the tile set's transient levels
/// (32).
pub(crate) const BYTES_PER_TILE: f64 = 16.0 + 128.0 + 16.0 + 96.0 + 120.0 + 32.0;
/// Bytes per tile of the one level held in memory while the level above it
/// is filtered from it (`filter`): its 131 x 131 quantised heights and the
/// map's slot. The largest such level is the height data depth's.
pub(crate) const BYTES_PER_LEVEL_TILE: f64 = 2.0 * 131.0 * 131.0 + 128.0;
/// Working memory per worker thread: one tile's samples in f64 with their
/// void flags, classes and colour, and the encoder's buffers.
pub(crate) const BYTES_PER_WORKER: f64 = 2.0 * 1024.0 * 1024.0;
/// The most worker threads per core `--jobs` may ask for.
pub(crate) const JOBS_PER_CORE: usize = 4;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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

/// `MemAvailable` from /proc/meminfo, in bytes.
fn available_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// A byte count for people: 3.2 GiB.
pub(crate) fn bytes(n: f64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = n;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{value:.0} {}", units[0]) } else { format!("{value:.1} {}", units[unit]) }
}

/// Refuses a `--depth` whose bake would not fit in the memory available.
pub(crate) fn check_depth(
    coverage: &Coverage,
    depth: u8,
    codec: Codec,
    cache_bytes: usize,
    jobs: usize,
    data_depth: u8,
) -> Result<(), BakeError> {
    let Some(available) = available_memory() else { return Ok(()) };
    let tiles = estimated_tiles(coverage, depth);
    let filtered_from = depth.min(data_depth);
    let level = match filtered_from {
        0 => 0.0,
        d => estimated_tiles(coverage, d) - estimated_tiles(coverage, d - 1),
    };
    let memory =
        tiles * BYTES_PER_TILE + level * BYTES_PER_LEVEL_TILE + cache_bytes as f64 + jobs as f64 * BYTES_PER_WORKER;
    if memory <= available {
        return Ok(());
    }
    // The partial file and the assembled pack both hold every payload.
    let disk = tiles * 2.0 * f64::from(codec.payload_length_range().1);
    Err(BakeError::Options(format!(
        "--depth {depth}: baking this coverage to depth {depth} means about {tiles:.3e} tiles, which need about {} of memory ({BYTES_PER_TILE} bytes per tile, {BYTES_PER_LEVEL_TILE} per tile of depth {filtered_from} while the levels above it are filtered from it, plus {} of chunk cache and {} per worker) and up to {} of disk; this machine has {} available (MemAvailable in /proc/meminfo). Give a smaller --depth (the data supports depth {data_depth})",
        bytes(memory),
        bytes(cache_bytes as f64),
        bytes(BYTES_PER_WORKER),
        bytes(disk),
        bytes(available),
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
}
