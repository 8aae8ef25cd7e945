//! Where the preset bodies stand and how they are turned at an instant:
//! the frame a session with several bodies places them, and its camera, in.
//!
//! The key decision: one inertial frame for every body, the Earth's centre
//! with the J2000 equator and equinox (metres, f64), because each body's
//! orientation is already stated against J2000 ([`crate::orbits`]) and the
//! Earth-Moon system is where a session flies. A body is placed by its
//! centre in that frame and the rotation from it to the body-fixed frame
//! ([`Placement`]); a point moves between bodies through it, in f64.
//!
//! Accuracy, all low-precision formulae:
//! - the Moon: the Astronomical Almanac's series (section D), good to 0.3
//!   degree in ecliptic longitude, 0.2 degree in latitude and 0.003 degree
//!   in horizontal parallax (about 1,200 km of its 384,000 km);
//! - the Sun: the Almanac's solar coordinates ([`crate::sun`]), 0.01 degree;
//! - Mars: JPL's Keplerian elements ([`crate::orbits`]), about 0.01 degree
//!   heliocentric, from the Earth with the Sun's error added;
//! - the Earth's orientation: Greenwich mean sidereal time and the
//!   precession in longitude since J2000 (nutation, under 20 arcseconds,
//!   left out).

use glam::{DQuat, DVec3};

use crate::body::Body;
use crate::orbits;
use crate::sun::{greenwich_mean_sidereal_time, solar_position};
use crate::time::Instant;

/// The astronomical unit, metres (IAU 2012).
pub const AU_M: f64 = 149_597_870_700.0;
/// The Earth's equatorial radius the Almanac's parallaxes are stated in, metres.
const ALMANAC_EARTH_RADIUS_M: f64 = 6_378_140.0;
/// The obliquity of the ecliptic at J2000, degrees.
const OBLIQUITY_J2000_DEG: f64 = 23.439_291_1;
/// General precession in longitude, degrees per Julian century.
const PRECESSION_DEG_PER_CENTURY: f64 = 1.396_971_3;

/// A body in the inertial frame at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// The body's centre: metres from the Earth's, J2000 equatorial axes.
    pub centre: DVec3,
    /// Rotation from the J2000 axes to the body-fixed ones.
    pub to_body: DQuat,
}

impl Placement {
    /// A point of the inertial frame in the body-fixed frame.
    pub fn point_to_body(&self, point: DVec3) -> DVec3 {
        self.to_body * (point - self.centre)
    }

    /// A body-fixed point in the inertial frame.
    pub fn point_from_body(&self, point: DVec3) -> DVec3 {
        self.centre + self.to_body.inverse() * point
    }

    /// A direction of the inertial frame in the body-fixed frame.
    pub fn direction_to_body(&self, direction: DVec3) -> DVec3 {
        self.to_body * direction
    }

    /// A body-fixed direction (or rotation's axes) in the inertial frame.
    pub fn rotation_from_body(&self) -> DQuat {
        self.to_body.inverse()
    }
}

/// Where a preset body stands and how it is turned at `at`; `None` for a
/// body the system does not know (one given by its radii).
pub fn placement(body: &Body, at: Instant) -> Option<Placement> {
    match body.name().to_ascii_lowercase().as_str() {
        "earth" => Some(Placement { centre: DVec3::ZERO, to_body: earth_j2000_to_body(at) }),
        "moon" => {
            Some(Placement { centre: moon_geocentric_j2000_m(at), to_body: orbits::moon_at(at).j2000_to_body(at) })
        }
        "mars" => Some(Placement { centre: mars_geocentric_j2000_m(at), to_body: orbits::MARS.j2000_to_body(at) }),
        _ => None,
    }
}

fn ecliptic_to_equatorial() -> DQuat {
    DQuat::from_rotation_x(OBLIQUITY_J2000_DEG.to_radians())
}

/// The precession in longitude from J2000 to the equinox of `at`, radians.
fn precession_since_j2000(at: Instant) -> f64 {
    (PRECESSION_DEG_PER_CENTURY * at.days_since_j2000() / 36_525.0).to_radians()
}

