//! Writes the synthetic DEM the committed sample packs are baked from: a
//! small cratered moon on a global geographic grid, as a GeoTIFF.
//!
//! The key decision: the samples in `packs/` are made from data the project
//! may ship, by the project's own bake, so they are reproducible by anyone
//! (`packs/make-samples.sh`). The relief is a closed-form function (a few
//! bowl-shaped craters with raised rims on rolling plains), smooth enough
//! to compress to kilobytes and rough enough to show in a picture.
//!
//! usage: cargo run -p planet-bake --example synthetic_dem -- OUT.tif [STEP_DEGREES]

use gdal::DriverManager;
use gdal::raster::Buffer;
use gdal::spatial_ref::SpatialRef;

/// (lat, lon, radius in degrees, depth in metres)
const CRATERS: [(f64, f64, f64, f64); 6] = [
    (12.0, 30.0, 9.0, 2400.0),
    (-35.0, -60.0, 14.0, 3200.0),
    (48.0, 140.0, 6.0, 1500.0),
    (-5.0, 175.0, 11.0, 2800.0),
    (70.0, -20.0, 8.0, 1900.0),
    (-62.0, 95.0, 5.0, 1200.0),
];

fn angle_degrees(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la, lb) = (a.0.to_radians(), b.0.to_radians());
    let cos = la.sin() * lb.sin() + la.cos() * lb.cos() * (a.1 - b.1).to_radians().cos();
    cos.clamp(-1.0, 1.0).acos().to_degrees()
}

fn elevation(lat: f64, lon: f64) -> f64 {
    let (phi, lambda) = (lat.to_radians(), lon.to_radians());
    let mut h = 400.0 * (3.0 * lambda).sin() * (2.0 * phi).cos() + 250.0 * (5.0 * phi).sin();
    for (clat, clon, radius, depth) in CRATERS {
        let r = angle_degrees((lat, lon), (clat, clon)) / radius;
        h += if r < 1.0 {
            depth * (r * r - 1.0) + 0.25 * depth * r.powi(6)
        } else {
            0.25 * depth * (-(r - 1.0) * 3.0).exp()
        };
    }
    h
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: synthetic_dem OUT.tif [STEP_DEGREES]")?;
    let step: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(0.5);
    let (width, height) = ((360.0 / step).round() as usize, (180.0 / step).round() as usize);
    let mut values = vec![0f32; width * height];
    for row in 0..height {
        for column in 0..width {
            let (lat, lon) = (90.0 - step * (row as f64 + 0.5), -180.0 + step * (column as f64 + 0.5));
            values[row * width + column] = elevation(lat, lon) as f32;
        }
    }
    let driver = DriverManager::get_driver_by_name("GTiff")?;
    let mut dataset = driver.create_with_band_type::<f32, _>(&out, width, height, 1)?;
    dataset.set_geo_transform(&[-180.0, step, 0.0, 90.0, 0.0, -step])?;
    dataset.set_spatial_ref(&SpatialRef::from_epsg(4326)?)?;
    dataset.rasterband(1)?.write((0, 0), (width, height), &mut Buffer::new((width, height), values))?;
    println!("{out}: {width} x {height} pixels of {step} degrees");
    Ok(())
}
