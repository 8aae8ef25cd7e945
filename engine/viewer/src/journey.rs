//! Paths across bodies: a camera path whose keyframes may name the body
//! their latitude, longitude and altitude are on (`"body": "moon"`), and
//! the transfer between two bodies' keyframes through the inertial frame.
//!
//! The key decision: a run of keyframes on one body is that body's
//! [`CameraPath`], played as before (pure in time, altitude geometric);
//! between the last keyframe on one body and the first on the next, the
//! camera moves in the inertial frame of `planet_geo::system` along the
//! straight line between the two keyframes' points, each following its
//! body as it moves and turns, its height over the body left growing
//! geometrically for the first half and its height over the body arrived
//! at shrinking geometrically for the second (so both ends look like a
//! climb and a descent, not a jump), turning by a slerp between the two
//! keyframes' orientations. The session then expresses the camera on the
//! body it is nearest ([`pose_on_body`]).

use glam::{DQuat, DVec3};
use planet_terrain::camera::{CameraPath, CameraPose, Keyframe, View};
use planet_terrain::geo::body::{Body, Geodetic, east_north_up};
use planet_terrain::geo::system::Placement;
use serde_json::Value;

/// A run of keyframes on one body.
#[derive(Clone, Debug)]
struct Leg {
    body: Body,
    path: CameraPath,
}

/// Where a journey puts the camera at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop<'a> {
    /// On a keyframe's body, as its path says.
    On { body: &'a Body, pose: CameraPose },
    /// Between two bodies: the camera in the inertial frame.
    Between { position: DVec3, orientation: DQuat },
}

/// A camera path whose keyframes may name their body.
#[derive(Clone, Debug)]
pub struct Journey {
    legs: Vec<Leg>,
}

