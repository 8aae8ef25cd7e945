//! Cut selection: which quadtree nodes a frame draws.
//!
//! The key decision: refine, don't descend. The six roots already cover the
//! body; selection repeatedly replaces whichever node is furthest over the
//! screen-space-error target with its four children (a max-heap on
//! projected error). Splitting a cut yields a cut, so at every stage,
//! including where the node budget stops it, every point of the body lies in
//! exactly one node: a budget gives coarser ground, never a hole. Because the
//! heap pops in descending error, the cut a budget stops at is the complete
//! cut of a larger error, which is reported as the effective screen error
//! (over the nodes drawn).
//!
//! The view decides where the budget goes, never whether the body is
//! covered: a node wholly outside the frustum takes a quarter of its error
//! ([`OUT_OF_VIEW_WEIGHT`]) as its place in the heap, so the ground in view
//! refines first and the ground behind the camera stays within four times
//! the target, what turning the head shows while tiles load. Culling
//! (frustum, horizon) then marks the nodes of the finished cover; a culled
//! node is still part of the cover (balance, edge relations). Over a
//! mountain 2 m up, a view-blind cover spent two thirds of 4,096 nodes
//! behind the camera.
//!
//! The second decision: no lookups by key. The refinement tree is an arena
//! in creation order, and every leaf carries a link across each edge to the
//! node of its own depth there, or to the coarser leaf covering it. A split
//! hands the links to the children and re-points the neighbours' children,
//! so the balance check and the per-edge relations read a link instead of
//! probing a hash map; and each node keeps its corners' surface points and
//! warped coordinates, so a split warps and projects only the points that
//! are new. The arithmetic of every sphere and error is the earlier code's,
//! operation for operation: the integration tests compare the cut bit for
//! bit with a copy of it (`tests/it/select_reference.rs`).
//!
//! Projected error = geometric error (from the source's bounds, i.e. the
//! pack index, never a tile decode) / distance from the camera to the node's
//! bounding sphere x pixels per radian. The sphere is built from the node's
//! corner directions at its minimum and maximum elevation: on a sphere the
//! patch point farthest from the centre is a corner, at an extreme
//! elevation; a relative slack covers the ellipsoid's flattening (a property
//! test checks every sample of random tiles lies inside).

use std::time::Instant;

use glam::DVec3;

use crate::camera::view::View;
use crate::geo::address::{MAX_DEPTH, TileAddress};
use crate::geo::body::Ellipsoid;
use crate::geo::bounds::{BoundingSphere, SurfacePoint, TangentBox};
use crate::geo::cube::{cube_point, normalize_exactly_ordered, warp};
use crate::geo::face::{Edge, Face};
use crate::ground::{HeightSource, SourceError, TileBounds};
use crate::lod::heap::ErrorHeap;
use crate::lod::outcome::Outcome;

/// What selection aims for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelectionSettings {
    /// Largest acceptable projected geometric error, pixels.
    pub target_error_px: f64,
    /// Most nodes the cut may hold (the pre-cull cover).
    pub node_budget: usize,
    /// Near plane distance for frustum culling, metres.
    pub near_m: f64,
}

impl Default for SelectionSettings {
    fn default() -> Self {
        SelectionSettings { target_error_px: 1.0, node_budget: 4096, near_m: 0.1 }
    }
}

/// Why a node of the cover is not drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Culled {
    Frustum,
    Horizon,
}

/// One node of the cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelectedNode {
    pub tile: TileAddress,
    pub bounds: TileBounds,
    pub sphere: BoundingSphere,
    /// Projected geometric error, pixels (at the near plane at the closest:
    /// infinite only with a zero near plane and the camera inside the
    /// bounding sphere).
    pub projected_error_px: f64,
    pub culled: Option<Culled>,
    /// The cut across each edge, in `Edge::ALL` order (MinU, MaxU, MinV,
    /// MaxV). Neighbours differ by at most one level.
    pub edges: [EdgeRelation; 4],
}

/// The depth of the cut across one edge of a node, relative to the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeRelation {
    /// One neighbour at the node's depth.
    Same,
    /// One neighbour a level shallower: this side finishes morphing there.
    Coarser,
    /// Two neighbours a level deeper: this side does not morph there.
    Finer,
}

/// The result of selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Cut {
    /// The cover, culled nodes included (marked), in no particular order.
    pub nodes: Vec<SelectedNode>,
    /// The largest projected error left unsplit among the nodes drawn: the
    /// error the cut meets.
    pub effective_screen_error_px: f64,
    /// True when the node budget, not the target, ended refinement.
    pub stopped_by_budget: bool,
    pub statistics: SelectionStatistics,
}

/// Per-frame figures of a selection.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelectionStatistics {
    pub nodes_selected: usize,
    pub nodes_culled: usize,
    pub nodes_drawn: usize,
    pub nodes_evaluated: usize,
    pub effective_screen_error_pixels: f64,
    pub selection_cpu_ms: f64,
}

