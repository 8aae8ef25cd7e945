//! Where a latitude/longitude falls among a raster's pixels (its bilinear
//! taps), and the values read there.
//!
//! The key decision: a tap set is made in two halves, the columns and their
//! weight from the pixel x, the rows and theirs from the pixel y, each by
//! one function. A raster whose pixel x depends on longitude alone (a
//! geographic grid, not rotated) lets a block of samples that share their
//! longitudes column by column (the core of a tile on an equatorial face)
//! make each column's half once and only the row half per sample, with the
//! same functions, so the same bits as one tap set at a time. No tap list
//! is held: a row of samples (a tile's row, or 131 places) has its halves
//! made into arrays, then its values gathered, then weighted over arrays
//! (`HeldChunks::gathered_row`), so the loads are not each stuck behind a
//! sample's arithmetic and the weights and divisions run two samples an
//! SSE2 instruction; the rare sample that straddles a chunk, wraps, lies
//! off the rows' plain range or touches nodata is one whole tap set.

use std::sync::Arc;

use planet_terrain::geo::address::TILE_STORED_SAMPLES;

use super::{CHUNK, Grid, HeldChunks, Raster, RasterError, Taps, weighted};

/// `x.floor()` for `|x| < 2^52` by truncation, the same value (the sign of
/// a zero aside) without a call: the x86-64 baseline has no rounding
/// instruction, and each tap set takes two.
#[inline(always)]
fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

/// One half of a tap set: two pixel columns (or rows) and the weight of the
/// second.
type Half = ([u32; 2], f64);

/// The most samples of one gathered row (`HeldChunks::gathered_row`): a
/// tile's row; places in a list go in runs of as many.
const ROW: usize = TILE_STORED_SAMPLES as usize;

/// Pixel x `px` brought within one longitude period `p` of pixels:
/// queries are within a turn of the raster's range, so a cheap wrap.
#[inline(always)]
fn within_turn(mut px: f64, p: f64) -> f64 {
    while px < 0.0 {
        px += p;
    }
    while px >= p {
        px -= p;
    }
    px
}

/// A column half as `HeldChunks::gathered_row` takes it (chunk column,
/// offset in the chunk, weight), if its two columns are neighbours in one
/// chunk (all but a wrapped or clamped edge and one column in 256).
#[inline(always)]
fn fast_column(([c0, c1], fx): Half) -> Option<(usize, usize, f64)> {
    let (c0, c1) = (c0 as usize, c1 as usize);
    (c1 == c0 + 1 && c0 / CHUNK == c1 / CHUNK).then_some((c0 / CHUNK, c0 % CHUNK, fx))
}

impl Raster {
    fn period(&self) -> Option<f64> {
        match self.grid {
            Grid::Geographic { period } => period,
            Grid::Projected { .. } => None,
        }
    }

    /// The column half at pixel x `px`; `None` outside the raster.
    #[inline(always)]
    fn column_half(&self, mut px: f64) -> Option<Half> {
        let w = self.width as f64;
        let period = self.period();
        if let Some(p) = period {
            px = within_turn(px, p);
        } else if !(0.0..=w).contains(&px) {
            // A regional geographic raster may use another longitude
            // convention than the query: try one turn either way.
            let turn = 360.0 * self.inverse[1].abs();
            let candidates = [px + turn, px - turn];
            px = match (
                matches!(self.grid, Grid::Geographic { .. }),
                candidates.iter().find(|c| (0.0..=w).contains(*c)),
            ) {
                (true, Some(&c)) => c,
                _ => return None,
            };
        }
        // Pixel centres sit at +0.5.
        let x = px - 0.5;
        let x0 = floor(x);
        // The period in whole columns: `rem_euclid` by it, with the division
        // only for a column more than one turn out (never, after the wrap
        // above).
        let turn = self.period_columns;
        let column = |c: f64| -> u32 {
            match turn {
                Some(n) => {
                    let c = c as i64;
                    let wrapped = if (0..n).contains(&c) {
                        c
                    } else if c < 0 && c >= -n {
                        c + n
                    } else if c >= n && c < 2 * n {
                        c - n
                    } else {
                        c.rem_euclid(n)
                    };
                    (wrapped as usize).min(self.width - 1) as u32
                }
                None => c.clamp(0.0, w - 1.0) as u32,
            }
        };
        Some(([column(x0), column(x0 + 1.0)], x - x0))
    }

