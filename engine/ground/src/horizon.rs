//! The horizon map: how high the ground around each point rises toward the
//! sun (cast shadows) and all around (ambient occlusion), read from the same
//! height function the cut and the queries use.
//!
//! The key decision: the map is a stack of nested square rasters in one
//! tangent plane around the camera's nadir (each level [`LEVEL_RATIO`]
//! times wider than the one inside it), filled by reading the ground at the
//! depth whose spacing matches the level's texel. It therefore knows
//! nothing of nodes, slots or cube faces: a ridge casts its shadow across
//! any node edge, face edge or residency state, and a caster behind the
//! camera counts. Per texel it keeps the elevation angle of the ground's
//! horizon along the sun's azimuth, marched outward through ever coarser
//! levels (near ground at fine resolution, far ground at coarse), and the
//! openness of the sky above it (1 - the mean sine of the horizon in eight
//! directions). A fragment is sunlit where the sun stands above its
//! horizon; the comparison is made per fragment with the fragment's own
//! sun elevation, so a map stays right while the sun moves a little and
//! is rebuilt only when the camera or the sun moves far
//! ([`HorizonPlan::serves`]). Curvature is the tangent-plane drop
//! `s^2 / 2R`; the rasters are the ground's orthographic projection on the
//! plane, which is exact at the centre and within 0.5% of the ground
//! distance 250 km out.

use glam::{DVec2, DVec3};

use std::collections::HashSet;

use crate::query::{GroundReader, depth_for_spacing};
use crate::{HeightSource, locate};
use planet_geo::address::TileAddress;
use planet_geo::body::{Body, Geodetic, east_north_up};

/// Texels along a level's side.
pub const HORIZON_TEXELS: u32 = 256;
/// Most levels a map holds.
pub const HORIZON_LEVELS: u32 = 5;
/// How much wider each level is than the one inside it.
pub const LEVEL_RATIO: f64 = 4.0;
/// The finest level's narrowest extent (metres): about 8 m texels.
pub const FINEST_EXTENT_MIN_M: f64 = 2048.0;
/// The finest level spans this many camera heights above the ground.
const EXTENT_PER_ALTITUDE: f64 = 16.0;
/// Directions the openness averages.
const OPENNESS_DIRECTIONS: usize = 8;
/// How far (texels of its own level) a texel's openness looks.
const OPENNESS_REACH_TEXELS: f64 = 24.0;
/// Each step outward is at least this share of the distance so far.
const STEP_GROWTH: f64 = 1.0 / 16.0;
/// A sun this far below the centre's horizon lights nothing the map covers
/// (radians): its horizons are not marched.
const SUN_SET: f64 = -0.1;
/// A horizon angle (radians) that shadows nothing: `-pi / 2`.
pub const NO_HORIZON: f32 = -std::f32::consts::FRAC_PI_2;

/// Where and for what sun a map is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HorizonPlan {
    /// The map's centre: the surface point under the camera.
    pub centre: Geodetic,
    /// The finest level's side (metres), a power of two.
    pub finest_extent_m: f64,
    /// Body-fixed unit direction toward the sun.
    pub sun: DVec3,
}

impl HorizonPlan {
    /// The plan for a camera at body-fixed `camera`, `altitude_m` above the
    /// ground, under `sun`: the finest level spans 16 altitudes (at least
    /// [`FINEST_EXTENT_MIN_M`]), rounded up to a power of two so that small
    /// height changes keep the plan.
    pub fn for_camera(body: &Body, camera: DVec3, altitude_m: f64, sun: DVec3) -> HorizonPlan {
        let centre = Geodetic { height: 0.0, ..body.ellipsoid().point_to_geodetic(camera) };
        let wanted = (EXTENT_PER_ALTITUDE * altitude_m.max(0.0)).max(FINEST_EXTENT_MIN_M);
        HorizonPlan { centre, finest_extent_m: wanted.log2().ceil().exp2(), sun: sun.normalize() }
    }

