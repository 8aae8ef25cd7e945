//! `planet-pack points`: the ground's elevation at many latitude/longitude
//! points at once, read at one spacing, written as .npy.
//!
//! The key decision: every point is checked before any is read (a bad
//! one is named by its index and byte), and all are read through one
//! caching `GroundReader` at the depth of `--spacing`, as `sample` reads
//! one point, so a DEM's grid compares with what a pack draws there.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use planet_terrain::Geodetic;
use planet_terrain::ground::HeightSource;
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};

use crate::npy::npy_f32;

/// Latitude/longitude pairs (degrees) from a file of little-endian f64
/// pairs, each checked: a bad one is named by its index.
pub(crate) fn read_points(path: &Path) -> Result<Vec<Geodetic>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.is_empty() {
        bail!("{}: the file is empty; give at least one point (f64 latitude, f64 longitude)", path.display());
    }
    if bytes.len() % 16 != 0 {
        bail!(
            "{}: {} bytes is not a whole number of points (16 bytes each: f64 latitude, f64 longitude); \
             the last {} bytes are left over",
            path.display(),
            bytes.len(),
            bytes.len() % 16
        );
    }
    let f64_at = |k: usize| f64::from_le_bytes(bytes[k..k + 8].try_into().expect("8 bytes"));
    (0..bytes.len() / 16)
        .map(|k| {
            let (lat, lon) = (f64_at(16 * k), f64_at(16 * k + 8));
            if !(lat.is_finite() && lon.is_finite() && (-90.0..=90.0).contains(&lat) && (-360.0..=360.0).contains(&lon))
            {
                bail!(
                    "{}: point {k} (byte {}) is latitude {lat}, longitude {lon}: latitude must be within -90..=90 \
                     and longitude within -360..=360 degrees",
                    path.display(),
                    16 * k
                );
            }
            Ok(Geodetic::from_degrees(lat, lon, 0.0))
        })
        .collect()
}

/// The elevation at every point, read at the depth of `spacing`, as .npy.
pub(crate) fn ground_at_points(ground: &dyn HeightSource, points: &[Geodetic], spacing: f64, out: &Path) -> Result<()> {
    let depth = depth_for_spacing(ground, spacing);
    let mut reader = GroundReader::new(ground, depth);
    let heights = points
        .iter()
        .enumerate()
        .map(|(k, &at)| {
            reader.height(at).map(|h| h as f32).with_context(|| {
                let (lat, lon) = (at.latitude.to_degrees(), at.longitude.to_degrees());
                format!("point {k} (byte {}): latitude {lat}, longitude {lon}", 16 * k)
            })
        })
        .collect::<Result<Vec<f32>>>()?;
    let bytes = npy_f32(&heights, (heights.len(), 1));
    planet_cli::fs::write_atomic(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    let spacing_read = ground.body().sample_spacing_m(depth);
    outln!("wrote {} ({} points read at depth {depth}, {spacing_read:.2} m spacing)", out.display(), heights.len());
    Ok(())
}
