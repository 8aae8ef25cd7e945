//! Sampling: each stored sample's geodetic latitude/longitude (on the body's
//! ellipsoid, from the sample's cube-sphere point: `Places::of_tile`, the one
//! geodesy of the bake, its audit, shards and patches) is read from the
//! source with the raster's bilinear filter, so samples shared by two tiles,
//! on one face or across two, read the same place and agree. The geodesy is
//! batched and branch-free (`Ellipsoid::directions_to_degrees`, within a few
//! ulp of libm's `atan2`), since it runs for every sample twice a bake. Nodata policy:
//! voids are filled from the surrounding samples of the same tile (repeated
//! neighbour averaging), or take `--void-value`; either way they are counted
//! and reported, and a tile with any such sample is not marked measured. A
//! declared tile with no data at all fails the bake with its address.
//!
//! The same `Inputs::sample` serves the bake and the accuracy audit, so the
//! audit compares the pack with exactly what the bake meant to store. It
//! serves the depths at and below the pack's height data depth; shallower
//! tiles take their heights from the level below (`filter`) and only their
//! surface classes and colour from here (`Inputs::surface`), with voids
//! settled by the same policy (`Inputs::settle_voids`).

use planet_terrain::geo::address::{TILE_CELLS, TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES};
use planet_terrain::geo::{atan, cube};
use planet_terrain::ground::sample_directions;
use planet_terrain::layers::{Layer, LayerKind, LayerStack};
use planet_terrain::{Body, MAX_DEPTH, TileAddress};

use crate::error::BakeError;
use crate::limits::MemoryPlan;
use crate::options::BakeOptions;
use crate::stages::raster::Raster;
use crate::stages::raster::RasterError;

/// The open rasters and the layers applied on top of them.
pub(crate) struct Inputs {
    pub(crate) dem: Raster,
    pub(crate) imagery: Option<Raster>,
    pub(crate) classes: Option<Raster>,
    layers: LayerStack,
    pub(crate) void_value: Option<f64>,
}

/// One tile's sampled content.
pub(crate) struct Sampled {
    pub(crate) heights: Vec<f64>,
    pub(crate) filled: Vec<bool>,
    /// Which samples lie outside the DEM's footprint (no pixel to read:
    /// past a regional raster's edge); empty when none was filled.
    pub(crate) outside: Vec<bool>,
    pub(crate) classes: Vec<u8>,
    pub(crate) colour: Vec<[u8; 3]>,
}

/// A tile's surface classes and colour, stored order.
pub(crate) type SurfaceSamples = (Vec<u8>, Vec<[u8; 3]>);

/// The largest sample spacing, in pixels, that keeps a DEM as GDAL reads
/// it. A pack's samples are points of the raster's bilinear surface, read
/// back bilinearly between them: where the surface bends (at pixel
/// centres) the two depart by up to a quarter of the bend times the
/// spacing. At 0.85 pixel the 95th percentile of that departure passed the
/// DEM's own bilinear-against-cubic ambiguity on a 90 m UTM DEM (1.73 m
/// against 1.53 m); at 0.7 it stays inside with room, and at 0.42 it is a
/// third of it (docs/PERFORMANCE.md, "Fidelity against GDAL").
pub const MAX_SPACING_IN_PIXELS: f64 = 0.7;

/// The shallowest depth whose sample spacing is at most
/// [`MAX_SPACING_IN_PIXELS`] of the source's finest pixel spacing, so a
/// bake at it keeps what the raster measured (rounding to the nearest
/// depth threw resolution away: a 235 m DEM went to 305 m samples).
pub fn supported_depth(body: &Body, finest_pixel_m: f64) -> u8 {
    let ratio = body.sample_spacing_m(0) / (MAX_SPACING_IN_PIXELS * finest_pixel_m);
    // A hair of slack so a raster exactly at the limit does not go one deeper.
    (ratio.log2() - 1e-9).ceil().clamp(0.0, f64::from(MAX_DEPTH)) as u8
}

