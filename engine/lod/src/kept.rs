//! Selection frame after frame, with the bounds it was given kept.
//!
//! The key decision: selection asks for the bounds of every node it
//! evaluates, every frame (two thousand near the ground), and a stack
//! answers each through every layer (an inset's reach, the detail's maps,
//! the pack index), 1-4 us where a kept copy costs 50 ns: on the demo's own
//! flight, frames loading on the frame thread spent a median 4.3 ms in
//! selection asking again for bounds they had been given. So the selector
//! of a renderer's frames ([`FrameSelector`]) owns what it was given, by
//! tile, and drops it itself: a tile's bounds when the ground says they
//! narrowed ([`planet_ground::narrowed_bounds`], drained before each
//! selection), all of them when the ground is another (an edit makes a new
//! one: it holds a weak reference to the ground it kept bounds of, so the
//! address cannot be reused while it compares). It asks the ground with the
//! one [`Reads`]: `Never` where tile workers read what they want, `Allowed`
//! where tiles load on the frame.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use planet_geo::address::{TileAddress, TileMap};
use planet_geo::body::Body;
use planet_geo::lattice::lattice_sag_m;
use planet_ground::water::{drawn_bounds, has_sea};
use planet_ground::{HeightSource, Reads, SourceError, SourceTile, TileBounds, narrowed_bounds};

use crate::camera::View;
use crate::{Cut, SelectionSettings, Selector};

/// Bounds kept at most (about 40 bytes each); past it they start again.
const KEPT_BOUNDS: usize = 1 << 16;

/// A [`Selector`] for a renderer's frames: see the module documentation.
/// Its cuts are selected on the surface drawn, the sea raised over ground
/// under it ([`planet_ground::water::drawn_bounds`]).
#[derive(Debug)]
pub struct FrameSelector {
    selector: Selector,
    kept: KeptBounds,
    reads: Reads,
    /// The ground the kept bounds are of.
    ground: Option<Weak<dyn HeightSource>>,
}

impl FrameSelector {
    /// A selector asking the ground for bounds with `reads`.
    pub fn new(reads: Reads) -> FrameSelector {
        FrameSelector { selector: Selector::new(), kept: KeptBounds::default(), reads, ground: None }
    }

    /// The cut for `view` over `ground`, from the bounds kept where they
    /// still hold.
    pub fn select(
        &mut self,
        ground: &Arc<dyn HeightSource>,
        view: &View,
        settings: &SelectionSettings,
    ) -> Result<Cut, SourceError> {
        self.follow(ground);
        let seen = KeptView { ground: &**ground, kept: &self.kept, reads: self.reads };
        self.selector.select(&seen, view, settings)
    }

    /// The bounds a selection over `ground` would be given for `tile` now
    /// (kept, or asked of the ground and kept).
    pub fn bounds(&mut self, ground: &Arc<dyn HeightSource>, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.follow(ground);
        KeptView { ground: &**ground, kept: &self.kept, reads: self.reads }.bounds(tile, self.reads)
    }

    /// Bounds the last selection (or [`FrameSelector::bounds`]) asked of the
    /// ground, not kept from before.
    pub fn bounds_asked_of_ground(&self) -> usize {
        self.kept.from_ground.load(Ordering::Relaxed)
    }

    /// Drops what no longer holds before a selection over `ground`: what
    /// narrowed, or all of it when the ground is another.
    fn follow(&mut self, ground: &Arc<dyn HeightSource>) {
        let same_ground = self.ground.as_ref().is_some_and(|kept_of| Weak::ptr_eq(kept_of, &Arc::downgrade(ground)));
        if !same_ground {
            self.kept.lock().clear();
            self.ground = Some(Arc::downgrade(ground));
        }
        self.kept.drain_narrowed(&**ground);
    }
}

/// The bounds selection was given, by [`TileAddress::identity`]. Only the
/// thread that selects uses them; the lock is for `HeightSource`'s `Sync`.
#[derive(Debug, Default)]
struct KeptBounds {
    kept: Mutex<TileMap<u64, TileBounds>>,
    /// Bounds this selection asked of the ground (not kept).
    from_ground: AtomicUsize,
}

impl KeptBounds {
    fn lock(&self) -> MutexGuard<'_, TileMap<u64, TileBounds>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Drops what `ground` says narrowed since the last selection (all of
    /// it when it could not note every tile, or the store is full).
    fn drain_narrowed(&self, ground: &dyn HeightSource) {
        let mut narrowed = Vec::new();
        let noted_all = narrowed_bounds(ground, &mut narrowed);
        let mut kept = self.lock();
        if !noted_all || kept.len() >= KEPT_BOUNDS {
            kept.clear();
        }
        for tile in narrowed {
            kept.remove(&tile.identity());
        }
        self.from_ground.store(0, Ordering::Relaxed);
    }
}

/// A ground whose bounds come kept where they can: what selection sees.
#[derive(Debug)]
struct KeptView<'a> {
    ground: &'a dyn HeightSource,
    kept: &'a KeptBounds,
    reads: Reads,
}

impl HeightSource for KeptView<'_> {
    fn body(&self) -> &Body {
        self.ground.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        self.ground.tile(tile)
    }

    /// Reads as the selector was made to, whatever `reads` says (selection
    /// asks for plain bounds). They are the bounds of the surface drawn:
    /// raised to the sea over ground under it.
    fn bounds(&self, tile: TileAddress, _reads: Reads) -> Result<TileBounds, SourceError> {
        let mut kept = self.kept.lock();
        if let Some(&bounds) = kept.get(&tile.identity()) {
            return Ok(bounds);
        }
        // Errors are not kept: the frame reports them when it asks again.
        self.kept.from_ground.fetch_add(1, Ordering::Relaxed);
        let ground = self.ground.bounds(tile, self.reads)?;
        let body = self.ground.body();
        let bounds = drawn_bounds(has_sea(body), ground, lattice_sag_m(body, tile.depth()));
        kept.insert(tile.identity(), bounds);
        Ok(bounds)
    }

    fn data_depth(&self) -> Option<u8> {
        self.ground.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.ground.colour_data_depth()
    }

    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![self.ground]
    }
}
