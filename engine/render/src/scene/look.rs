//! Look, a scene's fourth part: how the frame is lit and coloured. The
//! body's appearance, the sky's turn, the season the snow follows, the
//! horizon map's shadows, and the push constants they make with the view.
//!
//! The key decision: everything the shaders are told about light and
//! colour is made here from the view and what the other parts decided
//! (whether the ellipsoid shows under the cut, how deep the ground goes,
//! how far the coarsest drawn lattice sags), so a change of look touches
//! one part.

use std::sync::Arc;

use glam::DVec3;
use planet_terrain::abi::{FLAG_ANALYTIC_BODY, FLAG_ATMOSPHERE, FLAG_SEA, FLAG_SEASON, PushConstants};
use planet_terrain::camera::View;
use planet_terrain::geo::body::Body;
use planet_terrain::ground::HeightSource;

use crate::look::Appearance;
use crate::renderer::HorizonInput;
use crate::shadows::{ShadowMode, Shadows};

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Look {
    pub(super) appearance: Appearance,
    /// [`super::TerrainScene::set_sky_turn`].
    pub(super) sky_turn: f64,
    /// [`super::TerrainScene::set_season`].
    pub(super) season: Option<f64>,
    /// The horizon map: cast shadows and ambient occlusion.
    pub(super) shadows: Shadows,
}

/// What the other parts decided that the constants need.
pub(super) struct Drawn {
    /// Some node has nothing to draw: the ellipsoid shows under the cut.
    pub(super) analytic_body: bool,
    /// The deepest elevation the ground can hold (m).
    pub(super) deepest_m: f64,
    /// The shallowest depth the cut drew.
    pub(super) coarsest_depth: Option<u8>,
    /// The near plane (m).
    pub(super) near_m: f64,
}

impl Look {
    pub(super) fn new(body: &Body, shadows: ShadowMode) -> Look {
        Look { appearance: Appearance::for_body(body), sky_turn: 0.0, season: None, shadows: Shadows::new(shadows) }
    }

    /// Brings the horizon map up to `view` and `sun` over `ground` (waiting
    /// for a rebuild when `wait`).
    pub(super) fn update_shadows(&mut self, ground: &Arc<dyn HeightSource>, view: &View, sun: DVec3, wait: bool) {
        self.shadows.update(ground, view.position, sun, wait);
    }

    /// The horizon map's basis and any texels not yet sent, for the frame.
    pub(super) fn horizon(&mut self, view: &View) -> Option<(planet_terrain::abi::HorizonBasis, Option<Vec<u8>>)> {
        self.shadows.frame_input(view.position)
    }

    /// The push constants of a view: the camera-relative clip rows (from
    /// the f64 camera, narrowed last), the sun, and the body.
    pub(super) fn constants(&self, body: &Body, view: &View, sun: DVec3, drawn: &Drawn) -> PushConstants {
        let near = drawn.near_m;
        let focal = 1.0 / (0.5 * view.vertical_fov).tan();
        // The lens shift adds to clip x a multiple of clip w (the forward
        // distance): NDC x moves by the shift everywhere.
        let x = view.right() * (focal / view.aspect()) + view.forward() * view.axis_shift_ndc();
        let y = -view.up() * focal;
        let w = view.forward();
        let radii = body.ellipsoid().radii();
        let scaled = view.position / radii;
        let c_term = scaled.length_squared() - 1.0;
        // The deepest ground a source can hold, lowered by how far the
        // coarsest drawn lattice's flat cells sag inside the surface through
        // their vertices, as a scale of the radii: a ray that meets the body
        // below it must meet drawn terrain. (Six roots alone sag 9 km: a
        // pixel at the limb from orbit is their resolution, not a hole; a
        // ray down through a hole near the camera meets the floor anyway.)
        let mean = (radii.x + radii.y + radii.z) / 3.0;
        let sag = drawn.coarsest_depth.map_or(0.0, |depth| planet_terrain::geo::lattice::lattice_sag_m(body, depth));
        let floor_scale = 1.0 + (drawn.deepest_m - sag) / mean;
        let floor_c_term = (view.position / (radii * floor_scale)).length_squared() - 1.0;
        let sun = sun.normalize();
        let mut flags = self.appearance.palette << 8 | self.shadows.flags();
        if drawn.analytic_body {
            flags |= FLAG_ANALYTIC_BODY;
        }
        if planet_terrain::ground::water::has_sea(body) {
            flags |= FLAG_SEA;
        }
        if let Some(year_fraction) = self.season {
            flags |= FLAG_SEASON | planet_terrain::abi::season_bits(year_fraction);
        }
        let (scale_height, density) = self.appearance.atmosphere.unwrap_or((8000.0, 0.0));
        if self.appearance.atmosphere.is_some() {
            flags |= FLAG_ATMOSPHERE;
        }
        let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
        PushConstants {
            x_row: f(x, near),
            y_row: f(y, floor_scale),
            w_row: f(w, self.sky_turn),
            sun: f(sun, 0.12),
            camera: f(view.position, floor_c_term),
            radii: f(radii, c_term),
            inverse_radii: f(DVec3::ONE / radii, (radii.x + radii.y + radii.z) / 3.0),
            flags,
            atmosphere_height: scale_height,
            atmosphere_density: density,
            exposure: self.appearance.exposure,
        }
    }
}

/// The horizon input of a frame from [`Look::horizon`]'s value.
pub(super) fn horizon_input(
    shading: &Option<(planet_terrain::abi::HorizonBasis, Option<Vec<u8>>)>,
) -> Option<HorizonInput<'_>> {
    shading.as_ref().map(|(basis, texels)| HorizonInput { basis: *basis, texels: texels.as_deref() })
}