    /// Whether a map built for `self` still serves a view that plans
    /// `wanted`: the same level sizes, the sun within a fifth of a degree,
    /// and the new centre within an eighth of the finest level of the map's.
    pub fn serves(&self, wanted: &HorizonPlan, body: &Body) -> bool {
        let e = body.ellipsoid();
        let moved = e.geodetic_to_point(self.centre).distance(e.geodetic_to_point(wanted.centre));
        self.finest_extent_m == wanted.finest_extent_m
            && self.sun.angle_between(wanted.sun) < 0.2f64.to_radians()
            && moved < self.finest_extent_m / 8.0
    }
}

/// One level: a square of `HORIZON_TEXELS`^2, row by row from the map's
/// south-west corner (x east, y north).
#[derive(Clone, Debug, PartialEq)]
pub struct HorizonLevel {
    /// Side, metres.
    pub extent_m: f64,
    /// Ground height per texel (metres; NaN beyond the body's limb).
    pub heights: Vec<f32>,
    /// Elevation angle (radians) of the ground's horizon along the sun's
    /// azimuth ([`NO_HORIZON`] where nothing rises or the sun is down).
    pub horizon: Vec<f32>,
    /// Share of the sky not hidden by the ground around, 0..1.
    pub openness: Vec<f32>,
}

impl HorizonLevel {
    fn texel_m(&self) -> f64 {
        self.extent_m / f64::from(HORIZON_TEXELS)
    }

    /// Continuous texel coordinates of map position `p` (texel centres at
    /// integers).
    fn texel_coordinates(&self, p: DVec2) -> DVec2 {
        p / self.texel_m() + DVec2::splat(0.5 * f64::from(HORIZON_TEXELS) - 0.5)
    }

    /// Bilinear height at map position `p`; `None` outside the level or
    /// beyond the limb.
    fn height_at(&self, p: DVec2) -> Option<f64> {
        bilinear(&self.heights, self.texel_coordinates(p))
    }
}

/// Fills the NaN texels of a raster marched at even texels with the mean
/// of their even neighbours (a bilinear upsampling); a texel with none
/// (the last row or column) takes its even neighbour before it.
fn fill_between_even_texels(raster: &mut [f32]) {
    let n = HORIZON_TEXELS as usize;
    for y in 0..n {
        for x in 0..n {
            if !raster[y * n + x].is_nan() {
                continue;
            }
            let (mut sum, mut count) = (0.0, 0.0);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx < 0 || ny < 0 || nx >= n as i64 || ny >= n as i64 || nx % 2 == 1 || ny % 2 == 1 {
                    continue;
                }
                let value = raster[ny as usize * n + nx as usize];
                if !value.is_nan() {
                    sum += value;
                    count += 1.0;
                }
            }
            raster[y * n + x] = if count > 0.0 { sum / count } else { 1.0 };
        }
    }
}

/// Bilinear read of a level's raster at texel coordinates `t`; `None`
/// outside it or where a corner is NaN.
fn bilinear(raster: &[f32], t: DVec2) -> Option<f64> {
    let n = HORIZON_TEXELS as usize;
    let (fx, fy) = (t.x.floor(), t.y.floor());
    if fx < 0.0 || fy < 0.0 || fx + 1.0 >= n as f64 || fy + 1.0 >= n as f64 {
        return None;
    }
    let (x, y) = (fx as usize, fy as usize);
    let (u, v) = (t.x - fx, t.y - fy);
    let at = |x: usize, y: usize| f64::from(raster[y * n + x]);
    let (a, b, c, d) = (at(x, y), at(x + 1, y), at(x, y + 1), at(x + 1, y + 1));
    let h = (a * (1.0 - u) + b * u) * (1.0 - v) + (c * (1.0 - u) + d * u) * v;
    (!h.is_nan()).then_some(h)
}

/// Reads the top of the surface (the water over the sea, the ground
/// elsewhere) at one depth; where a tile cannot be read, its
/// nearest readable ancestor stands in (NaN when none can), and a tile
/// that failed once is not asked for again.
struct StandInReader<'a> {
    source: &'a dyn HeightSource,
    /// One reader per depth, the wanted one last.
    readers: Vec<GroundReader<'a>>,
    unreadable: HashSet<TileAddress>,
}

