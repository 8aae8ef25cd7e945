//! Where a latitude/longitude falls among a raster's pixels (its bilinear
//! taps), and the values read there.
//!
//! The key decision: a tap set is made in two halves, the columns and their
//! weight from the pixel x, the rows and theirs from the pixel y, each by
//! one function. A raster whose pixel x depends on longitude alone (a
//! geographic grid, not rotated) lets a block of samples that share their
//! longitudes column by column (the core of a tile on an equatorial face)
//! make each column's half once and only the row half per sample, with the
//! same functions, so the same bits as one tap set at a time. Each tap set
//! is evaluated as it is made: no tap list is held.

use planet_terrain::geo::address::TILE_STORED_SAMPLES;

use super::{Grid, HeldChunks, Raster, RasterError, Taps};

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

/// Tap sets made before their values are read (`HeldChunks::bilinear_block`).
const TAPS_BLOCK: usize = 131;

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
            // Queries are within a turn of the raster's range: a cheap wrap.
            while px < 0.0 {
                px += p;
            }
            while px >= p {
                px -= p;
            }
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
        let mut held = HeldChunks::new(self, band);
        out.reserve(latitudes.len());
        match self.grid {
            Grid::Geographic { .. } => {
                let mut taps = Vec::with_capacity(TAPS_BLOCK);
                for (lats, lons) in latitudes.chunks(TAPS_BLOCK).zip(longitudes.chunks(TAPS_BLOCK)) {
                    taps.clear();
                    taps.extend(lats.iter().zip(lons).map(|(&lat, &lon)| self.taps_at(lon, lat)));
                    held.bilinear_block(&taps, out)?;
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
        debug_assert!(latitudes.len() == n * n && columns.len() == n - 2);
        let halves: Vec<Option<Half>> = columns
            .iter()
            .map(|&lon| if lon.is_finite() { self.column_half(inv[0] + lon * inv[1]) } else { None })
            .collect();
        let mut held = HeldChunks::new(self, band);
        out.reserve(latitudes.len());
        let mut taps = Vec::with_capacity(n);
        // Row by row, so the core's test is per row and its column half an
        // index: the apron (first and last rows, first and last samples of
        // each row) takes whole tap sets.
        for (j, (lats, lons)) in latitudes.chunks_exact(n).zip(longitudes.chunks_exact(n)).enumerate() {
            let edge = j == 0 || j == n - 1;
            taps.clear();
            taps.extend(lats.iter().zip(lons).enumerate().map(|(i, (&lat, &lon))| {
                if edge || i == 0 || i == n - 1 {
                    self.taps_at(lon, lat)
                } else {
                    let row = if lat.is_finite() { self.row_half(inv[3] + lon * inv[4] + lat * inv[5]) } else { None };
                    halves[i - 1].zip(row).map(|((columns, fx), (rows, fy))| Taps { columns, rows, fx, fy })
                }
            }));
            held.bilinear_block(&taps, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "raster_taps_tests.rs"]
mod tests;
