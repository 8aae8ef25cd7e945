//! Region patches: re-bake, in place in an existing pack, only the tiles a
//! box touches. The pack being patched is the base of the patch: each
//! sample of each re-baked tile (every depth, apron included) is the
//! composite of the pack's own decoded value and what the patch rasters
//! measured inside the box (`composite`), so ground the patch did not
//! measure is never invented. Above the pack's height data depth, heights
//! are refiltered from the patched level below as a full bake filters them
//! (`filter`), so a patch from a full bake's own raster changes nothing. The pack's header is the authority: a patch
//! must match its body, tier and depth, may carry only the blocks its codec
//! stores, and keeps its data depths and coverage.
//!
//! Order of work, and why: every check that can refuse a patch (the box
//! inside each raster's footprint, the landmarks) runs before anything is
//! baked; the new tiles are encoded (keeping each tile's range when the new
//! samples fit it, so unchanged samples decode bit for bit) and audited
//! against the composite from their payloads *before* a byte is written, so
//! a failed audit leaves the pack as it was; after writing, the pack is
//! re-read and must hold exactly the audited tiles.

pub(crate) mod composite;
pub(crate) mod recovery;
pub(crate) mod tiles;

use std::path::Path;
use std::time::Instant;

use planet_terrain::TileAddress;
use planet_terrain::geo::address::TILE_CELLS;
use planet_terrain::geo::lattice::lattice_error;
use planet_terrain::pack::codec::{VoidFill, Voids, encode_tile_keeping_range};
use planet_terrain::pack::{
    DecodedTile, EncodedTile, IndexEntry, Pack, PackHeader, PatchStamp, TileContent, begin_patch, finish_patch,
};
use rayon::prelude::*;

use crate::error::BakeError;
use crate::fingerprint::{patch_fingerprint, patch_inputs_digest};
use crate::geometry::tile_touches;
use crate::options::{BakeOptions, Progress, Region};
use crate::patch::composite::{BORDER_PIXELS, Blend, Sources, audit_tile, composite, refilter};
use crate::patch::recovery::{complete_interrupted_patch, drop_journal_of_rejected};
use crate::patch::tiles::SpilledTiles;
use crate::report::{
    AccuracyReport, BakeReport, LandmarkReport, MemoryReport, PatchReport, PatchTarget, PatchedTiles, Report, Timings,
};
use crate::run::Run;
use crate::stages::audit::{AccuracyAudit, DepthAudit, reject};
use crate::stages::filter::{Level, for_each_window};
use crate::stages::raster::{Extent, Raster, RasterError};

