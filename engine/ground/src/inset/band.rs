//! Where a tile lies against an inset's box and the band outside it.
//!
//! The key decision: a tile's place against the box is decided from the
//! cap around its centre on near-spherical bodies, cached per tile, so
//! selection's thousand bound queries a frame cost a lookup each.

use super::edge::EdgeRange;
use super::{InsetSource, NEAR_SPHERE, NO_DATA_TRANSITION_M, TRANSITION_M};
use crate::{HeightSource, SourceError, TileBounds};
use planet_geo::address::TileAddress;
use planet_geo::cube::sample_direction;
use planet_packfile::Coverage;

impl InsetSource {
    /// Whether the inset's voids show the ground below instead of the
    /// inset's fill: where a pack lies below (the ground has data). Over
    /// the bare ellipsoid or invented ground the fill is the better guess.
    pub fn voids_show_below(&self) -> bool {
        self.base.data_depth().is_some()
    }

    /// Whether a latitude/longitude (degrees) lies in the inset's box, edges
    /// included: where its measured samples are the ground.
    pub fn covers(&self, lat: f64, lon: f64) -> bool {
        self.coverage.contains(lat, lon)
    }

    /// How far past its box a tile of `depth` shows the inset's samples
    /// (degrees of arc): a sample spacing and a half at that depth, so the
    /// first stored sample outside the box is the inset's own (the bake's
    /// continuation of its edge). A point inside the box then interpolates
    /// the inset's samples alone, up to the edge, at every depth: had the
    /// first sample outside been the base's, the last cell inside would mix
    /// the ground below into measured ground.
    pub fn margin_degrees(&self, depth: u8) -> f64 {
        let body = self.body();
        (1.5 * body.sample_spacing_m(depth) / body.ellipsoid().min_radius()).to_degrees()
    }

    /// How far outside the box its edge bends the ground below:
    /// [`TRANSITION_M`] over ground some pack measured,
    /// [`NO_DATA_TRANSITION_M`] over the bare ellipsoid.
    pub fn transition_m(&self) -> f64 {
        if self.voids_show_below() { TRANSITION_M } else { NO_DATA_TRANSITION_M }
    }

    /// [`InsetSource::transition_m`] in degrees of arc (on the smallest
    /// radius, so never less than the band).
    pub(super) fn transition_degrees(&self) -> f64 {
        // The band is measured between directions, the margins in geodetic
        // degrees, which stretch against directions by up to the axis
        // ratio (squared, with room).
        (self.transition_m() / self.body().ellipsoid().min_radius()).to_degrees() * self.geodetic_stretch()
    }

    /// How far geodetic degrees can stretch against angles between
    /// directions (the ellipsoid's reduced parametrisation): the axis ratio
    /// squared, with room.
    pub(super) fn geodetic_stretch(&self) -> f64 {
        let axis_ratio = self.axis_ratio();
        axis_ratio * axis_ratio * 1.01
    }

    pub(super) fn axis_ratio(&self) -> f64 {
        let ellipsoid = self.body().ellipsoid();
        ellipsoid.max_radius() / ellipsoid.min_radius()
    }

    /// Whether the box bends the ground outside it (see the module
    /// documentation): not for a global box, one across the antimeridian,
    /// or on a body far from a sphere, where the tiles around a band's tile
    /// at its edge depth need not hold the edge points it reads (so its
    /// bounds would not hold the band) and `reach` decides nothing.
    pub(super) fn has_band(&self) -> bool {
        let c = &self.coverage;
        !c.is_global() && c.west <= c.east && self.axis_ratio() <= NEAR_SPHERE
    }

    /// Where a point (degrees, with its unit direction) outside the box
    /// takes part of the inset's edge, for a box that [has a
    /// band](InsetSource::has_band): the weight (1 at the box, 0 at
    /// [`InsetSource::transition_m`], a smoothstep between), the nearest point of the
    /// box and the distance to it (metres). `None` inside the box or beyond the band.
    pub(super) fn ramp(
        &self,
        lat: f64,
        lon: f64,
        direction: glam::DVec3,
    ) -> Option<(f64, planet_geo::body::Geodetic, f64)> {
        let c = &self.coverage;
        let ellipsoid = self.body().ellipsoid();
        let (q_lat, q_lon) = (lat.clamp(c.south, c.north), lon.clamp(c.west, c.east));
        if q_lat == lat && q_lon == lon {
            return None;
        }
        let q = planet_geo::body::Geodetic::from_degrees(q_lat, q_lon, 0.0);
        let distance = direction.angle_between(ellipsoid.geodetic_to_direction(q)) * ellipsoid.min_radius();
        let band = self.transition_m();
        if distance.is_nan() || distance >= band {
            return None;
        }
        let s = 1.0 - distance / band;
        Some((s * s * (3.0 - 2.0 * s), q, distance))
    }

