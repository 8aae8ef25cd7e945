//! What a frame drew, for those who must keep clear of it: the grounds a
//! frame may draw under a point, and how far its flat lattice cells sag.
//!
//! The key decision: the camera keeps clear of the ground it is shown, not
//! only of the finest ground. A coarse cut (a small budget) or a stand-in
//! (an ancestor drawn while a tile loads, as after a jump) draws a coarser
//! surface, which can lie above the finest one; a camera held 1.5 m over
//! the finest ground then stood under the ground it was shown and saw sky
//! through it.

use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Body;

impl super::TerrainScene {
    /// The depths whose ground (bilinear between their samples) a frame
    /// may draw at `at`, within a sample: a node draws its lattice (every
    /// fourth sample, so the samples of two levels up) from its own tile
    /// or, while that loads, from its deepest resident ancestor. One is the
    /// last cut's node there; the other the deepest resident tile there
    /// (after a jump, the new cut's node stands on it). The camera keeps
    /// clear of these grounds as well as the finest: a coarser surface can
    /// lie above it.
    pub fn drawn_ground_depths_at(&self, at: planet_terrain::Geodetic) -> [Option<u8>; 2] {
        use planet_terrain::geo::address::MAX_DEPTH;
        let (finest, _, _) = planet_terrain::ground::locate(&self.body, at, MAX_DEPTH);
        let resident_at = |tile: TileAddress| {
            (0..=tile.depth()).rev().filter_map(|d| tile.ancestor_at(d)).find(|&t| self.residency.slot_of(t).is_some())
        };
        let node = (0..=MAX_DEPTH).filter_map(|d| finest.ancestor_at(d)).find(|t| self.last_cut.contains_key(t));
        let last_cut = node.map(|n| n.depth().saturating_sub(2).min(resident_at(n).map_or(0, |t| t.depth())));
        [last_cut, resident_at(finest).map(|t| t.depth())]
    }
}

/// How far a node's drawn lattice can lie inside the surface through its
/// vertices at `depth`: the sag of a cell's diagonal chord on the body's
/// largest radius, cells taken half as large again as nominal (the warp's
/// spread).
pub(super) fn lattice_sag_m(body: &Body, depth: u8) -> f64 {
    let radius = body.ellipsoid().radii().max_element();
    let cell = body.tile_size_m(depth) / f64::from(planet_terrain::geo::lattice::LATTICE_CELLS);
    let diagonal = 1.5 * std::f64::consts::SQRT_2 * cell;
    radius * (1.0 - (0.5 * diagonal / radius).cos())
}