/// Geometric error below this is no error: a millimetre is below anything a
/// lattice can show, and refining for it would only spend the budget.
pub const NEGLIGIBLE_ERROR_M: f64 = 1e-3;

/// Colour texel spacing counts as this many metres of error per metre: at
/// a 2 px target, a texel covers at most 1 px.
const COLOUR_TEXEL_WEIGHT: f64 = 2.0;

/// The share of its projected error a node wholly outside the frustum
/// refines by (its key in the heap): a quarter, so what is out of view holds
/// four times the target.
pub const OUT_OF_VIEW_WEIGHT: f64 = 0.25;

/// The `children` of a leaf.
pub(super) const LEAF: u32 = u32::MAX;

/// A node of the refinement tree. Split nodes stay (their links are no
/// longer read), so an index names a node for the whole selection and the
/// arena's order is the order nodes were made in, which is the cut's order.
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) tile: TileAddress,
    /// The first of the four children (quadrant order), or [`LEAF`].
    pub(super) children: u32,
    /// Across each edge (`Edge::ALL` order): the node of this depth there,
    /// or the leaf one level coarser that covers it (balance allows no
    /// more). Kept true for leaves.
    pub(super) links: [u32; 4],
    pub(super) bounds: TileBounds,
    pub(super) sphere: BoundingSphere,
    pub(super) projected_error_px: f64,
    /// The same tile in the last frame's tree (a [`Selector`]'s), or
    /// [`NONE`].
    pub(super) previous: u32,
    /// Its [`Patch`] in the selector's store.
    pub(super) patch: u32,
}

/// No node.
pub(super) const NONE: u32 = u32::MAX;

impl Node {
    pub(super) fn is_leaf(&self) -> bool {
        self.children == LEAF
    }
}

/// What splitting a node reuses of it: the warped grid coordinates of its
/// edges and centre, and the surface points of its corners and centre,
/// which are corners of its children. Apart from [`Node`], in a store that
/// outlives frames: a node made again next frame names the same patch
/// rather than copying its three hundred bytes.
#[derive(Clone, Copy)]
pub(super) struct Patch {
    /// `warp` of the grid coordinate at the low edge, the centre and the
    /// high edge, along s and along t.
    pub(super) ws: [f64; 3],
    pub(super) wt: [f64; 3],
    /// Corners in quadrant order (low s low t, high s low t, low s high t,
    /// high s high t).
    pub(super) corners: [SurfacePoint; 4],
    pub(super) centre: SurfacePoint,
}

/// `warp` at the `k`-th quarter of `[a, b]`, spelled as the grid of a split
/// always spelled it (all these coordinates are exact dyadic numbers, so a
/// child's edge is bit for bit its parent's quarter point).
pub(super) fn quarter_warp(a: f64, b: f64, k: f64) -> f64 {
    warp(a + (b - a) * k / 4.0)
}

/// The point of `face`'s grid at warped coordinates `(a, b)`.
pub(super) fn grid_point(ellipsoid: &Ellipsoid, face: Face, a: f64, b: f64) -> SurfacePoint {
    SurfacePoint::new(ellipsoid, normalize_exactly_ordered(cube_point(face, a, b)))
}

/// What every evaluation of a node reads, looked up once per selection.
pub(super) struct Context<'a> {
    source: &'a dyn HeightSource,
    pub(super) ellipsoid: Ellipsoid,
    camera: DVec3,
    camera_height: f64,
    pixels_per_radian: f64,
    colour_data_depth: Option<u8>,
    frustum: [crate::camera::view::Plane; 5],
    near_m: f64,
}

