//! Cut selection: which quadtree nodes a frame draws.
//!
//! The key decision: refine, don't descend. The six roots already cover the
//! body; selection repeatedly replaces whichever node is furthest over the
//! screen-space-error target with its four children (a max-heap on
//! projected error). Splitting a cut yields a cut, so at every stage,
//! including where the node budget stops it, every point of the body lies in
//! exactly one node: a budget gives coarser ground, never a hole. Because the
//! heap pops in descending error, the cut a budget stops at is the complete
//! cut of a larger error, which is reported as the effective screen error.
//! Culling (frustum, horizon) runs after the cover is decided and only marks
//! nodes, so the cover itself never depends on the view direction.
//!
//! Projected error = geometric error (from the source's bounds, i.e. the
//! pack index, never a tile decode) / distance from the camera to the node's
//! bounding sphere x pixels per radian. The sphere is built from the node's
//! corner directions at its minimum and maximum elevation: on a sphere the
//! patch point farthest from the centre is a corner, at an extreme
//! elevation; a relative slack covers the ellipsoid's flattening (a property
//! test checks every sample of random tiles lies inside).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use crate::camera::view::View;
use crate::geo::address::{MAX_DEPTH, TileAddress};
use crate::geo::body::Ellipsoid;
use crate::geo::bounds::{BoundingSphere, SurfacePoint};
use crate::geo::face::Edge;
use crate::ground::{HeightSource, SourceError, TileBounds};

/// Tile identities are already well spread integers; a multiplicative hash is all
/// a map of them needs, and SipHash showed up as a fifth of selection time.
#[derive(Default, Clone, Copy, Debug)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Leaves by [`TileAddress::identity`].
type KeyMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

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
    /// Projected geometric error, pixels (infinite with the camera inside
    /// the bounding sphere).
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
    /// The largest projected error left unsplit: the error the cut meets.
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

struct Candidate {
    error: f64,
    index: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // Larger error first; ties broken by index for determinism.
        self.error.total_cmp(&other.error).then(other.index.cmp(&self.index))
    }
}

/// Geometric error below this is no error: a millimetre is below anything a
/// lattice can show, and refining for it would only spend the budget.
pub const NEGLIGIBLE_ERROR_M: f64 = 1e-3;

fn evaluate(
    source: &dyn HeightSource,
    view: &View,
    camera_height: f64,
    tile: TileAddress,
) -> Result<SelectedNode, SourceError> {
    let ellipsoid = *source.body().ellipsoid();
    evaluate_with(source, view, camera_height, tile, |min, max| BoundingSphere::of_tile(&ellipsoid, tile, min, max))
}

/// The four children of a node share a 5 x 5 grid of face-grid points
/// (corners, edge midpoints and centres): warping and projecting it once
/// replaces forty `tan` calls per split with ten.
struct ChildGrid {
    /// The grid points the spheres use (corners and child centres; the rest
    /// stay default).
    points: [[SurfacePoint; 5]; 5],
}

impl ChildGrid {
    fn new(ellipsoid: &Ellipsoid, parent: TileAddress) -> ChildGrid {
        let (s0, t0, s1, t1) = parent.grid_bounds();
        let warp = |a: f64, b: f64, k: usize| crate::geo::cube::warp(a + (b - a) * k as f64 / 4.0);
        let ws: [f64; 5] = std::array::from_fn(|k| warp(s0, s1, k));
        let wt: [f64; 5] = std::array::from_fn(|k| warp(t0, t1, k));
        // Only corners (even, even) and child centres (odd, odd) are used.
        let mut points = [[SurfacePoint::default(); 5]; 5];
        for (j, row) in points.iter_mut().enumerate() {
            for (i, point) in row.iter_mut().enumerate() {
                if i % 2 == j % 2 {
                    let d = crate::geo::cube::normalize_exactly_ordered(crate::geo::cube::cube_point(
                        parent.face(),
                        ws[i],
                        wt[j],
                    ));
                    *point = SurfacePoint::new(ellipsoid, d);
                }
            }
        }
        ChildGrid { points }
    }

    /// The bounding sphere of child `q` (quadrant `dx + 2 dy`), as
    /// [`BoundingSphere::of_tile`] builds it.
    fn sphere(&self, ellipsoid: &Ellipsoid, q: usize, min: f64, max: f64) -> BoundingSphere {
        let (i0, j0) = (2 * (q & 1), 2 * (q >> 1));
        let corners = [(i0, j0), (i0 + 2, j0), (i0, j0 + 2), (i0 + 2, j0 + 2)].map(|(i, j)| self.points[j][i]);
        BoundingSphere::enclosing(ellipsoid, self.points[j0 + 1][i0 + 1], &corners, min, max)
    }
}

