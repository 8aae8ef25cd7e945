//! The files a sharded bake hands on between its stages, opened and checked
//! as one set: the shard files (`--shard`) and the wave files (`--wave`).
//!
//! The key decision: a part is trusted for what it holds only after the
//! whole set has been checked against itself. Every part names its bake
//! (fingerprint, plan, tile-set digest, void policy, build) and its place
//! in it (a shard's index; a wave's wave and task); the set must be one
//! bake, each place given at most once, and each part must hold only the
//! tiles its place owns. Whoever reads a tile then knows, from the plan
//! alone, which part holds it ([`Parts::holder`]): a tile at or below the
//! root depth lies in its shard, a coarse tile in the task of its wave.

use std::path::{Path, PathBuf};

use planet_terrain::geo::address::TileKey;
use planet_terrain::pack::{
    DecodedTile, EncodedTile, IndexEntry, Pack, PackError, PackSpec, PackWriter, TileParts, merged_keys,
};
use planet_terrain::{Body, TileAddress};
use sha2::{Digest, Sha256};

use crate::audit::FileBytes;
use crate::error::BakeError;
use crate::pipeline::{TileSink, TileSource};
use crate::sampling::{Sampled, SurfaceSamples, settle_voids};
use crate::shard::ShardPlan;
use crate::shard_file::{ShardMeta, ShardSection, build_id, hex};
use crate::wave::WavePlan;

/// One shard or wave file, opened and checked on its own.
pub(crate) struct OpenPart {
    pub(crate) path: PathBuf,
    pub(crate) pack: Pack,
    pub(crate) section: ShardSection,
}

/// Every part given, checked to be of one bake: the shards complete and in
/// order, the wave files by wave and task.
pub(crate) struct Parts {
    pub(crate) shards: Vec<OpenPart>,
    /// Per wave of the plan, per task: the file, where one was given.
    pub(crate) waves: Vec<Vec<Option<OpenPart>>>,
    pub(crate) plan: ShardPlan,
    pub(crate) waves_plan: WavePlan,
    /// The tiles above the shards' subtrees, ascending: the shards list
    /// them (each its own, with their surfaces).
    coarse: Vec<TileAddress>,
}

pub(crate) fn part_error(path: &Path, message: impl Into<String>) -> BakeError {
    BakeError::Shard { path: path.to_owned(), message: message.into() }
}

impl Parts {
    /// Opens `paths` (shard files and wave files, in any order) and checks
    /// they are parts of one bake, every shard exactly once and each wave
    /// task at most once.
    pub(crate) fn open(paths: &[PathBuf]) -> Result<Parts, BakeError> {
        if paths.is_empty() {
            return Err(BakeError::Options("--merge needs the shard files of a sharded bake".into()));
        }
        let build = build_id()?;
        allow_open_files(paths.len());
        let mut all = Vec::with_capacity(paths.len());
        for path in paths {
            all.push(open_part(path, &build)?);
        }
        let first = &all[0];
        for p in &all[1..] {
            check_same_bake(first, p)?;
        }
        let meta = first.section.meta.clone();
        let waves_plan = WavePlan::new(meta.shards);
        let mut waves: Vec<Vec<Option<OpenPart>>> =
            waves_plan.tasks().iter().map(|&n| (0..n).map(|_| None).collect()).collect();
        let mut shards = Vec::new();
        for part in all {
            match part.section.meta.wave {
                None => shards.push(part),
                Some(w) => {
                    let slot = &mut waves[w.wave as usize][w.task as usize];
                    if let Some(given) = slot {
                        return Err(BakeError::ShardSet(format!(
                            "task {} of wave {} is given twice: {} and {}",
                            w.task,
                            w.wave,
                            given.path.display(),
                            part.path.display()
                        )));
                    }
                    *slot = Some(part);
                }
            }
        }
        check_shards_complete(&mut shards, meta.shards)?;
        let plan = ShardPlan {
            root_depth: meta.root_depth,
            count: meta.shards,
            starts: meta.starts.clone(),
            work: meta.work.clone(),
            total_tiles: meta.total_tiles,
            tile_set_digest: [0; 32],
        };
        let mut coarse: Vec<TileAddress> =
            shards.iter().flat_map(|s| s.section.table.iter().map(|r| r.0.address())).collect();
        coarse.sort_by_key(|t| t.key());
        Ok(Parts { shards, waves, plan, waves_plan, coarse })
    }

    pub(crate) fn meta(&self) -> &ShardMeta {
        &self.shards[0].section.meta
    }

