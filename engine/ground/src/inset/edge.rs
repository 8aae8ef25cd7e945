//! The inset's edge as the band outside its box carries it (`mod.rs`).
//!
//! The key decision: the farther from the box, the coarser the level of
//! the inset's own pyramid the edge is read from (its sample spacing about
//! twice the distance, weighted smoothly across depths), through a cubic
//! B-spline of that level's samples. Relief along the edge then fades out
//! within about its own width of the box, as ground continuing a measured
//! edge would. Read at one depth, the edge's every ridge and gully ran
//! straight across the band: a comb of streaks along the edge from 100 km,
//! a curtain of them at 10 km (#55). The B-spline, not a bilinear blend,
//! because a coarse level's bilinear facets, kilometres wide, shade as
//! blocks; its weights are positive, so a read stays within the samples it
//! blends, and what the tile's bounds state for the band holds it.

use crate::{HeightSource, SourceError, SourceTile};
use planet_geo::address::TileAddress;
use planet_geo::body::Geodetic;

/// The inset's edge heights a band reads (`InsetSource::edge_range`).
#[derive(Clone, Copy, Debug)]
pub(super) struct EdgeRange {
    pub lo: f64,
    pub hi: f64,
    /// The largest geometric error of the tiles they are read from.
    pub error: f64,
}

/// The inset's heights at edge points, read at the edge depth (or, farther
/// out, coarser) from the few tiles a band needs, each read once.
pub(super) struct EdgeHeights<'a> {
    inset: &'a dyn HeightSource,
    depth: u8,
    /// The coarsest sample spacing the band reads (metres).
    widest_m: f64,
    /// What the tile's bounds hold the band's edge heights to, where known.
    range: Option<EdgeRange>,
    tiles: Vec<(TileAddress, Option<SourceTile>)>,
}

impl<'a> EdgeHeights<'a> {
    /// The edge read at `depth` at the box, over a band `transition_m`
    /// wide, held to `range`.
    pub fn new(inset: &'a dyn HeightSource, depth: u8, transition_m: f64, range: Option<EdgeRange>) -> EdgeHeights<'a> {
        EdgeHeights { inset, depth, widest_m: 0.5 * transition_m, range, tiles: Vec::new() }
    }

    /// The inset's edge at `at` (a point of the box's edge) as the band
    /// carries it `distance` metres out: at the box the edge depth's
    /// bilinear surface, which is the inset's own there; out from it the
    /// level whose samples lie about twice the distance apart (under half
    /// the band), weighted with its two neighbours by a quadratic
    /// B-spline in the level (a linear blend between two levels kinked the
    /// band's slope wherever the distance crossed from one pair to the
    /// next: lines along the edge, blocks where they met); held to the
    /// range the tile's bounds state (a filtered level's samples are
    /// weighted means of the finer ones', so this rarely binds).
    pub fn smoothed(&mut self, at: Geodetic, distance: f64) -> Result<Option<f64>, SourceError> {
        let finest_m = self.inset.body().sample_spacing_m(self.depth);
        // Twice the distance, easing toward the widest spacing (a hard cap
        // would kink the band's slope where it took hold).
        let spacing = 2.0 * distance * self.widest_m / (self.widest_m + 2.0 * distance);
        let x = (spacing / finest_m).log2().clamp(0.0, f64::from(self.depth));
        let n = x.round();
        let f = x - n;
        let weights = [0.5 * (0.5 - f) * (0.5 - f), 0.75 - f * f, 0.5 * (0.5 + f) * (0.5 + f)];
        let (mut sum, mut total) = (0.0, 0.0);
        for (k, w) in weights.into_iter().enumerate() {
            // Level `n - 1 + k`, held to the pyramid (the edge depth and the root).
            let level = (n + k as f64 - 1.0).clamp(0.0, f64::from(self.depth)) as u8;
            if w > 0.0
                && let Some(h) = self.height(at, self.depth - level, level > 0)?
            {
                (sum, total) = (sum + w * h, total + w);
            }
        }
        Ok((total > 0.0).then(|| sum / total).map(|h| self.range.map_or(h, |r| h.clamp(r.lo, r.hi))))
    }

    /// The inset's height at `at` read at `depth` (through the B-spline
    /// where `smooth`, else bilinear), or `None` where it has no tile there.
    fn height(&mut self, at: Geodetic, depth: u8, smooth: bool) -> Result<Option<f64>, SourceError> {
        let (tile, u, v) = crate::locate(self.inset.body(), at, depth);
        let k = match self.tiles.iter().position(|(t, _)| *t == tile) {
            Some(k) => k,
            None => {
                let read = match self.inset.tile(tile) {
                    Ok(t) => Some(t),
                    Err(SourceError::NoData { .. }) => None,
                    Err(e) => return Err(e),
                };
                self.tiles.push((tile, read));
                self.tiles.len() - 1
            }
        };
        Ok(self.tiles[k].1.as_ref().map(|t| if smooth { crate::bspline(&t.heights, u, v) } else { t.bilinear(u, v) }))
    }
}

#[cfg(test)]
mod tests {
    use crate::bspline;
    use planet_geo::address::TILE_STORED_SAMPLES;

    /// The B-spline reproduces a plane exactly (its weights sum to one and
    /// their centroid is the point), across a cell's whole span.
    #[test]
    fn the_bspline_holds_a_plane() {
        let n = TILE_STORED_SAMPLES as usize;
        let plane = |x: f64, y: f64| 3.0 + 0.5 * x - 0.25 * y;
        let heights: Vec<f32> = (0..n * n).map(|k| plane((k % n) as f64 - 1.0, (k / n) as f64 - 1.0) as f32).collect();
        for (u, v) in [(0.0, 0.0), (0.3, 127.9), (64.5, 12.25), (128.0, 128.0)] {
            assert!((bspline(&heights, u, v) - plane(u, v)).abs() < 1e-4, "({u}, {v})");
        }
    }
}
