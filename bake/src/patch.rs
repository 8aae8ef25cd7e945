//! Region patches: re-bake, in place in an existing pack, only the tiles a
//! box touches (widened by the source filter's one-pixel reach). The pack's
//! own header is the authority: a patch must match its body, codec, tier and
//! depth, and keeps its data depths, coverage and fingerprint, so a patched
//! pack is byte for byte what a fresh bake of the new source would store in
//! those tiles. Parents' geometric errors see the patched children through
//! the sink, which answers with fresh entries before the pack's old ones.

use std::sync::Mutex;
use std::time::Instant;

use planet_terrain::TileAddress;
use planet_terrain::pack::{EncodedTile, IndexEntry, Pack, PackError, PackHeader, PackSpec, begin_patch};

use crate::bake::{Prepared, Run};
use crate::error::BakeError;
use crate::fingerprint::patch_fingerprint;
use crate::geometry::tile_touches;
use crate::options::{BakeOptions, Region};
use crate::pipeline::{TileBake, TileSink};
use crate::recovery::{audit_patch, complete_interrupted_patch};
use crate::report::{AccuracyReport, BakeReport, LandmarkReport, PatchReport, RegionReport, Report, Timings};

/// Tiles re-baked for a patch, with the pack's entries as they were.
struct PatchSink {
    fresh: Mutex<Vec<EncodedTile>>,
    /// The pack's index before the patch, sorted by key.
    entries: Vec<IndexEntry>,
}

impl TileSink for PatchSink {
    fn child_entry(&self, tile: TileAddress) -> Option<IndexEntry> {
        let patched = self.fresh.lock().expect("lock").iter().find(|e| e.tile == tile).map(|e| e.geometric_error);
        let old = self.entries.binary_search_by_key(&tile.key(), |e| e.key).ok().map(|i| self.entries[i]);
        old.map(|e| IndexEntry { geometric_error: patched.unwrap_or(e.geometric_error), ..e })
    }

    fn put(&self, tile: EncodedTile) -> Result<(), PackError> {
        self.fresh.lock().expect("lock").push(tile);
        Ok(())
    }
}

/// Refuses a patch whose inputs would not make the pack it patches.
fn check_compatible(options: &BakeOptions, header: &PackHeader) -> Result<(), BakeError> {
    let codec = options.codec();
    let refuse = |what: String| BakeError::Options(format!("{}: cannot patch: {what}", options.out.display()));
    if header.body.ellipsoid().radii() != options.body.ellipsoid().radii() || header.body.name() != options.body.name()
    {
        return Err(refuse(format!("the pack is of {} and this bake is of {}", header.body, options.body)));
    }
    if header.codec != codec {
        return Err(refuse(format!(
            "the pack has codec {} and these inputs make codec {}",
            header.codec.code(),
            codec.code()
        )));
    }
    if header.tier != options.tier {
        return Err(refuse(format!("the pack is tier '{}' and this bake is tier '{}'", header.tier, options.tier)));
    }
    if options.depth.is_some_and(|d| d != header.max_depth) {
        return Err(refuse(format!(
            "the pack is baked to depth {} and --depth asks for {}",
            header.max_depth,
            options.depth.unwrap_or(0)
        )));
    }
    Ok(())
}

/// Re-bakes the tiles of the pack at `run.options.out` that `region` touches.
pub(crate) fn patch_region(run: &Run, region: Region) -> Result<BakeReport, BakeError> {
    let (options, progress) = (run.options, run.progress);
    if let Some(completed) = complete_interrupted_patch(run, region)? {
        return Ok(completed);
    }
    let existing = Pack::open(&options.out)?;
    let header = existing.header().clone();
    check_compatible(options, &header)?;
    let Prepared { inputs, data_depth, landmarks, .. } = run.prepare()?;
    let coverage = region.coverage();
    // A change inside the box reaches one source pixel beyond it through the
    // bilinear filter.
    let margin = (inputs.dem.resolution_m(options.body.ellipsoid().max_radius())
        / options.body.ellipsoid().min_radius())
    .to_degrees();
    let tiles: Vec<TileAddress> = existing
        .entries()
        .iter()
        .map(IndexEntry::tile)
        .filter(|&t| tile_touches(&options.body, t, &coverage, margin))
        .collect();
    progress.stage(&format!("re-baking {} tiles the region touches", tiles.len()));
    let spec = PackSpec {
        body: header.body.clone(),
        tier: header.tier.clone(),
        codec: header.codec,
        height_data_depth: header.height_data_depth,
        colour_data_depth: header.colour_data_depth,
        coverage: header.coverage,
        fingerprint: header.fingerprint,
        compression_level: header.compression_level,
    };
    let sink = PatchSink { fresh: Mutex::new(Vec::new()), entries: existing.entries().to_vec() };
    drop(existing);
    let bake_start = Instant::now();
    let filled = TileBake {
        inputs: &inputs,
        spec: &spec,
        data_depth: data_depth.min(header.height_data_depth),
        progress,
        already_done: 0,
        total: tiles.len(),
    }
    .run(&tiles, &sink)?;
    let fresh = sink.fresh.into_inner().expect("lock");
    let summary = begin_patch(&options.out, &fresh, patch_fingerprint(&header.fingerprint, options, &region)?)?;
    let bake_seconds = bake_start.elapsed().as_secs_f64();
    let per_depth = audit_patch(run, &inputs, &tiles)?;
    let report = PatchReport {
        out: options.out.display().to_string(),
        region: RegionReport { south: region.south, west: region.west, north: region.north, east: region.east },
        body: options.body.name().to_owned(),
        tiles_patched: summary.tiles,
        patched: tiles.iter().map(|t| t.to_string()).collect(),
        rewritten_in_place: summary.rewritten_in_place,
        appended: summary.appended,
        samples_filled: filled,
        landmarks: LandmarkReport::from(&landmarks),
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        timings_s: Timings { bake: bake_seconds, audit: None, total: run.started.elapsed().as_secs_f64() },
    };
    Ok(BakeReport::new(&Report::Patch(report)))
}
