//! The report: what a bake did, as typed `serde::Serialize` structs, one per
//! mode (a full bake, an up-to-date pack kept, a region patch) under one
//! enum tagged by `mode`. The structs are the schema: their field names (or
//! `rename`s) are the JSON keys `--report` writes and scripts read, so a key
//! cannot be misspelt in one mode and not another, and a unit test pins the
//! whole key set. Callers keep the typed report ([`BakeReport`]) and read
//! what they print through its methods; only a writer serialises it.

pub(crate) mod bake;
pub(crate) mod cluster;
pub(crate) mod parts;
pub(crate) mod patch;

use serde::Serialize;

pub(crate) use bake::{BytesReport, FullReport, InputsReport, UpToDateReport};
pub(crate) use parts::{AccuracyReport, CoverageReport, LandmarkReport, MemoryReport, Timings};
pub(crate) use patch::{AlreadyAppliedReport, CompletedPatchReport, PatchReport, PatchTarget, PatchedTiles};

/// What a bake did: the report of its mode, and the provenance picture the
/// binary draws beside `--report`. Serialises to the report's JSON.
#[derive(Debug, Serialize)]
pub struct BakeReport {
    #[serde(flatten)]
    report: Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    provenance_png: Option<String>,
}

/// The share of voids past which a bake's voids line is a warning.
pub(crate) const VOIDS_WARNING_SHARE: f64 = 0.05;

/// `n` with thousands separated by commas.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a run came to, one per kind of report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Baked,
    UpToDate,
    Patched,
    InterruptedPatchCompleted,
    PatchAlreadyApplied,
    Shard,
    Merged,
    Wave,
    MergeLaidOut,
    MergeCopied,
}

impl Outcome {
    /// Its name in a report's `mode` key.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Baked => "bake",
            Outcome::UpToDate => "up to date",
            Outcome::Patched => "region patch",
            Outcome::InterruptedPatchCompleted => "interrupted patch completed",
            Outcome::PatchAlreadyApplied => "patch already applied",
            Outcome::Shard => "shard",
            Outcome::Merged => "merge",
            Outcome::Wave => "wave",
            Outcome::MergeLaidOut => "merge layout",
            Outcome::MergeCopied => "merge copy",
        }
    }
}

impl BakeReport {
    pub(crate) fn new(report: Report) -> BakeReport {
        BakeReport { report, provenance_png: None }
    }

    /// What the run came to: the report's kind, for a caller to match on.
    pub fn outcome(&self) -> Outcome {
        match self.report {
            Report::Bake(_) => Outcome::Baked,
            Report::UpToDate(_) => Outcome::UpToDate,
            Report::Patch(_) => Outcome::Patched,
            Report::PatchCompleted(_) => Outcome::InterruptedPatchCompleted,
            Report::PatchAlreadyApplied(_) => Outcome::PatchAlreadyApplied,
            Report::Shard(_) => Outcome::Shard,
            Report::Merge(_) => Outcome::Merged,
            Report::Wave(_) => Outcome::Wave,
            Report::MergeLayout(_) => Outcome::MergeLaidOut,
            Report::MergeCopy(_) => Outcome::MergeCopied,
        }
    }