/// Geodetic latitudes and longitudes in degrees of directions, as two
/// arrays: the one geodesy every sampled place goes through
/// (`Ellipsoid::directions_to_degrees`, batched and branch-free).
pub(crate) struct Places {
    pub(crate) latitudes: Vec<f64>,
    pub(crate) longitudes: Vec<f64>,
    /// For a tile's core on an equatorial face, the longitude of each core
    /// column (every core row has the same): what `Raster::bilinear_tile`
    /// makes each column's taps from once.
    pub(crate) core_columns: Option<Vec<f64>>,
}

impl Places {
    pub(crate) fn of(body: &Body, directions: &[glam::DVec3]) -> Places {
        let (mut latitudes, mut longitudes) = (vec![0.0; directions.len()], vec![0.0; directions.len()]);
        body.ellipsoid().directions_to_degrees(directions, &mut latitudes, &mut longitudes);
        Places { latitudes, longitudes, core_columns: None }
    }

    /// (latitude, longitude) pairs, for the rasters read by tap lists.
    pub(crate) fn pairs(&self) -> Vec<(f64, f64)> {
        self.latitudes.iter().copied().zip(self.longitudes.iter().copied()).collect()
    }
}

impl Places {
    /// Every stored sample of `tile`, in stored order: the place each
    /// sample's value is read at, for the bake, its audit, shards and
    /// patches alike. Each sample's point is its unnormalised cube point
    /// (`cube::cube_point` of the warped face-grid coordinates; the angles
    /// do not depend on its length), so a sample that several tiles store,
    /// on one face or across an edge, is the same point spelled with the
    /// same numbers and gets the same bits. On an equatorial face (0-3) a
    /// point's longitude and horizontal length depend on its column alone
    /// (the cube's `b` is its z), so the core takes them once per column
    /// and one `atan2` per sample, with the same arithmetic as the
    /// general path (`Ellipsoid::directions_to_degrees`) the polar faces
    /// and the apron take.
    pub(crate) fn of_tile(body: &Body, tile: TileAddress) -> Places {
        let cells = TILE_CELLS as i32;
        let n = TILE_STORED_SAMPLES as usize;
        // Warped coordinates of the core columns and rows, once a tile (the
        // warp is a tangent); apron samples may lie on another face.
        let warped: Vec<(f64, f64)> = (0..=cells)
            .map(|k| {
                let (u, v) = tile.sample(k, k).grid_coordinates();
                (cube::warp(u), cube::warp(v))
            })
            .collect();
        let core = |k: i32| (0..=cells).contains(&k);
        let point = |i: i32, j: i32| {
            if core(i) && core(j) {
                return cube::cube_point(tile.face(), warped[i as usize].0, warped[j as usize].1);
            }
            let s = tile.sample(i, j);
            let (u, v) = s.grid_coordinates();
            cube::cube_point(s.face, cube::warp(u), cube::warp(v))
        };
        let mut places = Places {
            latitudes: vec![0.0; TILE_STORED_SAMPLE_COUNT],
            longitudes: vec![0.0; TILE_STORED_SAMPLE_COUNT],
            core_columns: None,
        };
        let ellipsoid = body.ellipsoid();
        if tile.face().index() >= 4 {
            let mut points = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
            for j in -1..=cells + 1 {
                for i in -1..=cells + 1 {
                    points.push(point(i, j));
                }
            }
            ellipsoid.directions_to_degrees(&points, &mut places.latitudes, &mut places.longitudes);
            return places;
        }
        // The apron ring through the general path.
        let ring: Vec<(i32, i32)> = (-1..=cells + 1)
            .flat_map(|j| (-1..=cells + 1).map(move |i| (i, j)))
            .filter(|&(i, j)| !core(i) || !core(j))
            .collect();
        let points: Vec<glam::DVec3> = ring.iter().map(|&(i, j)| point(i, j)).collect();
        let (mut lat, mut lon) = (vec![0.0; ring.len()], vec![0.0; ring.len()]);
        ellipsoid.directions_to_degrees(&points, &mut lat, &mut lon);
        for (k, &(i, j)) in ring.iter().enumerate() {
            let at = (j + 1) as usize * n + (i + 1) as usize;
            (places.latitudes[at], places.longitudes[at]) = (lat[k], lon[k]);
        }
        // The core: per column, the longitude and the normal's horizontal
        // length (from the point at b = 0: x and y do not depend on b).
        let inverse = 1.0 / ellipsoid.radii();
        let columns: Vec<glam::DVec3> = (0..=cells).map(|i| point(i, 0) * glam::DVec3::new(1.0, 1.0, 0.0)).collect();
        let mut column_lon = vec![0.0; columns.len()];
        let mut horizontal = vec![0.0; columns.len()];
        for (k, c) in columns.iter().enumerate() {
            let m = *c * inverse;
            horizontal[k] = (m.x * m.x + m.y * m.y).sqrt();
            column_lon[k] = atan::atan2(m.y, m.x).to_degrees();
        }
        for j in 0..=cells {
            let z = point(0, j).z * inverse.z;
            let row = (j + 1) as usize * n + 1;
            let lat = &mut places.latitudes[row..row + columns.len()];
            for (l, h) in lat.iter_mut().zip(&horizontal) {
                *l = atan::atan2(z, *h).to_degrees();
            }
            places.longitudes[row..row + columns.len()].copy_from_slice(&column_lon);
        }
        places.core_columns = Some(column_lon);
        places
    }
}

