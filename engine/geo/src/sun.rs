//! Where the sun stands: a low-precision solar ephemeris, Earth's rotation
//! angle, and the sun's direction in a body's body-fixed frame.
//!
//! The key decision: terrain and camera stay in the body-fixed frame and the
//! *sun* moves. The sun's direction comes from the Astronomical Almanac's
//! low-precision formulae (mean longitude, mean anomaly, ecliptic longitude,
//! obliquity; stated good to 0.01 degree from 1950 to 2050, and tested here
//! against equinoxes, solstices and a published apparent position) in the
//! equator-and-equinox frame of date, then turned into Earth's body-fixed
//! frame by the Earth rotation angle (ERA) plus the equation of the origins
//! (together: Greenwich mean sidereal time). Nutation and polar motion are
//! left out (under 0.005 degree).
//!
//! The Moon and Mars are oriented by their IAU poles and prime meridians
//! and see the sun from where they are ([`crate::orbits`]). A body with no
//! known rotation does not turn: its frame is Earth's celestial one, and
//! its sun moves only with the year.

use glam::{DQuat, DVec3};

use crate::body::{Body, Geodetic};
use crate::orbits;
use crate::rotation::BodyRotation;
use crate::time::{DAY_S, Instant};

/// The sun as the low-precision formulae give it, at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolarPosition {
    /// Ecliptic longitude of date, degrees in [0, 360).
    pub ecliptic_longitude_deg: f64,
    /// Obliquity of the ecliptic, degrees.
    pub obliquity_deg: f64,
    /// Right ascension of date, degrees in [0, 360).
    pub right_ascension_deg: f64,
    pub declination_deg: f64,
    /// Earth-sun distance, astronomical units.
    pub distance_au: f64,
}

/// The Astronomical Almanac's low-precision solar coordinates.
pub fn solar_position(at: Instant) -> SolarPosition {
    let n = at.days_since_j2000();
    let mean_longitude = 280.460 + 0.985_647_4 * n;
    let g = (357.528 + 0.985_600_3 * n).to_radians();
    let lambda = (mean_longitude + 1.915 * g.sin() + 0.020 * (2.0 * g).sin()).rem_euclid(360.0);
    let epsilon = 23.439 - 0.000_000_4 * n;
    let (l, e) = (lambda.to_radians(), epsilon.to_radians());
    let right_ascension = (e.cos() * l.sin()).atan2(l.cos()).to_degrees().rem_euclid(360.0);
    let declination = (e.sin() * l.sin()).asin().to_degrees();
    SolarPosition {
        ecliptic_longitude_deg: lambda,
        obliquity_deg: epsilon,
        right_ascension_deg: right_ascension,
        declination_deg: declination,
        distance_au: 1.000_14 - 0.016_71 * g.cos() - 0.000_14 * (2.0 * g).cos(),
    }
}

impl SolarPosition {
    /// Unit vector toward the sun in the equator-and-equinox frame of date.
    pub fn equatorial(&self) -> DVec3 {
        let (ra, dec) = (self.right_ascension_deg.to_radians(), self.declination_deg.to_radians());
        DVec3::new(dec.cos() * ra.cos(), dec.cos() * ra.sin(), dec.sin())
    }
}

/// Earth rotation angle, radians in [0, 2π) (IERS 2010, UT1 ≈ UTC).
pub fn earth_rotation_angle(at: Instant) -> f64 {
    let du = at.days_since_j2000();
    // Split the day count so the fraction keeps its precision.
    let turns = 0.779_057_273_264_0 + 0.002_737_811_911_354_48 * du + du.fract();
    std::f64::consts::TAU * turns.rem_euclid(1.0)
}

/// The equation of the origins' polynomial: Greenwich mean sidereal time
/// minus the Earth rotation angle (IAU 2006), radians.
pub fn gmst_minus_era(at: Instant) -> f64 {
    let t = at.days_since_j2000() / 36_525.0;
    let arcsec = 0.014_506 + t * (4_612.156_534 + t * (1.391_581_7 + t * (-0.000_000_44 + t * -0.000_029_956)));
    (arcsec / 3600.0).to_radians()
}

