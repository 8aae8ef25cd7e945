//! The cut a refinement ends with: its leaves as [`SelectedNode`]s with
//! their edge relations, culled, with the figures of the frame.
//!
//! The key decision: the relations, culling and statistics are read from
//! the refinement's arena of linked nodes in one pass, after the cover is
//! decided, so no lookup by key is needed.

use std::time::Instant;

use crate::camera::view::View;
use crate::geo::body::Ellipsoid;
use crate::lod::cull::cull;
use crate::lod::cut::{Cut, EdgeRelation, Node, SelectedNode, SelectionSettings, SelectionStatistics};

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
