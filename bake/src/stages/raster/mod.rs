//! A GDAL raster as something that answers "what is the value at this
//! latitude/longitude".
//!
//! The key decision: every lookup goes through the raster's own
//! georeferencing (its geotransform and CRS, as GDAL reports them), never
//! through assumptions about the file. Geographic rasters are addressed in
//! their own longitude convention (-180..180, 0..360, anything), with the
//! longitude period detected so a global grid wraps and a duplicated wrap
//! column is not counted twice; rows may run north-up or south-up; a
//! projected raster has each point transformed by GDAL/PROJ. Values are read
//! in fixed chunks through a cache bounded in bytes (least recently used
//! chunks go first), and one evaluation holds at most `CHUNKS_IN_FLIGHT`
//! chunks (`HeldChunks`) however coarse its tile is against the pixels, so memory stays
//! bounded whatever the raster's size; each worker thread reads through its
//! own dataset handle from a pool (GDAL handles are not shareable between
//! threads).
//!
//! The filter is bilinear between pixel centres. A tap that is nodata drops
//! out and the remaining weights are renormalised; a point with no valid
//! tap has no value.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gdal::Dataset;
use gdal::spatial_ref::{AxisMappingStrategy, CoordTransform, SpatialRef};
use planet_terrain::pack::Coverage;

/// Why a raster could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error("{path}: cannot open as a raster: {cause}")]
    Open { path: PathBuf, cause: Box<gdal::errors::GdalError> },
    #[error("{path}: {reason}")]
    Unusable { path: PathBuf, reason: String },
    #[error("{path}: reading pixels {x}..{}, {y}..{} of band {band}: {cause}", x + w, y + h)]
    Read { path: PathBuf, band: usize, x: usize, y: usize, w: usize, h: usize, cause: Box<gdal::errors::GdalError> },
    #[error("{path}: transforming coordinates into the raster's CRS: {cause}")]
    Transform { path: PathBuf, cause: Box<gdal::errors::GdalError> },
}

const CHUNK: usize = 256;
/// Bytes of one decoded chunk (f32 values).
pub const CHUNK_BYTES: usize = CHUNK * CHUNK * 4;
/// The most chunks one evaluation holds at once (8 MiB), whatever the
/// tile's footprint in the raster: what a worker keeps in flight beyond the
/// shared cache.
pub const CHUNKS_IN_FLIGHT: usize = 32;
/// The fewest chunks a raster's cache holds (4 MiB).
pub const MIN_CACHED_CHUNKS: usize = 16;

/// How the raster's coordinates relate to latitude/longitude.
#[derive(Clone, Debug)]
enum Grid {
    /// Longitude/latitude degrees; `period` is the longitude period in
    /// pixels when the raster goes all the way round.
    Geographic { period: Option<f64> },
    /// A projected CRS (WKT), reached through GDAL/PROJ per point.
    Projected { wkt: String },
}

/// A raster band (or several, for imagery) opened for sampling.
#[derive(Debug)]
pub struct Raster {
    path: PathBuf,
    width: usize,
    height: usize,
    bands: usize,
    transform: [f64; 6],
    inverse: [f64; 6],
    grid: Grid,
    /// The longitude period in whole columns (`period.round()`), made once:
    /// without SSE4.1 a rounding is a libm call, and every tap set took one.
    period_columns: Option<i64>,
    nodata: Vec<Option<f64>>,
    scale_offset: Vec<(f64, f64)>,
    pool: Mutex<Vec<Dataset>>,
    cache: Mutex<ChunkCache>,
    /// Each pixel read as the mean over a footprint around it
    /// ([`Raster::read_averaged`]).
    averaging: Option<average::Averaging>,
}

/// A chunk is addressed by (band, chunk column, chunk row).
type ChunkKey = (usize, usize, usize);

#[derive(Debug, Default)]
struct ChunkCache {
    /// Decoded chunks with the clock tick of their last use.
    chunks: HashMap<ChunkKey, (Arc<Vec<f32>>, u64)>,
    clock: u64,
    capacity: usize,
}

