//! Scripted camera paths: keyframes in time, interpolated smoothly.
//!
//! The key decision: a path is a pure function of time. Playback at any
//! frame rate samples the same curve, so the same path at 30 and 144 frames
//! per second ends at the same place (the viewer's recordings and motion
//! tests rely on it). Latitude, longitude, heading and pitch follow a
//! Catmull-Rom spline (angles unwrapped so a path across the antimeridian or
//! through north turns the short way); altitude is interpolated in its
//! logarithm, so a descent from orbit to the ground spends its time evenly
//! across orders of magnitude rather than rushing the last kilometre.
//!
//! File shape: `{"keyframes": [{"t": seconds, "lat": deg, "lon": deg,
//! "alt": metres, "heading": deg, "pitch": deg}, ...]}`, times in seconds
//! from 0 to [`MAX_PATH_TIME`] and strictly increasing, altitudes in
//! (0, [`MAX_PATH_ALTITUDE`]] metres.

use serde_json::Value;

/// The latest keyframe time, seconds (about eleven and a half days): a
/// path is played frame by frame, and past this its frame count stops
/// being something a person means (and stops fitting the frame counter).
pub const MAX_PATH_TIME: f64 = 1e6;
/// The highest keyframe altitude, metres above the ellipsoid (as the
/// command line's `--alt`).
pub const MAX_PATH_ALTITUDE: f64 = 1e9;

/// One keyframe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keyframe {
    pub t: f64,
    pub lat: f64,
    pub lon: f64,
    pub alt: f64,
    pub heading: f64,
    pub pitch: f64,
}

/// Where the camera is at some time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    pub lat: f64,
    pub lon: f64,
    pub alt: f64,
    pub heading: f64,
    pub pitch: f64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PathError {
    #[error("not JSON: {0}")]
    Json(String),
    #[error("{place}: {reason}")]
    Field { place: String, reason: String },
}

/// A validated path of at least one keyframe.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraPath {
    keys: Vec<Keyframe>,
}

fn unwrap_towards(previous: f64, angle: f64) -> f64 {
    previous + (angle - previous + 180.0).rem_euclid(360.0) - 180.0
}

fn catmull_rom(p0: f64, p1: f64, p2: f64, p3: f64, s: f64) -> f64 {
    let s2 = s * s;
    let s3 = s2 * s;
    0.5 * (2.0 * p1 + (p2 - p0) * s + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * s2 + (3.0 * p1 - p0 - 3.0 * p2 + p3) * s3)
}

impl CameraPath {
    pub fn new(keys: Vec<Keyframe>) -> Result<CameraPath, PathError> {
        let bad =
            |k: usize, reason: &str| PathError::Field { place: format!("keyframes[{k}]"), reason: reason.to_owned() };
        if keys.is_empty() {
            return Err(PathError::Field { place: "keyframes".into(), reason: "at least one keyframe".into() });
        }
        for (k, key) in keys.iter().enumerate() {
            let finite = [key.t, key.lat, key.lon, key.alt, key.heading, key.pitch].iter().all(|v| v.is_finite());
            if !finite {
                return Err(bad(k, "every field must be a finite number"));
            }
            if !(-90.0..=90.0).contains(&key.lat) || !(-90.0..=90.0).contains(&key.pitch) {
                return Err(bad(k, "lat and pitch must lie in -90..=90"));
            }
            if key.alt <= 0.0 || key.alt > MAX_PATH_ALTITUDE {
                return Err(bad(k, &format!("alt {} m must lie in (0, {MAX_PATH_ALTITUDE:e}] m", key.alt)));
            }
            if !(0.0..=MAX_PATH_TIME).contains(&key.t) {
                return Err(bad(k, &format!("t {:e} s must lie in 0..={MAX_PATH_TIME:e} s", key.t)));
            }
            if k > 0 && key.t <= keys[k - 1].t {
                return Err(bad(
                    k,
                    &format!("times must increase strictly: t {} s is not after {} s", key.t, keys[k - 1].t),
                ));
            }
        }
        // Unwrap longitude and heading so consecutive keys turn the short way.
        let mut keys = keys;
        for k in 1..keys.len() {
            keys[k].lon = unwrap_towards(keys[k - 1].lon, keys[k].lon);
            keys[k].heading = unwrap_towards(keys[k - 1].heading, keys[k].heading);
        }
        Ok(CameraPath { keys })
    }