/// Refuses a patch whose inputs would not fit the pack it patches.
fn check_compatible(options: &BakeOptions, header: &PackHeader) -> Result<(), BakeError> {
    let refuse = |reason: String| BakeError::Patch { pack: options.out.clone(), reason };
    if header.body.ellipsoid().radii() != options.body.ellipsoid().radii() || header.body.name() != options.body.name()
    {
        return Err(refuse(format!("the pack is of {} and this bake is of {}", header.body, options.body)));
    }
    let code = header.codec.code();
    if options.imagery.is_some() && !header.codec.has_colour() {
        return Err(refuse(format!("the pack has codec {code}, which stores no colour for --imagery to patch")));
    }
    if options.classes.is_some() && !header.codec.has_classes() {
        return Err(refuse(format!("the pack has codec {code}, which stores no classes for --classes to patch")));
    }
    if !options.has_dem() && options.imagery.is_none() && options.classes.is_none() {
        return Err(refuse("a patch needs a DEM, imagery or classes".into()));
    }
    if options.void_value.is_some() {
        return Err(refuse(
            "--void-value fills voids, and a patch fills nothing: where the DEM has no data the pack keeps its ground"
                .into(),
        ));
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

fn degrees(v: f64) -> String {
    format!("{}", (v * 1e6).round() / 1e6)
}

fn lat_range(a: f64, b: f64) -> String {
    let h = |v: f64| if v < 0.0 { (-v, "S") } else { (v, "N") };
    let ((x, p), (y, q)) = (h(a), h(b));
    if p == q {
        format!("{}..{} {p}", degrees(x), degrees(y))
    } else {
        format!("{} {p}..{} {q}", degrees(x), degrees(y))
    }
}

fn lon_range(a: f64, b: f64) -> String {
    let h = |v: f64| {
        let v = (v + 180.0).rem_euclid(360.0) - 180.0;
        if v < 0.0 { (-v, "W") } else { (v, "E") }
    };
    let ((x, p), (y, q)) = (h(a), h(b));
    if p == q {
        format!("{}..{} {p}", degrees(x), degrees(y))
    } else {
        format!("{} {p}..{} {q}", degrees(x), degrees(y))
    }
}

/// Refuses a box that reaches beyond a patch raster's footprint, naming the
/// part it does not cover. (A projected raster's footprint is taken as its
/// latitude/longitude bounding box; samples inside that box but outside the
/// raster read as voids and keep the pack.)
fn check_covers(region: &Region, what: &str, raster: &Raster) -> Result<(), BakeError> {
    let e = raster.extent()?;
    let missing = uncovered(region, &e);
    if missing.is_empty() {
        return Ok(());
    }
    let name =
        raster.path().file_name().map_or_else(|| raster.path().display().to_string(), |n| n.to_string_lossy().into());
    let r = region;
    Err(BakeError::Options(format!(
        "--region {},{},{},{} reaches beyond {name}'s data: {} {} not covered ({what} covers {}, {})",
        degrees(r.south),
        degrees(r.west),
        degrees(r.north),
        degrees(r.east),
        missing.join(" and "),
        if missing.len() == 1 { "is" } else { "are" },
        lat_range(e.bounds.south, e.bounds.north),
        if e.global_longitude { "all longitudes".into() } else { lon_range(e.bounds.west, e.bounds.east) },
    )))
}

/// The parts of `region` outside `e`, as latitude and longitude ranges.
fn uncovered(region: &Region, e: &Extent) -> Vec<String> {
    let eps = 1e-9;
    let mut missing = Vec::new();
    if e.bounds.south > region.south + eps {
        missing.push(lat_range(region.south, e.bounds.south.min(region.north)));
    }
    if e.bounds.north < region.north - eps {
        missing.push(lat_range(e.bounds.north.max(region.south), region.north));
    }
    if !e.global_longitude {
        // Longitudes measured eastward from the box's west edge.
        let (w, span) = (region.west, (region.east - region.west).rem_euclid(360.0));
        let east = w + if span == 0.0 { 360.0 } else { span };
        let start = w - (w - e.bounds.west).rem_euclid(360.0);
        let end = start + (e.bounds.east - e.bounds.west).rem_euclid(360.0);
        if w > end + eps {
            missing.push(lon_range(w, east.min(start + 360.0)));
            if east > end + 360.0 + eps {
                missing.push(lon_range(end + 360.0, east));
            }
        } else if end < east - eps {
            missing.push(lon_range(end, east));
        }
    }
    missing
}

/// Counts over the whole patch.
#[derive(Default)]
struct Tally {
    from_dem: usize,
    kept: usize,
}

/// What every re-baked tile of one patch is made from.
struct Rebake<'a> {
    existing: &'a Pack,
    header: &'a PackHeader,
    sources: &'a Sources,
    blend: Blend,
    /// The deepest depth the DEM's pixels (and the pack) support.
    data_depth: u8,
}

/// The level below a window of coarse tiles as the pack holds it, and as
/// the patch leaves it.
struct Levels<'a> {
    before: &'a Level,
    after: Level,
}

