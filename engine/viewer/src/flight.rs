//! Flight across seven orders of magnitude: an orbit mode and a free-fly
//! mode, both scaled by the height above the ground beneath.
//!
//! The key decision: motion is simulated in fixed steps of 1/240 s with the
//! remainder carried to the next frame, and mouse and wheel input apply
//! once per frame outside those steps, so the same inputs over the same
//! span give the same place whether they arrive in 10 frames or 1000. Within
//! a step, heights change geometrically and the distance covered is the
//! integral of the speed, in closed form. The camera is then
//! held above the ground as the height function reads it at a fixed
//! resolution: the ground the renderer draws, not the view's detail.

use planet_terrain::camera::{CameraPose, View};
use planet_terrain::geo::body::{Body, Geodetic};

/// Metres the camera always keeps above the ground.
pub const CLEARANCE_M: f64 = 1.5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Drag turns the body under the camera; the wheel zooms.
    Orbit,
    /// WASD moves, the mouse looks, Q/E sink and climb.
    Free,
}

/// What the user is doing this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Controls {
    pub forward: bool,
    pub back: bool,
    pub left: bool,
    pub right: bool,
    pub up: bool,
    pub down: bool,
    pub fast: bool,
    /// Mouse movement (pixels) while looking (free mode).
    pub look: (f64, f64),
    /// Mouse movement (pixels) while dragging (orbit mode).
    pub drag: (f64, f64),
    /// Wheel steps (positive: toward the ground).
    pub wheel: f64,
}

/// The camera: where it is and where it looks, in the local frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flight {
    pub mode: Mode,
    pub lat: f64,
    pub lon: f64,
    /// Height above the ellipsoid, metres.
    pub alt: f64,
    pub heading: f64,
    pub pitch: f64,
    /// Degrees the view is turned about its axis (counter-clockwise as
    /// seen), 0 for a pose: kept across a crossing to another body, where
    /// the local up turns (about half a turn between the Earth and the
    /// Moon), so the picture does not; free flight levels it out.
    pub roll: f64,
    /// Orbit mode: the height above the ground the zoom is heading for.
    target_above_ground: Option<f64>,
    /// Simulated time not yet stepped (less than one `STEP_S`).
    pending_s: f64,
}

/// The fixed simulation step.
const STEP_S: f64 = 1.0 / 240.0;

/// Seconds over which an orbit zoom closes 63% of the way.
const ZOOM_TAU_S: f64 = 0.15;
/// Free flight covers the camera's own height above the ground per second.
const SPEED_PER_HEIGHT: f64 = 1.0;
const FAST: f64 = 8.0;
/// Seconds over which free flight takes 63% of a roll out.
const ROLL_LEVELLING_S: f64 = 1.0;
/// Degrees of look per pixel of mouse movement.
const LOOK_DEG_PER_PX: f64 = 0.12;

impl Flight {
    pub fn new(pose: CameraPose, mode: Mode) -> Flight {
        Flight {
            mode,
            lat: pose.lat,
            lon: pose.lon,
            alt: pose.alt,
            heading: pose.heading,
            pitch: pose.pitch,
            roll: 0.0,
            target_above_ground: None,
            pending_s: 0.0,
        }
    }

    pub fn pose(&self) -> CameraPose {
        CameraPose { lat: self.lat, lon: self.lon, alt: self.alt, heading: self.heading, pitch: self.pitch }
    }

    pub fn set_pose(&mut self, pose: CameraPose) {
        *self = Flight::new(pose, self.mode);
    }

    pub fn toggle_mode(&mut self) {
        self.mode = match self.mode {
            Mode::Orbit => Mode::Free,
            Mode::Free => Mode::Orbit,
        };
        self.target_above_ground = None;
    }

    pub fn view(&self, body: &Body, vertical_fov: f64, viewport: (u32, u32)) -> View {
        let at = Geodetic::from_degrees(self.lat, self.lon, self.alt);
        let view = View::looking_from(body, at, self.heading, self.pitch, vertical_fov, viewport);
        View { orientation: view.orientation * glam::DQuat::from_rotation_z(self.roll.to_radians()), ..view }
    }

