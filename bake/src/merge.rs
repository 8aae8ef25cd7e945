//! The merge of a sharded bake (`planet-bake --merge SHARD... --out PACK`):
//! the bytes a single-process bake of the same inputs writes.
//!
//! The key decision: the merge opens no raster. The shards hold every tile
//! sampled from the source and the surfaces of the coarse tiles; the merge
//! builds only the levels above the shards' subtrees, by the same filter
//! and the same code (`pipeline::TileBake`) as a single-process bake,
//! staging them in its own journal (so a killed merge resumes), and then
//! lays its staged levels and the shards' tiles out in one key-ordered walk
//! (`PackWriter::assemble_with`): the shards' payloads are copied once,
//! straight into the pack, their CRCs checked on the way; nothing holds a
//! shard's index or payloads whole. Before any of that, it checks that the
//! shards are of one bake (fingerprint, plan, tile-set digest, void policy,
//! header), that each holds only its own part, and that together they hold
//! the tile set exactly once; it names any missing, repeated or foreign
//! shard. The result is verified whole (every rule, every checksum) and its
//! filtered levels audited against an independent evaluation of the filter
//! before it is renamed into place.

use std::path::{Path, PathBuf};
use std::time::Instant;

use planet_terrain::geo::address::TileKey;
use planet_terrain::pack::{
    DecodedTile, EncodedTile, IndexEntry, Pack, PackError, PackSpec, PackWriter, TileParts, merged_keys,
};
use planet_terrain::{Body, TileAddress};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::audit::{FileBytes, accuracy_audit};
use crate::error::BakeError;
use crate::limits::MemoryPlan;
use crate::options::Progress;
use crate::pipeline::{TileBake, TileSink, TileSource};
use crate::report::{AccuracyReport, BakeReport, Report};
use crate::sampling::{Sampled, SurfaceSamples, settle_voids};
use crate::shard::ShardPlan;
use crate::shard_file::{ShardMeta, ShardSection, build_id, hex};
use planet_terrain::ground::LawSummary;

/// What a merge is told.
#[derive(Clone, Debug)]
pub struct MergeOptions {
    pub shards: Vec<PathBuf>,
    pub out: PathBuf,
    pub jobs: Option<usize>,
    pub memory: Option<u64>,
    /// Continue a killed merge's journal.
    pub resume: bool,
}

/// What a merge did, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct MergeReport {
    pub(crate) out: String,
    pub(crate) shards: Vec<String>,
    pub(crate) tiles: u64,
    pub(crate) tiles_from_shards: u64,
    pub(crate) tiles_filtered: usize,
    pub(crate) file_bytes: u64,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) seconds: f64,
    pub(crate) filter_seconds: f64,
    pub(crate) assemble_seconds: f64,
    pub(crate) verify_seconds: f64,
    pub(crate) detail_law: planet_terrain::ground::LawSummary,
}

/// One shard, opened and checked.
struct OpenShard {
    path: PathBuf,
    pack: Pack,
    section: ShardSection,
}

/// A payload the merged file holds damaged was copied from a shard: when
/// that shard's own copy fails too, the shard is to blame, not `--out`
/// (a bit flip in a shard's payload was reported against the merged pack,
/// and against an intact file already at `--out`).
fn blame_shard(shards: &[OpenShard], error: &PackError) -> Option<BakeError> {
    let tile = match error.rule() {
        PackError::PayloadChecksum { tile, .. } | PackError::PayloadDecode { tile, .. } => *tile,
        _ => return None,
    };
    shards.iter().find_map(|s| {
        let entry = s.pack.entry(tile).ok().flatten()?;
        let damaged = s.pack.decode(&entry).err()?;
        Some(shard_error(&s.path, format!("{}: the shard is damaged; bake its part again", damaged.rule())))
    })
}

fn shard_error(path: &Path, message: impl Into<String>) -> BakeError {
    BakeError::Shard { path: path.to_owned(), message: message.into() }
}

/// Merges `options.shards` into `options.out`.
pub fn merge(options: &MergeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    crate::limits::check_jobs(options.jobs)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.unwrap_or(0))
        .build()
        .map_err(|cause| BakeError::Threads { jobs: options.jobs.unwrap_or(0), cause })?;
    pool.install(|| merge_in_pool(options, progress))
}

