//! The row evaluation (`HeldChunks::gathered_row`, behind `bilinear_at`
//! and `bilinear_tile`) against one tap set at a time
//! (`Raster::taps` then `Raster::evaluate`), bit for bit, on a raster made
//! to hit every slow case: nodata pixels, tap sets straddling chunks, the
//! longitude wrap, the poles' clamped rows and points off the raster. And
//! `Raster::has_any_data`'s strips: data in the last rows only is found.

use gdal::DriverManager;
use gdal::raster::Buffer;
use gdal::spatial_ref::SpatialRef;

use super::*;

/// Writes a global `w` x `h` f32 GeoTIFF of `values` with nodata -9999.
fn write(path: &std::path::Path, (w, h): (usize, usize), values: Vec<f32>) {
    write_at(path, (w, h), [-180.0, 360.0 / w as f64, 0.0, 90.0, 0.0, -180.0 / h as f64], values);
}

/// As [`write`], georeferenced by `geo`.
fn write_at(path: &std::path::Path, (w, h): (usize, usize), geo: [f64; 6], values: Vec<f32>) {
    let driver = DriverManager::get_driver_by_name("GTiff").unwrap();
    let mut ds = driver.create_with_band_type::<f32, _>(path, w, h, 1).unwrap();
    ds.set_geo_transform(&geo).unwrap();
    ds.set_spatial_ref(&SpatialRef::from_epsg(4326).unwrap()).unwrap();
    let mut band = ds.rasterband(1).unwrap();
    band.set_no_data_value(Some(-9999.0)).unwrap();
    band.write((0, 0), (w, h), &mut Buffer::new((w, h), values)).unwrap();
}

/// Values with a nodata pixel every 37th.
fn values(w: usize, h: usize) -> Vec<f32> {
    (0..w * h).map(|k| if k % 37 == 5 { -9999.0 } else { ((k * 7919) % 5003) as f32 - 2500.5 }).collect()
}

/// A global 600 x 300 raster (chunk boundaries at columns 256 and 512 and
/// row 256; the wrap joins column 599 to 0) with a nodata pixel every 37th.
fn raster(dir: &std::path::Path) -> Raster {
    let path = dir.join("blocks.tif");
    write(&path, (600, 300), values(600, 300));
    Raster::open(&path, 64 << 20).unwrap()
}

/// A regional 300 x 150 raster in the 0..360 convention (longitudes 200 to
/// 290 E, that is 160 to 70 W; latitudes 60 to 15 N): no wrap, and the
/// queries' -180..180 longitudes reach it one turn away.
fn regional(dir: &std::path::Path) -> Raster {
    let path = dir.join("regional.tif");
    write_at(&path, (300, 150), [200.0, 0.3, 0.0, 60.0, 0.0, -0.3], values(300, 150));
    Raster::open(&path, 64 << 20).unwrap()
}

/// One tap set at a time, through the path the block evaluation replaces.
fn one_at_a_time(raster: &Raster, latitudes: &[f64], longitudes: &[f64]) -> Vec<Option<u64>> {
    let points: Vec<(f64, f64)> = latitudes.iter().copied().zip(longitudes.iter().copied()).collect();
    let taps = raster.taps(&points).unwrap();
    raster.evaluate(1, &taps).unwrap().into_iter().map(|v| v.map(f64::to_bits)).collect()
}

fn bits(values: Vec<Option<f64>>) -> Vec<Option<u64>> {
    values.into_iter().map(|v| v.map(f64::to_bits)).collect()
}

#[test]
fn rows_gathered_then_weighted_give_the_bits_of_one_tap_set_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = TILE_STORED_SAMPLES as usize;
    // Tile-shaped blocks whose core shares longitudes column by column.
    // Global: across the wrap, across the chunk seams, at both poles and
    // one reaching past the raster's top row. Regional: inside, across each
    // edge (off the raster: voids) and given as 0..360 longitudes too.
    let cases = [
        (
            raster(dir.path()),
            vec![(-10.0, 170.0), (-30.0, -27.5), (-89.9, 0.0), (80.0, 95.0), (88.0, -100.0), (10.0, 125.0)],
        ),
        (regional(dir.path()), vec![(30.0, -140.0), (55.0, -100.0), (10.0, -165.0), (20.0, -75.0), (30.0, 220.0)]),
    ];
    let mut compared = 0;
    for (raster, corners) in &cases {
        let (mut values, mut voids) = (0, 0);
        for &(south, west) in corners {
            let step = 0.6 * 1.3 / 129.0 * 40.0;
            let columns: Vec<f64> = (1..n - 1).map(|i| west + step * (i as f64 - 0.5)).collect();
            let (mut lat, mut lon) = (Vec::new(), Vec::new());
            for j in 0..n {
                for i in 0..n {
                    let core = (1..n - 1).contains(&i) && (1..n - 1).contains(&j);
                    let bend = 0.01 * (i as f64 - 65.0).powi(2) / 65.0;
                    lat.push(south + step * (j as f64 - 1.5) + bend);
                    lon.push(if core { columns[i - 1] } else { west + step * (i as f64 - 1.5) });
                }
            }
            let want = one_at_a_time(raster, &lat, &lon);
            let mut got = Vec::new();
            raster.bilinear_tile(1, &lat, &lon, Some(&columns), &mut got).unwrap();
            assert_eq!(bits(got), want, "bilinear_tile, block at ({south}, {west})");
            let mut got = Vec::new();
            raster.bilinear_at(1, &lat, &lon, &mut got).unwrap();
            assert_eq!(bits(got), want, "bilinear_at, block at ({south}, {west})");
            voids += want.iter().filter(|v| v.is_none()).count();
            values += want.iter().filter(|v| v.is_some()).count();
            compared += want.len();
        }
        // Each raster gave values and, off its edges, voids: the test saw
        // the slow cases, not only the fast one.
        assert!(values > 0 && voids > 0, "{} values, {voids} voids", values);
    }
    assert_eq!(compared, 11 * n * n);
}

#[test]
fn data_in_the_last_rows_alone_is_found_and_all_nodata_is_not() {
    let dir = tempfile::tempdir().unwrap();
    // 2000 x 1000: the coarse read keeps one row in about two, so the
    // valid rows (the last three) are two strips' worth of rows from
    // the first one read.
    let (w, h) = (2000usize, 1000usize);
    let last_rows = dir.path().join("last-rows.tif");
    write(&last_rows, (w, h), (0..w * h).map(|k| if k >= w * (h - 3) { 12.0 } else { -9999.0 }).collect());
    assert!(Raster::open(&last_rows, 64 << 20).unwrap().has_any_data(1).unwrap());
    let none = dir.path().join("none.tif");
    write(&none, (w, h), vec![-9999.0; w * h]);
    assert!(!Raster::open(&none, 64 << 20).unwrap().has_any_data(1).unwrap());
}

/// A caller's slip, two lists of different lengths, is refused by name,
/// not read past the shorter list's end.
#[test]
#[should_panic(expected = "one longitude for each latitude")]
fn places_need_one_longitude_for_each_latitude() {
    let dir = tempfile::tempdir().unwrap();
    raster(dir.path()).bilinear_at(1, &[10.0, 20.0, 30.0], &[5.0, 6.0], &mut Vec::new()).unwrap();
}