fn evaluate_with(
    source: &dyn HeightSource,
    view: &View,
    camera_height: f64,
    tile: TileAddress,
    sphere_of: impl FnOnce(f64, f64) -> BoundingSphere,
) -> Result<SelectedNode, SourceError> {
    let bounds = source.tile_bounds(tile)?;
    let sphere = sphere_of(bounds.min_elevation, bounds.max_elevation);
    // Height above the ellipsoid changes by at most the distance moved, so a
    // camera above the node's highest point is at least that far from it.
    let distance = sphere.distance(view.position).max(camera_height - bounds.max_elevation);
    // Colour counts as detail too: while measured colour exists deeper, a
    // node whose colour texels would cover more than half a target error on
    // screen refines, even where the ground is smooth (from orbit the
    // relief is sub-pixel but the imagery is not).
    let colour_error = match source.colour_data_depth() {
        Some(colour_depth) if tile.depth() < colour_depth => {
            source.body().sample_spacing_m(tile.depth()) * COLOUR_TEXEL_WEIGHT
        }
        _ => 0.0,
    };
    let error_m = bounds.geometric_error.max(colour_error);
    let projected_error_px = if error_m <= NEGLIGIBLE_ERROR_M {
        0.0
    } else if distance <= 0.0 {
        f64::INFINITY
    } else {
        error_m / distance * view.pixels_per_radian()
    };
    Ok(SelectedNode { tile, bounds, sphere, projected_error_px, culled: None, edges: [EdgeRelation::Same; 4] })
}

/// Colour texel spacing counts as this many metres of error per metre: at
/// a 2 px target, a texel covers at most 1 px.
const COLOUR_TEXEL_WEIGHT: f64 = 2.0;

/// Selects the cut for `view`. See the module documentation.
pub fn select(source: &dyn HeightSource, view: &View, settings: &SelectionSettings) -> Result<Cut, SourceError> {
    let start = Instant::now();
    let mut slots: Vec<Option<SelectedNode>> = Vec::with_capacity(settings.node_budget.clamp(6, 1 << 20) * 4 / 3 + 8);
    let mut heap = BinaryHeap::new();
    let camera_height = source.body().ellipsoid().point_to_geodetic(view.position).height;
    for root in TileAddress::roots() {
        let node = evaluate(source, view, camera_height, root)?;
        heap.push(Candidate { error: node.projected_error_px, index: slots.len() });
        slots.push(Some(node));
    }
    let mut leaves: KeyMap<usize> =
        slots.iter().enumerate().map(|(i, n)| (n.expect("root").tile.identity(), i)).collect();
    let mut evaluated = 6usize;
    let mut settled_error: f64 = 0.0; // largest error of nodes that cannot split
    let mut stopped_by_budget = false;
    let mut refine = Refinement {
        source,
        view,
        camera_height,
        budget: settings.node_budget,
        slots: &mut slots,
        leaves: &mut leaves,
        heap: &mut heap,
        evaluated: &mut evaluated,
    };
    while let Some(top) = refine.heap.peek() {
        if top.error <= settings.target_error_px {
            break;
        }
        let Candidate { error, index } = refine.heap.pop().expect("peeked");
        // A stale entry: the node was split as some finer node's neighbour.
        let Some(node) = refine.slots[index] else { continue };
        if node.tile.depth() >= MAX_DEPTH {
            settled_error = settled_error.max(error);
            continue;
        }
        match refine.split_balanced(node.tile)? {
            true => {}
            false => {
                refine.heap.push(Candidate { error, index });
                stopped_by_budget = true;
                break;
            }
        }
    }
    let mut nodes: Vec<SelectedNode> = slots.into_iter().flatten().collect();
    // The largest error left unsplit is the error the cut meets.
    let effective = nodes.iter().map(|n| n.projected_error_px).fold(settled_error, f64::max);
    let index: KeyMap<usize> = nodes.iter().enumerate().map(|(i, n)| (n.tile.identity(), i)).collect();
    for node in &mut nodes {
        node.edges = Edge::ALL.map(|edge| edge_relation(&index, node.tile, edge));
    }
    cull(&mut nodes, view, source.body().ellipsoid(), settings.near_m);
    let culled = nodes.iter().filter(|n| n.culled.is_some()).count();
    let statistics = SelectionStatistics {
        nodes_selected: nodes.len(),
        nodes_culled: culled,
        nodes_drawn: nodes.len() - culled,
        nodes_evaluated: evaluated,
        effective_screen_error_pixels: effective,
        selection_cpu_ms: start.elapsed().as_secs_f64() * 1e3,
    };
    Ok(Cut { nodes, effective_screen_error_px: effective, stopped_by_budget, statistics })
}

/// The state refinement works on: the cut as slots (split nodes become
/// `None`), a key index of its leaves, and the heap.
struct Refinement<'a> {
    source: &'a dyn HeightSource,
    view: &'a View,
    camera_height: f64,
    budget: usize,
    slots: &'a mut Vec<Option<SelectedNode>>,
    leaves: &'a mut KeyMap<usize>,
    heap: &'a mut BinaryHeap<Candidate>,
    evaluated: &'a mut usize,
}

