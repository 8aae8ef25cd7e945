//! The shard plan: how a bake's tile set is cut into parts that independent
//! processes bake, and that the merge lays out as one pack.
//!
//! The key decision: the cut is at the pack's height data depth `k`, the
//! shallowest depth sampled from the source. Every tile at or below `k` is
//! baked from the source alone (its samples, voids and error depend on the
//! tile and its own descendants), so a subtree rooted at `k` bakes to the
//! same bytes in any process. Every level above `k` is filtered from the
//! level below across subtree borders, so the merge builds those levels
//! (the same filter and code as a single-process bake), from the shards'
//! tiles. Parts are runs of consecutive subtree roots in key order (a
//! Hilbert curve per face, so a part is a compact patch of ground), cut
//! where the estimated work (below) crosses `i/N` of the whole, so every
//! part gets at least one subtree. The plan reads no data, so every
//! process computes it in a time that does not grow with the set: a global
//! set is cut on whole units above the roots, at least 64 a part
//! (`unit_depth`), a heavy unit cut finer (`global_units`); a regional set
//! on the tiles wholly inside its coverage and the roots on its rim
//! (`regional_units`). Which of a part's tiles meet data its shard finds
//! (`shard_tiles`): a part of a regional set can turn out to hold no tile.
//!
//! **Estimated work**, in integer units so every process sums the same
//! weights to the bit, in any order: per tile, its stored samples plus the source pixels
//! under it (DEM and imagery), from the tile's area and the raster's pixel
//! area at the subtree root's latitude. A geographic raster's pixels shrink
//! towards the poles, so polar tiles read many more of them. A subtree is
//! counted whole, voids and all: a regional pack's parts even out by the
//! ground they span, which is what they walk. The latitude comes from the
//! unwarped cube point (arithmetic and a square root, no transcendental
//! functions whose last bit could differ between two machines' maths
//! libraries). A regional plan's units also rest on tile boxes, measured
//! with those functions as the set's own walk measures them; the merge
//! refuses parts whose plans differ.
//!
//! **Coarse tiles' surfaces**: a level above `k` still reads its classes
//! and colour from the rasters, which the merge does not open. Each coarse
//! tile is given to one part, the part of its first corner descendant at
//! `k`; that shard samples its surface and ships it in the shard file.

use planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
use planet_terrain::geo::cube::cube_point;
use planet_terrain::{Body, TileAddress};
use sha2::{Digest, Sha256};
use std::ops::Range;

use crate::error::BakeError;
use crate::geometry::{Placement, tile_placement};
use crate::stages::tile_set::TileSet;
use planet_terrain::pack::Coverage;

/// How a bake's tile set is cut into parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShardPlan {
    /// Depth of the subtree roots: the pack's height data depth.
    pub(crate) root_depth: u8,
    /// Parts.
    pub(crate) count: u32,
    /// The first root key of each part, ascending; part `i` holds the roots
    /// with keys in `starts[i]..starts[i + 1]` (the first part from key 0,
    /// the last to the end of the depth). A global set's parts start on whole
    /// units above the root depth (`unit_depth`).
    pub(crate) starts: Vec<u64>,
    /// Estimated work of each part (see the module comment).
    pub(crate) work: Vec<u64>,
    /// Tiles in the whole set, where the plan knows them: a global set's;
    /// a regional set's are known only once every shard has chosen its own.
    pub(crate) total_tiles: Option<u64>,
    /// The set's name ([`SetShape::digest`]).
    pub(crate) tile_set_digest: [u8; 32],
}

/// How much a tile costs to bake, for the plan: what the sampling reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorkModel {
    /// Pixel sizes in metres of the rasters that are sampled per tile
    /// (DEM, imagery), and whether each is geographic (latitude/longitude
    /// pixels, narrower towards the poles).
    pub(crate) rasters: [(f64, bool); 2],
    pub(crate) raster_count: usize,
}

