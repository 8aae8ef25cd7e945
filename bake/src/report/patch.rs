//! The reports of a region patch: applied, an interrupted one completed, or
//! found applied already; each names the pack, its box and its body first.

use serde::Serialize;

use super::parts::{AccuracyReport, LandmarkReport, MemoryReport, Timings};

/// The pack a patch is of, its box and its body: what every patch report
/// names first.
#[derive(Debug, Serialize)]
pub(crate) struct PatchTarget {
    pub(crate) out: String,
    pub(crate) region: crate::options::Region,
    pub(crate) body: String,
}

impl PatchTarget {
    pub(crate) fn of(options: &crate::options::BakeOptions, region: crate::options::Region) -> PatchTarget {
        PatchTarget { out: options.out.display().to_string(), region, body: options.body.name().to_owned() }
    }
}

/// A region patch of an existing pack.
#[derive(Debug, Serialize)]
pub(crate) struct PatchReport {
    #[serde(flatten)]
    pub(crate) target: PatchTarget,
    #[serde(flatten)]
    pub(crate) tiles: PatchedTiles,
    /// Degrees inside the box across which the patch blends into the pack.
    pub(crate) blend_border_deg: f64,
    /// Samples whose height took (some of) the patch DEM's.
    pub(crate) samples_from_dem: usize,
    /// Samples whose height kept (some of) the pack's.
    pub(crate) samples_kept: usize,
    pub(crate) landmarks: LandmarkReport,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) timings_s: Timings,
    pub(crate) memory: MemoryReport,
}

/// Which tiles a patch rewrote and where their payloads went.
#[derive(Debug, Serialize)]
pub(crate) struct PatchedTiles {
    pub(crate) tiles_patched: u64,
    pub(crate) patched: Vec<String>,
    pub(crate) rewritten_in_place: u64,
    pub(crate) appended: u64,
}

impl PatchedTiles {
    pub(crate) fn new(summary: &planet_terrain::pack::PatchSummary, tiles: &[planet_terrain::TileAddress]) -> Self {
        PatchedTiles {
            tiles_patched: summary.tiles,
            patched: tiles.iter().map(|t| t.to_string()).collect(),
            rewritten_in_place: summary.rewritten_in_place,
            appended: summary.appended,
        }
    }
}

/// A re-run that found its own patch interrupted and completed it from the
/// redo journal. Its tiles passed the composite audit before the journal was
/// written (the pack they were composed over is gone now, so the audit
/// cannot run again); what is checked here is that the pack holds them
/// byte for byte.
#[derive(Debug, Serialize)]
pub(crate) struct CompletedPatchReport {
    #[serde(flatten)]
    pub(crate) target: PatchTarget,
    #[serde(flatten)]
    pub(crate) tiles: PatchedTiles,
    /// Every patched tile read back equal to the journal's bytes.
    pub(crate) read_back_as_journaled: bool,
    pub(crate) landmarks: LandmarkReport,
}

/// A patch that is the pack's last one already: nothing was done.
#[derive(Debug, Serialize)]
pub(crate) struct AlreadyAppliedReport {
    #[serde(flatten)]
    pub(crate) target: PatchTarget,
    pub(crate) tiles_patched: usize,
    pub(crate) landmarks: LandmarkReport,
}
