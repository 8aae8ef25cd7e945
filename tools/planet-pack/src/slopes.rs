//! The slopes of the ground a cut draws (`cut --drawn-slopes`): what a
//! camera sees of the synthesized detail, judged against the real ground's
//! slopes (#49: 300 m above a real DEM, the drawn ground's 99.9th
//! percentile slope at most 5 degrees above the DEM's own).
//!
//! The key decision: the slopes are those of the triangles the renderer
//! draws, each drawn node's 33 x 33 lattice (every fourth stored sample of
//! its tile, two triangles a cell), placed on the ellipsoid as the shader
//! places them, not of the tile's samples: a lattice coarser than its
//! samples draws gentler slopes than they hold, and that is what is seen.

use anyhow::Result;
use planet_terrain::ground::{HeightSource, sample_directions};
use planet_terrain::lod::Cut;
use planet_terrain::pack::Coverage;
use planet_terrain::pack::codec::stored_index;

use crate::output::SlopeSummary;

/// The stored index of lattice vertex `k` (row-major, `side` a row).
fn lattice_index(k: usize, side: usize) -> usize {
    stored_index((k % side) as i32 * STEP, (k / side) as i32 * STEP)
}

/// Lattice cells along a node's edge, and stored samples per cell.
const CELLS: i32 = 32;
const STEP: i32 = 4;

/// The slopes of the triangles of the drawn nodes of `cut` whose three
/// corners lie in `region` (the ground of the packs' boxes, not the band
/// outside a regional pack, where it meets the ground below).
pub fn drawn_slopes(ground: &dyn HeightSource, cut: &Cut, region: &Coverage) -> Result<SlopeSummary> {
    let ellipsoid = ground.body().ellipsoid();
    let mut slopes = Vec::new();
    let mut nodes = 0;
    for node in cut.nodes.iter().filter(|n| n.culled.is_none()) {
        let directions = sample_directions(node.tile);
        let side = (CELLS + 1) as usize;
        let inside: Vec<bool> = (0..side * side)
            .map(|k| {
                let g = ellipsoid.direction_to_geodetic(directions[lattice_index(k, side)]);
                region.contains(g.latitude.to_degrees(), g.longitude.to_degrees())
            })
            .collect();
        if !inside.contains(&true) {
            continue;
        }
        nodes += 1;
        let tile = ground.tile(node.tile)?;
        let place = |a: i32, b: i32| {
            let k = stored_index(a * STEP, b * STEP);
            let d = directions[k];
            (ellipsoid.surface_point_from_direction(d) + d * f64::from(tile.heights[k]), d)
        };
        let inside_at = |a: i32, b: i32| inside[b as usize * side + a as usize];
        for b in 0..CELLS {
            for a in 0..CELLS {
                let ((p00, up), (p10, _), (p01, _), (p11, _)) =
                    (place(a, b), place(a + 1, b), place(a, b + 1), place(a + 1, b + 1));
                let (i00, i10, i01, i11) =
                    (inside_at(a, b), inside_at(a + 1, b), inside_at(a, b + 1), inside_at(a + 1, b + 1));
                for (normal, counted) in [
                    ((p10 - p00).cross(p01 - p00), i00 && i10 && i01),
                    ((p01 - p11).cross(p10 - p11), i11 && i01 && i10),
                ] {
                    if counted {
                        let cos = normal.normalize().dot(up).abs().min(1.0);
                        slopes.push(cos.acos().to_degrees());
                    }
                }
            }
        }
    }
    slopes.sort_by(f64::total_cmp);
    let at = |q: f64| slopes.get(((slopes.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
    Ok(SlopeSummary { nodes, triangles: slopes.len(), median_deg: at(0.5), p99_deg: at(0.99), p99_9_deg: at(0.999) })
}
