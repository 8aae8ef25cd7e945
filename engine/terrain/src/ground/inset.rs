//! A higher-resolution regional pack over a base source.
//!
//! The key decision: measured samples are never altered by stacking. Inside
//! the inset's coverage box (its measured footprint) every sample is the
//! inset's own, up to the box's edge; outside it, the base's. There is no
//! blend band: one inside the box mixed a DEM's measured edge with whatever
//! lay below (a small DEM flown alone sloped to 0 m across a third of its
//! area). Where two DEMs disagree at the edge the ground steps there, and
//! the step is part of a node's geometric error while the node is coarser
//! than the inset's data ([`InsetSource`]'s bounds), so selection resolves it.
//! A tile reads `Measured` where the inset's ground in it is measured.
//!
//! The second decision: the transition happens outside, in the ground
//! below. Within [`TRANSITION_M`] of the box ([`NO_DATA_TRANSITION_M`] over the bare ellipsoid) the base's ground bends toward
//! the inset's edge (at the nearest point of the box) with a smoothstep
//! weight, so two DEMs that disagree by a kilometre meet on a slope outside
//! the measured footprint instead of a vertical curtain of stretched texture
//! at its edge. The edge is read at a depth whose tiles are at least twice
//! the band wide, so a tile's bounds hold its band from a handful of the
//! inset's bounds. Ground in the band is invented. A box across the
//! antimeridian gets no band.
//! Where the inset has colour (or classes) and the ground below has none,
//! the ground below counts as [`INVENTED_COLOUR`] (class 0, unknown), so a
//! coloured regional pack over the bare ellipsoid meets a neutral grey
//! rather than whatever the bake wrote outside its raster.

use std::sync::Arc;

use crate::geo::address::TileAddress;
use crate::geo::body::Body;
use crate::geo::cube::sample_direction;
use crate::ground::{HeightSource, PackSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions};
use crate::pack::Coverage;

/// The colour of ground that has none of its own, under a coloured inset.
pub const INVENTED_COLOUR: [u8; 3] = [118, 118, 112];

/// How far outside its box an inset's edge bends the ground below (metres):
/// a kilometre's disagreement between two DEMs becomes a slope of about 14
/// degrees on average.
pub const TRANSITION_M: f64 = 4_000.0;

/// How far the edge bends ground no pack measured (the bare ellipsoid under
/// a regional pack alone): a range 3 km high meets the ellipsoid on a slope
/// of 4.3 degrees on average, 6.4 at most, where the 4 km band drew a cliff
/// of 37 degrees, 48 at most, behind every edge. The band is no-data ground.
pub const NO_DATA_TRANSITION_M: f64 = 40_000.0;

/// The largest axis ratio for which a tile's place against the box is
/// decided from the cap around its centre (and a band drawn outside it).
const NEAR_SPHERE: f64 = 1.01;

#[derive(Debug, Clone)]
pub struct InsetSource {
    base: Arc<dyn HeightSource>,
    /// The pack's ground (the pack itself, or the pack with detail).
    inset: Arc<dyn HeightSource>,
    coverage: Coverage,
    /// [`InsetSource::reach`] per tile: selection asks for the bounds of
    /// the same thousand nodes every frame, and each reach costs a dozen
    /// directions and arc cosines.
    reaches: ReachCache,
}

/// Reaches already worked out (a whole `Debug` of them would be noise).
#[derive(Clone, Default)]
struct ReachCache(Arc<std::sync::Mutex<crate::geo::address::TileMap<TileAddress, Reach>>>);

impl std::fmt::Debug for ReachCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReachCache")
    }
}

impl InsetSource {
    /// `inset` must be a pack of the same body; its header's coverage is the
    /// box it answers for.
    pub fn new(base: Arc<dyn HeightSource>, inset: PackSource) -> InsetSource {
        let coverage = inset.pack().header().coverage;
        InsetSource::over(base, Arc::new(inset), coverage)
    }

    /// Any ground of a pack (e.g. the pack with detail synthesized past its
    /// own data depth) answering for `coverage` over `base`.
    pub fn over(base: Arc<dyn HeightSource>, inset: Arc<dyn HeightSource>, coverage: Coverage) -> InsetSource {
        InsetSource { base, inset, coverage, reaches: ReachCache::default() }
    }

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
    fn transition_degrees(&self) -> f64 {
        // The band is measured between directions, the margins in geodetic
        // degrees, which stretch against directions by up to the axis
        // ratio (squared, with room).
        (self.transition_m() / self.body().ellipsoid().min_radius()).to_degrees() * self.geodetic_stretch()
    }

