//! `planet-pack sample`: the elevation where a person would stand at a
//! latitude/longitude, and where that ground came from.
//!
//! The key decision: one path whether a scene is given or not, the height
//! function read at the depth whose samples lie 1 m apart, so a layer
//! changes nothing, bit for bit, away from its footprint.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use planet_terrain::Geodetic;
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{GroundStack, HeightFunction, HeightSource, Provenance, locate};
use planet_terrain::layers::LayerStack;

use crate::output;

/// One path whether a scene is given or not: the height function (the
/// stack with the scene's layers, or with none) read where a person stands,
/// at the depth whose samples lie 1 m apart. A layer therefore changes
/// nothing, bit for bit, away from its footprint.
pub(crate) fn sample(
    stack: &GroundStack,
    lat: f64,
    lon: f64,
    as_json: bool,
    scene: Option<&Path>,
    detail: bool,
) -> Result<()> {
    let at = Geodetic::from_degrees(lat, lon, 0.0);
    let layers = match scene {
        Some(path) => planet_cli::scene::load_layer_stack(path, stack.body())?.0,
        None => LayerStack::new(),
    };
    let layers_applied = layers.len();
    let function = HeightFunction::new(Arc::new(stack.with_detail(detail)), layers);
    let read_depth = depth_for_spacing(&function, 1.0);
    let surface = GroundReader::new(&function, read_depth).surface(at)?;
    let elevation = surface.ground_m;
    let origin = stack.origin_at(at)?;
    let (provenance, tile) = (origin.provenance, origin.tile);
    let mut described = match (origin.filled, provenance) {
        // A void of the DEM the bake filled: not measured, whatever the
        // tile around it is.
        (Some(fill), _) => format!("a void of the DEM, {fill}"),
        (None, Provenance::Measured) => "measured".to_owned(),
        (None, Provenance::Resampled { from_depth }) => format!("resampled from depth {from_depth}"),
        (None, Provenance::Invented) => "invented: no pack covers it".to_owned(),
    };
    if let Some(above) = &origin.through_void_of {
        described = format!("{described}, seen through a void of {above}");
    }
    // Detail synthesized past the data depth adds invented relief finer
    // than the data over the ground the point stands on; the point is still
    // where that ground came from (measured inside a DEM's footprint).
    let read_tile = locate(function.body(), at, read_depth).0;
    let synthesized =
        provenance != Provenance::Invented && function.source().tile(read_tile)?.provenance == Provenance::Invented;
    if synthesized {
        described = format!("{described}, with detail synthesized past height data depth {}", tile.depth());
    }
    if as_json {
        let value = output::Sample {
            lat,
            lon,
            elevation_m: elevation,
            water_surface_m: surface.water_m,
            water_depth_m: surface.water_m.map(|_| surface.depth_m()),
            depth: tile.depth(),
            tile: tile.to_string(),
            pack: origin.pack,
            measured: provenance.is_measured() && origin.filled.is_none(),
            filled: origin.filled.is_some(),
            provenance: described,
            height_data_depth: stack.data_depth(),
            read_depth,
            packs: stack.packs().iter().map(|(name, _)| name.clone()).collect(),
            layers_applied,
            detail,
            detail_synthesized: synthesized,
        };
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let water = match surface.water_m {
            Some(level) => format!(", under the sea: its surface at {level:.2} m, {:.2} m deep", surface.depth_m()),
            None => String::new(),
        };
        outln!("{elevation:.2} m at {lat}, {lon}{water} ({described}; tile {tile})");
    }
    Ok(())
}
