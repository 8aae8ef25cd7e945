//! The second view (`--view2`): a fixed camera drawn in the same frame as
//! the main one, beside it in pictures written to disk and as an inset in
//! a window.
//!
//! The key decision: the second view is a camera and a place on the
//! target, nothing more. Its cut, its share of the slots and its error are
//! the scene's (`planet_render::scene::SecondView`): residency holds the
//! union of both cuts within the one slot budget, so a small `--slots`
//! makes both views draw ancestors, never holes. Its near plane follows
//! its own height above the ground, read once per edit of the ground.

use planet_render::PixelRect;
use planet_render::scene::SecondView;
use planet_terrain::camera::View;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::HeightSource;
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};

use crate::session::{GROUND_SPACING_M, near_plane};

/// Where the second view is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Beside the main view, each half of the target (pictures to disk:
    /// the target is twice `--size` wide).
    Beside,
    /// Over the main view's lower right corner, a third of its size (a
    /// window).
    Inset,
}

/// `--view2`: where the second camera stands and looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecondCamera {
    /// Degrees.
    pub lat: f64,
    pub lon: f64,
    /// Metres above the ellipsoid.
    pub alt: f64,
    /// Degrees clockwise from north.
    pub heading: f64,
    /// Degrees above the horizontal.
    pub pitch: f64,
}

impl SecondCamera {
    /// Parses `LAT,LON,ALT,HEADING,PITCH`, each by the rule of its own flag.
    pub fn parse(text: &str) -> Result<SecondCamera, String> {
        use planet_cli::args;
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let [lat, lon, alt, heading, pitch] = parts[..] else {
            return Err(format!("'{text}': expected LAT,LON,ALT,HEADING,PITCH (five numbers)"));
        };
        let named =
            |what: &str, result: Result<f64, String>| result.map_err(|e| format!("the {what} of '{text}': {e}"));
        Ok(SecondCamera {
            lat: named("latitude", args::latitude(lat))?,
            lon: named("longitude", args::longitude(lon))?,
            alt: named("altitude", args::altitude(alt))?,
            heading: named("heading", args::heading(heading))?,
            pitch: named("pitch", args::pitch(pitch))?,
        })
    }
}

/// The second view of a session: its camera, error target, layout, and
/// the height above the ground its near plane was set from.
#[derive(Clone, Debug)]
pub struct SecondViewer {
    pub camera: SecondCamera,
    /// The body its camera stands on (the session's starting body): while
    /// the camera of a session of several is at another, it is not drawn.
    pub body: String,
    pub target_error_px: f64,
    pub layout: Layout,
    /// The strip of a window the panels leave free (left and right edges,
    /// pixels), where an inset goes; `None`: the whole width.
    pub free_strip_px: Option<(f64, f64)>,
    /// (the scene's edit count, the camera's height above the ground).
    above_ground: Option<(usize, f64)>,
}

impl SecondViewer {
    pub fn new(camera: SecondCamera, body: &Body, target_error_px: f64, layout: Layout) -> SecondViewer {
        let body = body.name().to_string();
        SecondViewer { camera, body, target_error_px, layout, free_strip_px: None, above_ground: None }
    }

    /// The target's size for main views of `main_size`: twice as wide
    /// beside, the same as an inset.
    pub fn target_size(layout: Layout, main_size: (u32, u32)) -> (u32, u32) {
        match layout {
            Layout::Beside => (main_size.0.saturating_mul(2), main_size.1),
            Layout::Inset => main_size,
        }
    }

    /// Where each view is drawn on a target of `size`: the main view's area
    /// (`None`: all of it) and the second view's.
    pub fn areas(&self, size: (u32, u32)) -> (Option<PixelRect>, PixelRect) {
        let (w, h) = size;
        match self.layout {
            Layout::Beside => {
                let half = (w / 2).max(1);
                let main = PixelRect { x: 0, y: 0, width: half, height: h };
                (Some(main), PixelRect { x: half, y: 0, width: (w - half).max(1), height: h })
            }
            Layout::Inset => {
                // In the free strip's lower right corner, a third of its width.
                let (left, right) = self.free_strip_px.map_or((0, w), |(l, r)| {
                    let right = (r.max(0.0) as u32).min(w);
                    ((l.max(0.0) as u32).min(right.saturating_sub(1)), right.max(1))
                });
                let (iw, ih) = (((right - left) / 3).max(1), (h / 3).max(1));
                let margin = (w.min(h) / 40).min(right - left - iw).min(h - ih);
                (None, PixelRect { x: right - iw - margin, y: h - ih - margin, width: iw, height: ih })
            }
        }
    }

