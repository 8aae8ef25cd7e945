//! Bounding volumes of tiles between two elevations: a sphere, and for
//! small tiles a box in the tangent frame at the centre.
//!
//! The key decision: one definition of each. Selection culls with the
//! spheres and measures its distances with both, layers widen their
//! footprints with the spheres, and tests hold the property that every
//! sample of a tile lies inside each; a second, cheaper formula anywhere
//! would drift from the first. On a sphere the patch point farthest from the
//! centre is a corner at an extreme elevation; flattening bends the patch
//! slightly away from that, so the radius carries a slack checked by a
//! property test over random tiles.
//!
//! The second decision: the box, because a sphere is a poor judge of how
//! near a tall tile is. A mountain tile 2.4 km wide spanning 3 km of
//! elevation has a sphere of 2.3 km radius, so a camera 1.2 km beside its
//! edge stands inside it; the box in the tangent frame holds the tile to
//! its width and its elevations separately. Both are lower bounds of the
//! distance to the tile, so selection takes the larger.

use glam::DVec3;

use crate::address::TileAddress;
use crate::body::Ellipsoid;
use crate::cube::face_grid_to_direction;

/// A node's bounding sphere in body-fixed metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingSphere {
    pub centre: DVec3,
    pub radius: f64,
}

impl BoundingSphere {
    /// Encloses the patch of `tile` between `min` and `max` elevation.
    pub fn of_tile(ellipsoid: &Ellipsoid, tile: TileAddress, min_elevation: f64, max_elevation: f64) -> BoundingSphere {
        let (centre, corners) = patch_of(ellipsoid, tile);
        BoundingSphere::enclosing(ellipsoid, centre, &corners, min_elevation, max_elevation)
    }

    /// The sphere around the patch with this centre and these corners between
    /// two elevations: on a sphere the patch point farthest from the centre
    /// is a corner at an extreme elevation. Flattening bends the patch
    /// slightly away from a sphere's; the slack is checked by a property test
    /// over random tiles. The one definition selection and tests share.
    pub fn enclosing(
        ellipsoid: &Ellipsoid,
        centre: SurfacePoint,
        corners: &[SurfacePoint; 4],
        min: f64,
        max: f64,
    ) -> BoundingSphere {
        let centre = centre.raised(0.5 * (min + max));
        // The largest of eight lengths is the root of the largest squared
        // length (a correctly rounded sqrt is monotonic), so one sqrt, and
        // the maximum taken pairwise rather than in one long chain: the
        // same bits, at a fraction of the cost selection pays per node.
        let squared =
            corners.map(|c| [(c.raised(min) - centre).length_squared(), (c.raised(max) - centre).length_squared()]);
        let pairs = squared.map(|[a, b]| a.max(b));
        let radius = pairs[0].max(pairs[1]).max(pairs[2].max(pairs[3])).max(0.0).sqrt();
        let flattening = 1.0 - ellipsoid.min_radius() / ellipsoid.max_radius();
        BoundingSphere { centre, radius: radius * (1.0 + 4.0 * flattening + 1e-6) + 1e-3 }
    }

    /// Distance from `p` to the sphere's surface (0 inside).
    pub fn distance(&self, p: DVec3) -> f64 {
        ((p - self.centre).length() - self.radius).max(0.0)
    }
}

/// A box around a small tile between two elevations, in the tangent frame
/// of the tile's centre: `u` along the tile's s axis, `n` the centre's
/// normal. Its extents come from the corners at both elevations; the patch
/// bends away from them by at most the second-order sag of a curve of the
/// tile's size, which the extents are widened by (with a factor of four to
/// spare; a property test over random tiles holds every sample inside).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentBox {
    origin: DVec3,
    u: DVec3,
    v: DVec3,
    n: DVec3,
    lo: DVec3,
    hi: DVec3,
}

impl TangentBox {
    /// The largest angle (radians, the diagonal's) a tile may span for a box:
    /// past it the tangent plane no longer follows the patch (a face spans
    /// 90 degrees), and the tile's sphere judges it alone.
    pub const MAX_SPAN_RADIANS: f64 = 0.05;