impl Journey {
    /// Reads a path file: `CameraPath`'s shape, each keyframe optionally
    /// with `"body"` (a preset body's name; `default_body` when left out).
    pub fn from_json(text: &str, default_body: &Body) -> anyhow::Result<Journey> {
        // The whole path's fields and times are checked as one path first,
        // so an error names its keyframe's place in the file.
        let whole = CameraPath::from_json(text)?;
        let value: Value = serde_json::from_str(text)?;
        let items = value["keyframes"].as_array().map_or(&[][..], Vec::as_slice);
        let mut legs: Vec<(Body, Vec<Keyframe>)> = Vec::new();
        for (k, item) in items.iter().enumerate() {
            let body = match item.get("body") {
                None => default_body.clone(),
                Some(Value::String(name)) => {
                    Body::named(name).map_err(|e| anyhow::anyhow!("keyframes[{k}]: 'body': {e}"))?
                }
                Some(other) => anyhow::bail!("keyframes[{k}]: 'body' must be a body's name, not {other}"),
            };
            let key = whole.keyframe(k);
            match legs.last_mut() {
                Some((last, keys)) if last.name() == body.name() => keys.push(key),
                _ => legs.push((body, vec![key])),
            }
        }
        let legs = legs
            .into_iter()
            .map(|(body, keys)| Ok(Leg { body, path: CameraPath::new(keys)? }))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Journey { legs })
    }

    /// A journey on one body: `path` as it is.
    pub fn on_one_body(body: &Body, path: CameraPath) -> Journey {
        Journey { legs: vec![Leg { body: body.clone(), path }] }
    }

    /// From a pose on one body to a pose on another in `seconds` (a "Go
    /// to" another body): a transfer between two keyframes.
    pub fn transfer(from: (&Body, CameraPose), to: (&Body, CameraPose), seconds: f64) -> Journey {
        let key = |t: f64, p: CameraPose| Keyframe {
            t,
            lat: p.lat,
            lon: p.lon,
            // A keyframe's altitude is above the ellipsoid, positive and
            // within reach (a camera far out, or on a planet seen from
            // another, may be past it).
            alt: p.alt.clamp(1.0, planet_terrain::camera::path::MAX_PATH_ALTITUDE),
            heading: p.heading,
            pitch: p.pitch,
        };
        let leg = |body: &Body, t: f64, pose: CameraPose| Leg {
            body: body.clone(),
            path: CameraPath::new(vec![key(t, pose)]).expect("a pose is a valid keyframe"),
        };
        Journey { legs: vec![leg(from.0, 0.0, from.1), leg(to.0, seconds.max(f64::EPSILON), to.1)] }
    }

    pub fn start(&self) -> f64 {
        self.legs[0].path.start()
    }

    pub fn duration(&self) -> f64 {
        let last = &self.legs[self.legs.len() - 1].path;
        last.start() + last.duration() - self.start()
    }

    /// The body and pose the journey starts at.
    pub fn first(&self) -> (&Body, CameraPose) {
        (&self.legs[0].body, self.legs[0].path.pose(self.start()))
    }

    /// The bodies its keyframes name, in order, each once.
    pub fn bodies(&self) -> Vec<&Body> {
        let mut bodies: Vec<&Body> = Vec::new();
        for leg in &self.legs {
            if !bodies.iter().any(|b| b.name() == leg.body.name()) {
                bodies.push(&leg.body);
            }
        }
        bodies
    }

    /// Where the camera is at path time `t`; `place` says where a body
    /// stands and how it is turned at a path time (needed between bodies).
    pub fn at(&self, t: f64, place: &dyn Fn(&Body, f64) -> Placement) -> Stop<'_> {
        let t = t.clamp(self.start(), self.start() + self.duration());
        let end = |leg: &Leg| leg.path.start() + leg.path.duration();
        for (k, leg) in self.legs.iter().enumerate() {
            if t <= end(leg) {
                return Stop::On { body: &leg.body, pose: leg.path.pose(t) };
            }
            let Some(next) = self.legs.get(k + 1) else { break };
            if t < next.path.start() {
                let s = (t - end(leg)) / (next.path.start() - end(leg));
                let from = (&leg.body, leg.path.pose(end(leg)), place(&leg.body, t));
                let to = (&next.body, next.path.pose(next.path.start()), place(&next.body, t));
                let (position, orientation) = transfer(from, to, s);
                return Stop::Between { position, orientation };
            }
        }
        let last = &self.legs[self.legs.len() - 1];
        Stop::On { body: &last.body, pose: last.path.pose(t) }
    }
}

/// A pose on a body, turned `roll_deg` about its axis, in the inertial
/// frame: the camera's point and its orientation (camera to inertial axes).
pub fn inertial_camera(body: &Body, pose: CameraPose, roll_deg: f64, placement: &Placement) -> (DVec3, DQuat) {
    let at = Geodetic::from_degrees(pose.lat, pose.lon, pose.alt);
    let view = View::looking_from(body, at, pose.heading, pose.pitch, 1.0, (1, 1));
    let rolled = View { orientation: view.orientation * DQuat::from_rotation_z(roll_deg.to_radians()), ..view };
    let placed = rolled.from_placed_body(placement);
    (placed.position, placed.orientation)
}

/// A camera in the inertial frame as a pose on `body` (placed by
/// `placement`): its geodetic point, its heading and pitch against the
/// local east, north and up, and the roll (degrees) that turns the pose's
/// view to the camera's, which a pose has none of.
pub fn pose_on_body(body: &Body, placement: &Placement, position: DVec3, orientation: DQuat) -> (CameraPose, f64) {
    let g = body.ellipsoid().point_to_geodetic(placement.point_to_body(position));
    let camera = placement.to_body * orientation;
    let forward = camera * DVec3::NEG_Z;
    let enu = east_north_up(g);
    let (east, north, up) = (forward.dot(enu.col(0)), forward.dot(enu.col(1)), forward.dot(enu.col(2)));
    let pose = CameraPose {
        lat: g.latitude.to_degrees(),
        lon: g.longitude.to_degrees(),
        alt: g.height,
        heading: east.atan2(north).to_degrees().rem_euclid(360.0),
        pitch: up.clamp(-1.0, 1.0).asin().to_degrees(),
    };
    // The camera's up in the unrolled view's axes: its angle from +Y.
    let unrolled = View::looking_from(body, g, pose.heading, pose.pitch, 1.0, (1, 1)).orientation;
    let up_seen = unrolled.inverse() * (camera * DVec3::Y);
    (pose, (-up_seen.x).atan2(up_seen.y).to_degrees())
}