    /// Advances by `dt` seconds of frame time. `ground` answers the
    /// ground's elevation (metres) at a latitude/longitude in degrees.
    pub fn step(
        &mut self,
        body: &Body,
        controls: &Controls,
        dt: f64,
        viewport_height_px: f64,
        vertical_fov: f64,
        mut ground: impl FnMut(f64, f64) -> f64,
    ) {
        // A roll kept from a crossing levels out over a couple of seconds.
        self.roll *= (-dt / ROLL_LEVELLING_S).exp();
        // Impulses: once per frame, whatever its length.
        let above = (self.alt - ground(self.lat, self.lon)).max(CLEARANCE_M);
        let radius = body.ellipsoid().radii().x;
        match self.mode {
            Mode::Orbit => {
                // Drag: the ground under the cursor follows it.
                let metres_per_px = 2.0 * above * (0.5 * vertical_fov).tan() / viewport_height_px;
                let (dx, dy) = controls.drag;
                let east = -dx * metres_per_px;
                let north = dy * metres_per_px;
                let (sin_h, cos_h) = self.heading.to_radians().sin_cos();
                let (e, n) = (east * cos_h + north * sin_h, -east * sin_h + north * cos_h);
                self.lat = (self.lat + (n / radius).to_degrees()).clamp(-89.999, 89.999);
                self.lon += (e / (radius * self.lat.to_radians().cos().max(1e-6))).to_degrees();
                // Wheel: a geometric zoom toward the ground.
                let target = self.target_above_ground.unwrap_or(above) * (-0.25 * controls.wheel).exp();
                self.target_above_ground = Some(target.clamp(CLEARANCE_M, 50.0 * radius));
            }
            Mode::Free => {
                self.heading = (self.heading + controls.look.0 * LOOK_DEG_PER_PX).rem_euclid(360.0);
                self.pitch = (self.pitch - controls.look.1 * LOOK_DEG_PER_PX).clamp(-89.0, 89.0);
            }
        }
        self.pending_s += dt;
        while self.pending_s >= STEP_S {
            self.pending_s -= STEP_S;
            self.step_fixed(body, controls, &mut ground);
        }
        self.lon = (self.lon + 180.0).rem_euclid(360.0) - 180.0;
        self.keep_above(ground(self.lat, self.lon));
    }

    /// One fixed simulation step.
    fn step_fixed(&mut self, body: &Body, controls: &Controls, ground: &mut impl FnMut(f64, f64) -> f64) {
        let dt = STEP_S;
        let above = (self.alt - ground(self.lat, self.lon)).max(CLEARANCE_M);
        match self.mode {
            Mode::Orbit => {
                // The zoom approaches its target exponentially (in log height).
                let Some(target) = self.target_above_ground else { return };
                let blend = (-dt / ZOOM_TAU_S).exp();
                let log_above = target.ln() + (above.ln() - target.ln()) * blend;
                self.alt += log_above.exp() - above;
            }
            Mode::Free => {
                let axis = |pos: bool, neg: bool| f64::from(i8::from(pos) - i8::from(neg));
                let (along, across) = (axis(controls.forward, controls.back), axis(controls.right, controls.left));
                // Climbing and sinking are geometric: the height above the
                // ground grows or shrinks by e per second (3x with shift).
                let rate = axis(controls.up, controls.down) * if controls.fast { 3.0 } else { 1.0 };
                let growth = (rate * dt).exp();
                if along != 0.0 || across != 0.0 {
                    // Speed follows the height, so over the step the camera
                    // covers the integral of a growing (or shrinking) speed:
                    // exact for any step, hence for any frame rate.
                    let speed = SPEED_PER_HEIGHT * above.max(2.0) * if controls.fast { FAST } else { 1.0 };
                    let distance = if rate == 0.0 { speed * dt } else { speed * (growth - 1.0) / rate };
                    let view = self.view(body, 1.0, (1, 1));
                    let motion = (view.forward() * along + view.right() * across).normalize() * distance;
                    let position =
                        body.ellipsoid().geodetic_to_point(Geodetic::from_degrees(self.lat, self.lon, self.alt))
                            + motion;
                    let g = body.ellipsoid().point_to_geodetic(position);
                    self.lat = g.latitude.to_degrees();
                    self.lon = g.longitude.to_degrees();
                    self.alt = g.height;
                }
                if rate != 0.0 {
                    let ground_here = ground(self.lat, self.lon);
                    self.alt = ground_here + (self.alt - ground_here).max(CLEARANCE_M) * growth;
                }
            }
        }
        self.keep_above(ground(self.lat, self.lon));
    }

