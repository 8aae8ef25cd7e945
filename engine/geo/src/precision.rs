//! The f32 vertex path: a sample's offset from its node's centre, computed
//! without ever forming a planet-scale quantity in f32.
//!
//! A vertex on Earth is 6.4e6 m from the centre and f32 carries 6e-8 of
//! relative precision, so a position built in f32 planet space is already
//! ~0.4-0.8 m off before anything subtracts the camera. Here the host holds
//! the node centre in f64 and hands the GPU per-node constants of order one
//! ([`NodeBasis`]); the vertex path then works only with *differences*, each
//! rearranged so that no two nearly equal numbers are subtracted:
//!
//! * the warp difference `tan(a + x) - tan(a) = sec^2(a) sin x / (cos x - tan a sin x)`,
//!   split into `ds` exactly plus a second-order remainder;
//! * the normalisation difference, through the identity
//!   `|c| - |g| = (|c|^2 - |g|^2) / (|c| + |g|)`, which leaves the tangent
//!   projection of the step (folded into host constants) plus a second-order
//!   radial term;
//! * the ellipsoid scale is linear, so the surface-point delta is the scaled
//!   unit-direction delta (folded into the same constants);
//! * the normal's change uses the same identity on `d / radii`.
//!
//! The result is the first-order term `w_u * ds + w_v * dt` (one fused
//! multiply-add of exact inputs) plus small corrections, so its error is a
//! couple of ulps of the offset's own size at every depth. This module is the
//! CPU reference the vertex shader mirrors operation for operation.

use std::f64::consts::FRAC_PI_4;

use glam::{DVec3, Vec3};

use crate::address::TileAddress;
use crate::body::Ellipsoid;
use crate::cube::{cube_point, normalize_exactly_ordered, warp};
use crate::dd::{Dd, Dd3};
use crate::face::{Face, IntAxis};

crate::gpu_struct! {
/// Per-node constants for the f32 vertex path, computed on the host in f64
/// and narrowed once. Every field is of order one, a small offset, or a
/// per-body scale: none is a planet-scale position.
pub struct NodeBasis [size = 128] {
    /// `sec^2(theta_c) * pi/4 * radii * P(u) / |g_c|`: surface metres per unit
    /// of grid `s`, the tangent part of the face `u` axis at the centre.
    pub w_u: [f32; 3],
    /// `tan(theta_c)`: the warped centre coordinate along `u`.
    pub tan_u: f32,
    /// As `w_u` for the `v` axis.
    pub w_v: [f32; 3],
    /// `tan(phi_c)`.
    pub tan_v: f32,
    /// `radii * d_c / |g_c|`: metres per unit of the radial correction.
    pub w_d: [f32; 3],
    /// `|g_c|`, the length of the centre's cube point.
    pub cube_length: f32,
    /// Unit geodetic normal at the centre.
    pub normal: [f32; 3],
    /// `|m_c|` where `m = d * (radii.x / radii)` (the unnormalised normal).
    pub m_length: f32,
    /// `m_c`.
    pub m: [f32; 3],
    /// `tan(theta_c) * pi/4`.
    pub tan_u_pi4: f32,
    /// `radii.x / radii^2` per component: turns a surface delta into a `m` delta.
    pub kappa: [f32; 3],
    /// `tan(phi_c) * pi/4`.
    pub tan_v_pi4: f32,
    /// `sec^2(theta_c) * pi/4` and `sec^2(phi_c) * pi/4`.
    pub sec2_pi4: [f32; 2],
    /// What rounding `w_u` to f32 left behind (`w_u + w_u_lo` is `w_u` to
    /// ~48 bits): the first-order term is the whole offset at depth, so its
    /// constant must not cost an ulp of its own.
    pub w_u_lo: [f32; 3],
    pub w_v_lo: [f32; 3],
}
}

/// The host half: a node's centre point in f64 and its [`NodeBasis`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeCentre {
    /// Body-fixed centre: the surface point of the tile's centre direction,
    /// raised `height` metres along its normal.
    pub point: DVec3,
    pub height: f64,
    pub basis: NodeBasis,
}

fn axis(a: IntAxis) -> DVec3 {
    DVec3::new(f64::from(a[0]), f64::from(a[1]), f64::from(a[2]))
}

