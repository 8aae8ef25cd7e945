//! The cut selection of commit c87685f, kept verbatim (through the public API)
//! as the reference the current `lod::select` must reproduce bit for bit,
//! with later rules written into it the same simple way: a node wholly
//! outside the frustum refines by `OUT_OF_VIEW_WEIGHT` of its error, the
//! distance to a node is at least the near plane and at least the distance
//! to its tangent box (`geo::TangentBox`, from the same points), and the
//! effective error is over the nodes drawn.
//!
//! The key decision: a private copy of the old algorithm rather than
//! recorded digests. Digests would pin the output to this machine's libm
//! (`tan` may round differently elsewhere); a copy computes the expected
//! cut with the same `tan` as the code under test, so the comparison holds
//! on any machine, and the select bench can time the two side by side
//! (it includes this file by path). It is slow on purpose: hash-map leaves,
//! a full node per slot, every edge relation looked up by key.
#![allow(dead_code)]

use planet_terrain::ground::BoundsAt;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use glam::DVec3;
use planet_terrain::camera::View;
use planet_terrain::geo::cube::{cube_point, warp};
use planet_terrain::geo::{BoundingSphere, Edge, Ellipsoid, SurfacePoint, TangentBox};
use planet_terrain::ground::{HeightSource, SourceError};
use planet_terrain::lod::cut::OUT_OF_VIEW_WEIGHT;
use planet_terrain::lod::{Culled, Cut, EdgeRelation, SelectedNode, SelectionSettings, SelectionStatistics};
use planet_terrain::{MAX_DEPTH, TileAddress};

/// The old multiplicative hasher, so the bench times the old code as it ran.
#[derive(Default, Clone, Copy, Debug)]
struct KeyHasher(u64);

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

type KeyMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

struct Candidate {
    error: f64,
    index: usize,
}

/// A node's place in the heap: its error, weighted out of view.
fn key(view: &View, near: f64, node: &SelectedNode) -> f64 {
    let s = node.sphere;
    let outside = view.frustum(near).iter().any(|p| p.signed_distance(s.centre) < -s.radius);
    if outside { node.projected_error_px * OUT_OF_VIEW_WEIGHT } else { node.projected_error_px }
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
        self.error.total_cmp(&other.error).then(other.index.cmp(&self.index))
    }
}

const NEGLIGIBLE_ERROR_M: f64 = 1e-3;
const COLOUR_TEXEL_WEIGHT: f64 = 2.0;

fn normalize_exactly_ordered(p: DVec3) -> DVec3 {
    let length = (p.x * p.x + p.y * p.y + p.z * p.z).sqrt();
    DVec3::new(p.x / length, p.y / length, p.z / length)
}

fn enclosing(
    ellipsoid: &Ellipsoid,
    centre: SurfacePoint,
    corners: &[SurfacePoint; 4],
    min: f64,
    max: f64,
) -> BoundingSphere {
    let centre = centre.raised(0.5 * (min + max));
    let radius =
        corners.iter().flat_map(|c| [c.raised(min), c.raised(max)]).map(|p| (p - centre).length()).fold(0.0, f64::max);
    let flattening = 1.0 - ellipsoid.min_radius() / ellipsoid.max_radius();
    BoundingSphere { centre, radius: radius * (1.0 + 4.0 * flattening + 1e-6) + 1e-3 }
}

struct ChildGrid {
    points: [[SurfacePoint; 5]; 5],
}

impl ChildGrid {
    fn new(ellipsoid: &Ellipsoid, parent: TileAddress) -> ChildGrid {
        let (s0, t0, s1, t1) = parent.grid_bounds();
        let warp = |a: f64, b: f64, k: usize| warp(a + (b - a) * k as f64 / 4.0);
        let ws: [f64; 5] = std::array::from_fn(|k| warp(s0, s1, k));
        let wt: [f64; 5] = std::array::from_fn(|k| warp(t0, t1, k));
        let mut points = [[SurfacePoint::default(); 5]; 5];
        for (j, row) in points.iter_mut().enumerate() {
            for (i, point) in row.iter_mut().enumerate() {
                if i % 2 == j % 2 {
                    let d = normalize_exactly_ordered(cube_point(parent.face(), ws[i], wt[j]));
                    *point = SurfacePoint::new(ellipsoid, d);
                }
            }
        }
        ChildGrid { points }
    }

    /// Child `q`'s sphere and the camera's distance to its tangent box.
    fn volume(&self, ellipsoid: &Ellipsoid, q: usize, (min, max): (f64, f64), camera: DVec3) -> (BoundingSphere, f64) {
        let (i0, j0) = (2 * (q & 1), 2 * (q >> 1));
        let corners = [(i0, j0), (i0 + 2, j0), (i0, j0 + 2), (i0 + 2, j0 + 2)].map(|(i, j)| self.points[j][i]);
        let centre = self.points[j0 + 1][i0 + 1];
        let beside = TangentBox::enclosing(ellipsoid, centre, &corners, min, max).map_or(0.0, |b| b.distance(camera));
        (enclosing(ellipsoid, centre, &corners, min, max), beside)
    }
}

