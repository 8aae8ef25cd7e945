//! The set of tiles a pack declares, produced in ascending key order
//! without ever being listed in memory.
//!
//! The key decision: a planet's tile set is tens of millions of tiles, so
//! it is a generator, not a list. For a global raster it is every tile to
//! the depth, and keys order by depth, face, then Hilbert index, so walking
//! the raw keys in order enumerates it with no state at all. For a regional
//! raster the set is found level by level (the tiles whose box meets the
//! coverage, kept when their lattice, or at the deepest level any of their
//! samples, meets valid data) with each level's
//! frontier in an unnamed scratch file beside the pack, read and extended a
//! chunk at a time in parallel: a Hilbert child's index is its parent's
//! times four plus its quadrant's digit, so the children of ascending
//! parents, each parent's four in key order, are themselves ascending, and
//! so is the kept set written out level after level. Memory: one chunk
//! (and a shard's list of its own roots, from which its walk starts).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use planet_terrain::geo::address::{TILE_CELLS, TileKey};
use planet_terrain::geo::lattice::LATTICE_STEP;
use planet_terrain::pack::Coverage;
use planet_terrain::{Body, TileAddress};
use rayon::prelude::*;

use crate::error::BakeError;
use crate::geometry::tile_touches;
use crate::stages::raster::RasterError;
use crate::stages::sampling::{Inputs, lat_lon_of};

/// Tiles examined at once while a regional set is found: 64 Ki.
const CHUNK: usize = 1 << 16;

/// The tiles of a pack, ascending by key.
#[derive(Debug)]
pub(crate) enum TileSet {
    /// Every tile from depth 0 to `depth`.
    Global { depth: u8 },
    /// The keys, ascending, in an unnamed scratch file.
    Listed { keys: File, per_depth: Vec<u64> },
}

impl TileSet {
    /// How many tiles the set holds at each depth, 0 to its deepest.
    pub(crate) fn per_depth(&self) -> Vec<u64> {
        match self {
            TileSet::Global { depth } => (0..=*depth).map(|d| 6u64 << (2 * u32::from(d))).collect(),
            TileSet::Listed { per_depth, .. } => per_depth.clone(),
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.per_depth().iter().sum()
    }

    /// The tiles at `depth`, ascending by key.
    pub(crate) fn depth(&self, depth: u8) -> Box<dyn Iterator<Item = Result<TileAddress, BakeError>> + Send + '_> {
        match self {
            TileSet::Global { depth: deepest } => {
                let n = if depth <= *deepest { 1u64 << (2 * u32::from(depth)) } else { 0 };
                Box::new((0..6u64).flat_map(move |face| {
                    let base = (u64::from(depth) << 59) | (face << 56);
                    (0..n).map(move |h| Ok(TileKey::from_raw(base | h).expect("in range").address()))
                }))
            }
            TileSet::Listed { keys, per_depth } => {
                let d = usize::from(depth);
                let start: u64 = per_depth.iter().take(d).sum();
                let len = per_depth.get(d).copied().unwrap_or(0);
                Box::new(read_chunks(keys, start, len).flat_map(|chunk| match chunk {
                    Ok(tiles) => tiles.into_iter().map(Ok).collect::<Vec<_>>(),
                    Err(e) => vec![Err(scratch_error(e))],
                }))
            }
        }
    }

    /// For a global set, the tiles at `root_depth` and below whose subtree
    /// root's raw key lies in `roots` (a run of keys at `root_depth`, from
    /// a shard plan), ascending by key, generated from the run alone: a
    /// Hilbert child's index is its parent's times four plus its quadrant,
    /// so a run of roots' descendants at each depth are one run of keys
    /// too. `None` for a listed set (walk it instead).
    pub(crate) fn global_subtrees(
        &self,
        root_depth: u8,
        roots: std::ops::Range<u64>,
    ) -> Option<impl Iterator<Item = TileAddress> + Send + '_> {
        let &TileSet::Global { depth: deepest } = self else { return None };
        let (first, end) = linear_run(root_depth, &roots);
        Some((root_depth..=deepest).flat_map(move |depth| {
            let scale = 2 * u32::from(depth - root_depth);
            let shift = 2 * u32::from(depth);
            ((first << scale)..(end << scale)).map(move |l| {
                let raw = (u64::from(depth) << 59) | ((l >> shift) << 56) | (l & ((1u64 << shift) - 1));
                TileKey::from_raw(raw).expect("in range").address()
            })
        }))
    }

    /// How many tiles [`TileSet::global_subtrees`] generates, counted in
    /// closed form; `None` for a listed set.
    pub(crate) fn global_subtrees_len(&self, root_depth: u8, roots: std::ops::Range<u64>) -> Option<u64> {
        let &TileSet::Global { depth: deepest } = self else { return None };
        let (first, end) = linear_run(root_depth, &roots);
        Some((root_depth..=deepest).map(|d| (end - first) << (2 * u32::from(d - root_depth))).sum())
    }

    /// Every tile, ascending by key.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Result<TileAddress, BakeError>> + Send + '_ {
        (0..self.per_depth().len() as u8).flat_map(|d| self.depth(d))
    }

    /// The tiles listed.
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Result<Vec<TileAddress>, BakeError> {
        self.iter().collect()
    }

    /// A listed set of `tiles` (any order; duplicates count once), its
    /// scratch file in the system's temporary directory.
    #[cfg(test)]
    pub(crate) fn listed(tiles: &[TileAddress]) -> TileSet {
        let mut keys: Vec<u64> = tiles.iter().map(|t| t.key().raw()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut per_depth = Vec::new();
        for &k in &keys {
            let d = usize::from(TileKey::from_raw(k).unwrap().depth());
            per_depth.resize(per_depth.len().max(d + 1), 0);
            per_depth[d] += 1;
        }
        let file = tempfile::tempfile().unwrap();
        let sorted: Vec<TileAddress> = keys.iter().map(|&k| TileKey::from_raw(k).unwrap().address()).collect();
        write_keys(&file, &sorted).unwrap();
        TileSet::Listed { keys: file, per_depth }
    }
}

