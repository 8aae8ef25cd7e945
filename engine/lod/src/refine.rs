//! Refinement: the heap loop that splits a cut, and the [`Selector`]
//! that runs it frame after frame on last frame's tree.
//!
//! The key decision: a selector may be told to make at most so many fresh
//! splits (splits of nodes last frame's tree did not split) in one
//! selection, or to stop making them once the selection has taken so long
//! ([`Selector::set_fresh_split_limit`]). Fresh splits are where
//! the time goes: new corners to warp and project and, above all, bounds
//! the source has not given before (1-4 us each without a read, 20 us and
//! more read on the frame), hundreds a frame where a camera comes down
//! fast onto rough ground. Past the limit a node whose split would be
//! fresh stays a leaf, its error counted in the cut's effective error, and
//! the cut is marked [`Cut::deferred`]; splits last frame made go on, so
//! a moving camera's cut lags but never drops what it had (stopping there
//! as the budget stops once threw those away, to be made fresh again).
//! The next selection starts from that tree, its splits no longer fresh,
//! and goes further: a camera held still reaches
//! [`select`](crate::select)'s cut in as many frames as its fresh
//! splits take at the limit.

use std::time::Instant;

use crate::camera::view::View;
use crate::cut::{Context, Cut, LEAF, NONE, Node, Patch, SelectionSettings, grid_point, quarter_warp, same_elevations};
use crate::heap::ErrorHeap;
use crate::outcome::Outcome;
use planet_geo::address::{MAX_DEPTH, TileAddress};
use planet_geo::body::Ellipsoid;
use planet_geo::bounds::{BoundingSphere, TangentBox};
use planet_geo::face::Edge;
use planet_ground::{HeightSource, SourceError};

/// Selection frame after frame: the same cut as [`select`](crate::select), bit for bit
/// unless a fresh split limit defers some, from less work: the one
/// selector every consumer uses.
///
/// The key decision: reuse geometry, never decisions. A node's bounding
/// sphere and grid points depend on its tile and its bounds alone, not on
/// the view, so a selector keeps last frame's tree and a split whose node
/// was split last frame takes its children's points (and their spheres and
/// tangent boxes, where the source reports the same bounds) from it instead
/// of warping and projecting them again. Everything the view decides
/// (errors, the heap's order, balance, culling) is computed afresh, so
/// without a fresh split limit the cut cannot depend on what was drawn
/// before. Last frame's tree is also where the next frame
/// builds, so a selector allocates nothing once warm. Patches live in one
/// store across frames (compacted when mostly garbage).
#[derive(Default)]
pub struct Selector {
    pub(super) last: Tree,
    spare: Tree,
    /// Every patch the last tree names, and garbage.
    pub(super) patches: Vec<Patch>,
    /// The error at which the budget stopped the last selection (0 if it
    /// did not): where this one's will likely stop too.
    stop_error: f64,
    /// What stops fresh splits (see the module documentation); `None`: as
    /// many as the cut needs.
    fresh_split_limit: Option<FreshSplitLimit>,
}

/// When a selection stops making fresh splits. Counts under 1 are taken
/// as 1: a cut with no fresh split at all would never leave the roots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FreshSplitLimit {
    /// After this many.
    Count(usize),
    /// After `at_least`, once the selection has run for `after` (wall
    /// clock, so the cut depends on the machine's speed and load).
    Time { at_least: usize, after: std::time::Duration },
}

/// A refinement tree and what it was made on.
#[derive(Default)]
pub(super) struct Tree {
    ellipsoid: Option<Ellipsoid>,
    pub(super) nodes: Vec<Node>,
    heap: ErrorHeap,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selector").field("last_nodes", &self.last.nodes.len()).finish()
    }
}

impl Selector {
    pub fn new() -> Selector {
        Selector::default()
    }

    /// Fresh splits per selection from now on stop at `limit` (`None`: no
    /// limit, every cut is [`select`](crate::select)'s).
    pub fn set_fresh_split_limit(&mut self, limit: Option<FreshSplitLimit>) {
        self.fresh_split_limit = limit;
    }

