//! Selection frame after frame, starting from last frame's cut.
//!
//! The key decision: keep the cut, not just its geometry. A [`Selector`]
//! keeps last frame's tree (nodes, their links across edges, their grid
//! points) and changes it only where the new view asks: it re-evaluates
//! the bounds and projected error of every leaf and of every parent of
//! four leaves (other parents once a merge makes them candidates), merges
//! those parents whose error meets the target, then splits the
//! leaf of largest error while the budget allows; with the budget full it
//! trades: the mergeable parent of least error is merged to make room, as
//! long as its error is below the leaf's (a dual queue). Each split and
//! merge keeps the cut a balanced exact cover, so every frame's cut is one.
//!
//! Such a cut is no longer exactly the heap's of [`super::select`] when a
//! budget binds (which parents are split depends on the order the frames
//! came in), so this is the contract instead, tested along flights
//! (`tests/it/select_follow.rs`; `follow_tests.rs` checks the kept tree):
//!
//! - exact cover (every point of the body in exactly one node), neighbours
//!   at most one level apart, edge relations true to the cut;
//! - never more nodes than the budget;
//! - every node's bounds, sphere and error are those [`super::select`]
//!   gives the same tile, by their bits;
//! - without a binding budget, the cut meets the target, as `select`'s
//!   does; with one, its effective error is within [`ERROR_FACTOR`] of the
//!   effective error of `select` from nothing;
//! - the first frame, a frame after the target, the budget or the body
//!   changed, and a frame that would need more than [`max_changes`] splits
//!   and merges (a teleport, a fast turn over fine ground) are `select`'s
//!   cut exactly: an [`ExactSelector`] selects it, and the selector follows
//!   on from there.

use std::time::Instant;

use crate::camera::view::View;
use crate::geo::address::{MAX_DEPTH, TileAddress};
use crate::geo::body::Ellipsoid;
use crate::geo::bounds::BoundingSphere;
use crate::geo::face::Edge;
use crate::ground::{HeightSource, SourceError};
use crate::lod::cut::{
    Context, Cut, ExactSelector, LEAF, NONE, Node, Patch, SelectionSettings, grid_point, quarter_warp, same_elevations,
};
use crate::lod::heap::ErrorHeap;
use crate::lod::outcome::Outcome;

/// The effective error of a followed cut, at most this many times that of
/// [`super::select`] from nothing for the same view and settings (tested).
pub const ERROR_FACTOR: f64 = 1.25;

/// The most splits and merges a frame may make before it gives up
/// following and selects from nothing: a quarter of the budget (and 64),
/// past which following costs about what the exact selection does.
pub fn max_changes(settings: &SelectionSettings) -> usize {
    settings.node_budget / 4 + 64
}

/// The `children` of a node whose block a merge freed: neither a leaf nor
/// split, and nothing links to it.
const FREED: u32 = u32::MAX - 1;

/// Cut selection frame after frame: see the module documentation.
#[derive(Default)]
pub struct Selector {
    /// Selects the frames that are not followed, and owns their tree.
    exact: ExactSelector,
    /// What the kept cut was selected for (body, target bits, budget).
    made_for: Option<(Ellipsoid, u64, usize)>,
    /// The tree: blocks of four children, freed blocks reused.
    nodes: Vec<Node>,
    parents: Vec<u32>,
    /// Each node's patch (the same index).
    patches: Vec<Patch>,
    /// The frame each node was last split in: a trade never merges a
    /// parent split in the same frame, so a frame cannot cycle.
    split_in: Vec<u32>,
    /// The frame each node was last evaluated in.
    evaluated_in: Vec<u32>,
    free: Vec<u32>,
    leaves: usize,
    frame: u32,
    /// Leaves over the target, largest error first.
    splits: ErrorHeap,
    /// Parents, least error first (keyed by the negated error).
    merges: ErrorHeap,
    /// Splits and merges this frame, and the splits alone.
    changes: usize,
    splits_made: usize,
    late_evaluations: usize,
    /// Last frame's least error of a parent of four leaves.
    least_merge: f64,
    followed: bool,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selector").field("leaves", &self.leaves).field("followed", &self.followed).finish()
    }
}

