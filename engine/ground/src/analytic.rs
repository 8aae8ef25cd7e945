//! Ground in closed form: heights (and optionally classes) as functions of
//! the unit direction, with bounds a function of the tile.
//!
//! The key decision: one leaf type for every ground that is a formula (a
//! slope for the physics tests, ridges for the shading tests, ground whose
//! bounds alone steer a selection test), so the trait's leaf contract
//! (`parts` empty, no data depths, invented provenance) is written once and
//! each such ground is a closure or two at its use.

use glam::DVec3;

use crate::{HeightSource, Provenance, Reads, SourceError, SourceTile, TileBounds, sample_directions};
use planet_geo::address::TileAddress;
use planet_geo::body::Body;

type HeightFn = Box<dyn Fn(DVec3) -> f64 + Send + Sync>;
type ClassFn = Box<dyn Fn(DVec3) -> u8 + Send + Sync>;
type BoundsFn = Box<dyn Fn(TileAddress) -> TileBounds + Send + Sync>;

/// A leaf height source from formulas.
pub struct AnalyticSource {
    body: Body,
    height: HeightFn,
    class: Option<ClassFn>,
    bounds: BoundsFn,
}

impl std::fmt::Debug for AnalyticSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnalyticSource").field("body", &self.body.name()).finish_non_exhaustive()
    }
}

impl AnalyticSource {
    /// Heights `height(direction)` in metres over `body`'s ellipsoid, each
    /// tile bounded by `bounds(tile)` (which the caller states truly: a
    /// selection trusts it).
    pub fn new(
        body: Body,
        height: impl Fn(DVec3) -> f64 + Send + Sync + 'static,
        bounds: impl Fn(TileAddress) -> TileBounds + Send + Sync + 'static,
    ) -> AnalyticSource {
        AnalyticSource { body, height: Box::new(height), class: None, bounds: Box::new(bounds) }
    }

    /// [`AnalyticSource::new`] with every tile's elevations in `range` and
    /// a geometric error `error(lattice_spacing_m)`, of the spacing of the
    /// tile's drawn lattice (four sample spacings), capped at the range.
    pub fn within(
        body: Body,
        height: impl Fn(DVec3) -> f64 + Send + Sync + 'static,
        range: (f64, f64),
        error: impl Fn(f64) -> f64 + Send + Sync + 'static,
    ) -> AnalyticSource {
        let spacing_body = body.clone();
        AnalyticSource::new(body, height, move |tile| {
            let spacing = 4.0 * spacing_body.sample_spacing_m(tile.depth());
            TileBounds::invented(range.0, range.1, error(spacing).min(range.1 - range.0))
        })
    }

    /// Surface classes `class(direction)` in every tile.
    pub fn with_classes(mut self, class: impl Fn(DVec3) -> u8 + Send + Sync + 'static) -> AnalyticSource {
        self.class = Some(Box::new(class));
        self
    }
}

impl TileBounds {
    /// Bounds of invented ground.
    pub fn invented(min_elevation: f64, max_elevation: f64, geometric_error: f64) -> TileBounds {
        TileBounds { min_elevation, max_elevation, geometric_error, provenance: Provenance::Invented, voids: false }
    }
}

impl HeightSource for AnalyticSource {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }

    fn body(&self) -> &Body {
        &self.body
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let directions = sample_directions(tile);
        let heights = directions.iter().map(|&d| (self.height)(d) as f32).collect();
        let classes = self.class.as_ref().map(|class| directions.iter().map(|&d| class(d)).collect());
        Ok(SourceTile { tile, heights, classes, colour: None, provenance: Provenance::Invented, voids: None })
    }

    fn bounds(&self, tile: TileAddress, _reads: Reads) -> Result<TileBounds, SourceError> {
        Ok((self.bounds)(tile))
    }

    fn data_depth(&self) -> Option<u8> {
        None
    }

    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}