    /// [`Raster::column_half`] at a finite pixel x `px` as
    /// [`HeldChunks::gathered_row`] takes it, where its two columns are
    /// neighbours inside the raster and one chunk (`None` otherwise, for
    /// the whole tap set to decide: a wrapped or clamped edge, another
    /// longitude convention). The same columns and weight by a shorter
    /// road: one turn's wrap, then no column wrap or clamp to test.
    #[inline(always)]
    fn plain_column(&self, mut px: f64) -> Option<(usize, usize, f64)> {
        let w = self.width as f64;
        match self.period() {
            Some(p) => px = within_turn(px, p),
            None if !(0.0..=w).contains(&px) => return None,
            None => {}
        }
        let x = px - 0.5;
        let x0 = floor(x);
        let c = x0 as i64;
        // Below it neither column wraps (a turn is `period_columns`) nor
        // is clamped (to the last column).
        let limit = self.period_columns.map_or(self.width as i64, |n| n.min(self.width as i64));
        if c < 0 || c + 1 >= limit {
            return None;
        }
        fast_column(([c as u32, c as u32 + 1], x - x0))
    }

    /// The row half at pixel y `py`; `None` outside the raster.
    #[inline(always)]
    fn row_half(&self, py: f64) -> Option<Half> {
        let h = self.height as f64;
        if py >= 0.5 && py < h - 0.5 {
            // Between the first and last rows' centres (nearly always): the
            // clamps below change nothing there, so the same taps without them.
            let y = py - 0.5;
            let y0 = floor(y);
            let row = y0 as u32;
            return Some(([row, row + 1], y - y0));
        }
        if !(0.0..=h).contains(&py) {
            // Beyond the last row: only a pole the raster stops just short of.
            if self.period().is_some() && (py > -1.0 && py < h + 1.0) {
            } else {
                return None;
            }
        }
        let y = (py - 0.5).clamp(0.0, h - 1.0);
        let y0 = floor(y).min(h - 1.0);
        let row = |r: f64| r.clamp(0.0, h - 1.0) as u32;
        Some(([row(y0), row(y0 + 1.0)], y - y0))
    }

    /// The tap set at the raster's place nearest CRS coordinates
    /// `(cx, cy)` in pixel space (a regional geographic raster's other
    /// longitude conventions considered); `None` for a point that is not
    /// finite.
    pub(super) fn clamped_taps_at(&self, cx: f64, cy: f64) -> Option<Taps> {
        if !(cx.is_finite() && cy.is_finite()) {
            return None;
        }
        let inv = &self.inverse;
        let (mut px, py) = (inv[0] + cx * inv[1] + cy * inv[2], inv[3] + cx * inv[4] + cy * inv[5]);
        let (w, h) = (self.width as f64, self.height as f64);
        if self.period().is_none() {
            let off = |c: f64| if c < 0.0 { -c } else { (c - w).max(0.0) };
            if matches!(self.grid, Grid::Geographic { .. }) {
                let turn = 360.0 * inv[1].abs();
                px = [px, px + turn, px - turn].into_iter().min_by(|a, b| off(*a).total_cmp(&off(*b))).expect("three");
            }
            px = px.clamp(0.0, w);
        }
        let (columns, fx) = self.column_half(px)?;
        let (rows, fy) = self.row_half(py.clamp(0.0, h))?;
        Some(Taps { columns, rows, fx, fy })
    }

    /// The tap set at CRS coordinates `(cx, cy)`; `None` outside the raster.
    #[inline(always)]
    pub(super) fn taps_at(&self, cx: f64, cy: f64) -> Option<Taps> {
        if !(cx.is_finite() && cy.is_finite()) {
            return None;
        }
        let inv = &self.inverse;
        let (px, py) = (inv[0] + cx * inv[1] + cy * inv[2], inv[3] + cx * inv[4] + cy * inv[5]);
        let (columns, fx) = self.column_half(px)?;
        let (rows, fy) = self.row_half(py)?;
        Some(Taps { columns, rows, fx, fy })
    }

