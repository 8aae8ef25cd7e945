//! The geographic tiling scheme of quantized-mesh-1.0 (TMS, EPSG:4326):
//! level 0 is two tiles, the western and eastern hemispheres, each 180
//! degrees square; each level halves a tile's side; `y` counts from the
//! south.

use serde::Serialize;

/// A tile of the scheme: level `z`, column `x` from 180 W, row `y` from
/// 90 S.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileId {
    pub z: u8,
    pub x: u32,
    pub y: u32,
}

/// A tile's extent in degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    pub west: f64,
    pub south: f64,
    pub east: f64,
    pub north: f64,
}

impl Extent {
    /// Whether the two extents share any area or edge.
    pub fn touches(&self, other: &Extent) -> bool {
        self.west <= other.east && other.west <= self.east && self.south <= other.north && other.south <= self.north
    }
}

impl TileId {
    /// Columns and rows of level `z`.
    pub fn columns(z: u8) -> u32 {
        2u32 << z
    }

    pub fn rows(z: u8) -> u32 {
        1u32 << z
    }

    /// The tile's side in degrees.
    pub fn side_degrees(z: u8) -> f64 {
        180.0 / f64::from(1u32 << z)
    }

    pub fn extent(&self) -> Extent {
        let side = TileId::side_degrees(self.z);
        let west = -180.0 + f64::from(self.x) * side;
        let south = -90.0 + f64::from(self.y) * side;
        Extent { west, south, east: west + side, north: south + side }
    }

    /// The range of tiles of level `z` whose extents share area with
    /// `extent`; `None` where none does.
    pub fn range_over(z: u8, extent: &Extent) -> Option<TileRange> {
        if extent.east <= extent.west || extent.north <= extent.south {
            return None;
        }
        let side = TileId::side_degrees(z);
        let (columns, rows) = (i64::from(TileId::columns(z)), i64::from(TileId::rows(z)));
        // The tile a coordinate lies in; an extent ending on a tile's edge
        // does not reach into the next tile.
        let first = |v: f64, origin: f64, count: i64| (((v - origin) / side).floor() as i64).clamp(0, count - 1);
        let last = |v: f64, origin: f64, count: i64| (((v - origin) / side).ceil() as i64 - 1).clamp(0, count - 1);
        let range = TileRange {
            start_x: first(extent.west, -180.0, columns) as u32,
            start_y: first(extent.south, -90.0, rows) as u32,
            end_x: last(extent.east, -180.0, columns) as u32,
            end_y: last(extent.north, -90.0, rows) as u32,
        };
        (range.start_x <= range.end_x && range.start_y <= range.end_y).then_some(range)
    }
}

impl std::fmt::Display for TileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.z, self.x, self.y)
    }
}

/// An inclusive rectangle of tiles of one level, as `layer.json`'s
/// `available` lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TileRange {
    pub start_x: u32,
    pub start_y: u32,
    pub end_x: u32,
    pub end_y: u32,
}

impl TileRange {
    /// The tiles both ranges hold; `None` where they share none.
    pub fn intersection(&self, other: &TileRange) -> Option<TileRange> {
        let r = TileRange {
            start_x: self.start_x.max(other.start_x),
            start_y: self.start_y.max(other.start_y),
            end_x: self.end_x.min(other.end_x),
            end_y: self.end_y.min(other.end_y),
        };
        (r.start_x <= r.end_x && r.start_y <= r.end_y).then_some(r)
    }

    /// The range's tiles at level `z`, row by row from the south.
    pub fn tiles(&self, z: u8) -> impl Iterator<Item = TileId> + '_ {
        (self.start_y..=self.end_y).flat_map(move |y| (self.start_x..=self.end_x).map(move |x| TileId { z, x, y }))
    }
}

/// The geometric error (metres) Cesium expects of a tile at level `z` on a
/// body of largest radius `radius_m`: its estimate for a 65-sample
/// heightmap over level 0's two tiles (a quarter of the circumference over
/// 65 x 2 samples), halved per level.
pub fn level_error_m(radius_m: f64, z: u8) -> f64 {
    radius_m * std::f64::consts::TAU * 0.25 / (65.0 * 2.0) / f64::from(1u32 << z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_zero_is_two_hemispheres_and_rows_count_from_the_south() {
        assert_eq!((TileId::columns(0), TileId::rows(0)), (2, 1));
        let east = TileId { z: 0, x: 1, y: 0 }.extent();
        assert_eq!((east.west, east.south, east.east, east.north), (0.0, -90.0, 180.0, 90.0));
        let t = TileId { z: 3, x: 2, y: 5 }.extent();
        assert_eq!((t.west, t.south, t.east, t.north), (-135.0, 22.5, -112.5, 45.0));
    }

    #[test]
    fn a_range_takes_the_tiles_an_extent_reaches_into() {
        let box_ = Extent { west: 10.0, south: 10.0, east: 20.0, north: 20.0 };
        // Level 3: 22.5-degree tiles; the box lies in column 8 (0..22.5 E)
        // and row 4 (0..22.5 N).
        assert_eq!(TileId::range_over(3, &box_), Some(TileRange { start_x: 8, start_y: 4, end_x: 8, end_y: 4 }));
        // Ending on a tile edge (22.5 E) does not reach the next tile.
        let edge = Extent { west: 0.0, south: 0.0, east: 22.5, north: 22.5 };
        assert_eq!(TileId::range_over(3, &edge), Some(TileRange { start_x: 8, start_y: 4, end_x: 8, end_y: 4 }));
        let world = Extent { west: -180.0, south: -90.0, east: 180.0, north: 90.0 };
        assert_eq!(TileId::range_over(1, &world), Some(TileRange { start_x: 0, start_y: 0, end_x: 3, end_y: 1 }));
        assert!((level_error_m(6_378_137.0, 0) - 77_067.34).abs() < 0.01);
    }
}
