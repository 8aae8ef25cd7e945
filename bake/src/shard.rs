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
//! part gets at least one subtree. A global set is cut on whole units
//! above the roots, at least 64 a part (`unit_depth`), a heavy unit cut
//! finer (`for_each_unit`): every process plans from a few hundred
//! thousand units at most, not from every root.
//!
//! **Estimated work**, in integer units so every process computes the same
//! plan to the bit: per tile, its stored samples plus the source pixels
//! under it (DEM and imagery), from the tile's area and the raster's pixel
//! area at the subtree root's latitude. A geographic raster's pixels shrink
//! towards the poles, so polar tiles read many more of them; the work of a
//! subtree also counts only the tiles the set holds, so a regional pack's
//! parts even out by what they bake, not by how much of the sphere they
//! span. The latitude comes from the unwarped cube point (arithmetic and a
//! square root, no transcendental functions whose last bit could differ
//! between two machines' maths libraries).
//!
//! **Coarse tiles' surfaces**: a level above `k` still reads its classes
//! and colour from the rasters, which the merge does not open. Each coarse
//! tile is given to one part, the part of its first corner descendant at
//! `k`; that shard samples its surface and ships it in the shard file.

use planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
use planet_terrain::geo::cube::cube_point;
use planet_terrain::{Body, TileAddress};
use sha2::{Digest, Sha256};

use crate::error::BakeError;
use crate::tile_set::TileSet;

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
    /// Tiles in the whole set.
    pub(crate) total_tiles: u64,
    /// SHA-256 of the whole set's keys, ascending, little-endian u64s.
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

/// The identity of the tile set the parts of a bake must hold between
/// them, which the merge checks against the union of their keys. A listed
/// set's is the SHA-256 of its keys in ascending order. A global set is
/// every tile to its depth, named by that depth alone
/// ([`global_set_digest`]): a shard of a global 30 m bake hashed 33.5 M
/// keys (268 MB, 0.2 s), in every one of a thousand shards, to say what the
/// depth says; the merge checks the union is that set by its count (keys
/// are distinct and no deeper than the depth, so the count decides).
pub(crate) fn tile_set_digest(tiles: &TileSet) -> Result<[u8; 32], BakeError> {
    match *tiles {
        TileSet::Global { depth } => Ok(global_set_digest(depth)),
        TileSet::Listed { .. } => {
            let mut h = Sha256::new();
            for tile in tiles.iter() {
                h.update(tile?.key().raw().to_le_bytes());
            }
            Ok(h.finalize().into())
        }
    }
}

/// The digest naming the global set of every tile from depth 0 to `depth`.
pub(crate) fn global_set_digest(depth: u8) -> [u8; 32] {
    Sha256::new().chain_update(b"planet tile set: every tile to depth ").chain_update([depth]).finalize().into()
}

/// How many tiles the global set to `depth` holds: `6 (4^(depth+1) - 1) / 3`.
pub(crate) fn global_set_len(depth: u8) -> u64 {
    (0..=depth).map(|d| 6u64 << (2 * u32::from(d))).sum()
}

/// The depth of the plan's units: parts are runs of whole subtrees at this
/// depth. A global set's units lie above the root depth where the sphere
/// has at least 64 of them per part (parts then even out within about a
/// unit's work, a sixty-fourth of a part), so every process plans from
/// `6 x 4^c` units, about `256 x N` at most, not from every subtree root
/// (25 M at the 30 m Earth's depth 11). A regional set's units are its
/// roots: its coverage, not the sphere, says where its work lies.
fn unit_depth(tiles: &TileSet, root_depth: u8, count: u32) -> u8 {
    match tiles {
        TileSet::Global { .. } => {
            (1..=root_depth).find(|&c| 6u64 << (2 * u32::from(c)) >= 64 * u64::from(count)).unwrap_or(root_depth)
        }
        TileSet::Listed { .. } => root_depth,
    }
}

