//! Collision patches on one lattice: square cells of the basis's tangent
//! plane, each patch its cell plus a margin, vertices on the ground.
//!
//! The key decision: every patch samples the *same* lattice (points of the
//! tangent plane at integer multiples of the ground's sample spacing,
//! dropped onto the ground along the ellipsoid normal), so where two
//! patches overlap they hold the same vertices and the same triangles: a
//! body crossing from one to the other meets one surface, never a step.
//! A patch reaches `margin` beyond its cell on every side, and a body only
//! ever uses the patch of the cell its centre is in, so a body smaller than
//! the margin always stands wholly on its patch; crossing a cell edge adds
//! the neighbour's patch, which already covers the body, and the old patch
//! stays until the body has left its margin, so the contacts a body has
//! carry on across the crossing instead of starting over there. Heights come
//! from the ground at one fixed depth (the query module's rule), whatever
//! tile or cube face a vertex falls in; tiles share their edge samples bit
//! for bit, so neither tile seams nor face edges open a gap.

use glam::DVec3;
use planet_terrain::geo::body::{Ellipsoid, Geodetic};
use planet_terrain::ground::query::GroundReader;
use planet_terrain::layers::Footprint;

use crate::PhysicsError;
use crate::basis::LocalBasis;

/// A cell of the lattice, in cells east and north of the basis's origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    pub east: i64,
    pub north: i64,
}

/// The lattice's shape: sample spacing, cell size and margin in samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatchGrid {
    /// Metres between lattice vertices (the ground's sample spacing at the
    /// depth read).
    pub spacing_m: f64,
    /// Lattice steps across a cell.
    pub cell_steps: i64,
    /// Lattice steps a patch reaches beyond its cell on every side.
    pub margin_steps: i64,
}

/// A patch's triangles in the local basis.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchMesh {
    pub vertices: Vec<DVec3>,
    pub triangles: Vec<[u32; 3]>,
}

impl PatchGrid {
    pub fn new(spacing_m: f64, cell_m: f64, margin_m: f64) -> PatchGrid {
        PatchGrid {
            spacing_m,
            cell_steps: ((cell_m / spacing_m).round() as i64).max(1),
            margin_steps: ((margin_m / spacing_m).ceil() as i64).max(1),
        }
    }

    pub fn cell_m(&self) -> f64 {
        self.cell_steps as f64 * self.spacing_m
    }

    pub fn margin_m(&self) -> f64 {
        self.margin_steps as f64 * self.spacing_m
    }

    /// The cell holding a local position (by its east and north components).
    pub fn cell_of(&self, local: DVec3) -> CellKey {
        let c = self.cell_m();
        CellKey { east: (local.x / c).floor() as i64, north: (local.y / c).floor() as i64 }
    }

    /// Whether a body reaching `reach_m` from its centre at `local` stands
    /// wholly on the patch of `cell`.
    pub fn holds(&self, cell: CellKey, local: DVec3, reach_m: f64) -> bool {
        let (c, slack) = (self.cell_m(), self.margin_m() - reach_m);
        let inside = |at: f64, k: i64| at >= k as f64 * c - slack && at <= (k + 1) as f64 * c + slack;
        inside(local.x, cell.east) && inside(local.y, cell.north)
    }

    /// First and last lattice index of a patch along one axis.
    fn span(&self, cell: i64) -> (i64, i64) {
        (cell * self.cell_steps - self.margin_steps, (cell + 1) * self.cell_steps + self.margin_steps)
    }

    /// The patch of `cell`: its lattice vertices on the ground (local basis)
    /// and two triangles per lattice square, wound counter-clockwise seen
    /// from above (their normals point up, out of the ground).
    pub fn build(
        &self,
        basis: &LocalBasis,
        ellipsoid: &Ellipsoid,
        reader: &mut GroundReader,
        cell: CellKey,
    ) -> Result<PatchMesh, PhysicsError> {
        let (e0, e1) = self.span(cell.east);
        let (n0, n1) = self.span(cell.north);
        let side = (e1 - e0 + 1) as u32;
        let mut vertices = Vec::with_capacity((side * side) as usize);
        for j in n0..=n1 {
            for i in e0..=e1 {
                let plane = basis.to_body_fixed(DVec3::new(i as f64 * self.spacing_m, j as f64 * self.spacing_m, 0.0));
                let g = Geodetic { height: 0.0, ..ellipsoid.point_to_geodetic(plane) };
                let h = reader.top(g).map_err(|source| PhysicsError::Ground {
                    lat: g.latitude.to_degrees(),
                    lon: g.longitude.to_degrees(),
                    source,
                })?;
                vertices.push(basis.to_local(ellipsoid.geodetic_to_point(Geodetic { height: h, ..g })));
            }
        }
        Ok(PatchMesh { vertices, triangles: planet_terrain::ground::query::grid_triangles(side) })
    }

    /// Whether an edit's footprint can reach the patch of `cell`: the
    /// footprint's sphere against a sphere around the patch's square,
    /// padded by the square's sag below its tangent plane.
    pub fn touched_by(&self, basis: &LocalBasis, ellipsoid: &Ellipsoid, cell: CellKey, footprint: &Footprint) -> bool {
        let (e0, e1) = self.span(cell.east);
        let (n0, n1) = self.span(cell.north);
        let s = self.spacing_m;
        let centre = DVec3::new(0.5 * (e0 + e1) as f64 * s, 0.5 * (n0 + n1) as f64 * s, 0.0);
        let half_diagonal = 0.5 * ((e1 - e0) as f64 * s) * std::f64::consts::SQRT_2;
        let far = centre.truncate().length() + half_diagonal;
        let sag = far * far / ellipsoid.radii().min_element() + 1.0;
        (basis.to_body_fixed(centre) - footprint.centre).length() <= footprint.radius + half_diagonal + sag
    }
}