impl Selector {
    pub fn new() -> Selector {
        Selector::default()
    }

    /// True if the last cut was followed from the one before (false: it
    /// was selected from nothing, exactly `select`'s).
    pub fn followed_last_frame(&self) -> bool {
        self.followed
    }

    /// Selects the cut for `view`: last frame's, adjusted (see the module
    /// documentation for what that promises).
    pub fn select(
        &mut self,
        source: &dyn HeightSource,
        view: &View,
        settings: &SelectionSettings,
    ) -> Result<Cut, SourceError> {
        let start = Instant::now();
        let made_for = (*source.body().ellipsoid(), settings.target_error_px.to_bits(), settings.node_budget);
        self.followed = false;
        if self.made_for == Some(made_for) {
            // Until it succeeds the kept cut is suspect (a source error
            // part-way leaves a valid cut, but not one worth following).
            self.made_for = None;
            if let Some(cut) = self.follow(source, view, settings, start)? {
                self.made_for = Some(made_for);
                self.followed = true;
                return Ok(cut);
            }
        }
        let cut = self.exact.select(source, view, settings)?;
        self.adopt();
        self.made_for = Some(made_for);
        Ok(cut)
    }

    /// Takes the exact selector's tree as the one to follow.
    fn adopt(&mut self) {
        let tree = &self.exact.last.nodes;
        self.nodes.clear();
        self.nodes.extend_from_slice(tree);
        self.patches.clear();
        self.patches.extend(tree.iter().map(|n| self.exact.patches[n.patch as usize]));
        self.parents.clear();
        self.parents.resize(tree.len(), NONE);
        self.split_in.clear();
        self.split_in.resize(tree.len(), 0);
        self.evaluated_in.clear();
        self.evaluated_in.resize(tree.len(), 0);
        for (k, node) in tree.iter().enumerate() {
            if !node.is_leaf() {
                self.parents[node.children as usize..node.children as usize + 4].fill(k as u32);
            }
        }
        self.free.clear();
        self.leaves = tree.iter().filter(|n| n.is_leaf()).count();
    }

    /// Last frame's cut adjusted to `view`, or None if that takes more than
    /// [`max_changes`] splits and merges.
    fn follow(
        &mut self,
        source: &dyn HeightSource,
        view: &View,
        settings: &SelectionSettings,
        start: Instant,
    ) -> Result<Option<Cut>, SourceError> {
        let context = Context::new(source, view);
        let target = settings.target_error_px;
        // (Stamps 0 are "never"; 2^32 frames later a stale stamp could only
        // skip one evaluation of a parent.)
        self.frame = self.frame.wrapping_add(1).max(1);
        self.changes = 0;
        self.splits_made = 0;
        self.late_evaluations = 0;
        let mut evaluated = 0;
        let capacity = self.nodes.len();
        self.merges.reset(f64::NEG_INFINITY, capacity);
        // Leaves under last frame's least mergeable parent split only if the
        // budget has room: they wait unordered until then (any guess gives
        // the same pops).
        self.splits.reset(target.max(self.least_merge), capacity);
        let mut least_merge = f64::INFINITY;
        // One pass: the error for this view of every leaf (the cut) and of
        // every parent of four leaves (what could merge), the leaves over the
        // target queued to split, the parents queued to merge (their
        // neighbours are checked when one is taken). Other parents wait
        // until a merge makes them candidates.
        for k in 0..self.nodes.len() {
            let first = self.nodes[k].children;
            if first == FREED {
                continue;
            }
            let leaf = first == LEAF;
            if !leaf && !self.nodes[first as usize..first as usize + 4].iter().all(Node::is_leaf) {
                continue;
            }
            let error = self.evaluate(&context, k)?;
            evaluated += 1;
            if leaf {
                self.offer_split(k as u32, target);
            } else {
                least_merge = least_merge.min(error);
                self.merges.push(-error, k as u32);
            }
        }
        self.least_merge = least_merge;

        // Detail the target no longer needs, least error first.
        while let Some((negated, parent)) = self.merges.peek() {
            // (A NaN error never merges.)
            if -negated > target || (-negated).is_nan() {
                break;
            }
            self.merges.pop();
            if self.can_merge(parent, -negated) {
                self.merge(&context, parent, target)?;
            }
        }
        // Detail it needs, largest error first, traded for the least needed
        // parents when the budget is full.
        let budget = settings.node_budget;
        let mut stopped_by_budget = false;
        while let Some((error, leaf)) = self.splits.peek() {
            if error <= target {
                break;
            }
            self.splits.pop();
            if self.changes > max_changes(settings) {
                return Ok(None);
            }
            // Split or merged away since it was queued. A merge frees a
            // block that the next split reuses, so a stale entry can name a
            // slot that now holds another leaf; equal error bits (an
            // infinite error, with the camera inside the bounds) made it
            // look like the queued one, and that leaf may be at MAX_DEPTH.
            if !self.still_splittable(leaf, error) {
                continue;
            }
            if self.split_balanced(&context, leaf, target, budget)? {
                continue;
            }
            match self.cheapest_merge(error) {
                Some(parent) => {
                    self.merge(&context, parent, target)?;
                    // (The merge may have taken `leaf` itself.)
                    if self.still_splittable(leaf, error) {
                        self.splits.push(error, leaf);
                    }
                }
                None => {
                    stopped_by_budget = true;
                    break;
                }
            }
        }
        if self.changes > max_changes(settings) {
            return Ok(None);
        }
        let evaluated = evaluated + self.late_evaluations + 4 * self.splits_made;
        let outcome = Outcome { settled_error: 0.0, stopped_by_budget, evaluated, start };
        Ok(Some(outcome.cut(&self.nodes, self.leaves, view, &context.ellipsoid, settings)))
    }

