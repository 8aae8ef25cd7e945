//! The report: what a bake did, as JSON, with the landmark and accuracy
//! audits in the same shape for every mode.

use crate::audit::DepthAudit;
use crate::landmarks::{LandmarkAudit, Verdict};

/// What a bake did, for the report.
#[derive(Clone, Debug)]
pub struct BakeReport {
    pub json: serde_json::Value,
}

pub(crate) fn landmark_json(audit: &LandmarkAudit) -> serde_json::Value {
    serde_json::json!({
        "verdict": match audit.verdict { Verdict::Accepted => "accepted", Verdict::NothingToCheck => "no landmark inside the coverage", _ => "refused" },
        "checks": audit.checks.iter().map(|c| serde_json::json!({
            "name": c.landmark.name, "lat": c.landmark.lat, "lon": c.landmark.lon,
            "min_m": c.landmark.min_m, "max_m": c.landmark.max_m, "value_m": c.value, "ok": c.ok,
        })).collect::<Vec<_>>(),
    })
}

pub(crate) fn accuracy_json(per_depth: &[DepthAudit]) -> serde_json::Value {
    serde_json::json!({"passed": true, "per_depth": per_depth.iter().map(DepthAudit::json).collect::<Vec<_>>()})
}