impl WorkModel {
    /// Work units of one tile at `depth` whose subtree root lies at
    /// `cos_latitude`.
    fn tile_work(&self, body: &Body, depth: u8, cos_latitude: f64) -> u64 {
        let size = body.tile_size_m(depth);
        // x * x, not powi: powi's precision is unspecified, and the plan
        // must be the same bits on every machine.
        let area = size * size;
        let pixels: f64 = self.rasters[..self.raster_count]
            .iter()
            .map(|&(size, geographic)| {
                let pixel_area = size * size * if geographic { cos_latitude.max(1e-3) } else { 1.0 };
                // At most 1e9 a tile: a billion tiles then sum below u64::MAX.
                (area / pixel_area).min(1e9)
            })
            .sum();
        TILE_STORED_SAMPLE_COUNT as u64 + pixels as u64
    }
}

/// The cosine of a tile's centre latitude (geocentric, on the sphere):
/// exact arithmetic and one correctly rounded square root.
fn cos_latitude(tile: TileAddress) -> f64 {
    let (s0, t0, s1, t1) = tile.grid_bounds();
    let p = cube_point(tile.face(), (s0 + s1) / 2.0, (t0 + t1) / 2.0);
    (p.x * p.x + p.y * p.y).sqrt() / p.length()
}

/// What the plan cuts: the shape of the bake's tile set, known before any
/// data is read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SetShape<'a> {
    /// Every tile from depth 0 to `depth`.
    Global { depth: u8 },
    /// The tiles to `depth` whose box, and every ancestor's, meets
    /// `coverage`; the set keeps those of them that meet data and their
    /// ancestors (`tile_set`), which each shard finds for its own subtrees
    /// (`shard_tiles`).
    Regional { depth: u8, coverage: &'a Coverage },
}

impl SetShape<'_> {
    /// The set's deepest level.
    fn depth(&self) -> u8 {
        match *self {
            SetShape::Global { depth } | SetShape::Regional { depth, .. } => depth,
        }
    }

    /// The name of the tile set the parts of a bake hold between them,
    /// which every part carries and the merge checks. A global set is
    /// every tile to its depth, named by that depth alone: the merge checks
    /// the union is that set by its count (keys are distinct and no deeper
    /// than the depth, so the count decides). A regional set is named as
    /// one declared by its shards, to its depth: no process knows it whole
    /// until the merge, which assembles its levels above the shards from
    /// what every shard declares and checks the waves hold exactly those.
    /// (Every shard used to choose and hash the whole set, 33.5 M keys of a
    /// global 30 m bake, or a regional set's whole walk of its data.)
    pub(crate) fn digest(&self) -> [u8; 32] {
        match *self {
            SetShape::Global { depth } => global_set_digest(depth),
            SetShape::Regional { depth, .. } => declared_set_digest(depth),
        }
    }
}

/// The digest naming the global set of every tile from depth 0 to `depth`.
pub(crate) fn global_set_digest(depth: u8) -> [u8; 32] {
    Sha256::new().chain_update(b"planet tile set: every tile to depth ").chain_update([depth]).finalize().into()
}

/// The digest naming a regional set to `depth`, declared by its shards.
pub(crate) fn declared_set_digest(depth: u8) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"planet tile set: regional, declared by each shard, to depth ")
        .chain_update([depth])
        .finalize()
        .into()
}

/// How many tiles the global set to `depth` holds: `6 (4^(depth+1) - 1) / 3`.
pub(crate) fn global_set_len(depth: u8) -> u64 {
    (0..=depth).map(|d| 6u64 << (2 * u32::from(d))).sum()
}

/// The depth of a global set's units: parts are runs of whole subtrees at
/// this depth, where the sphere has at least 64 of them per part (parts
/// then even out within about a unit's work, a sixty-fourth of a part), so
/// every process plans from `6 x 4^c` units, about `256 x N` at most, not
/// from every subtree root (25 M at the 30 m Earth's depth 11).
fn unit_depth(root_depth: u8, count: u32) -> u8 {
    (1..=root_depth).find(|&c| 6u64 << (2 * u32::from(c)) >= 64 * u64::from(count)).unwrap_or(root_depth)
}