    /// Lifts the camera to `CLEARANCE_M` above `ground` if it is lower.
    pub fn keep_above(&mut self, ground: f64) {
        self.alt = self.alt.max(ground + CLEARANCE_M);
    }

    /// The point the camera stands at (body-fixed).
    #[cfg(test)]
    pub fn position(&self, body: &Body) -> glam::DVec3 {
        body.ellipsoid().geodetic_to_point(Geodetic::from_degrees(self.lat, self.lon, self.alt))
    }
}

/// A flight to a place: up and over, then down (altitudes interpolated
/// geometrically by the camera path).
pub fn fly_to(from: CameraPose, to: CameraPose, body: &Body, seconds: f64) -> planet_terrain::camera::CameraPath {
    use planet_terrain::camera::{CameraPath, Keyframe};
    let a = body.ellipsoid().geodetic_to_direction(Geodetic::from_degrees(from.lat, from.lon, 0.0));
    let b = body.ellipsoid().geodetic_to_direction(Geodetic::from_degrees(to.lat, to.lon, 0.0));
    let arc_m = a.angle_between(b) * body.ellipsoid().radii().x;
    let cruise = (arc_m * 0.6).max(from.alt).max(to.alt);
    let key = |t: f64, p: CameraPose, alt: f64| Keyframe {
        t,
        lat: p.lat,
        lon: p.lon,
        alt,
        heading: p.heading,
        pitch: p.pitch,
    };
    let mid = CameraPose {
        lat: 0.5 * (from.lat + to.lat),
        lon: from.lon + 0.5 * ((to.lon - from.lon + 180.0).rem_euclid(360.0) - 180.0),
        alt: cruise,
        heading: to.heading,
        pitch: to.pitch.clamp(-90.0, -45.0),
    };
    let keys = if arc_m > 2.0 * from.alt.min(to.alt) {
        vec![key(0.0, from, from.alt), key(0.5 * seconds, mid, cruise), key(seconds, to, to.alt)]
    } else {
        vec![key(0.0, from, from.alt), key(seconds, to, to.alt)]
    };
    CameraPath::new(keys).expect("valid keys from valid poses")
}

/// A place to go to: its name, where, and how the camera arrives there
/// (metres above the ground, heading and pitch in degrees).
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub name: String,
    pub lat: f64,
    pub lon: f64,
    pub above: f64,
    pub heading: f64,
    pub pitch: f64,
    /// The body it is on, when not the camera's (a session of several).
    pub body: Option<Body>,
}

impl Place {
    /// Another body of the session, seen whole from above its near side.
    pub fn over_body(body: &Body) -> Place {
        let name = body.name();
        let mut title = name[..1].to_uppercase();
        title.push_str(&name[1..]);
        let radius = body.ellipsoid().radii().max_element();
        Place {
            name: title,
            lat: 0.0,
            lon: 0.0,
            above: 2.5 * radius,
            heading: 0.0,
            pitch: -90.0,
            body: Some(body.clone()),
        }
    }
}

/// The places the go-to key cycles through and the places panel lists:
/// the built-in ones ([`PLACES`], on the Earth: where the session has it),
/// then each regional pack of the camera's `body` by its name, over its
/// box's middle, high enough to see the box whole (a new user's own DEM was
/// not among them: "sier" found nothing), then each of the session's
/// `others` bodies, whole.
pub fn places(packs: &[(String, planet_terrain::pack::Coverage)], body: &Body, others: &[Body]) -> Vec<Place> {
    // Each place names its body, so it is found after the camera crossed
    // to another.
    let earth = std::iter::once(body).chain(others).find(|b| b.name() == "earth").cloned();
    let builtin = earth.into_iter().flat_map(|earth| {
        PLACES.iter().map(move |&(name, lat, lon, above, heading, pitch)| Place {
            name: name.to_owned(),
            lat,
            lon,
            above,
            heading,
            pitch,
            body: Some(earth.clone()),
        })
    });
    let regional = packs.iter().filter_map(|(name, coverage)| {
        let framing = Framing::of(*coverage, body)?;
        let above = framing.alt - FRAMING_CLEARANCE_M;
        Some(Place {
            name: name.to_uppercase(),
            lat: framing.lat,
            lon: framing.lon,
            above,
            heading: 0.0,
            pitch: -90.0,
            body: Some(body.clone()),
        })
    });
    // With several bodies, each is a place of its own, the camera's first
    // (to come back to it).
    let camera = if others.is_empty() { None } else { Some(body) };
    let whole = camera.into_iter().chain(others);
    builtin.chain(regional).chain(whole.map(Place::over_body)).collect()
}

