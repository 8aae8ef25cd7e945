//! The height function: a source composed with the layer stack, evaluated a
//! whole tile at a time. It is the authoritative ground: selection bounds,
//! ground queries and the renderer's tiles all come from here, so they can
//! never disagree about where the surface is.

use std::sync::Arc;

use crate::address::TileAddress;
use crate::body::Body;
use crate::source::{HeightSource, SourceError, SourceTile, TileBounds};

/// The ordered set of edits applied over a source. Edits (craters, flatten
/// pads, ...) arrive with the editable-ground work; until then the stack is
/// always empty and composing it leaves the source's ground unchanged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerStack {
    _private: (),
}

impl LayerStack {
    pub fn new() -> LayerStack {
        LayerStack::default()
    }

    pub fn is_empty(&self) -> bool {
        true
    }
}

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
}

impl HeightSource for HeightFunction {
    fn body(&self) -> &Body {
        self.source.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        debug_assert!(self.layers.is_empty());
        self.source.tile(tile)
    }

    fn tile_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.source.tile_bounds(tile)
    }

    fn data_depth(&self) -> Option<u8> {
        self.source.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.source.colour_data_depth()
    }
}
