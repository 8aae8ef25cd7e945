//! The reports of a bake across machines: a shard, a wave task, the merge
//! and its stages. They live with the other reports, not with the modes that
//! fill them, so the report's enum names every kind without importing a
//! mode (and no mode module imports a module that imports it).

use serde::Serialize;

use super::parts::{AccuracyReport, CoverageReport, LandmarkReport, MemoryReport};

/// What a shard did, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct ShardReport {
    pub(crate) out: String,
    pub(crate) shard: u32,
    pub(crate) shards: u32,
    pub(crate) root_depth: u8,
    pub(crate) depth: u8,
    pub(crate) coverage: CoverageReport,
    /// Tiles of the whole bake (where the plan knows them: a global
    /// set's), of this shard, and resumed from its journal.
    pub(crate) bake_tiles: Option<u64>,
    pub(crate) tiles: usize,
    pub(crate) tiles_resumed: usize,
    /// Coarse tiles whose surface this shard sampled for the merge.
    pub(crate) coarse_surfaces: usize,
    /// Coarse tiles this shard's own tiles put in the set.
    pub(crate) coarse_declared: usize,
    /// This shard's estimated work, and the whole bake's (`shard` module).
    pub(crate) estimated_work: u64,
    pub(crate) bake_estimated_work: u64,
    pub(crate) landmarks: LandmarkReport,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) seconds: f64,
    pub(crate) memory: MemoryReport,
}

/// What a wave task did, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct WaveReport {
    pub(crate) out: String,
    pub(crate) wave: u32,
    pub(crate) task: u32,
    pub(crate) tasks: u32,
    /// The depths this wave bakes, shallowest first (empty where the
    /// levels ran out before this wave).
    pub(crate) depths: Vec<u8>,
    pub(crate) tiles: usize,
    pub(crate) tiles_resumed: usize,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) seconds: f64,
    pub(crate) memory: MemoryReport,
}

/// What a merge did, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct MergeReport {
    pub(crate) out: String,
    pub(crate) shards: Vec<String>,
    pub(crate) tiles: u64,
    pub(crate) tiles_from_shards: u64,
    pub(crate) tiles_filtered: usize,
    /// Wave files laid out (their tiles baked and audited by the waves).
    pub(crate) wave_files: usize,
    /// The copy tasks of a merge in stages (none: one process).
    pub(crate) copy_tasks: Option<u32>,
    pub(crate) file_bytes: u64,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) seconds: f64,
    pub(crate) filter_seconds: f64,
    pub(crate) assemble_seconds: f64,
    pub(crate) verify_seconds: f64,
    pub(crate) detail_law: planet_terrain::ground::LawSummary,
}

/// A merge's layout for copy tasks, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct LayoutReport {
    pub(crate) out: String,
    pub(crate) tiles: u64,
    pub(crate) file_bytes: u64,
    pub(crate) copy_tasks: u32,
    /// Each task's payload bytes, in task order.
    pub(crate) range_bytes: Vec<u64>,
    pub(crate) seconds: f64,
}

/// One copy task, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct CopyReport {
    pub(crate) out: String,
    pub(crate) task: u32,
    pub(crate) tiles: u64,
    pub(crate) bytes: u64,
    pub(crate) seconds: f64,
}
