//! Ground queries without a GPU: what physics, placement and a camera's
//! keep-above-ground ask of the height function.
//!
//! The key decision: every query reads the ground at a *fixed physical
//! resolution* (a depth chosen from the caller's spacing, never the view's
//! detail), so a server, a client and the renderer agree on where the
//! surface is whatever each is looking at. The ray cast marches in steps of
//! half a sample spacing and skips ahead wherever the ray is higher above
//! the ellipsoid than the ground can reach (height changes no faster than
//! distance), refines a crossing by bisection, and counts every ground
//! evaluation against a budget: when the budget runs out it answers
//! `Incomplete` with how far it checked, never a miss it did not check.
//!
//! What a body, a ray or a camera meets is the *top* of the surface: the
//! sea's over ground under it ([`crate::water`]), the ground
//! elsewhere. [`GroundReader::height`] stays the ground itself (the sea
//! floor), for those that measure it.

use crate::BoundsAt;
use std::collections::HashMap;

use glam::DVec3;

use crate::water::{Surface, has_sea, surface_at};
use crate::{HeightSource, SourceError, SourceTile, locate};
use planet_geo::address::TileAddress;
use planet_geo::body::Geodetic;
use planet_geo::body::east_north_up;

/// The depth whose sample spacing is at most `spacing_m`.
pub fn depth_for_spacing(source: &dyn HeightSource, spacing_m: f64) -> u8 {
    (0..planet_geo::address::MAX_DEPTH)
        .find(|&d| source.body().sample_spacing_m(d) <= spacing_m)
        .unwrap_or(planet_geo::address::MAX_DEPTH)
}

/// Tiles a [`GroundReader`] kept, carried from one reader to the next
/// (tiles of any depth: a reader uses those of its own). It belongs to one
/// source: drop it when the ground changes (an edit).
#[derive(Debug, Default)]
pub struct GroundCache {
    tiles: HashMap<TileAddress, SourceTile>,
}

impl GroundCache {
    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    /// Whether `tile` is kept.
    pub fn contains(&self, tile: TileAddress) -> bool {
        self.tiles.contains_key(&tile)
    }

    /// Keeps a tile read elsewhere (ahead of the camera, on another thread).
    pub fn insert(&mut self, tile: SourceTile) {
        self.tiles.insert(tile.tile, tile);
    }

    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }

    /// The tiles kept.
    pub fn tiles(&self) -> impl Iterator<Item = TileAddress> + '_ {
        self.tiles.keys().copied()
    }

    /// Keeps the tiles `keep` says to; returns those dropped, for the
    /// caller to free where it likes (a frame hands them to the thread
    /// that allocated them: freeing a hundred tiles cost it milliseconds).
    pub fn retain(&mut self, mut keep: impl FnMut(TileAddress) -> bool) -> Vec<SourceTile> {
        let dropped: Vec<TileAddress> = self.tiles.keys().copied().filter(|&t| !keep(t)).collect();
        dropped.iter().filter_map(|tile| self.tiles.remove(tile)).collect()
    }
}

/// Reads the ground at one depth, keeping the tiles it has read.
#[derive(Debug)]
pub struct GroundReader<'a> {
    source: &'a dyn HeightSource,
    depth: u8,
    /// The body has a sea ([`has_sea`]).
    sea: bool,
    tiles: HashMap<TileAddress, SourceTile>,
    /// Ground evaluations made.
    pub evaluations: usize,
}

