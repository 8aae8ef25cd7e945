//! The JSON planet-pack writes (`info --json`, `sample --json`, `cut
//! --json`), as typed structs.
//!
//! The key decision: the structs are the schema. Their field names are the
//! keys scripts read, one struct per command, so a key cannot drift between
//! two places that build it, and `tests::the_keys_are_pinned` holds the key
//! sets a script may rely on.

use planet_terrain::lod::Cut;
use planet_terrain::pack::{Coverage, IndexEntry};
use serde::Serialize;

/// `info --json`: the header, the index's shape and the payload's size.
#[derive(Debug, Serialize)]
pub struct PackInfo {
    pub path: Option<String>,
    pub version: u16,
    pub body: String,
    pub radii_m: [f64; 3],
    pub tier: String,
    pub codec: u8,
    pub compression: &'static str,
    pub compression_level: i8,
    pub height_data_depth: u8,
    pub colour_data_depth: u8,
    pub max_depth: u8,
    pub tile_count: u64,
    pub tiles_per_depth: Vec<u64>,
    pub coverage: Coverage,
    pub fingerprint: String,
    pub patches: u32,
    pub last_patch: Option<LastPatchInfo>,
    /// The detail law the header records; null in a version 2 pack.
    pub detail_law: Option<planet_terrain::ground::LawSummary>,
    pub file_bytes: u64,
    pub index_bytes: u64,
    pub index_pages: IndexPages,
    pub payload_bytes: u64,
    pub decoded_bytes: u64,
    pub compression_ratio: f64,
    /// Every index entry (`--tiles`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles: Option<Vec<TileEntry>>,
}

/// The last region patch a pack records.
#[derive(Debug, Serialize)]
pub struct LastPatchInfo {
    pub region: Coverage,
    pub inputs_sha256_prefix: String,
}

/// How the index is paged.
#[derive(Debug, Serialize)]
pub struct IndexPages {
    pub root_bytes: u64,
    pub directory_pages: u64,
    pub leaf_pages: u64,
}

/// One index entry, as `info --tiles` lists it.
#[derive(Debug, Serialize)]
pub struct TileEntry {
    pub tile: String,
    pub key: String,
    pub payload_offset: u64,
    pub payload_length: u32,
    pub payload_crc32: String,
    pub min_elevation_m: f32,
    pub max_elevation_m: f32,
    pub geometric_error_m: f32,
    pub measured: bool,
}

impl From<&IndexEntry> for TileEntry {
    fn from(e: &IndexEntry) -> TileEntry {
        TileEntry {
            tile: e.tile().to_string(),
            key: format!("{:#018x}", e.key.raw()),
            payload_offset: e.payload_offset,
            payload_length: e.payload_length,
            payload_crc32: format!("{:#010x}", e.payload_checksum),
            min_elevation_m: e.min_elevation,
            max_elevation_m: e.max_elevation,
            geometric_error_m: e.geometric_error,
            measured: e.measured,
        }
    }
}

/// `sample --json`: the height where a person stands, and where it came from.
#[derive(Debug, Serialize)]
pub struct Sample {
    pub lat: f64,
    pub lon: f64,
    /// The ground: the sea floor under water.
    pub elevation_m: f64,
    /// The water's surface over the point, where it is under the sea
    /// (`planet_terrain::ground::water`); absent on dry ground.
    pub water_surface_m: Option<f64>,
    /// How deep the water is there; absent on dry ground.
    pub water_depth_m: Option<f64>,
    pub depth: u8,
    pub tile: String,
    pub pack: Option<String>,
    pub measured: bool,
    /// The point was a void of its pack's DEM, filled by the bake (and no
    /// pack below shows through it).
    pub filled: bool,
    pub provenance: String,
    pub height_data_depth: Option<u8>,
    pub read_depth: u8,
    pub packs: Vec<String>,
    pub layers_applied: usize,
    pub detail: bool,
    pub detail_synthesized: bool,
}

