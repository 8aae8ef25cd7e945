//! The sun seen from the Moon and from Mars, in their body-fixed frames.
//!
//! The key decision: each body is oriented by the IAU working group's model
//! (pole right ascension and declination, prime meridian angle W growing at
//! the body's rotation rate, all in the J2000 equatorial frame), and the
//! sun's direction is put in that same frame: from the Moon, Earth's
//! geocentric sun (the two differ by under 0.15 degree); from Mars, the
//! opposite of Mars's heliocentric position from JPL's low-precision
//! Keplerian elements (Standish; good to about 0.01 degree, 1800 to 2050).
//! Low-precision throughout: enough for the subsolar point to a fraction of a
//! degree, so each body has its own seasons and its own solar day.

use glam::{DQuat, DVec3};

use crate::sun::solar_position;
use crate::time::Instant;

/// The IAU orientation of a body: pole and prime meridian (degrees, days
/// since J2000).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orientation {
    pub pole_ra_deg: f64,
    pub pole_dec_deg: f64,
    pub meridian_at_j2000_deg: f64,
    pub meridian_rate_deg_per_day: f64,
}

/// The Moon's constant terms (IAU 2015; its rotation period 27.321661
/// days): a pole near the ecliptic's. Its tilt comes from the E1 term
/// ([`moon_at`]).
pub const MOON: Orientation = Orientation {
    pole_ra_deg: 269.9949,
    pole_dec_deg: 66.5392,
    meridian_at_j2000_deg: 38.3213,
    meridian_rate_deg_per_day: 360.0 / 27.321_661,
};

/// Mars (IAU 2015; its rotation period 1.025957 days).
pub const MARS: Orientation = Orientation {
    pole_ra_deg: 317.681_43,
    pole_dec_deg: 52.886_50,
    meridian_at_j2000_deg: 176.630,
    meridian_rate_deg_per_day: 360.0 / 1.025_957,
};

impl Orientation {
    /// The rotation taking J2000 equatorial vectors to body-fixed ones:
    /// R3(W) R1(90 - dec) R3(90 + ra), the IAU's passive rotations.
    pub fn j2000_to_body(&self, at: Instant) -> DQuat {
        let w = self.meridian_at_j2000_deg + self.meridian_rate_deg_per_day * at.days_since_j2000();
        let passive_z = |deg: f64| DQuat::from_rotation_z(-deg.rem_euclid(360.0).to_radians());
        let passive_x = |deg: f64| DQuat::from_rotation_x(-deg.to_radians());
        passive_z(w) * passive_x(90.0 - self.pole_dec_deg) * passive_z(90.0 + self.pole_ra_deg)
    }
}

/// The Moon's orientation at `at`: [`MOON`] plus the IAU model's largest
/// periodic term (E1, the 18.6-year regression of its node), which tilts
/// its equator 1.54 degrees from the ecliptic; the smaller terms (under
/// 0.13 degree) are left out.
pub fn moon_at(at: Instant) -> Orientation {
    let e1 = (125.045 - 0.052_992_1 * at.days_since_j2000()).to_radians();
    Orientation {
        pole_ra_deg: MOON.pole_ra_deg - 3.8787 * e1.sin(),
        pole_dec_deg: MOON.pole_dec_deg + 1.5419 * e1.cos(),
        meridian_at_j2000_deg: MOON.meridian_at_j2000_deg + 3.5610 * e1.sin(),
        ..MOON
    }
}

/// The obliquity of the ecliptic at J2000, degrees.
const OBLIQUITY_J2000_DEG: f64 = 23.439_291_1;

fn ecliptic_to_equatorial(v: DVec3) -> DVec3 {
    DQuat::from_rotation_x(OBLIQUITY_J2000_DEG.to_radians()) * v
}

/// Earth's geocentric sun, unit vector, J2000 equator and equinox: the
/// Almanac's longitude of date less the precession since J2000.
pub fn sun_from_earth_j2000(at: Instant) -> DVec3 {
    let sun = solar_position(at);
    let t = at.days_since_j2000() / 36_525.0;
    let longitude = (sun.ecliptic_longitude_deg - 1.396_971_3 * t).to_radians();
    ecliptic_to_equatorial(DVec3::new(longitude.cos(), longitude.sin(), 0.0))
}

