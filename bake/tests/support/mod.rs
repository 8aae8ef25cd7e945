//! Raster fixtures for the bake tests, written with GDAL.
//!
//! The global field: a closed-form elevation (a smooth base plus a bump of
//! the right height at every built-in Earth landmark) evaluated on the nodes
//! of a 0.25-degree grid. Between nodes the field is defined as the bilinear
//! interpolant of its nodes, which is exactly what a correct bake must
//! reproduce; so every baked sample can be checked against the field to the
//! quantisation step, and a grid read backwards fails the landmarks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gdal::DriverManager;
use gdal::raster::{Buffer, GdalType};
use gdal::spatial_ref::SpatialRef;
use planet_bake::landmarks::table;

pub const STEP: f64 = 0.25;
pub const WIDTH: usize = 1440;
pub const HEIGHT: usize = 720;

fn great_circle_degrees(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la, lb) = (a.0.to_radians(), b.0.to_radians());
    let dlon = (a.1 - b.1).to_radians();
    (la.sin() * lb.sin() + la.cos() * lb.cos() * dlon.cos()).clamp(-1.0, 1.0).acos().to_degrees()
}

fn base(lat: f64, lon: f64) -> f64 {
    300.0 * (2.0 * lat.to_radians()).sin() * (3.0 * lon.to_radians()).cos() + 200.0
}

/// The closed-form field at a node.
pub fn node_value(lat: f64, lon: f64) -> f64 {
    let mut h = base(lat, lon);
    for l in table("earth") {
        let mid = 0.5 * (l.min_m + l.max_m);
        let d = great_circle_degrees((lat, lon), (l.lat, l.lon));
        h += (mid - base(l.lat, l.lon)) * (-(d / 1.5).powi(2)).exp();
    }
    h
}

/// Latitude and longitude of pixel centre (column, row) of the north-up,
/// -180..180 grid.
pub fn node(column: usize, row: usize) -> (f64, f64) {
    (90.0 - STEP * (row as f64 + 0.5), -180.0 + STEP * (column as f64 + 0.5))
}

/// The field anywhere: the bilinear interpolant of the nodes, wrapping in
/// longitude and held constant beyond the first and last rows of centres.
pub fn field(lat: f64, lon: f64, nodes: &[f32]) -> f64 {
    let x = (lon + 180.0) / STEP - 0.5;
    let y = ((90.0 - lat) / STEP - 0.5).clamp(0.0, (HEIGHT - 1) as f64);
    let (x0, y0) = (x.floor(), y.floor().min((HEIGHT - 2) as f64));
    let (fx, fy) = (x - x0, y - y0);
    let at = |c: f64, r: f64| f64::from(nodes[r as usize * WIDTH + (c.rem_euclid(WIDTH as f64)) as usize]);
    let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1.0, y0) * fx;
    let bottom = at(x0, y0 + 1.0) * (1.0 - fx) + at(x0 + 1.0, y0 + 1.0) * fx;
    top * (1.0 - fy) + bottom * fy
}

/// The node values of the north-up -180..180 grid, row-major.
pub fn earth_nodes() -> Vec<f32> {
    let mut v = vec![0f32; WIDTH * HEIGHT];
    for row in 0..HEIGHT {
        for column in 0..WIDTH {
            let (lat, lon) = node(column, row);
            v[row * WIDTH + column] = node_value(lat, lon) as f32;
        }
    }
    v
}

/// Writes a single- or multi-band GeoTIFF.
pub fn write_tiff<T: GdalType + Copy>(
    path: &Path,
    size: (usize, usize),
    geo: [f64; 6],
    epsg: Option<u32>,
    bands: &[Vec<T>],
    nodata: Option<f64>,
) {
    let driver = DriverManager::get_driver_by_name("GTiff").unwrap();
    let mut ds = driver.create_with_band_type::<T, _>(path, size.0, size.1, bands.len()).unwrap();
    ds.set_geo_transform(&geo).unwrap();
    if let Some(code) = epsg {
        ds.set_spatial_ref(&SpatialRef::from_epsg(code).unwrap()).unwrap();
    }
    for (k, data) in bands.iter().enumerate() {
        let mut band = ds.rasterband(k + 1).unwrap();
        if let Some(n) = nodata {
            band.set_no_data_value(Some(n)).unwrap();
        }
        let mut buffer = Buffer::new(size, data.clone());
        band.write((0, 0), size, &mut buffer).unwrap();
    }
}

/// The standard north-up -180..180 georeferencing of the fixture grid.
pub const GEO: [f64; 6] = [-180.0, STEP, 0.0, 90.0, 0.0, -STEP];

/// Writes the global Earth fixture (optionally transformed) and returns its path.
pub fn earth_tiff(dir: &Path, name: &str, nodes: &[f32], geo: [f64; 6]) -> PathBuf {
    let path = dir.join(name);
    write_tiff(&path, (WIDTH, HEIGHT), geo, Some(4326), &[nodes.to_vec()], None);
    path
}

/// Remaps node values: `source(column, row)` gives the index read for each
/// output pixel.
pub fn remap(nodes: &[f32], source: impl Fn(usize, usize) -> (usize, usize)) -> Vec<f32> {
    let mut v = vec![0f32; nodes.len()];
    for row in 0..HEIGHT {
        for column in 0..WIDTH {
            let (c, r) = source(column, row);
            v[row * WIDTH + column] = nodes[r * WIDTH + c];
        }
    }
    v
}

/// A 1-degree global RGB raster (red with longitude, green with latitude)
/// and a class raster (1 north of the equator, 2 south), as GeoTIFFs in
/// `dir`: the colour and class fixtures of codec-2 bakes and patches.
pub fn colour_and_class_tiffs(dir: &Path) -> (PathBuf, PathBuf) {
    let (w, h) = (360usize, 180usize);
    let geo = [-180.0, 1.0, 0.0, 90.0, 0.0, -1.0];
    let channel = |f: fn(usize, usize) -> u8| (0..w * h).map(|k| f(k % w, k / w)).collect::<Vec<u8>>();
    let rgb = vec![
        channel(|c, _| (c * 255 / 359) as u8),
        channel(|_, r| (r * 255 / 179) as u8),
        channel(|c, r| ((c + r) % 256) as u8),
    ];
    let imagery = dir.join("rgb.tif");
    write_tiff(&imagery, (w, h), geo, Some(4326), &rgb, None);
    let classes = dir.join("classes.tif");
    write_tiff(&classes, (w, h), geo, Some(4326), &[channel(|_, r| if r < 90 { 1 } else { 2 })], None);
    (imagery, classes)
}
