//! A raster averaged over a footprint around each pixel: what a bake
//! coarser than the raster's pixels samples.
//!
//! The key decision: averaging happens in the raster's own grid, as a new
//! raster of the same size, extent and CRS, so the bake's one sampling path
//! (bilinear between pixel centres, its edges, its longitude conventions,
//! its PROJ transform) reads it unchanged, and the accuracy audit compares
//! the pack with exactly what the bake meant to store. Pixels are areas: a
//! footprint of 1.4 pixels takes the centre pixel whole and 0.2 of each
//! neighbour.

use std::path::Path;

use gdal::Dataset;
use tempfile::TempPath;

use super::{Raster, RasterError};

impl Raster {
    /// This raster with every pixel replaced by the mean of the raster over
    /// a footprint `footprint.0` pixels wide and `footprint.1` tall centred
    /// on it (pixels as areas: an edge pixel counts for the part inside;
    /// voids left out; the window wraps round a whole-turn raster's
    /// longitude), written to a GeoTIFF in `dir` that lives as long as the
    /// returned path. It is what a bake coarser than the raster's pixels
    /// samples, so each sample is the mean over its footprint and detail
    /// finer than the spacing cannot alias into it (a +-1000 m one-pixel
    /// checkerboard point-sampled coarser than its pixels left 532 m of
    /// spread). The grid, extent and CRS are the raster's own. A strip of
    /// rows at a time.
    pub fn footprint_averaged(
        &self,
        footprint: (f64, f64),
        dir: &Path,
        cache_bytes: usize,
    ) -> Result<(Raster, TempPath), RasterError> {
        let failed = |what: &str, e: gdal::errors::GdalError| RasterError::Unusable {
            path: self.path.clone(),
            reason: format!("averaging it over {:.2} x {:.2} pixels: {what}: {e}", footprint.0, footprint.1),
        };
        let source = Dataset::open(&self.path).map_err(|e| failed("reopening it", e))?;
        let (width, height) = (self.width, self.height);
        let file = tempfile::Builder::new()
            .prefix(".planet-averaged-")
            .suffix(".tif")
            .tempfile_in(dir)
            .map_err(|e| RasterError::Unusable { path: dir.to_owned(), reason: format!("a scratch file: {e}") })?
            .into_temp_path();
        let driver = gdal::DriverManager::get_driver_by_name("GTiff").map_err(|e| failed("GeoTIFF driver", e))?;
        let mut out = driver
            .create_with_band_type::<f32, _>(&file, width, height, self.bands)
            .map_err(|e| failed("creating the scratch GeoTIFF", e))?;
        out.set_geo_transform(&self.transform).map_err(|e| failed("georeferencing", e))?;
        if let Ok(srs) = source.spatial_ref() {
            out.set_spatial_ref(&srs).map_err(|e| failed("setting its CRS", e))?;
        }
        let (across, down) = (Footprint::new(footprint.0), Footprint::new(footprint.1));
        let wraps = self.period_columns == Some(width as i64);
        const STRIP: usize = 256;
        for b in 1..=self.bands {
            let band = source.rasterband(b).map_err(|e| failed("reading a band", e))?;
            let mut target = out.rasterband(b).map_err(|e| failed("writing a band", e))?;
            let nodata = self.nodata[b - 1];
            target.set_no_data_value(Some(nodata.unwrap_or(f64::NAN))).map_err(|e| failed("setting nodata", e))?;
            let (scale, offset) = self.scale_offset[b - 1];
            target.set_scale(scale).map_err(|e| failed("setting its scale", e))?;
            target.set_offset(offset).map_err(|e| failed("setting its offset", e))?;
            let reach = down.reach();
            for row in (0..height).step_by(STRIP) {
                let rows = STRIP.min(height - row);
                let (first, last) = (row.saturating_sub(reach), (row + rows + reach).min(height));
                let read = band
                    .read_as::<f64>((0, first as isize), (width, last - first), (width, last - first), None)
                    .map_err(|e| failed("reading pixels", e))?;
                // (weighted sum, weight) of valid values along each row, then down.
                let valid = |v: f64| !v.is_nan() && nodata.is_none_or(|n| v != n);
                let mut along = Vec::with_capacity(width * (last - first));
                for line in read.data().chunks_exact(width) {
                    let line: Vec<(f64, f64)> =
                        line.iter().map(|&v| if valid(v) { (v, 1.0) } else { (0.0, 0.0) }).collect();
                    for c in 0..width {
                        along.push(across.weighted(c as i64, width as i64, wraps, |k| line[k]));
                    }
                }
                let mut means = vec![0f32; width * rows];
                for y in 0..rows {
                    for c in 0..width {
                        let (s, w) = down.weighted((row + y) as i64, height as i64, false, |k| {
                            if (first..last).contains(&k) { along[(k - first) * width + c] } else { (0.0, 0.0) }
                        });
                        means[y * width + c] =
                            if w <= 0.0 { nodata.unwrap_or(f64::NAN) as f32 } else { (s / w) as f32 };
                    }
                }
                let mut buffer = gdal::raster::Buffer::new((width, rows), means);
                target.write((0, row as isize), (width, rows), &mut buffer).map_err(|e| failed("writing pixels", e))?;
            }
        }
        drop(out);
        Ok((Raster::open(&file, cache_bytes)?, file))
    }
}