/// The key of the first subtree root at `root_depth` under `unit`: a
/// Hilbert child's index is its parent's times four plus its quadrant's
/// digit.
pub(crate) fn first_root(unit: TileAddress, root_depth: u8) -> u64 {
    let raw = unit.key().raw();
    let shift = 2 * u32::from(root_depth - unit.depth());
    (u64::from(root_depth) << 59) | (raw & (7 << 56)) | ((raw & ((1 << 56) - 1)) << shift)
}

/// The estimated work of every tile of `unit`'s whole subtrees from
/// `root_depth` to `deepest` (4^(d-u) tiles at each depth d), in closed
/// form at the unit's latitude.
fn subtree_work(body: &Body, model: &WorkModel, unit: TileAddress, (root_depth, deepest): (u8, u8)) -> u64 {
    let cos = cos_latitude(unit);
    (root_depth..=deepest).map(|d| model.tile_work(body, d, cos) << (2 * u32::from(d - unit.depth()))).sum()
}

/// The units of the plan, in key order: the key of each one's first
/// subtree root and its estimated work. A global set's units are its
/// tiles at `unit_depth`, each heavier than a 256th of a part's share cut
/// into its four children again and again, down to the roots at most: a
/// geographic raster's polar tiles read far more pixels (1 / cos
/// latitude), and a unit that held a pole's work whole would weigh down
/// its part.
fn global_units(
    body: &Body,
    (root_depth, deepest, unit_depth, count): (u8, u8, u8, u32),
    model: &WorkModel,
) -> Result<Vec<(u64, u64)>, BakeError> {
    let depths = (root_depth, deepest);
    let set = TileSet::Global { depth: deepest };
    let whole: u128 = set
        .depth(unit_depth)
        .map(|unit| unit.map(|u| u128::from(subtree_work(body, model, u, depths))))
        .sum::<Result<_, _>>()?;
    let limit = u64::try_from(whole / (256 * u128::from(count))).unwrap_or(u64::MAX);
    let mut units = Vec::new();
    let mut stack = Vec::new();
    for unit in set.depth(unit_depth) {
        stack.push(unit?);
        while let Some(unit) = stack.pop() {
            let work = subtree_work(body, model, unit, depths);
            match unit.children().filter(|_| work > limit && unit.depth() < root_depth) {
                Some(mut children) => {
                    // Popped in key order.
                    children.sort_by_key(|c| std::cmp::Reverse(c.key()));
                    stack.extend(children);
                }
                None => units.push((first_root(unit, root_depth), work)),
            }
        }
    }
    Ok(units)
}

/// A regional set's units, in key order, and how many subtree roots they
/// hold, from the coverage alone (no data is read): a descent from the
/// faces through the tiles that meet the coverage, stopping at a tile
/// wholly inside it no heavier than `limit` (all its subtrees meet the
/// coverage; counted whole, as a global unit is), or at a root. A tile
/// under one inside the coverage is inside too, with no geometry, so only
/// the coverage's rim is measured, and walked down to the roots: a
/// continent at the 30 m depth 11 has a few thousand rim roots among
/// millions. A root on the rim counts its whole subtree's work, as the
/// plan cannot know its data. `placement` measures a tile (memoised by
/// the caller across the plan's passes).
fn regional_units(
    body: &Body,
    depths: (u8, u8),
    model: &WorkModel,
    limit: u64,
    placement: &mut impl FnMut(TileAddress) -> Placement,
) -> (Vec<(u64, u64)>, u64) {
    let root_depth = depths.0;
    let (mut units, mut roots) = (Vec::new(), 0u64);
    let mut stack: Vec<(TileAddress, bool)> = TileAddress::roots().into_iter().map(|t| (t, false)).collect();
    stack.sort_by_key(|(t, _)| std::cmp::Reverse(t.key()));
    while let Some((tile, under_inside)) = stack.pop() {
        let place = if under_inside { Placement::Inside } else { placement(tile) };
        if place == Placement::Outside {
            continue;
        }
        let work = subtree_work(body, model, tile, depths);
        let inside = place == Placement::Inside;
        if tile.depth() == root_depth || (work <= limit && inside) {
            units.push((first_root(tile, root_depth), work));
            roots += 1 << (2 * u32::from(root_depth - tile.depth()));
            continue;
        }
        let mut children = tile.children().expect("above the root depth");
        children.sort_by_key(|c| std::cmp::Reverse(c.key()));
        stack.extend(children.map(|c| (c, inside)));
    }
    (units, roots)
}

