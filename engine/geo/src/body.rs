//! Bodies, their reference ellipsoids, and geodesy.
//!
//! One formula set serves spheres, spheroids and triaxial ellipsoids. The
//! key decision: a cube-sphere direction `d` lands on the ellipsoid at the
//! componentwise scale `radii * d` (exact, no iteration), and geodetic
//! latitude/longitude name the direction of the surface *normal*, the datum
//! elevation models state their heights against. The point whose normal is
//! `n` is `radii^2 * n / |radii * n|`, which inverts in closed form, so
//! lat/lon <-> surface point <-> direction are exact inverses to rounding.
//! Only a point off the surface (a camera) needs an iteration to find the
//! foot of its normal.

use std::fmt;

use glam::{DMat3, DVec3};

/// Why a body description was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BodyError {
    #[error(
        "ellipsoid radii {x}, {y}, {z} m are not a body: each must be finite and within \
         {min}..={max} m, and the longest at most {ratio} times the shortest",
        min = RADIUS_M.start(), max = RADIUS_M.end(), ratio = MAX_AXIS_RATIO
    )]
    BadRadii { x: f64, y: f64, z: f64 },
    #[error("unknown body '{0}' (known: earth, moon, mars; or give radii)")]
    UnknownBody(String),
    #[error("{what} {value}: must be a finite number of degrees in {range}")]
    Degrees { what: &'static str, value: f64, range: &'static str },
}

/// Radii a body may have, metres: from a 10 m boulder to ten times the Sun.
/// Outside this range the f64 geometry still computes, but sample spacings
/// and the precision budget stop meaning anything (a 1e-300 m body divides
/// to infinities), so a pack or a `--radii` that claims one is refused.
pub const RADIUS_M: std::ops::RangeInclusive<f64> = 10.0..=7.0e9;
/// The most elongated ellipsoid accepted (longest radius over shortest):
/// irregular small bodies reach about 3 (Itokawa 2.6).
pub const MAX_AXIS_RATIO: f64 = 10.0;

/// Latitudes a person may give, degrees.
pub const LATITUDE_DEGREES: std::ops::RangeInclusive<f64> = -90.0..=90.0;
/// Longitudes a person may give, degrees: any convention that wraps at
/// most once (-180..180, 0..360, -360..0).
pub const LONGITUDE_DEGREES: std::ops::RangeInclusive<f64> = -360.0..=360.0;

/// The one rule for a latitude given in degrees (NaN and infinities fail).
///
/// ```
/// use planet_geo::body::{check_latitude_degrees, check_longitude_degrees};
///
/// assert_eq!(check_latitude_degrees(27.99).unwrap(), 27.99);
/// assert!(check_latitude_degrees(f64::NAN).is_err());
/// assert!(check_longitude_degrees(359.0).is_ok() && check_longitude_degrees(-400.0).is_err());
/// ```
pub fn check_latitude_degrees(value: f64) -> Result<f64, BodyError> {
    if LATITUDE_DEGREES.contains(&value) {
        Ok(value)
    } else {
        Err(BodyError::Degrees { what: "latitude", value, range: "-90..=90" })
    }
}

/// The one rule for a longitude given in degrees (NaN and infinities fail).
pub fn check_longitude_degrees(value: f64) -> Result<f64, BodyError> {
    if LONGITUDE_DEGREES.contains(&value) {
        Ok(value)
    } else {
        Err(BodyError::Degrees { what: "longitude", value, range: "-360..=360" })
    }
}

/// A reference ellipsoid, centred at the body's origin with its axes along
/// the body-fixed x, y, z (z through the north pole).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Ellipsoid {
    radii: DVec3,
}

/// A geodetic position: latitude and longitude of the ellipsoid normal, in
/// radians (longitude east-positive, in (-pi, pi]), and height along that
/// normal above the ellipsoid, in metres.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Geodetic {
    pub latitude: f64,
    pub longitude: f64,
    pub height: f64,
}

impl Geodetic {
    pub fn from_degrees(latitude: f64, longitude: f64, height: f64) -> Geodetic {
        Geodetic { latitude: latitude.to_radians(), longitude: longitude.to_radians(), height }
    }

    /// The unit normal this latitude/longitude names.
    pub fn normal(&self) -> DVec3 {
        let (sin_lat, cos_lat) = self.latitude.sin_cos();
        let (sin_lon, cos_lon) = self.longitude.sin_cos();
        DVec3::new(cos_lat * cos_lon, cos_lat * sin_lon, sin_lat)
    }
}

fn normal_to_lat_lon(n: DVec3) -> (f64, f64) {
    (n.z.atan2(n.x.hypot(n.y)), n.y.atan2(n.x))
}