/// Mars's heliocentric position, AU, J2000 equator and equinox, from JPL's
/// approximate Keplerian elements (Standish, table 1: 1800 to 2050).
pub fn mars_heliocentric_j2000(at: Instant) -> DVec3 {
    let t = at.days_since_j2000() / 36_525.0;
    let a = 1.523_710_34 + 0.000_018_47 * t;
    let e = 0.093_394_10 + 0.000_078_82 * t;
    let inclination = (1.849_691_42 - 0.008_131_31 * t).to_radians();
    let mean_longitude = -4.553_432_05 + 19_140.302_684_99 * t;
    let perihelion = -23.943_629_59 + 0.444_410_88 * t;
    let node = (49.559_538_91 - 0.292_573_43 * t).to_radians();
    let mean_anomaly = (mean_longitude - perihelion).rem_euclid(360.0).to_radians();
    let argument = perihelion.to_radians() - node;
    // Kepler's equation by Newton's method (e < 0.1: a few steps).
    let mut eccentric = mean_anomaly + e * mean_anomaly.sin();
    for _ in 0..6 {
        eccentric -= (eccentric - e * eccentric.sin() - mean_anomaly) / (1.0 - e * eccentric.cos());
    }
    let in_plane = DVec3::new(a * (eccentric.cos() - e), a * (1.0 - e * e).sqrt() * eccentric.sin(), 0.0);
    let to_ecliptic =
        DQuat::from_rotation_z(node) * DQuat::from_rotation_x(inclination) * DQuat::from_rotation_z(argument);
    ecliptic_to_equatorial(to_ecliptic * in_plane)
}

/// The sun's direction in the Moon's body-fixed frame.
pub fn sun_from_moon(at: Instant) -> DVec3 {
    moon_at(at).j2000_to_body(at) * sun_from_earth_j2000(at)
}

/// The sun's direction in Mars's body-fixed frame.
pub fn sun_from_mars(at: Instant) -> DVec3 {
    MARS.j2000_to_body(at) * -mars_heliocentric_j2000(at).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Instant {
        Instant::parse_rfc3339(text).unwrap()
    }

    fn latitude(d: DVec3) -> f64 {
        d.z.asin().to_degrees()
    }

    #[test]
    fn a_pole_lands_on_plus_z() {
        for body in [MOON, MARS] {
            let (ra, dec) = (body.pole_ra_deg.to_radians(), body.pole_dec_deg.to_radians());
            let pole = DVec3::new(dec.cos() * ra.cos(), dec.cos() * ra.sin(), dec.sin());
            let z = body.j2000_to_body(at("2026-01-01T00:00:00Z")) * pole;
            assert!((z - DVec3::Z).length() < 1e-12, "{z}");
        }
    }

    #[test]
    fn mars_is_where_its_orbit_puts_it() {
        // Mars's distance stays between perihelion and aphelion, and its
        // orbital period is 686.98 days.
        let start = at("2026-01-01T00:00:00Z");
        let r0 = mars_heliocentric_j2000(start);
        assert!((1.38..1.67).contains(&r0.length()), "{}", r0.length());
        let r1 = mars_heliocentric_j2000(start.plus_seconds(686.98 * 86_400.0));
        assert!(r0.angle_between(r1).to_degrees() < 0.1, "{}", r0.angle_between(r1).to_degrees());
    }

    #[test]
    fn mars_has_its_own_seasons() {
        // Mars Year 38 began at its northern spring equinox (Ls 0) on
        // 2024-11-12 (the Clancy/Piqueux calendar): the sun over the equator.
        let equinox = latitude(sun_from_mars(at("2024-11-12T12:00:00Z")));
        assert!(equinox.abs() < 0.7, "subsolar latitude at Ls 0: {equinox}");
        // Over a Mars year the sun swings to the obliquity, 25.19 degrees.
        let start = at("2024-11-12T00:00:00Z");
        let extremes = (0..687).map(|d| latitude(sun_from_mars(start.plus_seconds(f64::from(d) * 86_400.0))));
        let (low, high) = extremes.fold((90f64, -90f64), |(lo, hi), l| (lo.min(l), hi.max(l)));
        assert!((high - 25.19).abs() < 0.3 && (low + 25.19).abs() < 0.3, "{low} .. {high}");
    }

    #[test]
    fn the_moon_has_almost_none() {
        // The lunar equator lies 1.54 degrees from the ecliptic.
        let start = at("2026-01-01T00:00:00Z");
        let most = (0..400)
            .map(|d| latitude(sun_from_moon(start.plus_seconds(f64::from(d) * 86_400.0))).abs())
            .fold(0f64, f64::max);
        assert!((1.3..1.7).contains(&most), "{most}");
    }
}
