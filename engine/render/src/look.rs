//! How a body looks beyond its ground: its atmosphere, palette and
//! exposure ([`Appearance`]), and where its sun stands ([`sun_at`] for the
//! real sun of a clock, [`sun_for`] for the fixed relief sun the goldens are
//! drawn under).
//!
//! The key decision: the look is plain data chosen per body by name, and
//! the two suns are two functions, so a picture's lighting is stated by
//! which one its caller picked, never by a hidden default.

use glam::DVec3;
use planet_terrain::camera::{Instant, View, sun_direction};
use planet_terrain::geo::body::Body;

/// How a body looks beyond its ground.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Appearance {
    /// Scale height (m) and extinction per metre at the datum; `None` for
    /// an airless body.
    pub atmosphere: Option<(f32, f32)>,
    /// Palette for ground without a colour block: 0 earth-like, 1 grey, 2 rust.
    pub palette: u32,
    pub exposure: f32,
}

impl Appearance {
    /// A sensible look for a named body.
    pub fn for_body(body: &Body) -> Appearance {
        match body.name() {
            "earth" => Appearance { atmosphere: Some((8000.0, 8.0e-6)), palette: 0, exposure: 1.4 },
            "mars" => Appearance { atmosphere: Some((11000.0, 2.0e-6)), palette: 2, exposure: 1.4 },
            // The Moon and any other airless grey body.
            _ => Appearance { atmosphere: None, palette: 1, exposure: 1.4 },
        }
    }
}

/// The real sun: its body-fixed direction at `at` (the Almanac's
/// low-precision ephemeris and the body's rotation,
/// [`planet_terrain::camera::sun_direction`]). The body turns under it: the
/// terrain and the camera stay body-fixed and this direction moves.
pub fn sun_at(body: &Body, at: Instant) -> DVec3 {
    sun_direction(body, at)
}

/// How far `body` has turned at `at` (radians about its +Z axis, the
/// prime meridian from the celestial frame's +X): the sky's stars turn the
/// other way over its body-fixed ground. 0 for a body whose spin is not
/// known (its frame is the celestial one, as for its sun).
pub fn sky_turn_at(body: &Body, at: Instant) -> f64 {
    planet_terrain::camera::BodyRotation::for_body(body).map_or(0.0, |r| {
        (r.prime_meridian_at_epoch + r.rate * at.seconds_since_j2000()).rem_euclid(std::f64::consts::TAU)
    })
}

/// The season at `at`: the fraction of the tropical year since the March
/// equinox (0 at it, 0.25 at the June solstice), which the earth palette's
/// snow follows (`FLAG_SEASON`). The year is the Earth's: the sun of every
/// body is placed from the Earth's clock too.
pub fn season_at(at: Instant) -> f64 {
    /// 2000-03-20 07:35 UT, in days after J2000 (2000-01-01 12:00).
    const MARCH_EQUINOX_2000: f64 = 78.816;
    const TROPICAL_YEAR_DAYS: f64 = 365.2422;
    ((at.days_since_j2000() - MARCH_EQUINOX_2000) / TROPICAL_YEAR_DAYS).rem_euclid(1.0)
}

/// A relief sun, independent of time: about 37 degrees up over the point
/// beneath the camera, from the south-east, low enough to show relief. The
/// renderer's goldens and benches are drawn under it (a picture of the
/// ground that no clock moves); the viewer draws under [`sun_at`].
pub fn sun_for(body: &Body, view: &View) -> DVec3 {
    let under = body.ellipsoid().point_to_geodetic(view.position);
    let enu = planet_terrain::geo::east_north_up(under);
    (enu.col(0) * 0.62 - enu.col(1) * 0.5 + enu.col(2) * 0.6).normalize()
}