    /// Selects the cut for `view`: exactly [`select`](crate::select)'s, unless the fresh
    /// split limit keeps some of its nodes leaves ([`Cut::deferred`]).
    pub fn select(
        &mut self,
        source: &dyn HeightSource,
        view: &View,
        settings: &SelectionSettings,
    ) -> Result<Cut, SourceError> {
        let start = Instant::now();
        let ellipsoid = *source.body().ellipsoid();
        // Another body's tree has other points.
        if self.last.ellipsoid != Some(ellipsoid) {
            self.last.nodes.clear();
            self.patches.clear();
        }
        let last = &self.last.nodes;
        // Keys far under last frame's stop are unlikely to pop: half of it
        // leaves room for a camera closing in (a wrong guess costs time only).
        let stop_guess = 0.5 * self.stop_error;
        let spare = std::mem::take(&mut self.spare);
        let mut refine = Refinement::new(source, view, settings, last, &mut self.patches, spare, stop_guess)?;
        (refine.fresh_left, refine.fresh_until) = match self.fresh_split_limit {
            None => (usize::MAX, None),
            Some(FreshSplitLimit::Count(most)) => (most.max(1), None),
            Some(FreshSplitLimit::Time { at_least, after }) => (at_least.max(1), Some(start + after)),
        };
        let (settled_error, stopped_by_budget) = refine.run()?;
        self.stop_error = refine.stop_error;
        let deferred = refine.deferred;
        let outcome = Outcome { settled_error, stopped_by_budget, deferred, evaluated: refine.evaluated, start };
        let cut = outcome.cut(&refine.nodes, refine.leaves, view, &ellipsoid, settings);
        let mut tree = Tree { ellipsoid: Some(ellipsoid), nodes: refine.nodes, heap: refine.heap };
        if self.patches.len() > 2 * tree.nodes.len() + 64 {
            // Mostly patches of nodes no longer made: keep the live ones.
            let live: Vec<Patch> = tree.nodes.iter().map(|n| self.patches[n.patch as usize]).collect();
            for (k, node) in tree.nodes.iter_mut().enumerate() {
                node.patch = k as u32;
            }
            self.patches = live;
        }
        self.spare = std::mem::replace(&mut self.last, tree);
        Ok(cut)
    }
}

/// The state refinement works on: the arena of nodes, the patch store,
/// the heap and the counts.
struct Refinement<'a> {
    context: Context<'a>,
    /// Last frame's tree (empty without one).
    last: &'a [Node],
    budget: usize,
    nodes: Vec<Node>,
    patches: &'a mut Vec<Patch>,
    heap: ErrorHeap,
    /// Nodes at or under it never split, so they never enter the heap.
    target_error_px: f64,
    leaves: usize,
    evaluated: usize,
    /// The error of the node the budget stopped at (0 if none).
    stop_error: f64,
    /// Fresh splits this selection may still make (then, with
    /// `fresh_until`, until that instant).
    fresh_left: usize,
    fresh_until: Option<Instant>,
    /// The fresh split limit kept a node a leaf.
    deferred: bool,
    /// It did so in the split under way.
    refused_fresh: bool,
}