    /// The depth the band of a tile of `depth` reads the inset's edge at:
    /// its own, or the deepest whose tiles are twice the band wide, so the
    /// edge points within the band of a tile lie in the 3 x 3 tiles around
    /// its ancestor there.
    pub(super) fn edge_depth(&self, depth: u8) -> u8 {
        let body = self.body();
        let wide = (0..=depth).rev().find(|&d| body.tile_size_m(d) >= 2.0 * self.transition_m()).unwrap_or(0);
        wide.min(depth)
    }

    /// A range holding every edge height the band of `tile` reads, and the
    /// largest geometric error of the tiles they are read from: the
    /// inset's bounds over the tiles around its ancestor at
    /// [`InsetSource::edge_depth`] (its edge neighbours and theirs), each
    /// read by `bounds_of`; `None` where the inset has none there.
    pub(super) fn edge_range(
        &self,
        tile: TileAddress,
        bounds_of: &impl Fn(&dyn HeightSource, TileAddress) -> Result<TileBounds, SourceError>,
    ) -> Result<Option<EdgeRange>, SourceError> {
        let around = tile.ancestor_at(self.edge_depth(tile.depth())).expect("not deeper than the tile");
        let mut tiles = vec![around];
        for edge in planet_geo::face::Edge::ALL {
            let next = around.neighbour(edge).address;
            tiles.push(next);
            tiles.extend(planet_geo::face::Edge::ALL.map(|e| next.neighbour(e).address));
        }
        tiles.sort_unstable_by_key(|t| t.identity());
        tiles.dedup();
        let mut range: Option<EdgeRange> = None;
        for t in tiles {
            match bounds_of(&*self.inset, t) {
                Ok(b) => {
                    let r = range.get_or_insert(EdgeRange { lo: f64::INFINITY, hi: f64::NEG_INFINITY, error: 0.0 });
                    (r.lo, r.hi) = (r.lo.min(b.min_elevation), r.hi.max(b.max_elevation));
                    r.error = r.error.max(b.geometric_error);
                }
                Err(SourceError::NoData { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(range)
    }

    /// Whether a stored sample of a tile of `depth` at a latitude/longitude
    /// (degrees) is the inset's: inside its box grown by
    /// [`InsetSource::margin_degrees`].
    pub fn shows_inset(&self, depth: u8, lat: f64, lon: f64) -> bool {
        within_margin(&self.coverage, self.margin_degrees(depth), lat, lon)
    }

    /// Where a whole tile lies against the box, from the cap around its
    /// centre that holds its corners (on the cube-sphere the farthest point
    /// of a tile from its centre is a corner): in the core (every sample in the box),
    /// wholly outside (no sample shows the inset), or neither (or too near a
    /// pole or the antimeridian to say cheaply).
    pub fn reach(&self, tile: TileAddress) -> Reach {
        if let Some(&reach) = self.reaches.0.lock().expect("reach lock").get(&tile) {
            return reach;
        }
        let reach = self.reach_uncached(tile);
        let mut reaches = self.reaches.0.lock().expect("reach lock");
        if reaches.len() >= 1 << 16 {
            reaches.clear();
        }
        reaches.insert(tile, reach);
        reach
    }

    /// [`InsetSource::reach`], worked out.
    pub(super) fn reach_uncached(&self, tile: TileAddress) -> Reach {
        let c = &self.coverage;
        if c.is_global() {
            return Reach::Core;
        }
        let Some(extent) = self.extent(tile) else { return Reach::Mixed };
        // The inset shows a little past its box (`shows_inset`) and bends
        // the ground below it for `transition_m` more: a tile is outside only
        // beyond both.
        if self.beyond(&extent, self.margin_degrees(tile.depth()) + self.transition_degrees()) {
            return Reach::Outside;
        }
        match extent.longitudes {
            Some((lon_lo, lon_hi))
                if extent.lat_lo >= c.south && extent.lat_hi <= c.north && lon_lo >= c.west && lon_hi <= c.east =>
            {
                Reach::Core
            }
            _ => Reach::Mixed,
        }
    }

    /// Whether any stored sample of `tile` may show the inset (the box
    /// grown by [`InsetSource::margin_degrees`]): false for a tile that
    /// only the transition band reaches.
    pub fn meets_box(&self, tile: TileAddress) -> bool {
        self.meets_box_within(self.extent(tile).as_ref(), tile.depth())
    }

    /// [`InsetSource::meets_box`] of a tile of `depth` whose samples lie
    /// within `extent`.
    pub(super) fn meets_box_within(&self, extent: Option<&Extent>, depth: u8) -> bool {
        self.coverage.is_global() || extent.is_none_or(|e| !self.beyond(e, self.margin_degrees(depth)))
    }

    /// The latitudes and longitudes (degrees) a tile's stored samples lie
    /// within, from the cap around its centre that holds its corners (on
    /// the cube-sphere the farthest point of a tile from its centre is a
    /// corner). `None` on a body far from a sphere; no longitudes for a cap
    /// over a pole or the antimeridian, or a box across it.
    pub(super) fn extent(&self, tile: TileAddress) -> Option<Extent> {
        // Directions are the ellipsoid's reduced parametrisation: on a body
        // far from a sphere (the readers accept axis ratios up to 10, and
        // triaxial ones) geodetic latitude and longitude stretch against it
        // by up to the axis ratio, and the cap says nothing cheaply.
        if self.axis_ratio() > NEAR_SPHERE {
            return None;
        }
        let centre = sample_direction(tile.sample(64, 64));
        // The stored corners, aprons included: a tile's samples reach one
        // sample past its edges, and the box is tested there too.
        let last = planet_geo::address::TILE_CELLS as i32 + 1;
        let corners = [(-1, -1), (last, -1), (-1, last), (last, last)];
        let angle =
            corners.iter().map(|&(i, j)| centre.angle_between(sample_direction(tile.sample(i, j)))).fold(0.0, f64::max);
        // Geodetic against direction angles: at most the axis ratio (squared,
        // with room); the rest is rounding.
        let r = angle.to_degrees() * self.geodetic_stretch() + 1e-9;
        let g = self.body().ellipsoid().direction_to_geodetic(centre);
        let (lat, lon) = (g.latitude.to_degrees(), g.longitude.to_degrees());
        let (lat_lo, lat_hi) = (lat - r, lat + r);
        let cos_min = lat_lo.abs().max(lat_hi.abs()).to_radians().cos();
        let longitudes = (lat_hi < 89.0 && lat_lo > -89.0 && self.coverage.west <= self.coverage.east && cos_min > 0.0)
            .then(|| (lon - r / cos_min, lon + r / cos_min))
            .filter(|&(lo, hi)| lo > -180.0 && hi < 180.0);
        Some(Extent { lat_lo, lat_hi, longitudes, cos_min })
    }

    /// The most weight the band gives the inset's edge in a tile within
    /// `extent` (1 where it may meet the box): the smoothstep at a distance
    /// no greater than the tile's from the box (2 km out, a half).
    pub(super) fn largest_band_weight(&self, extent: Option<&Extent>) -> f64 {
        let Some(extent) = extent.filter(|_| self.has_band()) else { return 1.0 };
        let c = &self.coverage;
        let lat = (c.south - extent.lat_hi).max(extent.lat_lo - c.north).max(0.0);
        let lon = extent.longitudes.map_or(0.0, |(lo, hi)| (c.west - hi).max(lo - c.east).max(0.0));
        // Longitude degrees shrink with the cosine; the largest cosine over
        // the tile and the box keeps the distance from growing.
        let cos_max = if extent.lat_lo <= 0.0 && extent.lat_hi >= 0.0 {
            1.0
        } else {
            extent.lat_lo.abs().min(extent.lat_hi.abs()).min(c.south.abs().min(c.north.abs())).to_radians().cos()
        };
        // Degrees against the band's own measure (angles between directions
        // on the smallest radius): never more than the stretch.
        let degrees = lat.max(lon * cos_max) / self.geodetic_stretch();
        let distance = degrees.to_radians() * self.body().ellipsoid().min_radius();
        let band = self.transition_m();
        if distance >= band {
            return 0.0;
        }
        let s = 1.0 - distance / band;
        s * s * (3.0 - 2.0 * s)
    }

    /// Whether `extent` lies wholly outside the box grown by `margin`
    /// degrees of arc. Latitudes alone decide that near a pole too (a polar
    /// root, across every longitude, lies wholly south of an Alpine box).
    pub(super) fn beyond(&self, extent: &Extent, margin: f64) -> bool {
        let c = &self.coverage;
        if extent.lat_hi < c.south - margin || extent.lat_lo > c.north + margin {
            return true;
        }
        let Some((lon_lo, lon_hi)) = extent.longitudes else { return false };
        let lon_margin = margin / extent.cos_min;
        lon_hi < c.west - lon_margin || lon_lo > c.east + lon_margin
    }
}

/// Where a tile's stored samples lie ([`InsetSource::extent`]).
pub(super) struct Extent {
    lat_lo: f64,
    lat_hi: f64,
    longitudes: Option<(f64, f64)>,
    cos_min: f64,
}

/// Where a tile lies against an inset's box ([`InsetSource::reach`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every sample in the box: the inset alone.
    Core,
    /// No sample shows the inset (past the box and its margin): the base alone.
    Outside,
    Mixed,
}

/// Whether a latitude/longitude (degrees) lies inside `c` grown by
/// `margin` degrees of arc (longitude scaled by the latitude's cosine),
/// across the antimeridian too.
fn within_margin(c: &Coverage, margin: f64, lat: f64, lon: f64) -> bool {
    if c.is_global() {
        return true;
    }
    if lat < c.south - margin || lat > c.north + margin {
        return false;
    }
    let lon_margin = margin / lat.to_radians().cos().max(1e-6);
    let span = if c.east - c.west >= 360.0 { 360.0 } else { (c.east - c.west).rem_euclid(360.0) };
    let east_of_west = (lon - c.west).rem_euclid(360.0);
    east_of_west <= span || (east_of_west - span).min(360.0 - east_of_west) <= lon_margin
}