impl Rebake<'_> {
    /// Whether tiles at `depth` are filtered from the level below (above the
    /// pack's height data depth).
    fn filtered(&self, depth: u8) -> bool {
        depth < self.header.height_data_depth
    }

    /// Runs `each` over `parents` (ascending keys, one filtered depth) in
    /// windows, each with the children its parents' filters can reach as
    /// the pack holds them and as patched in `fresh`. Both levels together
    /// hold at most `held` tiles ([`for_each_window`] holds half for the
    /// pack's, the patched copy mirrors it): a level for all of a large
    /// patch's parents at once took a 7,070-tile patch past 1 GiB under
    /// `--memory 256M`.
    fn each_window(
        &self,
        parents: &[TileAddress],
        fresh: &SpilledTiles,
        held: usize,
        mut each: impl FnMut(&[TileAddress], &Levels) -> Result<(), BakeError>,
    ) -> Result<(), BakeError> {
        let load = |child: TileAddress| -> Result<Option<DecodedTile>, BakeError> {
            match self.existing.entry(child)? {
                Some(_) => Ok(Some(self.existing.read_tile(child)?)),
                None => Ok(None),
            }
        };
        let depth = parents.first().map_or(0, |p| p.depth() + 1);
        for_each_window(parents, (held / 2).max(1), load, |window, before| {
            let patched: Vec<DecodedTile> = before
                .tiles()
                .map(|old| old.tile)
                .filter(|&t| fresh.contains(t))
                .collect::<Vec<_>>()
                .par_iter()
                .map(|&t| fresh.decode(t, self.header.codec))
                .collect::<Result<_, _>>()?;
            let mut after = Level::new(depth);
            before.tiles().filter(|old| !fresh.contains(old.tile)).for_each(|old| after.insert(old.clone()));
            patched.into_iter().for_each(|t| after.insert(t));
            each(window, &Levels { before, after })
        })
    }

    /// How a refiltered sample made from fill was filled: as the old tile's
    /// voids were (a patch fills nothing itself), from the samples around
    /// where the old tile had none; `None` in a pack that keeps no void
    /// masks (version 4 and before).
    fn void_fill(&self, old: &DecodedTile) -> Option<VoidFill> {
        self.header.sample_voids.then(|| old.voids.as_ref().map_or(VoidFill::Surrounding, |v| v.fill))
    }

    /// One tile's composite, encoded; with its counts of samples taken from
    /// the DEM (above the data depth: changed by the refilter) and kept.
    /// `fresh` holds the deeper tiles already re-baked; `levels`, for a
    /// filtered depth, the level below.
    fn tile(
        &self,
        tile: TileAddress,
        fresh: &SpilledTiles,
        levels: Option<&Levels>,
    ) -> Result<(EncodedTile, usize, usize), BakeError> {
        let old = self.existing.read_tile(tile)?;
        let mut c = composite(&old, &self.sources.measure(&self.header.body, tile, &self.blend)?);
        if let Some(l) = levels.filter(|_| self.filtered(tile.depth())) {
            let (heights, changed, voids) =
                refilter(&old, &l.before.filter_tile(tile), &l.after.filter_tile(tile), self.void_fill(&old));
            (c.heights, c.from_dem, c.kept, c.voids) = (heights, changed, old.quantised.len() - changed, voids);
        }
        // Never below the children's error (patched or kept).
        let mut error = lattice_error(&c.heights);
        for child in tile.children().into_iter().flatten() {
            let child_error = match fresh.geometric_error(child) {
                Some(e) => Some(e),
                None => self.existing.entry(child)?.map(|e| e.geometric_error),
            };
            error = child_error.map_or(error, |e| error.max(f64::from(e)));
        }
        // Measured when what came from the DEM was measured at this depth
        // and what was kept came from a measured tile.
        let measured = (c.from_dem == 0 || tile.depth() <= self.data_depth) && (c.kept == 0 || old.measured);
        let content = TileContent {
            heights: &c.heights,
            classes: c.classes.as_deref(),
            colour: c.colour.as_deref(),
            geometric_error: error,
            measured,
            voids: c.voids.as_ref().map(Voids::as_tile_voids),
        };
        let (codec, level, range) =
            (self.header.codec, i32::from(self.header.compression_level), (old.min_elevation, old.max_elevation));
        Ok((encode_tile_keeping_range(tile, codec, &content, level, range)?, c.from_dem, c.kept))
    }

    /// Audits the tiles about to be written (decoded from their payloads)
    /// against the composite, re-reading the pack's old tiles and the
    /// patch rasters; above the data depth, against the refilter evaluated
    /// sample by sample ([`Level::filtered`], not the bake's window).
    /// Audits every tile of `fresh`, each decoded from its payload by the
    /// worker that audits it and dropped after: holding them all decoded
    /// took a 1,830-tile patch past 900 MB under `--memory 256M`.
    fn audit(&self, fresh: &SpilledTiles, held: usize, progress: &dyn Progress) -> Result<AccuracyAudit, BakeError> {
        let mut results = Vec::with_capacity(fresh.len());
        let all = fresh.tiles();
        let deepest = all.iter().map(|t| t.depth()).max().unwrap_or(0);
        for depth in 0..=deepest {
            let mut parents: Vec<TileAddress> = all.iter().copied().filter(|t| t.depth() == depth).collect();
            parents.sort_by_key(|t| t.key());
            let mut audit = |window: &[TileAddress], levels: Option<&Levels>| -> Result<(), BakeError> {
                let audited: Vec<_> =
                    window.par_iter().map(|&t| self.audit_tile(fresh, t, levels)).collect::<Result<_, _>>()?;
                results.extend(audited);
                progress.tiles(results.len(), fresh.len());
                Ok(())
            };
            match self.filtered(depth) && !parents.is_empty() {
                true => self.each_window(&parents, fresh, held, |window, levels| audit(window, Some(levels)))?,
                false => audit(&parents, None)?,
            }
        }
        Ok(AccuracyAudit::collect(self.header.max_depth, results))
    }

    /// Audits one re-baked tile, decoded from its payload (and dropped
    /// after), against the composite; `levels`, for a filtered depth, the
    /// level below.
    fn audit_tile(
        &self,
        fresh: &SpilledTiles,
        tile: TileAddress,
        levels: Option<&Levels>,
    ) -> Result<(u8, DepthAudit, Option<String>), BakeError> {
        let new = &fresh.decode(tile, self.header.codec)?;
        let old = self.existing.read_tile(new.tile)?;
        let refiltered = levels.map(|l| {
            let evaluate = |level: &Level| -> Vec<_> {
                let c = TILE_CELLS as i32;
                (-1..=c + 1)
                    .flat_map(|j| (-1..=c + 1).map(move |i| new.tile.sample(i, j)))
                    .map(|s| level.filtered(s.face, s.i as i64, s.j as i64))
                    .collect()
            };
            refilter(&old, &evaluate(l.before), &evaluate(&l.after), self.void_fill(&old)).0
        });
        let m = self.sources.measure(&self.header.body, new.tile, &self.blend)?;
        let (a, first) = audit_tile(&old, new, &m, refiltered.as_deref());
        Ok((new.tile.depth(), a, first))
    }
}