    /// The report's `mode` key.
    pub fn mode(&self) -> &'static str {
        self.outcome().name()
    }

    /// Tiles the run wrote, kept or patched (a patch: the tiles its box
    /// touched).
    pub fn tiles(&self) -> u64 {
        match &self.report {
            Report::Bake(r) => r.tiles as u64,
            Report::UpToDate(r) => r.tiles as u64,
            Report::Patch(r) => r.tiles.tiles_patched,
            Report::PatchCompleted(r) => r.tiles.tiles_patched,
            Report::PatchAlreadyApplied(r) => r.tiles_patched as u64,
            Report::Shard(r) => r.tiles as u64,
            Report::Merge(r) => r.tiles,
            Report::Wave(r) => r.tiles as u64,
            Report::MergeLayout(r) => r.tiles,
            Report::MergeCopy(r) => r.tiles,
        }
    }

    /// Tiles a merge filtered from the shards' coarse surfaces.
    pub fn tiles_filtered(&self) -> Option<u64> {
        match &self.report {
            Report::Merge(r) => Some(r.tiles_filtered as u64),
            _ => None,
        }
    }

    /// A full bake's output rate, samples a second.
    pub fn output_samples_per_second(&self) -> Option<f64> {
        match &self.report {
            Report::Bake(r) => Some(r.output_samples_per_second),
            _ => None,
        }
    }

    /// A full bake's line on the voids it filled, for the terminal (the
    /// report counts them too): how many samples were voids and what filled
    /// them, a warning past 5% of the samples; `None` without voids.
    pub fn voids_line(&self) -> Option<String> {
        let Report::Bake(r) = &self.report else { return None };
        if r.samples_filled == 0 {
            return None;
        }
        let share = r.samples_filled as f64 / r.samples_read.max(1) as f64;
        let how = match r.void_value {
            Some(v) => format!("set to {v} m (--void-value)"),
            None => "filled from the measured samples around them".to_owned(),
        };
        let line = format!(
            "{} of {} samples read from the DEM ({:.1}%) were nodata, {how}; each tile's void mask keeps them apart from measured ground",
            thousands(r.samples_filled),
            thousands(r.samples_read),
            100.0 * share
        );
        Some(if share > VOIDS_WARNING_SHARE {
            format!(
                "warning: {line}. Past {:.0}%, check the DEM's nodata value and footprint (a clipped or rotated raster?)",
                100.0 * VOIDS_WARNING_SHARE
            )
        } else {
            format!("voids: {line}")
        })
    }

    /// Names the provenance picture drawn for this report.
    pub fn set_provenance_png(&mut self, path: &std::path::Path) {
        self.provenance_png = Some(path.display().to_string());
    }

    /// The report as the JSON `--report` writes.
    pub fn to_json(&self) -> serde_json::Value {
        // Plain structs with string keys: serialising to a Value cannot fail.
        serde_json::to_value(self).expect("the report serialises")
    }
}

/// The report of one run, by mode.
#[derive(Debug, Serialize)]
#[serde(tag = "mode")]
pub(crate) enum Report {
    #[serde(rename = "bake")]
    Bake(Box<FullReport>),
    #[serde(rename = "up to date")]
    UpToDate(UpToDateReport),
    #[serde(rename = "region patch")]
    Patch(PatchReport),
    #[serde(rename = "interrupted patch completed")]
    PatchCompleted(CompletedPatchReport),
    #[serde(rename = "patch already applied")]
    PatchAlreadyApplied(AlreadyAppliedReport),
    #[serde(rename = "shard")]
    Shard(Box<cluster::ShardReport>),
    #[serde(rename = "merge")]
    Merge(Box<cluster::MergeReport>),
    #[serde(rename = "wave")]
    Wave(Box<cluster::WaveReport>),
    #[serde(rename = "merge layout")]
    MergeLayout(cluster::LayoutReport),
    #[serde(rename = "merge copy")]
    MergeCopy(cluster::CopyReport),
}

#[cfg(test)]
mod tests {
    use super::parts::LandmarkCheckReport;
    use super::*;
    use crate::stages::audit::DepthAudit;