/// Geodetic (latitude, longitude) in degrees of each direction.
pub(crate) fn lat_lon_of(body: &Body, directions: &[glam::DVec3]) -> Vec<(f64, f64)> {
    Places::of(body, directions).pairs()
}

/// The bake's void policy on one tile's values: voids take `void_value`,
/// or are filled from the tile's other samples (`None`: nothing to fill
/// from). Returns the heights and which samples were voids. The one rule a
/// bake and a sharded bake's merge both apply.
pub(crate) fn settle_voids(void_value: Option<f64>, mut values: Vec<Option<f64>>) -> Option<(Vec<f64>, Vec<bool>)> {
    if values.iter().all(Option::is_some) {
        // Nearly every tile: nothing to settle, one pass.
        let filled = vec![false; values.len()];
        return Some((values.into_iter().flatten().collect(), filled));
    }
    let filled: Vec<bool> = values.iter().map(Option::is_none).collect();
    match void_value {
        Some(v) => values.iter_mut().filter(|x| x.is_none()).for_each(|x| *x = Some(v)),
        None if !fill_voids(&mut values) => return None,
        None => {}
    }
    Some((values.into_iter().map(|v| v.expect("filled")).collect(), filled))
}

/// Fills voids by repeated averaging of filled neighbours. Returns false if
/// there was nothing to fill from.
fn fill_voids(values: &mut [Option<f64>]) -> bool {
    let n = TILE_STORED_SAMPLES as usize;
    if values.iter().all(Option::is_none) {
        return false;
    }
    while values.iter().any(Option::is_none) {
        let snapshot = values.to_vec();
        for k in 0..values.len() {
            if snapshot[k].is_some() {
                continue;
            }
            let (r, c) = (k / n, k % n);
            let mut neighbours = Vec::with_capacity(4);
            if r > 0 {
                neighbours.push(snapshot[k - n]);
            }
            if r + 1 < n {
                neighbours.push(snapshot[k + n]);
            }
            if c > 0 {
                neighbours.push(snapshot[k - 1]);
            }
            if c + 1 < n {
                neighbours.push(snapshot[k + 1]);
            }
            let valid: Vec<f64> = neighbours.into_iter().flatten().collect();
            if !valid.is_empty() {
                values[k] = Some(valid.iter().sum::<f64>() / valid.len() as f64);
            }
        }
    }
    true
}