impl Ellipsoid {
    pub fn new(x: f64, y: f64, z: f64) -> Result<Ellipsoid, BodyError> {
        let ok = |r: f64| RADIUS_M.contains(&r);
        if ok(x) && ok(y) && ok(z) && x.max(y).max(z) <= MAX_AXIS_RATIO * x.min(y).min(z) {
            Ok(Ellipsoid { radii: DVec3::new(x, y, z) })
        } else {
            Err(BodyError::BadRadii { x, y, z })
        }
    }

    /// A spheroid with equatorial radius `a` and polar radius `b`.
    pub fn spheroid(a: f64, b: f64) -> Result<Ellipsoid, BodyError> {
        Ellipsoid::new(a, a, b)
    }

    pub fn radii(&self) -> DVec3 {
        self.radii
    }

    pub fn min_radius(&self) -> f64 {
        self.radii.min_element()
    }

    pub fn max_radius(&self) -> f64 {
        self.radii.max_element()
    }

    /// Where the unit cube-sphere direction `d` meets the surface.
    pub fn surface_point_from_direction(&self, d: DVec3) -> DVec3 {
        self.radii * d
    }

    /// The outward unit normal at the surface point reached by direction `d`.
    pub fn normal_at_direction(&self, d: DVec3) -> DVec3 {
        (d / self.radii).normalize()
    }

    /// The point `height` metres along the normal above the surface point of `d`.
    pub fn point_from_direction(&self, d: DVec3, height: f64) -> DVec3 {
        self.surface_point_from_direction(d) + height * self.normal_at_direction(d)
    }

    /// The unit direction whose surface point has this normal.
    pub fn direction_from_normal(&self, n: DVec3) -> DVec3 {
        (self.radii * n).normalize()
    }

    /// The surface point whose normal is the unit vector `n`.
    pub fn surface_point_from_normal(&self, n: DVec3) -> DVec3 {
        let rn = self.radii * n;
        self.radii * rn / rn.length()
    }

    /// Body-fixed position (metres) of a geodetic position.
    ///
    /// ```
    /// use planet_geo::{Body, Geodetic};
    ///
    /// let earth = Body::earth();
    /// let everest = Geodetic::from_degrees(27.988, 86.925, 8849.0);
    /// let point = earth.ellipsoid().geodetic_to_point(everest);
    /// let back = earth.ellipsoid().point_to_geodetic(point);
    /// assert!((back.height - 8849.0).abs() < 1e-6);
    /// assert!((back.latitude - everest.latitude).abs() < 1e-12);
    /// ```
    pub fn geodetic_to_point(&self, g: Geodetic) -> DVec3 {
        let n = g.normal();
        self.surface_point_from_normal(n) + g.height * n
    }

    /// Latitude and longitude of a point on the surface (height is zero).
    pub fn surface_point_to_geodetic(&self, p: DVec3) -> Geodetic {
        let (latitude, longitude) = normal_to_lat_lon(p / (self.radii * self.radii));
        Geodetic { latitude, longitude, height: 0.0 }
    }

    /// Latitude and longitude of the surface point reached by direction `d`.
    pub fn direction_to_geodetic(&self, d: DVec3) -> Geodetic {
        let (latitude, longitude) = normal_to_lat_lon(d / self.radii);
        Geodetic { latitude, longitude, height: 0.0 }
    }

    /// Geodetic latitude and longitude in degrees of the surface points
    /// reached by `directions`, into `latitudes` and `longitudes` (same
    /// lengths): [`Ellipsoid::direction_to_geodetic`] in degrees, batched for
    /// the bake, within a few ulp of it. Straight-line code per direction
    /// (the branch-free [`super::atan::atan2`], a square root for the
    /// horizontal length) that the optimiser vectorises; the one-direction
    /// path keeps libm's `atan2` and `hypot`.
    pub fn directions_to_degrees(&self, directions: &[DVec3], latitudes: &mut [f64], longitudes: &mut [f64]) {
        assert!(directions.len() == latitudes.len() && directions.len() == longitudes.len());
        // The normal's direction is d / radii; its scale does not matter to
        // the angles, so a multiplication by the reciprocals (no division).
        let inverse = 1.0 / self.radii;
        for ((d, lat), lon) in directions.iter().zip(latitudes.iter_mut()).zip(longitudes.iter_mut()) {
            let n = *d * inverse;
            let horizontal = (n.x * n.x + n.y * n.y).sqrt();
            *lat = super::atan::atan2(n.z, horizontal).to_degrees();
            *lon = super::atan::atan2(n.y, n.x).to_degrees();
        }
    }

    /// The direction whose surface point lies at this latitude/longitude.
    pub fn geodetic_to_direction(&self, g: Geodetic) -> DVec3 {
        self.direction_from_normal(g.normal())
    }

