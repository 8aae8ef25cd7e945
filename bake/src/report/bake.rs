//! The reports of a full bake: what it baked (`FullReport`, with its inputs,
//! bytes and timings) or that the pack was up to date and kept.

use serde::Serialize;

use super::parts::{AccuracyReport, CoverageReport, LandmarkReport, MemoryReport, Timings};

/// A full bake (or a resumed one).
#[derive(Debug, Serialize)]
pub(crate) struct FullReport {
    pub(crate) inputs: InputsReport,
    pub(crate) out: String,
    pub(crate) body: String,
    pub(crate) radii_m: [f64; 3],
    pub(crate) tier: String,
    pub(crate) codec: u8,
    pub(crate) coverage: CoverageReport,
    pub(crate) depth: u8,
    pub(crate) data_depth: u8,
    /// Metres between samples at `data_depth`.
    pub(crate) data_depth_spacing_m: f64,
    pub(crate) height_data_depth: u8,
    pub(crate) colour_data_depth: u8,
    pub(crate) tiles: usize,
    pub(crate) tiles_per_depth: Vec<usize>,
    pub(crate) tiles_resumed: usize,
    pub(crate) samples: usize,
    pub(crate) nodata_policy: String,
    /// `--void-value`, for the terminal's line (`nodata_policy` says it in the report).
    #[serde(skip)]
    pub(crate) void_value: Option<f64>,
    /// Samples read from the DEM on its footprint (the tiles at and below
    /// the height data depth this run baked; not their samples past a
    /// regional raster's edge).
    pub(crate) samples_read: usize,
    /// Of `samples_read`, those that were voids on the DEM's footprint,
    /// filled by the policy. The levels filtered from them hold derived
    /// fill (void masks say where), not counted here.
    pub(crate) samples_filled: usize,
    /// Tiles marked measured: their samples on the DEM's footprint were,
    /// voids aside.
    pub(crate) tiles_measured: usize,
    /// Tiles whose void mask names filled samples (`planet-pack sample`
    /// and the provenance map read them as filled).
    pub(crate) tiles_with_filled_voids: usize,
    pub(crate) bytes: BytesReport,
    pub(crate) landmarks: LandmarkReport,
    /// The raster against `--base`'s pack, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base_audit: Option<crate::stages::base_audit::BaseAudit>,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) timings_s: Timings,
    pub(crate) output_samples_per_second: f64,
    pub(crate) jobs: usize,
    pub(crate) memory: MemoryReport,
    /// The detail law measured from the finished pack and recorded in its
    /// header (docs/planetpack.md, "Detail law").
    pub(crate) detail_law: planet_terrain::ground::LawSummary,
}

/// An existing pack with the same fingerprint, kept (`--if-unchanged`).
#[derive(Debug, Serialize)]
pub(crate) struct UpToDateReport {
    pub(crate) out: String,
    pub(crate) tiles: usize,
    pub(crate) landmarks: LandmarkReport,
}

#[derive(Debug, Serialize)]
pub(crate) struct InputsReport {
    pub(crate) dem: String,
    pub(crate) imagery: Option<String>,
    pub(crate) classes: Option<String>,
    pub(crate) dem_size: (usize, usize),
    pub(crate) dem_projected: bool,
    /// Ground metres between the DEM's pixels: along a row (column to
    /// column), along a column (row to row).
    pub(crate) dem_pixel_spacing_m: [f64; 2],
}

#[derive(Debug, Serialize)]
pub(crate) struct BytesReport {
    pub(crate) file: u64,
    pub(crate) payload: u64,
}