impl Inputs {
    pub(crate) fn open(options: &BakeOptions, memory: &MemoryPlan) -> Result<Inputs, BakeError> {
        let (dem_weight, imagery_weight, classes_weight) = options.raster_weights();
        let total = dem_weight + imagery_weight + classes_weight;
        let dem = Raster::open(&options.dem, memory.raster_cache(dem_weight, total))?;
        if !dem.has_any_data(1)? {
            return Err(RasterError::Unusable {
                path: options.dem.clone(),
                reason: "the raster holds no valid elevation (all nodata or NaN)".into(),
            }
            .into());
        }
        let imagery = options
            .imagery
            .as_deref()
            .map(|p| Raster::open(p, memory.raster_cache(imagery_weight, total)))
            .transpose()?;
        if let Some(i) = &imagery
            && i.bands() < 3
        {
            return Err(RasterError::Unusable {
                path: i.path().to_owned(),
                reason: format!("imagery needs 3 bands (R, G, B), it has {}", i.bands()),
            }
            .into());
        }
        let classes = options
            .classes
            .as_deref()
            .map(|p| Raster::open(p, memory.raster_cache(classes_weight, total)))
            .transpose()?;
        let layers = options.scene.as_ref().map(|(stack, _)| stack.clone()).unwrap_or_default();
        Ok(Inputs { dem, imagery, classes, layers, void_value: options.void_value })
    }

    /// The mean of the source, with the layers below `layer` applied, over a
    /// flatten pad: rings of points across the pad.
    fn mean_below(&self, body: &Body, stack: &LayerStack, layer: &Layer) -> f64 {
        let LayerKind::Flatten { lat, lon, radius_m, .. } = layer.kind else { return 0.0 };
        let e = body.ellipsoid();
        let places = planet_terrain::layers::pad_sample_points(e, lat, lon, radius_m);
        let points: Vec<glam::DVec3> = places.iter().map(|&g| e.geodetic_to_point(g)).collect();
        let geo: Vec<(f64, f64)> = places.iter().map(|g| (g.latitude.to_degrees(), g.longitude.to_degrees())).collect();
        let mut heights: Vec<f64> = self
            .heights(&geo)
            .map(|v| v.into_iter().map(|h| h.unwrap_or(0.0)).collect())
            .unwrap_or_else(|_| vec![0.0; geo.len()]);
        let below = stack.below(layer.order);
        below.apply(e, &points, &mut heights, &|l| self.mean_below(body, &below, l));
        heights.iter().sum::<f64>() / heights.len() as f64
    }

    /// Elevation at each (lat, lon), `None` outside the raster or in a void.
    pub(crate) fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, BakeError> {
        let taps = self.dem.taps(points)?;
        Ok(self.dem.evaluate(1, &taps)?)
    }

    /// Each stored sample's elevation where the DEM measured it (the layers
    /// applied on top), `None` where it did not: no void is filled. This is
    /// what a region patch may put into a pack.
    pub(crate) fn measured_heights(&self, body: &Body, tile: TileAddress) -> Result<Vec<Option<f64>>, BakeError> {
        let values = self.heights(&Places::of_tile(body, tile).pairs())?;
        if self.layers.is_empty() {
            return Ok(values);
        }
        let mut heights: Vec<f64> = values.iter().map(|v| v.unwrap_or(0.0)).collect();
        self.apply_layers(body, tile, &mut heights);
        Ok(values.iter().zip(heights).map(|(v, h)| v.map(|_| h)).collect())
    }

    fn apply_layers(&self, body: &Body, tile: TileAddress, heights: &mut [f64]) {
        let e = body.ellipsoid();
        let surface: Vec<glam::DVec3> =
            sample_directions(tile).into_iter().map(|d| e.surface_point_from_direction(d)).collect();
        self.layers.apply(e, &surface, heights, &|l| self.mean_below(body, &self.layers, l));
    }