    /// Bilinear values of `band` at each `(latitudes[k], longitudes[k])`
    /// (degrees), appended to `out`: [`Raster::taps`] then
    /// [`Raster::evaluate`], the same arithmetic, without a tap list in
    /// memory for a geographic raster. A projected raster transforms the
    /// points in one batch through PROJ first.
    pub fn bilinear_at(
        &self,
        band: usize,
        latitudes: &[f64],
        longitudes: &[f64],
        out: &mut Vec<Option<f64>>,
    ) -> Result<(), RasterError> {
        assert_eq!(latitudes.len(), longitudes.len(), "one longitude for each latitude");
        let mut held = HeldChunks::new(self, band);
        out.reserve(latitudes.len());
        match self.grid {
            Grid::Geographic { .. } => {
                for (lats, lons) in latitudes.chunks(ROW).zip(longitudes.chunks(ROW)) {
                    self.bilinear_row(&mut held, lats, lons, out)?;
                }
            }
            Grid::Projected { .. } => {
                let points: Vec<(f64, f64)> = latitudes.iter().copied().zip(longitudes.iter().copied()).collect();
                for t in self.taps(&points)? {
                    out.push(t.as_ref().map_or(Ok(None), |t| held.bilinear(t))?);
                }
            }
        }
        Ok(())
    }

    /// The value at one place as a whole tap set: what every fast path
    /// leaves a place it cannot take to.
    fn one_tap_set(&self, held: &mut HeldChunks, lon: f64, lat: f64) -> Result<Option<f64>, RasterError> {
        match self.taps_at(lon, lat) {
            Some(t) => held.bilinear(&t),
            None => Ok(None),
        }
    }

    /// The bilinear values of a row of at most `ROW` places of a
    /// geographic raster, appended to `out`: each place's column half made
    /// alone, then [`HeldChunks::gathered_row`].
    fn bilinear_row(
        &self,
        held: &mut HeldChunks,
        lats: &[f64],
        lons: &[f64],
        out: &mut Vec<Option<f64>>,
    ) -> Result<(), RasterError> {
        let inv = &self.inverse;
        let mut columns = [None; ROW];
        let mut py = [0.0; ROW];
        for (k, (&lat, &lon)) in lats.iter().zip(lons).enumerate() {
            let finite = lat.is_finite() && lon.is_finite();
            columns[k] = if finite { self.plain_column(inv[0] + lon * inv[1] + lat * inv[2]) } else { None };
            py[k] = inv[3] + lon * inv[4] + lat * inv[5];
        }
        let slow = |held: &mut HeldChunks, k: usize| self.one_tap_set(held, lons[k], lats[k]);
        let len = lats.len();
        held.gathered_row(&columns[..len], &py[..len], self.height as f64, slow, out)
    }

    /// [`Raster::bilinear_at`] over one tile's stored samples (stored order,
    /// 131 x 131), the same values, where `core_columns`, if given, is the
    /// longitude every core row (stored rows and columns 1..=129) has in each
    /// core column. On a geographic raster that is not rotated the pixel x
    /// is `inv0 + lon inv1` (the latitude's term is a zero, which changes
    /// no sum), so each core column's half is made once.
    pub fn bilinear_tile(
        &self,
        band: usize,
        latitudes: &[f64],
        longitudes: &[f64],
        core_columns: Option<&[f64]>,
        out: &mut Vec<Option<f64>>,
    ) -> Result<(), RasterError> {
        let inv = &self.inverse;
        let separable = matches!(self.grid, Grid::Geographic { .. }) && inv[2] == 0.0 && inv[4] == 0.0;
        let Some(columns) = core_columns.filter(|_| separable) else {
            return self.bilinear_at(band, latitudes, longitudes, out);
        };
        let n = TILE_STORED_SAMPLES as usize;
        assert!(latitudes.len() == n * n && longitudes.len() == n * n && columns.len() == n - 2, "one tile's places");
        let halves: Vec<Option<Half>> = columns
            .iter()
            .map(|&lon| if lon.is_finite() { self.column_half(inv[0] + lon * inv[1]) } else { None })
            .collect();
        // Each core column's chunk and offset in it, where its two columns
        // share a chunk (nearly always): the fast path's column half.
        let fast_columns: Vec<Option<(usize, usize, f64)>> = halves.iter().map(|h| h.and_then(fast_column)).collect();
        let mut held = HeldChunks::new(self, band);
        out.reserve(latitudes.len());
        let mut py = vec![0.0; n - 2];
        // Row by row: the first and last rows go as any places do, the
        // first and last samples of each row (the apron) as whole tap sets,
        // and the core of a row takes its column halves by index.
        for (j, (lats, lons)) in latitudes.chunks_exact(n).zip(longitudes.chunks_exact(n)).enumerate() {
            if j == 0 || j == n - 1 {
                self.bilinear_row(&mut held, lats, lons, out)?;
                continue;
            }
            let (lats, lons) = (&lats[1..n - 1], &lons[1..n - 1]);
            for ((p, &lat), &lon) in py.iter_mut().zip(lats).zip(lons) {
                *p = inv[3] + lon * inv[4] + lat * inv[5];
            }
            out.push(self.one_tap_set(&mut held, longitudes[j * n], latitudes[j * n])?);
            // A core sample the fast path leaves: its whole tap set, as
            // `taps_at` would make it with the column half shared.
            let slow = |held: &mut HeldChunks, k: usize| -> Result<Option<f64>, RasterError> {
                let row = if lats[k].is_finite() { self.row_half(py[k]) } else { None };
                match halves[k].zip(row) {
                    Some(((columns, fx), (rows, fy))) => held.bilinear(&Taps { columns, rows, fx, fy }),
                    None => Ok(None),
                }
            };
            held.gathered_row(&fast_columns, &py, self.height as f64, slow, out)?;
            out.push(self.one_tap_set(&mut held, longitudes[j * n + n - 1], latitudes[j * n + n - 1])?);
        }
        Ok(())
    }
}

