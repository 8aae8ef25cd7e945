//! `--base PACK` (#55, item 5): a regional DEM too small to hold a landmark
//! is compared with the ground under it before anything is written. The
//! real Sierra Nevada SRTM (90 m) as given agrees with a base made from it
//! averaged to about 1.3 km (what a global pack holds there); flipped
//! either way, with its axes swapped, shifted by 4.4 km or in feet, it is
//! refused, naming the misreading, and nothing is left at `--out`.

use std::path::{Path, PathBuf};

use planet_bake::{BakeOptions, bake};
use planet_terrain::pack::partial_path;

use super::{Quiet, options};
use crate::support::write_tiff;

const SIERRA: &str = "/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif";
/// The base's pixels, in the Sierra's.
const AVERAGED: usize = 15;

/// A raster in memory: values row by row from the north, size (columns,
/// rows), its geotransform and nodata.
#[derive(Clone)]
struct Dem {
    values: Vec<f32>,
    size: (usize, usize),
    geo: [f64; 6],
    nodata: Option<f64>,
}

impl Dem {
    fn read(path: &str) -> Dem {
        let dataset = gdal::Dataset::open(path).expect("tools/deps.sh fetches the real DEMs");
        let band = dataset.rasterband(1).unwrap();
        let size = dataset.raster_size();
        let values = band.read_as::<f32>((0, 0), size, size, None).unwrap().into_shape_and_vec().1;
        Dem { values, size, geo: dataset.geo_transform().unwrap(), nodata: band.no_data_value() }
    }

    fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        write_tiff(&path, self.size, self.geo, Some(4326), std::slice::from_ref(&self.values), self.nodata);
        path
    }

    fn at(&self, column: usize, row: usize) -> f32 {
        self.values[row * self.size.0 + column]
    }

    /// Each value from `(column, row)` of this raster, for a raster of `size`.
    fn remapped(&self, size: (usize, usize), from: impl Fn(usize, usize) -> (usize, usize)) -> Dem {
        let values = (0..size.1).flat_map(|r| (0..size.0).map(move |c| (c, r))).map(|(c, r)| {
            let (c, r) = from(c, r);
            self.at(c, r)
        });
        Dem { values: values.collect(), size, ..self.clone() }
    }

    /// Means over `n` x `n` pixels, voids left out.
    fn averaged(&self, n: usize) -> Dem {
        let size = (self.size.0 / n, self.size.1 / n);
        let mut values = Vec::with_capacity(size.0 * size.1);
        for r in 0..size.1 {
            for c in 0..size.0 {
                let block = (0..n * n).map(|k| self.at(c * n + k % n, r * n + k / n));
                let valid: Vec<f32> = block.filter(|&v| Some(f64::from(v)) != self.nodata).collect();
                values.push(if valid.is_empty() { 0.0 } else { valid.iter().sum::<f32>() / valid.len() as f32 });
            }
        }
        let geo = [self.geo[0], self.geo[1] * n as f64, 0.0, self.geo[3], 0.0, self.geo[5] * n as f64];
        Dem { values, size, geo, nodata: self.nodata }
    }
}

#[test]
fn a_regional_dem_misread_is_named_and_refused_against_the_ground_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let sierra = Dem::read(SIERRA);
    let base = dir.path().join("base.planetpack");
    let base_dem = sierra.averaged(AVERAGED).write(dir.path(), "base.tif");
    bake(&BakeOptions { depth: None, ..options(&base_dem, &base) }, &Quiet).unwrap();
    let with_base =
        |dem: &Path, out: &Path| BakeOptions { depth: Some(6), base: Some(base.clone()), ..options(dem, out) };

    let given = sierra.write(dir.path(), "given.tif");
    let out = dir.path().join("given.planetpack");
    let report = bake(&with_base(&given, &out), &Quiet).unwrap().to_json();
    let audit = &report["base_audit"];
    assert_eq!(audit["verdict"], "agrees", "{audit}");
    assert!(audit["correlation"].as_f64().unwrap() > 0.95, "{audit}");
    assert!(audit["cells"].as_u64().unwrap() >= 1000, "{audit}");

    let (w, h) = sierra.size;
    let mut shifted = sierra.clone();
    shifted.geo[0] += 0.05;
    let swapped_geo = [
        sierra.geo[0],
        sierra.geo[1] * w as f64 / h as f64,
        0.0,
        sierra.geo[3],
        0.0,
        sierra.geo[5] * h as f64 / w as f64,
    ];
    let mut feet = sierra.clone();
    for v in feet.values.iter_mut().filter(|v| Some(f64::from(**v)) != sierra.nodata) {
        *v *= 3.28084;
    }
    let misread = [
        ("flipped.tif", sierra.remapped(sierra.size, |c, r| (c, h - 1 - r)), "better flipped north-south"),
        ("mirrored.tif", sierra.remapped(sierra.size, |c, r| (w - 1 - c, r)), "better flipped east-west"),
        (
            "swapped.tif",
            Dem { geo: swapped_geo, ..sierra.remapped((h, w), |c, r| (r, c)) },
            "better with its axes swapped",
        ),
        ("shifted.tif", shifted, "better shifted by about"),
        ("feet.tif", feet, "as heights in feet would be"),
    ];
    for (name, dem, named) in misread {
        let path = dem.write(dir.path(), name);
        let out = dir.path().join(format!("{name}.planetpack"));
        let error = bake(&with_base(&path, &out), &Quiet).expect_err(name).to_string();
        assert!(error.contains(name) && error.contains("--base") && error.contains(named), "{name}: {error}");
        assert!(!out.exists() && !partial_path(&out).exists(), "{name}: nothing written");
    }
}