impl Refinement<'_> {
    /// The leaf covering the region of `tile` (a neighbour at a leaf's
    /// depth) when it is coarser. The cut is balanced, so the covering leaf
    /// is at most one level coarser: checking the parent suffices.
    fn coarser_leaf(&self, tile: TileAddress) -> Option<TileAddress> {
        tile.parent().filter(|p| self.leaves.contains_key(&p.identity()))
    }

    /// Splits `tile` (a leaf), first splitting every coarser edge
    /// neighbour, so neighbouring leaves never differ by more than one
    /// level. Each split keeps the cut a balanced exact cover, so stopping
    /// part-way (the budget) leaves a valid cut. False if the budget stops it.
    fn split_balanced(&mut self, tile: TileAddress) -> Result<bool, SourceError> {
        for edge in Edge::ALL {
            let neighbour = tile.neighbour(edge).address;
            if let Some(coarser) = self.coarser_leaf(neighbour)
                && !self.split_balanced(coarser)?
            {
                return Ok(false);
            }
        }
        if self.leaves.len() + 3 > self.budget {
            return Ok(false);
        }
        let index = self.leaves.remove(&tile.identity()).expect("a leaf");
        self.slots[index] = None;
        let ellipsoid = *self.source.body().ellipsoid();
        let grid = ChildGrid::new(&ellipsoid, tile);
        for (q, child) in tile.children().expect("below MAX_DEPTH").into_iter().enumerate() {
            let c = evaluate_with(self.source, self.view, self.camera_height, child, |min, max| {
                grid.sphere(&ellipsoid, q, min, max)
            })?;
            self.heap.push(Candidate { error: c.projected_error_px, index: self.slots.len() });
            self.leaves.insert(child.identity(), self.slots.len());
            self.slots.push(Some(c));
        }
        *self.evaluated += 4;
        Ok(true)
    }
}

/// How the cut continues across `edge` of `tile`.
fn edge_relation(index: &KeyMap<usize>, tile: TileAddress, edge: Edge) -> EdgeRelation {
    let neighbour = tile.neighbour(edge).address;
    if index.contains_key(&neighbour.identity()) {
        EdgeRelation::Same
    } else if neighbour.parent().is_some_and(|p| index.contains_key(&p.identity())) {
        // Balanced: a coarser neighbour is exactly one level up.
        EdgeRelation::Coarser
    } else {
        EdgeRelation::Finer
    }
}

/// Marks nodes outside the frustum or wholly below the horizon. The horizon
/// occluder is the largest sphere certainly inside the ground: the
/// ellipsoid's smallest radius lowered by the deepest elevation any node
/// reports.
fn cull(nodes: &mut [SelectedNode], view: &View, ellipsoid: &Ellipsoid, near: f64) {
    let planes = view.frustum(near);
    let lowest = nodes.iter().map(|n| n.bounds.min_elevation).fold(0.0f64, f64::min);
    let occluder = (ellipsoid.min_radius() + lowest).max(0.0);
    let camera = view.position;
    let camera_distance = camera.length();
    let horizon = (camera_distance > occluder).then(|| {
        let tangent = (camera_distance * camera_distance - occluder * occluder).sqrt();
        let cone = (occluder / camera_distance).asin();
        (tangent, cone)
    });
    for node in nodes.iter_mut() {
        let s = node.sphere;
        if planes.iter().any(|p| p.signed_distance(s.centre) < -s.radius) {
            node.culled = Some(Culled::Frustum);
            continue;
        }
        if let Some((tangent, cone)) = horizon {
            let to_node = s.centre - camera;
            let distance = to_node.length();
            if distance > s.radius {
                let off_axis = to_node.angle_between(-camera);
                let half_angle = (s.radius / distance).asin();
                // Wholly inside the occluder's shadow cone and beyond its
                // tangent points: hidden.
                if off_axis + half_angle < cone && distance - s.radius > tangent {
                    node.culled = Some(Culled::Horizon);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geo::body::Body;

    #[test]
    fn split_spheres_match_the_spheres_of_the_children() {
        // Selection builds children's spheres from one shared grid per split;
        // they must be the spheres BoundingSphere::of_tile (the property-tested
        // one) gives, up to rounding in the warped coordinates.
        let earth = Body::earth();
        let e = earth.ellipsoid();
        for text in ["0/0/0/0", "4/3/5/2", "2/9/300/17", "5/17/100000/70000", "1/24/12345678/8765432"] {
            let parent: TileAddress = text.parse().unwrap();
            let grid = ChildGrid::new(e, parent);
            for (q, child) in parent.children().unwrap().into_iter().enumerate() {
                let (a, b) = (grid.sphere(e, q, -500.0, 2500.0), BoundingSphere::of_tile(e, child, -500.0, 2500.0));
                assert!((a.centre - b.centre).length() <= 1e-6 * b.radius.max(1.0), "{child}: centres differ");
                assert!(
                    (a.radius - b.radius).abs() <= 1e-6 * b.radius.max(1.0),
                    "{child}: radii {} vs {}",
                    a.radius,
                    b.radius
                );
            }
        }
    }
}
