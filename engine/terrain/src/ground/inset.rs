//! A higher-resolution regional pack over a base source.
//!
//! Inside the inset's coverage box its samples win; across a blend band
//! inside the box's border the two mix with a smoothstep weight of the
//! distance to the border (in degrees of arc, longitude scaled by
//! cos(latitude)), so there is no step at the edge of the inset's data.
//! A tile is `Measured` only where every sample that contributes to it was.
//! Where the inset has colour (or classes) and the ground below has none,
//! the ground below counts as [`INVENTED_COLOUR`] (class 0, unknown), so a
//! coloured regional pack over the bare ellipsoid fades into a neutral grey
//! rather than into whatever the bake wrote outside its raster.

use std::sync::Arc;

use crate::geo::address::TileAddress;
use crate::geo::body::Body;
use crate::geo::cube::sample_direction;
use crate::ground::{HeightSource, PackSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions};
use crate::pack::Coverage;

/// The colour of ground that has none of its own, under a coloured inset.
pub const INVENTED_COLOUR: [u8; 3] = [118, 118, 112];

#[derive(Debug, Clone)]
pub struct InsetSource {
    base: Arc<dyn HeightSource>,
    /// The pack's ground (the pack itself, or the pack with detail).
    inset: Arc<dyn HeightSource>,
    coverage: Coverage,
    blend_degrees: f64,
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
    pub fn new(base: Arc<dyn HeightSource>, inset: PackSource, blend_degrees: f64) -> InsetSource {
        let coverage = inset.pack().header().coverage;
        InsetSource::over(base, Arc::new(inset), coverage, blend_degrees)
    }

    /// Any ground of a pack (e.g. the pack with detail synthesized past its
    /// own data depth) answering for `coverage` over `base`.
    pub fn over(
        base: Arc<dyn HeightSource>,
        inset: Arc<dyn HeightSource>,
        coverage: Coverage,
        blend_degrees: f64,
    ) -> InsetSource {
        InsetSource { base, inset, coverage, blend_degrees: blend_degrees.max(0.0), reaches: ReachCache::default() }
    }

    /// Weight of the inset at a latitude/longitude (degrees): 0 outside the
    /// box, 1 deeper inside it than the blend band.
    pub fn weight(&self, lat: f64, lon: f64) -> f64 {
        inset_weight(&self.coverage, self.blend_degrees, lat, lon)
    }

    /// Where a whole tile lies against the box, from the cap around its
    /// centre that holds its corners (on the cube-sphere the farthest point
    /// of a tile from its centre is a corner): in the core (weight 1
    /// everywhere), wholly outside (weight 0), or neither (or too near a
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
        // Directions are the ellipsoid's reduced parametrisation: on a body
        // far from a sphere (the readers accept axis ratios up to 10, and
        // triaxial ones) geodetic latitude and longitude stretch against it
        // by up to the axis ratio, and the cap says nothing cheaply.
        let ellipsoid = self.body().ellipsoid();
        let axis_ratio = ellipsoid.max_radius() / ellipsoid.min_radius();
        if axis_ratio > 1.01 {
            return Reach::Mixed;
        }
        let centre = sample_direction(tile.sample(64, 64));
        // The stored corners, aprons included: a tile's samples reach one
        // sample past its edges, and the blend is evaluated there too.
        let last = crate::geo::address::TILE_CELLS as i32 + 1;
        let corners = [(-1, -1), (last, -1), (-1, last), (last, last)];
        let angle =
            corners.iter().map(|&(i, j)| centre.angle_between(sample_direction(tile.sample(i, j)))).fold(0.0, f64::max);
        // Geodetic against direction angles: at most the axis ratio (squared,
        // with room); the rest is rounding.
        let r = angle.to_degrees() * axis_ratio * axis_ratio * 1.01 + 1e-9;
        let g = ellipsoid.direction_to_geodetic(centre);
        let (lat, lon) = (g.latitude.to_degrees(), g.longitude.to_degrees());
        let (lat_lo, lat_hi) = (lat - r, lat + r);
        let cos_min = lat_lo.abs().max(lat_hi.abs()).to_radians().cos();
        if lat_hi >= 89.0 || lat_lo <= -89.0 || c.west > c.east || cos_min <= 0.0 {
            return Reach::Mixed;
        }
        let (lon_lo, lon_hi) = (lon - r / cos_min, lon + r / cos_min);
        if lon_lo <= -180.0 || lon_hi >= 180.0 {
            return Reach::Mixed;
        }
        if lat_hi < c.south || lat_lo > c.north || lon_hi < c.west || lon_lo > c.east {
            return Reach::Outside;
        }
        let band = self.blend_degrees;
        let lon_band = band / cos_min;
        if lat_lo >= c.south + band
            && lat_hi <= c.north - band
            && lon_lo >= c.west + lon_band
            && lon_hi <= c.east - lon_band
        {
            return Reach::Core;
        }
        Reach::Mixed
    }
}

/// Where a tile lies against an inset's box ([`InsetSource::reach`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every point has weight 1: the inset alone.
    Core,
    /// Every point has weight 0: the base alone.
    Outside,
    Mixed,
}

