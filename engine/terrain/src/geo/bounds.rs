//! Bounding spheres of tiles between two elevations.
//!
//! The key decision: one definition. Selection culls with these spheres,
//! layers widen their footprints with them, and tests hold the property
//! that every sample of a tile lies inside; a second, cheaper formula
//! anywhere would drift from the first. On a sphere the patch point farthest
//! from the centre is a corner at an extreme elevation; flattening bends the
//! patch slightly away from that, so the radius carries a slack checked by a
//! property test over random tiles.

use glam::DVec3;

use crate::geo::address::TileAddress;
use crate::geo::body::Ellipsoid;
use crate::geo::cube::face_grid_to_direction;

/// A node's bounding sphere in body-fixed metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingSphere {
    pub centre: DVec3,
    pub radius: f64,
}

impl BoundingSphere {
    /// Encloses the patch of `tile` between `min` and `max` elevation.
    pub fn of_tile(ellipsoid: &Ellipsoid, tile: TileAddress, min_elevation: f64, max_elevation: f64) -> BoundingSphere {
        let (s0, t0, s1, t1) = tile.grid_bounds();
        let (sc, tc) = tile.grid_centre();
        let on_surface = |s: f64, t: f64| SurfacePoint::new(ellipsoid, face_grid_to_direction(tile.face(), s, t));
        let corners = [(s0, t0), (s1, t0), (s0, t1), (s1, t1)].map(|(s, t)| on_surface(s, t));
        BoundingSphere::enclosing(ellipsoid, on_surface(sc, tc), &corners, min_elevation, max_elevation)
    }

    /// The sphere around the patch with this centre and these corners between
    /// two elevations: on a sphere the patch point farthest from the centre
    /// is a corner at an extreme elevation. Flattening bends the patch
    /// slightly away from a sphere's; the slack is checked by a property test
    /// over random tiles. The one definition selection and tests share.
    pub(crate) fn enclosing(
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

/// A point of the ellipsoid's surface with its unit normal, so raising it to
/// any elevation is one multiply-add.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SurfacePoint {
    point: DVec3,
    normal: DVec3,
}

impl SurfacePoint {
    pub(crate) fn new(ellipsoid: &Ellipsoid, direction: DVec3) -> SurfacePoint {
        SurfacePoint {
            point: ellipsoid.surface_point_from_direction(direction),
            normal: ellipsoid.normal_at_direction(direction),
        }
    }

    pub(crate) fn raised(&self, height: f64) -> DVec3 {
        self.point + self.normal * height
    }
}