/// Calls `each` with every unit of the plan, in key order: the key of its
/// first subtree root at `root_depth` and the estimated work of its
/// subtrees, that of every tile of the set at or below `root_depth` under
/// it, at the unit's latitude. A global set's units are its tiles at
/// `unit_depth`, each heavier than a 256th of a part's share cut
/// into its four children again and again, down to the roots at most: a
/// geographic raster's polar tiles read far more pixels (1 / cos
/// latitude), and a unit that held a pole's work whole would weigh down
/// its part. A listed set's units are its roots, walked once per depth in
/// step (a subtree's tiles at each depth are one run of keys), so nothing
/// is held per root; a tile whose root is not in the set (a regional set
/// can hold a child whose parent's lattice missed the data) counts for no
/// part's work.
fn for_each_unit(
    body: &Body,
    tiles: &TileSet,
    (root_depth, unit_depth, count): (u8, u8, u32),
    model: &WorkModel,
    mut each: impl FnMut(u64, u64),
) -> Result<(), BakeError> {
    let deepest = tiles.per_depth().len().saturating_sub(1) as u8;
    if let TileSet::Global { .. } = tiles {
        // Every unit's subtrees are whole: 4^(d-u) tiles at each depth d,
        // each of one integer work, in closed form.
        let work_of = |unit: TileAddress| -> u64 {
            let cos = cos_latitude(unit);
            (root_depth..=deepest).map(|d| model.tile_work(body, d, cos) << (2 * u32::from(d - unit.depth()))).sum()
        };
        let mut whole = 0u128;
        for unit in tiles.depth(unit_depth) {
            whole += u128::from(work_of(unit?));
        }
        let limit = u64::try_from(whole / (256 * u128::from(count))).unwrap_or(u64::MAX);
        let mut stack = Vec::new();
        for unit in tiles.depth(unit_depth) {
            stack.push(unit?);
            while let Some(unit) = stack.pop() {
                let work = work_of(unit);
                match unit.children().filter(|_| work > limit && unit.depth() < root_depth) {
                    Some(mut children) => {
                        // Popped in key order.
                        children.sort_by_key(|c| std::cmp::Reverse(c.key()));
                        stack.extend(children);
                    }
                    None => {
                        // Its first root: a Hilbert child's index is its
                        // parent's times four plus its quadrant's digit.
                        let raw = unit.key().raw();
                        let shift = 2 * u32::from(root_depth - unit.depth());
                        each(
                            (u64::from(root_depth) << 59) | (raw & (7 << 56)) | ((raw & ((1 << 56) - 1)) << shift),
                            work,
                        );
                    }
                }
            }
        }
        return Ok(());
    }
    debug_assert_eq!(unit_depth, root_depth, "a listed set is planned by its roots");
    let mut below: Vec<_> = (root_depth + 1..=deepest).map(|d| (d, tiles.depth(d).peekable())).collect();
    for root in tiles.depth(root_depth) {
        let root = root?;
        let key = root.key().raw();
        let cos = cos_latitude(root);
        let mut work = model.tile_work(body, root_depth, cos);
        for (depth, walk) in &mut below {
            while let Some(next) = walk.peek() {
                let Ok(tile) = next else { return Err(walk.next().expect("peeked").expect_err("peeked an error")) };
                let ancestor = tile.ancestor_at(root_depth).expect("below the root depth").key().raw();
                if ancestor > key {
                    break;
                }
                if ancestor == key {
                    work += model.tile_work(body, *depth, cos);
                }
                walk.next();
            }
        }
        each(key, work);
    }
    Ok(())
}

impl ShardPlan {
    /// Cuts `tiles` (the whole set of one bake) into `count` parts at
    /// `root_depth`, in two walks of the set (the whole work, then the
    /// cut), holding nothing per tile.
    pub(crate) fn new(
        body: &Body,
        tiles: &TileSet,
        root_depth: u8,
        count: u32,
        model: &WorkModel,
    ) -> Result<ShardPlan, BakeError> {
        ShardPlan::with_units(body, tiles, (root_depth, unit_depth(tiles, root_depth, count)), count, model)
    }

