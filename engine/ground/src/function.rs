//! The height function: a source composed with the layer stack, evaluated a
//! whole tile at a time. It is the authoritative ground: selection bounds,
//! ground queries and the renderer's tiles all come from here, so they can
//! never disagree about where the surface is.

use std::sync::Arc;

use crate::layers::{Layer, LayerKind, LayerStack, Target, pad_sample_points};
use crate::{HeightSource, SourceError, SourceTile, TileBounds, sample_directions, sample_ground};
use planet_geo::address::TileAddress;
use planet_geo::body::Body;

/// A source with its layers applied.
#[derive(Clone, Debug)]
pub struct HeightFunction {
    source: Arc<dyn HeightSource>,
    layers: LayerStack,
}

impl HeightFunction {
    pub fn new(source: Arc<dyn HeightSource>, layers: LayerStack) -> HeightFunction {
        HeightFunction { source, layers }
    }

    pub fn source(&self) -> &Arc<dyn HeightSource> {
        &self.source
    }

    pub fn layers(&self) -> &LayerStack {
        &self.layers
    }

    pub fn layers_mut(&mut self) -> &mut LayerStack {
        &mut self.layers
    }

    /// The depth whose sample spacing is at most a quarter of `radius_m`:
    /// the fixed resolution at which a footprint's mean is measured.
    fn depth_for(&self, radius_m: f64) -> u8 {
        (0..planet_geo::address::MAX_DEPTH)
            .find(|&d| self.body().sample_spacing_m(d) <= 0.25 * radius_m)
            .unwrap_or(planet_geo::address::MAX_DEPTH)
    }

    /// The mean ground beneath a flatten pad, from every layer of lower
    /// order: sampled on rings over the pad at a resolution set by its size.
    fn mean_below(&self, layer: &Layer) -> f64 {
        let LayerKind::Flatten { lat, lon, radius_m, .. } = layer.kind else { return 0.0 };
        let below = HeightFunction::new(self.source.clone(), self.layers.below(layer.order));
        let depth = self.depth_for(radius_m);
        let points = pad_sample_points(self.body().ellipsoid(), lat, lon, radius_m);
        let sum: f64 = points.iter().map(|&g| sample_ground(&below, g, depth).map_or(0.0, |s| s.elevation_m)).sum();
        sum / points.len() as f64
    }
}

/// How much a layer can move the ground, metres (for bounds and error).
fn amplitude(layer: &Layer) -> (f64, f64, f64) {
    // (lowest it can reach relative to ground, highest, size of its shape)
    match &layer.kind {
        LayerKind::Crater { radius_m, depth_m, rim_m, .. } => (-depth_m.abs(), rim_m.abs(), *radius_m),
        LayerKind::Raise { radius_m, amount_m, .. } => (amount_m.min(0.0), amount_m.max(0.0), *radius_m),
        LayerKind::Flatten { radius_m, .. } => (0.0, 0.0, *radius_m),
        LayerKind::PolygonFlatten { blend_m, .. } => (0.0, 0.0, blend_m.max(1.0)),
    }
}

impl HeightFunction {
    /// The source's bounds `b` of `tile`, widened by every layer whose
    /// footprint meets the tile (so an edit below the data's minimum is
    /// never culled away), with the error an edit adds where the tile's
    /// lattice is coarse against the edit's own size.
    fn widen(&self, tile: TileAddress, mut b: TileBounds) -> TileBounds {
        let ellipsoid = *self.body().ellipsoid();
        let lattice = 4.0 * self.body().sample_spacing_m(tile.depth());
        for layer in self.layers.layers() {
            if !layer.footprint(&ellipsoid).touches(&ellipsoid, tile, b.min_elevation, b.max_elevation) {
                continue;
            }
            let (down, up, size) = amplitude(layer);
            let targets = match &layer.kind {
                LayerKind::Flatten { target: Target::Elevation(e), .. } => Some(*e),
                LayerKind::PolygonFlatten { elevation_m, .. } => Some(*elevation_m),
                _ => None,
            };
            b.min_elevation = (b.min_elevation + down).min(targets.unwrap_or(f64::INFINITY));
            b.max_elevation = (b.max_elevation + up).max(targets.unwrap_or(f64::NEG_INFINITY));
            b.geometric_error = b.geometric_error.max((up - down) * (2.0 * lattice / size).powi(2).min(1.0));
            if matches!(layer.kind, LayerKind::Flatten { target: Target::FootprintMean, .. }) {
                // The mean lies within the ground's own bounds.
                b.geometric_error = b
                    .geometric_error
                    .max((b.max_elevation - b.min_elevation) * (2.0 * lattice / size).powi(2).min(1.0));
            }
        }
        b
    }
}

impl HeightSource for HeightFunction {
    fn body(&self) -> &Body {
        self.source.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let mut t = self.source.tile(tile)?;
        if self.layers.is_empty() {
            return Ok(t);
        }
        let ellipsoid = *self.body().ellipsoid();
        let points: Vec<glam::DVec3> =
            sample_directions(tile).into_iter().map(|d| ellipsoid.surface_point_from_direction(d)).collect();
        let mut heights: Vec<f64> = t.heights.iter().map(|&h| f64::from(h)).collect();
        self.layers.apply(&ellipsoid, &points, &mut heights, &|layer| self.mean_below(layer));
        let edited: Vec<f32> = heights.into_iter().map(|h| h as f32).collect();
        // Ground an edit made is made, not missing: no longer "no data".
        if let Some(classes) = t.classes.as_mut() {
            for ((class, was), now) in classes.iter_mut().zip(&t.heights).zip(&edited) {
                if *class == crate::NO_DATA_CLASS && was != now {
                    *class = 0;
                }
            }
        }
        if crate::water::has_sea(self.body()) {
            crate::water::keep_edits_dry(&t.heights, &edited, &mut t.classes);
        }
        t.heights = edited;
        Ok(t)
    }

    /// The source's bounds, widened by the layers (`HeightFunction::widen`):
    /// they change only with an edit, which makes a new function, so the
    /// source's narrowing is this function's too.
    fn bounds(&self, tile: TileAddress, reads: crate::Reads) -> Result<TileBounds, SourceError> {
        Ok(self.widen(tile, self.source.bounds(tile, reads)?))
    }

    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![&*self.source]
    }

    fn data_depth(&self) -> Option<u8> {
        self.source.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.source.colour_data_depth()
    }
}
