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
//! inset's bounds; farther out it is read from coarser levels of the pack,
//! so the edge's relief fades out along the way instead of running across
//! the band as streaks (`edge.rs`). Ground in the band is invented. A
//! box across the antimeridian gets no band.
//! Where the inset has colour (or classes) and the ground below has none,
//! the ground below counts as [`INVENTED_COLOUR`] (class 0, unknown), so a
//! coloured regional pack over the bare ellipsoid meets a neutral grey
//! rather than whatever the bake wrote outside its raster.

mod band;
mod edge;
mod samples;

use std::sync::Arc;

use self::edge::EdgeHeights;
use crate::{HeightSource, PackSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions};
use planet_geo::address::TileAddress;
use planet_geo::body::Body;
use planet_packfile::Coverage;

pub use band::Reach;
pub(crate) use samples::mixed_provenance;
use samples::{least_measured, measured_classes, take_sample};

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
struct ReachCache(Arc<std::sync::Mutex<planet_geo::address::TileMap<TileAddress, Reach>>>);

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
        // edge depth's samples, smoother farther out) across the ground,
        // fading with its weight: a lattice coarser than twice their
        // spacing can miss their spread, a finer one their kinks, estimated
        // from the edge tiles' lattice error as `error x L / (2 x spacing)`
        // (the property test
        // `stack::nodes_the_band_alone_reaches_...` holds it with room).
        // Band-only tiles once took the step's rule: beside a 400 m lidar
        // pack over ETOPO5, 584 m for nodes 2 km off the box (81 px 1.5 m
        // up); finer ones stated 2 mm where their lattice missed 6 cm.
        let range = max_elevation - min_elevation;
        let body = self.body();
        // Where the tile lies, worked out once for both rules below.
        let extent = self.extent(tile);
        let cell = body.tile_size_m(tile.depth()) / f64::from(planet_geo::lattice::LATTICE_CELLS);
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

    /// Where the band of `tile` reads the inset's edge, held to the range
    /// the tile's bounds state for it.
    fn edge_heights(&self, tile: TileAddress) -> Result<EdgeHeights<'_>, SourceError> {
        let bounds_of = |s: &dyn HeightSource, t| s.bounds(t, crate::Reads::Allowed);
        let range = if self.has_band() { self.edge_range(tile, &bounds_of)? } else { None };
        Ok(EdgeHeights::new(&*self.inset, self.edge_depth(tile.depth()), self.transition_m(), range))
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
            classes[k] = crate::NO_DATA_CLASS;
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
        let mut edge = self.edge_heights(tile)?;
        let (mut used_base, mut used_inset, mut used_band) = (false, false, false);
        for (k, d) in sample_directions(tile).into_iter().enumerate() {
            let g = ellipsoid.direction_to_geodetic(d);
            let (lat, lon) = (g.latitude.to_degrees(), g.longitude.to_degrees());
            let shows = self.shows_inset(tile.depth(), lat, lon);
            let Some(inset) = inset.as_ref().filter(|_| shows) else {
                // Past the margin, in the band: bent toward the edge.
                let ramp = if band && !shows { self.ramp(lat, lon, d) } else { None };
                if let Some((weight, at, distance)) = ramp
                    && let Some(target) = edge.smoothed(at, distance)?
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
    fn bounds(&self, tile: TileAddress, reads: crate::Reads) -> Result<TileBounds, SourceError> {
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
    use crate::EllipsoidSource;

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