/// The camera `s` (0 to 1) of the way from a pose on one body to a pose on
/// another (see the module documentation).
fn transfer(from: (&Body, CameraPose, Placement), to: (&Body, CameraPose, Placement), s: f64) -> (DVec3, DQuat) {
    let (a, qa) = inertial_camera(from.0, from.1, 0.0, &from.2);
    let (b, qb) = inertial_camera(to.0, to.1, 0.0, &to.2);
    let d = (b - a).length();
    let along = (b - a) / d.max(f64::MIN_POSITIVE);
    // Heights over each end's ground (at least a metre): the scale each
    // half's geometric climb or descent starts or ends at.
    let (ha, hb) = (from.1.alt.max(1.0), to.1.alt.max(1.0));
    let half = 0.5 * d;
    let position = if s <= 0.5 {
        a + along * ((ha + half).powf(2.0 * s) * ha.powf(1.0 - 2.0 * s) - ha)
    } else {
        let left = (hb + half).powf(2.0 * (1.0 - s)) * hb.powf(2.0 * s - 1.0) - hb;
        b - along * left
    };
    let eased = s * s * (3.0 - 2.0 * s);
    (position, qa.slerp(qb, eased).normalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::camera::Instant;
    use planet_terrain::geo::system::placement;

    const EARTH_TO_MOON: &str = r#"{"keyframes": [
        {"t": 0, "lat": 0, "lon": 0, "alt": 400000, "heading": 0, "pitch": -90},
        {"t": 10, "body": "moon", "lat": 0, "lon": 0, "alt": 100000, "heading": 0, "pitch": -60},
        {"t": 14, "body": "moon", "lat": 1, "lon": 1, "alt": 2, "heading": 90, "pitch": -5}
    ]}"#;

    fn place(at: Instant) -> impl Fn(&Body, f64) -> Placement {
        move |body, t| placement(body, at.plus_seconds(t)).expect("a preset body")
    }

    #[test]
    fn keyframes_name_their_body_and_the_rest_are_the_default_ones() {
        let journey = Journey::from_json(EARTH_TO_MOON, &Body::earth()).expect("a journey");
        let names: Vec<&str> = journey.bodies().iter().map(|b| b.name()).collect();
        assert_eq!(names, ["earth", "moon"]);
        assert_eq!((journey.start(), journey.duration()), (0.0, 14.0));
        let place = place(Instant::from_civil(2026, 3, 20, 12, 0, 0.0));
        match journey.at(14.0, &place) {
            Stop::On { body, pose } => assert!(body.name() == "moon" && (pose.alt - 2.0).abs() < 1e-9, "{pose:?}"),
            other => panic!("{other:?}"),
        }
        for (bad, says) in [
            (
                r#"{"keyframes": [{"t": 0, "body": "pluto", "lat": 0, "lon": 0, "alt": 1, "heading": 0, "pitch": 0}]}"#,
                "keyframes[0]: 'body'",
            ),
            (
                r#"{"keyframes": [{"t": 0, "body": 3, "lat": 0, "lon": 0, "alt": 1, "heading": 0, "pitch": 0}]}"#,
                "must be a body's name",
            ),
            (
                r#"{"keyframes": [{"t": 0, "body": "moon", "lat": 0, "lon": 0, "alt": -1, "heading": 0, "pitch": 0}]}"#,
                "keyframes[0]",
            ),
        ] {
            let error = format!("{:#}", Journey::from_json(bad, &Body::earth()).expect_err(bad));
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn a_transfer_leaves_one_body_and_arrives_at_the_other_without_a_jump() {
        let journey = Journey::from_json(EARTH_TO_MOON, &Body::earth()).expect("a journey");
        let place = place(Instant::from_civil(2026, 3, 20, 12, 0, 0.0));
        let inertial = |t: f64| match journey.at(t, &place) {
            Stop::On { body, pose } => inertial_camera(body, pose, 0.0, &place(body, t)).0,
            Stop::Between { position, .. } => position,
        };
        // Continuous at both ends and at the middle, and never faster than
        // the straight line's share per step would allow.
        let steps: Vec<DVec3> = (0..=1000).map(|k| inertial(f64::from(k) * 0.014)).collect();
        let total: f64 = steps.windows(2).map(|w| (w[1] - w[0]).length()).sum();
        let largest = steps.windows(2).map(|w| (w[1] - w[0]).length()).fold(0.0, f64::max);
        assert!(largest < 0.05 * total, "a step of {largest} m of {total} m");
        // Early on the height over the Earth grows geometrically: a tenth of
        // the way it is within a few times the start, not tens of thousands
        // of kilometres.
        let early = inertial(10.0 * 0.05).length() - 6_371_000.0;
        assert!(early < 4_000_000.0, "{early}");
        // Halfway the camera is far from both.
        let moon_at_5 = place(&Body::moon(), 5.0).centre;
        let middle = inertial(5.0);
        assert!(middle.length() > 1e8 && (middle - moon_at_5).length() > 1e8, "{middle}");
    }

    #[test]
    fn a_go_to_another_body_starts_where_the_camera_is_and_ends_at_the_place() {
        let (earth, moon) = (Body::earth(), Body::moon());
        let from = CameraPose { lat: 10.0, lon: 20.0, alt: -30.0, heading: 0.0, pitch: -90.0 };
        let to = CameraPose { lat: 0.0, lon: 0.0, alt: 4_000_000.0, heading: 0.0, pitch: -90.0 };
        let journey = Journey::transfer((&earth, from), (&moon, to), 8.0);
        assert_eq!((journey.start(), journey.duration()), (0.0, 8.0));
        let place = place(Instant::from_civil(2026, 3, 20, 12, 0, 0.0));
        // A camera below the ellipsoid (the Dead Sea) leaves from a metre above it.
        assert!(
            matches!(journey.at(0.0, &place), Stop::On { body, pose } if body.name() == "earth" && pose.alt == 1.0)
        );
        assert!(matches!(journey.at(4.0, &place), Stop::Between { .. }));
        assert!(matches!(journey.at(8.0, &place), Stop::On { body, pose } if body.name() == "moon" && pose == to));
    }

    #[test]
    fn a_pose_goes_to_the_inertial_frame_and_back() {
        let moon = Body::moon();
        let placed = placement(&moon, Instant::from_civil(2026, 7, 1, 0, 0, 0.0)).expect("placed");
        let pose = CameraPose { lat: 12.5, lon: -40.25, alt: 2.0, heading: 75.0, pitch: -12.0 };
        let (position, orientation) = inertial_camera(&moon, pose, 30.0, &placed);
        let (back, roll) = pose_on_body(&moon, &placed, position, orientation);
        assert!((roll - 30.0).abs() < 1e-7, "roll {roll}");
        for (a, b, what) in [
            (pose.lat, back.lat, "lat"),
            (pose.lon, back.lon, "lon"),
            (pose.heading, back.heading, "heading"),
            (pose.pitch, back.pitch, "pitch"),
        ] {
            assert!((a - b).abs() < 1e-7, "{what}: {a} against {b}");
        }
        // Two metres over the Moon, 384,000 km from the origin: f64 keeps it.
        assert!((back.alt - 2.0).abs() < 1e-6, "{}", back.alt);
    }
}