/// Pixel taps and weights for one point, ready to evaluate on any band.
#[derive(Clone, Copy, Debug)]
pub struct Taps {
    /// Left and right pixel columns, top and bottom rows (32 bytes a tap
    /// set: a tile asks for 17,161 of them per band).
    columns: [u32; 2],
    rows: [u32; 2],
    fx: f64,
    fy: f64,
}

impl Taps {
    fn weight(&self, k: usize) -> f64 {
        let wx = if k & 1 == 0 { 1.0 - self.fx } else { self.fx };
        let wy = if k >> 1 == 0 { 1.0 - self.fy } else { self.fy };
        wx * wy
    }
}

/// The bilinear sum and weight of four values with no nodata among them:
/// `Taps::weight`'s weights, summed in tap order, the same sums as the
/// nodata-aware loop of `HeldChunks::bilinear` when every tap counts. The
/// one arithmetic of a tap set at a time and of a gathered row
/// (`HeldChunks::gathered_row`), so both give the same bits.
#[inline(always)]
fn weighted(values: [f32; 4], fx: f64, fy: f64) -> (f64, f64) {
    let w = [(1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy];
    let mut sum = 0.0;
    let mut weight = 0.0;
    for k in 0..4 {
        sum += f64::from(values[k]) * w[k];
        weight += w[k];
    }
    (sum, weight)
}

/// The chunks one evaluation holds (at most `CHUNKS_IN_FLIGHT`, however
/// coarse its tile is against the pixels: holding every chunk a coarse tile
/// touches would make a worker's memory grow with the raster's resolution),
/// fetched from the shared cache on first use and read lock-free after. The
/// last chunk used is checked first: consecutive taps nearly always share it.
#[derive(Debug)]
pub struct HeldChunks<'r> {
    raster: &'r Raster,
    band: usize,
    held: Vec<(ChunkKey, Arc<Vec<f32>>)>,
    last: usize,
}

impl<'r> HeldChunks<'r> {
    pub fn new(raster: &'r Raster, band: usize) -> HeldChunks<'r> {
        HeldChunks { raster, band, held: Vec::with_capacity(CHUNKS_IN_FLIGHT), last: 0 }
    }

    #[inline]
    fn value(&mut self, c: usize, r: usize) -> Result<f32, RasterError> {
        let key = (self.band, c / CHUNK, r / CHUNK);
        if self.held.get(self.last).is_none_or(|h| h.0 != key) {
            self.hold(key)?;
        }
        Ok(self.held[self.last].1[(r % CHUNK) * CHUNK + (c % CHUNK)])
    }

    /// Makes `key` the last chunk used, fetching it if it is not held (and
    /// letting all go first if `CHUNKS_IN_FLIGHT` are).
    #[cold]
    fn hold(&mut self, key: ChunkKey) -> Result<(), RasterError> {
        if let Some(k) = self.held.iter().position(|(h, _)| *h == key) {
            self.last = k;
            return Ok(());
        }
        if self.held.len() >= CHUNKS_IN_FLIGHT {
            self.held.clear();
        }
        self.held.push((key, self.raster.chunk(key.0, key.1, key.2)?));
        self.last = self.held.len() - 1;
        Ok(())
    }

    /// The bilinear value of one tap set: nodata taps drop out and the
    /// others' weights are renormalised; `None` if all four are nodata.
    #[inline(always)]
    fn bilinear(&mut self, t: &Taps) -> Result<Option<f64>, RasterError> {
        let [c0, c1] = t.columns.map(|c| c as usize);
        let [r0, r1] = t.rows.map(|r| r as usize);
        let values: [f32; 4] = if c0 / CHUNK == c1 / CHUNK && r0 / CHUNK == r1 / CHUNK {
            // All four in one chunk (nearly always): one key check.
            let key = (self.band, c0 / CHUNK, r0 / CHUNK);
            if self.held.get(self.last).is_none_or(|h| h.0 != key) {
                self.hold(key)?;
            }
            let chunk = &self.held[self.last].1;
            let base = (r0 % CHUNK) * CHUNK + (c0 % CHUNK);
            if c1 == c0 + 1 && r1 == r0 + 1 {
                // Neighbouring columns and rows (all but clamped or wrapped
                // edges): one bounds check for the four.
                let block = &chunk[base..base + CHUNK + 2];
                [block[0], block[1], block[CHUNK], block[CHUNK + 1]]
            } else {
                let at = |c: usize, r: usize| chunk[(r % CHUNK) * CHUNK + (c % CHUNK)];
                [at(c0, r0), at(c1, r0), at(c0, r1), at(c1, r1)]
            }
        } else {
            [self.value(c0, r0)?, self.value(c1, r0)?, self.value(c0, r1)?, self.value(c1, r1)?]
        };
        if !(values[0] + values[1] + values[2] + values[3]).is_nan() {
            // No nodata tap (nearly always): the loop below without its
            // branches.
            let (sum, weight) = weighted(values, t.fx, t.fy);
            return Ok((weight > 1e-9).then(|| sum / weight));
        }
        let (mut sum, mut weight) = (0.0, 0.0);
        for (k, v) in values.into_iter().enumerate() {
            if !v.is_nan() {
                let w = t.weight(k);
                sum += f64::from(v) * w;
                weight += w;
            }
        }
        Ok((weight > 1e-9).then(|| sum / weight))
    }
}

/// The box a raster covers, in degrees (west > east crosses the antimeridian),
/// and whether its columns wrap all the way round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    pub bounds: Coverage,
    pub global_longitude: bool,
}