/// Re-bakes the tiles of the pack at `run.options.out` that `region` touches.
#[expect(
    clippy::too_many_lines,
    reason = "a patch's steps in crash-window order (replay, already applied, sources, re-bake by depth, audit, journal, read-back): the order is the safety argument"
)]
pub(crate) fn patch_region(run: &Run, region: Region) -> Result<BakeReport, BakeError> {
    let (options, progress) = (run.options, run.progress);
    if let Some(completed) = complete_interrupted_patch(run, region)? {
        return Ok(completed);
    }
    // Read whole once: it names the patch in the header and tells whether
    // the header's last patch is this one.
    let inputs = patch_inputs_digest(options)?;
    if let Some(applied) = crate::patch::recovery::patch_already_applied(run, region, &inputs)? {
        return Ok(applied);
    }
    let existing = Pack::open_unmapped(&options.out)?;
    let header = existing.header().clone();
    check_compatible(options, &header)?;
    let (sources, landmarks, dem_depth) = composite::open_sources(run)?;
    let body = &header.body;
    let radius = body.ellipsoid().max_radius();
    let mut pixel: f64 = 0.0;
    for (what, raster) in sources.rasters() {
        check_covers(&region, what, raster)?;
        pixel = pixel.max((raster.pixel_spacing_m(radius)?.coarsest_m() / radius).to_degrees());
    }
    let blend = Blend { region, border: BORDER_PIXELS * pixel };
    let data_depth = dem_depth.min(header.height_data_depth);
    // Samples outside the box keep their values, so only tiles whose box
    // (padded past their apron) meets the region are re-baked.
    let mut tiles: Vec<TileAddress> = Vec::new();
    for entry in existing.entries() {
        let tile = entry?.tile();
        if tile_touches(body, tile, &region, 0.0) {
            tiles.push(tile);
        }
    }
    progress.stage(&format!("re-baking {} tiles the region touches", tiles.len()));
    let bake_start = Instant::now();
    let fresh = SpilledTiles::beside(&options.out)?;
    let mut tally = Tally::default();
    let deepest = tiles.iter().map(|t| t.depth()).max().unwrap_or(0);
    let rebake = Rebake { existing: &existing, header: &header, sources: &sources, blend, data_depth };
    let held = run.memory.held_level_tiles();
    for depth in (0..=deepest).rev() {
        let mut here: Vec<TileAddress> = tiles.iter().copied().filter(|t| t.depth() == depth).collect();
        here.sort_by_key(|t| t.key());
        // Tiles of this depth go to the scratch file a window at a time;
        // only the depth below is read meanwhile.
        let mut bake = |window: &[TileAddress], levels: Option<&Levels>| -> Result<(), BakeError> {
            let baked: Vec<_> =
                window.par_iter().map(|&tile| rebake.tile(tile, &fresh, levels)).collect::<Result<_, _>>()?;
            for (_, from_dem, kept) in &baked {
                tally.from_dem += from_dem;
                tally.kept += kept;
            }
            fresh.insert(baked.into_iter().map(|(e, _, _)| e))?;
            progress.tiles(fresh.len(), tiles.len());
            Ok(())
        };
        match rebake.filtered(depth) && !here.is_empty() {
            true => rebake.each_window(&here, &fresh, held, |window, levels| bake(window, Some(levels)))?,
            false => here.chunks(held).try_for_each(|window| bake(window, None))?,
        }
    }
    let bake_seconds = bake_start.elapsed().as_secs_f64();
    if let Some(d) = sources.dem.as_ref().filter(|_| tally.from_dem == 0) {
        return Err(RasterError::Unusable {
            path: d.dem.path().to_owned(),
            reason: "no sample inside --region has data in it (all nodata there); nothing was written".into(),
        }
        .into());
    }

    progress.stage("accuracy audit of the patched tiles against the composite, before writing");
    let audit_start = Instant::now();
    let per_depth = rebake.audit(&fresh, held, progress)?.passed_before_writing(&options.out)?;
    drop(existing);

    // The redo journal is written and synced before the pack is touched,
    // and stays until what was written reads back as what was audited.
    let stamp = PatchStamp {
        fingerprint: patch_fingerprint(&header.fingerprint, &inputs, &region),
        region,
        inputs: inputs[..16].try_into().expect("16 of 32 bytes"),
        detail: law_to_keep(&options.out, &header, progress)?,
    };
    let summary = begin_patch(&options.out, &fresh, stamp)?;
    progress.stage("re-reading the patched tiles");
    reread(&options.out, &fresh).inspect_err(|_| drop_journal_of_rejected(&options.out))?;
    finish_patch(&options.out)?;
    let audit_seconds = audit_start.elapsed().as_secs_f64();
    let report = PatchReport {
        target: PatchTarget::of(options, region),
        tiles: PatchedTiles::new(&summary, &fresh.tiles()),
        blend_border_deg: blend.border,
        samples_from_dem: tally.from_dem,
        samples_kept: tally.kept,
        landmarks: LandmarkReport::from(&landmarks),
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        timings_s: Timings {
            bake: bake_seconds,
            audit: Some(audit_seconds),
            total: run.started.elapsed().as_secs_f64(),
        },
        memory: MemoryReport::new(&run.memory, None),
    };
    Ok(BakeReport::new(Report::Patch(report)))
}

