//! Selection's bounds, kept across frames.
//!
//! The key decision: selection asks for the bounds of every node it
//! evaluates, every frame (two thousand near the ground), and a stack
//! answers each through every layer (an inset's reach, the detail's maps,
//! the pack index), 1-4 us where a kept copy costs 50 ns: on the demo's own
//! flight, frames loading on the frame thread spent a median 4.3 ms in
//! selection asking again for bounds they had been given. So the scene
//! keeps what selection was given, by tile, until the source says they
//! narrowed ([`planet_terrain::ground::narrowed_bounds`]) or the ground changes (an
//! edit, [`KeptBounds::clear`]). With workers selection takes bounds
//! without a read ([`HeightSource::tile_bounds_unread`], the workers read
//! what they wanted); loading on the frame it takes exact ones.

use planet_terrain::ground::BoundsAt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use planet_terrain::geo::address::{TileAddress, TileMap};
use planet_terrain::geo::body::Body;
use planet_terrain::ground::water::has_sea;
use planet_terrain::ground::{HeightSource, Reads, SourceError, SourceTile, TileBounds, narrowed_bounds};

/// Bounds kept at most (about 40 bytes each); past it they start again.
const KEPT_BOUNDS: usize = 1 << 16;

/// Which bounds selection asks the source for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Without a read ([`HeightSource::tile_bounds_unread`]): workers read.
    Unread,
    /// Exact ([`HeightSource::tile_bounds`]), read on the frame if need be.
    Exact,
}

/// The bounds selection was given, by [`TileAddress::identity`]. Only the
/// thread that selects uses them; the lock is for `HeightSource`'s `Sync`.
#[derive(Debug, Default)]
pub(crate) struct KeptBounds {
    kept: Mutex<TileMap<u64, TileBounds>>,
    /// Bounds this frame's selection asked of the source (not kept).
    from_source: AtomicUsize,
}

impl KeptBounds {
    fn lock(&self) -> std::sync::MutexGuard<'_, TileMap<u64, TileBounds>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The ground changed: nothing kept holds.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// `source` as this frame's selection sees it: bounds as `ask` says,
    /// kept from earlier frames except where the source says they narrowed
    /// since.
    pub(crate) fn view<'a>(&'a self, source: &'a dyn HeightSource, ask: Ask) -> KeptView<'a> {
        let mut narrowed = Vec::new();
        let noted_all = narrowed_bounds(source, &mut narrowed);
        let mut kept = self.lock();
        if !noted_all || kept.len() >= KEPT_BOUNDS {
            kept.clear();
        }
        for tile in narrowed {
            kept.remove(&tile.identity());
        }
        drop(kept);
        self.from_source.store(0, Ordering::Relaxed);
        KeptView { source, kept: self, ask }
    }

    /// Bounds this frame's selection asked of the source (not kept from an
    /// earlier frame).
    pub(crate) fn asked_of_source(&self) -> usize {
        self.from_source.load(Ordering::Relaxed)
    }
}

/// A source whose bounds come kept where they can: what selection sees.
#[derive(Debug)]
pub(crate) struct KeptView<'a> {
    source: &'a dyn HeightSource,
    kept: &'a KeptBounds,
    ask: Ask,
}