/// Weight of an inset covering `coverage` with a blend band `blend_degrees`
/// wide at a latitude/longitude (degrees): 0 outside the box, 1 deeper
/// inside it than the band, a smoothstep across the band.
pub(crate) fn inset_weight(c: &Coverage, blend_degrees: f64, lat: f64, lon: f64) -> f64 {
    // A global box has no border to blend across (its edges are the poles
    // and the antimeridian, which are not edges of the data).
    if c.is_global() {
        return 1.0;
    }
    if !c.contains(lat, lon) {
        return 0.0;
    }
    let lat_inside = (lat - c.south).min(c.north - lat);
    let east_of_west = (lon - c.west).rem_euclid(360.0);
    let west_of_east = (c.east - lon).rem_euclid(360.0);
    let lon_inside = east_of_west.min(west_of_east) * lat.to_radians().cos();
    let inside = lat_inside.min(lon_inside);
    if blend_degrees == 0.0 {
        return 1.0;
    }
    let t = (inside / blend_degrees).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

pub(crate) fn least_measured(a: Provenance, b: Provenance) -> Provenance {
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
                other => return other,
            },
            Reach::Outside => return bounds_of(&*self.base, tile),
            Reach::Mixed => {}
        }
        let base = bounds_of(&*self.base, tile)?;
        match bounds_of(&*self.inset, tile) {
            // A global inset has weight 1 everywhere: nothing of the base shows.
            Ok(inset) if self.coverage.is_global() => Ok(inset),
            Ok(inset) => Ok(TileBounds {
                min_elevation: base.min_elevation.min(inset.min_elevation),
                max_elevation: base.max_elevation.max(inset.max_elevation),
                geometric_error: base.geometric_error.max(inset.geometric_error),
                provenance: least_measured(base.provenance, inset.provenance),
            }),
            Err(SourceError::NoData { .. }) => Ok(base),
            Err(e) => Err(e),
        }
    }
}

impl HeightSource for InsetSource {
    fn body(&self) -> &Body {
        self.base.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        // A global inset has weight 1 everywhere: nothing of the base shows,
        // and there are no weights to evaluate.
        if self.coverage.is_global() {
            return self.inset.tile(tile);
        }
        // In the core the blend is the inset's samples exactly (weight 1);
        // the base is read only for the colour or classes the inset lacks,
        // so a heights-and-colour inset does not pay for the ground under it.
        if self.reach(tile) == Reach::Core {
            match self.inset.tile(tile) {
                Ok(mut inset) => {
                    if inset.colour.is_none() || inset.classes.is_none() {
                        let base = self.base.tile(tile)?;
                        inset.colour = inset.colour.or(base.colour);
                        inset.classes = inset.classes.or(base.classes);
                    }
                    return Ok(inset);
                }
                Err(SourceError::NoData { .. }) => return self.base.tile(tile),
                Err(e) => return Err(e),
            }
        }
        // Outside the box no shortcut: the blend below still gives a base
        // without colour the invented grey where the inset has colour.
        let mut base = self.base.tile(tile)?;
        let inset = match self.inset.tile(tile) {
            Ok(inset) => inset,
            Err(SourceError::NoData { .. }) => return Ok(base),
            Err(e) => return Err(e),
        };
        if base.colour.is_none() && inset.colour.is_some() {
            base.colour = Some(vec![INVENTED_COLOUR; base.heights.len()]);
        }
        if base.classes.is_none() && inset.classes.is_some() {
            base.classes = Some(vec![0; base.heights.len()]);
        }
        let ellipsoid = self.body().ellipsoid();
        let (mut used_base, mut used_inset) = (false, false);
        for (k, d) in sample_directions(tile).into_iter().enumerate() {
            let g = ellipsoid.direction_to_geodetic(d);
            let w = self.weight(g.latitude.to_degrees(), g.longitude.to_degrees());
            used_inset |= w > 0.0;
            used_base |= w < 1.0;
            base.heights[k] = ((1.0 - w) * f64::from(base.heights[k]) + w * f64::from(inset.heights[k])) as f32;
            if let (Some(dst), Some(src)) = (base.colour.as_mut(), inset.colour.as_ref())
                && w > 0.0
            {
                dst[k] = std::array::from_fn(|c| {
                    ((1.0 - w) * f64::from(dst[k][c]) + w * f64::from(src[k][c])).round() as u8
                });
            }
            if let (Some(dst), Some(src)) = (base.classes.as_mut(), inset.classes.as_ref())
                && w >= 0.5
            {
                dst[k] = src[k];
            }
        }
        base.provenance = match (used_base, used_inset) {
            (true, true) => least_measured(base.provenance, inset.provenance),
            (false, true) => inset.provenance,
            _ => base.provenance,
        };
        Ok(base)
    }

    fn tile_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.bounds_with(tile, |source, tile| source.tile_bounds(tile))
    }

    fn tile_bounds_unread(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.bounds_with(tile, |source, tile| source.tile_bounds_unread(tile))
    }

    fn warm_bounds(&self) -> usize {
        self.base.warm_bounds() + self.inset.warm_bounds()
    }

    /// A tile's bounds here are made of both sides' bounds of the same tile.
    fn narrowed_bounds(&self, into: &mut Vec<TileAddress>) -> bool {
        let base = self.base.narrowed_bounds(into);
        self.inset.narrowed_bounds(into) && base
    }

    fn data_depth(&self) -> Option<u8> {
        self.base.data_depth().max(self.inset.data_depth())
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.base.colour_data_depth().max(self.inset.colour_data_depth())
    }

    fn prefetch(&self, tiles: &[TileAddress]) {
        self.inset.prefetch(tiles);
        self.base.prefetch(tiles);
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
            InsetSource::over(base, inset, coverage, 1.0)
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