    /// The main view's viewport on a target of `size`.
    pub fn main_size(&self, size: (u32, u32)) -> (u32, u32) {
        self.areas(size).0.map_or(size, |a| (a.width, a.height))
    }

    /// The second view of a frame on a target of `size`, its near plane
    /// from its height above `source`'s ground (edit `edits`).
    pub fn request(
        &mut self,
        body: &Body,
        source: Option<&dyn HeightSource>,
        edits: usize,
        vertical_fov: f64,
        size: (u32, u32),
    ) -> SecondView {
        let c = self.camera;
        let area = self.areas(size).1;
        let at = Geodetic::from_degrees(c.lat, c.lon, c.alt);
        let view = View::looking_from(body, at, c.heading, c.pitch, vertical_fov, (area.width, area.height));
        let above_ground = match self.above_ground {
            Some((seen, above)) if seen == edits => above,
            _ => {
                let ground = source.map_or(0.0, |s| {
                    let depth = depth_for_spacing(s, GROUND_SPACING_M);
                    GroundReader::new(s, depth).top(Geodetic { height: 0.0, ..at }).unwrap_or(0.0)
                });
                let above = c.alt - ground;
                self.above_ground = Some((edits, above));
                above
            }
        };
        SecondView { view, target_error_px: self.target_error_px, near_m: near_plane(above_ground), area }
    }

    /// The second camera's height above the ground, once read.
    pub fn above_ground_m(&self) -> Option<f64> {
        self.above_ground.map(|(_, above)| above)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_camera_is_five_numbers_each_checked_as_its_flag() {
        let c = SecondCamera::parse("46.5, 7.9,4000,-45,-20").expect("five numbers");
        assert_eq!((c.lat, c.lon, c.alt, c.heading, c.pitch), (46.5, 7.9, 4000.0, -45.0, -20.0));
        for (bad, says) in [
            ("46.5,7.9,4000,0", "five numbers"),
            ("95,7.9,4000,0,0", "the latitude"),
            ("46.5,7.9,NaN,0,0", "the altitude"),
            ("46.5,7.9,4000,0,-91", "the pitch"),
            ("46.5,7.9,4000,0,0,1", "five numbers"),
        ] {
            let error = SecondCamera::parse(bad).expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn beside_halves_the_target_and_an_inset_sits_in_the_corner() {
        let camera = SecondCamera::parse("0,0,1000,0,0").expect("a camera");
        let beside = SecondViewer::new(camera, &Body::earth(), 2.0, Layout::Beside);
        let size = SecondViewer::target_size(Layout::Beside, (320, 240));
        assert_eq!(size, (640, 240));
        let (main, second) = beside.areas(size);
        assert_eq!(main, Some(PixelRect { x: 0, y: 0, width: 320, height: 240 }));
        assert_eq!(second, PixelRect { x: 320, y: 0, width: 320, height: 240 });
        assert_eq!(beside.main_size(size), (320, 240));
        let inset = SecondViewer::new(camera, &Body::earth(), 2.0, Layout::Inset);
        let (main, second) = inset.areas((1280, 720));
        assert_eq!(main, None);
        assert_eq!((second.width, second.height), (426, 240));
        assert!(second.fits((1280, 720)) && second.x + second.width < 1280 && second.y + second.height < 720);
        // However small the window, the inset stays on it.
        for size in [(1, 1), (2, 3), (7, 5)] {
            assert!(inset.areas(size).1.fits(size), "{size:?}");
        }
        // Beside the panels, in the strip they leave free.
        let mut between = inset.clone();
        between.free_strip_px = Some((200.0, 900.0));
        let (_, second) = between.areas((1280, 720));
        assert!(second.x >= 200 && second.x + second.width <= 900 && second.width == 233, "{second:?}");
        for strip in [(-5.0, 3000.0), (700.0, 650.0), (1279.5, 1280.0)] {
            between.free_strip_px = Some(strip);
            assert!(between.areas((1280, 720)).1.fits((1280, 720)), "{strip:?}");
        }
    }
}
