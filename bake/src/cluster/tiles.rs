//! The tiles one shard holds, and what it declares of the levels above the
//! shards, found from its own part of the plan alone.
//!
//! The key decision: a shard walks only the ground its part covers. The
//! set at and below the root depth is a function of each subtree alone (a
//! tile is kept when it and its ancestors meet the coverage and it, or a
//! descendant, meets data), so a shard chooses its own subtrees' tiles by
//! the same walk the whole bake uses (`tile_set::subtree_set`), from its own
//! roots. The levels above depend on every subtree, so no shard knows them:
//! each one declares the coarse tiles its own tiles put in the set (the
//! ancestors of its non-empty roots, and the coarse tiles of its part that
//! meet data by themselves, with theirs), and the merge's set above the
//! shards is the union of every shard's declaration. A coarse tile's
//! surface comes from the one part the plan gives it (`ShardPlan::part_of`),
//! which cannot know whether another shard will declare it, so a part
//! samples the surface of every coarse tile of its own that meets the
//! coverage: those the set keeps and, on a raster with voids, a few more.
//!
//! A global set needs no walk of data: every tile is kept, a shard's tiles
//! are generated from its run of roots (`TileSet::global_subtrees`), and it
//! declares nothing: the set's name says every coarse tile is in it.

use std::path::Path;

use planet_terrain::pack::Coverage;
use planet_terrain::{Body, TileAddress};
use rayon::prelude::*;

use crate::cluster::plan::{ShardPlan, first_root};
use crate::error::BakeError;
use crate::geometry::tile_touches;
use crate::stages::tile_set::{DataTest, TileSet, subtree_set};

/// What a shard holds and declares.
#[derive(Debug)]
pub(crate) struct ShardTiles {
    /// Its tiles at and below the root depth: for a global set, the whole
    /// set (the shard's part is generated from its run of roots); for a
    /// regional one, exactly its own, listed.
    pub(crate) own: TileSet,
    /// The coarse tiles the plan gives this part that meet the coverage,
    /// ascending: the surfaces it samples for the merge.
    pub(crate) surfaces: Vec<TileAddress>,
    /// The coarse tiles its own tiles put in the set, ascending (none for a
    /// global set, whose name says every one is).
    pub(crate) declared: Vec<TileAddress>,
}

/// The tiles of part `part` of `plan` for a bake of `coverage` to `test`'s
/// depth. Scratch files go in `scratch_dir`.
pub(crate) fn shard_tiles(
    test: &DataTest,
    coverage: &Coverage,
    plan: &ShardPlan,
    part: u32,
    scratch_dir: &Path,
) -> Result<ShardTiles, BakeError> {
    let global = coverage.is_global();
    let (coarse, roots) = walk_part(test.body, coverage, plan, part);
    let surfaces: Vec<TileAddress> = coarse.iter().copied().filter(|&t| plan.part_of(t) == part).collect();
    if global {
        // The set names every coarse tile (`SetShape::digest`): nothing to declare.
        return Ok(ShardTiles { own: TileSet::Global { depth: test.depth }, surfaces, declared: Vec::new() });
    }
    let own = subtree_set(test, coverage, &roots, scratch_dir)?;
    let kept: Vec<bool> = surfaces.par_iter().map(|&t| test.has_data(t)).collect::<Result<_, _>>()?;
    let mut declared = std::collections::BTreeSet::new();
    let mut declare = |mut tile: Option<TileAddress>| {
        // Up to the first tile already declared: its ancestors are too.
        while let Some(t) = tile.filter(|t| declared.insert(t.key())) {
            tile = t.parent();
        }
    };
    for (t, _) in surfaces.iter().zip(kept).filter(|(_, k)| *k) {
        declare(Some(*t));
    }
    for root in own.depth(plan.root_depth) {
        declare(root?.parent());
    }
    let declared = declared.into_iter().map(|k| k.address()).collect();
    Ok(ShardTiles { own, surfaces, declared })
}

/// The tiles above the root depth whose subtrees reach part `part`'s run
/// of roots, and (for a regional set) its roots, each only where it and
/// its ancestors meet `coverage`, ascending by key: a descent from the
/// faces, a level at a time and each level measured in parallel (as the
/// single bake's walk is), that leaves every other part's ground
/// unvisited. A global set's roots are not listed (its part is generated
/// from its run).
fn walk_part(body: &Body, coverage: &Coverage, plan: &ShardPlan, part: u32) -> (Vec<TileAddress>, Vec<TileAddress>) {
    let k = plan.root_depth;
    let global = coverage.is_global();
    let start = plan.starts[part as usize];
    let end = plan.starts.get(part as usize + 1).copied().unwrap_or(u64::MAX);
    let reaches_part = |tile: &TileAddress| {
        // Its subtrees' roots are one run of keys.
        let first = first_root(*tile, k);
        let last = first + ((1u64 << (2 * u32::from(k - tile.depth()))) - 1);
        last >= start && first < end && (global || tile_touches(body, *tile, coverage, 0.0))
    };
    let mut level: Vec<TileAddress> = TileAddress::roots().to_vec();
    level.sort_by_key(|t| t.key());
    let mut coarse = Vec::new();
    for depth in 0..k {
        // Children of ascending parents, each parent's in key order, are
        // ascending (Hilbert), and keys order by depth first: `coarse`
        // stays ascending.
        let kept: Vec<TileAddress> = level.into_par_iter().filter(reaches_part).collect();
        level = if global && depth + 1 == k {
            Vec::new()
        } else {
            kept.iter()
                .flat_map(|t| {
                    let mut children = t.children().expect("above the root depth");
                    children.sort_by_key(|c| c.key());
                    children
                })
                .collect()
        };
        coarse.extend(kept);
    }
    let roots = level.into_par_iter().filter(reaches_part).collect();
    (coarse, roots)
}

impl ShardTiles {
    /// How many tiles part `part` holds at and below the root depth.
    pub(crate) fn own_len(&self, plan: &ShardPlan, part: u32) -> u64 {
        let roots = plan.starts[part as usize]..plan.starts.get(part as usize + 1).copied().unwrap_or(u64::MAX);
        self.own.global_subtrees_len(plan.root_depth, roots).unwrap_or_else(|| self.own.len())
    }
}
