//! The camera, in the body-fixed frame, and the crossing into it from an
//! observer's (inertial) frame.
//!
//! Terrain lives in the body-fixed frame: the one the elevations were baked
//! in, with the ellipsoid at the origin, +Z through the north pole and +X
//! through (0 N, 0 E). A viewer usually thinks in an inertial frame in which
//! the body turns. The crossing is plain host math kept here, with its three
//! silent conventions made explicit and tested: where longitude 0 lies at
//! time zero, which way the body turns (prograde: east, counter-clockwise
//! seen from above the north pole), and how a camera's heading and pitch
//! are measured (heading clockwise from north, pitch up from the local
//! horizontal, both in the geodetic east-north-up frame).

use glam::{DMat3, DQuat, DVec3};

use planet_geo::body::{Body, Geodetic, east_north_up};
use planet_geo::rotation::BodyRotation;

/// A camera: position and orientation in body-fixed axes (f64), vertical
/// field of view, viewport in pixels. The camera looks along its local -Z
/// with +Y up (the usual graphics convention).
///
/// The view axis (what the camera looks at) crosses the viewport
/// `axis_offset_px` pixels right of its centre: a lens shift, not a turn,
/// so a window with panels on its sides centres the view in the strip
/// between them. Projection, frustum, pixel rays and the GPU's clip rows
/// all take it from here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub position: DVec3,
    /// Camera-to-body-fixed rotation.
    pub orientation: DQuat,
    pub vertical_fov: f64,
    pub viewport: (u32, u32),
    /// Pixels from the viewport's centre to where the view axis meets it,
    /// positive to the right (0: a centred view).
    pub axis_offset_px: f64,
}

impl View {
    /// A camera at a geodetic position, looking along `heading` (degrees
    /// clockwise from north) tilted by `pitch` (degrees above the local
    /// horizontal; -90 looks straight down).
    pub fn looking_from(
        body: &Body,
        at: Geodetic,
        heading_deg: f64,
        pitch_deg: f64,
        vertical_fov: f64,
        viewport: (u32, u32),
    ) -> View {
        let enu = east_north_up(at);
        let (heading, pitch) = (heading_deg.to_radians(), pitch_deg.to_radians());
        let horizontal = enu.col(0) * heading.sin() + enu.col(1) * heading.cos();
        let forward = horizontal * pitch.cos() + enu.col(2) * pitch.sin();
        // Up is the local up tilted with the pitch; looking straight down,
        // it becomes the heading direction.
        let up = -horizontal * pitch.sin() + enu.col(2) * pitch.cos();
        let right = forward.cross(up);
        let orientation = DQuat::from_mat3(&DMat3::from_cols(right, up, -forward)).normalize();
        View {
            position: body.ellipsoid().geodetic_to_point(at),
            orientation,
            vertical_fov,
            viewport,
            axis_offset_px: 0.0,
        }
    }

    /// The same view with its axis `offset_px` right of the viewport centre.
    pub fn with_axis_offset(self, offset_px: f64) -> View {
        View { axis_offset_px: offset_px, ..self }
    }

    /// The lens shift in normalised device coordinates (x from -1 to 1).
    pub fn axis_shift_ndc(&self) -> f64 {
        2.0 * self.axis_offset_px / f64::from(self.viewport.0.max(1))
    }

    /// The pixel the view axis passes through (from the top left).
    pub fn axis_pixel(&self) -> (f64, f64) {
        (0.5 * f64::from(self.viewport.0) + self.axis_offset_px, 0.5 * f64::from(self.viewport.1))
    }

    /// The direction (body-fixed, not normalised, forward component 1) of
    /// the ray through the centre of pixel `(x, y)` from the top left.
    pub fn pixel_ray(&self, x: f64, y: f64) -> DVec3 {
        let (w, h) = (f64::from(self.viewport.0), f64::from(self.viewport.1));
        let ndc = (2.0 * (x + 0.5) / w - 1.0 - self.axis_shift_ndc(), 1.0 - 2.0 * (y + 0.5) / h);
        let tan = (0.5 * self.vertical_fov).tan();
        self.forward() + self.right() * (ndc.0 * tan * self.aspect()) + self.up() * (ndc.1 * tan)
    }

    pub fn forward(&self) -> DVec3 {
        self.orientation * DVec3::NEG_Z
    }

    pub fn up(&self) -> DVec3 {
        self.orientation * DVec3::Y
    }

    pub fn right(&self) -> DVec3 {
        self.orientation * DVec3::X
    }

    /// Pixels per radian at the viewport centre.
    pub fn pixels_per_radian(&self) -> f64 {
        f64::from(self.viewport.1) / (2.0 * (0.5 * self.vertical_fov).tan())
    }

    pub fn aspect(&self) -> f64 {
        f64::from(self.viewport.0) / f64::from(self.viewport.1.max(1))
    }

    /// Where a body-fixed point lands in the viewport (pixels from the top
    /// left), or `None` behind the camera.
    pub fn project(&self, point: DVec3) -> Option<(f64, f64)> {
        let local = self.orientation.inverse() * (point - self.position);
        if local.z >= 0.0 {
            return None;
        }
        let f = 1.0 / (0.5 * self.vertical_fov).tan();
        let (x, y) = (f * local.x / -local.z / self.aspect() + self.axis_shift_ndc(), f * local.y / -local.z);
        let (w, h) = (f64::from(self.viewport.0), f64::from(self.viewport.1));
        Some(((x + 1.0) * 0.5 * w, (1.0 - y) * 0.5 * h))
    }