/// `cut --json`: what the selection chose for one camera.
#[derive(Debug, Serialize)]
pub struct CutSummary {
    pub nodes_selected: usize,
    pub nodes_culled: usize,
    pub nodes_drawn: usize,
    pub nodes_drawn_measured: usize,
    /// Drawn nodes some of whose samples were voids a bake filled (of
    /// measured ground or not).
    pub nodes_drawn_with_filled_voids: usize,
    pub deepest_drawn_depth: u8,
    pub effective_screen_error_pixels: f64,
    pub stopped_by_budget: bool,
    pub selection_cpu_ms: f64,
    /// With `--drawn-slopes`: the slopes of the triangles drawn over the
    /// packs' boxes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drawn_slopes: Option<SlopeSummary>,
}

/// The slopes of the triangles a cut draws (`slopes::drawn_slopes`).
#[derive(Debug, Serialize)]
pub struct SlopeSummary {
    /// Drawn nodes with a lattice vertex in the packs' boxes.
    pub nodes: usize,
    /// Triangles with all three corners in the boxes, whose slopes these are.
    pub triangles: usize,
    pub median_deg: f64,
    pub p99_deg: f64,
    pub p99_9_deg: f64,
}

impl From<&Cut> for CutSummary {
    fn from(cut: &Cut) -> CutSummary {
        let s = cut.statistics;
        let drawn = || cut.nodes.iter().filter(|n| n.culled.is_none());
        CutSummary {
            nodes_selected: s.nodes_selected,
            nodes_culled: s.nodes_culled,
            nodes_drawn: s.nodes_drawn,
            nodes_drawn_measured: drawn().filter(|n| n.bounds.provenance.is_measured()).count(),
            nodes_drawn_with_filled_voids: drawn().filter(|n| n.bounds.voids).count(),
            deepest_drawn_depth: drawn().map(|n| n.tile.depth()).max().unwrap_or(0),
            effective_screen_error_pixels: s.effective_screen_error_pixels,
            stopped_by_budget: cut.stopped_by_budget,
            selection_cpu_ms: s.selection_cpu_ms,
            drawn_slopes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(value: &impl Serialize) -> Vec<String> {
        let json = serde_json::to_value(value).expect("plain data serialises");
        json.as_object().expect("an object").keys().cloned().collect()
    }

    /// Scripts read these keys: renaming one is a breaking change, made here
    /// on purpose or not at all.
    #[test]
    fn the_keys_are_pinned() {
        let sample = Sample {
            lat: 1.0,
            lon: 2.0,
            elevation_m: 3.0,
            water_surface_m: None,
            water_depth_m: None,
            depth: 4,
            tile: "0/0/0/0".into(),
            pack: None,
            measured: true,
            filled: false,
            provenance: "measured".into(),
            height_data_depth: Some(4),
            read_depth: 20,
            packs: vec![],
            layers_applied: 0,
            detail: true,
            detail_synthesized: false,
        };
        assert_eq!(
            keys(&sample),
            [
                "depth",
                "detail",
                "detail_synthesized",
                "elevation_m",
                "filled",
                "height_data_depth",
                "lat",
                "layers_applied",
                "lon",
                "measured",
                "pack",
                "packs",
                "provenance",
                "read_depth",
                "tile",
                "water_depth_m",
                "water_surface_m"
            ]
        );
        let cut = CutSummary {
            nodes_selected: 1,
            nodes_culled: 0,
            nodes_drawn: 1,
            nodes_drawn_measured: 1,
            nodes_drawn_with_filled_voids: 0,
            deepest_drawn_depth: 0,
            effective_screen_error_pixels: 1.0,
            stopped_by_budget: false,
            selection_cpu_ms: 0.1,
            drawn_slopes: None,
        };
        assert_eq!(
            keys(&cut),
            [
                "deepest_drawn_depth",
                "effective_screen_error_pixels",
                "nodes_culled",
                "nodes_drawn",
                "nodes_drawn_measured",
                "nodes_drawn_with_filled_voids",
                "nodes_selected",
                "selection_cpu_ms",
                "stopped_by_budget"
            ]
        );
        let region = serde_json::to_value(Coverage { south: 1.0, west: 2.0, north: 3.0, east: 4.0 }).unwrap();
        assert_eq!(region, serde_json::json!({"south": 1.0, "west": 2.0, "north": 3.0, "east": 4.0}));
    }
}