/// A footprint `width` pixels wide centred on a pixel, pixels taken as
/// areas: whole pixels within it weigh 1, the two its edges cut weigh the
/// part of them inside.
#[derive(Clone, Copy, Debug)]
struct Footprint {
    /// Whole pixels on each side of the centre one.
    whole: i64,
    /// The weight of the two pixels the footprint's edges cut.
    edge: f64,
}

impl Footprint {
    fn new(width: f64) -> Footprint {
        let reach = (width.max(1.0) - 1.0) / 2.0;
        Footprint { whole: reach.floor() as i64, edge: reach - reach.floor() }
    }

    /// Pixels on either side that any weight reaches.
    fn reach(&self) -> usize {
        (self.whole + 1) as usize
    }

    /// (sum of weight x value, sum of weight) over the footprint around
    /// `centre` in a line of `len` pixels, `parts(k)` giving pixel `k`'s
    /// (value x validity, validity); off the line pixels count for nothing
    /// unless `wraps`, when the line is a whole turn.
    fn weighted(&self, centre: i64, len: i64, wraps: bool, parts: impl Fn(usize) -> (f64, f64)) -> (f64, f64) {
        let (mut sum, mut weight) = (0.0, 0.0);
        let mut add = |k: i64, w: f64| {
            let k = if (0..len).contains(&k) {
                k
            } else if wraps {
                k.rem_euclid(len)
            } else {
                return;
            };
            let (v, n) = parts(k as usize);
            (sum, weight) = (sum + w * v, weight + w * n);
        };
        for k in centre - self.whole..=centre + self.whole {
            add(k, 1.0);
        }
        if self.edge > 0.0 {
            add(centre - self.whole - 1, self.edge);
            add(centre + self.whole + 1, self.edge);
        }
        (sum, weight)
    }
}

#[cfg(test)]
mod tests {
    use super::Footprint;

    #[test]
    fn a_footprint_weighs_pixels_by_the_part_inside_it() {
        let line = [(1.0, 1.0), (2.0, 1.0), (4.0, 1.0), (8.0, 1.0), (16.0, 1.0)];
        // One pixel wide: the pixel itself.
        assert_eq!(Footprint::new(1.0).weighted(2, 5, false, |k| line[k]), (4.0, 1.0));
        // Two wide: the pixel and half of each neighbour.
        assert_eq!(Footprint::new(2.0).weighted(2, 5, false, |k| line[k]), (4.0 + 0.5 * (2.0 + 8.0), 2.0));
        // Off the line's end nothing counts, unless the line is a whole turn.
        assert_eq!(Footprint::new(3.0).weighted(0, 5, false, |k| line[k]), (3.0, 2.0));
        assert_eq!(Footprint::new(3.0).weighted(0, 5, true, |k| line[k]), (19.0, 3.0));
        // A void (weight 0) drops out of both sums.
        let voided = [(1.0, 1.0), (0.0, 0.0), (4.0, 1.0)];
        assert_eq!(Footprint::new(3.0).weighted(1, 3, false, |k| voided[k]), (5.0, 2.0));
    }
}