impl<'a> StandInReader<'a> {
    fn new(source: &'a dyn HeightSource, depth: u8) -> StandInReader<'a> {
        let readers = (0..=depth).map(|d| GroundReader::new(source, d)).collect();
        StandInReader { source, readers, unreadable: HashSet::new() }
    }

    fn height(&mut self, at: Geodetic) -> f64 {
        for reader in self.readers.iter_mut().rev() {
            let (tile, _, _) = locate(self.source.body(), at, reader.depth());
            if self.unreadable.contains(&tile) {
                continue;
            }
            // The top of the surface: the sea's shadows fall on the water.
            match reader.top(at) {
                Ok(h) => return h,
                Err(_) => {
                    self.unreadable.insert(tile);
                }
            }
        }
        f64::NAN
    }
}

/// A built map; see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct HorizonMap {
    pub plan: HorizonPlan,
    /// Body-fixed surface point at the centre.
    pub centre: DVec3,
    /// The tangent plane's axes (body-fixed units).
    pub east: DVec3,
    pub north: DVec3,
    pub up: DVec3,
    /// Finest first; fewer than [`HORIZON_LEVELS`] when a wider one would
    /// pass the body's radius.
    pub levels: Vec<HorizonLevel>,
    /// The body's mean radius (the curvature's drop).
    radius_m: f64,
    /// The highest ground any level holds (metres): a march stops where
    /// nothing farther can rise above what it found.
    highest_m: f64,
    /// Tiles that could not be read (corrupt, or a server failing): their
    /// nearest readable ancestor stood in, or the texels were left without
    /// ground (lit and open).
    pub unreadable_tiles: usize,
}

impl HorizonMap {
    /// Reads the ground of `source` for `plan` and marches its horizons.
    /// A tile that cannot be read does not fail the map (shading is no
    /// reason to stop a frame): its nearest readable ancestor stands in,
    /// and [`HorizonMap::unreadable_tiles`] counts it.
    pub fn build(source: &dyn HeightSource, plan: HorizonPlan) -> HorizonMap {
        let body = source.body();
        let e = body.ellipsoid();
        let enu = east_north_up(plan.centre);
        let radii = e.radii();
        let radius_m = (radii.x + radii.y + radii.z) / 3.0;
        let mut map = HorizonMap {
            plan,
            centre: e.geodetic_to_point(plan.centre),
            east: enu.col(0),
            north: enu.col(1),
            up: enu.col(2),
            levels: Vec::new(),
            radius_m,
            highest_m: f64::NEG_INFINITY,
            unreadable_tiles: 0,
        };
        let extents: Vec<f64> = (0..HORIZON_LEVELS)
            .map(|k| plan.finest_extent_m * LEVEL_RATIO.powi(k as i32))
            .enumerate()
            .take_while(|&(k, extent)| k == 0 || extent <= radius_m)
            .map(|(_, extent)| extent)
            .collect();
        // One reader per level, each on its own thread: the levels share
        // no tiles (their depths differ).
        let heights: Vec<(Vec<f32>, usize)> = std::thread::scope(|scope| {
            let map = &map;
            let reads: Vec<_> = extents.iter().map(|&e| scope.spawn(move || map.read_heights(source, e))).collect();
            reads.into_iter().map(|r| r.join().expect("a level's read does not panic")).collect()
        });
        for (extent_m, (heights, unreadable)) in extents.into_iter().zip(heights) {
            map.unreadable_tiles += unreadable;
            map.levels.push(HorizonLevel { extent_m, heights, horizon: Vec::new(), openness: Vec::new() });
        }
        map.highest_m = map.levels.iter().flat_map(|l| &l.heights).fold(f64::NEG_INFINITY, |m, &h| m.max(f64::from(h)));
        map.march_all();
        map
    }

    /// The map-plane position (metres east and north of the centre) of a
    /// body-fixed point: its orthographic projection on the plane.
    pub fn map_position(&self, point: DVec3) -> DVec2 {
        let d = point - self.centre;
        DVec2::new(d.dot(self.east), d.dot(self.north))
    }