/// A run of root keys at `root_depth` as one linear index per depth (faces
/// then Hilbert index): its first and its end, `u64::MAX` meaning the end
/// of the depth (a plan's last part).
fn linear_run(root_depth: u8, roots: &std::ops::Range<u64>) -> (u64, u64) {
    let linear = |key: u64| {
        let face = (key >> 56) & 7;
        let h = key & ((1u64 << 56) - 1);
        if key >> 59 == u64::from(root_depth) { (face << (2 * u32::from(root_depth))) | h } else { 0 }
    };
    let end = if roots.end == u64::MAX { 6u64 << (2 * u32::from(root_depth)) } else { linear(roots.end) };
    (linear(roots.start), end)
}

/// Plain tiles from a walk of a set, for a consumer that takes no errors
/// (the pack writer): the walk stops at the first error, kept in `failed`
/// for the caller to return once the consumer is done.
pub(crate) fn until_error<'a>(
    walk: impl Iterator<Item = Result<TileAddress, BakeError>> + 'a,
    failed: &'a mut Option<BakeError>,
) -> impl Iterator<Item = TileAddress> + 'a {
    walk.map_while(move |tile| match tile {
        Ok(t) => Some(t),
        Err(e) => {
            *failed = Some(e);
            None
        }
    })
}

fn scratch_error(e: std::io::Error) -> BakeError {
    BakeError::Scratch(e)
}

/// Reads `len` keys from ordinal `start` of a keys file, a chunk at a time.
fn read_chunks(
    file: &File,
    start: u64,
    len: u64,
) -> impl Iterator<Item = std::io::Result<Vec<TileAddress>>> + Send + '_ {
    (0..len.div_ceil(CHUNK as u64)).map(move |c| {
        let from = start + c * CHUNK as u64;
        let n = (start + len - from).min(CHUNK as u64) as usize;
        let mut bytes = vec![0u8; n * 8];
        file.read_exact_at(&mut bytes, from * 8)?;
        bytes
            .chunks_exact(8)
            .map(|b| {
                TileKey::from_raw(u64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .map(TileKey::address)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
            })
            .collect()
    })
}

/// Every tile down to `depth` that the pack will hold: all of them for a
/// global raster; for a regional one, the tiles whose box meets the
/// raster's coverage and whose 33 x 33 lattice (at `depth`, any core
/// sample) meets valid data (so no declared tile is empty), and every
/// ancestor of those, so each pack reaches its roots. The walk descends through every tile whose box
/// meets the coverage, since a small raster can slip between a coarse
/// tile's lattice points and still fill its children. Scratch files go in
/// `scratch_dir`.
pub(crate) fn tile_set(
    inputs: &Inputs,
    body: &Body,
    coverage: &Coverage,
    depth: u8,
    scratch_dir: &Path,
) -> Result<TileSet, BakeError> {
    if coverage.is_global() {
        return Ok(TileSet::Global { depth });
    }
    let roots: Vec<TileAddress> =
        TileAddress::roots().into_iter().filter(|t| tile_touches(body, *t, coverage, 0.0)).collect();
    let set = subtree_set(&DataTest { inputs, body, depth }, coverage, &roots, scratch_dir)?;
    if set.len() == 0 {
        return Err(RasterError::Unusable {
            path: inputs.dem.path().to_owned(),
            reason: format!("no tile down to depth {depth} meets valid data"),
        }
        .into());
    }
    Ok(set)
}