    /// The spec every part was written with.
    pub(crate) fn spec(&self) -> PackSpec {
        let header = self.shards[0].pack.header();
        PackSpec {
            body: header.body.clone(),
            tier: header.tier.clone(),
            codec: header.codec,
            height_data_depth: header.height_data_depth,
            colour_data_depth: header.colour_data_depth,
            coverage: header.coverage,
            fingerprint: header.fingerprint,
            compression_level: header.compression_level,
        }
    }

    /// The tiles above the shards' subtrees, ascending.
    pub(crate) fn coarse_tiles(&self) -> &[TileAddress] {
        &self.coarse
    }

    /// Whether any wave's file was given.
    pub(crate) fn waves_given(&self) -> bool {
        self.waves.iter().flatten().any(Option::is_some)
    }

    /// The wave and task that bake coarse `tile`.
    pub(crate) fn wave_task_of(&self, tile: TileAddress) -> (u32, u32) {
        let wave = self.waves_plan.wave_of(tile.depth(), self.plan.root_depth);
        (wave, self.waves_plan.task_of(wave, self.plan.part_of(tile)))
    }

    /// Refuses unless every task of the waves before `wave` (where `wave`
    /// is the plan's count: every wave) that has tiles to bake was given. A
    /// task with none writes no file (a regional bake's, or one of a wave
    /// past the root).
    pub(crate) fn require_waves_before(&self, wave: u32) -> Result<(), BakeError> {
        let mut missing: Vec<(u32, u32)> = self
            .coarse
            .iter()
            .map(|&t| self.wave_task_of(t))
            .filter(|&(w, j)| w < wave && self.waves[w as usize][j as usize].is_none())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let missing: Vec<String> = missing.iter().map(|(w, j)| format!("{w}:{j}")).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(BakeError::ShardSet(format!(
            "the wave files of wave:task {} are missing; bake them with --wave W --task J and give them too",
            missing.join(", ")
        )))
    }

    /// The part that holds `tile` when the bake is done: its shard at or
    /// below the root depth, else the task of its wave (`None` where that
    /// task's file was not given).
    pub(crate) fn holder(&self, tile: TileAddress) -> Option<&OpenPart> {
        let part = self.plan.part_of(tile);
        if tile.depth() >= self.plan.root_depth {
            return self.shards.get(part as usize);
        }
        let (wave, task) = self.wave_task_of(tile);
        self.waves[wave as usize][task as usize].as_ref()
    }