    pub fn from_json(text: &str) -> Result<CameraPath, PathError> {
        let value: Value = serde_json::from_str(text).map_err(|e| PathError::Json(e.to_string()))?;
        let list = value
            .get("keyframes")
            .and_then(Value::as_array)
            .ok_or_else(|| PathError::Field { place: "path".into(), reason: "'keyframes' must be an array".into() })?;
        let keys = list
            .iter()
            .enumerate()
            .map(|(k, item)| {
                let n = |name: &str| {
                    item.get(name).and_then(Value::as_f64).ok_or_else(|| PathError::Field {
                        place: format!("keyframes[{k}]"),
                        reason: format!("'{name}' must be a number"),
                    })
                };
                Ok(Keyframe {
                    t: n("t")?,
                    lat: n("lat")?,
                    lon: n("lon")?,
                    alt: n("alt")?,
                    heading: n("heading")?,
                    pitch: n("pitch")?,
                })
            })
            .collect::<Result<Vec<_>, PathError>>()?;
        CameraPath::new(keys)
    }

    /// Keyframe `k`, as the path holds it (longitude and heading unwrapped
    /// toward the keyframe before).
    pub fn keyframe(&self, k: usize) -> Keyframe {
        self.keys[k]
    }

    pub fn duration(&self) -> f64 {
        self.keys.last().map_or(0.0, |k| k.t) - self.keys[0].t
    }

    pub fn start(&self) -> f64 {
        self.keys[0].t
    }