/// Whether a tile meets valid data, by the set's rule: any point of its
/// 33 x 33 lattice, or at the set's deepest level any core sample.
pub(crate) struct DataTest<'a> {
    pub(crate) inputs: &'a Inputs,
    pub(crate) body: &'a Body,
    /// The set's deepest level.
    pub(crate) depth: u8,
}

impl DataTest<'_> {
    /// Every `step`-th core sample of `tile` meets valid data.
    fn meets_data(&self, tile: TileAddress, step: usize) -> Result<bool, BakeError> {
        let cells = TILE_CELLS as i32;
        let directions: Vec<glam::DVec3> = (0..=cells)
            .step_by(step)
            .flat_map(|j| (0..=cells).step_by(step).map(move |i| (i, j)))
            .map(|(i, j)| planet_terrain::geo::cube::sample_direction(tile.sample(i.min(cells), j.min(cells))))
            .collect();
        Ok(self.inputs.heights(&lat_lon_of(self.body, &directions))?.iter().any(Option::is_some))
    }

    /// The lattice is cheap, but a raster narrower than its spacing (a
    /// few pixels, or a tile's sliver of a regional raster's edge) can slip
    /// between its points at the deepest level too, where no child is left
    /// to catch it: the bake refused a 1 x 1 raster as meeting no tile, and
    /// dropped the measured samples of edge slivers. At the deepest level a
    /// tile the lattice misses is checked at every core sample.
    pub(crate) fn has_data(&self, tile: TileAddress) -> Result<bool, BakeError> {
        Ok(self.meets_data(tile, LATTICE_STEP as usize)? || (tile.depth() == self.depth && self.meets_data(tile, 1)?))
    }
}

/// The tiles of a regional set under `roots` (ascending, all at one depth,
/// each one whose ancestors and itself meet the coverage): the walk of
/// [`tile_set`] from them. A shard walks its own subtrees' roots; the
/// whole bake, the faces'.
pub(crate) fn subtree_set(
    test: &DataTest,
    coverage: &Coverage,
    roots: &[TileAddress],
    scratch_dir: &Path,
) -> Result<TileSet, BakeError> {
    let (body, depth) = (test.body, test.depth);
    let Some(first) = roots.first() else {
        return Ok(TileSet::Listed { keys: tempfile_in(scratch_dir)?, per_depth: Vec::new() });
    };
    let top = first.depth();
    debug_assert!(roots.iter().all(|t| t.depth() == top) && roots.windows(2).all(|w| w[0].key() < w[1].key()));
    let scratch = || tempfile_in(scratch_dir);
    // Each level's kept keys, ascending, in a file of its own until the
    // ancestors are added.
    let mut levels: Vec<(File, u64)> = Vec::new();
    let mut frontier = scratch()?;
    let mut frontier_len = write_keys(&frontier, roots)?;
    for d in top..=depth {
        let kept = scratch()?;
        let mut kept_out = BufWriter::new(&kept);
        let next = scratch()?;
        let mut next_out = BufWriter::new(&next);
        let mut next_len = 0;
        let mut kept_here = 0;
        for chunk in read_chunks(&frontier, 0, frontier_len) {
            let level = chunk.map_err(scratch_error)?;
            let keep: Vec<bool> = level.par_iter().map(|&t| test.has_data(t)).collect::<Result<_, _>>()?;
            for (t, _) in level.iter().zip(keep).filter(|(_, k)| *k) {
                kept_out.write_all(&t.key().raw().to_le_bytes()).map_err(scratch_error)?;
                kept_here += 1;
            }
            if d < depth {
                let children: Vec<TileAddress> = level
                    .par_iter()
                    .flat_map_iter(|t| {
                        let mut c = t.children().expect("depth < MAX_DEPTH");
                        c.sort_by_key(|c| c.key());
                        c
                    })
                    .filter(|t| tile_touches(body, *t, coverage, 0.0))
                    .collect();
                for t in &children {
                    next_out.write_all(&t.key().raw().to_le_bytes()).map_err(scratch_error)?;
                }
                next_len += children.len() as u64;
            }
        }
        next_out.flush().map_err(scratch_error)?;
        drop(next_out);
        kept_out.flush().map_err(scratch_error)?;
        drop(kept_out);
        levels.push((kept, kept_here));
        frontier = next;
        frontier_len = next_len;
    }
    ancestors_kept(&mut levels, scratch_dir)?;
    concatenate(&levels, top, scratch_dir)
}