    /// Node `k`'s bounds, sphere and error for this frame's view; returns
    /// the error.
    #[inline(always)]
    fn evaluate(&mut self, context: &Context, k: usize) -> Result<f64, SourceError> {
        let (node, patch, ellipsoid) = (&self.nodes[k], &self.patches[k], &context.ellipsoid);
        let tile = node.tile;
        let (bounds, sphere, error) = context.evaluate(tile, |min, max| {
            // The sphere is a function of the patch and the bounds (a
            // root's, of the tile, as the refinement makes it).
            if same_elevations(&node.bounds, min, max) {
                node.sphere
            } else if tile.depth() == 0 {
                BoundingSphere::of_tile(ellipsoid, tile, min, max)
            } else {
                BoundingSphere::enclosing(ellipsoid, patch.centre, &patch.corners, min, max)
            }
        })?;
        let node = &mut self.nodes[k];
        (node.bounds, node.sphere, node.projected_error_px) = (bounds, sphere, error);
        self.evaluated_in[k] = self.frame;
        Ok(error)
    }

    /// Queues leaf `index` to split if it can and its error is over the
    /// target (or unordered, as the refinement splits those too).
    fn offer_split(&mut self, index: u32, target: f64) {
        let node = &self.nodes[index as usize];
        if node.is_leaf()
            && node.tile.depth() < MAX_DEPTH
            && !matches!(
                node.projected_error_px.partial_cmp(&target),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            )
        {
            self.splits.push(node.projected_error_px, index);
        }
    }

    /// True if `index` is a leaf that can split and still has the error
    /// it was queued with.
    fn still_splittable(&self, index: u32, error: f64) -> bool {
        let node = &self.nodes[index as usize];
        node.is_leaf() && node.tile.depth() < MAX_DEPTH && node.projected_error_px.to_bits() == error.to_bits()
    }

    /// True if `index` is split into four leaves none of whose neighbours
    /// is split: merging it keeps neighbours within a level.
    fn mergeable(&self, index: u32) -> bool {
        let node = &self.nodes[index as usize];
        if node.children == LEAF || node.children == FREED {
            return false;
        }
        let first = node.children as usize;
        self.nodes[first..first + 4]
            .iter()
            .all(|child| child.is_leaf() && child.links.iter().all(|&link| self.nodes[link as usize].is_leaf()))
    }

    /// [`Self::mergeable`], and still the node queued with `error`.
    fn can_merge(&self, index: u32, error: f64) -> bool {
        self.nodes[index as usize].projected_error_px.to_bits() == error.to_bits() && self.mergeable(index)
    }

