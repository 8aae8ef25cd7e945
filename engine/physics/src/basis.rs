//! The floating local basis: east-north-up at an origin on the ellipsoid.
//!
//! The key decision: Rapier never sees a body-fixed coordinate. Everything
//! it simulates lives in a tangent basis whose origin is a body-fixed f64
//! point near the bodies, so its numbers are metres from here, not metres
//! from the body's centre; when the bodies wander off, the world moves the
//! origin (`GroundWorld::recentre`) instead of letting the numbers grow.
//! The conversions are exact rigid motions (an orthonormal basis and an f64
//! offset), so a position survives a round trip to a nanometre.

use glam::{DMat3, DQuat, DVec3};
use planet_terrain::geo::body::{Ellipsoid, Geodetic, east_north_up};

/// A tangent basis: origin on the ellipsoid, axes east, north, up there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalBasis {
    origin: DVec3,
    basis: DMat3,
}

impl LocalBasis {
    /// The basis at the ellipsoid point under `at` (its height is ignored).
    pub fn at(ellipsoid: &Ellipsoid, at: Geodetic) -> LocalBasis {
        let at = Geodetic { height: 0.0, ..at };
        LocalBasis { origin: ellipsoid.geodetic_to_point(at), basis: east_north_up(at) }
    }

    /// The basis on the ellipsoid under a body-fixed point.
    pub fn under(ellipsoid: &Ellipsoid, point: DVec3) -> LocalBasis {
        LocalBasis::at(ellipsoid, ellipsoid.point_to_geodetic(point))
    }

    /// Body-fixed origin, metres.
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// Columns east, north, up (body-fixed unit vectors).
    pub fn basis(&self) -> DMat3 {
        self.basis
    }

    pub fn to_local(&self, point: DVec3) -> DVec3 {
        self.basis.transpose() * (point - self.origin)
    }

    pub fn to_body_fixed(&self, local: DVec3) -> DVec3 {
        self.origin + self.basis * local
    }

    pub fn direction_to_local(&self, direction: DVec3) -> DVec3 {
        self.basis.transpose() * direction
    }

    pub fn direction_to_body_fixed(&self, local: DVec3) -> DVec3 {
        self.basis * local
    }

    /// The rotation taking local axes to body-fixed axes.
    pub fn rotation(&self) -> DQuat {
        DQuat::from_mat3(&self.basis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::geo::body::Body;

    /// Points a kilometre around origins across the globe come back to a
    /// nanometre, and the axes are east, north and up.
    #[test]
    fn a_point_survives_the_round_trip_through_the_frame() {
        let body = Body::earth();
        let e = body.ellipsoid();
        for (lat, lon) in [(0.0, 0.0), (45.0, 45.0), (-33.9, 151.2), (89.9, -120.0), (27.99, 86.93)] {
            let basis = LocalBasis::at(e, Geodetic::from_degrees(lat, lon, 0.0));
            for local in [DVec3::new(1000.0, -250.0, 8848.0), DVec3::new(-3.5, 0.25, -11.0)] {
                let back = basis.to_local(basis.to_body_fixed(local));
                assert!((back - local).length() < 1e-9, "{lat},{lon}: {local} came back as {back}");
            }
            let up = basis.direction_to_body_fixed(DVec3::Z);
            let normal = Geodetic::from_degrees(lat, lon, 0.0).normal();
            assert!((up - normal).length() < 1e-15);
            assert!((basis.rotation() * DVec3::X - basis.basis().col(0)).length() < 1e-12);
        }
    }
}