/// [`regional_units`] for the plan of `count` parts: the whole work by the
/// coarsest units, then units no heavier than a 256th of a part's share;
/// where too few remain for the parts (a set of a few roots), every root.
/// Each rim tile is measured once.
fn regional_plan_units(
    body: &Body,
    coverage: &Coverage,
    depths: (u8, u8),
    count: u32,
    model: &WorkModel,
) -> (Vec<(u64, u64)>, u64) {
    let mut measured = std::collections::HashMap::new();
    let mut placement = |t: TileAddress| *measured.entry(t.key()).or_insert_with(|| tile_placement(body, t, coverage));
    let (coarsest, _) = regional_units(body, depths, model, u64::MAX, &mut placement);
    let whole: u128 = coarsest.iter().map(|u| u128::from(u.1)).sum();
    let limit = u64::try_from(whole / (256 * u128::from(count))).unwrap_or(u64::MAX);
    let (units, roots) = regional_units(body, depths, model, limit, &mut placement);
    if units.len() < count as usize && roots >= u64::from(count) {
        return regional_units(body, depths, model, 0, &mut placement);
    }
    (units, roots)
}

impl ShardPlan {
    /// Cuts the set `shape` describes into `count` parts at `root_depth`,
    /// from its units (above), holding nothing per tile.
    pub(crate) fn new(
        body: &Body,
        shape: SetShape,
        root_depth: u8,
        count: u32,
        model: &WorkModel,
    ) -> Result<ShardPlan, BakeError> {
        if root_depth == 0 {
            return Err(BakeError::Options(
                "shard: this bake's data depth is 0 (its six face tiles are the whole bake); bake it in one process"
                    .into(),
            ));
        }
        let depths = (root_depth, shape.depth());
        let (units, roots) = match shape {
            SetShape::Global { depth } => {
                let units = global_units(body, (root_depth, depth, unit_depth(root_depth, count), count), model)?;
                (units, 6u64 << (2 * u32::from(root_depth)))
            }
            SetShape::Regional { coverage, .. } => regional_plan_units(body, coverage, depths, count, model),
        };
        if roots < u64::from(count) {
            return Err(BakeError::Options(format!(
                "shard .../{count}: this bake has only {roots} subtrees at its data depth {root_depth}, and each shard bakes whole subtrees; use at most {roots} shards"
            )));
        }
        let (starts, work) = cut(&units, count);
        let total_tiles = match shape {
            SetShape::Global { depth } => Some(global_set_len(depth)),
            SetShape::Regional { .. } => None,
        };
        Ok(ShardPlan { root_depth, count, starts, work, total_tiles, tile_set_digest: shape.digest() })
    }

    /// The part holding the subtree root with key `root_key`.
    fn part_of_root(&self, root_key: u64) -> u32 {
        (self.starts.partition_point(|&s| s <= root_key) - 1) as u32
    }

    /// The part that bakes `tile`: its subtree's for a tile at or below the
    /// root depth; for a coarse tile, the part its surface comes from (its
    /// first corner descendant's).
    pub(crate) fn part_of(&self, tile: TileAddress) -> u32 {
        let root = match tile.ancestor_at(self.root_depth) {
            Some(root) => root,
            None => {
                let shift = self.root_depth - tile.depth();
                TileAddress::new(tile.face().index(), self.root_depth, tile.x() << shift, tile.y() << shift)
                    .expect("a descendant of a valid tile")
            }
        };
        self.part_of_root(root.key().raw())
    }
}