fn invert(gt: &[f64; 6]) -> Option<[f64; 6]> {
    let det = gt[1] * gt[5] - gt[2] * gt[4];
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let (a, b, d, e) = (gt[5] / det, -gt[2] / det, -gt[4] / det, gt[1] / det);
    Some([-(a * gt[0] + b * gt[3]), a, b, -(d * gt[0] + e * gt[3]), d, e])
}

/// The shortest longitude interval (west, east), degrees, that holds every
/// one of `lons`: the circle less its widest gap between neighbouring
/// longitudes. West > east when that interval crosses the antimeridian, as
/// a projected raster over Fiji's or the Aleutians' does; a plain minimum
/// and maximum would make its box go the long way round the globe.
fn longitude_span(mut lons: Vec<f64>) -> (f64, f64) {
    // PROJ answers in -180..180 already; a longitude turned needlessly
    // would change the box's last bits, and with them the pack's bytes.
    for lon in lons.iter_mut().filter(|lon| !(-180.0..=180.0).contains(*lon)) {
        *lon = (*lon + 180.0).rem_euclid(360.0) - 180.0;
    }
    lons.sort_by(f64::total_cmp);
    let (Some(&first), Some(&last)) = (lons.first(), lons.last()) else { return (-180.0, 180.0) };
    // The gap from the last longitude round to the first is the plain box's outside.
    let (mut west, mut east, mut widest) = (first, last, first + 360.0 - last);
    for pair in lons.windows(2) {
        if pair[1] - pair[0] > widest {
            (west, east, widest) = (pair[1], pair[0], pair[1] - pair[0]);
        }
    }
    (west, east)
}

fn wgs84() -> Result<SpatialRef, gdal::errors::GdalError> {
    let mut srs = SpatialRef::from_epsg(4326)?;
    srs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    Ok(srs)
}

/// The largest pixel a geographic raster may have, degrees: a pixel wider
/// than the whole globe (or taller than pole to pole) describes no grid.
const MAX_GEOGRAPHIC_PIXEL: [f64; 2] = [360.0, 180.0];
/// The largest pixel a projected raster may have, in its CRS units (metres):
/// wider than any body Planet bakes.
const MAX_PROJECTED_PIXEL: f64 = 1.0e7;