/// The detail law the patched pack records: its own, kept; a version 2
/// pack records none, so the law its data measures before the patch (the
/// one it was read with) is recorded with the patch.
fn law_to_keep(
    out: &Path,
    header: &PackHeader,
    progress: &dyn crate::Progress,
) -> Result<Option<planet_terrain::pack::DetailLaw>, BakeError> {
    if header.detail.is_some() {
        return Ok(header.detail);
    }
    progress.stage(&format!("measuring the detail law of {} (version 2 records none) before the patch", out.display()));
    Ok(Some(planet_terrain::ground::PackSource::measure_detail_law_at(out)?))
}

/// The written pack must hold exactly the audited tiles: each tile's index
/// entry the audited one (but for its offset), its payload the audited
/// bytes, and those bytes its entry's checksum; if not, the pack is moved
/// aside like any pack that fails its audit.
fn reread(out: &Path, audited: &SpilledTiles) -> Result<(), BakeError> {
    let pack = Pack::open_unmapped(out)?;
    for tile in audited.tiles() {
        let want = audited.entry_of(tile);
        let holds = crate::patch::recovery::reads_back(&pack, out, tile, &audited.payload_of(tile)?)?
            .is_some_and(|entry| IndexEntry { payload_offset: want.payload_offset, ..entry } == want);
        if !holds {
            drop(pack);
            return Err(reject(out, format!("tile {tile} reads back other than it was audited")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uncovered_part_of_a_box_is_named() {
        let region = Region { south: 10.0, west: 10.0, north: 20.0, east: 20.0 };
        let extent =
            |south, west, north, east| Extent { bounds: Region { south, west, north, east }, global_longitude: false };
        assert!(uncovered(&region, &extent(5.0, 5.0, 25.0, 25.0)).is_empty());
        assert_eq!(uncovered(&region, &extent(5.0, 5.0, 15.0, 25.0)), ["15..20 N"]);
        assert_eq!(uncovered(&region, &extent(-5.0, 12.0, 25.0, 18.0)), ["10..12 E", "18..20 E"]);
        assert_eq!(uncovered(&region, &extent(12.0, -30.0, 30.0, 15.0)), ["10..12 N", "15..20 E"]);
        let across = Region { south: -20.0, west: 170.0, north: -10.0, east: -170.0 };
        assert!(uncovered(&across, &extent(-30.0, 160.0, 0.0, -160.0)).is_empty());
        assert_eq!(uncovered(&across, &extent(-30.0, 160.0, 0.0, 180.0)), ["180..170 W"]);
        assert_eq!(lat_range(-5.0, 12.5), "5 S..12.5 N");
    }
}