    /// [`ShardPlan::new`] on units at `depths.1` (the roots' depth
    /// `depths.0` or above; a listed set's must be its roots).
    fn with_units(
        body: &Body,
        tiles: &TileSet,
        depths: (u8, u8),
        count: u32,
        model: &WorkModel,
    ) -> Result<ShardPlan, BakeError> {
        let root_depth = depths.0;
        if root_depth == 0 {
            return Err(BakeError::Options(
                "--shard: this bake's data depth is 0 (its six face tiles are the whole bake); bake it in one process"
                    .into(),
            ));
        }
        let roots = tiles.per_depth().get(usize::from(root_depth)).copied().unwrap_or(0);
        if roots < u64::from(count) {
            return Err(BakeError::Options(format!(
                "--shard .../{count}: this bake has only {roots} subtrees at its data depth {root_depth}, and each shard bakes whole subtrees; use at most {roots} shards"
            )));
        }
        // Integer sums: the same in any order, on any machine.
        let (mut whole, mut units) = (0u128, 0u128);
        let depths = (depths.0, depths.1, count);
        for_each_unit(body, tiles, depths, model, |_, w| {
            whole += u128::from(w);
            units += 1;
        })?;
        let whole = whole.max(1);
        let (n, r) = (u128::from(count), units);
        let mut starts = vec![0u64; count as usize];
        let mut part_work = vec![0u64; count as usize];
        let (mut j, mut before, mut previous) = (0u128, 0u128, 0u128);
        for_each_unit(body, tiles, depths, model, |key, w| {
            // The part holding this unit's middle, kept monotone, one step
            // at a time, and leaving enough roots for the parts after it.
            let ideal = ((2 * before + u128::from(w)) * n / (2 * whole)).min(n - 1);
            let part = ideal.clamp(previous, previous + u128::from(j > 0)).max((n + j).saturating_sub(r)).min(j);
            if j == 0 || part != previous {
                starts[part as usize] = key;
            }
            part_work[part as usize] += w;
            previous = part;
            before += u128::from(w);
            j += 1;
        })?;
        starts[0] = 0;
        Ok(ShardPlan {
            root_depth,
            count,
            starts,
            work: part_work,
            total_tiles: tiles.len(),
            tile_set_digest: tile_set_digest(tiles)?,
        })
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

/// The shard plan of a global set of `depth` cut `shards` ways at roots
/// of that depth (every tile a root, as a 30 m Earth's data depth 11
/// makes them), planned by units as every shard plans it, or by every
/// root (`by_roots`, the plan before units): for `examples/plan_cost.rs`,
/// which times it. Returns the parts' estimated work.
#[doc(hidden)]
pub fn global_plan_for_bench(depth: u8, shards: u32, by_roots: bool) -> Result<Vec<u64>, BakeError> {
    let tiles = TileSet::Global { depth };
    let units = if by_roots { depth } else { unit_depth(&tiles, depth, shards) };
    let model = WorkModel { rasters: [(30.0, true), (0.0, false)], raster_count: 1 };
    Ok(ShardPlan::with_units(&Body::earth(), &tiles, (depth, units), shards, &model)?.work)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(depth: u8) -> TileSet {
        TileSet::Global { depth }
    }

    const MODEL: WorkModel = WorkModel { rasters: [(1000.0, true), (0.0, false)], raster_count: 1 };

    #[test]
    fn parts_cover_every_tile_once_and_even_out_the_work() {
        let body = Body::earth();
        let set = global(4);
        let tiles = set.to_vec().unwrap();
        for count in [1, 2, 3, 4, 7, 96] {
            let plan = ShardPlan::new(&body, &set, 3, count, &MODEL).unwrap();
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
        let again = ShardPlan::new(&body, &set, 3, 7, &MODEL).unwrap();
        assert_eq!(again, ShardPlan::new(&body, &set, 3, 7, &MODEL).unwrap(), "the plan is a pure function");
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

    #[test]
    fn a_listed_set_plans_its_work_by_subtree_and_skips_tiles_whose_root_it_lacks() {
        let body = Body::earth();
        // Depths 0 to 4 of faces 0 and 1, without one depth-3 root: its
        // children stay (a regional set can hold them) but weigh for no part.
        let missing = TileAddress::new(1, 3, 5, 2).unwrap();
        let tiles: Vec<TileAddress> =
            global(4).to_vec().unwrap().into_iter().filter(|t| t.face().index() < 2 && *t != missing).collect();
        let set = TileSet::listed(&tiles);
        let plan = ShardPlan::new(&body, &set, 3, 5, &MODEL).unwrap();
        let expected: u64 = tiles
            .iter()
            .filter(|t| t.depth() >= 3 && t.ancestor_at(3) != Some(missing))
            .map(|t| MODEL.tile_work(&body, t.depth(), cos_latitude(t.ancestor_at(3).unwrap())))
            .sum();
        assert_eq!(plan.work.iter().sum::<u64>(), expected);
        assert_eq!(plan.total_tiles, tiles.len() as u64);
        let mut keys: Vec<u64> = tiles.iter().map(|t| t.key().raw()).collect();
        keys.sort_unstable();
        let mut h = Sha256::new();
        keys.iter().for_each(|k| h.update(k.to_le_bytes()));
        assert_eq!(plan.tile_set_digest, <[u8; 32]>::from(h.finalize()));
    }

    /// The global set's shortcuts (work in closed form, keys hashed as
    /// integers, a part's subtrees generated from its run of roots) give
    /// what walking the same tiles as a listed set gives, bit for bit.
    #[test]
    fn a_global_set_plans_hashes_and_lists_a_part_as_the_walk_of_its_tiles_does() {
        let body = Body::earth();
        let global = global(5);
        let listed = TileSet::listed(&global.to_vec().unwrap());
        for count in [1, 5, 24] {
            let fast = ShardPlan::new(&body, &global, 3, count, &MODEL).unwrap();
            let walked = ShardPlan::new(&body, &listed, 3, count, &MODEL).unwrap();
            // A global set is named by its depth; the same tiles listed, by their keys.
            assert_eq!(fast.tile_set_digest, global_set_digest(5));
            assert_ne!(walked.tile_set_digest, fast.tile_set_digest);
            assert_eq!((fast.total_tiles, global_set_len(5)), (walked.total_tiles, walked.total_tiles));
            if unit_depth(&global, 3, count) == 3 {
                let named_as_listed = ShardPlan { tile_set_digest: walked.tile_set_digest, ..fast.clone() };
                assert_eq!(named_as_listed, walked, "{count} parts");
            }
            for part in 0..count as usize {
                let end = fast.starts.get(part + 1).copied().unwrap_or(u64::MAX);
                let generated: Vec<TileAddress> = global.global_subtrees(3, fast.starts[part]..end).unwrap().collect();
                let walked: Vec<TileAddress> = listed
                    .to_vec()
                    .unwrap()
                    .into_iter()
                    .filter(|t| t.depth() >= 3 && fast.part_of(*t) == part as u32)
                    .collect();
                assert_eq!(generated, walked, "part {part} of {count}");
            }
        }
        assert!(listed.global_subtrees(3, 0..u64::MAX).is_none());
    }

    /// A global set is planned by whole units above its roots, 64 or more
    /// a part: a 1,000-shard plan of the 30 m Earth (25 M roots at depth
    /// 11) reads 98,304 units; parts still cover every subtree once, start
    /// on units, and even out.
    #[test]
    fn a_global_set_is_planned_by_units_above_its_roots() {
        assert_eq!(unit_depth(&global(11), 11, 1000), 7);
        // The 30 m Earth cut 1,000 ways at 30 m pixels: a fraction of its
        // 25 M roots visited, polar units cut finer, parts within 2%.
        let model = WorkModel { rasters: [(30.0, true), (0.0, false)], raster_count: 1 };
        let mut units = 0u64;
        for_each_unit(&Body::earth(), &global(11), (11, 7, 1000), &model, |_, _| units += 1).unwrap();
        assert!((98_304..1_000_000).contains(&units), "{units} units");
        let plan = ShardPlan::new(&Body::earth(), &global(11), 11, 1000, &model).unwrap();
        let (lo, hi) = (plan.work.iter().min().unwrap(), plan.work.iter().max().unwrap());
        assert!((*hi as f64) < 1.02 * *lo as f64, "work from {lo} to {hi}");
        assert_eq!(unit_depth(&global(11), 11, 1), 2);
        assert_eq!(unit_depth(&global(3), 3, 96), 3, "never below the roots");
        let listed = TileSet::listed(&global(3).to_vec().unwrap());
        assert_eq!(unit_depth(&listed, 3, 1), 3, "a regional set is planned by its roots");
        let body = Body::earth();
        let set = global(6);
        // A projected raster's work is nearly even over the sphere: every
        // unit at `c` is past a 256th of a part's share and is cut once, no
        // further, so parts start on whole units of depth c + 1.
        let projected = WorkModel { rasters: [(1000.0, false), (0.0, false)], raster_count: 1 };
        for count in [2, 3, 5] {
            let c = unit_depth(&set, 5, count);
            assert!(c < 4, "{count}: {c}");
            let roots_per_unit = 1u64 << (2 * (5 - u32::from(c) - 1));
            for model in [&projected, &MODEL] {
                let plan = ShardPlan::new(&body, &set, 5, count, model).unwrap();
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
        let e = ShardPlan::new(&Body::earth(), &global(1), 1, 25, &MODEL).unwrap_err().to_string();
        assert!(e.contains("only 24 subtrees") && e.contains("at most 24"), "{e}");
    }
}
