//! `layer.json`, as Cesium's terrain providers read it, and the child
//! availability the metadata extension carries.
//!
//! The key decision: availability is said twice, the same. `layer.json`
//! lists every level's tiles (`available`, for clients that read it), and
//! every tile of a level that is a multiple of [`METADATA_AVAILABILITY`]
//! carries the next levels' tiles under it (`metadataAvailability`, which
//! CesiumJS prefers: it learns a deep level's tiles only where it looks,
//! as Cesium's own services do).

use serde::Serialize;

use crate::tiling::{TileId, TileRange};

/// Levels of child availability a tile's metadata carries, in tiles of the
/// levels that are its multiples (0, 10, 20): Cesium's own services' value.
pub const METADATA_AVAILABILITY: u8 = 10;

/// The tileset's description.
#[derive(Clone, Debug, Serialize)]
pub struct Layer {
    pub tilejson: &'static str,
    pub name: String,
    pub description: String,
    pub version: &'static str,
    pub format: &'static str,
    pub scheme: &'static str,
    pub projection: &'static str,
    pub tiles: Vec<&'static str>,
    pub minzoom: u8,
    pub maxzoom: u8,
    /// West, south, east, north (degrees).
    pub bounds: [f64; 4],
    /// Per level from 0, the rectangles of tiles that exist.
    pub available: Vec<Vec<TileRange>>,
    pub extensions: Vec<&'static str>,
    /// Tiles of levels that are multiples of this carry the next this many
    /// levels' availability under them (the metadata extension).
    #[serde(rename = "metadataAvailability")]
    pub metadata_availability: u8,
    pub attribution: String,
}

impl Layer {
    pub fn new(
        name: String,
        description: String,
        available: Vec<Vec<TileRange>>,
        bounds: [f64; 4],
        water: bool,
    ) -> Layer {
        let mut extensions = vec!["octvertexnormals"];
        if water {
            extensions.push("watermask");
        }
        extensions.push("metadata");
        Layer {
            tilejson: "2.1.0",
            name,
            description,
            version: "1.0.0",
            format: "quantized-mesh-1.0",
            scheme: "tms",
            projection: "EPSG:4326",
            tiles: vec!["{z}/{x}/{y}.terrain?v={version}"],
            minzoom: 0,
            maxzoom: available.len().saturating_sub(1) as u8,
            bounds,
            available,
            extensions,
            metadata_availability: METADATA_AVAILABILITY,
            attribution: String::new(),
        }
    }
}

/// The metadata extension's JSON for `tile`: where it is an availability
/// tile (its level a multiple of [`METADATA_AVAILABILITY`]), the ranges of
/// `available` under it for each of the next levels, from the level below
/// it, ending at the last level that has any; `None` for other tiles.
pub fn child_availability(available: &[Vec<TileRange>], tile: TileId) -> Option<String> {
    if !tile.z.is_multiple_of(METADATA_AVAILABILITY) {
        return None;
    }
    let mut levels: Vec<Vec<TileRange>> = Vec::new();
    for k in 1..=METADATA_AVAILABILITY {
        let Some(ranges) = available.get(usize::from(tile.z + k)) else { break };
        let under = TileRange {
            start_x: tile.x << k,
            start_y: tile.y << k,
            end_x: ((tile.x + 1) << k) - 1,
            end_y: ((tile.y + 1) << k) - 1,
        };
        let clipped: Vec<TileRange> = ranges.iter().filter_map(|r| r.intersection(&under)).collect();
        if clipped.is_empty() {
            break;
        }
        levels.push(clipped);
    }
    #[derive(Serialize)]
    struct Metadata {
        available: Vec<Vec<TileRange>>,
    }
    Some(serde_json::to_string(&Metadata { available: levels }).expect("ranges serialize"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start_x: u32, start_y: u32, end_x: u32, end_y: u32) -> TileRange {
        TileRange { start_x, start_y, end_x, end_y }
    }

    /// A global level 0-1 and a box deeper: the western root tile lists
    /// level 1's western half and the box's tiles to level 3; the eastern
    /// one its own half only; a level-2 tile carries nothing.
    #[test]
    fn a_root_tile_carries_the_levels_under_it_clipped_to_it() {
        let available =
            vec![vec![range(0, 0, 1, 0)], vec![range(0, 0, 3, 1)], vec![range(1, 2, 1, 2)], vec![range(2, 4, 3, 5)]];
        let west = child_availability(&available, TileId { z: 0, x: 0, y: 0 }).unwrap();
        assert_eq!(
            west,
            r#"{"available":[[{"startX":0,"startY":0,"endX":1,"endY":1}],[{"startX":1,"startY":2,"endX":1,"endY":2}],[{"startX":2,"startY":4,"endX":3,"endY":5}]]}"#
        );
        let east = child_availability(&available, TileId { z: 0, x: 1, y: 0 }).unwrap();
        assert_eq!(east, r#"{"available":[[{"startX":2,"startY":0,"endX":3,"endY":1}]]}"#);
        assert_eq!(child_availability(&available, TileId { z: 2, x: 1, y: 2 }), None);
    }
}