    /// The surface point whose projection is map position `p` (`None`
    /// beyond the limb).
    fn surface_under(&self, e: &planet_geo::body::Ellipsoid, p: DVec2) -> Option<DVec3> {
        let radii = e.radii();
        let a = self.centre + self.east * p.x + self.north * p.y;
        let (a_s, u_s) = (a / radii, self.up / radii);
        let (qa, qb, qc) = (u_s.length_squared(), 2.0 * a_s.dot(u_s), a_s.length_squared() - 1.0);
        let disc = qb * qb - 4.0 * qa * qc;
        (disc >= 0.0).then(|| a + self.up * ((-qb + disc.sqrt()) / (2.0 * qa)))
    }

    /// A level's heights, read at the depth whose spacing matches its
    /// texel, and how many tiles stood in for unreadable ones.
    fn read_heights(&self, source: &dyn HeightSource, extent_m: f64) -> (Vec<f32>, usize) {
        let n = HORIZON_TEXELS as usize;
        let texel = extent_m / n as f64;
        let e = *source.body().ellipsoid();
        let mut reader = StandInReader::new(source, depth_for_spacing(source, texel));
        let mut heights = Vec::with_capacity(n * n);
        for y in 0..n {
            for x in 0..n {
                let p = (DVec2::new(x as f64, y as f64) + 0.5 - 0.5 * n as f64) * texel;
                heights.push(match self.surface_under(&e, p) {
                    Some(surface) => reader.height(e.surface_point_to_geodetic(surface)) as f32,
                    None => f32::NAN,
                });
            }
        }
        (heights, reader.unreadable.len())
    }