    /// Queues `index` to merge if it can (evaluating it first if the
    /// frame's pass, where it was no candidate, did not).
    fn offer_merge(&mut self, context: &Context, index: u32) -> Result<(), SourceError> {
        if index != NONE && self.mergeable(index) {
            if self.evaluated_in[index as usize] != self.frame {
                self.evaluate(context, index as usize)?;
                self.late_evaluations += 1;
            }
            self.merges.push(-self.nodes[index as usize].projected_error_px, index);
        }
        Ok(())
    }

    /// The mergeable parent of least error, if that is under `error` and it
    /// was not split this frame.
    fn cheapest_merge(&mut self, error: f64) -> Option<u32> {
        while let Some((negated, parent)) = self.merges.peek() {
            if (-negated).partial_cmp(&error) != Some(std::cmp::Ordering::Less) {
                return None;
            }
            self.merges.pop();
            if self.split_in[parent as usize] != self.frame && self.can_merge(parent, -negated) {
                return Some(parent);
            }
        }
        None
    }

    /// Replaces mergeable `index`'s four leaves by it: it takes their links
    /// across its edges, and their neighbours link to it.
    fn merge(&mut self, context: &Context, index: u32, target: f64) -> Result<(), SourceError> {
        self.changes += 1;
        let first = self.nodes[index as usize].children;
        let depth = self.nodes[index as usize].tile.depth();
        for child in first..first + 4 {
            for edge in Edge::ALL {
                let across = self.nodes[child as usize].links[edge as usize];
                if (first..first + 4).contains(&across) {
                    continue;
                }
                let link = if self.nodes[across as usize].tile.depth() > depth {
                    // A leaf of the child's depth: the merged node is the
                    // coarser leaf covering its side now.
                    for link in &mut self.nodes[across as usize].links {
                        if *link == child {
                            *link = index;
                        }
                    }
                    self.parents[across as usize]
                } else {
                    across
                };
                self.nodes[index as usize].links[edge as usize] = link;
            }
            self.nodes[child as usize].children = FREED;
        }
        self.nodes[index as usize].children = LEAF;
        self.free.push(first);
        self.leaves -= 3;
        // Its parent may be mergeable now, and so may the parents of its
        // neighbours, which its children's depth held back.
        self.offer_merge(context, self.parents[index as usize])?;
        for edge in Edge::ALL {
            let across = self.nodes[index as usize].links[edge as usize];
            if self.nodes[across as usize].tile.depth() == depth {
                self.offer_merge(context, self.parents[across as usize])?;
            }
        }
        self.offer_split(index, target);
        Ok(())
    }

    /// Splits leaf `index`, first splitting every coarser edge neighbour
    /// (each split keeps the cut a balanced exact cover). False if the
    /// budget stops it.
    fn split_balanced(
        &mut self,
        context: &Context,
        index: u32,
        target: f64,
        budget: usize,
    ) -> Result<bool, SourceError> {
        let depth = self.nodes[index as usize].tile.depth();
        for edge in Edge::ALL {
            let across = self.nodes[index as usize].links[edge as usize];
            if self.nodes[across as usize].tile.depth() < depth
                && !self.split_balanced(context, across, target, budget)?
            {
                return Ok(false);
            }
        }
        if self.leaves + 3 > budget {
            return Ok(false);
        }
        self.split(context, index, target)?;
        Ok(true)
    }