impl HeldChunks<'_> {
    /// The bilinear values of a row of samples (at most a tile's 131),
    /// appended to `out`: `columns` holds each sample's column half as its
    /// chunk column, offset in the chunk and weight (`None` where its two
    /// pixel columns straddle a chunk or wrap, or the sample is not
    /// finite), `py` each sample's pixel y. The fast path is `row_half`'s
    /// first case and `bilinear`'s no-nodata arithmetic with no tap set
    /// made: the values are gathered first (one chunk check per sample, the
    /// chunk held by the row while it stays the same), then weighted over
    /// arrays, the same sums in the same order, so the same bits. Every
    /// other sample (off the rows' fast range, straddling a chunk row,
    /// touching nodata) is `slow(self, k)`.
    fn gathered_row(
        &mut self,
        columns: &[Option<(usize, usize, f64)>],
        py: &[f64],
        height: f64,
        mut slow: impl FnMut(&mut Self, usize) -> Result<Option<f64>, RasterError>,
        out: &mut Vec<Option<f64>>,
    ) -> Result<(), RasterError> {
        let len = py.len();
        assert!(len <= ROW && columns.len() == len, "a row of at most {ROW} samples");
        let mut values = [[0.0f32; 4]; ROW];
        let mut fx = [0.0f64; ROW];
        let mut fy = [0.0f64; ROW];
        let mut fast = [false; ROW];
        let mut current: Option<(super::ChunkKey, Arc<Vec<f32>>)> = None;
        for (k, (&p, column)) in py.iter().zip(columns).enumerate() {
            let Some((chunk_column, offset, column_fx)) = *column else { continue };
            if !(p >= 0.5 && p < height - 0.5) {
                continue;
            }
            let y = p - 0.5;
            let y0 = floor(y);
            let row = y0 as u32 as usize;
            if row % CHUNK == CHUNK - 1 {
                continue;
            }
            let key = (self.band, chunk_column, row / CHUNK);
            if current.as_ref().is_none_or(|c| c.0 != key) {
                self.hold(key)?;
                current = Some((key, self.held[self.last].1.clone()));
            }
            let chunk = &current.as_ref().expect("just held").1;
            let base = (row % CHUNK) * CHUNK + offset;
            let quad = &chunk[base..base + CHUNK + 2];
            values[k] = [quad[0], quad[1], quad[CHUNK], quad[CHUNK + 1]];
            (fx[k], fy[k], fast[k]) = (column_fx, y - y0, true);
        }
        let mut result = [0.0f64; ROW];
        let mut clean = [false; ROW];
        for k in 0..len {
            let v = values[k];
            let (sum, weight) = weighted(v, fx[k], fy[k]);
            result[k] = sum / weight;
            clean[k] = !(v[0] + v[1] + v[2] + v[3]).is_nan() && weight > 1e-9;
        }
        for k in 0..len {
            out.push(if fast[k] && clean[k] { Some(result[k]) } else { slow(self, k)? });
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "taps_tests.rs"]
mod tests;
