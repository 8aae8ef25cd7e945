//! `--base PACK` (#55, item 5): a regional DEM too small to hold a landmark
//! is compared with the ground under it before anything is written. The
//! real Sierra Nevada SRTM (90 m) as given agrees with a base made from it
//! averaged to about 1.3 km (what a global pack holds there); flipped
//! either way, with its axes swapped, shifted by 4.4 km or in feet, it is
//! refused, naming the misreading, and nothing is left at `--out`. Against
//! ETOPO5's own ground (9 km pixels), the Sierra and a 66 x 67 km window of
//! it agree (a first rule refused such windows for their relief), and a
//! flip is still refused.

use std::path::{Path, PathBuf};

use planet_bake::{BakeOptions, bake};
use planet_terrain::pack::partial_path;

use super::{Quiet, options};
use crate::support::write_tiff;

const SIERRA: &str = "/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif";
/// The base's pixels, in the Sierra's: about 1.3 km.
const AVERAGED: usize = 15;
const ETOPO5: &str = "/usr/share/ferret-vis/data/etopo5.cdf";

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

    /// The columns and rows `west..east`, `north..south` (pixels) alone.
    fn window(&self, (west, east): (usize, usize), (north, south): (usize, usize)) -> Dem {
        let size = (east - west, south - north);
        let mut geo = self.geo;
        geo[0] += west as f64 * geo[1];
        geo[3] += north as f64 * geo[5];
        Dem { geo, ..self.remapped(size, |c, r| (west + c, north + r)) }
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

/// ETOPO5 (Debian's ferret-datasets, installed by tools/deps.sh) around the
/// Sierra, 35..40 N, 123..115 W, as a GeoTIFF: the ground the demo Earth
/// holds under the Sierra, from a dataset of its own.
fn etopo5_around_the_sierra(dir: &Path) -> PathBuf {
    let etopo5 = Dem::read(ETOPO5);
    let column = |lon: f64| ((lon + 360.0 - etopo5.geo[0]) / etopo5.geo[1]).round() as usize;
    let row = |lat: f64| ((lat - etopo5.geo[3]) / etopo5.geo[5]).round() as usize;
    let mut window = etopo5.window((column(-123.0), column(-115.0)), (row(40.0), row(35.0)));
    window.geo[0] -= 360.0;
    window.write(dir, "etopo5-sierra.tif")
}

/// ETOPO5 holds less relief than the Sierra's cell means (its 9 km pixels,
/// sampled every 4.9 km) and sits a sample or two off SRTM: the Sierra as
/// given, whole or a 66 x 67 km window of it, agrees (the first rule
/// refused that window: relief 1.73 times the base's); flipped, it is
/// still refused.
#[test]
fn a_regional_dem_agrees_with_etopo5_under_it_and_a_flip_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sierra = Dem::read(SIERRA);
    let base = dir.path().join("etopo5.planetpack");
    bake(&BakeOptions { depth: None, ..options(&etopo5_around_the_sierra(dir.path()), &base) }, &Quiet).unwrap();
    let with_base =
        |dem: &Path, out: &Path| BakeOptions { depth: Some(5), base: Some(base.clone()), ..options(dem, out) };
    // The whole Sierra, and 119.6..118.85 W, 37.0..37.6 N.
    let (x0, y0) = ((-119.6 - sierra.geo[0]) / sierra.geo[1], (37.6 - sierra.geo[3]) / sierra.geo[5]);
    let window = sierra.window((x0 as usize, x0 as usize + 900), (y0 as usize, y0 as usize + 720));
    for (name, dem) in [("whole.tif", sierra.clone()), ("window.tif", window)] {
        let path = dem.write(dir.path(), name);
        let out = dir.path().join(format!("{name}.planetpack"));
        let report = bake(&with_base(&path, &out), &Quiet).unwrap_or_else(|e| panic!("{name}: {e}")).to_json();
        assert_eq!(report["base_audit"]["verdict"], "agrees", "{name}: {}", report["base_audit"]);
    }
    let h = sierra.size.1;
    let flipped = sierra.remapped(sierra.size, |c, r| (c, h - 1 - r)).write(dir.path(), "flipped.tif");
    let out = dir.path().join("flipped.planetpack");
    let error = bake(&with_base(&flipped, &out), &Quiet).expect_err("flipped").to_string();
    assert!(error.contains("better flipped north-south"), "{error}");
}
