//! `layer.json`, as Cesium's terrain providers read it.

use serde::Serialize;

use crate::tiling::TileRange;

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
            attribution: String::new(),
        }
    }
}