/// Every ancestor of a kept tile is kept too, up to the roots: a raster
/// smaller than a coarse tile's lattice spacing left its pack without
/// shallow tiles, and selection, which starts at the roots, had no bounds
/// or error to lead it down to the data (a 0.4 degree pack drew nothing).
/// `levels`: each level's kept keys, ascending, and their count, from the
/// roots' level down.
fn ancestors_kept(levels: &mut [(File, u64)], scratch_dir: &Path) -> Result<(), BakeError> {
    for d in (0..levels.len().saturating_sub(1)).rev() {
        let merged = tempfile_in(scratch_dir)?;
        let (below, below_len) = (&levels[d + 1].0, levels[d + 1].1);
        let parents = read_chunks(below, 0, below_len)
            .flat_map(|chunk| chunk.map_or_else(|e| vec![Err(e)], |c| c.into_iter().map(Ok).collect()))
            .map(|t| t.map(|t: TileAddress| t.parent().expect("below a level").key().raw()));
        let own = read_chunks(&levels[d].0, 0, levels[d].1)
            .flat_map(|chunk| chunk.map_or_else(|e| vec![Err(e)], |c| c.into_iter().map(Ok).collect()))
            .map(|t| t.map(|t: TileAddress| t.key().raw()));
        let count = write_union(&merged, own, parents)?;
        levels[d] = (merged, count);
    }
    Ok(())
}

/// The levels' keys, one after the other, as a listed set whose first
/// level is at depth `top` (none above it: a shard's part starts there).
fn concatenate(levels: &[(File, u64)], top: u8, scratch_dir: &Path) -> Result<TileSet, BakeError> {
    let kept = tempfile_in(scratch_dir)?;
    let mut per_depth = vec![0; usize::from(top)];
    let mut out = BufWriter::new(&kept);
    for (file, len) in levels {
        for chunk in read_chunks(file, 0, *len) {
            for t in chunk.map_err(scratch_error)? {
                out.write_all(&t.key().raw().to_le_bytes()).map_err(scratch_error)?;
            }
        }
        per_depth.push(*len);
    }
    out.flush().map_err(scratch_error)?;
    drop(out);
    Ok(TileSet::Listed { keys: kept, per_depth })
}

fn tempfile_in(dir: &Path) -> Result<File, BakeError> {
    tempfile::tempfile_in(dir).map_err(scratch_error)
}

/// Writes the union of two ascending key streams (each may repeat a key)
/// to `file`, ascending and without repeats; returns how many it wrote.
fn write_union(
    file: &File,
    a: impl Iterator<Item = std::io::Result<u64>>,
    b: impl Iterator<Item = std::io::Result<u64>>,
) -> Result<u64, BakeError> {
    let mut out = BufWriter::new(file);
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut last = None;
    let mut count = 0;
    loop {
        let next = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (Some(Ok(x)), Some(Ok(y))) if x <= y => a.next(),
            (Some(Ok(_)), Some(Ok(_))) => b.next(),
            (Some(Err(_)), _) => a.next(),
            (_, Some(Err(_))) => b.next(),
        };
        let key = next.expect("peeked").map_err(scratch_error)?;
        if last != Some(key) {
            debug_assert!(last.is_none_or(|l| l < key), "ascending streams");
            out.write_all(&key.to_le_bytes()).map_err(scratch_error)?;
            last = Some(key);
            count += 1;
        }
    }
    out.flush().map_err(scratch_error)?;
    Ok(count)
}

fn write_keys(file: &File, tiles: &[TileAddress]) -> Result<u64, BakeError> {
    let mut out = BufWriter::new(file);
    for t in tiles {
        out.write_all(&t.key().raw().to_le_bytes()).map_err(scratch_error)?;
    }
    out.flush().map_err(scratch_error)?;
    Ok(tiles.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_global_set_walks_every_tile_once_in_ascending_key_order() {
        let set = TileSet::Global { depth: 3 };
        let keys: Vec<u64> = set.iter().map(|t| t.unwrap().key().raw()).collect();
        assert_eq!(keys.len() as u64, set.len());
        assert_eq!(set.per_depth(), vec![6, 24, 96, 384]);
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "strictly ascending");
        // The same set listed in a scratch file walks the same keys.
        let listed = TileSet::listed(&set.to_vec().unwrap());
        assert_eq!(listed.per_depth(), set.per_depth());
        let again: Vec<u64> = listed.iter().map(|t| t.unwrap().key().raw()).collect();
        assert_eq!(again, keys);
        assert_eq!(listed.depth(2).count(), 96);
    }

    #[test]
    fn hilbert_children_of_ascending_parents_are_ascending() {
        // What the regional walk relies on to write each level in order.
        let parents: Vec<TileAddress> = TileSet::Global { depth: 4 }.depth(4).map(Result::unwrap).collect();
        let children: Vec<u64> = parents
            .iter()
            .flat_map(|p| {
                let mut c = p.children().unwrap().map(|c| c.key().raw());
                c.sort_unstable();
                c
            })
            .collect();
        assert!(children.windows(2).all(|w| w[0] < w[1]));
    }
}