/// The pack must not be written over one of its own shards.
fn refuse_writing_over_a_shard(options: &MergeOptions) -> Result<(), BakeError> {
    let same_file = |a: &Path, b: &Path| {
        use std::os::unix::fs::MetadataExt;
        matches!((std::fs::metadata(a), std::fs::metadata(b)), (Ok(x), Ok(y)) if (x.dev(), x.ino()) == (y.dev(), y.ino()))
    };
    match options.shards.iter().find(|s| same_file(s, &options.out)) {
        Some(shard) => Err(BakeError::Options(format!(
            "--out {} is the shard {}: the merge would write over its own input",
            options.out.display(),
            shard.display()
        ))),
        None => Ok(()),
    }
}

fn merge_in_pool(options: &MergeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    refuse_writing_over_a_shard(options)?;
    let memory = MemoryPlan::new(options.memory, rayon::current_num_threads(), 0)?;
    progress.stage(&format!("checking {} shard files", options.shards.len()));
    let shards = open_shards(&options.shards)?;
    let meta = shards[0].section.meta.clone();
    let header = shards[0].pack.header().clone();
    let plan = ShardPlan {
        root_depth: meta.root_depth,
        count: meta.shards,
        starts: meta.starts.clone(),
        work: meta.work.clone(),
        total_tiles: meta.total_tiles,
        tile_set_digest: [0; 32],
    };
    check_parts(&shards, &plan)?;
    let mut coarse: Vec<TileAddress> =
        shards.iter().flat_map(|s| s.section.table.iter().map(|r| r.0.address())).collect();
    coarse.sort_by_key(|t| t.key());
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
    let writer = if options.resume {
        PackWriter::resume_levels_above(&options.out, spec.clone(), coarse.iter().copied())?
    } else {
        PackWriter::create_levels_above(&options.out, spec.clone(), coarse.iter().copied())?
    };
    let pending = writer.pending_count() as usize;
    progress.stage(&format!(
        "filtering {} tiles above depth {} from the shards' tiles ({} resumed)",
        pending,
        plan.root_depth,
        coarse.len() - pending
    ));
    let filter_started = Instant::now();
    let source = MergeSource { shards: &shards, plan: &plan, void_value: meta.void_value };
    let sink = MergeSink { writer: &writer, shards: &shards, plan: &plan };
    TileBake {
        source: &source,
        spec: &spec,
        data_depth: plan.root_depth,
        progress,
        already_done: coarse.len() - pending,
        total: coarse.len(),
        held_level_tiles: memory.held_level_tiles(),
    }
    .run(&writer, &sink)?;
    let filter_seconds = filter_started.elapsed().as_secs_f64();
    progress.stage(&format!("laying out {} with the shards' tiles", options.out.display()));
    let assemble_started = Instant::now();
    let parts: Vec<&dyn TileParts> = shards.iter().map(|s| &s.pack as &dyn TileParts).collect();
    let assembled =
        writer.assemble_reporting(&parts, &mut |done, total| progress.tiles(done as usize, total as usize))?;
    let detail_law = crate::full::record_detail_law(&assembled, progress)?;
    let assemble_seconds = assemble_started.elapsed().as_secs_f64();
    progress.stage(&format!("verifying {}: every rule, every checksum", assembled.path().display()));
    let verify_started = Instant::now();
    // Every rule and every payload, the payloads decoded on every worker.
    let merged = Pack::adopt(Box::new(FileBytes::open(assembled.path())?))
        .and_then(|p| {
            p.verify_batched(&mut |done, total| progress.tiles(done as usize, total as usize), &|pack, batch| {
                batch.par_iter().try_for_each(|e| pack.decode(e).map(drop))
            })
        })
        .map_err(|e| blame_shard(&shards, &e).unwrap_or_else(|| e.in_file(assembled.path()).into()))?;
    progress.stage(&format!("accuracy audit of the {} tiles the merge filtered", coarse.len()));
    let audit = accuracy_audit(&source, assembled.path(), 0..plan.root_depth, memory.held_level_tiles(), progress)?;
    let per_depth = audit.passed(assembled.path())?;
    let verify_seconds = verify_started.elapsed().as_secs_f64();
    let summary = assembled.commit()?;
    let report = MergeReport {
        out: options.out.display().to_string(),
        shards: options.shards.iter().map(|p| p.display().to_string()).collect(),
        tiles: merged.tiles,
        tiles_from_shards: merged.tiles - coarse.len() as u64,
        tiles_filtered: coarse.len(),
        file_bytes: summary.file_length,
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        seconds: started.elapsed().as_secs_f64(),
        filter_seconds,
        assemble_seconds,
        verify_seconds,
        detail_law: LawSummary::of(&detail_law),
    };
    Ok(BakeReport::new(Report::Merge(Box::new(report))))
}