impl<'a> GroundReader<'a> {
    pub fn new(source: &'a dyn HeightSource, depth: u8) -> GroundReader<'a> {
        GroundReader { source, depth, sea: has_sea(source.body()), tiles: HashMap::new(), evaluations: 0 }
    }

    /// The depth this reader reads.
    pub fn depth(&self) -> u8 {
        self.depth
    }

    /// Elevation (metres) at a latitude/longitude.
    pub fn height(&mut self, at: Geodetic) -> Result<f64, SourceError> {
        Ok(self.height_and_class(at)?.0)
    }

    /// Elevation (metres) at a latitude/longitude, and the surface class of
    /// the nearest stored sample (`None` where the ground holds no classes).
    pub fn height_and_class(&mut self, at: Geodetic) -> Result<(f64, Option<u8>), SourceError> {
        let (t, u, v) = self.tile_at(at)?;
        Ok((t.bilinear(u, v), t.nearest_class(u, v)))
    }

    /// The ground and the water over it at a latitude/longitude, as the
    /// renderer draws them ([`surface_at`]).
    pub fn surface(&mut self, at: Geodetic) -> Result<Surface, SourceError> {
        let sea = self.sea;
        let (t, u, v) = self.tile_at(at)?;
        Ok(surface_at(sea, &t.heights, t.classes.as_deref(), u, v))
    }

    /// What a body dropped from above meets at a latitude/longitude: the
    /// water's surface, or the ground.
    pub fn top(&mut self, at: Geodetic) -> Result<f64, SourceError> {
        Ok(self.surface(at)?.top_m())
    }

    /// The tile holding `at` at this reader's depth (read once, then kept)
    /// and `at`'s fractional stored coordinates in it; one evaluation.
    fn tile_at(&mut self, at: Geodetic) -> Result<(&SourceTile, f64, f64), SourceError> {
        self.evaluations += 1;
        let (tile, u, v) = locate(self.source.body(), at, self.depth);
        if !self.tiles.contains_key(&tile) {
            let t = self.source.tile(tile)?;
            self.tiles.insert(tile, t);
        }
        Ok((&self.tiles[&tile], u, v))
    }

    /// A reader that starts with the tiles an earlier reader of the same
    /// source and depth kept (see [`GroundReader::into_cache`]): how a
    /// caller reads the ground every frame without re-reading its tiles.
    pub fn with_cache(source: &'a dyn HeightSource, depth: u8, cache: GroundCache) -> GroundReader<'a> {
        let tiles = cache.tiles;
        GroundReader { source, depth, sea: has_sea(source.body()), tiles, evaluations: 0 }
    }

    /// The tiles this reader holds, to hand to the next reader.
    pub fn into_cache(self) -> GroundCache {
        GroundCache { tiles: self.tiles }
    }

    /// Highest the top of the surface can reach near `at` (from bounds,
    /// raised to the sea's level where the body has one).
    fn ceiling(&self, at: Geodetic) -> Result<f64, SourceError> {
        let (tile, _, _) = locate(self.source.body(), at, self.depth.min(6));
        let highest = self.source.tile_bounds(tile)?.max_elevation;
        Ok(if self.sea { highest.max(f64::from(crate::water::SEA_LEVEL_M)) } else { highest })
    }

    /// Elevation and unit surface normal (body-fixed) at a latitude/longitude,
    /// from central differences one sample spacing apart.
    pub fn height_and_normal(&mut self, at: Geodetic) -> Result<(f64, DVec3), SourceError> {
        let body = self.source.body().clone();
        let e = body.ellipsoid();
        let h = self.height(at)?;
        let enu = east_north_up(at);
        let step = body.sample_spacing_m(self.depth);
        let origin = e.geodetic_to_point(Geodetic { height: 0.0, ..at });
        let mut probe = |offset: DVec3| -> Result<f64, SourceError> {
            let g = e.point_to_geodetic(origin + offset);
            self.height(Geodetic { height: 0.0, ..g })
        };
        let dx = (probe(enu.col(0) * step)? - probe(enu.col(0) * -step)?) / (2.0 * step);
        let dy = (probe(enu.col(1) * step)? - probe(enu.col(1) * -step)?) / (2.0 * step);
        let normal = (enu.col(2) - enu.col(0) * dx - enu.col(1) * dy).normalize();
        Ok((h, normal))
    }
}

/// `point` (body-fixed), lifted along the geodetic normal if needed so it
/// stands at least `clearance_m` above the top of the surface read by
/// `reader` (the water over the sea, the ground elsewhere): the viewer's
/// rule that the camera never goes below the ground or under the sea.
/// Returns the point unchanged when it is already clear.
pub fn keep_above_ground(reader: &mut GroundReader, point: DVec3, clearance_m: f64) -> Result<DVec3, SourceError> {
    let e = *reader.source.body().ellipsoid();
    let g = e.point_to_geodetic(point);
    let ground = reader.top(Geodetic { height: 0.0, ..g })?;
    let lowest = ground + clearance_m;
    Ok(if g.height < lowest { e.geodetic_to_point(Geodetic { height: lowest, ..g }) } else { point })
}

/// What a ray cast found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RayHit {
    /// The ray meets the ground `distance` metres along it, at `point`.
    Hit { distance: f64, point: DVec3 },
    /// Checked all the way to the maximum distance: no ground.
    Miss,
    /// The work budget ran out after checking `checked` metres.
    Incomplete { checked: f64 },
}

/// Casts a ray (body-fixed origin and direction) against the top of the
/// surface (water, or ground) read at `depth`, up to `max_distance` metres, with at most `budget` ground
/// evaluations.
pub fn raycast(
    source: &dyn HeightSource,
    origin: DVec3,
    direction: DVec3,
    max_distance: f64,
    depth: u8,
    budget: usize,
) -> Result<RayHit, SourceError> {
    let d = direction.normalize();
    let e = *source.body().ellipsoid();
    let mut reader = GroundReader::new(source, depth);
    let step = 0.5 * source.body().sample_spacing_m(depth);
    let above = |reader: &mut GroundReader, t: f64| -> Result<f64, SourceError> {
        let g = e.point_to_geodetic(origin + d * t);
        Ok(g.height - reader.top(Geodetic { height: 0.0, ..g })?)
    };
    let mut t = 0.0;
    if above(&mut reader, t)? <= 0.0 {
        return Ok(RayHit::Hit { distance: 0.0, point: origin });
    }
    while t < max_distance {
        if reader.evaluations >= budget {
            return Ok(RayHit::Incomplete { checked: t });
        }
        // Skip ahead while the ray is above anything the ground can reach.
        let g = e.point_to_geodetic(origin + d * t);
        let clearance = g.height - reader.ceiling(Geodetic { height: 0.0, ..g })?;
        let advance = if clearance > step { clearance } else { step };
        let next = (t + advance).min(max_distance);
        let now = above(&mut reader, next)?;
        if now <= 0.0 {
            // Bisect the crossing between t (above) and next (below).
            let (mut lo, mut hi) = (t, next);
            for _ in 0..40 {
                if reader.evaluations >= budget {
                    return Ok(RayHit::Incomplete { checked: lo });
                }
                let mid = 0.5 * (lo + hi);
                if above(&mut reader, mid)? > 0.0 {
                    lo = mid
                } else {
                    hi = mid
                }
                if hi - lo < 1e-4 {
                    break;
                }
            }
            return Ok(RayHit::Hit { distance: hi, point: origin + d * hi });
        }
        t = next;
    }
    Ok(RayHit::Miss)
}

/// Triangles of the ground around a point, for a physics engine.
#[derive(Clone, Debug, PartialEq)]
pub struct CollisionPatch {
    /// Body-fixed positions, metres.
    pub vertices: Vec<DVec3>,
    pub triangles: Vec<[u32; 3]>,
}

/// A square patch `2 * half_extent_m` across centred on `at`, with vertices
/// one sample spacing of `depth` apart, each on the top of the surface
/// read at `depth` (a body dropped on the sea floats on its surface).
pub fn collision_patch(
    source: &dyn HeightSource,
    at: Geodetic,
    half_extent_m: f64,
    depth: u8,
) -> Result<CollisionPatch, SourceError> {
    let body = source.body().clone();
    let e = body.ellipsoid();
    let spacing = body.sample_spacing_m(depth);
    let n = ((half_extent_m / spacing).ceil() as i64).max(1);
    let enu = east_north_up(at);
    let origin = e.geodetic_to_point(Geodetic { height: 0.0, ..at });
    let mut reader = GroundReader::new(source, depth);
    let side = (2 * n + 1) as u32;
    let mut vertices = Vec::with_capacity((side * side) as usize);
    for j in -n..=n {
        for i in -n..=n {
            let p = origin + enu.col(0) * (i as f64 * spacing) + enu.col(1) * (j as f64 * spacing);
            let g = Geodetic { height: 0.0, ..e.point_to_geodetic(p) };
            let h = reader.top(g)?;
            vertices.push(e.geodetic_to_point(Geodetic { height: h, ..g }));
        }
    }
    Ok(CollisionPatch { vertices, triangles: grid_triangles(side) })
}

/// The triangles of a `side` x `side` vertex grid in row order (two per
/// cell, counter-clockwise seen from above): the one triangulation every
/// collision mesh of the ground uses.
pub fn grid_triangles(side: u32) -> Vec<[u32; 3]> {
    let mut triangles = Vec::with_capacity(((side - 1) * (side - 1) * 2) as usize);
    for j in 0..side - 1 {
        for i in 0..side - 1 {
            let k = j * side + i;
            triangles.push([k, k + 1, k + side + 1]);
            triangles.push([k, k + side + 1, k + side]);
        }
    }
    triangles
}
