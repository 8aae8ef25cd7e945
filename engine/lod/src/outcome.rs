//! The cut a refinement ends with: its leaves as [`SelectedNode`]s with
//! their edge relations, culled, with the figures of the frame.
//!
//! The key decision: the relations, culling and statistics are read from
//! the refinement's arena of linked nodes in one pass, after the cover is
//! decided, so no lookup by key is needed.

use std::time::Instant;

use crate::camera::view::View;
use crate::cull::cull;
use crate::cut::{Cut, EdgeRelation, Node, SelectedNode, SelectionSettings, SelectionStatistics};
use planet_geo::body::Ellipsoid;

/// How a refinement ended, for [`Outcome::cut`].
pub(super) struct Outcome {
    /// The largest error of leaves that cannot split (at `MAX_DEPTH`).
    pub(super) settled_error: f64,
    pub(super) stopped_by_budget: bool,
    pub(super) deferred: bool,
    pub(super) evaluated: usize,
    pub(super) start: Instant,
}

impl Outcome {
    /// The cut of `arena`'s `leaves` leaves: their edge relations, culling
    /// and the statistics.
    pub(super) fn cut(
        self,
        arena: &[Node],
        leaves: usize,
        view: &View,
        ellipsoid: &Ellipsoid,
        settings: &SelectionSettings,
    ) -> Cut {
        // Each node's depth and whether it is split, a byte each: the edge
        // relations read these at random, and 5k bytes stay in L1 where 5k
        // nodes (600 kB) do not.
        let shapes: Vec<u8> = arena.iter().map(|n| n.tile.depth() | u8::from(!n.is_leaf()) << 7).collect();
        let mut nodes: Vec<SelectedNode> = Vec::with_capacity(leaves);
        nodes.extend(arena.iter().filter(|n| n.is_leaf()).map(|n| {
            let depth = n.tile.depth();
            let relation = |link: u32| edge_relation(depth, shapes[link as usize]);
            let [a, b, c, d] = n.links;
            SelectedNode {
                tile: n.tile,
                bounds: n.bounds,
                sphere: n.sphere,
                projected_error_px: n.projected_error_px,
                culled: None,
                edges: [relation(a), relation(b), relation(c), relation(d)],
            }
        }));
        cull(&mut nodes, view, ellipsoid, settings.near_m);
        // The largest error left unsplit where the cut is drawn is the error
        // it meets.
        let effective = nodes
            .iter()
            .filter(|n| n.culled.is_none())
            .map(|n| n.projected_error_px)
            .fold(self.settled_error, f64::max);
        let culled = nodes.iter().filter(|n| n.culled.is_some()).count();
        let statistics = SelectionStatistics {
            nodes_selected: nodes.len(),
            nodes_culled: culled,
            nodes_drawn: nodes.len() - culled,
            nodes_evaluated: self.evaluated,
            effective_screen_error_pixels: effective,
            selection_cpu_ms: self.start.elapsed().as_secs_f64() * 1e3,
        };
        let (stopped_by_budget, deferred) = (self.stopped_by_budget, self.deferred);
        Cut { nodes, effective_screen_error_px: effective, stopped_by_budget, deferred, statistics }
    }
}

impl Cut {
    /// This cut, selected for `selected_for`, drawn for `view` instead: a
    /// cut selected off the frame thread can be a frame or more behind the
    /// camera. Culling is marked again for `view` (the cover holds whatever
    /// the view, so turning opens no hole), and each node's error is
    /// projected again for the new distance to its bounding sphere (at
    /// least the near plane) and the new pixels per radian, so the cut's
    /// error says what the lag costs.
    pub fn follow(&mut self, selected_for: &View, view: &View, ellipsoid: &Ellipsoid, near_m: f64) {
        let zoom = view.pixels_per_radian() / selected_for.pixels_per_radian();
        for node in &mut self.nodes {
            node.culled = None;
            let before = node.sphere.distance(selected_for.position).max(near_m);
            let now = node.sphere.distance(view.position).max(near_m);
            node.projected_error_px *= zoom * before / now;
        }
        cull(&mut self.nodes, view, ellipsoid, near_m);
        let drawn = self.nodes.iter().filter(|n| n.culled.is_none());
        let effective = drawn.clone().map(|n| n.projected_error_px).fold(0.0, f64::max);
        let drawn = drawn.count();
        self.effective_screen_error_px = effective;
        self.statistics.effective_screen_error_pixels = effective;
        self.statistics.nodes_drawn = drawn;
        self.statistics.nodes_culled = self.nodes.len() - drawn;
    }
}

/// How the cut continues across an edge of a leaf at `depth` whose link
/// there has `shape`: its depth, and the top bit set if it is split.
fn edge_relation(depth: u8, shape: u8) -> EdgeRelation {
    if shape & 0x7f < depth {
        EdgeRelation::Coarser
    } else if shape >> 7 == 0 {
        EdgeRelation::Same
    } else {
        EdgeRelation::Finer
    }
}

#[cfg(test)]
mod tests {
    use crate::camera::view::View;
    use crate::cut::{SelectionSettings, select};
    use planet_geo::body::Geodetic;
    use planet_ground::{HeightSource, ProceduralSource};

    fn view(source: &ProceduralSource, height: f64, heading: f64) -> View {
        let at = Geodetic::from_degrees(46.5, 8.0, height);
        View::looking_from(source.body(), at, heading, -20.0, 60f64.to_radians(), (640, 360))
    }

    /// Following a cut to its own view changes nothing; following it down
    /// and round leaves the cover, re-culls it for the new view and
    /// projects each node's error for its new distance.
    #[test]
    fn a_followed_cut_is_culled_and_projected_for_the_new_view() {
        let source = ProceduralSource::new(planet_geo::body::Body::earth(), 11);
        let e = *source.body().ellipsoid();
        let settings = SelectionSettings { target_error_px: 2.0, node_budget: 2048, near_m: 1.0 };
        let (from, to) = (view(&source, 6000.0, 0.0), view(&source, 4000.0, 150.0));
        let cut = select(&source, &from, &settings).expect("procedural ground");
        let mut same = cut.clone();
        same.follow(&from, &from, &e, settings.near_m);
        assert_eq!(same.nodes, cut.nodes, "no move, no change");

        let mut followed = cut.clone();
        followed.follow(&from, &to, &e, settings.near_m);
        let tiles = |c: &crate::Cut| c.nodes.iter().map(|n| n.tile).collect::<Vec<_>>();
        assert_eq!(tiles(&followed), tiles(&cut), "the cover is kept");
        let planes = to.frustum(settings.near_m);
        let (mut in_view, mut turned_away) = (0, 0);
        for (after, before) in followed.nodes.iter().zip(&cut.nodes) {
            let outside = crate::cull::outside_frustum(&planes, &after.sphere);
            turned_away += usize::from(outside);
            assert!(!outside || after.culled.is_some(), "{}: outside the new view, drawn", after.tile);
            let near = after.sphere.distance(to.position) < 3000.0;
            if !outside && near {
                in_view += 1;
                assert!(after.culled.is_none(), "{}: near and in the new view, culled", after.tile);
            }
            // Nearer now, larger; as far as the spheres say.
            let ratio = after.sphere.distance(from.position).max(1.0) / after.sphere.distance(to.position).max(1.0);
            let want = before.projected_error_px * ratio;
            assert!(
                (after.projected_error_px - want).abs() <= 1e-9 * want,
                "{}: {} against {want}",
                after.tile,
                after.projected_error_px
            );
        }
        assert!(in_view > 10 && turned_away > 10, "the move shows new ground and hides old ({in_view}, {turned_away})");
    }
}
