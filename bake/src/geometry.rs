//! Tile geometry on the bake's side: a tile's latitude/longitude box and
//! whether it meets a coverage (`tile_set` walks the tiles with it). Boxes are
//! measured from the tile's own border and centre sample directions (padded
//! by a fraction of a sample spacing for the curved edges), not derived from
//! face formulas, so they agree with the samples the bake reads whatever the
//! projection; poles and the antimeridian are handled explicitly. The
//! lattice the renderer draws (and its step) comes from the terrain core.

use planet_terrain::geo::address::TILE_CELLS;
use planet_terrain::ground::locate;
use planet_terrain::pack::Coverage;
use planet_terrain::{Body, Geodetic, TileAddress};

use crate::stages::raster::Extent;
use crate::stages::sampling::lat_lon_of;

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
    box_touches(&tile_box(body, tile), coverage, margin_deg)
}

/// How a tile lies against a coverage, for the shard plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Its box misses the coverage (no tile under it meets it either).
    Outside,
    /// Its box meets the coverage's edge.
    Rim,
    /// Its box lies wholly inside the coverage, so every tile under it
    /// meets the coverage too: a child's samples lie inside its parent's
    /// ground, and its box holds them. Conservative: a tile at a pole, or
    /// whose box only touches the coverage's edge, is not inside.
    Inside,
}

/// Where `tile` lies against `coverage`, from one box.
pub(crate) fn tile_placement(body: &Body, tile: TileAddress, coverage: &Coverage) -> Placement {
    if coverage.is_global() {
        return Placement::Inside;
    }
    let tile_box = tile_box(body, tile);
    if !box_touches(&tile_box, coverage, 0.0) {
        return Placement::Outside;
    }
    let (south, north, intervals) = &tile_box;
    if *south < coverage.south || *north > coverage.north {
        return Placement::Rim;
    }
    let within = |t: (f64, f64), c: (f64, f64)| c.0 <= t.0 && t.1 <= c.1;
    let inside = intervals.iter().all(|&t| {
        lon_intervals(coverage, 0.0)
            .iter()
            .any(|&c| within(t, c) || within((t.0 - 360.0, t.1 - 360.0), c) || within((t.0 + 360.0, t.1 + 360.0), c))
    });
    if inside { Placement::Inside } else { Placement::Rim }
}

/// The coverage's longitudes widened by `margin_deg`, as one interval or,
/// across the antimeridian, two.
fn lon_intervals(coverage: &Coverage, margin_deg: f64) -> Vec<(f64, f64)> {
    if coverage.west <= coverage.east {
        vec![(coverage.west - margin_deg, coverage.east + margin_deg)]
    } else {
        vec![(coverage.west - margin_deg, 180.0), (-180.0, coverage.east + margin_deg)]
    }
}

fn box_touches((south, north, intervals): &(f64, f64, Vec<(f64, f64)>), coverage: &Coverage, margin_deg: f64) -> bool {
    if *north < coverage.south - margin_deg || *south > coverage.north + margin_deg {
        return false;
    }
    let cover = lon_intervals(coverage, margin_deg);
    let overlaps = |a: (f64, f64), b: (f64, f64)| a.0 <= b.1 && b.0 <= a.1;
    intervals.iter().any(|&t| {
        cover.iter().any(|&c| {
            overlaps(t, c) || overlaps((t.0 - 360.0, t.1 - 360.0), c) || overlaps((t.0 + 360.0, t.1 + 360.0), c)
        })
    })
}

/// The pack's coverage: global when the raster wraps in longitude and
/// reaches within a degree of both poles, its own box otherwise.
pub(crate) fn coverage_of(extent: &Extent) -> Coverage {
    if extent.global_longitude && extent.bounds.south <= -89.0 && extent.bounds.north >= 89.0 {
        Coverage::GLOBAL
    } else {
        extent.bounds
    }
}
