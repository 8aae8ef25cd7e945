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

use glam::DVec3;
use planet_ground::BoundsAt;

use crate::camera::view::View;
use crate::refine::Selector;
use planet_geo::address::TileAddress;
use planet_geo::body::Ellipsoid;
use planet_geo::bounds::{BoundingSphere, SurfacePoint, TangentBox};
use planet_geo::cube::{cube_point, normalize_exactly_ordered, warp};
use planet_geo::face::Face;
use planet_ground::{HeightSource, SourceError, TileBounds};

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
    /// True when a [`Selector`]'s fresh split limit ended refinement: the
    /// next selection of a view near this one goes further.
    pub deferred: bool,
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
    /// Its box in its centre's tangent frame (`None` for wide tiles): kept
    /// with the sphere, since it too depends on the patch and the bounds
    /// alone (computed afresh per node it was a quarter of a warm
    /// selection's time).
    pub(super) tangent_box: Option<TangentBox>,
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
    /// A new leaf of `tile` as `evaluated`.
    pub(super) fn leaf(tile: TileAddress, links: [u32; 4], evaluated: Evaluated, previous: u32, patch: u32) -> Node {
        let Evaluated { bounds, sphere, tangent_box, projected_error_px, .. } = evaluated;
        Node { tile, children: LEAF, links, bounds, sphere, tangent_box, projected_error_px, previous, patch }
    }

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

    /// Bounds, sphere and box (`geometry_of` the elevations), projected
    /// error of `tile` and its key in the heap (the error, weighted by
    /// [`OUT_OF_VIEW_WEIGHT`] out of view).
    #[inline(always)]
    pub(super) fn evaluate(
        &self,
        tile: TileAddress,
        geometry_of: impl FnOnce(f64, f64) -> (BoundingSphere, Option<TangentBox>),
    ) -> Result<Evaluated, SourceError> {
        let bounds = self.source.tile_bounds(tile)?;
        let (min, max) = (bounds.min_elevation, bounds.max_elevation);
        let (sphere, tangent_box) = geometry_of(min, max);
        // Every distance here is a lower bound of the distance to the node,
        // so the largest is. The box holds a small tall node to its width
        // and its elevations apart (its sphere, to both at once). Height
        // above the ellipsoid changes by at most the distance moved, so a
        // camera above the node's highest point is at least that far from
        // it. And nothing nearer than the near plane is drawn: an error
        // closer than that shows no larger than at it (a camera 1.5 m over a
        // node of a small budget stood inside its bounds: 'inf px').
        let beside = tangent_box.map_or(0.0, |tangent_box| tangent_box.distance(self.camera));
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
        let out_of_view = crate::cull::outside_frustum(&self.frustum, &sphere);
        let key = if out_of_view { projected_error_px * OUT_OF_VIEW_WEIGHT } else { projected_error_px };
        Ok(Evaluated { bounds, sphere, tangent_box, projected_error_px, key })
    }
}

/// What [`Context::evaluate`] finds of a node.
pub(super) struct Evaluated {
    pub(super) bounds: TileBounds,
    pub(super) sphere: BoundingSphere,
    pub(super) tangent_box: Option<TangentBox>,
    pub(super) projected_error_px: f64,
    pub(super) key: f64,
}

/// Selects the cut for `view`. See the module documentation. Each call
/// starts from nothing; a [`Selector`] gives the same cut for less work when
/// views follow one another.
pub fn select(source: &dyn HeightSource, view: &View, settings: &SelectionSettings) -> Result<Cut, SourceError> {
    Selector::new().select(source, view, settings)
}

/// True if `bounds` spans exactly `min..max` (by their bits).
pub(super) fn same_elevations(bounds: &TileBounds, min: f64, max: f64) -> bool {
    bounds.min_elevation.to_bits() == min.to_bits() && bounds.max_elevation.to_bits() == max.to_bits()
}
