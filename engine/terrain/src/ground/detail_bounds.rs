//! Bounds and geometric error of synthesized tiles (a child of `detail`,
//! so it reads the source's private fields and helpers).
//!
//! The key decision: bounds are computed without synthesizing the tile.
//! The realized octave nodes a few levels up bound every sample as convex
//! refinements of them, the finer octaves add at most their weights, and
//! the amplitude field's largest cell scales both; selection asks for
//! thousands of bounds a frame and can afford no tile. A tile once
//! produced narrows them to its exact range. Exact bounds still read the
//! data tile's amplitude field and refine octave windows: a frame that
//! must not wait for that takes bounds from the index alone until a worker
//! has computed them ([`HeightSource::tile_bounds_unread`],
//! [`HeightSource::warm_bounds`]).

use super::*;

/// Tiles whose bounds narrowed since the journal was last taken
/// ([`HeightSource::narrowed_bounds`]); bounded, for a source nobody asks.
#[derive(Default)]
pub(super) struct Narrowed {
    tiles: Vec<TileAddress>,
    /// Tiles were let go unnoted: the taker forgets everything.
    overflowed: bool,
}

impl DetailSource {
    /// Notes that `tile`'s bounds narrowed (after the narrower bounds are
    /// kept, so whoever takes the note reads them).
    pub(super) fn note_narrowed(&self, tile: TileAddress) {
        let mut narrowed = self.narrowed.lock().expect("narrowed lock");
        if narrowed.tiles.len() >= 1 << 16 {
            narrowed.tiles.clear();
            narrowed.overflowed = true;
        }
        narrowed.tiles.push(tile);
    }

    /// The journal's tiles, appended to `into`; false if some were let go.
    pub(super) fn take_narrowed(&self, into: &mut Vec<TileAddress>) -> bool {
        let mut narrowed = self.narrowed.lock().expect("narrowed lock");
        into.append(&mut narrowed.tiles);
        !std::mem::take(&mut narrowed.overflowed)
    }
}

impl DetailSource {
    /// A range holding the unit octave sum at every stored sample of a tile
    /// past the data depth: the range of the nodes five levels up that
    /// cover the tile (every sample is a convex refinement of them), widened
    /// by the weights of the finer octaves. Near the ground the realized
    /// coarse octaves, not their worst case, then bound the tile, so the
    /// camera stands outside nearby nodes. Tiles on a face edge (their
    /// aprons lie on other faces) take the worst case.
    pub(super) fn octave_range(&self, tile: TileAddress, data_depth: u8) -> (f64, f64) {
        let (up_to, _) = self.coefficient_sums(data_depth, tile.depth());
        let depth = tile.depth();
        let level = data_depth.max(depth.saturating_sub(5));
        let edge = tile.tiles_per_face_edge() - 1;
        if level + 1 >= depth || tile.x() == 0 || tile.y() == 0 || tile.x() == edge || tile.y() == edge {
            return (-up_to, up_to);
        }
        let (first_log2, sample_log2, gain) = (data_depth + 7, depth + 7, self.gain);
        let coefficient = move |log2: u8| -> f64 {
            if log2 >= sample_log2 {
                return 0.0;
            }
            (first_log2..log2).fold(1.0, |c, _| c * gain)
        };
        let shift = depth - level;
        let cells = u64::from(TILE_CELLS);
        let (gi0, gj0) = (u64::from(tile.x()) * cells - 1, u64::from(tile.y()) * cells - 1);
        let span = |g: u64| (g >> shift, ((g + cells + 2) >> shift) + 1);
        let ((i0, i1), (j0, j1)) = (span(gi0), span(gj0));
        let w = window(self.seed, tile.face(), level + 7, (i0, i1, j0, j1), first_log2, &coefficient);
        let low = w.values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = w.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let fine: f64 = (level + 8..sample_log2).map(coefficient).sum();
        (low - fine, high + fine)
    }
}