    /// Geodetic position of any point outside the body's centre region: finds
    /// the surface foot of the normal through `p`. Converges to rounding for
    /// points from deep inside the crust to far beyond orbit.
    pub fn point_to_geodetic(&self, p: DVec3) -> Geodetic {
        let foot = self.foot_point(p);
        let normal_dir = foot / (self.radii * self.radii);
        let n = normal_dir.normalize();
        let (latitude, longitude) = normal_to_lat_lon(n);
        Geodetic { latitude, longitude, height: (p - foot).dot(n) }
    }

    /// The closest surface point to `p`: `x_i = r_i^2 p_i / (r_i^2 + k)` where
    /// `k` (the scaled height) is the root of
    /// `F(k) = sum (r_i p_i / (r_i^2 + k))^2 - 1`, which is convex and
    /// decreasing for `k > -min r^2`. Newton from above the root converges
    /// monotonically; safeguarded by bisection.
    fn foot_point(&self, p: DVec3) -> DVec3 {
        let r2 = self.radii * self.radii;
        let f = |k: f64| {
            let q = self.radii * p / (r2 + DVec3::splat(k));
            let value = q.length_squared() - 1.0;
            let slope = -2.0 * (q * q / (r2 + DVec3::splat(k))).element_sum();
            (value, slope)
        };
        let r_min = self.min_radius();
        let lower = -r_min * r_min;
        // Start above the root: k = r_max * |p| bounds it from above.
        let mut hi = self.max_radius() * p.length().max(r_min);
        let mut lo = lower;
        let mut k = hi;
        for _ in 0..200 {
            let (value, slope) = f(k);
            if value == 0.0 {
                break;
            }
            if value > 0.0 {
                lo = lo.max(k)
            } else {
                hi = hi.min(k)
            }
            let mut next = k - value / slope;
            if !(next > lo && next < hi) {
                next = 0.5 * (lo + hi);
            }
            if (next - k).abs() <= 4.0 * f64::EPSILON * k.abs().max(r_min * r_min * 1e-12) {
                k = next;
                break;
            }
            k = next;
        }
        r2 * p / (r2 + DVec3::splat(k))
    }
}

/// A body: a name and its reference ellipsoid.
#[derive(Clone, PartialEq, Debug)]
pub struct Body {
    name: String,
    ellipsoid: Ellipsoid,
}

impl Body {
    /// Earth on WGS84: a = 6378137 m, b = 6356752.314245 m.
    pub fn earth() -> Body {
        Body::preset("earth", 6_378_137.0, 6_356_752.314_245)
    }

    /// The Moon as a sphere of 1737.4 km (IAU mean radius).
    pub fn moon() -> Body {
        Body::preset("moon", 1_737_400.0, 1_737_400.0)
    }

    /// Mars: a = 3396.19 km, b = 3376.20 km (IAU 2000).
    pub fn mars() -> Body {
        Body::preset("mars", 3_396_190.0, 3_376_200.0)
    }

    fn preset(name: &str, a: f64, b: f64) -> Body {
        let ellipsoid = Ellipsoid::spheroid(a, b).expect("preset radii are valid");
        Body { name: name.to_owned(), ellipsoid }
    }

    /// A preset by name (case-insensitive).
    pub fn named(name: &str) -> Result<Body, BodyError> {
        match name.to_ascii_lowercase().as_str() {
            "earth" => Ok(Body::earth()),
            "moon" => Ok(Body::moon()),
            "mars" => Ok(Body::mars()),
            _ => Err(BodyError::UnknownBody(name.to_owned())),
        }
    }

    /// Any body with arbitrary radii (x, y, z).
    pub fn custom(name: &str, radii: [f64; 3]) -> Result<Body, BodyError> {
        let ellipsoid = Ellipsoid::new(radii[0], radii[1], radii[2])?;
        Ok(Body { name: name.to_owned(), ellipsoid })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn ellipsoid(&self) -> &Ellipsoid {
        &self.ellipsoid
    }

    /// Quarter of the equatorial circumference: the arc one face edge spans
    /// on the equator, and the scale of every per-depth size below.
    pub fn face_edge_arc_m(&self) -> f64 {
        std::f64::consts::FRAC_PI_2 * self.ellipsoid.radii.x.max(self.ellipsoid.radii.y)
    }

    /// Nominal ground size of a tile at `depth` (face arc / 2^depth).
    pub fn tile_size_m(&self, depth: u8) -> f64 {
        self.face_edge_arc_m() / f64::from(1u32 << depth.min(31))
    }

    /// Nominal spacing of a tile's samples at `depth`.
    pub fn sample_spacing_m(&self, depth: u8) -> f64 {
        self.tile_size_m(depth) / f64::from(crate::address::TILE_CELLS)
    }
}

impl fmt::Display for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.ellipsoid.radii;
        write!(f, "{} ({} x {} x {} m)", self.name, r.x, r.y, r.z)
    }
}