fn evaluate_with(
    source: &dyn HeightSource,
    view: &View,
    (camera_height, near): (f64, f64),
    tile: TileAddress,
    volume_of: impl FnOnce(f64, f64) -> (BoundingSphere, f64),
) -> Result<SelectedNode, SourceError> {
    let bounds = source.tile_bounds(tile)?;
    let (sphere, beside) = volume_of(bounds.min_elevation, bounds.max_elevation);
    let distance = sphere.distance(view.position).max(beside).max(camera_height - bounds.max_elevation).max(near);
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

/// The old `lod::select`, statistics' time excepted (always 0 here).
pub fn select_reference(
    source: &dyn HeightSource,
    view: &View,
    settings: &SelectionSettings,
) -> Result<Cut, SourceError> {
    let ellipsoid = *source.body().ellipsoid();
    let mut slots: Vec<Option<SelectedNode>> = Vec::with_capacity(settings.node_budget.clamp(6, 1 << 20) * 4 / 3 + 8);
    let mut heap = BinaryHeap::new();
    let camera_height = ellipsoid.point_to_geodetic(view.position).height;
    for root in TileAddress::roots() {
        let node = evaluate_with(source, view, (camera_height, settings.near_m), root, |min, max| {
            (BoundingSphere::of_tile(&ellipsoid, root, min, max), 0.0)
        })?;
        heap.push(Candidate { error: key(view, settings.near_m, &node), index: slots.len() });
        slots.push(Some(node));
    }
    let mut leaves: KeyMap<usize> =
        slots.iter().enumerate().map(|(i, n)| (n.expect("root").tile.identity(), i)).collect();
    let mut evaluated = 6usize;
    let mut settled_error: f64 = 0.0;
    let mut stopped_by_budget = false;
    let mut refine = Refinement {
        source,
        view,
        camera_height,
        budget: settings.node_budget,
        near: settings.near_m,
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
        let Some(node) = refine.slots[index] else { continue };
        if node.tile.depth() >= MAX_DEPTH {
            if error == node.projected_error_px {
                settled_error = settled_error.max(error);
            }
            continue;
        }
        if !refine.split_balanced(node.tile)? {
            refine.heap.push(Candidate { error, index });
            stopped_by_budget = true;
            break;
        }
    }
    let mut nodes: Vec<SelectedNode> = slots.into_iter().flatten().collect();
    let index: KeyMap<usize> = nodes.iter().enumerate().map(|(i, n)| (n.tile.identity(), i)).collect();
    for node in &mut nodes {
        node.edges = Edge::ALL.map(|edge| edge_relation(&index, node.tile, edge));
    }
    cull(&mut nodes, view, &ellipsoid, settings.near_m);
    let effective =
        nodes.iter().filter(|n| n.culled.is_none()).map(|n| n.projected_error_px).fold(settled_error, f64::max);
    let culled = nodes.iter().filter(|n| n.culled.is_some()).count();
    let statistics = SelectionStatistics {
        nodes_selected: nodes.len(),
        nodes_culled: culled,
        nodes_drawn: nodes.len() - culled,
        nodes_evaluated: evaluated,
        effective_screen_error_pixels: effective,
        selection_cpu_ms: 0.0,
    };
    Ok(Cut { nodes, effective_screen_error_px: effective, stopped_by_budget, deferred: false, statistics })
}

struct Refinement<'a> {
    source: &'a dyn HeightSource,
    view: &'a View,
    camera_height: f64,
    budget: usize,
    near: f64,
    slots: &'a mut Vec<Option<SelectedNode>>,
    leaves: &'a mut KeyMap<usize>,
    heap: &'a mut BinaryHeap<Candidate>,
    evaluated: &'a mut usize,
}

impl Refinement<'_> {
    fn coarser_leaf(&self, tile: TileAddress) -> Option<TileAddress> {
        tile.parent().filter(|p| self.leaves.contains_key(&p.identity()))
    }

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
            let c = evaluate_with(self.source, self.view, (self.camera_height, self.near), child, |min, max| {
                grid.volume(&ellipsoid, q, (min, max), self.view.position)
            })?;
            self.heap.push(Candidate { error: key(self.view, self.near, &c), index: self.slots.len() });
            self.leaves.insert(child.identity(), self.slots.len());
            self.slots.push(Some(c));
        }
        *self.evaluated += 4;
        Ok(true)
    }
}

fn edge_relation(index: &KeyMap<usize>, tile: TileAddress, edge: Edge) -> EdgeRelation {
    let neighbour = tile.neighbour(edge).address;
    if index.contains_key(&neighbour.identity()) {
        EdgeRelation::Same
    } else if neighbour.parent().is_some_and(|p| index.contains_key(&p.identity())) {
        EdgeRelation::Coarser
    } else {
        EdgeRelation::Finer
    }
}

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
                if off_axis + half_angle < cone && distance - s.radius > tangent {
                    node.culled = Some(Culled::Horizon);
                }
            }
        }
    }
}
