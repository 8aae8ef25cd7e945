//! Tile geometry on the bake's side: a tile's latitude/longitude box, whether
//! it meets a coverage, and the set of tiles a pack declares. Boxes are
//! measured from the tile's own border and centre sample directions (padded
//! by a fraction of a sample spacing for the curved edges), not derived from
//! face formulas, so they agree with the samples the bake reads whatever the
//! projection; poles and the antimeridian are handled explicitly. The
//! lattice the renderer draws (and its step) comes from the terrain core.

use planet_terrain::geo::address::TILE_CELLS;
use planet_terrain::geo::lattice::LATTICE_STEP;
use planet_terrain::ground::locate;
use planet_terrain::pack::Coverage;
use planet_terrain::{Body, Geodetic, TileAddress};
use rayon::prelude::*;

use crate::error::BakeError;
use crate::raster::Extent;
use crate::sampling::{Inputs, lat_lon_of};

/// A tile's latitude/longitude box from its border and centre samples:
/// (south, north, and longitude intervals). A tile holding a pole spans all
/// longitudes up to that pole; one crossing the antimeridian gets two
/// intervals.
fn tile_box(body: &Body, tile: TileAddress) -> (f64, f64, Vec<(f64, f64)>) {
    let cells = TILE_CELLS as i32;
    let mut points = Vec::new();
    for k in (0..=cells).step_by(4) {
        for (i, j) in [(k, 0), (k, cells), (0, k), (cells, k), (k, cells / 2), (cells / 2, k)] {
            points.push(planet_terrain::geo::cube::sample_direction(tile.sample(i, j)));
        }
    }
    let geo: Vec<(f64, f64)> = lat_lon_of(body, &points);
    let (mut south, mut north) = geo.iter().fold((90.0f64, -90.0f64), |(s, n), p| (s.min(p.0), n.max(p.0)));
    // Curved edges bulge between border samples; widen by a sample spacing.
    let pad = (body.tile_size_m(tile.depth()) / body.ellipsoid().min_radius()).to_degrees() / 16.0;
    south -= pad;
    north += pad;
    let pole =
        [90.0, -90.0].into_iter().find(|&p| locate(body, Geodetic::from_degrees(p, 0.0, 0.0), tile.depth()).0 == tile);
    if let Some(p) = pole {
        if p > 0.0 {
            north = 90.0
        } else {
            south = -90.0
        }
        return (south.max(-90.0), north.min(90.0), vec![(-180.0, 180.0)]);
    }
    let mut lons: Vec<f64> = geo.iter().map(|p| p.1).collect();
    lons.sort_by(f64::total_cmp);
    // The widest gap between consecutive longitudes is outside the tile.
    let mut gap = (360.0 + lons[0] - lons[lons.len() - 1], lons.len() - 1);
    for k in 1..lons.len() {
        if lons[k] - lons[k - 1] > gap.0 {
            gap = (lons[k] - lons[k - 1], k - 1);
        }
    }
    let (west, east) = (lons[(gap.1 + 1) % lons.len()] - pad, lons[gap.1] + pad);
    let intervals = if west <= east { vec![(west, east)] } else { vec![(west, 180.0), (-180.0, east)] };
    (south.max(-90.0), north.min(90.0), intervals)
}

/// Whether a tile's box intersects `coverage`, widened by `margin_deg` (the
/// reach of the source's filter).
pub(crate) fn tile_touches(body: &Body, tile: TileAddress, coverage: &Coverage, margin_deg: f64) -> bool {
    let (south, north, intervals) = tile_box(body, tile);
    if north < coverage.south - margin_deg || south > coverage.north + margin_deg {
        return false;
    }
    let cover: Vec<(f64, f64)> = if coverage.west <= coverage.east {
        vec![(coverage.west - margin_deg, coverage.east + margin_deg)]
    } else {
        vec![(coverage.west - margin_deg, 180.0), (-180.0, coverage.east + margin_deg)]
    };
    let overlaps = |a: (f64, f64), b: (f64, f64)| a.0 <= b.1 && b.0 <= a.1;
    intervals.iter().any(|&t| {
        cover.iter().any(|&c| {
            overlaps(t, c) || overlaps((t.0 - 360.0, t.1 - 360.0), c) || overlaps((t.0 + 360.0, t.1 + 360.0), c)
        })
    })
}

/// Every tile down to `depth` that the pack will hold: all of them for a
/// global raster; for a regional one, the tiles whose box meets the
/// raster's coverage and whose 33 x 33 lattice meets valid data (so no
/// declared tile is empty). The walk descends through every tile whose box
/// meets the coverage, since a small raster can slip between a coarse tile's
/// lattice points and still fill its children.
pub(crate) fn tile_set(
    inputs: &Inputs,
    body: &Body,
    coverage: &Coverage,
    depth: u8,
) -> Result<Vec<TileAddress>, BakeError> {
    if coverage.is_global() {
        let mut set = Vec::new();
        let mut level = TileAddress::roots().to_vec();
        for d in 0..=depth {
            set.extend_from_slice(&level);
            if d < depth {
                level = level.iter().flat_map(|t| t.children().expect("depth < MAX_DEPTH")).collect();
            }
        }
        return Ok(set);
    }
    let has_data = |tile: TileAddress| -> Result<bool, BakeError> {
        let cells = TILE_CELLS as i32;
        let directions: Vec<glam::DVec3> = (0..=cells)
            .step_by(LATTICE_STEP as usize)
            .flat_map(|j| (0..=cells).step_by(LATTICE_STEP as usize).map(move |i| (i, j)))
            .map(|(i, j)| planet_terrain::geo::cube::sample_direction(tile.sample(i.min(cells), j.min(cells))))
            .collect();
        Ok(inputs.heights(&lat_lon_of(body, &directions))?.iter().any(Option::is_some))
    };
    let mut set = Vec::new();
    let mut level: Vec<TileAddress> =
        TileAddress::roots().into_iter().filter(|t| tile_touches(body, *t, coverage, 0.0)).collect();
    for d in 0..=depth {
        let keep: Vec<bool> = level.par_iter().map(|&t| has_data(t)).collect::<Result<_, _>>()?;
        set.extend(level.iter().zip(keep).filter(|(_, k)| *k).map(|(t, _)| *t));
        if d < depth {
            level = level
                .par_iter()
                .flat_map_iter(|t| t.children().expect("depth < MAX_DEPTH"))
                .filter(|t| tile_touches(body, *t, coverage, 0.0))
                .collect();
        }
    }
    if set.is_empty() {
        return Err(BakeError::Options(format!(
            "{}: no tile down to depth {depth} meets valid data",
            inputs.dem.path().display()
        )));
    }
    Ok(set)
}

/// The pack's coverage: global when the raster wraps in longitude and
/// reaches within a degree of both poles, its own box otherwise.
pub(crate) fn coverage_of(extent: &Extent) -> Coverage {
    if extent.global_longitude && extent.south <= -89.0 && extent.north >= 89.0 {
        Coverage::GLOBAL
    } else {
        Coverage { south: extent.south, west: extent.west, north: extent.north, east: extent.east }
    }
}