/// Greenwich mean sidereal time, radians in [0, 2π).
pub fn greenwich_mean_sidereal_time(at: Instant) -> f64 {
    (earth_rotation_angle(at) + gmst_minus_era(at)).rem_euclid(std::f64::consts::TAU)
}

/// The sun in the celestial frame [`BodyRotation`]s turn from: Earth's
/// equator of date with +X at the celestial intermediate origin, so that
/// Earth's body-fixed frame is this frame turned by the ERA.
pub fn sun_celestial(at: Instant) -> DVec3 {
    DQuat::from_rotation_z(-gmst_minus_era(at)) * solar_position(at).equatorial()
}

impl BodyRotation {
    /// Earth turning by its rotation angle; time in seconds since J2000 UT1.
    pub const EARTH_ERA: BodyRotation = BodyRotation {
        prime_meridian_at_epoch: std::f64::consts::TAU * 0.779_057_273_264_0,
        rate: std::f64::consts::TAU * 1.002_737_811_911_354_5 / DAY_S,
    };
    /// The Moon: one turn per 27.321661 days from its IAU prime meridian
    /// (38.3213 degrees) at J2000.
    pub const MOON: BodyRotation = BodyRotation {
        prime_meridian_at_epoch: 38.3213 * std::f64::consts::PI / 180.0,
        rate: std::f64::consts::TAU / (27.321_661 * DAY_S),
    };
    /// Mars: one turn per 1.025957 days from its IAU prime meridian
    /// (176.630 degrees) at J2000.
    pub const MARS: BodyRotation = BodyRotation {
        prime_meridian_at_epoch: 176.630 * std::f64::consts::PI / 180.0,
        rate: std::f64::consts::TAU / (1.025_957 * DAY_S),
    };

    /// The spin of a preset body (by name), time since J2000: the rate its
    /// solar day follows from. (The Moon's and Mars's full orientation, pole
    /// included, is [`crate::orbits::Orientation`].)
    pub fn for_body(body: &Body) -> Option<BodyRotation> {
        match body.name().to_ascii_lowercase().as_str() {
            "earth" => Some(BodyRotation::EARTH_ERA),
            "moon" => Some(BodyRotation::MOON),
            "mars" => Some(BodyRotation::MARS),
            _ => None,
        }
    }
}

/// Unit vector toward the sun in `body`'s body-fixed frame at `at`. A body
/// with no known rotation does not turn (its frame is the celestial one).
pub fn sun_direction(body: &Body, at: Instant) -> DVec3 {
    match body.name().to_ascii_lowercase().as_str() {
        "earth" => BodyRotation::EARTH_ERA.body_to_inertial(at.seconds_since_j2000()).inverse() * sun_celestial(at),
        "moon" => orbits::sun_from_moon(at),
        "mars" => orbits::sun_from_mars(at),
        _ => sun_celestial(at),
    }
}

/// Days of a preset body's year: how fast its sun drifts east.
fn year_days(body: &Body) -> f64 {
    if body.name().eq_ignore_ascii_case("mars") { 686.98 } else { 365.2422 }
}

/// The point with the sun at its zenith (geocentric direction; latitude
/// and longitude in degrees, longitude in (-180, 180]).
pub fn subsolar_point(body: &Body, at: Instant) -> Geodetic {
    let d = sun_direction(body, at);
    Geodetic::from_degrees(d.z.asin().to_degrees(), d.y.atan2(d.x).to_degrees(), 0.0)
}

/// Local apparent solar time at `longitude_deg`, hours in [0, 24): noon
/// where the sun stands on the meridian.
pub fn local_solar_time_hours(body: &Body, at: Instant, longitude_deg: f64) -> f64 {
    let d = sun_direction(body, at);
    let sun_longitude = d.y.atan2(d.x).to_degrees();
    (12.0 + (longitude_deg - sun_longitude) / 15.0).rem_euclid(24.0)
}