impl DetailSource {
    /// Once a synthesized tile has been produced its samples give its exact
    /// range, far inside the worst case of the octaves it adds (tens of
    /// metres near a summit at depth 20, where the camera stands 2 m up):
    /// the kept bounds narrow to it. Without this a camera near the ground
    /// stood inside the bounds of every node under it at any depth, so
    /// their projected error was infinite and no budget sufficed. Every
    /// drawn vertex is a convex blend of samples, so the range bounds them.
    pub(super) fn tighten_bounds(&self, tile: &SourceTile) {
        let (lo, hi) = tile
            .heights
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| (lo.min(f64::from(h)), hi.max(f64::from(h))));
        let slack = 1e-3 + 1e-6 * lo.abs().max(hi.abs());
        let (lo, hi) = (lo - slack, hi + slack);
        {
            let mut tight = self.tight.lock().expect("tight lock");
            if tight.len() >= 1 << 18 {
                tight.clear();
            }
            tight.insert(tile.tile, (lo, hi));
        }
        if let Some(b) = self.bounds.lock().expect("bounds lock").get_mut(&tile.tile) {
            narrow(b, (lo, hi));
        }
        self.note_narrowed(tile.tile);
    }

    /// The inner bounds (narrowed to the data under the tile where the
    /// inner source resamples its data) widened by the largest amplitude
    /// over the tile's cells times the range of the octave sum over it; the
    /// error adds the octaves the tile omits and the two its drawn lattice
    /// (every fourth sample) cannot resolve.
    pub fn synthesized_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        let mut b = self.inner.tile_bounds(tile)?;
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok(b) };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let amplitude = match self.amplitudes(ancestor) {
            Ok(field) => {
                let cells = &field.cells;
                let (u0, v0, step) = DetailSource::placement(tile, ancestor);
                let lo = ((u0 - step - 0.5).floor() as i64).max(-1);
                let hi = ((u0 + 129.0 * step - 0.5).floor() as i64 + 1).min(CELLS as i64 - 2);
                let lo_v = ((v0 - step - 0.5).floor() as i64).max(-1);
                let hi_v = ((v0 + 129.0 * step - 0.5).floor() as i64 + 1).min(CELLS as i64 - 2);
                let mut amplitude = 0.0f64;
                for cj in lo_v..=hi_v {
                    for ci in lo..=hi {
                        amplitude = amplitude.max(f64::from(cells[(cj + 1) as usize * CELLS + (ci + 1) as usize]));
                    }
                }
                if self.resamples_data {
                    // The resampled ground is bilinear in each data cell
                    // under the tile, so over the tile's rectangle its
                    // extremes lie where the rectangle's edges and the grid
                    // lines meet: its corners, its crossings of grid lines
                    // and the data samples inside it.
                    let stops = |o: f64| -> Vec<f64> {
                        let (lo, hi) = (o - step, o + 129.0 * step);
                        let inner = (lo.floor() as i32 + 1..=hi.ceil() as i32 - 1).map(f64::from);
                        std::iter::once(lo).chain(inner).chain(std::iter::once(hi)).collect()
                    };
                    let (us, vs) = (stops(u0), stops(v0));
                    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
                    for &v in &vs {
                        for &u in &us {
                            let h = crate::ground::bilinear(&field.heights, u, v);
                            (low, high) = (low.min(h), high.max(h));
                        }
                    }
                    // The f32 rounding of a resampled sample, with room.
                    let slack = 1e-3 + 1e-6 * low.abs().max(high.abs());
                    b.min_elevation = b.min_elevation.max(low - slack);
                    b.max_elevation = b.max_elevation.min(high + slack);
                }
                amplitude
            }
            // A data tile that cannot be read (torn, corrupt) must not stop
            // selection, which never decoded before detail.
            Err(SourceError::Pack(_)) => self.amplitude_from_index(ancestor)?,
            Err(e) => return Err(e),
        };
        if amplitude == 0.0 {
            return Ok(b);
        }
        let range = self.octave_range(tile, data_depth);
        Ok(self.widen_by_detail(b, tile, data_depth, amplitude, range))
    }

    /// A bound on every cell of the amplitude field of data tile
    /// `ancestor` from its index range alone (a cell's twist is at most
    /// half the range).
    fn amplitude_from_index(&self, ancestor: TileAddress) -> Result<f64, SourceError> {
        let a = self.inner.tile_bounds(ancestor)?;
        Ok(self.first * 0.5 * (a.max_elevation - a.min_elevation) * (1.0 + 1e-6))
    }

    /// Bounds of a synthesized tile that read no tile: the inner bounds
    /// widened by [`DetailSource::amplitude_from_index`] times the octave
    /// sum's worst case (what an unreadable data tile on a face edge gets).
    /// A few index lookups, where the exact bounds read the data tile and
    /// refine octave windows: what a frame gives until a worker has
    /// computed the exact ones.
    pub(super) fn loose_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        let b = self.inner.tile_bounds(tile)?;
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok(b) };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let amplitude = self.amplitude_from_index(ancestor)?;
        if amplitude == 0.0 {
            return Ok(b);
        }
        let (up_to, _) = self.coefficient_sums(data_depth, tile.depth());
        Ok(self.widen_by_detail(b, tile, data_depth, amplitude, (-up_to, up_to)))
    }

    /// `b` widened by detail whose amplitude is at most `amplitude` and
    /// whose unit octave sum lies in `(low, high)`, with the error of the
    /// octaves the tile omits and the two its drawn lattice cannot resolve.
    fn widen_by_detail(
        &self,
        mut b: TileBounds,
        tile: TileAddress,
        data_depth: u8,
        amplitude: f64,
        (low, high): (f64, f64),
    ) -> TileBounds {
        let (_, beyond) = self.coefficient_sums(data_depth, tile.depth());
        // The amplitude field lies in [0, amplitude]; the f32 rounding of a
        // sample near the extremes is the slack, with room to spare.
        let slack = 1e-3 + 1e-6 * b.min_elevation.abs().max(b.max_elevation.abs());
        b.min_elevation += amplitude * low.min(0.0) * (1.0 + 1e-9) - slack;
        b.max_elevation += amplitude * high.max(0.0) * (1.0 + 1e-9) + slack;
        let own = self.octave_coefficient(data_depth, tile.depth());
        let previous = if tile.depth() > data_depth + 1 { own / self.gain } else { 0.0 };
        b.geometric_error += amplitude * (beyond + own + 0.5 * previous);
        b.provenance = Provenance::Invented;
        b
    }
}

/// Narrows worst-case bounds to a produced tile's exact range (kept or
/// computed afresh after the cache's wipe: one rule for both).
pub(super) fn narrow(b: &mut TileBounds, (lo, hi): (f64, f64)) {
    b.min_elevation = b.min_elevation.max(lo);
    b.max_elevation = b.max_elevation.min(hi);
}