    /// The box around the patch with this centre and these corners between
    /// two elevations, or `None` for a tile wider than
    /// [`TangentBox::MAX_SPAN_RADIANS`].
    pub fn enclosing(
        ellipsoid: &Ellipsoid,
        centre: SurfacePoint,
        corners: &[SurfacePoint; 4],
        min: f64,
        max: f64,
    ) -> Option<TangentBox> {
        let [c00, c10, c01, c11] = corners.map(|c| c.point);
        let diagonal = (c11 - c00).length().max((c10 - c01).length());
        if diagonal.is_nan() || diagonal > Self::MAX_SPAN_RADIANS * ellipsoid.min_radius() {
            return None;
        }
        let n = centre.normal;
        let along_s = (c10 - c00) + (c11 - c01);
        let u = (along_s - n * along_s.dot(n)).normalize();
        let v = n.cross(u);
        let origin = centre.point;
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        for corner in corners {
            for elevation in [min, max] {
                let q = corner.raised(elevation) - origin;
                let local = DVec3::new(q.dot(u), q.dot(v), q.dot(n));
                lo = lo.min(local);
                hi = hi.max(local);
            }
        }
        // The centre's normal is where n . p peaks over the whole ellipsoid,
        // so no point of the patch raised by at most `max` rises above it.
        hi.z = hi.z.max(max);
        // A curve of length L and radius of curvature r strays L^2 / (8 r)
        // from its chord, and raised by h the same curve strays (r + h) / r
        // times as far; r is at least b^2 / a on an ellipsoid. Four times
        // that, and a millimetre.
        let curvature_radius = ellipsoid.min_radius() * ellipsoid.min_radius() / ellipsoid.max_radius();
        let raised = (curvature_radius + min.abs().max(max.abs())) / curvature_radius;
        let sag = 4.0 * diagonal * diagonal * raised / (8.0 * curvature_radius) + 1e-3;
        Some(TangentBox { origin, u, v, n, lo: lo - DVec3::splat(sag), hi: hi + DVec3::splat(sag) })
    }

    /// The box of `tile` between two elevations (see [`TangentBox::enclosing`]).
    pub fn of_tile(
        ellipsoid: &Ellipsoid,
        tile: TileAddress,
        min_elevation: f64,
        max_elevation: f64,
    ) -> Option<TangentBox> {
        let (centre, corners) = patch_of(ellipsoid, tile);
        TangentBox::enclosing(ellipsoid, centre, &corners, min_elevation, max_elevation)
    }

    /// Whether `p` lies inside the box (its faces included).
    pub fn contains(&self, p: DVec3) -> bool {
        let local = self.local(p);
        local.cmpge(self.lo).all() && local.cmple(self.hi).all()
    }

    /// Distance from `p` to the box (0 inside).
    pub fn distance(&self, p: DVec3) -> f64 {
        let local = self.local(p);
        (self.lo - local).max(local - self.hi).max(DVec3::ZERO).length()
    }

    fn local(&self, p: DVec3) -> DVec3 {
        let q = p - self.origin;
        DVec3::new(q.dot(self.u), q.dot(self.v), q.dot(self.n))
    }
}

/// A tile's centre and corners (quadrant order) on the ellipsoid's surface.
fn patch_of(ellipsoid: &Ellipsoid, tile: TileAddress) -> (SurfacePoint, [SurfacePoint; 4]) {
    let (s0, t0, s1, t1) = tile.grid_bounds();
    let (sc, tc) = tile.grid_centre();
    let on_surface = |s: f64, t: f64| SurfacePoint::new(ellipsoid, face_grid_to_direction(tile.face(), s, t));
    (on_surface(sc, tc), [(s0, t0), (s1, t0), (s0, t1), (s1, t1)].map(|(s, t)| on_surface(s, t)))
}

/// A point of the ellipsoid's surface with its unit normal, so raising it to
/// any elevation is one multiply-add.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SurfacePoint {
    point: DVec3,
    normal: DVec3,
}

impl SurfacePoint {
    /// The surface point along `direction` (unit, from the centre) and the
    /// ellipsoid's normal there.
    pub fn new(ellipsoid: &Ellipsoid, direction: DVec3) -> SurfacePoint {
        SurfacePoint {
            point: ellipsoid.surface_point_from_direction(direction),
            normal: ellipsoid.normal_at_direction(direction),
        }
    }

    /// The point `height` metres above it along the normal.
    pub fn raised(&self, height: f64) -> DVec3 {
        self.point + self.normal * height
    }
}