/// Opens every shard file and checks they are the parts of one bake, each
/// exactly once; sorted by part.
fn open_shards(paths: &[PathBuf]) -> Result<Vec<OpenShard>, BakeError> {
    if paths.is_empty() {
        return Err(BakeError::Options("--merge needs the shard files of a sharded bake".into()));
    }
    let mut shards = Vec::with_capacity(paths.len());
    let build = build_id()?;
    for path in paths {
        let pack = Pack::adopt(Box::new(FileBytes::open(path)?)).map_err(|e| e.in_file(path))?.named(path);
        let section = ShardSection::read(path, pack.header().file_length)?;
        if hex(&pack.header().fingerprint) != section.meta.fingerprint {
            return Err(shard_error(path, "its pack's fingerprint differs from its shard section's"));
        }
        if section.meta.root_depth != pack.header().height_data_depth {
            return Err(shard_error(path, "its plan's root depth is not its pack's height data depth"));
        }
        if section.meta.build != build {
            return Err(shard_error(
                path,
                format!(
                    "baked by another build of planet-bake ({}, this one is {build}): shards and merge must be one build, whose bytes they share",
                    section.meta.build
                ),
            ));
        }
        shards.push(OpenShard { path: path.clone(), pack, section });
    }
    shards.sort_by_key(|s| s.section.meta.shard);
    let first = &shards[0];
    let same_bake = |m: &ShardMeta| {
        let f = &first.section.meta;
        (&m.fingerprint, m.shards, m.root_depth, &m.starts, &m.work, m.total_tiles, &m.tile_set_digest)
            == (&f.fingerprint, f.shards, f.root_depth, &f.starts, &f.work, f.total_tiles, &f.tile_set_digest)
            && m.void_value.map(f64::to_bits) == f.void_value.map(f64::to_bits)
    };
    for s in &shards[1..] {
        let h = (s.pack.header(), first.pack.header());
        let same_header = (&h.0.body, &h.0.tier, h.0.codec, h.0.height_data_depth, h.0.colour_data_depth)
            == (&h.1.body, &h.1.tier, h.1.codec, h.1.height_data_depth, h.1.colour_data_depth)
            && (h.0.coverage, h.0.compression_level) == (h.1.coverage, h.1.compression_level);
        if !same_bake(&s.section.meta) || !same_header {
            return Err(shard_error(
                &s.section.path,
                format!(
                    "a shard of a different bake than {} (fingerprint {} of {} shards, against {} of {}): all shards must come from the same inputs, flags and --shard count",
                    first.section.path.display(),
                    &s.section.meta.fingerprint[..16],
                    s.section.meta.shards,
                    &first.section.meta.fingerprint[..16],
                    first.section.meta.shards
                ),
            ));
        }
    }
    let count = first.section.meta.shards;
    for pair in shards.windows(2) {
        if pair[0].section.meta.shard == pair[1].section.meta.shard {
            return Err(BakeError::ShardSet(format!(
                "shard {}/{count} is given twice: {} and {}",
                pair[0].section.meta.shard,
                pair[0].section.path.display(),
                pair[1].section.path.display()
            )));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !shards.iter().any(|s| s.section.meta.shard == *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(BakeError::ShardSet(format!(
            "shards {} of this bake are missing (given: {}); bake them with --shard I/{count} and merge again",
            missing.join(", "),
            shards.iter().map(|s| s.section.path.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(shards)
}

/// Checks that each shard holds only its own part, and that all together
/// hold the bake's tile set exactly once (count and digest of the keys).
/// One walk over every shard's index does both.
fn check_parts(shards: &[OpenShard], plan: &ShardPlan) -> Result<(), BakeError> {
    for (index, s) in shards.iter().enumerate() {
        let path = &s.section.path;
        if let Some(row) = s.section.table.iter().find(|r| plan.part_of(r.0.address()) != index as u32) {
            return Err(shard_error(path, format!("coarse tile {} is not in this shard's part", row.0.address())));
        }
    }
    let mut h = Sha256::new();
    let mut count = 0u64;
    let packs: Vec<&dyn TileParts> = shards.iter().map(|s| &s.pack as &dyn TileParts).collect();
    // Each shard's table is in key order, their concatenation is not: keys
    // are depth-major, and every shard holds coarse tiles of several depths.
    let mut coarse: Vec<u64> = shards.iter().flat_map(|s| s.section.table.iter().map(|r| r.0.raw())).collect();
    coarse.sort_unstable();
    for item in merged_keys(&packs, coarse) {
        let (part, key) = item?;
        if let Some(s) = shards.get(part) {
            let tile = TileKey::from_raw(key).expect("the reader validated the key").address();
            if tile.depth() < plan.root_depth || plan.part_of(tile) != part as u32 {
                return Err(shard_error(
                    &s.section.path,
                    format!("tile {tile} is not in this shard's part of the plan"),
                ));
            }
        }
        h.update(key.to_le_bytes());
        count += 1;
    }
    let digest: [u8; 32] = h.finalize().into();
    let meta = &shards[0].section.meta;
    if count != meta.total_tiles || hex(&digest) != meta.tile_set_digest {
        return Err(BakeError::ShardSet(format!(
            "the shards hold {count} tiles where the bake has {} (or a different set of the same size): a shard file is from an earlier or a different run; re-bake the shards",
            meta.total_tiles
        )));
    }
    Ok(())
}

/// The merge's source: the void policy and the shards' coarse surfaces.
struct MergeSource<'a> {
    shards: &'a [OpenShard],
    plan: &'a ShardPlan,
    void_value: Option<f64>,
}

impl TileSource for MergeSource<'_> {
    fn sample(&self, _: &Body, tile: TileAddress) -> Result<Sampled, BakeError> {
        Err(BakeError::ShardSet(format!("tile {tile}: the merge reads no raster; a shard holds this tile")))
    }

    fn settle_voids(&self, tile: TileAddress, values: Vec<Option<f64>>) -> Result<(Vec<f64>, Vec<bool>), BakeError> {
        settle_voids(self.void_value, values).ok_or_else(|| BakeError::NoData {
            path: self.shards[self.plan.part_of(tile) as usize].section.path.clone(),
            tile,
        })
    }

    fn surface(&self, _: &Body, tile: TileAddress) -> Result<SurfaceSamples, BakeError> {
        self.shards[self.plan.part_of(tile) as usize].section.surface(tile)
    }
}

/// The merge's sink: the levels it filters go to its writer; the level
/// below the first of them is read from the shards.
struct MergeSink<'a> {
    writer: &'a PackWriter,
    shards: &'a [OpenShard],
    plan: &'a ShardPlan,
}

impl MergeSink<'_> {
    fn shard_of(&self, tile: TileAddress) -> &Pack {
        &self.shards[self.plan.part_of(tile) as usize].pack
    }
}

impl TileSink for MergeSink<'_> {
    fn child_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        if tile.depth() >= self.plan.root_depth {
            self.shard_of(tile).entry(tile)
        } else {
            self.writer.staged_entry(tile)
        }
    }

    fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        if tile.depth() >= self.plan.root_depth {
            let pack = self.shard_of(tile);
            pack.entry(tile)?.map(|e| pack.decode(&e)).transpose()
        } else {
            self.writer.staged_tile(tile)
        }
    }

    fn put(&self, tile: EncodedTile) -> Result<(), PackError> {
        self.writer.put_encoded(&tile)
    }
}