    /// The horizon toward the sun and the openness of every level's texels,
    /// rows shared among the machine's threads.
    fn march_all(&mut self) {
        let n = HORIZON_TEXELS as usize;
        let sun = self.plan.sun;
        let across = DVec2::new(sun.dot(self.east), sun.dot(self.north));
        let toward_sun = (across.length() > 1e-6 && sun.dot(self.up) > SUN_SET).then(|| across.normalize());
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, 8);
        let mut results = Vec::with_capacity(self.levels.len());
        for level in 0..self.levels.len() {
            let mut horizon = vec![NO_HORIZON; n * n];
            let mut openness = vec![1.0f32; n * n];
            let rows = n.div_ceil(threads);
            std::thread::scope(|scope| {
                for (chunk, (h, o)) in horizon.chunks_mut(rows * n).zip(openness.chunks_mut(rows * n)).enumerate() {
                    let this = &*self;
                    scope.spawn(move || {
                        for (k, (h, o)) in h.iter_mut().zip(o.iter_mut()).enumerate() {
                            let index = chunk * rows * n + k;
                            (*h, *o) = this.texel_light(level, index % n, index / n, toward_sun);
                        }
                    });
                }
            });
            fill_between_even_texels(&mut openness);
            results.push((horizon, openness));
        }
        for (level, (horizon, openness)) in self.levels.iter_mut().zip(results) {
            level.horizon = horizon;
            level.openness = openness;
        }
    }

    /// Texel `(x, y)` of `level`: its horizon along `toward_sun` (a unit
    /// map-plane direction; `None`: the sun is down or overhead) and its
    /// openness, marched at even texels only (NaN elsewhere, filled after:
    /// the sky's openness varies more slowly than a shadow's edge, and it
    /// was two thirds of a map's time).
    fn texel_light(&self, level: usize, x: usize, y: usize, toward_sun: Option<DVec2>) -> (f32, f32) {
        let l = &self.levels[level];
        let n = HORIZON_TEXELS as usize;
        let h0 = l.heights[y * n + x];
        if h0.is_nan() {
            return (NO_HORIZON, 1.0);
        }
        let p = (DVec2::new(x as f64, y as f64) + 0.5 - 0.5 * n as f64) * l.texel_m();
        let h0 = f64::from(h0);
        let horizon = toward_sun.map_or(NO_HORIZON, |d| self.horizon_tangent(level, p, h0, d, None).atan() as f32);
        if x % 2 == 1 || y % 2 == 1 {
            return (horizon, f32::NAN);
        }
        let mut hidden = 0.0;
        for k in 0..OPENNESS_DIRECTIONS {
            let angle = std::f64::consts::TAU * k as f64 / OPENNESS_DIRECTIONS as f64;
            let reach = OPENNESS_REACH_TEXELS * l.texel_m();
            let tangent = self.horizon_tangent(level, p, h0, DVec2::from_angle(angle), Some(reach)).max(0.0);
            hidden += tangent / (1.0 + tangent * tangent).sqrt();
        }
        (horizon, (1.0 - hidden / OPENNESS_DIRECTIONS as f64) as f32)
    }

    /// The steepest rise (tangent of the elevation angle, curvature's drop
    /// included) of the ground seen from height `h0` at map position `p`
    /// along unit direction `d`, marching out from `level` through the
    /// coarser ones (or only up to `reach` metres within `level`).
    fn horizon_tangent(&self, level: usize, p: DVec2, h0: f64, d: DVec2, reach: Option<f64>) -> f64 {
        let highest = self.highest_m;
        let mut best = f64::NEG_INFINITY;
        let mut s = self.levels[level].texel_m();
        let last = if reach.is_some() { level } else { self.levels.len() - 1 };
        for l in &self.levels[level..=last] {
            let texel = l.texel_m();
            loop {
                if reach.is_some_and(|r| s > r) {
                    return best;
                }
                let drop = s * s / (2.0 * self.radius_m);
                // Nothing farther can rise above what was found.
                if (highest - h0 - drop) / s <= best {
                    return best;
                }
                let Some(h) = l.height_at(p + d * s) else { break };
                best = best.max((h - h0 - drop) / s);
                s += texel.max(s * STEP_GROWTH);
            }
        }
        best
    }

    /// The level a map position reads and the texel coordinates there: the
    /// finest whose inner nine tenths hold it (as the shader chooses).
    fn level_at(&self, p: DVec2) -> Option<(&HorizonLevel, DVec2)> {
        let r = p.x.abs().max(p.y.abs());
        let level = self.levels.iter().find(|l| r < 0.45 * l.extent_m)?;
        Some((level, level.texel_coordinates(p)))
    }

    /// The ground's height (metres) under a body-fixed point, from the
    /// finest level holding it; `None` outside the map.
    pub fn height_at(&self, point: DVec3) -> Option<f64> {
        let (level, t) = self.level_at(self.map_position(point))?;
        bilinear(&level.heights, t)
    }

    /// The horizon angle and openness at a body-fixed ground point, read
    /// bilinearly from the finest level holding it; `None` outside the map.
    pub fn light_at(&self, point: DVec3) -> Option<(f64, f64)> {
        let (level, t) = self.level_at(self.map_position(point))?;
        Some((bilinear(&level.horizon, t)?, bilinear(&level.openness, t)?))
    }

    /// Whether the sun is hidden from body-fixed ground point `point` (with
    /// ellipsoid normal `up`) by the ground around it; `None` outside the map.
    pub fn in_shadow(&self, point: DVec3, up: DVec3) -> Option<bool> {
        let (horizon, _) = self.light_at(point)?;
        Some(self.plan.sun.dot(up).asin() < horizon)
    }

    /// Heights are read once; this is the map's size in texels.
    pub fn texel_count(&self) -> usize {
        self.levels.len() * (HORIZON_TEXELS * HORIZON_TEXELS) as usize
    }

    /// The texels as the GPU image holds them: per level, per texel, the
    /// horizon angle (radians) and the openness as half floats
    /// (`R16G16_SFLOAT`, little-endian: a format every device filters).
    pub fn texel_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.texel_count() * 4);
        for level in &self.levels {
            for (&h, &o) in level.horizon.iter().zip(&level.openness) {
                out.extend(half_bits(h).to_le_bytes());
                out.extend(half_bits(o).to_le_bytes());
            }
        }
        out
    }
}