/// The Earth: J2000 equatorial axes to the equator and equinox of date
/// (precession in longitude, about the ecliptic's pole), then turned by
/// Greenwich sidereal time: the frame the Earth's sun is placed in
/// ([`crate::sun::sun_direction`]), to the precession's own accuracy.
pub fn earth_j2000_to_body(at: Instant) -> DQuat {
    let e = ecliptic_to_equatorial();
    let to_date = e * DQuat::from_rotation_z(precession_since_j2000(at)) * e.inverse();
    DQuat::from_rotation_z(-greenwich_mean_sidereal_time(at)) * to_date
}

/// The Moon's centre, metres from the Earth's, J2000 equatorial axes: the
/// Almanac's low-precision series for its ecliptic longitude, latitude
/// (of date) and horizontal parallax.
pub fn moon_geocentric_j2000_m(at: Instant) -> DVec3 {
    let t = at.days_since_j2000() / 36_525.0;
    let s = |a: f64, b: f64| (a + b * t).to_radians().sin();
    let c = |a: f64, b: f64| (a + b * t).to_radians().cos();
    let longitude = 218.32 + 481_267.881 * t + 6.29 * s(135.0, 477_198.87) - 1.27 * s(259.3, -413_335.36)
        + 0.66 * s(235.7, 890_534.22)
        + 0.21 * s(269.9, 954_397.74)
        - 0.19 * s(357.5, 35_999.05)
        - 0.11 * s(186.5, 966_404.03);
    let latitude = 5.13 * s(93.3, 483_202.02) + 0.28 * s(228.2, 960_400.89)
        - 0.28 * s(318.3, 6_003.15)
        - 0.17 * s(217.6, -407_332.21);
    let parallax = 0.9508
        + 0.0518 * c(135.0, 477_198.87)
        + 0.0095 * c(259.3, -413_335.36)
        + 0.0078 * c(235.7, 890_534.22)
        + 0.0028 * c(269.9, 954_397.74);
    let distance = ALMANAC_EARTH_RADIUS_M / parallax.to_radians().sin();
    // Of date to J2000: undo the precession in longitude.
    let (l, b) = (longitude.to_radians() - precession_since_j2000(at), latitude.to_radians());
    ecliptic_to_equatorial() * DVec3::new(b.cos() * l.cos(), b.cos() * l.sin(), b.sin()) * distance
}

/// The Sun's centre, metres from the Earth's, J2000 equatorial axes.
pub fn sun_geocentric_j2000_m(at: Instant) -> DVec3 {
    orbits::sun_from_earth_j2000(at) * solar_position(at).distance_au * AU_M
}