/// Above the highest ground a range may hold: what a framing adds to the
/// height that fits a box in the default view.
pub(crate) const FRAMING_CLEARANCE_M: f64 = 9_000.0;

/// Where a camera frames a regional pack: over its box's middle, high
/// enough (above the ellipsoid) that the box fills the default view.
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    pub lat: f64,
    pub lon: f64,
    pub alt: f64,
}

impl Framing {
    /// The framing of `coverage` on `body` (`None` for a global pack).
    pub fn of(coverage: planet_terrain::pack::Coverage, body: &Body) -> Option<Framing> {
        if coverage.is_global() {
            return None;
        }
        let width_deg = (coverage.east - coverage.west).rem_euclid(360.0);
        let lat = 0.5 * (coverage.south + coverage.north);
        let lon = coverage.west + 0.5 * width_deg;
        let lon = if lon > 180.0 { lon - 360.0 } else { lon };
        let metres_per_degree = body.ellipsoid().radii().x.to_radians();
        let extent_m =
            metres_per_degree * (coverage.north - coverage.south).max(width_deg * lat.to_radians().cos().abs());
        // The default view's 50 degrees, with a margin.
        let alt = 1.3 * extent_m / (2.0 * 25f64.to_radians().tan()) + FRAMING_CLEARANCE_M;
        Some(Framing { lat, lon, alt })
    }
}

