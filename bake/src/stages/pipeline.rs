//! Baking tiles: deepest first, depth by depth, each depth in parallel, so a
//! tile's geometric error can include its children's (a parent never claims
//! to be more accurate than what it stands for). Where encoded tiles go is a
//! `TileSink`: the pack writer of a full bake (whose journal makes a killed
//! bake resumable to the same bytes, and whose layout does not depend on the
//! order threads finish in). Depths at and below the pack's height data
//! depth read the source; each shallower depth is filtered from the one
//! below as stored (`filter`), read back through the sink, so a resumed bake
//! filters exactly what an uninterrupted one did. A region patch bakes in
//! the same order but composites each tile with the pack's own (`patch`,
//! `composite`). The lattice error is the terrain core's, the one the
//! renderer's LOD uses, taken of the filtered surface for coarse tiles.

use std::sync::atomic::{AtomicUsize, Ordering};

use planet_terrain::geo::lattice::lattice_error;
use planet_terrain::pack::codec::{TileVoids, VoidFill};
use planet_terrain::pack::{DecodedTile, EncodedTile, IndexEntry, PackError, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, TileAddress};
use rayon::prelude::*;

use crate::error::BakeError;
use crate::options::Progress;
use crate::stages::filter::{Level, for_each_window};
use crate::stages::sampling::{Inputs, Sampled, SurfaceSamples};

/// Where baked tiles go.
pub(crate) trait TileSink: Sync {
    /// A child's entry, when it is already known (baked earlier in this run,
    /// before a resume, or in a shard).
    fn child_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError>;
    /// A tile already taken, decoded as a reader will see it: what the
    /// level above is filtered from.
    fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError>;
    /// Takes one encoded tile.
    fn put(&self, tile: EncodedTile) -> Result<(), PackError>;
}

impl TileSink for PackWriter {
    fn child_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        self.staged_entry(tile)
    }

    fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        self.staged_tile(tile)
    }

    fn put(&self, tile: EncodedTile) -> Result<(), PackError> {
        self.put_encoded(&tile)
    }
}

/// The tiles a run bakes, handed out a batch of one depth at a time in
/// ascending key order, so a run never lists a planet's pending tiles.
pub(crate) trait PendingTiles: Sync {
    /// The deepest depth with a pending tile.
    fn deepest(&self) -> u8;
    /// Up to `max` pending tiles of `depth` from `*cursor` on (0 to begin),
    /// advancing it; empty once the depth is done.
    fn batch(&self, depth: u8, cursor: &mut u64, max: usize) -> Result<Vec<TileAddress>, BakeError>;
}

/// A writer's pending tiles, read from its staged set.
impl PendingTiles for PackWriter {
    fn deepest(&self) -> u8 {
        self.tiles_per_depth().len().saturating_sub(1) as u8
    }
    fn batch(&self, depth: u8, cursor: &mut u64, max: usize) -> Result<Vec<TileAddress>, BakeError> {
        Ok(self.pending_batch(depth, cursor, max)?)
    }
}

/// A listed set (a region patch's, a test's), in its own order.
impl PendingTiles for Vec<TileAddress> {
    fn deepest(&self) -> u8 {
        self.iter().map(|t| t.depth()).max().unwrap_or(0)
    }
    fn batch(&self, depth: u8, cursor: &mut u64, max: usize) -> Result<Vec<TileAddress>, BakeError> {
        let here = self.iter().copied().filter(|t| t.depth() == depth).skip(*cursor as usize);
        let batch: Vec<TileAddress> = here.take(max).collect();
        *cursor += batch.len() as u64;
        Ok(batch)
    }
}

/// Pending tiles handed to the workers at once: 64 Ki addresses (1 MiB),
/// whatever the size of the pack. The crate's unit tests take 5, so their
/// six-tile levels are split (the tampering audit checks the result).
const PENDING_BATCH: usize = if cfg!(test) { 5 } else { 1 << 16 };

/// Where a tile's samples come from: the rasters in a bake; in a sharded
/// bake's merge, which only filters levels from the shards' tiles, the void
/// policy and the surface blocks the shards sampled for it.
pub(crate) trait TileSource: Sync {
    /// A tile's samples read from the source.
    fn sample(&self, body: &Body, tile: TileAddress) -> Result<Sampled, BakeError>;
    /// Filtered heights with voids (`None`) settled by the bake's policy,
    /// and which were voids.
    fn settle_voids(&self, tile: TileAddress, values: Vec<Option<f64>>) -> Result<(Vec<f64>, Vec<bool>), BakeError>;
    /// A coarse tile's classes and colour.
    fn surface(&self, body: &Body, tile: TileAddress) -> Result<SurfaceSamples, BakeError>;
    /// How `settle_voids` fills a void.
    fn void_fill(&self) -> VoidFill;
}