    /// `tile`'s index entry where the bake is done (`None`: not in the set,
    /// or in a part not given).
    pub(crate) fn entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        self.holder(tile).map_or(Ok(None), |p| p.pack.entry(tile))
    }

    /// `tile` decoded from the part that holds it.
    pub(crate) fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        match self.holder(tile) {
            Some(p) => p.pack.entry(tile)?.map(|e| p.pack.decode(&e)).transpose(),
            None => Ok(None),
        }
    }

    /// Every part given, shards first, as the layout's sources.
    pub(crate) fn all(&self) -> impl Iterator<Item = &OpenPart> {
        self.shards.iter().chain(self.waves.iter().flatten().flatten())
    }

    /// Whether `part` may hold `tile`: a shard, the tiles of its subtrees;
    /// a wave file, the tiles of its wave's depths its task owns.
    fn owns(&self, part: &OpenPart, tile: TileAddress) -> bool {
        let (plan, waves) = (&self.plan, &self.waves_plan);
        match part.section.meta.wave {
            None => tile.depth() >= plan.root_depth && plan.part_of(tile) == part.section.meta.shard,
            Some(w) => {
                waves.depths(w.wave, plan.root_depth).contains(&tile.depth())
                    && waves.task_of(w.wave, plan.part_of(tile)) == w.task
            }
        }
    }

    /// Checks that every wave file given holds as many tiles as its task
    /// owns, the first of them its own (a wave task's inputs: a wrong one is
    /// named here, not only at the merge after later waves were baked from
    /// it). Counts from the shards' lists, one page of each file's index:
    /// a task reads no other file's whole index (the merge walks them all).
    pub(crate) fn check_wave_files(&self) -> Result<(), BakeError> {
        let mut owned: std::collections::HashMap<(u32, u32), u64> = std::collections::HashMap::new();
        for &t in &self.coarse {
            *owned.entry(self.wave_task_of(t)).or_default() += 1;
        }
        for part in self.waves.iter().flatten().flatten() {
            let w = part.section.meta.wave.expect("a wave file");
            let want = owned.get(&(w.wave, w.task)).copied().unwrap_or(0);
            if part.pack.tile_count() != want {
                let held = part.pack.tile_count();
                let message = format!("it holds {held} tiles where wave {} task {} has {want}", w.wave, w.task);
                return Err(part_error(&part.path, message));
            }
            if let Some(first) = part.pack.keys().next() {
                let tile = first?.address();
                if !self.owns(part, tile) {
                    return Err(part_error(&part.path, format!("tile {tile} is not in this file's part of the plan")));
                }
            }
        }
        Ok(())
    }

    /// Checks that each part holds only its own tiles, and that all parts
    /// together, with `extra` (the coarse tiles a merge filters itself,
    /// ascending), hold the bake's tile set exactly once (count and digest
    /// of the keys). One walk over every part's index does both.
    pub(crate) fn check_tile_set(&self, extra: &[TileAddress]) -> Result<(), BakeError> {
        let plan = &self.plan;
        for s in &self.shards {
            let path = &s.section.path;
            if let Some(row) = s.section.table.iter().find(|r| plan.part_of(r.0.address()) != s.section.meta.shard) {
                return Err(part_error(path, format!("coarse tile {} is not in this shard's part", row.0.address())));
            }
        }
        let parts: Vec<&OpenPart> = self.all().collect();
        let packs: Vec<&dyn TileParts> = parts.iter().map(|s| &s.pack as &dyn TileParts).collect();
        let meta = self.meta();
        // A global bake's parts name the set by its depth
        // (`shard::tile_set_digest`): its keys are counted, not hashed.
        let named_global = (0..=planet_terrain::geo::address::MAX_DEPTH)
            .find(|&d| hex(&crate::shard::global_set_digest(d)) == meta.tile_set_digest);
        let mut hash = named_global.is_none().then(Sha256::new);
        let (mut count, mut deepest) = (0u64, 0u8);
        for item in merged_keys(&packs, extra.iter().map(|t| t.key().raw()).collect()) {
            let (index, key) = item?;
            let tile = TileKey::from_raw(key).expect("the reader validated the key").address();
            if let Some(part) = parts.get(index).filter(|part| !self.owns(part, tile)) {
                return Err(part_error(&part.path, format!("tile {tile} is not in this file's part of the plan")));
            }
            if let Some(h) = hash.as_mut() {
                h.update(key.to_le_bytes());
            }
            count += 1;
            deepest = deepest.max(tile.depth());
        }
        // Distinct keys no deeper than the named depth, as many as the
        // global set to that depth holds: they are that set.
        let same_set = match named_global {
            Some(depth) => deepest <= depth && count == crate::shard::global_set_len(depth),
            None => hash.is_some_and(|h| hex(&<[u8; 32]>::from(h.finalize())) == meta.tile_set_digest),
        };
        if count != meta.total_tiles || !same_set {
            return Err(BakeError::ShardSet(format!(
                "the parts hold {count} tiles where the bake has {} (or a different set of the same size): a shard or wave file is from an earlier or a different run; bake it again",
                meta.total_tiles
            )));
        }
        Ok(())
    }

    /// A payload the merged file holds damaged was copied from a part: when
    /// that part's own copy fails too, the part is to blame, not `--out`
    /// (a bit flip in a shard's payload was reported against the merged
    /// pack, and against an intact file already at `--out`).
    pub(crate) fn blame(&self, error: &PackError) -> Option<BakeError> {
        let tile = match error.rule() {
            PackError::PayloadChecksum { tile, .. } | PackError::PayloadDecode { tile, .. } => *tile,
            _ => return None,
        };
        self.all().find_map(|s| {
            let entry = s.pack.entry(tile).ok().flatten()?;
            let damaged = s.pack.decode(&entry).err()?;
            Some(part_error(&s.path, format!("{}: the file is damaged; bake its part again", damaged.rule())))
        })
    }
}

/// Raises this process's soft limit on open files towards its hard limit
/// where `parts` open at once would pass it: every part stays open while
/// the tiles are walked, and a merge of 1,000 shards and their waves holds
/// about 2,300 files against the usual soft limit of 1,024. Where the hard
/// limit is lower, opening fails later with the file's name.
fn allow_open_files(parts: usize) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let want = parts as u64 + 256;
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|current| current < want) {
        let raised = limit.maximum.map_or(want, |hard| hard.min(want));
        let _ = setrlimit(Resource::Nofile, rustix::process::Rlimit { current: Some(raised), maximum: limit.maximum });
    }
}