impl<'a> Refinement<'a> {
    /// The six roots, each on the heap, built in `buffers` (cleared).
    fn new(
        source: &'a dyn HeightSource,
        view: &View,
        settings: &SelectionSettings,
        last: &'a [Node],
        patches: &'a mut Vec<Patch>,
        buffers: Tree,
        stop_guess: f64,
    ) -> Result<Refinement<'a>, SourceError> {
        let context = Context::new(source, view, settings.near_m);
        let capacity = settings.node_budget.clamp(6, 1 << 20) * 4 / 3 + 8;
        let Tree { mut nodes, mut heap, .. } = buffers;
        heap.reset(stop_guess.max(settings.target_error_px), capacity);
        nodes.clear();
        nodes.reserve(capacity);
        patches.reserve(capacity);
        let mut refine = Refinement {
            context,
            last,
            budget: settings.node_budget,
            nodes,
            patches,
            heap,
            target_error_px: settings.target_error_px,
            leaves: 6,
            evaluated: 6,
            stop_error: 0.0,
            fresh_left: usize::MAX,
            fresh_until: None,
            deferred: false,
            refused_fresh: false,
        };
        refine.add_roots()?;
        Ok(refine)
    }

    /// Splits the node of largest error until the target or the budget
    /// stops it, leaving a leaf whose split the fresh split limit refuses.
    /// Returns the largest error of nodes that cannot split (at
    /// `MAX_DEPTH`) and whether the budget stopped it.
    fn run(&mut self) -> Result<(f64, bool), SourceError> {
        let mut settled_error: f64 = 0.0;
        while let Some((error, index)) = self.heap.peek() {
            if error <= self.target_error_px {
                break;
            }
            self.heap.pop();
            let node = &self.nodes[index as usize];
            // A stale entry: the node was split as some finer node's neighbour.
            if !node.is_leaf() {
                continue;
            }
            if node.tile.depth() >= MAX_DEPTH {
                // Its own error: an unweighted key is the error itself, a
                // weighted one a node that is not drawn.
                if error == node.projected_error_px {
                    settled_error = settled_error.max(error);
                }
                continue;
            }
            if !self.split_balanced(index)? {
                if std::mem::take(&mut self.refused_fresh) {
                    continue;
                }
                self.heap.push(error, index);
                self.stop_error = error;
                return Ok((settled_error, true));
            }
        }
        Ok((settled_error, false))
    }

    /// Queues a new node to split, unless its error already meets the target.
    fn offer(&mut self, error: f64, index: u32) {
        // Unordered (a NaN target or error) splits, as the loop in `run` does.
        if matches!(error.partial_cmp(&self.target_error_px), Some(std::cmp::Ordering::Greater) | None) {
            self.heap.push(error, index);
        }
    }

    /// The six roots, arena index = face index, linked to each other.
    fn add_roots(&mut self) -> Result<(), SourceError> {
        let ellipsoid = self.context.ellipsoid;
        for root in TileAddress::roots() {
            // A root spans a face: its sphere alone judges it.
            let evaluated =
                self.context.evaluate(root, |min, max| (BoundingSphere::of_tile(&ellipsoid, root, min, max), None))?;
            let links = Edge::ALL.map(|edge| u32::from(root.neighbour(edge).address.face().index()));
            let index = self.nodes.len() as u32;
            self.offer(evaluated.key, index);
            let (previous, patch) = match self.last.get(index as usize) {
                Some(last) => (index, last.patch),
                None => {
                    let (s0, t0, s1, t1) = root.grid_bounds();
                    let ws = [0.0, 2.0, 4.0].map(|k| quarter_warp(s0, s1, k));
                    let wt = [0.0, 2.0, 4.0].map(|k| quarter_warp(t0, t1, k));
                    let point = |i: usize, j: usize| grid_point(&ellipsoid, root.face(), ws[i], wt[j]);
                    self.patches.push(Patch {
                        ws,
                        wt,
                        corners: [point(0, 0), point(2, 0), point(0, 2), point(2, 2)],
                        centre: point(1, 1),
                    });
                    (NONE, self.patches.len() as u32 - 1)
                }
            };
            self.nodes.push(Node::leaf(root, links, evaluated, previous, patch));
        }
        Ok(())
    }

    /// Splits leaf `index`, first splitting every coarser edge neighbour, so
    /// neighbouring leaves never differ by more than one level. Each split
    /// keeps the cut a balanced exact cover, so stopping part-way (the
    /// budget, the fresh split limit) leaves a valid cut. False if either
    /// stops it.
    fn split_balanced(&mut self, index: u32) -> Result<bool, SourceError> {
        let depth = self.nodes[index as usize].tile.depth();
        for edge in Edge::ALL {
            // Re-read each time: splitting a coarser neighbour re-points
            // this node's links.
            let across = self.nodes[index as usize].links[edge as usize];
            if self.nodes[across as usize].tile.depth() < depth && !self.split_balanced(across)? {
                return Ok(false);
            }
        }
        if self.leaves + 3 > self.budget {
            return Ok(false);
        }
        let previous = self.nodes[index as usize].previous;
        if previous == NONE || self.last[previous as usize].children == LEAF {
            if self.fresh_left > 0 {
                self.fresh_left -= 1;
            } else if self.fresh_until.is_none_or(|until| Instant::now() >= until) {
                (self.deferred, self.refused_fresh) = (true, true);
                return Ok(false);
            }
        }
        self.split(index)?;
        Ok(true)
    }

    /// Replaces leaf `index`, whose edge neighbours are all at its depth, by
    /// its four children: evaluates them, links them to each other and to
    /// the neighbours' children, and re-points those children at them.
    #[expect(
        clippy::too_many_lines,
        reason = "debt: the 5x5 patch split and its neighbour fix-ups, to be cut into the split grid and the fix-up pass"
    )]
    fn split(&mut self, index: u32) -> Result<(), SourceError> {
        // Only what is needed: a whole node is a hundred bytes to copy.
        let (parent_tile, parent_links) = (self.nodes[index as usize].tile, self.nodes[index as usize].links);
        let first = self.nodes.len() as u32;
        self.nodes[index as usize].children = first;
        self.leaves += 3;
        self.evaluated += 4;

        let last_nodes = self.last;
        let last_first = match self.nodes[index as usize].previous {
            NONE => LEAF,
            previous => last_nodes[previous as usize].children,
        };
        let made: [u32; 4] = if last_first != LEAF {
            // Split last frame too: its children's points are these.
            std::array::from_fn(|q| last_nodes[last_first as usize + q].patch)
        } else {
            // The 5 x 5 grid of the split: corners (even, even) and the
            // children's centres (odd, odd). The parent's corners, centre and
            // edge coordinates are known; the rest are new.
            let patch = self.patches[self.nodes[index as usize].patch as usize];
            let ellipsoid = self.context.ellipsoid;
            let face = parent_tile.face();
            let (s0, t0, s1, t1) = parent_tile.grid_bounds();
            let ws = [patch.ws[0], quarter_warp(s0, s1, 1.0), patch.ws[1], quarter_warp(s0, s1, 3.0), patch.ws[2]];
            let wt = [patch.wt[0], quarter_warp(t0, t1, 1.0), patch.wt[1], quarter_warp(t0, t1, 3.0), patch.wt[2]];
            let point = |i: usize, j: usize| grid_point(&ellipsoid, face, ws[i], wt[j]);
            let [c00, c10, c01, c11] = patch.corners;
            let even = [[c00, point(2, 0), c10], [point(0, 2), patch.centre, point(4, 2)], [c01, point(2, 4), c11]];
            let centres = [[point(1, 1), point(3, 1)], [point(1, 3), point(3, 3)]];
            let at = self.patches.len() as u32;
            self.patches.extend((0..4).map(|q| {
                let (dx, dy) = (q & 1, q >> 1);
                Patch {
                    ws: [ws[2 * dx], ws[2 * dx + 1], ws[2 * dx + 2]],
                    wt: [wt[2 * dy], wt[2 * dy + 1], wt[2 * dy + 2]],
                    corners: [even[dy][dx], even[dy][dx + 1], even[dy + 1][dx], even[dy + 1][dx + 1]],
                    centre: centres[dy][dx],
                }
            }));
            [at, at + 1, at + 2, at + 3]
        };

        let ellipsoid = self.context.ellipsoid;
        let children = parent_tile.children().expect("below MAX_DEPTH");
        for (q, child) in children.into_iter().enumerate() {
            let (dx, dy) = (q & 1, q >> 1);
            let patch = made[q];
            let made = &self.patches[patch as usize];
            let previous = if last_first == LEAF { NONE } else { last_first + q as u32 };
            debug_assert!(previous == NONE || last_nodes[previous as usize].tile == child);
            let evaluated = self.context.evaluate(child, |min, max| {
                // The sphere and the box are functions of the patch and the bounds.
                match last_nodes.get(previous as usize) {
                    Some(last) if same_elevations(&last.bounds, min, max) => (last.sphere, last.tangent_box),
                    _ => (
                        BoundingSphere::enclosing(&ellipsoid, made.centre, &made.corners, min, max),
                        TangentBox::enclosing(&ellipsoid, made.centre, &made.corners, min, max),
                    ),
                }
            })?;
            let me = first + q as u32;
            // A plain loop: `array::map` of this closure was not inlined
            // (a sixth of the selector's time went to calling it).
            let mut links = [0u32; 4];
            for edge in Edge::ALL {
                links[edge as usize] = 'link: {
                    let sibling = match edge {
                        Edge::MinU => (dx == 1).then(|| q - 1),
                        Edge::MaxU => (dx == 0).then(|| q + 1),
                        Edge::MinV => (dy == 1).then(|| q - 2),
                        Edge::MaxV => (dy == 0).then(|| q + 2),
                    };
                    if let Some(sibling) = sibling {
                        break 'link first + sibling as u32;
                    }
                    let outside = parent_links[edge as usize];
                    let neighbour = &self.nodes[outside as usize];
                    if neighbour.is_leaf() {
                        // A leaf at the parent's depth: one level coarser.
                        break 'link outside;
                    }
                    // Split: its child along the shared edge is a leaf of this
                    // depth (balance), which linked to the parent until now. On
                    // the same face that child is this one mirrored across the
                    // edge; across a face edge the addressing says which.
                    let (quadrant, shared_edge) = if neighbour.tile.face() == parent_tile.face() {
                        let mirror = if edge.is_u_edge() { 1 } else { 2 };
                        ((q ^ mirror) as u32, edge.opposite())
                    } else {
                        let across = child.neighbour(edge);
                        debug_assert_eq!(across.address.parent(), Some(neighbour.tile));
                        (u32::from(across.address.quadrant()), across.shared_edge)
                    };
                    debug_assert_eq!(child.neighbour(edge).address.quadrant() as u32, quadrant);
                    let other = neighbour.children + quadrant;
                    self.nodes[other as usize].links[shared_edge as usize] = me;
                    other
                };
            }
            self.offer(evaluated.key, me);
            self.nodes.push(Node::leaf(child, links, evaluated, previous, patch));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "refine_tests.rs"]
mod tests;