impl TileSource for Inputs {
    fn sample(&self, body: &Body, tile: TileAddress) -> Result<Sampled, BakeError> {
        Inputs::sample(self, body, tile)
    }
    fn settle_voids(&self, tile: TileAddress, values: Vec<Option<f64>>) -> Result<(Vec<f64>, Vec<bool>), BakeError> {
        Inputs::settle_voids(self, tile, values)
    }
    fn surface(&self, body: &Body, tile: TileAddress) -> Result<SurfaceSamples, BakeError> {
        Inputs::surface(self, body, tile)
    }
    fn void_fill(&self) -> VoidFill {
        void_fill(self.void_value)
    }
}

/// The fill a void policy (`--void-value`) makes, as a void block records it.
pub(crate) fn void_fill(void_value: Option<f64>) -> VoidFill {
    void_value.map_or(VoidFill::Surrounding, |v| VoidFill::Value(v as f32))
}

/// What every tile of one run is baked with, and how far along the run is.
pub(crate) struct TileBake<'a> {
    pub(crate) source: &'a dyn TileSource,
    pub(crate) spec: &'a PackSpec,
    /// The deepest depth the source's data supports; deeper tiles are never
    /// marked measured.
    pub(crate) data_depth: u8,
    pub(crate) progress: &'a dyn Progress,
    /// Tiles done before this run (a resume), counted in the progress.
    pub(crate) already_done: usize,
    /// Tiles in the whole job, for the progress.
    pub(crate) total: usize,
    /// The most tiles of the level below held while a level is filtered
    /// from it (`limits::MemoryPlan::held_level_tiles`).
    pub(crate) held_level_tiles: usize,
}

/// A coarse tile's heights: the filter of the level below, voids settled by
/// the bake's policy; with its surface blocks still read from their rasters.
/// Also says, per sample, where it stands: measured where all its taps are
/// present (a stored tile of the level below lies there) and measured;
/// otherwise, past the pack's box, off the footprint (the edge's
/// continuation, as at the data depth), and inside it a void holding the
/// policy's fill, so a stack shows the pack below there too: filtered from
/// a void, or from nothing where the level below stored nothing (tiles
/// that were all voids: a clipped DEM's neighbour country).
pub(crate) fn filtered_tile(
    inputs: &dyn TileSource,
    spec: &PackSpec,
    level: &Level,
    tile: TileAddress,
) -> Result<(Sampled, Vec<Footing>), BakeError> {
    let taps = level.filter_tile(tile);
    // A sample not filtered from measured taps alone: inside the box a
    // void, past it off the footprint (the stored level ends past the edge).
    let measured = |t: &Option<crate::stages::filter::Tap>| t.is_some_and(|t| t.measured);
    let places =
        (!taps.iter().all(measured)).then(|| crate::stages::sampling::Places::of_tile(&spec.body, tile).pairs());
    let footing = taps
        .iter()
        .enumerate()
        .map(|(k, t)| match (measured(t), places.as_ref().is_some_and(|p| spec.coverage.contains(p[k].0, p[k].1))) {
            (true, _) => Footing::Measured,
            (false, true) => Footing::Unmeasured,
            (false, false) => Footing::Off,
        })
        .collect();
    let (heights, filled) = inputs.settle_voids(tile, taps.iter().map(|t| t.map(|t| t.height)).collect())?;
    let (classes, colour) = if spec.codec.has_classes() || spec.codec.has_colour() {
        inputs.surface(&spec.body, tile)?
    } else {
        (Vec::new(), Vec::new())
    };
    Ok((Sampled { heights, filled, outside: Vec::new(), classes, colour }, footing))
}

/// Where one stored sample stands against the data's footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Footing {
    /// Inside it, and measured.
    Measured,
    /// Inside it, but a void (filled) or made from unmeasured samples.
    Unmeasured,
    /// Off it: past a regional raster's edge, where the pack stores a
    /// continuation that no stack shows as the DEM's.
    Off,
}

/// The footing of each sample of a tile read from the source: off the
/// footprint where the raster has no pixel, unmeasured where a void was
/// filled inside it.
pub(crate) fn sampled_footing(sampled: &Sampled) -> Vec<Footing> {
    (0..sampled.filled.len())
        .map(|k| match (sampled.filled[k], sampled.outside.get(k).copied().unwrap_or(false)) {
            (_, true) => Footing::Off,
            (true, false) => Footing::Unmeasured,
            (false, false) => Footing::Measured,
        })
        .collect()
}

/// Whether a tile is measured: at least one sample on the data's footprint
/// was. Its voids (filled, or filtered from fill) do not unmeasure the rest:
/// the void mask names them ([`void_mask`]); a clipped national DEM whose
/// every border tile held a void read 0% measured when they did. A regional
/// pack's edge tiles reach past its raster; what they store out there is
/// not what the DEM measured and counts neither way (a small DEM's every
/// tile straddles its edge, and the whole DEM read as resampled).
pub(crate) fn measured(footing: &[Footing]) -> bool {
    footing.contains(&Footing::Measured)
}