    /// Replaces leaf `index`, whose edge neighbours are all at its depth,
    /// by its four children, as the refinement's split does (the same
    /// points, so the same spheres, bit for bit), in a freed block if any.
    fn split(&mut self, context: &Context, index: u32, target: f64) -> Result<(), SourceError> {
        let parent = self.nodes[index as usize];
        let ellipsoid = context.ellipsoid;
        let (face, patch) = (parent.tile.face(), self.patches[index as usize]);
        let (s0, t0, s1, t1) = parent.tile.grid_bounds();
        let ws = [patch.ws[0], quarter_warp(s0, s1, 1.0), patch.ws[1], quarter_warp(s0, s1, 3.0), patch.ws[2]];
        let wt = [patch.wt[0], quarter_warp(t0, t1, 1.0), patch.wt[1], quarter_warp(t0, t1, 3.0), patch.wt[2]];
        let point = |i: usize, j: usize| grid_point(&ellipsoid, face, ws[i], wt[j]);
        let [c00, c10, c01, c11] = patch.corners;
        let even = [[c00, point(2, 0), c10], [point(0, 2), patch.centre, point(4, 2)], [c01, point(2, 4), c11]];
        let centres = [[point(1, 1), point(3, 1)], [point(1, 3), point(3, 3)]];
        let patches: [Patch; 4] = std::array::from_fn(|q| {
            let (dx, dy) = (q & 1, q >> 1);
            Patch {
                ws: [ws[2 * dx], ws[2 * dx + 1], ws[2 * dx + 2]],
                wt: [wt[2 * dy], wt[2 * dy + 1], wt[2 * dy + 2]],
                corners: [even[dy][dx], even[dy][dx + 1], even[dy + 1][dx], even[dy + 1][dx + 1]],
                centre: centres[dy][dx],
            }
        });
        let children = parent.tile.children().expect("below MAX_DEPTH");
        // All four evaluated before anything changes: a source error leaves
        // the cut as it was.
        let mut evaluated = [(parent.bounds, parent.sphere, 0.0); 4];
        for (q, child) in children.into_iter().enumerate() {
            let made = &patches[q];
            evaluated[q] = context.evaluate(child, |min, max| {
                BoundingSphere::enclosing(&ellipsoid, made.centre, &made.corners, min, max)
            })?;
        }
        let first = match self.free.pop() {
            Some(first) => first,
            None => {
                let first = self.nodes.len() as u32;
                self.nodes.extend([parent; 4]);
                self.patches.extend(patches);
                self.parents.extend([index; 4]);
                self.split_in.extend([0; 4]);
                self.evaluated_in.extend([0; 4]);
                first
            }
        };
        self.changes += 1;
        self.splits_made += 1;
        self.leaves += 3;
        self.nodes[index as usize].children = first;
        self.split_in[index as usize] = self.frame;
        for (q, child) in children.into_iter().enumerate() {
            let (dx, dy) = (q & 1, q >> 1);
            let me = first + q as u32;
            let mut links = [0u32; 4];
            for edge in Edge::ALL {
                let sibling = match edge {
                    Edge::MinU => (dx == 1).then(|| q - 1),
                    Edge::MaxU => (dx == 0).then(|| q + 1),
                    Edge::MinV => (dy == 1).then(|| q - 2),
                    Edge::MaxV => (dy == 0).then(|| q + 2),
                };
                links[edge as usize] = match sibling {
                    Some(sibling) => first + sibling as u32,
                    None => self.link_out(child, q, edge, parent.links[edge as usize], me),
                };
            }
            let (bounds, sphere, error) = evaluated[q];
            let slot = me as usize;
            self.nodes[slot] = Node {
                tile: child,
                children: LEAF,
                links,
                bounds,
                sphere,
                projected_error_px: error,
                previous: NONE,
                patch: me,
            };
            self.patches[slot] = patches[q];
            self.parents[slot] = index;
            self.evaluated_in[slot] = self.frame;
            self.offer_split(me, target);
        }
        self.merges.push(-parent.projected_error_px, index);
        Ok(())
    }

    /// The link of new child `me` (`child`, quadrant `q`) across `edge`,
    /// where its parent linked `outside`: that node if a leaf (one level
    /// coarser), else its child along the edge, which links to `me` now.
    fn link_out(&mut self, child: TileAddress, q: usize, edge: Edge, outside: u32, me: u32) -> u32 {
        let neighbour = &self.nodes[outside as usize];
        if neighbour.is_leaf() {
            return outside;
        }
        let (quadrant, shared_edge) = if neighbour.tile.face() == child.face() {
            let mirror = if edge.is_u_edge() { 1 } else { 2 };
            ((q ^ mirror) as u32, edge.opposite())
        } else {
            let across = child.neighbour(edge);
            (u32::from(across.address.quadrant()), across.shared_edge)
        };
        let other = neighbour.children + quadrant;
        self.nodes[other as usize].links[shared_edge as usize] = me;
        other
    }
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
