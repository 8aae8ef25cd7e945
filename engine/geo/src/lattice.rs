//! The lattice a node draws: every fourth sample of its tile.
//!
//! The key decision: the lattice is defined by one integer, the sample
//! step, and everything else is derived from the tile layout: how many
//! cells a node draws, its vertices, and how far the drawn surface departs
//! from the tile's samples (the geometric error the bake stores and
//! selection reads). The renderer's index buffer, the vertex shader (through
//! the generated ABI header), the bake and selection all read these.

use crate::address::{TILE_CELLS, TILE_STORED_SAMPLES};

/// Tile samples per lattice cell.
pub const LATTICE_STEP: u32 = 4;
/// Lattice cells along a node edge.
pub const LATTICE_CELLS: u32 = TILE_CELLS / LATTICE_STEP;
/// Lattice vertices along a node edge.
pub const LATTICE_SIDE: u32 = LATTICE_CELLS + 1;
/// Vertices of the lattice proper.
pub const LATTICE_VERTICES: u32 = LATTICE_SIDE * LATTICE_SIDE;
/// Vertices of the skirt hung below the four edges.
pub const SKIRT_VERTICES: u32 = 4 * LATTICE_SIDE;
/// Vertices one node draws: the lattice and its skirt.
pub const NODE_VERTICES: u32 = LATTICE_VERTICES + SKIRT_VERTICES;

const _: () = assert!(TILE_CELLS.is_multiple_of(LATTICE_STEP), "the lattice steps evenly through a tile");

/// How far a node's drawn lattice can lie inside the surface through its
/// vertices at `depth`: the sag of a cell's diagonal chord on the body's
/// largest radius, cells taken half as large again as nominal (the warp's
/// spread).
pub fn lattice_sag_m(body: &crate::body::Body, depth: u8) -> f64 {
    let radius = body.ellipsoid().radii().max_element();
    let cell = body.tile_size_m(depth) / f64::from(LATTICE_CELLS);
    let diagonal = 1.5 * std::f64::consts::SQRT_2 * cell;
    radius * (1.0 - (0.5 * diagonal / radius).cos())
}

/// Face-grid step of lattice vertex `index` (0..=LATTICE_CELLS) from the
/// centre of a node at `depth`: exact in f32 for every depth up to 28.
pub fn lattice_step(depth: u8, index: u32) -> f32 {
    let cells = LATTICE_CELLS as i32;
    let cells_per_face = f64::from(cells) * f64::from(1u32 << depth);
    ((f64::from(index as i32 - cells / 2)) * 2.0 / cells_per_face) as f32
}

/// How far the lattice drawn from a tile departs from its core samples
/// (`heights` in stored order, 131 x 131): the largest difference between a
/// sample and the bilinear surface of the lattice cell it lies in.
pub fn lattice_error(heights: &[f64]) -> f64 {
    let n = TILE_STORED_SAMPLES as usize;
    let at = |i: usize, j: usize| heights[(j + 1) * n + (i + 1)];
    let (cells, step) = (TILE_CELLS as usize, LATTICE_STEP as usize);
    let mut worst: f64 = 0.0;
    // Lattice cell by lattice cell, its four vertices read once; the last
    // cell of a row or column also takes the far edge (offset `step`, weight
    // 1). Each sample gets the same vertices, weights and arithmetic as
    // when it looks up its own cell, and the maximum is order-free.
    for j0 in (0..cells).step_by(step) {
        let rows = if j0 + step == cells { step + 1 } else { step };
        for i0 in (0..cells).step_by(step) {
            let columns = if i0 + step == cells { step + 1 } else { step };
            let (i1, j1) = (i0 + step, j0 + step);
            let (h00, h10, h01, h11) = (at(i0, j0), at(i1, j0), at(i0, j1), at(i1, j1));
            for dj in 0..rows {
                let fy = dj as f64 / step as f64;
                for di in 0..columns {
                    let fx = di as f64 / step as f64;
                    let lattice = (h00 * (1.0 - fx) + h10 * fx) * (1.0 - fy) + (h01 * (1.0 - fx) + h11 * fx) * fy;
                    worst = worst.max((lattice - at(i0 + di, j0 + dj)).abs());
                }
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_by_cell_gives_the_bits_of_each_sample_finding_its_own_cell() {
        let n = TILE_STORED_SAMPLES as usize;
        let heights: Vec<f64> = (0..n * n).map(|k| ((k as f64) * 0.618_033_988_749).sin() * 1234.5).collect();
        let at = |i: usize, j: usize| heights[(j + 1) * n + (i + 1)];
        let (cells, step) = (TILE_CELLS as usize, LATTICE_STEP as usize);
        let mut worst: f64 = 0.0;
        for j in 0..=cells {
            for i in 0..=cells {
                let (i0, j0) = ((i / step * step).min(cells - step), (j / step * step).min(cells - step));
                let (fx, fy) = ((i - i0) as f64 / step as f64, (j - j0) as f64 / step as f64);
                let (i1, j1) = (i0 + step, j0 + step);
                let lattice = (at(i0, j0) * (1.0 - fx) + at(i1, j0) * fx) * (1.0 - fy)
                    + (at(i0, j1) * (1.0 - fx) + at(i1, j1) * fx) * fy;
                worst = worst.max((lattice - at(i, j)).abs());
            }
        }
        assert_eq!(lattice_error(&heights).to_bits(), worst.to_bits());
    }

    #[test]
    fn lattice_is_33_by_33_with_a_skirt() {
        assert_eq!((LATTICE_CELLS, LATTICE_SIDE, NODE_VERTICES), (32, 33, 33 * 33 + 4 * 33));
    }

    #[test]
    fn a_plane_has_no_lattice_error_and_a_bump_between_vertices_does() {
        let n = TILE_STORED_SAMPLES as usize;
        let mut plane = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                plane[j * n + i] = 3.0 * i as f64 - 2.0 * j as f64;
            }
        }
        assert!(lattice_error(&plane) < 1e-9);
        let mut bump = plane.clone();
        bump[(2 + 1) * n + (2 + 1)] += 5.0; // sample (2, 2) lies between lattice vertices
        assert!((lattice_error(&bump) - 5.0).abs() < 1e-9);
    }
}