/// The built-in places: (name, lat, lon, height above the ground,
/// heading, pitch).
pub const PLACES: &[(&str, f64, f64, f64, f64, f64)] = &[
    ("MOUNT EVEREST", 27.95, 86.80, 3000.0, 90.0, -10.0),
    ("GRAND CANYON", 36.10, -112.20, 2500.0, 60.0, -15.0),
    ("ALPS, MONT BLANC", 45.80, 6.75, 4000.0, 100.0, -12.0),
    ("ANDES, ACONCAGUA", -32.70, -70.20, 5000.0, 20.0, -12.0),
    ("HAWAII, MAUNA KEA", 19.70, -155.70, 6000.0, 300.0, -20.0),
    ("DEAD SEA", 31.50, 35.45, 1500.0, 0.0, -15.0),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// #54: every place names its body. The built-in ones are on the
    /// Earth: from the Moon they are reached through space, and a session
    /// without the Earth lists none; with several bodies each is a place of
    /// its own, last, the camera's first (to come back to it).
    #[test]
    fn the_places_name_the_body_they_are_on() {
        let (earth, moon) = (Body::earth(), Body::moon());
        let at_earth = places(&[], &earth, std::slice::from_ref(&moon));
        assert_eq!(at_earth.len(), PLACES.len() + 2);
        assert!(at_earth[..PLACES.len()].iter().all(|p| p.body.as_ref() == Some(&earth)), "{at_earth:?}");
        let whole: Vec<(&str, Option<&Body>)> =
            at_earth[PLACES.len()..].iter().map(|p| (p.name.as_str(), p.body.as_ref())).collect();
        assert_eq!(whole, [("Earth", Some(&earth)), ("Moon", Some(&moon))]);
        let at_moon = places(&[], &moon, std::slice::from_ref(&earth));
        assert!(at_moon[..PLACES.len()].iter().all(|p| p.body.as_ref() == Some(&earth)), "{at_moon:?}");
        assert_eq!(at_moon.last().map(|p| p.name.as_str()), Some("Earth"));
        assert!(places(&[], &moon, &[]).is_empty(), "the Moon alone: no Earth places");
        assert_eq!(places(&[], &earth, &[]).len(), PLACES.len(), "one body: no body places");
    }

    /// Regression (#55 item 3): the demo's own Sierra was not among the
    /// places ("sier" found nothing). Every regional pack is, by its name,
    /// over its box's middle looking down; a global pack adds none.
    #[test]
    fn each_regional_pack_is_a_place_by_its_name() {
        let sierra = planet_terrain::pack::Coverage { south: 36.0, west: -120.0, north: 38.0, east: -118.0 };
        let packs = [("earth".to_owned(), planet_terrain::pack::Coverage::GLOBAL), ("sierra".to_owned(), sierra)];
        let places = places(&packs, &Body::earth(), &[]);
        assert_eq!(places.len(), PLACES.len() + 1, "{places:?}");
        let last = places.last().expect("a place");
        assert_eq!((last.name.as_str(), last.lat, last.lon, last.pitch), ("SIERRA", 37.0, -119.0, -90.0));
        // Two degrees of latitude (222 km) seen whole under 50 degrees.
        assert!((200_000.0..400_000.0).contains(&last.above), "{last:?}");
        let across = planet_terrain::pack::Coverage { south: -20.0, west: 170.0, north: -10.0, east: -170.0 };
        let fiji = Framing::of(across, &Body::earth()).expect("a regional box");
        assert_eq!(fiji.lon, 180.0, "a box across the antimeridian is framed at its middle");
    }

    fn start(mode: Mode) -> Flight {
        Flight::new(CameraPose { lat: 10.0, lon: 20.0, alt: 500.0, heading: 45.0, pitch: -5.0 }, mode)
    }

    fn fly(mut flight: Flight, controls: Controls, seconds: f64, fps: f64) -> Flight {
        let body = Body::earth();
        let frames = (seconds * fps).round() as usize;
        for _ in 0..frames {
            flight.step(&body, &controls, 1.0 / fps, 1080.0, 0.9, |_, _| 100.0);
        }
        flight
    }

    #[test]
    fn free_flight_ends_at_the_same_place_at_any_frame_rate() {
        let controls = Controls { forward: true, right: true, up: true, ..Controls::default() };
        let (a, b) = (fly(start(Mode::Free), controls, 2.0, 30.0), fly(start(Mode::Free), controls, 2.0, 144.0));
        let body = Body::earth();
        let apart = a.position(&body).distance(b.position(&body));
        let travelled = start(Mode::Free).position(&body).distance(a.position(&body));
        assert!(travelled > 500.0, "it moved: {travelled} m");
        assert!(apart < 1e-3 * travelled, "30 vs 144 fps differ by {apart} m of {travelled} m");
    }

    #[test]
    fn the_orbit_zoom_is_frame_rate_independent() {
        let mut controls = Controls { wheel: 4.0, ..Controls::default() };
        let body = Body::earth();
        let mut runs = Vec::new();
        for fps in [20.0, 75.0, 240.0] {
            let mut flight = start(Mode::Orbit);
            // One burst of wheel, then let it settle for a second.
            flight.step(&body, &controls, 1.0 / fps, 1080.0, 0.9, |_, _| 100.0);
            controls.wheel = 0.0;
            let flight = fly(flight, controls, 1.0, fps);
            controls.wheel = 4.0;
            runs.push(flight.alt);
        }
        // The first step's dt differs, so allow what one frame of approach moves.
        assert!((runs[0] - runs[2]).abs() < 0.05 * (500.0 - 100.0), "{runs:?}");
        assert!(runs[2] < 400.0, "it zoomed toward the ground: {runs:?}");
    }

    #[test]
    fn the_camera_never_goes_below_the_ground() {
        let body = Body::earth();
        let mut flight = start(Mode::Free);
        let controls = Controls { down: true, forward: true, fast: true, ..Controls::default() };
        for k in 0..600 {
            // Rolling ground, higher than the camera's start further on.
            flight.step(&body, &controls, 1.0 / 60.0, 1080.0, 0.9, |lat, lon| {
                300.0 + 400.0 * (lat * 50.0 + lon * 30.0).sin()
            });
            let ground = 300.0 + 400.0 * (flight.lat * 50.0 + flight.lon * 30.0).sin();
            assert!(flight.alt >= ground + CLEARANCE_M - 1e-9, "frame {k}: {} below {}", flight.alt, ground);
        }
    }

    #[test]
    fn dragging_moves_the_ground_under_the_cursor() {
        let body = Body::earth();
        let mut flight = start(Mode::Orbit);
        flight.heading = 0.0;
        let before = flight.lon;
        // Dragging right pulls the ground right: the camera goes west.
        flight.step(&body, &Controls { drag: (100.0, 0.0), ..Controls::default() }, 0.016, 1080.0, 0.9, |_, _| 100.0);
        assert!(flight.lon < before);
        // 100 px at 400 m above the ground with a 0.9 rad field: about 36 m.
        let moved = (before - flight.lon).to_radians() * body.ellipsoid().radii().x * 10f64.to_radians().cos();
        assert!((moved - 35.6).abs() < 2.0, "{moved} m");
    }
}
