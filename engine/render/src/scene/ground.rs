//! Ground, a scene's third part: what is drawn. The base source the scene
//! was made with, the layer stack over it, and the ground they make (a
//! fresh immutable snapshot after every edit, or the base when there are
//! no layers).
//!
//! The key decision: an edit makes a new ground value rather than
//! changing one in place, so every reader (the selection thread, the tile
//! workers, the horizon map) holds a ground that never changes under it,
//! and the selector notices a new one by itself.

use std::sync::Arc;

use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Ellipsoid};
use planet_terrain::ground::{BoundsAt, HeightFunction, HeightSource};
use planet_terrain::layers::{Footprint, LayerError, LayerStack};

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Ground {
    pub(super) body: Body,
    /// The ground as drawn: the base with the layers applied.
    drawn: Option<Arc<dyn HeightSource>>,
    base: Option<Arc<dyn HeightSource>>,
    layers: LayerStack,
    edits: usize,
    /// The deepest elevation the drawn ground can hold (never above 0).
    pub(super) deepest_m: f64,
}

/// An edit applied: the new ground and where it changed.
pub(super) struct Edited<R> {
    pub(super) result: R,
    pub(super) function: Arc<HeightFunction>,
    pub(super) footprints: Vec<Footprint>,
}

impl Ground {
    pub(super) fn new(body: Body, source: Option<Arc<dyn HeightSource>>) -> Ground {
        let deepest_m = source.as_deref().map_or(0.0, deepest_ground);
        Ground { body, base: source.clone(), drawn: source, layers: LayerStack::new(), edits: 0, deepest_m }
    }

    pub(super) fn drawn(&self) -> Option<&Arc<dyn HeightSource>> {
        self.drawn.as_ref()
    }

    pub(super) fn base(&self) -> Option<&Arc<dyn HeightSource>> {
        self.base.as_ref()
    }

    pub(super) fn layers(&self) -> &LayerStack {
        &self.layers
    }

    pub(super) fn edits(&self) -> usize {
        self.edits
    }

    /// Mutates the layer stack and makes the new ground from it. Without
    /// a base there is no ground to edit and the mutation is refused.
    pub(super) fn edit<R>(
        &mut self,
        mutate: impl FnOnce(&mut LayerStack, &Ellipsoid) -> Result<R, LayerError>,
    ) -> Result<Edited<R>, LayerError> {
        let Some(base) = self.base.clone() else {
            return Err(LayerError::Invalid { order: 0, reason: "a body with no ground cannot be edited".into() });
        };
        let ellipsoid = *self.body.ellipsoid();
        let result = mutate(&mut self.layers, &ellipsoid)?;
        let footprints = self.layers.drain_journal();
        let function = Arc::new(HeightFunction::new(base.clone(), self.layers.clone()));
        // A crater can dig below anything the source held.
        self.deepest_m = deepest_ground(&*function);
        self.drawn = Some(if self.layers.is_empty() { base } else { function.clone() });
        self.edits += 1;
        Ok(Edited { result, function, footprints })
    }
}

/// The deepest elevation `source` can hold (never above the datum): the
/// roots' bounds hold every elevation of a source. A root whose bounds
/// cannot be read counts as the datum.
fn deepest_ground(source: &dyn HeightSource) -> f64 {
    TileAddress::roots().into_iter().map(|r| source.tile_bounds(r).map_or(0.0, |b| b.min_elevation)).fold(0.0, f64::min)
}