    pub(crate) fn sample(&self, body: &Body, tile: TileAddress) -> Result<Sampled, BakeError> {
        let places = Places::of_tile(body, tile);
        let mut values = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
        let columns = places.core_columns.as_deref();
        self.dem.bilinear_tile(1, &places.latitudes, &places.longitudes, columns, &mut values)?;
        // Samples off the raster (past a regional raster's edge) take the
        // raster continued by its edge values, as GDAL's bilinear read
        // continues it: the last cell inside the edge then interpolates
        // between the DEM's values, not toward a fill. Only a tile with a
        // sample unread pays for the second look.
        let outside: Vec<bool> = if values.iter().any(Option::is_none) {
            let pairs = places.pairs();
            let outside: Vec<bool> = self.dem.taps(&pairs)?.iter().map(Option::is_none).collect();
            let off: Vec<(f64, f64)> = pairs.iter().zip(&outside).filter(|(_, o)| **o).map(|(p, _)| *p).collect();
            let continued = self.dem.evaluate(1, &self.dem.clamped_taps(&off)?)?;
            let mut continued = continued.into_iter();
            for (v, _) in values.iter_mut().zip(&outside).filter(|(_, o)| **o) {
                *v = continued.next().expect("one value for each place off the raster");
            }
            outside
        } else {
            Vec::new()
        };
        // Voids filled from the DEM along the grid through them, the same in
        // every tile that stores the place (`void_fill`); what that leaves,
        // and every void under --void-value, by the policy.
        // A tile of nothing but voids is refused without --void-value, as
        // before (an ocean left out of a land-only DEM is not land).
        let voids: Vec<bool> = values.iter().map(Option::is_none).collect();
        if self.void_value.is_none() && voids.contains(&true) && voids.contains(&false) {
            self.fill_along_the_grid(body, tile, &mut values)?;
        }
        let (mut heights, _) = self.settle_voids(tile, values)?;
        let filled = voids;
        if !self.layers.is_empty() {
            self.apply_layers(body, tile, &mut heights);
        }
        let (classes, colour) = if self.classes.is_none() && self.imagery.is_none() {
            (vec![0; TILE_STORED_SAMPLE_COUNT], vec![[0; 3]; TILE_STORED_SAMPLE_COUNT])
        } else {
            self.surface_at(&places.pairs())?
        };
        Ok(Sampled { heights, filled, outside, classes, colour })
    }

    /// Voids take `--void-value` or are filled from the tile's other
    /// samples; returns the heights and which samples were voids.
    pub(crate) fn settle_voids(
        &self,
        tile: TileAddress,
        values: Vec<Option<f64>>,
    ) -> Result<(Vec<f64>, Vec<bool>), BakeError> {
        settle_voids(self.void_value, values)
            .ok_or_else(|| BakeError::NoData { path: self.dem.path().to_owned(), tile })
    }

    /// Surface classes and colour of a tile's stored samples, read from
    /// their rasters (zeros where a raster is absent): what a filtered
    /// coarse tile still reads from the sources.
    pub(crate) fn surface(&self, body: &Body, tile: TileAddress) -> Result<SurfaceSamples, BakeError> {
        if self.classes.is_none() && self.imagery.is_none() {
            return Ok((vec![0; TILE_STORED_SAMPLE_COUNT], vec![[0; 3]; TILE_STORED_SAMPLE_COUNT]));
        }
        self.surface_at(&Places::of_tile(body, tile).pairs())
    }

    fn surface_at(&self, points: &[(f64, f64)]) -> Result<SurfaceSamples, BakeError> {
        let classes = match &self.classes {
            Some(raster) => classes_at(raster, points)?.into_iter().map(|v| v.unwrap_or(0)).collect(),
            None => vec![0; TILE_STORED_SAMPLE_COUNT],
        };
        let colour = match &self.imagery {
            Some(raster) => colour_at(raster, points)?.into_iter().map(|v| v.unwrap_or([0; 3])).collect(),
            None => vec![[0; 3]; TILE_STORED_SAMPLE_COUNT],
        };
        Ok((classes, colour))
    }
}

/// The surface class at each (lat, lon) (nearest pixel), `None` outside the
/// raster or in a void.
pub(crate) fn classes_at(raster: &Raster, points: &[(f64, f64)]) -> Result<Vec<Option<u8>>, BakeError> {
    let taps = raster.taps(points)?;
    Ok(raster.evaluate_nearest(1, &taps)?.into_iter().map(|v| v.map(|v| v.round().clamp(0.0, 255.0) as u8)).collect())
}