    /// How far geodetic degrees can stretch against angles between
    /// directions (the ellipsoid's reduced parametrisation): the axis ratio
    /// squared, with room.
    fn geodetic_stretch(&self) -> f64 {
        let axis_ratio = self.axis_ratio();
        axis_ratio * axis_ratio * 1.01
    }

    fn axis_ratio(&self) -> f64 {
        let ellipsoid = self.body().ellipsoid();
        ellipsoid.max_radius() / ellipsoid.min_radius()
    }

    /// Whether the box bends the ground outside it (see the module
    /// documentation): not for a global box, one across the antimeridian,
    /// or on a body far from a sphere, where the tiles around a band's tile
    /// at its edge depth need not hold the edge points it reads (so its
    /// bounds would not hold the band) and `reach` decides nothing.
    fn has_band(&self) -> bool {
        let c = &self.coverage;
        !c.is_global() && c.west <= c.east && self.axis_ratio() <= NEAR_SPHERE
    }

    /// Where a point (degrees, with its unit direction) outside the box
    /// takes part of the inset's edge, for a box that [has a
    /// band](InsetSource::has_band): the weight (1 at the box, 0 at
    /// [`InsetSource::transition_m`], a smoothstep between) and the nearest point of the
    /// box. `None` inside the box or beyond the band.
    fn ramp(&self, lat: f64, lon: f64, direction: glam::DVec3) -> Option<(f64, crate::geo::body::Geodetic)> {
        let c = &self.coverage;
        let ellipsoid = self.body().ellipsoid();
        let (q_lat, q_lon) = (lat.clamp(c.south, c.north), lon.clamp(c.west, c.east));
        if q_lat == lat && q_lon == lon {
            return None;
        }
        let q = crate::geo::body::Geodetic::from_degrees(q_lat, q_lon, 0.0);
        let distance = direction.angle_between(ellipsoid.geodetic_to_direction(q)) * ellipsoid.min_radius();
        let band = self.transition_m();
        if distance.is_nan() || distance >= band {
            return None;
        }
        let s = 1.0 - distance / band;
        Some((s * s * (3.0 - 2.0 * s), q))
    }

    /// The depth the band of a tile of `depth` reads the inset's edge at:
    /// its own, or the deepest whose tiles are twice the band wide, so the
    /// edge points within the band of a tile lie in the 3 x 3 tiles around
    /// its ancestor there.
    fn edge_depth(&self, depth: u8) -> u8 {
        let body = self.body();
        let wide = (0..=depth).rev().find(|&d| body.tile_size_m(d) >= 2.0 * self.transition_m()).unwrap_or(0);
        wide.min(depth)
    }