/// The instant within half a solar day of `near` at which the local solar
/// time at `longitude_deg` is `hours` (a body that does not turn has no
/// solar day: `near` itself).
pub fn instant_at_local_time(body: &Body, near: Instant, longitude_deg: f64, hours: f64) -> Instant {
    let Some(rotation) = BodyRotation::for_body(body) else { return near };
    // The sun's own eastward drift (a year per turn) lengthens the day.
    let solar_day = std::f64::consts::TAU / (rotation.rate - std::f64::consts::TAU / (year_days(body) * DAY_S));
    let mut t = near;
    for _ in 0..5 {
        let behind = (hours - local_solar_time_hours(body, t, longitude_deg) + 36.0).rem_euclid(24.0) - 12.0;
        t = t.plus_seconds(behind / 24.0 * solar_day);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Instant {
        Instant::parse_rfc3339(text).unwrap()
    }

    fn angle_diff(a: f64, b: f64) -> f64 {
        (a - b + 540.0).rem_euclid(360.0) - 180.0
    }

    #[test]
    fn equinoxes_and_solstices_fall_where_the_almanac_puts_them() {
        // 2024's equinoxes and solstices (USNO, to the minute): the sun's
        // apparent ecliptic longitude is 0, 90, 180, 270 degrees.
        let cases = [
            ("2024-03-20T03:06:00Z", 0.0, 0.0),
            ("2024-06-20T20:51:00Z", 90.0, 23.4362),
            ("2024-09-22T12:44:00Z", 180.0, 0.0),
            ("2024-12-21T09:20:00Z", 270.0, -23.4362),
        ];
        for (text, longitude, declination) in cases {
            let sun = solar_position(at(text));
            let (dl, dd) = (angle_diff(sun.ecliptic_longitude_deg, longitude), sun.declination_deg - declination);
            assert!(dl.abs() < 0.01, "{text}: ecliptic longitude off by {dl:.4} degrees");
            assert!(dd.abs() < 0.01, "{text}: declination off by {dd:.4} degrees");
        }
    }

    #[test]
    fn a_published_apparent_position_is_matched() {
        // Meeus, Astronomical Algorithms, example 25.a: 1992-10-13 0h TD,
        // apparent RA 198.38083, declination -7.78507 degrees.
        let sun = solar_position(at("1992-10-13T00:00:00Z").plus_seconds(-59.0));
        assert!(angle_diff(sun.right_ascension_deg, 198.380_83).abs() < 0.01, "{sun:?}");
        assert!((sun.declination_deg + 7.785_07).abs() < 0.01, "{sun:?}");
        assert!((sun.distance_au - 0.997_66).abs() < 2e-4, "{sun:?}");
    }

    #[test]
    fn earth_rotation_angle_at_j2000_and_later() {
        let era = earth_rotation_angle(Instant::J2000).to_degrees();
        assert!((era - 280.460_618_375_04).abs() < 1e-9, "{era}");
        // A sidereal day later the angle is back; a solar day later it has
        // gained 0.9856 degrees.
        let day = earth_rotation_angle(Instant::J2000.plus_seconds(DAY_S)).to_degrees();
        assert!((angle_diff(day, era) - 0.985_612_288_088).abs() < 1e-8, "{day}");
        // Meeus example 12.a/12.b: GMST on 1987-04-10 at 0h UT is
        // 13h10m46.3668s and at 19:21 UT 8h34m57.0896s (IAU 1982; the IAU
        // 2006 form used here differs by 0.05 arcseconds).
        for (text, hms) in
            [("1987-04-10T00:00:00Z", (13.0, 10.0, 46.3668)), ("1987-04-10T19:21:00Z", (8.0, 34.0, 57.0896))]
        {
            let want = (hms.0 + hms.1 / 60.0 + hms.2 / 3600.0) * 15.0;
            let got = greenwich_mean_sidereal_time(at(text)).to_degrees();
            assert!(angle_diff(got, want).abs() < 5e-5, "{text}: {got} vs {want}");
        }
    }

    #[test]
    fn the_sun_is_over_the_greenwich_meridian_near_noon_utc() {
        let earth = Body::earth();
        // Equation of time: the sun runs up to 16 minutes (4 degrees)
        // either side of mean noon.
        for date in ["2024-01-15", "2024-02-11", "2024-04-15", "2024-07-26", "2024-11-03", "2026-06-21"] {
            let lon = subsolar_point(&earth, at(&format!("{date}T12:00:00Z"))).longitude.to_degrees();
            assert!(lon.abs() < 4.2, "{date}: subsolar longitude {lon}");
        }
        // Its known extremes: about -14m13s on 11 February (the sun late,
        // standing east), +16m26s on 3 November (early, standing west).
        let feb = subsolar_point(&earth, at("2024-02-11T12:00:00Z")).longitude.to_degrees();
        let nov = subsolar_point(&earth, at("2024-11-03T12:00:00Z")).longitude.to_degrees();
        assert!((feb - 14.2 / 4.0).abs() < 0.1, "{feb}");
        assert!((nov + 16.43 / 4.0).abs() < 0.1, "{nov}");
    }

    #[test]
    fn the_subsolar_point_at_the_june_solstice() {
        // 2024-06-20T20:51Z: the sun stands over 23.44 N; local noon there is
        // 20:51 UTC less 1m30s of the equation of time: 12.3 W of 180.
        let p = subsolar_point(&Body::earth(), at("2024-06-20T20:51:00Z"));
        assert!((p.latitude.to_degrees() - 23.44).abs() < 0.02, "{p:?}");
        let want = -(20.85 - 12.0 - 1.5 / 60.0) * 15.0;
        assert!(angle_diff(p.longitude.to_degrees(), want).abs() < 0.5, "{} vs {want}", p.longitude.to_degrees());
    }

    #[test]
    fn local_solar_time_follows_longitude() {
        let earth = Body::earth();
        let t = at("2026-03-20T12:00:00Z");
        let noon_at_greenwich = local_solar_time_hours(&earth, t, 0.0);
        assert!((noon_at_greenwich - 12.0).abs() < 0.25, "{noon_at_greenwich}");
        let east = local_solar_time_hours(&earth, t, 90.0);
        assert!((east - noon_at_greenwich - 6.0).abs() < 1e-9, "{east}");
    }

    #[test]
    fn an_instant_is_found_for_a_local_time() {
        let day = at("2026-03-20T12:00:00Z");
        for body in [Body::earth(), Body::moon(), Body::mars()] {
            for lon in [-170.0, -69.3, 0.0, 38.95, 86.9] {
                let t = instant_at_local_time(&body, day, lon, 10.0);
                let local = local_solar_time_hours(&body, t, lon);
                assert!((local - 10.0).abs() < 1e-5, "{body} at {lon}: {local}");
            }
        }
    }

    #[test]
    fn other_bodies_turn_at_their_own_rate() {
        let (moon, mars) = (Body::moon(), Body::mars());
        let t = at("2026-01-01T00:00:00Z");
        // Mars: the sun comes back round in a sol (88 775 s).
        let sol = 88_775.244;
        let (a, b) = (sun_direction(&mars, t), sun_direction(&mars, t.plus_seconds(sol)));
        assert!(a.angle_between(b).to_degrees() < 0.3, "{}", a.angle_between(b).to_degrees());
        // The Moon: a quarter of a synodic month turns the sun 90 degrees
        // about its pole.
        let quarter = 29.530_589 * DAY_S / 4.0;
        let (a, b) = (sun_direction(&moon, t), sun_direction(&moon, t.plus_seconds(quarter)));
        let turned = a.truncate().angle_to(b.truncate()).to_degrees().abs();
        assert!((turned - 90.0).abs() < 1.0, "{turned}");
        // A body of unknown rotation does not turn: its sun moves only by
        // the year's 0.04 degrees an hour.
        let rock = Body::custom("rock", [1000.0, 1000.0, 1000.0]).unwrap();
        let drift = sun_direction(&rock, t).angle_between(sun_direction(&rock, t.plus_seconds(3600.0)));
        assert!(drift.to_degrees() < 0.05, "{}", drift.to_degrees());
    }
}
