//! Cube-sphere geometry: face-grid coordinates to unit directions and back.
//!
//! Grid coordinates `(s, t)` in [-1, 1] are warped by `tan(s * pi / 4)` before
//! projection, so a grid cell spans nearly the same angle at a face's centre
//! and at its corners (about 1.4x apart without the warp). The warp is made
//! exactly odd and exactly +-1 at +-1, so the two faces that share an edge
//! build bit-identical cube points for it and their directions coincide
//! exactly; nothing downstream has to weld a seam.

use std::f64::consts::FRAC_PI_4;

use glam::DVec3;

use crate::address::FaceSample;
use crate::face::Face;

/// `tan(s * pi / 4)`: exactly odd, exactly +-1 at +-1, monotonic in between.
pub fn warp(s: f64) -> f64 {
    let m = s.abs();
    let w = if m == 1.0 { 1.0 } else { (m * FRAC_PI_4).tan() };
    w.copysign(s)
}

/// Inverse of [`warp`]: `atan(a) * 4 / pi`, exactly odd and exact at +-1.
pub fn unwarp(a: f64) -> f64 {
    let m = a.abs();
    let s = if m == 1.0 { 1.0 } else { m.atan() / FRAC_PI_4 };
    s.copysign(a)
}

/// The point `normal + a * u + b * v` on the unit cube, built by assigning
/// components rather than multiplying basis vectors, so the same cube point
/// reached from two faces has the same bits.
pub fn cube_point(face: Face, a: f64, b: f64) -> DVec3 {
    match face.index() {
        0 => DVec3::new(1.0, a, b),
        1 => DVec3::new(-a, 1.0, b),
        2 => DVec3::new(-1.0, -a, b),
        3 => DVec3::new(a, -1.0, b),
        4 => DVec3::new(-b, a, 1.0),
        _ => DVec3::new(b, a, -1.0),
    }
}

/// The unit direction through face-grid point `(s, t)` of `face`.
pub fn face_grid_to_direction(face: Face, s: f64, t: f64) -> DVec3 {
    normalize_exactly_ordered(cube_point(face, warp(s), warp(t)))
}

/// The unit direction through a sample of the global face grid.
pub fn sample_direction(sample: FaceSample) -> DVec3 {
    let (s, t) = sample.grid_coordinates();
    face_grid_to_direction(sample.face, s, t)
}

/// The face a direction points through and its grid coordinates `(s, t)`.
/// On a face edge (two components of equal magnitude) the lower-numbered
/// face of the tie is chosen, deterministically.
pub fn direction_to_face_grid(direction: DVec3) -> (Face, f64, f64) {
    let face = face_of_direction(direction);
    let b = face.basis();
    let axis = |a: [i8; 3]| DVec3::new(f64::from(a[0]), f64::from(a[1]), f64::from(a[2]));
    let major = direction.dot(axis(b.normal));
    let a = direction.dot(axis(b.u)) / major;
    let c = direction.dot(axis(b.v)) / major;
    (face, unwarp(a.clamp(-1.0, 1.0)), unwarp(c.clamp(-1.0, 1.0)))
}

/// The face a direction points through.
pub fn face_of_direction(direction: DVec3) -> Face {
    let m = direction.abs();
    let index = if m.x >= m.y && m.x >= m.z {
        if direction.x >= 0.0 { 0 } else { 2 }
    } else if m.y >= m.z {
        if direction.y >= 0.0 { 1 } else { 3 }
    } else if direction.z >= 0.0 {
        4
    } else {
        5
    };
    Face::new(index).expect("index is 0..6")
}

/// `p / |p|` with the squared length summed in x, y, z order, so equal
/// inputs normalise to equal bits whichever face built them.
pub fn normalize_exactly_ordered(p: DVec3) -> DVec3 {
    let length = (p.x * p.x + p.y * p.y + p.z * p.z).sqrt();
    DVec3::new(p.x / length, p.y / length, p.z / length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_fixes_the_ends_and_the_centre_exactly() {
        assert_eq!(warp(1.0), 1.0);
        assert_eq!(warp(-1.0), -1.0);
        assert_eq!(warp(0.0), 0.0);
        assert_eq!(unwarp(1.0), 1.0);
        assert_eq!(unwarp(-1.0), -1.0);
    }

    #[test]
    fn warp_is_odd_monotonic_and_inverted_by_unwarp() {
        let mut previous = -1.0;
        for k in -1000..=1000 {
            let s = f64::from(k) / 1000.0;
            let a = warp(s);
            assert_eq!(warp(-s), -a, "odd at {s}");
            assert!(a >= previous, "monotonic at {s}");
            previous = a;
            assert!((unwarp(a) - s).abs() <= 1e-15, "inverse at {s}");
        }
    }

    #[test]
    fn warp_evens_out_cell_angles() {
        // Angle subtended by the first and the middle of 1024 cells.
        let angle = |s0: f64, s1: f64| {
            let a = face_grid_to_direction(Face::ALL[0], s0, 0.0);
            let b = face_grid_to_direction(Face::ALL[0], s1, 0.0);
            a.angle_between(b)
        };
        let step = 2.0 / 1024.0;
        let ratio = angle(0.0, step) / angle(-1.0, -1.0 + step);
        assert!((0.95..1.05).contains(&ratio), "warped cell angle ratio {ratio}");
    }

    #[test]
    fn face_centres_are_the_face_normals() {
        for face in Face::ALL {
            let n = face.basis().normal;
            let expected = DVec3::new(f64::from(n[0]), f64::from(n[1]), f64::from(n[2]));
            assert_eq!(face_grid_to_direction(face, 0.0, 0.0), expected);
        }
    }

    #[test]
    fn direction_round_trips_through_the_face_grid() {
        for face in Face::ALL {
            for i in -10..=10 {
                for j in -10..=10 {
                    let (s, t) = (f64::from(i) / 10.3, f64::from(j) / 10.3);
                    let d = face_grid_to_direction(face, s, t);
                    let (f2, s2, t2) = direction_to_face_grid(d);
                    assert_eq!(f2, face);
                    assert!((s2 - s).abs() < 1e-14 && (t2 - t).abs() < 1e-14);
                }
            }
        }
    }
}