fn narrow(v: DVec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

/// The part of `v` that [`narrow`] rounds away.
fn narrow_remainder(v: DVec3) -> [f32; 3] {
    let hi = narrow(v);
    [(v.x - f64::from(hi[0])) as f32, (v.y - f64::from(hi[1])) as f32, (v.z - f64::from(hi[2])) as f32]
}

impl NodeCentre {
    /// Computes the centre of `tile` at elevation `height` on `ellipsoid`.
    pub fn new(ellipsoid: &Ellipsoid, tile: TileAddress, height: f64) -> NodeCentre {
        let basis = tile.face().basis();
        let (u, v) = (axis(basis.u), axis(basis.v));
        let (s_c, t_c) = tile.grid_centre();
        let (tan_u, tan_v) = (warp(s_c), warp(t_c));
        let g_c = cube_point(tile.face(), tan_u, tan_v);
        let cube_length = g_c.length();
        let d_c = normalize_exactly_ordered(g_c);
        let radii = ellipsoid.radii();
        let project = |a: DVec3| a - d_c * d_c.dot(a);
        let sec2_u = (1.0 + tan_u * tan_u) * FRAC_PI_4;
        let sec2_v = (1.0 + tan_v * tan_v) * FRAC_PI_4;
        let w_u = radii * project(u) * (sec2_u / cube_length);
        let w_v = radii * project(v) * (sec2_v / cube_length);
        let w_d = radii * d_c / cube_length;
        let m = d_c * (radii.x / radii);
        let normal = m.normalize();
        let point = ellipsoid.surface_point_from_direction(d_c) + height * normal;
        NodeCentre {
            point,
            height,
            basis: NodeBasis {
                w_u: narrow(w_u),
                tan_u: tan_u as f32,
                w_v: narrow(w_v),
                tan_v: tan_v as f32,
                w_d: narrow(w_d),
                cube_length: cube_length as f32,
                normal: narrow(normal),
                m_length: m.length() as f32,
                m: narrow(m),
                tan_u_pi4: (tan_u * FRAC_PI_4) as f32,
                kappa: narrow(radii.x / (radii * radii)),
                tan_v_pi4: (tan_v * FRAC_PI_4) as f32,
                sec2_pi4: [sec2_u as f32, sec2_v as f32],
                w_u_lo: narrow_remainder(w_u),
                w_v_lo: narrow_remainder(w_v),
            },
        }
    }
}

const FRAC_PI_4_F32: f32 = std::f32::consts::FRAC_PI_4;

/// For a grid step `ds` from the centre, the warp difference in units of
/// `sec^2 * pi/4`: returns `(ds, c)` with the difference equal to `ds + c`,
/// `c` second order. `tan_pi4` is `tan(centre) * pi/4`.
fn warp_step(ds: f32, tan_pi4: f32) -> f32 {
    // x = ds * pi/4; sin x = (pi/4) ds (1 + sigma), cos x = 1 - gamma.
    let x = ds * FRAC_PI_4_F32;
    let x2 = x * x;
    let sigma = x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362_880.0))));
    let gamma = x2 * (0.5 - x2 * (1.0 / 24.0 - x2 * (1.0 / 720.0 - x2 * (1.0 / 40_320.0 - x2 * (1.0 / 3_628_800.0)))));
    let sin_scaled = ds + ds * sigma;
    let a_sin = tan_pi4 * sin_scaled;
    let denominator = (1.0 - gamma) - a_sin;
    // sin/denominator - ds, with every term of the numerator second order.
    ds * ((sigma + gamma) + a_sin) / denominator
}

/// Terms of the surface delta, kept apart so the first-order part is
/// rounded once.
struct SurfaceDelta {
    main: Vec3,
    tail: Vec3,
}

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::from_array(a)
}

/// Fused `a * b + c` per component, as the shader's `fma`.
fn fma3(a: Vec3, b: f32, c: Vec3) -> Vec3 {
    Vec3::new(a.x.mul_add(b, c.x), a.y.mul_add(b, c.y), a.z.mul_add(b, c.z))
}

fn surface_delta(f: &NodeBasis, ds: f32, dt: f32) -> SurfaceDelta {
    let (w_u, w_v, w_d) = (v3(f.w_u), v3(f.w_v), v3(f.w_d));
    let c_u = warp_step(ds, f.tan_u_pi4);
    let c_v = warp_step(dt, f.tan_v_pi4);
    // True tan differences (cube-space step along u and v).
    let alpha = f.sec2_pi4[0] * (ds + c_u);
    let beta = f.sec2_pi4[1] * (dt + c_v);
    let centre_dot_step = f.tan_u * alpha + f.tan_v * beta;
    let step_sq = alpha * alpha + beta * beta;
    let length_sq_change = 2.0 * centre_dot_step + step_sq;
    let cube_length = (f.cube_length * f.cube_length + length_sq_change).sqrt();
    let length_sum = cube_length + f.cube_length;
    let length_change = length_sq_change / length_sum;
    let q = (centre_dot_step * length_change / f.cube_length - step_sq) / length_sum;
    let epsilon = length_change / f.cube_length;
    let low = fma3(v3(f.w_u_lo), ds, v3(f.w_v_lo) * dt);
    let main = fma3(w_u, ds, fma3(w_v, dt, low));
    let small = fma3(w_u, c_u, fma3(w_v, c_v, w_d * q));
    let shrink = epsilon / (1.0 + epsilon);
    let tail = small - (main + small) * shrink;
    SurfaceDelta { main, tail }
}