    /// A range holding every edge height the band of `tile` reads, and the
    /// largest geometric error of the tiles they are read from: the
    /// inset's bounds over the tiles around its ancestor at
    /// [`InsetSource::edge_depth`] (its edge neighbours and theirs), each
    /// read by `bounds_of`; `None` where the inset has none there.
    fn edge_range(
        &self,
        tile: TileAddress,
        bounds_of: &impl Fn(&dyn HeightSource, TileAddress) -> Result<TileBounds, SourceError>,
    ) -> Result<Option<EdgeRange>, SourceError> {
        let around = tile.ancestor_at(self.edge_depth(tile.depth())).expect("not deeper than the tile");
        let mut tiles = vec![around];
        for edge in crate::geo::face::Edge::ALL {
            let next = around.neighbour(edge).address;
            tiles.push(next);
            tiles.extend(crate::geo::face::Edge::ALL.map(|e| next.neighbour(e).address));
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
    fn reach_uncached(&self, tile: TileAddress) -> Reach {
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
    fn meets_box_within(&self, extent: Option<&Extent>, depth: u8) -> bool {
        self.coverage.is_global() || extent.is_none_or(|e| !self.beyond(e, self.margin_degrees(depth)))
    }

    /// The latitudes and longitudes (degrees) a tile's stored samples lie
    /// within, from the cap around its centre that holds its corners (on
    /// the cube-sphere the farthest point of a tile from its centre is a
    /// corner). `None` on a body far from a sphere; no longitudes for a cap
    /// over a pole or the antimeridian, or a box across it.
    fn extent(&self, tile: TileAddress) -> Option<Extent> {
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
        let last = crate::geo::address::TILE_CELLS as i32 + 1;
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
    fn largest_band_weight(&self, extent: Option<&Extent>) -> f64 {
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
    fn beyond(&self, extent: &Extent, margin: f64) -> bool {
        let c = &self.coverage;
        if extent.lat_hi < c.south - margin || extent.lat_lo > c.north + margin {
            return true;
        }
        let Some((lon_lo, lon_hi)) = extent.longitudes else { return false };
        let lon_margin = margin / extent.cos_min;
        lon_hi < c.west - lon_margin || lon_lo > c.east + lon_margin
    }
}

/// The inset's edge heights a band reads ([`InsetSource::edge_range`]).
#[derive(Clone, Copy, Debug)]
struct EdgeRange {
    lo: f64,
    hi: f64,
    /// The largest geometric error of the tiles they are read from.
    error: f64,
}

/// Where a tile's stored samples lie ([`InsetSource::extent`]).
struct Extent {
    lat_lo: f64,
    lat_hi: f64,
    longitudes: Option<(f64, f64)>,
    cos_min: f64,
}

/// The inset's heights at edge points, read at one depth from the few
/// tiles a band needs, each read once.
struct EdgeHeights<'a> {
    inset: &'a dyn HeightSource,
    depth: u8,
    tiles: Vec<(TileAddress, Option<SourceTile>)>,
}

impl<'a> EdgeHeights<'a> {
    fn new(inset: &'a dyn HeightSource, depth: u8) -> EdgeHeights<'a> {
        EdgeHeights { inset, depth, tiles: Vec::new() }
    }

    /// The inset's height at `at`, or `None` where it has no tile there.
    fn height(&mut self, at: crate::geo::body::Geodetic) -> Result<Option<f64>, SourceError> {
        let (tile, u, v) = crate::ground::locate(self.inset.body(), at, self.depth);
        let k = match self.tiles.iter().position(|(t, _)| *t == tile) {
            Some(k) => k,
            None => {
                let read = match self.inset.tile(tile) {
                    Ok(t) => Some(t),
                    Err(SourceError::NoData { .. }) => None,
                    Err(e) => return Err(e),
                };
                self.tiles.push((tile, read));
                self.tiles.len() - 1
            }
        };
        Ok(self.tiles[k].1.as_ref().map(|t| t.bilinear(u, v)))
    }
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

/// Stored sample `k` of `from` into `into`: its height, colour and class
/// (where both have them) and whether it was a void.
fn take_sample(into: &mut SourceTile, from: &SourceTile, k: usize) {
    into.heights[k] = from.heights[k];
    let void = from.voids.as_ref().is_some_and(|v| v.samples[k]);
    if let Some(voids) = into.voids.as_mut() {
        voids.samples[k] = void;
    } else if let Some(v) = from.voids.as_ref().filter(|_| void) {
        let mut samples = vec![false; into.heights.len()];
        samples[k] = true;
        into.voids = Some(crate::pack::codec::Voids { fill: v.fill, samples });
    }
    if let (Some(dst), Some(src)) = (into.colour.as_mut(), from.colour.as_ref()) {
        dst[k] = src[k];
    }
    if let Some(dst) = into.classes.as_mut() {
        // Measured ground is never "no data": without classes of its own it
        // keeps the ground below's, or none.
        dst[k] = from.classes.as_ref().map_or(dst[k], |src| src[k]);
        if dst[k] == crate::ground::NO_DATA_CLASS {
            dst[k] = 0;
        }
    }
}

/// The ground below's classes under measured samples: its own, but "no
/// data" turned unknown (0); `None` where nothing is left to say.
fn measured_classes(classes: Option<Vec<u8>>) -> Option<Vec<u8>> {
    let mut classes = classes?;
    for class in classes.iter_mut().filter(|c| **c == crate::ground::NO_DATA_CLASS) {
        *class = 0;
    }
    classes.iter().any(|&c| c != 0).then_some(classes)
}

/// The provenance of ground where both `below` and `above` show: the
/// above's where it is measured (a tile holding measured ground counts
/// as measured ground), else the less measured of the two.
pub(crate) fn mixed_provenance(below: Provenance, above: Provenance) -> Provenance {
    if above.is_measured() { above } else { least_measured(below, above) }
}

fn least_measured(a: Provenance, b: Provenance) -> Provenance {
    match (a, b) {
        (Provenance::Invented, _) | (_, Provenance::Invented) => Provenance::Invented,
        (Provenance::Resampled { from_depth: x }, Provenance::Resampled { from_depth: y }) => {
            Provenance::Resampled { from_depth: x.min(y) }
        }
        (r @ Provenance::Resampled { .. }, _) | (_, r @ Provenance::Resampled { .. }) => r,
        _ => Provenance::Measured,
    }
}

impl InsetSource {
    /// The bounds of `tile`, each side's read by `bounds_of`.
    fn bounds_with(
        &self,
        tile: TileAddress,
        bounds_of: impl Fn(&dyn HeightSource, TileAddress) -> Result<TileBounds, SourceError>,
    ) -> Result<TileBounds, SourceError> {
        // The union with the other side's bounds is only needed where both
        // contribute: in the core it bounded the inset's ground by the base's
        // (a detailed base's worst case, hundreds of metres near Everest), and
        // a camera 2 m over the inset stood inside every node under it.
        match self.reach(tile) {
            Reach::Core => match bounds_of(&*self.inset, tile) {
                Err(SourceError::NoData { .. }) => return bounds_of(&*self.base, tile),
                // Its voids show the ground below: both sides count.
                Ok(inset) if inset.voids && self.voids_show_below() => {}
                other => return other,
            },
            Reach::Outside => return bounds_of(&*self.base, tile),
            Reach::Mixed => {}
        }
        let base = bounds_of(&*self.base, tile)?;
        let inset = match bounds_of(&*self.inset, tile) {
            // A global inset covers everything: nothing of the base shows
            // (but through its voids).
            Ok(inset) if self.coverage.is_global() && !(inset.voids && self.voids_show_below()) => return Ok(inset),
            Ok(inset) => Some(inset),
            Err(SourceError::NoData { .. }) => None,
            Err(e) => return Err(e),
        };
        let edge = if self.has_band() { self.edge_range(tile, &bounds_of)? } else { None };
        if inset.is_none() && edge.is_none() {
            return Ok(base);
        }
        let (mut min_elevation, mut max_elevation) = (base.min_elevation, base.max_elevation);
        let mut error = base.geometric_error;
        for (lo, hi) in inset.iter().map(|i| (i.min_elevation, i.max_elevation)).chain(edge.map(|e| (e.lo, e.hi))) {
            (min_elevation, max_elevation) = (min_elevation.min(lo), max_elevation.max(hi));
        }
        // Coarser than the inset's data, a node's lattice cannot follow the
        // box's edge: where the two sides differ it draws a ramp across
        // cells for what is a step, or (a raster smaller than its cells) no
        // inset at all. Its error holds the largest difference, so selection
        // descends to the data. Finer, the band's smoothstep bends by at
        // most 6 x range / band^2 (`transition_m`) (its largest second derivative),
        // and a lattice cell of side L departs from a curve by its bend x
        // L^2 / 8; twice that, for the edge's own course along the box.
        //
        //
        // The band carries the inset's edge heights (bilinear between the
        // edge depth's samples) out across the ground, fading with its
        // weight: a lattice coarser than twice their spacing can miss their
        // spread, a finer one their kinks, estimated from the edge tiles'
        // lattice error as `error x L / (2 x spacing)` (the property test
        // `stack::nodes_the_band_alone_reaches_...` holds it with room).
        // Band-only tiles once took the step's rule: beside a 400 m lidar
        // pack over ETOPO5, 584 m for nodes 2 km off the box (81 px 1.5 m
        // up); finer ones stated 2 mm where their lattice missed 6 cm.
        let range = max_elevation - min_elevation;
        let body = self.body();
        // Where the tile lies, worked out once for both rules below.
        let extent = self.extent(tile);
        let cell = body.tile_size_m(tile.depth()) / f64::from(crate::geo::lattice::LATTICE_CELLS);
        let band = self.transition_m();
        error = error.max(6.0 * range / (band * band) * cell * cell / 8.0 * 2.0);
        if let Some(e) = &edge {
            let spacing = body.sample_spacing_m(self.edge_depth(tile.depth()));
            let kinks = if cell <= 2.0 * spacing { e.error * cell / (2.0 * spacing) } else { f64::INFINITY };
            error = error.max(self.largest_band_weight(extent.as_ref()) * kinks.min(e.hi - e.lo));
        }
        if self.inset.data_depth().is_some_and(|d| tile.depth() < d)
            && self.meets_box_within(extent.as_ref(), tile.depth())
        {
            error = error.max(range);
        }
        if let Some(inset) = &inset {
            error = error.max(inset.geometric_error).max(self.through_voids_error(tile, inset, range));
        }
        let (provenance, voids) = self.mixed_origin(&base, inset.as_ref());
        Ok(TileBounds { min_elevation, max_elevation, geometric_error: error, provenance, voids })
    }
}

impl InsetSource {
    /// The error of a tile over the inset's voids where the ground below
    /// shows through them: their edge steps as the box's does, and no
    /// lattice coarser than the inset's samples follows it.
    fn through_voids_error(&self, tile: TileAddress, inset: &TileBounds, range: f64) -> f64 {
        let coarser = self.inset.data_depth().is_some_and(|d| tile.depth() < d);
        if inset.voids && self.voids_show_below() && coarser { range } else { 0.0 }
    }

    /// The provenance of a tile where both sides may show, and whether it
    /// holds voids still filled (the inset's where nothing below shows
    /// through them, the base's).
    fn mixed_origin(&self, base: &TileBounds, inset: Option<&TileBounds>) -> (Provenance, bool) {
        let provenance = match inset {
            Some(inset) => mixed_provenance(base.provenance, inset.provenance),
            None => least_measured(base.provenance, Provenance::Invented),
        };
        (provenance, base.voids || inset.is_some_and(|i| i.voids && !self.voids_show_below()))
    }

    /// Stored sample `k` of `inset` into `base` ([`take_sample`]), at
    /// `(lat, lon)` degrees. Past the box a coarse tile shows the bake's
    /// continuation of the edge (its margin is a sample and a half of the
    /// tile's depth: kilometres at coarse depths); over ground no pack
    /// measured, that continuation is no data too, not land.
    fn take_inset_sample(&self, base: &mut SourceTile, inset: &SourceTile, k: usize, (lat, lon): (f64, f64)) {
        take_sample(base, inset, k);
        if !self.voids_show_below()
            && !self.covers(lat, lon)
            && let Some(classes) = base.classes.as_mut()
        {
            classes[k] = crate::ground::NO_DATA_CLASS;
        }
    }

    /// `inset`'s tile with the ground below in its voids, where a pack lies
    /// below ([`InsetSource::voids_show_below`]); the inset's colour and
    /// classes stay (the imagery of a void is the imagery of the place),
    /// the ground below's where the inset has none.
    fn through_voids(&self, mut inset: SourceTile) -> Result<SourceTile, SourceError> {
        let Some(voids) = inset.voids.take().filter(|_| self.voids_show_below()) else { return Ok(inset) };
        let base = self.base.tile(inset.tile)?;
        for (k, _) in voids.samples.iter().enumerate().filter(|&(_, &v)| v) {
            inset.heights[k] = base.heights[k];
        }
        // What shows there now is the ground below, voids and all.
        inset.voids =
            base.voids.clone().filter(|b| voids.samples.iter().zip(&b.samples).any(|(&a, &b)| a && b)).map(|mut b| {
                b.samples.iter_mut().zip(&voids.samples).for_each(|(s, &v)| *s &= v);
                b
            });
        inset.provenance = mixed_provenance(base.provenance, inset.provenance);
        inset.colour = inset.colour.or(base.colour);
        inset.classes = inset.classes.or(base.classes);
        Ok(inset)
    }
}

impl HeightSource for InsetSource {
    fn body(&self) -> &Body {
        self.base.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        // A global inset covers everything: nothing of the base shows,
        // and there is no box to test.
        if self.coverage.is_global() {
            return self.through_voids(self.inset.tile(tile)?);
        }
        // In the core the tile is the inset's samples exactly;
        // the base is read only for the colour or classes the inset lacks,
        // so a heights-and-colour inset does not pay for the ground under it.
        if self.reach(tile) == Reach::Core {
            match self.inset.tile(tile) {
                Ok(mut inset) => {
                    if inset.voids.is_some() && self.voids_show_below() {
                        return self.through_voids(inset);
                    }
                    if inset.colour.is_none() || inset.classes.is_none() {
                        let base = self.base.tile(tile)?;
                        inset.colour = inset.colour.or(base.colour);
                        inset.classes = inset.classes.or_else(|| measured_classes(base.classes));
                    }
                    return Ok(inset);
                }
                Err(SourceError::NoData { .. }) => return self.base.tile(tile),
                Err(e) => return Err(e),
            }
        }
        // Across the box's edge no shortcut: the mix below still gives a base
        // without colour the invented grey where the inset has colour.
        let mut base = self.base.tile(tile)?;
        let inset = match self.inset.tile(tile) {
            Ok(inset) => Some(inset),
            Err(SourceError::NoData { .. }) => None,
            Err(e) => return Err(e),
        };
        if let Some(inset) = &inset {
            if base.colour.is_none() && inset.colour.is_some() {
                base.colour = Some(vec![INVENTED_COLOUR; base.heights.len()]);
            }
            if base.classes.is_none() && inset.classes.is_some() {
                base.classes = Some(vec![0; base.heights.len()]);
            }
        }
        let ellipsoid = self.body().ellipsoid();
        let band = self.has_band();
        let mut edge = EdgeHeights::new(&*self.inset, self.edge_depth(tile.depth()));
        let (mut used_base, mut used_inset, mut used_band) = (false, false, false);
        for (k, d) in sample_directions(tile).into_iter().enumerate() {
            let g = ellipsoid.direction_to_geodetic(d);
            let (lat, lon) = (g.latitude.to_degrees(), g.longitude.to_degrees());
            let shows = self.shows_inset(tile.depth(), lat, lon);
            let Some(inset) = inset.as_ref().filter(|_| shows) else {
                // Past the margin, in the band: bent toward the edge.
                let ramp = if band && !shows { self.ramp(lat, lon, d) } else { None };
                if let Some((weight, at)) = ramp
                    && let Some(target) = edge.height(at)?
                {
                    let below = f64::from(base.heights[k]);
                    base.heights[k] = (below + weight * (target - below)) as f32;
                    used_band = true;
                } else {
                    used_base = true;
                }
                continue;
            };
            if inset.voids.as_ref().is_some_and(|v| v.samples[k]) && self.voids_show_below() {
                // A void of the inset: the ground below shows through.
                used_base = true;
                continue;
            }
            used_inset = true;
            self.take_inset_sample(&mut base, inset, k, (lat, lon));
        }
        let below = if used_band { least_measured(base.provenance, Provenance::Invented) } else { base.provenance };
        base.provenance = match (&inset, used_base || used_band, used_inset) {
            (Some(inset), true, true) => mixed_provenance(below, inset.provenance),
            (Some(inset), false, true) => inset.provenance,
            _ => below,
        };
        Ok(base)
    }

    /// Made of both sides' bounds of the same tile, so a tile narrows here
    /// when it narrows on either side.
    fn bounds(&self, tile: TileAddress, reads: crate::ground::Reads) -> Result<TileBounds, SourceError> {
        self.bounds_with(tile, |source, tile| source.bounds(tile, reads))
    }

    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![&*self.base, &*self.inset]
    }

    fn data_depth(&self) -> Option<u8> {
        self.base.data_depth().max(self.inset.data_depth())
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.base.colour_data_depth().max(self.inset.colour_data_depth())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::EllipsoidSource;

    /// Review finding: on a body far from a sphere the cap around a tile's
    /// centre does not bound its geodetic latitude and longitude, so no tile
    /// may be called core or outside there; on Earth both still happen.
    #[test]
    fn reach_decides_only_on_near_spherical_bodies() {
        let coverage = Coverage { south: 10.0, west: 10.0, north: 40.0, east: 40.0 };
        let over = |body: Body| {
            let base: Arc<dyn HeightSource> = Arc::new(EllipsoidSource::new(body.clone()));
            let inset: Arc<dyn HeightSource> = Arc::new(EllipsoidSource::new(body));
            InsetSource::over(base, inset, coverage)
        };
        let tiles: Vec<TileAddress> = (0..6u8)
            .flat_map(|f| (0..16u32).flat_map(move |x| (0..16u32).map(move |y| (f, x, y))))
            .map(|(f, x, y)| TileAddress::new(f, 4, x, y).expect("in range"))
            .collect();
        let triaxial = over(Body::custom("lumpy", [3.0e6, 2.0e6, 1.0e6]).expect("a body"));
        assert!(tiles.iter().all(|&t| triaxial.reach(t) == Reach::Mixed));
        let earth = over(Body::earth());
        let reaches: Vec<Reach> = tiles.iter().map(|&t| earth.reach(t)).collect();
        assert!(reaches.contains(&Reach::Core) && reaches.contains(&Reach::Outside), "{reaches:?}");
    }
}
