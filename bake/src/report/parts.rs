//! The pieces several reports share: the memory plan, the coverage, the
//! accuracy audit and the landmark audit, each serialised the same way in
//! every mode's report.

use serde::Serialize;

use crate::landmarks::{LandmarkAudit, Verdict};
use crate::stages::audit::DepthAudit;

/// The memory budget and how it was shared out, bytes (`limits`).
#[derive(Debug, Serialize)]
pub(crate) struct MemoryReport {
    pub(crate) budget: u64,
    /// "--memory", or the default's rule.
    pub(crate) budget_from: String,
    pub(crate) chunk_cache: u64,
    pub(crate) gdal_cache: u64,
    /// The process, workers and caches: held whatever the bake's size.
    pub(crate) fixed: u64,
    /// The estimate of what grows with the pack (per-tile state), checked
    /// against what the budget leaves; null for a patch (its state grows
    /// with the region, not the pack, and is not estimated).
    pub(crate) tile_state_estimate: Option<u64>,
}

impl MemoryReport {
    pub(crate) fn new(plan: &crate::limits::MemoryPlan, tile_state_estimate: Option<f64>) -> MemoryReport {
        MemoryReport {
            budget: plan.budget as u64,
            budget_from: if plan.given {
                "--memory".into()
            } else {
                format!("default: {} of MemTotal", planet_cli::memory::DEFAULT_FRACTION)
            },
            chunk_cache: plan.chunk_cache as u64,
            gdal_cache: plan.gdal_cache as u64,
            fixed: plan.fixed as u64,
            tile_state_estimate: tile_state_estimate.map(|b| b as u64),
        }
    }
}

/// A pack's coverage box, and whether it is the whole body.
#[derive(Debug, Serialize)]
pub(crate) struct CoverageReport {
    #[serde(flatten)]
    pub(crate) bounds: planet_terrain::pack::Coverage,
    pub(crate) global: bool,
}

impl From<planet_terrain::pack::Coverage> for CoverageReport {
    fn from(bounds: planet_terrain::pack::Coverage) -> Self {
        CoverageReport { bounds, global: bounds.is_global() }
    }
}

/// The accuracy audit: only a passing audit is reported (a failing one
/// fails the bake), with the depths it audited.
#[derive(Debug, Serialize)]
pub(crate) struct AccuracyReport {
    pub(crate) passed: bool,
    pub(crate) per_depth: Vec<DepthAudit>,
}

/// The landmark audit's verdict and every check it made.
#[derive(Debug, Serialize)]
pub(crate) struct LandmarkReport {
    pub(crate) verdict: &'static str,
    pub(crate) checks: Vec<LandmarkCheckReport>,
}

/// One landmark the audit read.
#[derive(Debug, Serialize)]
pub(crate) struct LandmarkCheckReport {
    pub(crate) name: String,
    pub(crate) lat: f64,
    pub(crate) lon: f64,
    pub(crate) min_m: f64,
    pub(crate) max_m: f64,
    pub(crate) value_m: Option<f64>,
    pub(crate) ok: bool,
}

impl From<&LandmarkAudit> for LandmarkReport {
    fn from(audit: &LandmarkAudit) -> LandmarkReport {
        LandmarkReport {
            verdict: match audit.verdict {
                Verdict::Accepted => "accepted",
                Verdict::NothingToCheck => "no landmark inside the coverage",
                _ => "refused",
            },
            checks: audit
                .checks
                .iter()
                .map(|c| LandmarkCheckReport {
                    name: c.landmark.name.clone(),
                    lat: c.landmark.lat,
                    lon: c.landmark.lon,
                    min_m: c.landmark.min_m,
                    max_m: c.landmark.max_m,
                    value_m: c.value,
                    ok: c.ok,
                })
                .collect(),
        }
    }
}

/// Seconds per phase; a patch has no separate audit time.
#[derive(Debug, Serialize)]
pub(crate) struct Timings {
    pub(crate) bake: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) audit: Option<f64>,
    pub(crate) total: f64,
}