/// The surface-point delta `radii * (d - d_c)` (metres, body-fixed axes) of
/// the sample `(ds, dt)` grid units from the node centre: the
/// normalized-difference path with elevation left out.
pub fn ellipsoid_point_delta(basis: &NodeBasis, ds: f32, dt: f32) -> Vec3 {
    let d = surface_delta(basis, ds, dt);
    d.main + d.tail
}

/// Offset (metres, body-fixed axes) of a sample from its node's centre
/// point: the sample sits `(ds, dt)` face-grid units from the centre (exact
/// lattice steps) at elevation `height`, which is `height_above_centre`
/// metres above the centre's own elevation. `height_above_centre` carries
/// the precision (the host forms it as a small difference); `height` only
/// scales the tilt of the normal.
pub fn vertex_offset(basis: &NodeBasis, ds: f32, dt: f32, height_above_centre: f32, height: f32) -> Vec3 {
    let SurfaceDelta { main, tail } = surface_delta(basis, ds, dt);
    let (m_c, n_c) = (v3(basis.m), v3(basis.normal));
    let dm = (main + tail) * v3(basis.kappa);
    let m_length = (m_c + dm).length();
    let m_length_change = (2.0 * m_c.dot(dm) + dm.length_squared()) / (m_length + basis.m_length);
    let normal_change = (dm - n_c * m_length_change) / m_length;
    let elevation = fma3(n_c, height_above_centre, normal_change * height);
    main + (tail + elevation)
}

/// The same offset computed directly (sample point minus centre point) in
/// double-double arithmetic: the reference the f32 path is held to. Only
/// the warp step is taken from an f64 identity (relative error ~1e-16 of
/// the step itself); everything after is ~106-bit.
pub fn reference_vertex_offset(
    ellipsoid: &Ellipsoid,
    tile: TileAddress,
    centre_height: f64,
    ds: f64,
    dt: f64,
    height: f64,
) -> DVec3 {
    let (s_c, t_c) = tile.grid_centre();
    let (tan_u, tan_v) = (warp(s_c), warp(t_c));
    let tan_step = |t: f64, step: f64| {
        let (sin_x, cos_x) = (step * FRAC_PI_4).sin_cos();
        (1.0 + t * t) * sin_x / (cos_x - t * sin_x)
    };
    let face = tile.face();
    let cube = |a: Dd, b: Dd| dd_cube_point(face, a, b);
    let (a_c, b_c) = (Dd::from_f64(tan_u), Dd::from_f64(tan_v));
    let a = a_c + Dd::from_f64(tan_step(tan_u, ds));
    let b = b_c + Dd::from_f64(tan_step(tan_v, dt));
    let radii = Dd3::from_dvec3(ellipsoid.radii());
    let position = |g: Dd3, h: f64| {
        let d = g.normalize();
        let normal = d.div(radii).normalize();
        radii.mul(d).add(normal.scale(Dd::from_f64(h)))
    };
    let centre = position(cube(a_c, b_c), centre_height);
    position(cube(a, b), height).sub(centre).to_dvec3()
}

fn dd_cube_point(face: Face, a: Dd, b: Dd) -> Dd3 {
    let one = Dd::from_f64(1.0);
    Dd3(match face.index() {
        0 => [one, a, b],
        1 => [-a, one, b],
        2 => [-one, -a, b],
        3 => [a, -one, b],
        4 => [-b, a, one],
        _ => [b, a, -one],
    })
}

/// What naive f32 code does: build both points in f32 planet space and
/// subtract. Kept to show the precision tests can tell the difference.
pub fn naive_f32_vertex_offset(
    ellipsoid: &Ellipsoid,
    tile: TileAddress,
    centre_height: f64,
    ds: f32,
    dt: f32,
    height: f32,
) -> Vec3 {
    let (s_c, t_c) = tile.grid_centre();
    let (s_c, t_c) = (s_c as f32, t_c as f32);
    let radii = ellipsoid.radii().as_vec3();
    let position = |s: f32, t: f32, h: f32| {
        let g = cube_point(tile.face(), warp(f64::from(s)), warp(f64::from(t))).as_vec3();
        let d = g.normalize();
        radii * d + h * (d / radii).normalize()
    };
    position(s_c + ds, t_c + dt, height) - position(s_c, t_c, centre_height as f32)
}

/// The error of an f32 offset against the reference, in units of the f32
/// spacing at the reference offset's length (`ulp(|offset|)`), and in metres.
pub fn offset_error(computed: Vec3, reference: DVec3) -> (f64, f64) {
    let error = (computed.as_dvec3() - reference).length();
    let magnitude = reference.length() as f32;
    let ulp = f64::from(f32::from_bits(magnitude.to_bits() + 1) - magnitude);
    (error / ulp.max(f64::from(f32::MIN_POSITIVE)), error)
}