    /// Every key of `value`, as dotted paths (`[]` for array elements).
    fn keys(value: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    out.push(path.clone());
                    keys(v, &path, out);
                }
            }
            serde_json::Value::Array(items) => {
                if let Some(first) = items.first() {
                    keys(first, &format!("{prefix}[]"), out);
                }
            }
            _ => {}
        }
    }

    /// The report's keys, sorted, and its JSON; its `mode()` is the key's.
    fn key_set(report: Report) -> (Vec<String>, serde_json::Value) {
        let report = BakeReport::new(report);
        let json = report.to_json();
        assert_eq!(json["mode"], report.mode());
        let mut out = Vec::new();
        keys(&json, "", &mut out);
        out.sort();
        (out, json)
    }

    fn landmarks() -> LandmarkReport {
        let check = LandmarkCheckReport {
            name: "Everest".into(),
            lat: 27.99,
            lon: 86.93,
            min_m: 8000.0,
            max_m: 9000.0,
            value_m: Some(8500.0),
            ok: true,
        };
        LandmarkReport { verdict: "accepted", checks: vec![check] }
    }

    fn target() -> PatchTarget {
        let region = crate::options::Region { south: 10.0, west: 20.0, north: 15.0, east: 30.0 };
        PatchTarget { out: "out.planetpack".into(), region, body: "earth".into() }
    }

    fn accuracy() -> AccuracyReport {
        AccuracyReport { passed: true, per_depth: vec![DepthAudit::default()] }
    }

    const LANDMARK_KEYS: [&str; 9] = [
        "landmarks",
        "landmarks.checks",
        "landmarks.checks[].lat",
        "landmarks.checks[].lon",
        "landmarks.checks[].max_m",
        "landmarks.checks[].min_m",
        "landmarks.checks[].name",
        "landmarks.checks[].ok",
        "landmarks.checks[].value_m",
    ];

    const ACCURACY_KEYS: [&str; 12] = [
        "accuracy_audit",
        "accuracy_audit.passed",
        "accuracy_audit.per_depth",
        "accuracy_audit.per_depth[].class_mismatches",
        "accuracy_audit.per_depth[].depth",
        "accuracy_audit.per_depth[].samples_compared",
        "accuracy_audit.per_depth[].samples_filled_not_compared",
        "accuracy_audit.per_depth[].tiles",
        "accuracy_audit.per_depth[].violations",
        "accuracy_audit.per_depth[].worst_colour_error",
        "accuracy_audit.per_depth[].worst_height_error_m",
        "accuracy_audit.per_depth[].worst_height_error_steps",
    ];

    fn memory() -> MemoryReport {
        MemoryReport {
            budget: 1 << 30,
            budget_from: "--memory".into(),
            chunk_cache: 1,
            gdal_cache: 1,
            fixed: 1,
            tile_state_estimate: Some(1),
        }
    }

    const MEMORY_KEYS: [&str; 7] = [
        "memory",
        "memory.budget",
        "memory.budget_from",
        "memory.chunk_cache",
        "memory.fixed",
        "memory.gdal_cache",
        "memory.tile_state_estimate",
    ];

    fn expected(own: &[&str], shared: &[&[&str]]) -> Vec<String> {
        let mut all: Vec<String> = own.iter().chain(shared.iter().copied().flatten()).map(|k| k.to_string()).collect();
        all.push("landmarks.verdict".into());
        all.sort();
        all
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "the pinned key list of every report kind, read as one table")]
    fn the_report_keys_are_pinned() {
        let full = Report::Bake(Box::new(FullReport {
            inputs: InputsReport {
                dem: "dem.tif".into(),
                imagery: None,
                classes: None,
                dem_size: (1440, 720),
                dem_projected: false,
                dem_pixel_spacing_m: [27_800.0, 27_800.0],
            },
            out: "out.planetpack".into(),
            body: "earth".into(),
            radii_m: [6378137.0, 6378137.0, 6356752.3],
            tier: "standard".into(),
            codec: 0,
            coverage: CoverageReport::from(planet_terrain::pack::Coverage::GLOBAL),
            depth: 2,
            data_depth: 1,
            data_depth_spacing_m: 39_135.6,
            height_data_depth: 1,
            colour_data_depth: 0,
            tiles: 126,
            tiles_per_depth: vec![6, 24, 96],
            tiles_resumed: 0,
            samples: 126 * 131 * 131,
            nodata_policy: "fill".into(),
            void_value: None,
            samples_read: 96 * 131 * 131,
            samples_filled: 0,
            tiles_measured: 126,
            tiles_with_filled_voids: 0,
            bytes: BytesReport { file: 1, payload: 1 },
            landmarks: landmarks(),
            base_audit: None,
            accuracy_audit: accuracy(),
            timings_s: Timings { bake: 1.0, audit: Some(1.0), total: 2.0 },
            output_samples_per_second: 1.0,
            jobs: 2,
            memory: memory(),
            detail_law: planet_terrain::ground::LawSummary {
                exponent: Some(0.75),
                octave_gain: 0.59,
                first_octave: 30.0,
                twist_cap_m: Some(12.0),
            },
        }));
        let full_keys = [
            "body",
            "bytes",
            "bytes.file",
            "bytes.payload",
            "codec",
            "colour_data_depth",
            "coverage",
            "coverage.east",
            "coverage.global",
            "coverage.north",
            "coverage.south",
            "coverage.west",
            "data_depth",
            "data_depth_spacing_m",
            "depth",
            "detail_law",
            "detail_law.exponent",
            "detail_law.first_octave",
            "detail_law.octave_gain",
            "detail_law.twist_cap_m",
            "height_data_depth",
            "inputs",
            "inputs.classes",
            "inputs.dem",
            "inputs.dem_pixel_spacing_m",
            "inputs.dem_projected",
            "inputs.dem_size",
            "inputs.imagery",
            "jobs",
            "mode",
            "nodata_policy",
            "out",
            "output_samples_per_second",
            "radii_m",
            "samples",
            "samples_filled",
            "samples_read",
            "tier",
            "tiles",
            "tiles_measured",
            "tiles_per_depth",
            "tiles_resumed",
            "tiles_with_filled_voids",
            "timings_s",
            "timings_s.audit",
            "timings_s.bake",
            "timings_s.total",
        ];
        let (keys, json) = key_set(full);
        assert_eq!(keys, expected(&full_keys, &[&LANDMARK_KEYS, &ACCURACY_KEYS, &MEMORY_KEYS]));
        assert_eq!(json["mode"], "bake");
        assert_eq!(json["inputs"]["imagery"], serde_json::Value::Null, "an absent input is null, not missing");
        assert_eq!(json["inputs"]["dem_size"], serde_json::json!([1440, 720]));

        let up_to_date =
            Report::UpToDate(UpToDateReport { out: "out.planetpack".into(), tiles: 126, landmarks: landmarks() });
        let (keys, json) = key_set(up_to_date);
        assert_eq!(keys, expected(&["mode", "out", "tiles"], &[&LANDMARK_KEYS]));
        assert_eq!(json["mode"], "up to date");

        let patch = Report::Patch(PatchReport {
            target: target(),
            tiles: PatchedTiles {
                tiles_patched: 1,
                patched: vec!["0/0/0/0".into()],
                rewritten_in_place: 1,
                appended: 0,
            },
            blend_border_deg: 0.5,
            samples_from_dem: 0,
            samples_kept: 0,
            landmarks: landmarks(),
            accuracy_audit: accuracy(),
            timings_s: Timings { bake: 1.0, audit: None, total: 1.0 },
            memory: memory(),
        });
        let patch_keys = [
            "appended",
            "blend_border_deg",
            "body",
            "mode",
            "out",
            "patched",
            "region",
            "region.east",
            "region.north",
            "region.south",
            "region.west",
            "rewritten_in_place",
            "samples_from_dem",
            "samples_kept",
            "tiles_patched",
            "timings_s",
            "timings_s.bake",
            "timings_s.total",
        ];
        let (keys, json) = key_set(patch);
        assert_eq!(keys, expected(&patch_keys, &[&LANDMARK_KEYS, &ACCURACY_KEYS, &MEMORY_KEYS]));
        assert_eq!(json["mode"], "region patch");

        let completed = Report::PatchCompleted(CompletedPatchReport {
            target: target(),
            tiles: PatchedTiles {
                tiles_patched: 1,
                patched: vec!["0/0/0/0".into()],
                rewritten_in_place: 1,
                appended: 0,
            },
            read_back_as_journaled: true,
            landmarks: landmarks(),
        });
        let completed_keys = [
            "appended",
            "body",
            "mode",
            "out",
            "patched",
            "read_back_as_journaled",
            "region",
            "region.east",
            "region.north",
            "region.south",
            "region.west",
            "rewritten_in_place",
            "tiles_patched",
        ];
        let (keys, json) = key_set(completed);
        assert_eq!(keys, expected(&completed_keys, &[&LANDMARK_KEYS]));
        assert_eq!(json["mode"], "interrupted patch completed");
    }
}