/// The geodetic east-north-up frame at a point: columns east, north, up.
pub fn east_north_up(at: Geodetic) -> DMat3 {
    let up = at.normal();
    let (sin_lon, cos_lon) = at.longitude.sin_cos();
    let east = DVec3::new(-sin_lon, cos_lon, 0.0);
    let north = up.cross(east);
    DMat3::from_cols(east, north, up)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_degrees_agree_with_direction_to_geodetic_to_rounding() {
        // Directions over a sphere-filling lattice (poles and the
        // antimeridian included), on a spheroid and a triaxial body.
        let bodies = [
            Ellipsoid::spheroid(6_378_137.0, 6_356_752.314_245).unwrap(),
            Ellipsoid::new(3.4e6, 3.3e6, 3.2e6).unwrap(),
        ];
        for e in bodies {
            let mut directions = vec![DVec3::Z, -DVec3::Z, DVec3::X, -DVec3::X, DVec3::Y, -DVec3::Y];
            for i in 0..=120 {
                for j in 0..=60 {
                    let (lon, lat) = (f64::from(i) * 3.0 - 180.0, f64::from(j) * 3.0 - 90.0);
                    let g = Geodetic::from_degrees(lat, lon, 0.0);
                    directions.push(e.geodetic_to_direction(g) * 1.25);
                }
            }
            let (mut lat, mut lon) = (vec![0.0; directions.len()], vec![0.0; directions.len()]);
            e.directions_to_degrees(&directions, &mut lat, &mut lon);
            for (k, d) in directions.iter().enumerate() {
                let g = e.direction_to_geodetic(*d);
                assert!(
                    (lat[k] - g.latitude.to_degrees()).abs() <= 1e-13,
                    "{d}: latitude {} vs {}",
                    lat[k],
                    g.latitude.to_degrees()
                );
                assert!(
                    (lon[k] - g.longitude.to_degrees()).abs() <= 1e-13,
                    "{d}: longitude {} vs {}",
                    lon[k],
                    g.longitude.to_degrees()
                );
            }
        }
    }

    #[test]
    fn zero_zero_is_on_plus_x_at_the_equatorial_radius() {
        let earth = Body::earth();
        let p = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(0.0, 0.0, 0.0));
        assert_eq!(p, DVec3::new(6_378_137.0, 0.0, 0.0));
    }

    #[test]
    fn north_pole_is_at_the_polar_radius() {
        let earth = Body::earth();
        let p = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(90.0, 0.0, 0.0));
        assert!(p.x.abs() < 1e-9 && p.y.abs() < 1e-9, "{p}");
        assert!((p.z - 6_356_752.314_245).abs() < 1e-8, "{p}");
    }

    #[test]
    fn ninety_east_is_on_plus_y() {
        let earth = Body::earth();
        let p = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(0.0, 90.0, 100.0));
        assert!((p.y - 6_378_237.0).abs() < 1e-8 && p.x.abs() < 1e-8 && p.z.abs() < 1e-8);
    }

    #[test]
    fn known_wgs84_point_matches_published_ecef() {
        // Geodetic 45 N, 45 E, 1000 m: N = a / sqrt(1 - e^2 sin^2 lat).
        let earth = Body::earth();
        let p = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(45.0, 45.0, 1000.0));
        let a: f64 = 6_378_137.0;
        let b: f64 = 6_356_752.314_245;
        let e2 = 1.0 - (b * b) / (a * a);
        let lat = 45f64.to_radians();
        let n = a / (1.0 - e2 * lat.sin().powi(2)).sqrt();
        let expected_xy = (n + 1000.0) * lat.cos() * 45f64.to_radians().cos();
        let expected_z = (n * (1.0 - e2) + 1000.0) * lat.sin();
        assert!((p.x - expected_xy).abs() < 1e-6 && (p.y - expected_xy).abs() < 1e-6);
        assert!((p.z - expected_z).abs() < 1e-6);
    }

    #[test]
    fn bad_radii_are_refused() {
        assert!(Body::custom("x", [1.0, 0.0, 1.0]).is_err());
        assert!(Body::custom("x", [1.0, f64::NAN, 1.0]).is_err());
        // The physical range, as a rule every reader applies.
        assert!(Body::custom("x", [1e-300, 1e-300, 1e-300]).is_err());
        assert!(Body::custom("x", [1e12, 1e12, 1e12]).is_err());
        assert!(Body::custom("x", [1000.0, 1000.0, 99.0]).is_err(), "ratio over 10");
        assert!(Body::custom("bennu", [282.0, 268.0, 249.0]).is_ok());
        assert!(Body::custom("x", [10.0, 10.0, 10.0]).is_ok() && Body::custom("x", [9.99, 10.0, 10.0]).is_err());
        assert!(Body::named("vulcan").is_err());
        assert_eq!(Body::named("Mars").unwrap(), Body::mars());
    }
}