/// Cuts `units` (key order: first root key, work) into `count` parts of
/// about equal work: the first root key of each part, and each part's
/// work. Each part gets at least one unit (`units` holds at least `count`).
/// Integer sums: the same in any order, on any machine.
fn cut(units: &[(u64, u64)], count: u32) -> (Vec<u64>, Vec<u64>) {
    let whole = units.iter().map(|u| u128::from(u.1)).sum::<u128>().max(1);
    let (n, r) = (u128::from(count), units.len() as u128);
    let mut starts = vec![0u64; count as usize];
    let mut part_work = vec![0u64; count as usize];
    let (mut before, mut previous) = (0u128, 0u128);
    for (j, &(key, w)) in units.iter().enumerate() {
        let j = j as u128;
        // The part holding this unit's middle, kept monotone, one step
        // at a time, and leaving enough units for the parts after it.
        let ideal = ((2 * before + u128::from(w)) * n / (2 * whole)).min(n - 1);
        let part = ideal.clamp(previous, previous + u128::from(j > 0)).max((n + j).saturating_sub(r)).min(j);
        if j == 0 || part != previous {
            starts[part as usize] = key;
        }
        part_work[part as usize] += w;
        previous = part;
        before += u128::from(w);
    }
    starts[0] = 0;
    (starts, part_work)
}

/// The shard plan of a global set of `depth` cut `shards` ways at roots
/// of that depth (every tile a root, as a 30 m Earth's data depth 11
/// makes them), planned by units as every shard plans it, or by every
/// root (`by_roots`, the plan before units): for `examples/plan_cost.rs`,
/// which times it. Returns the parts' estimated work.
#[doc(hidden)]
pub fn global_plan_for_bench(depth: u8, shards: u32, by_roots: bool) -> Result<Vec<u64>, BakeError> {
    let model = WorkModel { rasters: [(30.0, true), (0.0, false)], raster_count: 1 };
    if by_roots {
        return Ok(cut(&global_units(&Body::earth(), (depth, depth, depth, shards), &model)?, shards).1);
    }
    Ok(ShardPlan::new(&Body::earth(), SetShape::Global { depth }, depth, shards, &model)?.work)
}

/// The shard plan of a regional set of `coverage` (south, west, north,
/// east in degrees) to `depth`, cut `shards` ways at roots of that depth,
/// for `examples/plan_cost.rs`. Returns the parts' estimated work.
#[doc(hidden)]
pub fn regional_plan_for_bench(coverage: [f64; 4], depth: u8, shards: u32) -> Result<Vec<u64>, BakeError> {
    let [south, west, north, east] = coverage;
    let coverage = Coverage { south, west, north, east };
    let model = WorkModel { rasters: [(30.0, true), (0.0, false)], raster_count: 1 };
    let shape = SetShape::Regional { depth, coverage: &coverage };
    Ok(ShardPlan::new(&Body::earth(), shape, depth, shards, &model)?.work)
}

/// The waves of a sharded bake of some number of shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WavePlan {
    shards: u32,
}

impl WavePlan {
    pub(crate) fn new(shards: u32) -> WavePlan {
        WavePlan { shards: shards.max(1) }
    }

    /// Tasks of each wave, first to last: `N`, `N/4`, ... down to 1.
    pub(crate) fn tasks(&self) -> Vec<u32> {
        let mut tasks = vec![self.shards];
        while let Some(&last) = tasks.last().filter(|&&n| n > 1) {
            tasks.push((last / 4).max(1));
        }
        tasks
    }

    /// How many waves there are.
    pub(crate) fn count(&self) -> u32 {
        self.tasks().len() as u32
    }

    /// Tasks of wave `wave`; `None` past the last wave.
    pub(crate) fn tasks_of(&self, wave: u32) -> Option<u32> {
        self.tasks().get(wave as usize).copied()
    }

    /// The depths wave `wave` bakes, above shards rooted at `root_depth`:
    /// one level, or for the last wave every level left (empty where the
    /// levels ran out before it).
    pub(crate) fn depths(&self, wave: u32, root_depth: u8) -> Range<u8> {
        let top = i64::from(root_depth) - 1 - i64::from(wave);
        if top < 0 {
            return 0..0;
        }
        let top = top as u8;
        if wave + 1 == self.count() { 0..top + 1 } else { top..top + 1 }
    }

