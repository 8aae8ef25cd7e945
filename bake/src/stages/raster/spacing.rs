//! The ground distance between a raster's pixels: what the bake's default
//! depth keeps (`sampling::supported_depth`).
//!
//! The key decision: spacing is measured on the ground where the raster
//! lies, not in its CRS units at the equator: a geographic raster's
//! longitude steps shrink with the cosine of its latitude, and a projected
//! raster's units are scaled to metres by its CRS.

use gdal::spatial_ref::SpatialRef;

use super::{Grid, Raster, RasterError};

/// The ground distance between a raster's neighbouring pixels
/// ([`Raster::pixel_spacing_m`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelSpacing {
    /// From one column to the next (east-west on a plain geographic grid).
    pub along_row_m: f64,
    /// From one row to the next (north-south on a plain geographic grid).
    pub along_column_m: f64,
}

impl PixelSpacing {
    /// The finer of the two: what a depth must sample at to keep them both.
    pub fn finest_m(&self) -> f64 {
        self.along_row_m.min(self.along_column_m)
    }

    /// The coarser of the two.
    pub fn coarsest_m(&self) -> f64 {
        self.along_row_m.max(self.along_column_m)
    }
}

impl Raster {
    /// The ground distance between neighbouring pixels along the raster's
    /// columns and rows, in metres on a sphere of `radius`. Geographic:
    /// at the raster's own latitude nearest the equator, where its
    /// longitude steps are longest (a 0.00275 degree column step is 306 m at
    /// the equator but 234 m at 40 N, and only the second is what the DEM
    /// measured). Projected: the CRS's linear units in metres.
    pub fn pixel_spacing_m(&self, radius: f64) -> Result<PixelSpacing, RasterError> {
        let t = &self.transform;
        let (column, row) = ((t[1], t[4]), (t[2], t[5]));
        Ok(match &self.grid {
            Grid::Geographic { .. } => {
                let extent = self.extent()?;
                let nearest_equator = if extent.bounds.south <= 0.0 && extent.bounds.north >= 0.0 {
                    0.0
                } else {
                    extent.bounds.south.abs().min(extent.bounds.north.abs())
                };
                let cos = nearest_equator.to_radians().cos();
                let metres = |(lon, lat): (f64, f64)| (lon * cos).hypot(lat).to_radians() * radius;
                PixelSpacing { along_row_m: metres(column), along_column_m: metres(row) }
            }
            Grid::Projected { wkt } => {
                let unit = SpatialRef::from_wkt(wkt).map(|s| s.linear_units()).unwrap_or(1.0);
                let unit = if unit.is_finite() && unit > 0.0 { unit } else { 1.0 };
                let metres = |(x, y): (f64, f64)| x.hypot(y) * unit;
                PixelSpacing { along_row_m: metres(column), along_column_m: metres(row) }
            }
        })
    }
}
