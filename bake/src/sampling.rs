//! Sampling: each stored sample's geodetic latitude/longitude (on the body's
//! ellipsoid, from the sample's cube-sphere direction) is read from the
//! source with the raster's bilinear filter, so samples shared by two tiles,
//! on one face or across two, read the same place and agree. Nodata policy:
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
use planet_terrain::ground::sample_directions;
use planet_terrain::layers::{Layer, LayerKind, LayerStack};
use planet_terrain::{Body, MAX_DEPTH, TileAddress};

use crate::error::BakeError;
use crate::limits::MemoryPlan;
use crate::options::BakeOptions;
use crate::raster::Raster;

/// The open rasters and the layers applied on top of them.
pub(crate) struct Inputs {
    pub(crate) dem: Raster,
    pub(crate) imagery: Option<Raster>,
    pub(crate) classes: Option<Raster>,
    layers: LayerStack,
    void_value: Option<f64>,
}

/// One tile's sampled content.
pub(crate) struct Sampled {
    pub(crate) heights: Vec<f64>,
    pub(crate) filled: Vec<bool>,
    pub(crate) classes: Vec<u8>,
    pub(crate) colour: Vec<[u8; 3]>,
}

/// A tile's surface classes and colour, stored order.
pub(crate) type SurfaceSamples = (Vec<u8>, Vec<[u8; 3]>);

/// The depth whose sample spacing is nearest the source's pixel size.
pub fn supported_depth(body: &Body, resolution_m: f64) -> u8 {
    let ratio = body.face_edge_arc_m() / (f64::from(TILE_CELLS) * resolution_m);
    ratio.log2().round().clamp(0.0, f64::from(MAX_DEPTH)) as u8
}

/// Geodetic latitudes and longitudes in degrees of directions, as two
/// arrays: the one geodesy every sampled place goes through
/// (`Ellipsoid::directions_to_degrees`, batched and branch-free).
pub(crate) struct Places {
    pub(crate) latitudes: Vec<f64>,
    pub(crate) longitudes: Vec<f64>,
}

impl Places {
    pub(crate) fn of(body: &Body, directions: &[glam::DVec3]) -> Places {
        let (mut latitudes, mut longitudes) = (vec![0.0; directions.len()], vec![0.0; directions.len()]);
        body.ellipsoid().directions_to_degrees(directions, &mut latitudes, &mut longitudes);
        Places { latitudes, longitudes }
    }

    /// (latitude, longitude) pairs, for the rasters read by tap lists.
    pub(crate) fn pairs(&self) -> Vec<(f64, f64)> {
        self.latitudes.iter().copied().zip(self.longitudes.iter().copied()).collect()
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
            return Err(BakeError::Options(format!(
                "{}: the raster holds no valid elevation (all nodata or NaN)",
                options.dem.display()
            )));
        }
        let imagery = options
            .imagery
            .as_deref()
            .map(|p| Raster::open(p, memory.raster_cache(imagery_weight, total)))
            .transpose()?;
        if let Some(i) = &imagery
            && i.bands() < 3
        {
            return Err(BakeError::Options(format!(
                "{}: imagery needs 3 bands (R, G, B), it has {}",
                i.path().display(),
                i.bands()
            )));
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
        let values = self.heights(&lat_lon_of(body, &sample_directions(tile)))?;
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
        let places = Places::of(body, &sample_directions(tile));
        let mut values = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
        self.dem.bilinear_at(1, &places.latitudes, &places.longitudes, &mut values)?;
        let (mut heights, filled) = self.settle_voids(tile, values)?;
        if !self.layers.is_empty() {
            self.apply_layers(body, tile, &mut heights);
        }
        let (classes, colour) = if self.classes.is_none() && self.imagery.is_none() {
            (vec![0; TILE_STORED_SAMPLE_COUNT], vec![[0; 3]; TILE_STORED_SAMPLE_COUNT])
        } else {
            self.surface_at(&places.pairs())?
        };
        Ok(Sampled { heights, filled, classes, colour })
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
        self.surface_at(&lat_lon_of(body, &sample_directions(tile)))
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
    fn supported_depth_follows_the_pixel_size() {
        let earth = Body::earth();
        // ETOPO5: 5 arc-minutes, ~9.3 km; depth 3 samples every 9.8 km.
        assert_eq!(supported_depth(&earth, 9_266.0), 3);
        // SRTM-3: ~92 m; depth 10 samples every 76 m.
        assert_eq!(supported_depth(&earth, 92.0), 10);
    }
}