    /// The side planes of the view frustum (normals pointing inwards, through
    /// the camera), plus the near plane at `near` metres. Infinite far.
    pub fn frustum(&self, near: f64) -> [Plane; 5] {
        let (f, r, u) = (self.forward(), self.right(), self.up());
        let ty = (0.5 * self.vertical_fov).tan();
        let tx = ty * self.aspect();
        // The viewport's edges lie at NDC x = +-1, so at 1 - shift and
        // -1 - shift of the axis.
        let shift = self.axis_shift_ndc();
        let side = |edge: DVec3, along: DVec3| Plane::through(self.position, along.cross(edge).normalize());
        [
            side(f + r * (tx * (1.0 - shift)), u),  // right
            side(f - r * (tx * (1.0 + shift)), -u), // left
            side(f + u * ty, -r),                   // top
            side(f - u * ty, r),                    // bottom
            Plane::through(self.position + f * near, f),
        ]
    }
}

/// A plane `normal . x + offset = 0`, normal pointing to the inside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    pub normal: DVec3,
    pub offset: f64,
}

impl Plane {
    pub fn through(point: DVec3, normal: DVec3) -> Plane {
        Plane { normal, offset: -normal.dot(point) }
    }

    pub fn signed_distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) + self.offset
    }
}

impl View {
    /// A camera placed in the inertial frame, expressed in body-fixed axes.
    pub fn in_body_axes(
        rotation: &BodyRotation,
        time: f64,
        inertial_position: DVec3,
        inertial_orientation: DQuat,
        vertical_fov: f64,
        viewport: (u32, u32),
    ) -> View {
        let to_body = rotation.body_to_inertial(time).inverse();
        View {
            position: to_body * inertial_position,
            orientation: (to_body * inertial_orientation).normalize(),
            vertical_fov,
            viewport,
            axis_offset_px: 0.0,
        }
    }

    /// This view, whose position and orientation are in the inertial frame
    /// of [`planet_geo::system`], as the body placed by `placement` sees
    /// it: its position and axes in that body's fixed frame, formed in f64.
    pub fn in_placed_body(&self, placement: &planet_geo::system::Placement) -> View {
        View {
            position: placement.point_to_body(self.position),
            orientation: (placement.to_body * self.orientation).normalize(),
            ..*self
        }
    }

    /// This view, in a body's fixed frame, in the inertial frame.
    pub fn from_placed_body(&self, placement: &planet_geo::system::Placement) -> View {
        View {
            position: placement.point_from_body(self.position),
            orientation: (placement.rotation_from_body() * self.orientation).normalize(),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(offset: f64) -> View {
        let at = Geodetic::from_degrees(27.99, 86.93, 12_000.0);
        View::looking_from(&Body::earth(), at, 40.0, -25.0, 50f64.to_radians(), (1280, 720)).with_axis_offset(offset)
    }

    /// A lens shift moves everything sideways by the offset and turns
    /// nothing: the axis lands on the shifted pixel, a pixel's ray comes
    /// back to that pixel, and the frustum's sides pass through the
    /// viewport's own edges (so culling keeps what is drawn).
    #[test]
    fn a_shifted_axis_moves_the_picture_not_the_camera() {
        let (centred, shifted) = (view(0.0), view(-120.0));
        let ahead = shifted.position + shifted.forward() * 5_000.0;
        let (x0, y0) = centred.project(ahead).unwrap();
        let (x1, y1) = shifted.project(ahead).unwrap();
        assert!((x0 - 640.0).abs() < 1e-6 && (x1 - 520.0).abs() < 1e-6 && (y1 - y0).abs() < 1e-9, "{x0} {x1}");
        assert_eq!(shifted.axis_pixel(), (520.0, 360.0));
        for (x, y) in [(0.0, 0.0), (519.5, 359.5), (1279.0, 719.0), (17.0, 600.0)] {
            let seen = shifted.project(shifted.position + shifted.pixel_ray(x, y) * 900.0).unwrap();
            assert!((seen.0 - (x + 0.5)).abs() < 1e-6 && (seen.1 - (y + 0.5)).abs() < 1e-6, "{x},{y}: {seen:?}");
        }
        let planes = shifted.frustum(1.0);
        for (x, y) in [(0.0, 360.0), (1280.0, 360.0)] {
            // The ray through a vertical edge of the viewport lies in that
            // side's plane.
            let point = shifted.position + shifted.pixel_ray(x - 0.5, y - 0.5) * 1_000.0;
            let on_a_side = planes[..2].iter().any(|p| p.signed_distance(point).abs() < 1e-6);
            assert!(on_a_side, "the edge at x = {x} is a side of the frustum");
        }
        let inside = shifted.position + shifted.pixel_ray(5.0, 5.0) * 1_000.0;
        assert!(planes.iter().all(|p| p.signed_distance(inside) > 0.0), "a pixel near the left edge is inside");
    }
}
