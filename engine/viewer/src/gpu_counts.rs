//! The terrain passes' GPU work counts as `--stats` writes them, in the
//! shot's statistics and in every frame of a path's log.
//!
//! The key decision: one shape everywhere, with the ratios the goals are
//! stated in (vertex shader runs per drawn node; fragment shader runs, and
//! fragments through the shaded pass's early depth test, per covered pixel)
//! written beside the raw counts, and `null` where the device has no
//! pipeline statistics queries, so a reader never mistakes a device that
//! cannot count for a frame that did no work.

use planet_render::scene::FrameReport;
use planet_render::{PassCounts, WorkCounts};
use serde::Serialize;

/// Node instances a frame's terrain passes drew: its drawn nodes, or none
/// where it drew no terrain (the first frames, before the roots arrive,
/// show the analytic body and draw none of the nodes they selected).
pub fn instances(report: &FrameReport) -> usize {
    if report.draw_calls.terrain_shaded > 0 { report.statistics.nodes_drawn } else { 0 }
}

/// A frame's terrain work as `--stats` writes it.
#[derive(Debug, Serialize)]
pub struct GpuCounts {
    pub terrain_depth: PassWork,
    pub terrain_shaded: PassWork,
    pub covered_pixels: Option<u64>,
    pub shaded_samples_passed: Option<u64>,
    pub shaded_fragments_per_covered_pixel: Option<f64>,
    pub shaded_samples_per_covered_pixel: Option<f64>,
}

/// One pass's counts, and its vertex shader runs per drawn node.
#[derive(Debug, Serialize)]
pub struct PassWork {
    pub input_primitives: u64,
    pub vertex_invocations: u64,
    pub clipping_primitives: u64,
    pub fragment_invocations: u64,
    pub vertex_invocations_per_node: Option<f64>,
}

impl GpuCounts {
    /// `counts` of a frame that drew `nodes_drawn` node instances; `None`
    /// (`null`) when the device did not count.
    pub fn of(counts: Option<&WorkCounts>, nodes_drawn: usize) -> Option<GpuCounts> {
        let counts = counts?;
        Some(GpuCounts {
            terrain_depth: PassWork::of(&counts.terrain_depth, nodes_drawn),
            terrain_shaded: PassWork::of(&counts.terrain_shaded, nodes_drawn),
            covered_pixels: counts.covered_pixels,
            shaded_samples_passed: counts.shaded_samples_passed,
            shaded_fragments_per_covered_pixel: counts.shaded_fragments_per_covered_pixel(),
            shaded_samples_per_covered_pixel: counts.shaded_samples_per_covered_pixel(),
        })
    }
}

impl PassWork {
    fn of(counts: &PassCounts, nodes_drawn: usize) -> PassWork {
        PassWork {
            input_primitives: counts.input_primitives,
            vertex_invocations: counts.vertex_invocations,
            clipping_primitives: counts.clipping_primitives,
            fragment_invocations: counts.fragment_invocations,
            vertex_invocations_per_node: (nodes_drawn > 0)
                .then(|| counts.vertex_invocations as f64 / nodes_drawn as f64),
        }
    }
}

/// The summary line's words for `counts`.
pub fn summary(counts: Option<&WorkCounts>) -> String {
    let Some(counts) = counts else { return "GPU work counts unavailable on this device".to_string() };
    match (counts.shaded_fragments_per_covered_pixel(), counts.shaded_samples_per_covered_pixel()) {
        (Some(runs), Some(passed)) => format!(
            "per covered pixel: {runs:.2} shaded-pass fragment shader runs, {passed:.2} fragments through its depth test"
        ),
        _ => "no covered pixels counted".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts() -> WorkCounts {
        let pass = |fragments| PassCounts {
            input_primitives: 4608,
            vertex_invocations: 3060,
            clipping_primitives: 4000,
            fragment_invocations: fragments,
        };
        WorkCounts {
            terrain_depth: pass(0),
            terrain_shaded: pass(1100),
            covered_pixels: Some(1000),
            shaded_samples_passed: Some(1002),
        }
    }

    fn json(counts: Option<&WorkCounts>, nodes_drawn: usize) -> serde_json::Value {
        serde_json::to_value(GpuCounts::of(counts, nodes_drawn)).expect("plain data serialises")
    }

    #[test]
    fn the_ratios_sit_beside_the_counts() {
        let j = json(Some(&counts()), 2);
        assert_eq!(j["terrain_shaded"]["vertex_invocations_per_node"], 1530.0);
        assert_eq!(j["shaded_fragments_per_covered_pixel"], 1.1);
        assert_eq!(j["covered_pixels"], 1000);
        assert_eq!(j["shaded_samples_per_covered_pixel"], 1.002);
        assert_eq!(
            summary(Some(&counts())),
            "per covered pixel: 1.10 shaded-pass fragment shader runs, 1.00 fragments through its depth test"
        );
    }

    #[test]
    fn a_device_that_cannot_count_writes_null_and_says_so() {
        assert_eq!(json(None, 12), serde_json::Value::Null);
        assert!(summary(None).contains("unavailable"));
        let no_pixels = WorkCounts { covered_pixels: None, ..counts() };
        assert_eq!(json(Some(&no_pixels), 0)["terrain_depth"]["vertex_invocations_per_node"], serde_json::Value::Null);
        assert_eq!(summary(Some(&no_pixels)), "no covered pixels counted");
    }
}