/// The samples inside the data's footprint that were not measured (voids
/// filled by the bake's policy, or filtered from them); `None` when there
/// are none, so a tile without voids stores no mask.
pub(crate) fn void_mask(footing: &[Footing]) -> Option<Vec<bool>> {
    footing.contains(&Footing::Unmeasured).then(|| footing.iter().map(|&f| f == Footing::Unmeasured).collect())
}

impl TileBake<'_> {
    /// Bakes `pending` deepest first, a batch at a time, into
    /// `sink`: depths at and below the pack's height data depth from the
    /// source, each shallower depth filtered from the one below as stored
    /// (`filter`). Returns how many samples it read from the DEM, and how
    /// many of them were voids (filled or given the void value).
    pub(crate) fn run(&self, pending: &dyn PendingTiles, sink: &dyn TileSink) -> Result<VoidCount, BakeError> {
        let spec = self.spec;
        let body = &spec.body;
        let deepest = pending.deepest();
        let done = AtomicUsize::new(self.already_done);
        let voids = VoidCounter::default();
        for depth in (0..=deepest).rev() {
            let bake_tile = |tile: TileAddress, below: Option<&Level>| -> Result<(), BakeError> {
                let (sampled, footing) = match below {
                    Some(l) => filtered_tile(self.source, spec, l, tile)?,
                    None => {
                        let sampled = self.source.sample(body, tile)?;
                        let footing = sampled_footing(&sampled);
                        (sampled, footing)
                    }
                };
                // Nodata in the DEM: the samples read from it (at and below
                // the data depth) that were voids on its footprint. A
                // filtered level's fill is derived (past a regional box, or
                // taps across its edge), not nodata: counted, a void-free
                // Sierra SRTM read "2.9% nodata" and a window of it warned
                // of 15%.
                if below.is_none() {
                    let voids_here = footing.iter().filter(|&&f| f == Footing::Unmeasured).count();
                    voids.voids.fetch_add(voids_here, Ordering::Relaxed);
                    voids.read.fetch_add(footing.iter().filter(|&&f| f != Footing::Off).count(), Ordering::Relaxed);
                }
                let void_samples = void_mask(&footing);
                let mut error = lattice_error(&sampled.heights);
                for child in tile.children().into_iter().flatten() {
                    if let Some(e) = sink.child_entry(child)? {
                        error = error.max(f64::from(e.geometric_error));
                    }
                }
                let content = TileContent {
                    heights: &sampled.heights,
                    classes: spec.codec.has_classes().then_some(&sampled.classes[..]),
                    colour: spec.codec.has_colour().then_some(&sampled.colour[..]),
                    geometric_error: error,
                    measured: depth <= self.data_depth && measured(&footing),
                    voids: void_samples.as_deref().map(|samples| TileVoids { fill: self.source.void_fill(), samples }),
                };
                sink.put(spec.encode(tile, &content)?)?;
                self.progress.tiles(done.fetch_add(1, Ordering::Relaxed) + 1, self.total);
                Ok(())
            };
            let mut cursor = 0;
            loop {
                let level = pending.batch(depth, &mut cursor, PENDING_BATCH)?;
                if level.is_empty() {
                    break;
                }
                if depth < spec.height_data_depth {
                    // Filtered from the level below, window by window: never
                    // the whole level in memory.
                    let load = |t: TileAddress| sink.stored(t).map_err(BakeError::from);
                    for_each_window(&level, self.held_level_tiles, load, |window, below| {
                        window.par_iter().try_for_each(|&tile| bake_tile(tile, Some(below)))
                    })?;
                } else {
                    level.par_iter().try_for_each(|&tile| bake_tile(tile, None))?;
                }
            }
        }
        Ok(VoidCount { voids: voids.voids.into_inner(), read: voids.read.into_inner() })
    }
}

/// How much of what a bake read from the DEM was nodata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VoidCount {
    /// Samples read from the DEM (at and below the data depth) that were
    /// voids on its footprint, filled by the bake's policy.
    pub(crate) voids: usize,
    /// Samples read from the DEM on its footprint (at and below the data
    /// depth; not those of edge tiles past a regional raster).
    pub(crate) read: usize,
}

#[derive(Default)]
struct VoidCounter {
    voids: AtomicUsize,
    read: AtomicUsize,
}

#[cfg(test)]
mod tests {
    use planet_terrain::geo::address::{TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES};
    use planet_terrain::geo::lattice::lattice_error;

    #[test]
    fn a_flat_tile_has_no_lattice_error_and_a_spike_has_its_height() {
        let mut h = vec![5.0; TILE_STORED_SAMPLE_COUNT];
        assert_eq!(lattice_error(&h), 0.0);
        let n = TILE_STORED_SAMPLES as usize;
        h[(63 + 1) * n + (62 + 1)] = 25.0; // between lattice vertices
        assert_eq!(lattice_error(&h), 20.0);
    }
}