/// IEEE half-float bits of `x`, rounded to nearest even; magnitudes below
/// the smallest normal half (6e-5) become zero, which angles and shares of
/// the sky can afford.
fn half_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = (bits >> 16) & 0x8000;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = bits & 0x7f_ffff;
    if exponent <= 0 {
        return sign as u16;
    }
    if exponent >= 31 {
        return (sign | 0x7c00) as u16;
    }
    let mut half = sign | ((exponent as u32) << 10) | (mantissa >> 13);
    let rest = mantissa & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && half & 1 == 1) {
        // A carry out of the mantissa rightly raises the exponent.
        half += 1;
    }
    half as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceError;
    use crate::query::{RayHit, raycast};

    /// Ridges a few kilometres apart and up to 2.3 km high around 27.9 N
    /// 86.9 E, exact at every depth; and a tile that cannot be read
    /// (corrupt, or its server down), if one is named.
    #[derive(Debug)]
    struct Ridges(Body, Option<planet_geo::address::TileAddress>);

    impl Ridges {
        fn height(&self, g: Geodetic) -> f64 {
            let x = (g.longitude - 86.9f64.to_radians()) * 6.371e6 * 27.9f64.to_radians().cos();
            let y = (g.latitude - 27.9f64.to_radians()) * 6.371e6;
            1500.0 * (x / 3000.0).sin() * (y / 4000.0).cos() + 800.0 * ((x + y) / 1700.0).sin()
        }
    }

    impl HeightSource for Ridges {
        fn parts(&self) -> Vec<&dyn HeightSource> {
            Vec::new()
        }
        fn body(&self) -> &Body {
            &self.0
        }
        fn tile(&self, tile: planet_geo::address::TileAddress) -> Result<crate::SourceTile, SourceError> {
            if self.1 == Some(tile) {
                return Err(SourceError::NoData { tile });
            }
            let e = self.0.ellipsoid();
            let heights = crate::sample_directions(tile)
                .into_iter()
                .map(|d| self.height(e.direction_to_geodetic(d)) as f32)
                .collect();
            let provenance = crate::Provenance::Invented;
            Ok(crate::SourceTile { tile, heights, classes: None, colour: None, provenance, voids: None })
        }
        fn bounds(
            &self,
            _: planet_geo::address::TileAddress,
            _reads: crate::Reads,
        ) -> Result<crate::TileBounds, SourceError> {
            let provenance = crate::Provenance::Invented;
            Ok(crate::TileBounds {
                min_elevation: -2300.0,
                max_elevation: 2300.0,
                geometric_error: 0.0,
                provenance,
                voids: false,
            })
        }
        fn data_depth(&self) -> Option<u8> {
            None
        }
        fn colour_data_depth(&self) -> Option<u8> {
            None
        }
    }

    /// Ridges under a sun 8 degrees up from the south-west: the map's
    /// shadow agrees with a ray cast toward the sun from each point of the
    /// surface (the ground, or the sea over ridges below 0 m).
    #[test]
    fn the_maps_shadows_agree_with_ray_casts_toward_the_sun() {
        let source = Ridges(Body::earth(), None);
        let body = source.body().clone();
        let e = *body.ellipsoid();
        let at = Geodetic::from_degrees(27.9, 86.9, 0.0);
        let enu = east_north_up(at);
        let (up_angle, azimuth) = (8f64.to_radians(), 225f64.to_radians());
        let sun = (enu.col(2) * up_angle.sin()
            + (enu.col(0) * azimuth.sin() + enu.col(1) * azimuth.cos()) * up_angle.cos())
        .normalize();
        let camera = e.geodetic_to_point(Geodetic { height: 3000.0, ..at });
        let plan = HorizonPlan::for_camera(&body, camera, 500.0, sun);
        let map = HorizonMap::build(&source, plan);
        assert_eq!(map.levels.len(), HORIZON_LEVELS as usize);
        let level = &map.levels[0];
        let depth = depth_for_spacing(&source, level.texel_m());
        let (mut both, mut either, mut points) = (0, 0, 0);
        for j in 0..16 {
            for i in 0..16 {
                let p = (DVec2::new(i as f64, j as f64) / 15.0 - 0.5) * 0.85 * level.extent_m;
                let surface = map.surface_under(&e, p).expect("inside the limb");
                let g = e.surface_point_to_geodetic(surface);
                // The top of the surface: the sea over the ridges below 0 m.
                let ground = e.geodetic_to_point(Geodetic { height: source.height(g).max(0.0), ..g });
                let up = g.normal();
                let cast = raycast(&source, ground + up * 1.0, sun, 30_000.0, depth, 1_000_000).expect("cast");
                assert!(!matches!(cast, RayHit::Incomplete { .. }), "the cast finished");
                let ray = matches!(cast, RayHit::Hit { .. });
                let mapped = map.in_shadow(ground, up).expect("inside the map");
                both += usize::from(ray && mapped);
                either += usize::from(ray || mapped);
                points += 1;
            }
        }
        let iou = both as f64 / either as f64;
        eprintln!("shadowed by both {both}, by either {either}, of {points}: IoU {iou:.3}");
        assert!(either >= 40, "the view has shadows to compare ({either} of {points})");
        assert!(iou >= 0.9, "intersection over union {iou:.2} ({both} of {either})");
    }

    /// A tile that cannot be read does not fail the map: its parent stands
    /// in, the failure is counted once, and the ground there is still the
    /// ridges' (within the coarser tile's interpolation).
    #[test]
    fn an_unreadable_tile_is_stood_in_for_by_its_parent() {
        let body = Body::earth();
        let e = *body.ellipsoid();
        let at = Geodetic::from_degrees(27.9, 86.9, 0.0);
        let camera = e.geodetic_to_point(Geodetic { height: 3000.0, ..at });
        let plan = HorizonPlan::for_camera(&body, camera, 500.0, DVec3::new(0.3, 0.2, 0.9).normalize());
        let depth = depth_for_spacing(&Ridges(body.clone(), None), plan.finest_extent_m / f64::from(HORIZON_TEXELS));
        let (tile, _, _) = crate::locate(&body, at, depth);
        let source = Ridges(body.clone(), Some(tile));
        let map = HorizonMap::build(&source, plan);
        assert_eq!(map.unreadable_tiles, 1, "one tile, asked for once");
        let ground = map.height_at(camera).expect("the map holds its centre");
        let truth = source.height(at);
        assert!((ground - truth).abs() < 60.0, "the parent's ground {ground:.0} m against {truth:.0} m");
        assert!(map.levels[0].heights.iter().all(|h| h.is_finite()), "no texel left without ground");
    }

    #[test]
    fn half_floats_round_to_the_nearest() {
        let value = |h: u16| {
            let exponent = i32::from((h >> 10) & 0x1f);
            let magnitude = (1.0 + f64::from(h & 0x3ff) / 1024.0) * 2f64.powi(exponent - 15);
            if h & 0x8000 != 0 { -magnitude } else { magnitude }
        };
        for x in [1.0f32, -1.5707964, 0.25, 0.999, 1e-3, 0.33333334, -0.1] {
            let back = value(half_bits(x));
            assert!((back - f64::from(x)).abs() <= f64::from(x.abs()) / 2048.0, "{x} -> {back}");
        }
        assert_eq!(half_bits(0.0), 0);
        assert_eq!(half_bits(1.0), 0x3c00);
        assert_eq!(half_bits(-2.0), 0xc000);
    }

    #[test]
    fn a_plan_is_kept_for_small_moves_and_replaced_for_large_ones() {
        let body = Body::earth();
        let e = *body.ellipsoid();
        let sun = DVec3::new(0.3, 0.2, 0.9).normalize();
        let at = |lat: f64, height: f64| e.geodetic_to_point(Geodetic::from_degrees(lat, 10.0, height));
        let plan = HorizonPlan::for_camera(&body, at(45.0, 1000.0), 100.0, sun);
        assert_eq!(plan.finest_extent_m, 2048.0, "at least the narrowest extent, a power of two");
        assert!(plan.serves(&HorizonPlan::for_camera(&body, at(45.0001, 1000.0), 110.0, sun), &body));
        assert!(!plan.serves(&HorizonPlan::for_camera(&body, at(45.01, 1000.0), 100.0, sun), &body), "1.1 km away");
        assert!(!plan.serves(&HorizonPlan::for_camera(&body, at(45.0, 1000.0), 1000.0, sun), &body), "higher");
        let turned = DVec3::new(0.3, 0.21, 0.9).normalize();
        assert!(!plan.serves(&HorizonPlan::for_camera(&body, at(45.0, 1000.0), 100.0, turned), &body), "sun moved");
    }
}