impl HeightSource for KeptView<'_> {
    fn body(&self) -> &Body {
        self.source.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        self.source.tile(tile)
    }

    /// The view reads as the frame that made it asked (`Ask`), whatever
    /// `reads` says: selection asks it for plain bounds. They are the
    /// bounds of the surface drawn ([`planet_terrain::ground::water::drawn_bounds`]):
    /// raised to the sea over ground under it.
    fn bounds(&self, tile: TileAddress, _reads: Reads) -> Result<TileBounds, SourceError> {
        let mut kept = self.kept.lock();
        if let Some(&bounds) = kept.get(&tile.identity()) {
            return Ok(bounds);
        }
        // Errors are not kept: the frame reports them when it asks again.
        self.kept.from_source.fetch_add(1, Ordering::Relaxed);
        let ground = match self.ask {
            Ask::Unread => self.source.tile_bounds_unread(tile)?,
            Ask::Exact => self.source.tile_bounds(tile)?,
        };
        // Selection draws the sea's surface over ground under it.
        let body = self.source.body();
        let sag = planet_terrain::geo::lattice::lattice_sag_m(body, tile.depth());
        let bounds = planet_terrain::ground::water::drawn_bounds(has_sea(body), ground, sag);
        kept.insert(tile.identity(), bounds);
        Ok(bounds)
    }

    fn data_depth(&self) -> Option<u8> {
        self.source.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.source.colour_data_depth()
    }

    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![self.source]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use planet_terrain::ground::{DetailSource, PackSource};

    use super::*;

    /// What selection is given for ground bounds `ground` of `tile`.
    fn drawn(source: &dyn HeightSource, tile: TileAddress, ground: TileBounds) -> TileBounds {
        let body = source.body();
        let sag = planet_terrain::geo::lattice::lattice_sag_m(body, tile.depth());
        planet_terrain::ground::water::drawn_bounds(has_sea(body), ground, sag)
    }

    /// Kept bounds follow the source: a frame after the exact bounds were
    /// computed, and after the tile was produced, selection sees them (a
    /// kept loose bound would refine near the ground for ever).
    #[test]
    fn kept_bounds_narrow_when_the_source_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 2).expect("pack");
        let pack = Arc::new(planet_terrain::pack::Pack::open(&path).expect("open"));
        let source: Arc<dyn HeightSource> = Arc::new(DetailSource::new(Arc::new(PackSource::new(pack))));
        let kept = KeptBounds::default();
        // Past the data depth (2), off the face edges.
        let tile = TileAddress::new(2, 7, 40, 77).expect("a tile");
        let seen = || kept.view(&*source, Ask::Unread).tile_bounds(tile).expect("bounds");
        let loose = seen();
        assert_eq!(seen(), loose, "kept while nothing narrowed");
        assert_eq!(kept.asked_of_source(), 0, "the second frame asked nothing of the source");
        planet_terrain::ground::warm_bounds(&*source);
        let exact = drawn(&*source, tile, source.tile_bounds(tile).expect("exact bounds"));
        assert!(exact.max_elevation - exact.min_elevation < loose.max_elevation - loose.min_elevation);
        assert_eq!(seen(), exact, "the exact bounds, once computed");
        source.tile(tile).expect("produced");
        let produced = drawn(&*source, tile, source.tile_bounds_unread(tile).expect("narrowed to the tile"));
        assert_ne!(produced, exact, "a produced tile narrows its bounds");
        assert_eq!(seen(), produced, "and selection sees that too");
    }

    /// Loading on the frame, selection is given exact bounds, kept until
    /// the ground changes.
    #[test]
    fn exact_bounds_are_kept_until_the_ground_changes() {
        let body = Body::earth();
        let first: Arc<dyn HeightSource> = Arc::new(planet_terrain::ground::ProceduralSource::new(body.clone(), 7));
        let kept = KeptBounds::default();
        let tile = TileAddress::new(3, 5, 3, 2).expect("a tile");
        let want = drawn(&*first, tile, first.tile_bounds(tile).expect("bounds"));
        assert_eq!(kept.view(&*first, Ask::Exact).tile_bounds(tile).expect("asked"), want);
        assert_eq!(kept.asked_of_source(), 1);
        assert_eq!(kept.view(&*first, Ask::Exact).tile_bounds(tile).expect("kept"), want);
        assert_eq!(kept.asked_of_source(), 0, "kept");
        // The ellipsoid alone: 0 m everywhere.
        let other: Arc<dyn HeightSource> = Arc::new(planet_terrain::ground::EllipsoidSource::new(body));
        assert_eq!(kept.view(&*other, Ask::Exact).tile_bounds(tile).expect("kept"), want, "kept until cleared");
        kept.clear();
        let changed = kept.view(&*other, Ask::Exact).tile_bounds(tile).expect("asked again");
        assert_eq!(changed, drawn(&*other, tile, other.tile_bounds(tile).expect("bounds")));
        assert_ne!(changed, want, "another ground, other bounds");
    }
}