    /// The pose at time `t` (clamped to the path's span).
    pub fn pose(&self, t: f64) -> CameraPose {
        let keys = &self.keys;
        let wrap = |p: CameraPose| CameraPose {
            lon: (p.lon + 180.0).rem_euclid(360.0) - 180.0,
            heading: p.heading.rem_euclid(360.0),
            ..p
        };
        let at = |k: &Keyframe| CameraPose { lat: k.lat, lon: k.lon, alt: k.alt, heading: k.heading, pitch: k.pitch };
        if keys.len() == 1 || t <= keys[0].t {
            return wrap(at(&keys[0]));
        }
        let last = keys.len() - 1;
        if t >= keys[last].t {
            return wrap(at(&keys[last]));
        }
        let i = keys.partition_point(|k| k.t <= t) - 1;
        let (k0, k1, k2, k3) = (&keys[i.saturating_sub(1)], &keys[i], &keys[i + 1], &keys[(i + 2).min(last)]);
        let s = (t - k1.t) / (k2.t - k1.t);
        let spline = |f: fn(&Keyframe) -> f64| catmull_rom(f(k0), f(k1), f(k2), f(k3), s);
        wrap(CameraPose {
            lat: spline(|k| k.lat).clamp(-90.0, 90.0),
            lon: spline(|k| k.lon),
            alt: spline(|k| k.alt.ln()).exp(),
            heading: spline(|k| k.heading),
            pitch: spline(|k| k.pitch).clamp(-90.0, 90.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: f64, lat: f64, lon: f64, alt: f64) -> Keyframe {
        Keyframe { t, lat, lon, alt, heading: 0.0, pitch: -90.0 }
    }

    #[test]
    fn the_path_passes_through_its_keyframes() {
        let path =
            CameraPath::new(vec![key(0.0, 10.0, 20.0, 2e7), key(5.0, 20.0, 40.0, 1e4), key(9.0, 28.0, 86.9, 2.0)])
                .unwrap();
        for (t, alt) in [(0.0, 2e7), (5.0, 1e4), (9.0, 2.0)] {
            assert!((path.pose(t).alt / alt - 1.0).abs() < 1e-12, "t {t}");
        }
        assert_eq!(path.duration(), 9.0);
    }

    #[test]
    fn altitude_moves_geometrically() {
        let path = CameraPath::new(vec![key(0.0, 0.0, 0.0, 1e7), key(1.0, 0.0, 0.0, 1e1)]).unwrap();
        // Halfway in time is halfway in orders of magnitude.
        assert!((path.pose(0.5).alt - 1e4).abs() < 1e-6 * 1e4, "{}", path.pose(0.5).alt);
    }

    #[test]
    fn sampling_at_any_frame_rate_lands_on_the_same_curve() {
        let path =
            CameraPath::new(vec![key(0.0, 0.0, 170.0, 5e6), key(3.0, 10.0, -170.0, 1e5), key(7.0, 12.0, -160.0, 10.0)])
                .unwrap();
        // 30 and 144 frames per second share an instant every sixth of a
        // second: there the two playbacks must agree exactly, end included.
        let poses = |fps: f64| -> Vec<(u32, CameraPose)> {
            let frames = (path.duration() * fps).round() as u32;
            (0..=frames)
                .filter(|f| (f * 6) % fps as u32 == 0)
                .map(|f| (f * 6 / fps as u32, path.pose(f64::from(f) / fps)))
                .collect()
        };
        let (slow, fast) = (poses(30.0), poses(144.0));
        assert_eq!(slow.len(), 43);
        assert_eq!(slow, fast);
        // Across the antimeridian the path turns the short way.
        let mid = path.pose(1.5);
        assert!(mid.lon > 170.0 || mid.lon < -170.0, "{mid:?}");
    }

    #[test]
    fn bad_paths_are_refused_with_the_place() {
        let text = r#"{"keyframes": [{"t": 0, "lat": 0, "lon": 0, "alt": 100, "heading": 0, "pitch": -10},
                                     {"t": 0, "lat": 0, "lon": 0, "alt": 100, "heading": 0, "pitch": -10}]}"#;
        assert!(CameraPath::from_json(text).unwrap_err().to_string().contains("keyframes[1]: times must increase"));
        assert!(CameraPath::from_json(r#"{"keyframes": []}"#).is_err());
        assert!(CameraPath::from_json(r#"{"keyframes": [{"t": 0}]}"#).unwrap_err().to_string().contains("'lat'"));
        let below = r#"{"keyframes": [{"t": 0, "lat": 0, "lon": 0, "alt": -5, "heading": 0, "pitch": 0}]}"#;
        assert!(CameraPath::from_json(below).is_err());
    }

    #[test]
    fn keyframe_times_are_bounded_with_the_rule_stated() {
        let path = |t0: f64, t1: f64| CameraPath::new(vec![key(t0, 0.0, 0.0, 1e4), key(t1, 0.0, 0.0, 1e3)]);
        for (t0, t1, expected) in [
            (0.0, 1e300, "keyframes[1]: t 1e300 s must lie in 0..=1e6 s"),
            (-1.0, 5.0, "keyframes[0]: t -1e0 s must lie in 0..=1e6 s"),
            (0.0, 1e6 + 1.0, "keyframes[1]: t 1.000001e6 s must lie in 0..=1e6 s"),
            (3.0, 2.0, "keyframes[1]: times must increase strictly: t 2 s is not after 3 s"),
        ] {
            assert_eq!(path(t0, t1).unwrap_err().to_string(), expected);
        }
        assert_eq!(path(0.0, MAX_PATH_TIME).unwrap().duration(), MAX_PATH_TIME);
        let high = CameraPath::new(vec![key(0.0, 0.0, 0.0, 2e9)]).unwrap_err().to_string();
        assert_eq!(high, "keyframes[0]: alt 2000000000 m must lie in (0, 1e9] m");
    }
}