/// Mars's centre, metres from the Earth's, J2000 equatorial axes.
pub fn mars_geocentric_j2000_m(at: Instant) -> DVec3 {
    sun_geocentric_j2000_m(at) + orbits::mars_heliocentric_j2000(at) * AU_M
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Instant {
        Instant::parse_rfc3339(text).unwrap()
    }

    fn degrees_between(a: DVec3, b: DVec3) -> f64 {
        a.angle_between(b).to_degrees()
    }

    #[test]
    fn the_moon_stays_between_perigee_and_apogee() {
        // Its distance ranges 356,400 to 406,700 km; the series' parallax
        // is good to 0.003 degree, about 1,200 km.
        let start = at("2026-01-01T00:00:00Z");
        let (mut near, mut far) = (f64::INFINITY, 0f64);
        for hour in 0..(2 * 366 * 24) {
            let d = moon_geocentric_j2000_m(start.plus_seconds(f64::from(hour) * 3600.0)).length();
            (near, far) = (near.min(d), far.max(d));
        }
        assert!((355.0e6..358.5e6).contains(&near) && (405.0e6..408.0e6).contains(&far), "{near} .. {far}");
    }

    #[test]
    fn the_moon_covers_the_sun_and_enters_the_earths_shadow_on_the_eclipse_dates() {
        // Greatest eclipse of 2024-04-08 at 18:17 UT (gamma 0.343: the
        // geocentric centres 0.34 degree apart) and of the total lunar
        // eclipse of 2025-03-14 at 06:59 UT (gamma 0.349), within the
        // series' 0.3 degree and the Sun's 0.01 (it gives 0.42 and 0.26).
        let solar = at("2024-04-08T18:17:00Z");
        let apart = degrees_between(moon_geocentric_j2000_m(solar), sun_geocentric_j2000_m(solar));
        assert!(apart < 0.8, "the Moon {apart} degrees from the Sun at a total solar eclipse");
        let lunar = at("2025-03-14T06:59:00Z");
        let apart = degrees_between(moon_geocentric_j2000_m(lunar), -sun_geocentric_j2000_m(lunar));
        assert!(apart < 0.8, "the Moon {apart} degrees from the anti-sun at a total lunar eclipse");
        // A week later it is a quarter turn away.
        let quarter = lunar.plus_seconds(7.4 * 86_400.0);
        let apart = degrees_between(moon_geocentric_j2000_m(quarter), sun_geocentric_j2000_m(quarter));
        assert!((75.0..105.0).contains(&apart), "{apart}");
    }

    #[test]
    fn the_moons_near_side_faces_the_earth() {
        // Its orientation (IAU) and its position (the Almanac) agree: the
        // Earth stands over the Moon's prime meridian and equator, within
        // the libration (7.9 degrees in longitude, 6.9 in latitude; over
        // 2026 the series and the IAU model give 8.0 and 6.8).
        let start = at("2026-01-01T00:00:00Z");
        let moon = Body::moon();
        for day in 0..60 {
            let when = start.plus_seconds(f64::from(day) * 86_400.0);
            let placed = placement(&moon, when).expect("the Moon is placed");
            let earth = placed.direction_to_body(-placed.centre.normalize());
            let (lat, lon) = (earth.z.asin().to_degrees(), earth.y.atan2(earth.x).to_degrees());
            assert!(lat.abs() < 8.0 && lon.abs() < 9.0, "day {day}: the Earth over {lat}, {lon}");
        }
    }

    #[test]
    fn the_earths_turn_agrees_with_its_sun() {
        let earth = Body::earth();
        for text in ["2026-03-20T12:00:00Z", "2026-06-21T06:00:00Z", "2030-12-01T22:30:00Z"] {
            let when = at(text);
            let placed = placement(&earth, when).expect("the Earth is placed");
            let from_system = placed.direction_to_body(sun_geocentric_j2000_m(when).normalize());
            let apart = degrees_between(from_system, crate::sun::sun_direction(&earth, when));
            assert!(apart < 0.02, "{text}: {apart} degrees");
        }
    }

    #[test]
    fn a_point_goes_to_a_body_and_back_in_f64() {
        let placed = placement(&Body::moon(), at("2026-07-01T00:00:00Z")).expect("placed");
        let p = DVec3::new(1_737_400.0, -12.5, 3.25);
        let back = placed.point_to_body(placed.point_from_body(p));
        assert!((back - p).length() < 1e-6, "{back}");
        assert!(placement(&Body::named("earth").unwrap(), Instant::J2000).is_some());
        assert!(placement(&Body::custom("rock", [100.0, 100.0, 100.0]).unwrap(), Instant::J2000).is_none());
    }

    #[test]
    fn mars_is_farther_than_the_sun_at_conjunction_and_nearer_at_opposition() {
        // Opposition 2025-01-16 (0.64 AU); conjunction 2023-11-18 (2.48 AU).
        let near = mars_geocentric_j2000_m(at("2025-01-16T00:00:00Z")).length() / AU_M;
        let far = mars_geocentric_j2000_m(at("2023-11-18T00:00:00Z")).length() / AU_M;
        assert!((0.6..0.7).contains(&near) && (2.4..2.55).contains(&far), "{near} {far}");
    }
}
