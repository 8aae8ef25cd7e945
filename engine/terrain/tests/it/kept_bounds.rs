//! The bounds a renderer's selector keeps from frame to frame
//! (`lod::FrameSelector`): kept while they hold, dropped by the selector
//! itself when the ground says they narrowed or the ground is another.

use std::sync::Arc;

use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Body;
use planet_terrain::geo::lattice::lattice_sag_m;
use planet_terrain::ground::water::{drawn_bounds, has_sea};
use planet_terrain::ground::{
    BoundsAt, DetailSource, EllipsoidSource, HeightSource, PackSource, ProceduralSource, Reads, TileBounds, warm_bounds,
};
use planet_terrain::lod::FrameSelector;

/// What selection is given for ground bounds `ground` of `tile`: the
/// surface drawn, the sea raised over ground under it.
fn drawn(source: &dyn HeightSource, tile: TileAddress, ground: TileBounds) -> TileBounds {
    let body = source.body();
    drawn_bounds(has_sea(body), ground, lattice_sag_m(body, tile.depth()))
}

/// Kept bounds follow the source: a selection after the exact bounds were
/// computed, and after the tile was produced, sees them (a kept loose bound
/// would refine near the ground for ever).
#[test]
fn kept_bounds_narrow_when_the_source_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("p.planetpack");
    planet_terrain::testing::write_procedural_pack(&path, 2).expect("pack");
    let pack = Arc::new(planet_terrain::pack::Pack::open(&path).expect("open"));
    let source: Arc<dyn HeightSource> = Arc::new(DetailSource::new(Arc::new(PackSource::new(pack))));
    let mut selector = FrameSelector::new(Reads::Never);
    // Past the data depth (2), off the face edges.
    let tile = TileAddress::new(2, 7, 40, 77).expect("a tile");
    let loose = selector.bounds(&source, tile).expect("bounds");
    assert_eq!(selector.bounds_asked_of_ground(), 1);
    assert_eq!(selector.bounds(&source, tile).expect("bounds"), loose, "kept while nothing narrowed");
    assert_eq!(selector.bounds_asked_of_ground(), 0, "the second selection asked nothing of the ground");
    warm_bounds(&*source);
    let exact = drawn(&*source, tile, source.tile_bounds(tile).expect("exact bounds"));
    assert!(exact.max_elevation - exact.min_elevation < loose.max_elevation - loose.min_elevation);
    assert_eq!(selector.bounds(&source, tile).expect("bounds"), exact, "the exact bounds, once computed");
    source.tile(tile).expect("produced");
    let produced = drawn(&*source, tile, source.tile_bounds_unread(tile).expect("narrowed to the tile"));
    assert_ne!(produced, exact, "a produced tile narrows its bounds");
    assert_eq!(selector.bounds(&source, tile).expect("bounds"), produced, "and selection sees that too");
}

/// Loading on the frame, selection is given exact bounds, kept while the
/// ground is the same one; another ground (an edit makes one) is asked
/// afresh without anyone telling the selector.
#[test]
fn exact_bounds_are_kept_until_the_ground_is_another() {
    let body = Body::earth();
    let first: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(body.clone(), 7));
    let mut selector = FrameSelector::new(Reads::Allowed);
    let tile = TileAddress::new(3, 5, 3, 2).expect("a tile");
    let want = drawn(&*first, tile, first.tile_bounds(tile).expect("bounds"));
    assert_eq!(selector.bounds(&first, tile).expect("asked"), want);
    assert_eq!(selector.bounds_asked_of_ground(), 1);
    assert_eq!(selector.bounds(&first, tile).expect("kept"), want);
    assert_eq!(selector.bounds_asked_of_ground(), 0, "kept");
    // The ellipsoid alone: 0 m everywhere.
    let other: Arc<dyn HeightSource> = Arc::new(EllipsoidSource::new(body));
    let changed = selector.bounds(&other, tile).expect("asked again");
    assert_eq!(selector.bounds_asked_of_ground(), 1, "another ground is asked");
    assert_eq!(changed, drawn(&*other, tile, other.tile_bounds(tile).expect("bounds")));
    assert_ne!(changed, want, "another ground, other bounds");
    // Back to the first: what was kept of it went with the change.
    assert_eq!(selector.bounds(&first, tile).expect("asked"), want);
    assert_eq!(selector.bounds_asked_of_ground(), 1, "nothing of the first ground was kept across the change");
}