    /// The wave that bakes coarse `depth` (below `root_depth`).
    pub(crate) fn wave_of(&self, depth: u8, root_depth: u8) -> u32 {
        u32::from(root_depth - 1 - depth).min(self.count() - 1)
    }

    /// The task of wave `wave` that bakes the coarse tiles of plan part
    /// `part`.
    pub(crate) fn task_of(&self, wave: u32, part: u32) -> u32 {
        let tasks = self.tasks_of(wave).expect("a wave of the plan");
        (u64::from(part) * u64::from(tasks) / u64::from(self.shards)) as u32
    }

    /// The first plan part whose coarse tiles task `task` of `wave` bakes.
    pub(crate) fn first_part(&self, wave: u32, task: u32) -> u32 {
        let tasks = u64::from(self.tasks_of(wave).expect("a wave of the plan"));
        (u64::from(task) * u64::from(self.shards)).div_ceil(tasks) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::tile_touches;

    fn global(depth: u8) -> TileSet {
        TileSet::Global { depth }
    }

    const MODEL: WorkModel = WorkModel { rasters: [(1000.0, true), (0.0, false)], raster_count: 1 };

    #[test]
    fn parts_cover_every_tile_once_and_even_out_the_work() {
        let body = Body::earth();
        let tiles = global(4).to_vec().unwrap();
        let shape = SetShape::Global { depth: 4 };
        for count in [1, 2, 3, 4, 7, 96] {
            let plan = ShardPlan::new(&body, shape, 3, count, &MODEL).unwrap();
            assert_eq!(plan.starts.len(), count as usize);
            assert!(plan.starts.windows(2).all(|w| w[0] < w[1]), "{count}: {:?}", plan.starts);
            let mut per_part = vec![0usize; count as usize];
            for t in &tiles {
                per_part[plan.part_of(*t) as usize] += 1;
            }
            assert!(per_part.iter().all(|&n| n > 0), "{count}: every part bakes something: {per_part:?}");
            let (lo, hi) = (plan.work.iter().min().unwrap(), plan.work.iter().max().unwrap());
            if count <= 7 {
                assert!((*hi as f64) < 1.25 * *lo as f64, "{count}: work {:?}", plan.work);
            }
            // A subtree never straddles two parts.
            for t in tiles.iter().filter(|t| t.depth() > 3) {
                assert_eq!(plan.part_of(*t), plan.part_of(t.ancestor_at(3).unwrap()));
            }
        }
        let again = ShardPlan::new(&body, shape, 3, 7, &MODEL).unwrap();
        assert_eq!(again, ShardPlan::new(&body, shape, 3, 7, &MODEL).unwrap(), "the plan is a pure function");
    }

    #[test]
    fn polar_subtrees_weigh_more_for_a_geographic_raster() {
        let body = Body::earth();
        // Face 4 is the north pole's: its middle is the pole itself.
        let polar = TileAddress::new(4, 3, 4, 4).unwrap();
        let equatorial = TileAddress::new(0, 3, 4, 4).unwrap();
        assert!(cos_latitude(polar) < 0.2 && cos_latitude(equatorial) > 0.95);
        assert!(
            MODEL.tile_work(&body, 3, cos_latitude(polar)) > 3 * MODEL.tile_work(&body, 3, cos_latitude(equatorial))
        );
    }

    /// The roots at `root_depth` a regional set's walk reaches: those that
    /// meet `coverage`, and whose every ancestor does, by brute force.
    fn reached_roots(body: &Body, coverage: &Coverage, root_depth: u8) -> Vec<TileAddress> {
        global(root_depth)
            .depth(root_depth)
            .map(Result::unwrap)
            .filter(|t| (0..=root_depth).all(|d| tile_touches(body, t.ancestor_at(d).unwrap(), coverage, 0.0)))
            .collect()
    }

    /// A regional plan is made from the coverage alone: its units are the
    /// tiles inside it and the roots on its rim, they hold exactly the
    /// roots the set's walk reaches, parts even out, and every part gets
    /// roots; far fewer units than roots are visited.
    #[test]
    fn a_regional_set_is_planned_from_its_coverage_by_whole_tiles_inside_it_and_roots_on_its_rim() {
        let body = Body::earth();
        // 10-50 N, 0-60 E, crossing faces 0 and 4 (and the cube's edges).
        let coverage = Coverage { south: 10.0, west: 0.0, north: 50.0, east: 60.0 };
        let (root_depth, depth) = (6, 7);
        let reached = reached_roots(&body, &coverage, root_depth);
        let mut placement = |t| tile_placement(&body, t, &coverage);
        let (coarsest, roots) = regional_units(&body, (root_depth, depth), &MODEL, u64::MAX, &mut placement);
        assert_eq!(roots, reached.len() as u64, "the units hold the reached roots");
        assert!(coarsest.len() * 2 < reached.len(), "{} units for {} roots", coarsest.len(), reached.len());
        assert!(coarsest.windows(2).all(|w| w[0].0 < w[1].0), "units in key order");
        let shape = SetShape::Regional { depth, coverage: &coverage };
        for count in [1, 2, 3, 5, 8] {
            let plan = ShardPlan::new(&body, shape, root_depth, count, &MODEL).unwrap();
            assert_eq!((plan.total_tiles, plan.tile_set_digest), (None, declared_set_digest(depth)));
            let mut per_part = vec![0usize; count as usize];
            for t in &reached {
                per_part[plan.part_of(*t) as usize] += 1;
            }
            assert!(per_part.iter().all(|&n| n > 0), "{count}: every part gets roots: {per_part:?}");
            let (lo, hi) = (plan.work.iter().min().unwrap(), plan.work.iter().max().unwrap());
            assert!((*hi as f64) < 1.1 * *lo as f64, "{count}: work {:?}", plan.work);
            assert_eq!(plan, ShardPlan::new(&body, shape, root_depth, count, &MODEL).unwrap(), "a pure function");
        }
        // A tile inside the coverage has every descendant meet it: the
        // plan counts its subtrees whole.
        let inside: Vec<TileAddress> = global(4)
            .depth(4)
            .map(Result::unwrap)
            .filter(|t| tile_placement(&body, *t, &coverage) == Placement::Inside)
            .collect();
        assert!(!inside.is_empty());
        for t in inside {
            for d in 5..=root_depth {
                let shift = d - 4;
                for (x, y) in [(0, 0), ((1 << shift) - 1, (1 << shift) - 1), (1 << (shift - 1), 0)] {
                    let below = TileAddress::new(t.face().index(), d, (t.x() << shift) + x, (t.y() << shift) + y);
                    assert!(tile_touches(&body, below.unwrap(), &coverage, 0.0), "{t} at depth {d}");
                }
            }
        }
    }

    /// A regional set of a few roots is cut to the roots when too few units
    /// remain for the parts; more shards than reached roots are refused.
    #[test]
    fn a_small_regional_set_is_cut_by_its_roots_and_more_shards_than_roots_are_refused() {
        let body = Body::earth();
        let coverage = Coverage { south: 40.0, west: 10.0, north: 41.0, east: 11.0 };
        let reached = reached_roots(&body, &coverage, 5);
        let shape = SetShape::Regional { depth: 5, coverage: &coverage };
        let count = reached.len() as u32;
        let plan = ShardPlan::new(&body, shape, 5, count, &MODEL).unwrap();
        let mut parts: Vec<u32> = reached.iter().map(|t| plan.part_of(*t)).collect();
        parts.dedup();
        assert_eq!(parts, (0..count).collect::<Vec<_>>(), "one reached root a part");
        let e = ShardPlan::new(&body, shape, 5, count + 1, &MODEL).unwrap_err().to_string();
        assert!(e.contains(&format!("only {count} subtrees")), "{e}");
    }

    /// The global set's shortcuts (work in closed form, a part's subtrees
    /// generated from its run of roots) give what walking the same tiles
    /// gives: a part's tiles are the tiles whose root lies in its run.
    #[test]
    fn a_global_part_is_generated_as_the_walk_of_its_tiles_finds_it() {
        let body = Body::earth();
        let global = global(5);
        let all = global.to_vec().unwrap();
        for count in [1, 5, 24] {
            let plan = ShardPlan::new(&body, SetShape::Global { depth: 5 }, 3, count, &MODEL).unwrap();
            // A global set is named by its depth.
            assert_eq!(plan.tile_set_digest, global_set_digest(5));
            assert_eq!(plan.total_tiles, Some(global_set_len(5)));
            assert_eq!(global_set_len(5), all.len() as u64);
            for part in 0..count as usize {
                let end = plan.starts.get(part + 1).copied().unwrap_or(u64::MAX);
                let generated: Vec<TileAddress> = global.global_subtrees(3, plan.starts[part]..end).unwrap().collect();
                let walked: Vec<TileAddress> =
                    all.iter().copied().filter(|t| t.depth() >= 3 && plan.part_of(*t) == part as u32).collect();
                assert_eq!(generated, walked, "part {part} of {count}");
                let counted = global.global_subtrees_len(3, plan.starts[part]..end);
                assert_eq!(counted, Some(walked.len() as u64), "part {part} of {count}, counted");
            }
        }
        assert!(TileSet::listed(&all).global_subtrees(3, 0..u64::MAX).is_none());
    }

    /// A global set is planned by whole units above its roots, 64 or more
    /// a part: a 1,000-shard plan of the 30 m Earth (25 M roots at depth
    /// 11) reads 98,304 units; parts still cover every subtree once, start
    /// on units, and even out.
    #[test]
    fn a_global_set_is_planned_by_units_above_its_roots() {
        assert_eq!(unit_depth(11, 1000), 7);
        // The 30 m Earth cut 1,000 ways at 30 m pixels: a fraction of its
        // 25 M roots visited, polar units cut finer, parts within 2%.
        let model = WorkModel { rasters: [(30.0, true), (0.0, false)], raster_count: 1 };
        let units = global_units(&Body::earth(), (11, 11, 7, 1000), &model).unwrap().len();
        assert!((98_304..1_000_000).contains(&units), "{units} units");
        let plan = ShardPlan::new(&Body::earth(), SetShape::Global { depth: 11 }, 11, 1000, &model).unwrap();
        let (lo, hi) = (plan.work.iter().min().unwrap(), plan.work.iter().max().unwrap());
        assert!((*hi as f64) < 1.02 * *lo as f64, "work from {lo} to {hi}");
        assert_eq!(unit_depth(11, 1), 2);
        assert_eq!(unit_depth(3, 96), 3, "never below the roots");
        let body = Body::earth();
        // A projected raster's work is nearly even over the sphere: every
        // unit at `c` is past a 256th of a part's share and is cut once, no
        // further, so parts start on whole units of depth c + 1.
        let projected = WorkModel { rasters: [(1000.0, false), (0.0, false)], raster_count: 1 };
        for count in [2, 3, 5] {
            let c = unit_depth(5, count);
            assert!(c < 4, "{count}: {c}");
            let roots_per_unit = 1u64 << (2 * (5 - u32::from(c) - 1));
            for model in [&projected, &MODEL] {
                let plan = ShardPlan::new(&body, SetShape::Global { depth: 6 }, 5, count, model).unwrap();
                let (lo, hi) = (plan.work.iter().min().unwrap(), plan.work.iter().max().unwrap());
                assert!((*hi as f64) < 1.1 * *lo as f64, "{count}: work {:?}", plan.work);
                if std::ptr::eq(model, &projected) {
                    let index = |key: u64| key & ((1 << 56) - 1);
                    assert!(
                        plan.starts.iter().all(|&s| index(s) % roots_per_unit == 0),
                        "{count}: starts {:?} on units of {roots_per_unit} roots",
                        plan.starts
                    );
                }
            }
        }
    }

    #[test]
    fn more_shards_than_subtrees_is_refused_with_the_limit() {
        let shape = SetShape::Global { depth: 1 };
        let e = ShardPlan::new(&Body::earth(), shape, 1, 25, &MODEL).unwrap_err().to_string();
        assert!(e.contains("only 24 subtrees") && e.contains("at most 24"), "{e}");
    }
}
