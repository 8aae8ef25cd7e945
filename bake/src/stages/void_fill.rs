//! Filling a DEM's voids with values that are a function of the place.
//!
//! The key decision: a void sample is filled from the DEM itself, read
//! along the four directions of the face grid through it (east and west
//! along its row, north and south along its column, in the cube's own
//! axes), not from the other samples of its tile. Every tile that stores a
//! place (a shared edge, an apron) then fills it with the same bits: filled
//! tile by tile, two tiles gave their shared edge two heights, and the
//! ground cracked open through a void that straddled a tile edge (the sky
//! showed through Yosemite Valley's wall in docs/ground.md). Along each
//! direction the probes step 1, 2, 4, ... samples out until the DEM
//! measured the place probed (or the face ends); the fill is the mean of
//! the values found, each weighted by the inverse of its distance in
//! samples, the way SRTM's voids were first filled from their rims. The
//! probes reach at most a tile's width ([`REACH`]): a void with nothing
//! measured that near along any direction is left to the tile's own fill.
//! A tile of nothing but voids is not filled here: it is refused as
//! before (an ocean left out of a land-only DEM is not to be filled with
//! the land around it; `--void-value` says what it is).

use planet_terrain::geo::address::{FaceSample, TILE_STORED_SAMPLES};
use planet_terrain::geo::cube;
use planet_terrain::{Body, TileAddress};

use crate::error::BakeError;
use crate::stages::sampling::Inputs;

/// The farthest a probe looks, in samples: a tile's width.
const REACH: i64 = 128;

/// The four directions along the face grid: (di, dj).
const DIRECTIONS: [(i64, i64); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];

/// A probe still looking: the void it fills and its direction.
#[derive(Clone, Copy)]
struct Probe {
    void: usize,
    direction: usize,
}

impl Inputs {
    /// Fills `values`' voids (`None`) that are not in `skip` from the DEM
    /// along the face grid through each (see the module documentation);
    /// voids with nothing measured within [`REACH`] in any direction stay
    /// `None`.
    pub(crate) fn fill_along_the_grid(
        &self,
        body: &Body,
        tile: TileAddress,
        values: &mut [Option<f64>],
    ) -> Result<(), BakeError> {
        let n = TILE_STORED_SAMPLES as usize;
        let voids: Vec<(usize, FaceSample)> = (0..values.len())
            .filter(|&k| values[k].is_none())
            .map(|k| (k, tile.sample((k % n) as i32 - 1, (k / n) as i32 - 1)))
            .collect();
        if voids.is_empty() {
            return Ok(());
        }
        // (sum of value / distance, sum of 1 / distance) per void.
        let mut found = vec![(0.0f64, 0.0f64); voids.len()];
        let mut looking: Vec<Probe> = (0..voids.len())
            .flat_map(|void| (0..DIRECTIONS.len()).map(move |direction| Probe { void, direction }))
            .collect();
        let mut step = 1i64;
        while !looking.is_empty() && step <= REACH {
            let mut places = Vec::with_capacity(looking.len());
            looking.retain(|p| {
                let s = voids[p.void].1;
                let last = 1i64 << s.cells_log2;
                let (di, dj) = DIRECTIONS[p.direction];
                let (i, j) = (s.i as i64 + di * step, s.j as i64 + dj * step);
                let inside = (0..=last).contains(&i) && (0..=last).contains(&j);
                if inside {
                    places.push(FaceSample { i: i as u64, j: j as u64, ..s });
                }
                inside
            });
            let heights = self.heights(&degrees(body, &places))?;
            let mut still = Vec::with_capacity(looking.len());
            for (probe, height) in looking.into_iter().zip(heights) {
                match height {
                    Some(h) => {
                        let w = 1.0 / step as f64;
                        let f = &mut found[probe.void];
                        (f.0, f.1) = (f.0 + h * w, f.1 + w);
                    }
                    None => still.push(probe),
                }
            }
            looking = still;
            step *= 2;
        }
        for ((k, _), (sum, weight)) in voids.iter().zip(found) {
            if weight > 0.0 {
                values[*k] = Some(sum / weight);
            }
        }
        Ok(())
    }
}

/// Latitude and longitude (degrees) of face-grid places, each computed
/// from its face and grid indices alone (the same bits in every tile).
fn degrees(body: &Body, places: &[FaceSample]) -> Vec<(f64, f64)> {
    let points: Vec<glam::DVec3> = places
        .iter()
        .map(|s| {
            let (u, v) = s.grid_coordinates();
            cube::cube_point(s.face, cube::warp(u), cube::warp(v))
        })
        .collect();
    let (mut lat, mut lon) = (vec![0.0; points.len()], vec![0.0; points.len()]);
    body.ellipsoid().directions_to_degrees(&points, &mut lat, &mut lon);
    lat.into_iter().zip(lon).collect()
}