impl<'a> Context<'a> {
    pub(super) fn new(source: &'a dyn HeightSource, view: &View, near_m: f64) -> Context<'a> {
        let ellipsoid = *source.body().ellipsoid();
        Context {
            source,
            ellipsoid,
            camera: view.position,
            camera_height: ellipsoid.point_to_geodetic(view.position).height,
            pixels_per_radian: view.pixels_per_radian(),
            colour_data_depth: source.colour_data_depth(),
            frustum: view.frustum(near_m),
            near_m,
        }
    }

    /// Bounds, sphere, projected error of `tile` and its key in the heap
    /// (the error, weighted by [`OUT_OF_VIEW_WEIGHT`] out of view).
    #[inline(always)]
    pub(super) fn evaluate(
        &self,
        tile: TileAddress,
        patch: Option<&Patch>,
        sphere_of: impl FnOnce(f64, f64) -> BoundingSphere,
    ) -> Result<(TileBounds, BoundingSphere, f64, f64), SourceError> {
        let bounds = self.source.tile_bounds(tile)?;
        let (min, max) = (bounds.min_elevation, bounds.max_elevation);
        let sphere = sphere_of(min, max);
        // Every distance here is a lower bound of the distance to the node,
        // so the largest is. The box holds a small tall node to its width
        // and its elevations apart (its sphere, to both at once). Height
        // above the ellipsoid changes by at most the distance moved, so a
        // camera above the node's highest point is at least that far from
        // it. And nothing nearer than the near plane is drawn: an error
        // closer than that shows no larger than at it (a camera 1.5 m over a
        // node of a small budget stood inside its bounds: 'inf px').
        let beside = patch
            .and_then(|p| TangentBox::enclosing(&self.ellipsoid, p.centre, &p.corners, min, max))
            .map_or(0.0, |tangent_box| tangent_box.distance(self.camera));
        let distance =
            sphere.distance(self.camera).max(beside).max(self.camera_height - bounds.max_elevation).max(self.near_m);
        // Colour counts as detail too: while measured colour exists deeper, a
        // node whose colour texels would cover more than half a target error on
        // screen refines, even where the ground is smooth (from orbit the
        // relief is sub-pixel but the imagery is not).
        let colour_error = match self.colour_data_depth {
            Some(colour_depth) if tile.depth() < colour_depth => {
                self.source.body().sample_spacing_m(tile.depth()) * COLOUR_TEXEL_WEIGHT
            }
            _ => 0.0,
        };
        let error_m = bounds.geometric_error.max(colour_error);
        let projected_error_px = if error_m <= NEGLIGIBLE_ERROR_M {
            0.0
        } else if distance <= 0.0 {
            f64::INFINITY
        } else {
            error_m / distance * self.pixels_per_radian
        };
        // Culling's own frustum test: what it will mark wholly outside is
        // exactly what refines by the weight here.
        let out_of_view = crate::lod::cull::outside_frustum(&self.frustum, &sphere);
        let key = if out_of_view { projected_error_px * OUT_OF_VIEW_WEIGHT } else { projected_error_px };
        Ok((bounds, sphere, projected_error_px, key))
    }
}

/// Selects the cut for `view`. See the module documentation. Each call
/// starts from nothing; a [`Selector`] gives the same cut for less work when
/// views follow one another.
pub fn select(source: &dyn HeightSource, view: &View, settings: &SelectionSettings) -> Result<Cut, SourceError> {
    Selector::new().select(source, view, settings)
}

/// Selection frame after frame: the same cut as [`select`], bit for bit,
/// from less work: the one selector every consumer uses.
///
/// The key decision: reuse geometry, never decisions. A node's bounding
/// sphere and grid points depend on its tile and its bounds alone, not on
/// the view, so a selector keeps last frame's tree and a split whose node
/// was split last frame takes its children's points (and their spheres,
/// where the source reports the same bounds) from it instead of warping and
/// projecting them again. Everything the view decides (errors, the heap's
/// order, balance, culling) is computed afresh, so the cut cannot depend on
/// what was drawn before. Last frame's tree is also where the next frame
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

    /// Selects the cut for `view`: exactly [`select`]'s.
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
        let (settled_error, stopped_by_budget) = refine.run()?;
        self.stop_error = refine.stop_error;
        let outcome = Outcome { settled_error, stopped_by_budget, evaluated: refine.evaluated, start };
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
        };
        refine.add_roots()?;
        Ok(refine)
    }

    /// Splits the node of largest error until the target or the budget
    /// stops it. Returns the largest error of nodes that cannot split (at
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
            let (bounds, sphere, error, key) =
                self.context.evaluate(root, None, |min, max| BoundingSphere::of_tile(&ellipsoid, root, min, max))?;
            let links = Edge::ALL.map(|edge| u32::from(root.neighbour(edge).address.face().index()));
            let index = self.nodes.len() as u32;
            self.offer(key, index);
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
            self.nodes.push(Node {
                tile: root,
                children: LEAF,
                links,
                bounds,
                sphere,
                projected_error_px: error,
                previous,
                patch,
            });
        }
        Ok(())
    }

    /// Splits leaf `index`, first splitting every coarser edge neighbour, so
    /// neighbouring leaves never differ by more than one level. Each split
    /// keeps the cut a balanced exact cover, so stopping part-way (the
    /// budget) leaves a valid cut. False if the budget stops it.
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
        self.split(index)?;
        Ok(true)
    }

    /// Replaces leaf `index`, whose edge neighbours are all at its depth, by
    /// its four children: evaluates them, links them to each other and to
    /// the neighbours' children, and re-points those children at them.
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
            let (bounds, sphere, error, key) = self.context.evaluate(child, Some(made), |min, max| {
                // The sphere is a function of the patch and the bounds.
                match last_nodes.get(previous as usize) {
                    Some(last) if same_elevations(&last.bounds, min, max) => last.sphere,
                    _ => BoundingSphere::enclosing(&ellipsoid, made.centre, &made.corners, min, max),
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
            self.offer(key, me);
            self.nodes.push(Node {
                tile: child,
                children: LEAF,
                links,
                bounds,
                sphere,
                projected_error_px: error,
                previous,
                patch,
            });
        }
        Ok(())
    }
}

/// True if `bounds` spans exactly `min..max` (by their bits).
pub(super) fn same_elevations(bounds: &TileBounds, min: f64, max: f64) -> bool {
    bounds.min_elevation.to_bits() == min.to_bits() && bounds.max_elevation.to_bits() == max.to_bits()
}

#[cfg(test)]
#[path = "cut_tests.rs"]
mod tests;
