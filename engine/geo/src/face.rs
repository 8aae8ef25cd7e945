//! The six cube faces and their integer bases.
//!
//! Every face is described by three signed unit axes (`normal`, `u`, `v`) with
//! components in {-1, 0, 1}. Cross-face adjacency is *derived* from these
//! integer vectors (see [`crate::address`]), never typed in as a table, so the
//! addressing and the geometry cannot disagree about which face lies where.
//!
//! Body-fixed frame: right-handed, +Z through the north pole, +X through
//! (0 N, 0 E), +Y through (0 N, 90 E). For every face `u x v = normal`, so a
//! face seen from outside the body has `u` to the right and `v` up.
//!
//! | face | normal | u axis | v axis | centre (lat, lon) |
//! |------|--------|--------|--------|-------------------|
//! | 0    | +X     | +Y     | +Z     | 0, 0              |
//! | 1    | +Y     | -X     | +Z     | 0, 90 E           |
//! | 2    | -X     | -Y     | +Z     | 0, 180            |
//! | 3    | -Y     | +X     | +Z     | 0, 90 W           |
//! | 4    | +Z     | +Y     | -X     | north pole        |
//! | 5    | -Z     | +Y     | +X     | south pole        |
//!
//! The four equatorial faces chain east with `u` continuous across their
//! shared edges; face 0's top edge (v = +1) is face 4's bottom edge (v = -1)
//! and face 0's bottom edge is face 5's top edge, with `u` running the same way.

use std::fmt;

/// A signed unit axis of the body-fixed frame, as integer components.
pub type IntAxis = [i8; 3];

/// One of the six cube faces. Always valid: construct with [`Face::new`] or
/// take one from [`Face::ALL`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Face(u8);

/// The integer basis of one face: `normal` points out of the face centre,
/// `u` and `v` span the face, `u x v = normal`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FaceBasis {
    pub normal: IntAxis,
    pub u: IntAxis,
    pub v: IntAxis,
}

#[rustfmt::skip]
const BASES: [FaceBasis; 6] = [
    FaceBasis { normal: [1, 0, 0], u: [0, 1, 0], v: [0, 0, 1] },
    FaceBasis { normal: [0, 1, 0], u: [-1, 0, 0], v: [0, 0, 1] },
    FaceBasis { normal: [-1, 0, 0], u: [0, -1, 0], v: [0, 0, 1] },
    FaceBasis { normal: [0, -1, 0], u: [1, 0, 0], v: [0, 0, 1] },
    FaceBasis { normal: [0, 0, 1], u: [0, 1, 0], v: [-1, 0, 0] },
    FaceBasis { normal: [0, 0, -1], u: [0, 1, 0], v: [1, 0, 0] },
];

impl Face {
    pub const COUNT: usize = 6;
    pub const ALL: [Face; 6] = [Face(0), Face(1), Face(2), Face(3), Face(4), Face(5)];

    /// The face with this index, or `None` outside 0..6.
    pub const fn new(index: u8) -> Option<Face> {
        if index < 6 { Some(Face(index)) } else { None }
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    pub const fn basis(self) -> FaceBasis {
        BASES[self.0 as usize]
    }

    /// The face whose outward normal is `axis`.
    pub(crate) fn with_normal(axis: IntAxis) -> Face {
        let index = BASES
            .iter()
            .position(|b| b.normal == axis)
            .expect("every signed unit axis is the normal of exactly one face");
        Face(index as u8)
    }
}

impl fmt::Display for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One edge of a tile or face, named by the face-grid coordinate it bounds:
/// `MinU` is the edge at the smallest `u` (tile column x = 0 side), and so on.
/// Tile `x` grows with `u` and tile `y` grows with `v`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Edge {
    MinU,
    MaxU,
    MinV,
    MaxV,
}

impl Edge {
    pub const ALL: [Edge; 4] = [Edge::MinU, Edge::MaxU, Edge::MinV, Edge::MaxV];

    pub const fn opposite(self) -> Edge {
        match self {
            Edge::MinU => Edge::MaxU,
            Edge::MaxU => Edge::MinU,
            Edge::MinV => Edge::MaxV,
            Edge::MaxV => Edge::MinV,
        }
    }

    /// True for the two edges of constant `u` (the left and right sides).
    pub const fn is_u_edge(self) -> bool {
        matches!(self, Edge::MinU | Edge::MaxU)
    }
}

pub(crate) fn dot(a: IntAxis, b: IntAxis) -> i8 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn neg(a: IntAxis) -> IntAxis {
    [-a[0], -a[1], -a[2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cross(a: IntAxis, b: IntAxis) -> IntAxis {
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    }

    #[test]
    fn every_basis_is_right_handed_and_orthonormal() {
        for face in Face::ALL {
            let b = face.basis();
            assert_eq!(cross(b.u, b.v), b.normal, "face {face}");
            assert_eq!(dot(b.u, b.v), 0);
            assert_eq!(dot(b.u, b.normal), 0);
        }
    }

    #[test]
    fn normals_are_the_six_signed_axes() {
        let mut normals: Vec<IntAxis> = Face::ALL.iter().map(|f| f.basis().normal).collect();
        normals.sort();
        let mut expected = vec![[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
        expected.sort();
        assert_eq!(normals, expected);
        for face in Face::ALL {
            assert_eq!(Face::with_normal(face.basis().normal), face);
        }
    }
}