/// Red, green, blue at each (lat, lon) (bilinear), `None` outside the
/// raster or where a band is void. A band's void reads as 0 in a bake.
pub(crate) fn colour_at(raster: &Raster, points: &[(f64, f64)]) -> Result<Vec<Option<[u8; 3]>>, BakeError> {
    let taps = raster.taps(points)?;
    let bands: Vec<Vec<Option<f64>>> = (1..=3).map(|b| raster.evaluate(b, &taps)).collect::<Result<_, _>>()?;
    let byte = |v: Option<f64>| v.map(|v| v.round().clamp(0.0, 255.0) as u8);
    Ok((0..points.len())
        .map(|k| {
            let rgb = [byte(bands[0][k]), byte(bands[1][k]), byte(bands[2][k])];
            match rgb {
                [None, None, None] => None,
                _ => Some(rgb.map(|c| c.unwrap_or(0))),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voids_fill_from_their_neighbours() {
        let n = TILE_STORED_SAMPLE_COUNT;
        let mut values: Vec<Option<f64>> = (0..n).map(|k| if k % 7 == 0 { None } else { Some(100.0) }).collect();
        assert!(fill_voids(&mut values));
        assert!(values.iter().all(|v| *v == Some(100.0)));
        let mut empty = vec![None; n];
        assert!(!fill_voids(&mut empty));
    }

    #[test]
    fn tile_places_are_the_geodesy_of_the_sample_directions_and_shared_samples_agree_bit_for_bit() {
        use std::collections::HashMap;
        let earth = Body::earth();
        let cells = TILE_CELLS as i32;
        let mut seen: HashMap<[u64; 3], (u64, u64, TileAddress)> = HashMap::new();
        let tiles = TileAddress::roots().into_iter().flat_map(|t| t.children().unwrap());
        for tile in tiles {
            let places = Places::of_tile(&earth, tile);
            let directions = sample_directions(tile);
            let mut k = 0;
            for j in -1..=cells + 1 {
                for i in -1..=cells + 1 {
                    let g = earth.ellipsoid().direction_to_geodetic(directions[k]);
                    let (lat, lon) = (places.latitudes[k], places.longitudes[k]);
                    assert!((lat - g.latitude.to_degrees()).abs() < 1e-12, "{tile} ({i}, {j}): latitude {lat}");
                    // Longitude is any value at a pole.
                    if g.latitude.abs() < 1.5 {
                        let d = (lon - g.longitude.to_degrees()).abs();
                        assert!(d < 1e-12 || (d - 360.0).abs() < 1e-12, "{tile} ({i}, {j}): longitude {lon}");
                    }
                    // The same point, from any tile or face: the same bits.
                    let key = directions[k].to_array().map(f64::to_bits);
                    let (a, b, first) = *seen.entry(key).or_insert((lat.to_bits(), lon.to_bits(), tile));
                    assert_eq!((a, b), (lat.to_bits(), lon.to_bits()), "{tile} ({i}, {j}) vs {first}");
                    k += 1;
                }
            }
        }
    }

    #[test]
    fn supported_depth_follows_the_pixel_size() {
        let earth = Body::earth();
        // ETOPO5: 5 arc-minutes, ~9.3 km at the equator; depth 3 samples
        // every 9.8 km (coarser), depth 4 every 4.9 km (0.53 pixel).
        assert_eq!(supported_depth(&earth, 9_266.0), 4);
        // SRTM-3 at 37 N: 73 m east-west; depth 11 samples every 38 m.
        assert_eq!(supported_depth(&earth, 73.4), 11);
        // A 90 m UTM DEM: depth 10's 76 m is 0.85 pixel, depth 11's 38 m.
        assert_eq!(supported_depth(&earth, 90.0), 11);
        // The 235 m national-park DEM: depth 8 (305 m) would drop a third
        // of its resolution; depth 9 samples every 153 m (0.65 pixel).
        assert_eq!(supported_depth(&earth, 234.0), 9);
        // Pixels exactly a depth's spacing over the limit stay at that depth.
        let at_limit = earth.sample_spacing_m(7) / MAX_SPACING_IN_PIXELS;
        assert_eq!(supported_depth(&earth, at_limit), 7);
    }
}