/// Why a geotransform cannot describe a raster's pixels, if it cannot: a
/// coefficient that is not finite, a pixel of zero width or height, or one
/// larger than the body it would cover.
fn absurd_pixel(transform: &[f64; 6], projected: bool) -> Option<String> {
    if transform.iter().any(|v| !v.is_finite()) {
        return Some(format!("geotransform {transform:?} has a coefficient that is not a finite number"));
    }
    let width = transform[1].hypot(transform[4]);
    let height = transform[2].hypot(transform[5]);
    if width == 0.0 || height == 0.0 {
        return Some(format!(
            "geotransform {transform:?} gives its pixels zero size ({width} x {height}); a pixel must have a width and a height"
        ));
    }
    let (limit, unit) =
        if projected { ([MAX_PROJECTED_PIXEL; 2], "CRS units") } else { (MAX_GEOGRAPHIC_PIXEL, "degrees") };
    (width > limit[0] || height > limit[1]).then(|| {
        format!(
            "geotransform {transform:?} makes each pixel {width} x {height} {unit}, larger than the rule allows ({} x {} {unit} at most); the georeferencing is wrong",
            limit[0], limit[1]
        )
    })
}

impl Raster {
    /// Opens a raster; `cache_bytes` bounds the decoded-chunk cache.
    pub fn open(path: &Path, cache_bytes: usize) -> Result<Raster, RasterError> {
        let unusable = |reason: String| RasterError::Unusable { path: path.to_owned(), reason };
        // A file in one of GDAL's virtual file systems (/vsicurl/...) is
        // GDAL's to find; it says so when it cannot.
        if !path.exists() && !crate::vsi::is_virtual(path) {
            return Err(unusable("no such file".into()));
        }
        let dataset = Dataset::open(path)
            .map_err(|source| RasterError::Open { path: path.to_owned(), cause: Box::new(source) })?;
        let (width, height) = dataset.raster_size();
        let bands = dataset.raster_count();
        if width == 0 || height == 0 || bands == 0 {
            return Err(unusable(format!("the raster is empty ({width} x {height} pixels, {bands} bands)")));
        }
        let transform = dataset.geo_transform().map_err(|_| {
            unusable("has no georeferencing (no geotransform); give it one, e.g. with a .vrt or world file".into())
        })?;
        if let Some(reason) = absurd_pixel(&transform, dataset.spatial_ref().ok().is_some_and(|s| s.is_projected())) {
            return Err(unusable(reason));
        }
        let inverse = invert(&transform).ok_or_else(|| unusable(format!("geotransform {transform:?} is singular")))?;
        let srs = dataset.spatial_ref().ok();
        let grid = match &srs {
            Some(s) if s.is_projected() => {
                Grid::Projected { wkt: s.to_wkt().map_err(|e| unusable(format!("cannot read its CRS: {e}")))? }
            }
            // Geographic, or no CRS at all (read as longitude/latitude degrees).
            _ => {
                let rotated = transform[2] != 0.0 || transform[4] != 0.0;
                let period = if rotated { None } else { Some(360.0 / transform[1].abs()) };
                let spans = width as f64 * transform[1].abs();
                Grid::Geographic { period: period.filter(|_| spans >= 360.0 - 1e-6 * 360.0) }
            }
        };
        if let Grid::Geographic { .. } = grid {
            let (lon0, lat0) = (transform[0], transform[3]);
            let lat1 = lat0 + height as f64 * transform[5];
            // Node-registered grids put pixel centres on the poles, so their
            // edges reach half a pixel beyond.
            let slack = transform[5].abs() + 1e-6;
            if !(lat0.max(lat1) <= 90.0 + slack && lat0.min(lat1) >= -90.0 - slack && (-540.0..=540.0).contains(&lon0))
            {
                return Err(unusable(format!(
                    "its geotransform {transform:?} does not describe longitude/latitude degrees (latitudes {lat1}..{lat0}); a projected raster needs its CRS set"
                )));
            }
        }
        let mut nodata = Vec::with_capacity(bands);
        let mut scale_offset = Vec::with_capacity(bands);
        for b in 1..=bands {
            let band = dataset.rasterband(b).map_err(|e| unusable(format!("band {b}: {e}")))?;
            nodata.push(band.no_data_value());
            scale_offset.push((band.scale().unwrap_or(1.0), band.offset().unwrap_or(0.0)));
        }
        Ok(Raster {
            path: path.to_owned(),
            width,
            height,
            bands,
            transform,
            inverse,
            period_columns: match grid {
                Grid::Geographic { period } => period.map(|p| p.round() as i64),
                Grid::Projected { .. } => None,
            },
            grid,
            nodata,
            scale_offset,
            pool: Mutex::new(vec![dataset]),
            cache: Mutex::new(ChunkCache {
                capacity: (cache_bytes / CHUNK_BYTES).max(MIN_CACHED_CHUNKS),
                ..Default::default()
            }),
            averaging: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    pub fn bands(&self) -> usize {
        self.bands
    }

    pub fn is_projected(&self) -> bool {
        matches!(self.grid, Grid::Projected { .. })
    }

    /// The latitude/longitude box the raster covers.
    pub fn extent(&self) -> Result<Extent, RasterError> {
        let corners =
            [(0.0, 0.0), (self.width as f64, 0.0), (0.0, self.height as f64), (self.width as f64, self.height as f64)];
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (px, py) in corners {
            points.push(self.pixel_to_crs(px, py));
        }
        match &self.grid {
            Grid::Geographic { period } => {
                let lats = points.iter().map(|p| p.1);
                let (south, north) = lats.fold((90.0f64, -90.0f64), |(s, n), v| (s.min(v), n.max(v)));
                let lons: Vec<f64> = points.iter().map(|p| p.0).collect();
                let (w, e) = lons.iter().fold((f64::MAX, f64::MIN), |(w, e), &v| (w.min(v), e.max(v)));
                let wrap = |v: f64| (v + 180.0).rem_euclid(360.0) - 180.0;
                let global_longitude = period.is_some();
                let (west, east) = if global_longitude { (-180.0, 180.0) } else { (wrap(w), wrap(e)) };
                let bounds = Coverage { south: south.max(-90.0), west, north: north.min(90.0), east };
                Ok(Extent { bounds, global_longitude })
            }
            Grid::Projected { .. } => {
                // Sample the border densely: projected edges are curves in lat/lon.
                let mut border = Vec::new();
                for k in 0..=64 {
                    let t = k as f64 / 64.0;
                    for (px, py) in [
                        (t * self.width as f64, 0.0),
                        (t * self.width as f64, self.height as f64),
                        (0.0, t * self.height as f64),
                        (self.width as f64, t * self.height as f64),
                    ] {
                        border.push(self.pixel_to_crs(px, py));
                    }
                }
                let lonlat = self.crs_to_lonlat(&border)?;
                let (mut s, mut n) = (90.0f64, -90.0f64);
                for &(_, lat) in &lonlat {
                    s = s.min(lat);
                    n = n.max(lat);
                }
                // A pole inside the raster (a polar stereographic DEM) lies on
                // no edge, so the border alone would leave out everything
                // between the edge's latitude and the pole: the box reaches
                // that pole, at every longitude.
                let poles = self.taps(&[(-90.0, 0.0), (90.0, 0.0)])?;
                let (south_pole, north_pole) = (poles[0].is_some(), poles[1].is_some());
                let (west, east) = if south_pole || north_pole {
                    (-180.0, 180.0)
                } else {
                    longitude_span(lonlat.iter().map(|p| p.0).collect())
                };
                let south = if south_pole { -90.0 } else { s };
                let north = if north_pole { 90.0 } else { n };
                Ok(Extent { bounds: Coverage { south, west, north, east }, global_longitude: false })
            }
        }
    }

    fn pixel_to_crs(&self, px: f64, py: f64) -> (f64, f64) {
        let g = &self.transform;
        (g[0] + px * g[1] + py * g[2], g[3] + px * g[4] + py * g[5])
    }

    fn crs_to_lonlat(&self, points: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, RasterError> {
        let Grid::Projected { wkt } = &self.grid else { return Ok(points.to_vec()) };
        let transform_error = |source| RasterError::Transform { path: self.path.clone(), cause: Box::new(source) };
        let mut source = SpatialRef::from_wkt(wkt).map_err(transform_error)?;
        source.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
        let t = CoordTransform::new(&source, &wgs84().map_err(transform_error)?).map_err(transform_error)?;
        let mut x: Vec<f64> = points.iter().map(|p| p.0).collect();
        let mut y: Vec<f64> = points.iter().map(|p| p.1).collect();
        t.transform_coords(&mut x, &mut y, &mut []).map_err(transform_error)?;
        Ok(x.into_iter().zip(y).collect())
    }

    /// Bilinear taps for each (lat, lon) in degrees; `None` where the point
    /// lies outside the raster.
    pub fn taps(&self, points: &[(f64, f64)]) -> Result<Vec<Option<Taps>>, RasterError> {
        Ok(self.crs_points(points)?.into_iter().map(|(cx, cy)| self.taps_at(cx, cy)).collect())
    }

    /// Bilinear taps for each (lat, lon) in degrees at the raster's place
    /// nearest it (its pixel coordinates clamped to the raster's extent):
    /// the raster continued past its edges by its edge values, as GDAL's
    /// own bilinear read continues it over its outer half pixels. `None`
    /// only where no place maps (PROJ cannot transform the point).
    pub fn clamped_taps(&self, points: &[(f64, f64)]) -> Result<Vec<Option<Taps>>, RasterError> {
        Ok(self.crs_points(points)?.into_iter().map(|(cx, cy)| self.clamped_taps_at(cx, cy)).collect())
    }

    /// Each (lat, lon) in degrees in the raster's CRS; infinities where
    /// PROJ cannot transform a point.
    fn crs_points(&self, points: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, RasterError> {
        Ok(match &self.grid {
            Grid::Geographic { .. } => points.iter().map(|&(lat, lon)| (lon, lat)).collect(),
            Grid::Projected { wkt } => {
                let transform_error =
                    |source| RasterError::Transform { path: self.path.clone(), cause: Box::new(source) };
                let mut target = SpatialRef::from_wkt(wkt).map_err(transform_error)?;
                target.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
                let t = CoordTransform::new(&wgs84().map_err(transform_error)?, &target).map_err(transform_error)?;
                let mut x: Vec<f64> = points.iter().map(|p| p.1).collect();
                let mut y: Vec<f64> = points.iter().map(|p| p.0).collect();
                // Points PROJ cannot transform come back as infinities; they
                // are outside the raster, not an error of the whole tile.
                if t.transform_coords(&mut x, &mut y, &mut []).is_err() {
                    for k in 0..points.len() {
                        let (mut xs, mut ys) = ([points[k].1], [points[k].0]);
                        let ok = t.transform_coords(&mut xs, &mut ys, &mut []).is_ok();
                        x[k] = if ok { xs[0] } else { f64::INFINITY };
                        y[k] = if ok { ys[0] } else { f64::INFINITY };
                    }
                }
                x.into_iter().zip(y).collect()
            }
        })
    }

    /// Evaluates taps on `band` (1-based). `None` where every tap is nodata.
    pub fn evaluate(&self, band: usize, taps: &[Option<Taps>]) -> Result<Vec<Option<f64>>, RasterError> {
        let mut held = HeldChunks::new(self, band);
        taps.iter().map(|t| t.as_ref().map_or(Ok(None), |t| held.bilinear(t))).collect()
    }

    /// Evaluates taps on `band` taking the nearest valid tap's value, for
    /// categories that must not be blended.
    pub fn evaluate_nearest(&self, band: usize, taps: &[Option<Taps>]) -> Result<Vec<Option<f64>>, RasterError> {
        let nearest: Vec<Option<Taps>> = taps
            .iter()
            .map(|t| {
                t.map(|t| {
                    let (c, r) = (t.columns[usize::from(t.fx > 0.5)], t.rows[usize::from(t.fy > 0.5)]);
                    Taps { columns: [c, c], rows: [r, r], fx: 0.0, fy: 0.0 }
                })
            })
            .collect();
        self.evaluate(band, &nearest)
    }

    /// Chunk `(cx, cy)` of `band`, scaled, with nodata as NaN.
    fn chunk(&self, band: usize, cx: usize, cy: usize) -> Result<Arc<Vec<f32>>, RasterError> {
        let key = (band, cx, cy);
        {
            let mut cache = self.cache.lock().expect("cache lock");
            cache.clock += 1;
            let clock = cache.clock;
            if let Some(entry) = cache.chunks.get_mut(&key) {
                entry.1 = clock;
                return Ok(entry.0.clone());
            }
        }
        let (x, y) = (cx * CHUNK, cy * CHUNK);
        let (w, h) = (CHUNK.min(self.width - x), CHUNK.min(self.height - y));
        let dataset = self.pool.lock().expect("pool lock").pop();
        let dataset = match dataset {
            Some(d) => d,
            None => Dataset::open(&self.path)
                .map_err(|source| RasterError::Open { path: self.path.clone(), cause: Box::new(source) })?,
        };
        let read = match &self.averaging {
            None => dataset
                .rasterband(band)
                .and_then(|b| b.read_as::<f64>((x as isize, y as isize), (w, h), (w, h), None))
                .map(|b| b.into_shape_and_vec().1),
            Some(averaging) => self.averaged_window(&dataset, band, averaging, (x, y), (w, h)),
        };
        self.pool.lock().expect("pool lock").push(dataset);
        let raws = read.map_err(|source| RasterError::Read {
            path: self.path.clone(),
            band,
            x,
            y,
            w,
            h,
            cause: Box::new(source),
        })?;
        let (scale, offset) = self.scale_offset[band - 1];
        let nodata = self.nodata[band - 1];
        let mut values = vec![f32::NAN; CHUNK * CHUNK];
        for row in 0..h {
            for col in 0..w {
                let raw = raws[row * w + col];
                // Fill values are often stored at f32 precision while the declared
                // nodata is an f64 (ETOPO5: -9.9999998e33 vs -1e34); compare both ways.
                let is_nodata = !raw.is_finite() || nodata.is_some_and(|n| raw == n || (raw as f32) == (n as f32));
                if !is_nodata {
                    values[row * CHUNK + col] = (raw * scale + offset) as f32;
                }
            }
        }
        let chunk = Arc::new(values);
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.chunks.len() >= cache.capacity {
            // Evict the least recently used eighth in one pass.
            let mut ages: Vec<u64> = cache.chunks.values().map(|v| v.1).collect();
            ages.sort_unstable();
            let cutoff = ages[ages.len() / 8];
            cache.chunks.retain(|_, v| v.1 > cutoff);
        }
        let clock = cache.clock;
        cache.chunks.insert(key, (chunk.clone(), clock));
        Ok(chunk)
    }

    /// True if the band holds at least one valid value, checked on a coarse
    /// read (at most 512 x 512 values) taken in 16 strips of rows, north to
    /// south as stored, stopping at the first strip with a valid value: a
    /// raster without overviews has every block of a strip read, so a real
    /// DEM costs one strip (a sixteenth of the file), not a whole serial pass
    /// before the bake starts; an all-nodata one still costs the whole read.
    pub fn has_any_data(&self, band: usize) -> Result<bool, RasterError> {
        let dataset = Dataset::open(&self.path)
            .map_err(|source| RasterError::Open { path: self.path.clone(), cause: Box::new(source) })?;
        let (w, h) = (self.width.min(512), self.height.min(512));
        const STRIPS: usize = 16;
        let nodata = self.nodata[band - 1];
        let strip_rows = self.height.div_ceil(STRIPS);
        for y in (0..self.height).step_by(strip_rows) {
            let rows = strip_rows.min(self.height - y);
            // The strip's share of the coarse read's rows, at least one.
            let out_rows = (rows * h).div_ceil(self.height).max(1);
            let buffer = dataset
                .rasterband(band)
                .and_then(|b| b.read_as::<f64>((0, y as isize), (self.width, rows), (w, out_rows), None))
                .map_err(|source| RasterError::Read {
                    path: self.path.clone(),
                    band,
                    x: 0,
                    y,
                    w: self.width,
                    h: rows,
                    cause: Box::new(source),
                })?;
            if buffer.data().iter().any(|&v| v.is_finite() && nodata.is_none_or(|n| v != n)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

mod average;
mod spacing;
mod taps;

pub use spacing::PixelSpacing;
