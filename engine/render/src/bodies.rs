//! Rigid bodies to draw over the terrain (the viewer's physics bodies).
//!
//! The key decision: a body reaches the renderer already camera-relative.
//! The caller holds body-fixed positions in f64 and subtracts the camera
//! there; only the difference, metres from the eye, becomes f32 (the
//! precision rule: no planet-scale quantity in f32). The renderer adds the
//! frame's clip rows and sun and draws each body with one push-constant
//! block ([`planet_terrain::abi::BodyConstants`]) and no buffers.

use planet_terrain::abi::{
    BODY_BOX, BODY_BOX_VERTICES, BODY_SPHERE, BODY_SPHERE_VERTICES, BodyConstants, PushConstants,
};

/// A body's shape as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyShape {
    /// A sphere of radius `|axes[0]|`.
    Sphere,
    /// A box spanning each axis both ways from the centre.
    Box,
}

/// One body of a frame, camera-relative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyDraw {
    /// Centre minus camera, body-fixed metres (formed in f64).
    pub centre_from_camera: [f32; 3],
    /// The body's axes (body-fixed) times its half-sizes, metres.
    pub axes: [[f32; 3]; 3],
    pub shape: BodyShape,
    /// Linear RGB.
    pub colour: [f32; 3],
}

impl BodyDraw {
    /// The push constants of this body in a frame drawn with `frame`.
    pub(crate) fn constants(&self, frame: &PushConstants) -> BodyConstants {
        let [cx, cy, cz] = self.centre_from_camera;
        let shape = match self.shape {
            BodyShape::Sphere => BODY_SPHERE,
            BodyShape::Box => BODY_BOX,
        };
        let axis = |k: usize| {
            let [x, y, z] = self.axes[k];
            [x, y, z, frame.sun[k]]
        };
        let [r, g, b] = self.colour;
        BodyConstants {
            x_row: frame.x_row,
            y_row: frame.y_row,
            w_row: frame.w_row,
            centre: [cx, cy, cz, shape as f32],
            axis_x: axis(0),
            axis_y: axis(1),
            axis_z: axis(2),
            colour: [r, g, b, frame.sun[3]],
        }
    }

    /// Vertices of this body's draw.
    pub(crate) fn vertices(&self) -> u32 {
        match self.shape {
            BodyShape::Sphere => BODY_SPHERE_VERTICES,
            BodyShape::Box => BODY_BOX_VERTICES,
        }
    }
}