fn open_part(path: &Path, build: &str) -> Result<OpenPart, BakeError> {
    let pack = Pack::adopt(Box::new(FileBytes::open(path)?)).map_err(|e| e.in_file(path))?.named(path);
    let section = ShardSection::read(path, pack.header().file_length)?;
    if hex(&pack.header().fingerprint) != section.meta.fingerprint {
        return Err(part_error(path, "its pack's fingerprint differs from its shard section's"));
    }
    if section.meta.root_depth != pack.header().height_data_depth {
        return Err(part_error(path, "its plan's root depth is not its pack's height data depth"));
    }
    if section.meta.build != build {
        return Err(part_error(
            path,
            format!(
                "baked by another build of planet-bake ({}, this one is {build}): shards, waves and merge must be one build, whose bytes they share",
                section.meta.build
            ),
        ));
    }
    Ok(OpenPart { path: path.to_owned(), pack, section })
}

fn check_same_bake(first: &OpenPart, s: &OpenPart) -> Result<(), BakeError> {
    let (m, f) = (&s.section.meta, &first.section.meta);
    let same_bake = (&m.fingerprint, m.shards, m.root_depth, &m.starts, &m.work, m.total_tiles, &m.tile_set_digest)
        == (&f.fingerprint, f.shards, f.root_depth, &f.starts, &f.work, f.total_tiles, &f.tile_set_digest)
        && m.void_value.map(f64::to_bits) == f.void_value.map(f64::to_bits);
    let h = (s.pack.header(), first.pack.header());
    let same_header = (&h.0.body, &h.0.tier, h.0.codec, h.0.height_data_depth, h.0.colour_data_depth)
        == (&h.1.body, &h.1.tier, h.1.codec, h.1.height_data_depth, h.1.colour_data_depth)
        && (h.0.coverage, h.0.compression_level) == (h.1.coverage, h.1.compression_level);
    if same_bake && same_header {
        return Ok(());
    }
    Err(part_error(
        &s.section.path,
        format!(
            "a part of a different bake than {} (fingerprint {} of {} shards, against {} of {}): all shards and wave files must come from the same inputs, flags and --shard count (a wave file left by an earlier bake in the same directory: delete it, or bake that task again)",
            first.section.path.display(),
            &m.fingerprint[..16],
            m.shards,
            &f.fingerprint[..16],
            f.shards
        ),
    ))
}

/// Sorts `shards` by index and refuses a repeated or missing one.
fn check_shards_complete(shards: &mut [OpenPart], count: u32) -> Result<(), BakeError> {
    shards.sort_by_key(|s| s.section.meta.shard);
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
    if missing.is_empty() {
        return Ok(());
    }
    Err(BakeError::ShardSet(format!(
        "shards {} of this bake are missing (given: {}); bake them with --shard I/{count} and merge again",
        missing.join(", "),
        shards.iter().map(|s| s.section.path.display().to_string()).collect::<Vec<_>>().join(", ")
    )))
}

/// The source of the levels above the shards: the void policy and the
/// shards' coarse surfaces; no raster.
pub(crate) struct PartsSource<'a>(pub(crate) &'a Parts);

impl TileSource for PartsSource<'_> {
    fn sample(&self, _: &Body, tile: TileAddress) -> Result<Sampled, BakeError> {
        Err(BakeError::ShardSet(format!(
            "tile {tile}: the levels above the shards read no raster; a shard holds this tile"
        )))
    }

    fn settle_voids(&self, tile: TileAddress, values: Vec<Option<f64>>) -> Result<(Vec<f64>, Vec<bool>), BakeError> {
        let parts = self.0;
        settle_voids(parts.meta().void_value, values).ok_or_else(|| BakeError::NoData {
            path: parts.shards[parts.plan.part_of(tile) as usize].section.path.clone(),
            tile,
        })
    }

    fn surface(&self, _: &Body, tile: TileAddress) -> Result<SurfaceSamples, BakeError> {
        let parts = self.0;
        parts.shards[parts.plan.part_of(tile) as usize].section.surface(tile)
    }
}

/// Where the levels above the shards are baked into: the tiles of the
/// depths `own` go to (and are read back from) `writer`; every other tile,
/// the level below the first of them among them, comes from the part that
/// holds it. A wave task owns its wave's depths; a merge given the shards
/// alone owns every depth above them.
pub(crate) struct LevelsAboveSink<'a> {
    pub(crate) writer: &'a PackWriter,
    pub(crate) parts: &'a Parts,
    pub(crate) own: std::ops::Range<u8>,
}

impl TileSink for LevelsAboveSink<'_> {
    fn child_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        if self.own.contains(&tile.depth()) { self.writer.staged_entry(tile) } else { self.parts.entry(tile) }
    }

    fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        if self.own.contains(&tile.depth()) { self.writer.staged_tile(tile) } else { self.parts.stored(tile) }
    }

    fn put(&self, tile: EncodedTile) -> Result<(), PackError> {
        self.writer.put_encoded(&tile)
    }
}
