//! The files a sharded bake hands on between its stages, opened and checked
//! as one set: the shard files (`planet-bake shard`) and the wave files (`planet-bake wave`).
//!
//! The key decision: a part is trusted for what it holds only after the
//! whole set has been checked against itself. Every part names its bake
//! (fingerprint, plan, tile set's name, void policy, build) and its place
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

use crate::cluster::file::{ShardMeta, ShardSection, build_id, hex};
use crate::cluster::plan::ShardPlan;
use crate::cluster::plan::WavePlan;
use crate::error::BakeError;
use crate::stages::audit::FileBytes;
use crate::stages::pipeline::{TileSink, TileSource};
use crate::stages::sampling::{Sampled, SurfaceSamples, settle_voids};

/// One shard or wave file, opened and checked on its own.
pub(crate) struct OpenPart {
    pub(crate) path: PathBuf,
    /// `None`: a shard of a regional bake whose ground is all voids holds
    /// no tile, and its file is the section alone.
    pub(crate) pack: Option<Pack>,
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
    /// The tile set the parts name.
    set: SetName,
    /// The tiles above the shards' subtrees, ascending: every one of a
    /// global set; a regional set's, the union of what the shards declare
    /// (`shard_tiles`).
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
            return Err(BakeError::Options("a merge needs the shard files of a sharded bake".into()));
        }
        let build = build_id()?;
        allow_open_files(paths.len());
        let mut all = Vec::with_capacity(paths.len());
        for path in paths {
            all.push(open_part(path, &build)?);
        }
        // Compared with a part that has a pack where one does, so that
        // every pack's header is compared with one header.
        let first = all.iter().find(|p| p.pack.is_some()).unwrap_or(&all[0]);
        for p in all.iter().filter(|p| !std::ptr::eq(*p, first)) {
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
        let set = set_name(&meta)?;
        let coarse = match set {
            // Every tile above the roots: nothing to declare, nothing read
            // (8.4 M keys of every shard's section at the 30 m depth 11).
            SetName::Global(_) => crate::stages::tile_set::TileSet::Global { depth: meta.root_depth - 1 }
                .iter()
                .collect::<Result<Vec<TileAddress>, BakeError>>()?,
            SetName::Declared(_) => {
                let mut keys: Vec<TileKey> = shards.iter().flat_map(|s| s.section.declared.iter().copied()).collect();
                keys.sort_unstable();
                keys.dedup();
                keys.into_iter().map(TileKey::address).collect()
            }
        };
        if shards.iter().all(|s| s.pack.is_none()) {
            return Err(BakeError::ShardSet(format!(
                "none of the {} shards holds a tile: no tile down to the bake's depth meets valid data in {}",
                meta.shards, meta.dem
            )));
        }
        let parts = Parts { shards, waves, plan, waves_plan, set, coarse };
        parts.check_surfaces()?;
        Ok(parts)
    }

    /// Refuses a set whose shards declare a coarse tile the part it belongs
    /// to sampled no surface for: every coarse tile of the set meets the
    /// coverage, so its part sampled it, unless the files are of two runs.
    fn check_surfaces(&self) -> Result<(), BakeError> {
        for &tile in &self.coarse {
            let owner = &self.shards[self.plan.part_of(tile) as usize].section;
            if owner.table.binary_search_by_key(&tile.key(), |r| r.0).is_err() {
                return Err(part_error(
                    &owner.path,
                    format!(
                        "{} declare coarse tile {tile} in the set, and it is this shard's part, but this shard sampled no surface for it: the shards disagree on the ground (two runs, or two nodes); bake them again",
                        self.declarers(tile)
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn meta(&self) -> &ShardMeta {
        &self.shards[0].section.meta
    }

    /// The spec every part was written with.
    pub(crate) fn spec(&self) -> PackSpec {
        let header = self.all().next().expect("Parts::open refuses a set without a pack").1.header();
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
            "the wave files of wave:task {} are missing; bake them with planet-bake wave W --task J and give them too",
            missing.join(", ")
        )))
    }

    /// The pack of the part that holds `tile` when the bake is done: its
    /// shard at or below the root depth, else the task of its wave (`None`
    /// where that task's file was not given, or the shard holds no tile).
    pub(crate) fn holder(&self, tile: TileAddress) -> Option<&Pack> {
        let part = self.plan.part_of(tile);
        if tile.depth() >= self.plan.root_depth {
            return self.shards.get(part as usize)?.pack.as_ref();
        }
        let (wave, task) = self.wave_task_of(tile);
        self.waves[wave as usize][task as usize].as_ref()?.pack.as_ref()
    }

    /// `tile`'s index entry where the bake is done (`None`: not in the set,
    /// or in a part not given).
    pub(crate) fn entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        self.holder(tile).map_or(Ok(None), |p| p.entry(tile))
    }

    /// `tile` decoded from the part that holds it.
    pub(crate) fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        match self.holder(tile) {
            Some(p) => p.entry(tile)?.map(|e| p.decode(&e)).transpose(),
            None => Ok(None),
        }
    }

    /// Every part given that holds tiles, shards first, with its pack.
    pub(crate) fn all(&self) -> impl Iterator<Item = (&OpenPart, &Pack)> {
        self.shards.iter().chain(self.waves.iter().flatten().flatten()).filter_map(|p| Some((p, p.pack.as_ref()?)))
    }

    /// The packs of [`Parts::all`], as the layout's sources.
    pub(crate) fn sources(&self) -> Vec<&dyn TileParts> {
        self.all().map(|(_, pack)| pack as &dyn TileParts).collect()
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
    /// it). Counts from the shards' declarations, one page of each file's
    /// index: a task reads no other file's whole index (the merge walks
    /// them all).
    pub(crate) fn check_wave_files(&self) -> Result<(), BakeError> {
        let mut owned: std::collections::HashMap<(u32, u32), u64> = std::collections::HashMap::new();
        for &t in &self.coarse {
            *owned.entry(self.wave_task_of(t)).or_default() += 1;
        }
        for (part, pack) in self.all().filter(|(p, _)| p.section.meta.wave.is_some()) {
            let w = part.section.meta.wave.expect("a wave file");
            let want = owned.get(&(w.wave, w.task)).copied().unwrap_or(0);
            if pack.tile_count() != want {
                let held = pack.tile_count();
                let message = format!("it holds {held} tiles where wave {} task {} has {want}", w.wave, w.task);
                return Err(part_error(&part.path, message));
            }
            if let Some(first) = pack.keys().next() {
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
    /// ascending), hold the bake's tile set exactly once. A global set's
    /// keys are counted (distinct keys no deeper than its depth, as many
    /// as it holds, are that set). A regional set's levels above the
    /// shards must be exactly what the shards declare, and every subtree
    /// root a shard holds must have its parent among them. One walk over
    /// every part's index does it all.
    pub(crate) fn check_tile_set(&self, extra: &[TileAddress]) -> Result<(), BakeError> {
        let plan = &self.plan;
        for s in &self.shards {
            let path = &s.section.path;
            if let Some(row) = s.section.table.iter().find(|r| plan.part_of(r.0.address()) != s.section.meta.shard) {
                return Err(part_error(path, format!("coarse tile {} is not in this shard's part", row.0.address())));
            }
        }
        let name = self.set;
        let parts: Vec<(&OpenPart, &Pack)> = self.all().collect();
        let packs: Vec<&dyn TileParts> = parts.iter().map(|&(_, pack)| pack as &dyn TileParts).collect();
        let (mut count, mut deepest, mut next_coarse) = (0u64, 0u8, 0usize);
        // Which declared tiles have a root held under them, a level down.
        let mut held_below = vec![false; self.coarse.len()];
        for item in merged_keys(&packs, extra.iter().map(|t| t.key().raw()).collect()) {
            let (index, key) = item?;
            let tile = TileKey::from_raw(key).expect("the reader validated the key").address();
            if let Some((part, _)) = parts.get(index).filter(|(part, _)| !self.owns(part, tile)) {
                return Err(part_error(&part.path, format!("tile {tile} is not in this file's part of the plan")));
            }
            count += 1;
            deepest = deepest.max(tile.depth());
            if let SetName::Global(_) = name {
                continue;
            }
            // Keys ascend by depth first: the coarse levels come first.
            if tile.depth() < plan.root_depth {
                if self.coarse.get(next_coarse) != Some(&tile) {
                    return Err(self.coarse_mismatch(Some(tile), self.coarse.get(next_coarse).copied()));
                }
                next_coarse += 1;
            } else if tile.depth() == plan.root_depth {
                let Some(parent) = tile.parent().and_then(|p| self.coarse_index(p)) else {
                    let (part, _) = parts.get(index).expect("a shard holds every root");
                    let message =
                        format!("subtree root {tile} has no parent among the coarse tiles the shards declare");
                    return Err(part_error(&part.path, message));
                };
                held_below[parent] = true;
            }
        }
        if let SetName::Declared(_) = name {
            if let Some(&missing) = self.coarse.get(next_coarse) {
                return Err(self.coarse_mismatch(None, Some(missing)));
            }
            self.check_declared(held_below)?;
        }
        let whole = match name {
            SetName::Global(depth) => deepest <= depth && count == crate::cluster::plan::global_set_len(depth),
            SetName::Declared(depth) => deepest <= depth,
        };
        if !whole || plan.total_tiles.is_some_and(|total| total != count) {
            let expected = plan.total_tiles.map_or(String::new(), |t| format!(" where the bake has {t}"));
            return Err(BakeError::ShardSet(format!(
                "the parts hold {count} tiles{expected}, not the bake's tile set: a shard or wave file is from an earlier or a different run, or a wave task's file is missing; bake it again"
            )));
        }
        Ok(())
    }

    /// Where `tile` lies among the declared coarse tiles.
    fn coarse_index(&self, tile: TileAddress) -> Option<usize> {
        self.coarse.binary_search_by_key(&tile.key(), |t| t.key()).ok()
    }

    /// The shard files that declare coarse `tile`.
    fn declarers(&self, tile: TileAddress) -> String {
        let files: Vec<String> = self
            .shards
            .iter()
            .filter(|s| s.section.declared.binary_search(&tile.key()).is_ok())
            .map(|s| s.path.display().to_string())
            .collect();
        files.join(", ")
    }

    /// Checks a regional set's declared levels against what the shards
    /// hold (`held_below`: which declared tiles have a root the shards hold
    /// as a child; declared children are added here). Every declared
    /// tile's parent is declared, and a declared tile with nothing in the
    /// set under it is one whose own lattice meets data, which only the
    /// part it belongs to tests, so that part must declare it: a shard that
    /// declares beyond its own ground (a bug, or two nodes that disagree)
    /// is named here, with or without waves.
    fn check_declared(&self, mut held_below: Vec<bool>) -> Result<(), BakeError> {
        for &tile in &self.coarse {
            let Some(parent) = tile.parent() else { continue };
            let Some(at) = self.coarse_index(parent) else {
                return Err(BakeError::ShardSet(format!(
                    "coarse tile {tile}, declared by {}, has no parent among the declared tiles: the declarations are of different runs; bake those shards again",
                    self.declarers(tile)
                )));
            };
            held_below[at] = true;
        }
        for (&tile, _) in self.coarse.iter().zip(held_below).filter(|(_, below)| !below) {
            let owner = &self.shards[self.plan.part_of(tile) as usize];
            if owner.section.declared.binary_search(&tile.key()).is_err() {
                return Err(BakeError::ShardSet(format!(
                    "coarse tile {tile} is declared by {}, but nothing under it is in the set and its own part, {}, does not declare it: a shard declared beyond its ground; bake it again",
                    self.declarers(tile),
                    owner.path.display()
                )));
            }
        }
        Ok(())
    }

    /// Where the parts' coarse tiles and the declared ones part: the
    /// declared tile `expected` the parts lack (it comes before the `held`
    /// one), or the `held` one no shard declares, named with the wave task
    /// that bakes it.
    fn coarse_mismatch(&self, held: Option<TileAddress>, expected: Option<TileAddress>) -> BakeError {
        let missing = expected.filter(|e| held.is_none_or(|h| e.key() < h.key()));
        let (tile, what) = match (missing, held) {
            (Some(t), _) => (t, "which the shards declare, is in no part"),
            (None, Some(t)) => (t, "is held by a part, but no shard declares it"),
            (None, None) => unreachable!("a mismatch has a tile"),
        };
        let (wave, task) = self.wave_task_of(tile);
        BakeError::ShardSet(format!(
            "coarse tile {tile} {what}: the file of wave {wave} task {task} is from an earlier or a different run; bake it again"
        ))
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
        self.all().find_map(|(s, pack)| {
            let entry = pack.entry(tile).ok().flatten()?;
            let damaged = pack.decode(&entry).err()?;
            Some(part_error(&s.path, format!("{}: the file is damaged; bake its part again", damaged.rule())))
        })
    }
}

/// The tile set a bake's parts name (`SetShape::digest`).
#[derive(Clone, Copy, Debug)]
enum SetName {
    /// Every tile to the depth.
    Global(u8),
    /// A regional set to the depth, declared by its shards.
    Declared(u8),
}

fn set_name(meta: &ShardMeta) -> Result<SetName, BakeError> {
    use crate::cluster::plan::{declared_set_digest, global_set_digest};
    (0..=planet_terrain::geo::address::MAX_DEPTH)
        .find_map(|d| {
            let named = |digest: [u8; 32]| hex(&digest) == meta.tile_set_digest;
            if named(global_set_digest(d)) {
                Some(SetName::Global(d))
            } else {
                named(declared_set_digest(d)).then_some(SetName::Declared(d))
            }
        })
        .ok_or_else(|| {
            BakeError::ShardSet(format!(
                "the parts name a tile set this build does not know ({}): they are of another build",
                meta.tile_set_digest
            ))
        })
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
    let section = ShardSection::read(path)?;
    // A section at byte 0: a shard with no tile of its own, and no pack.
    let pack = if section.start == 0 {
        if section.meta.wave.is_some() {
            return Err(part_error(path, "a wave file holds no pack (a wave task with no tiles writes no file)"));
        }
        None
    } else {
        let pack = Pack::adopt(Box::new(FileBytes::open(path)?)).map_err(|e| e.in_file(path))?.named(path);
        let header = pack.header();
        if header.file_length != section.start {
            return Err(part_error(path, "its shard section does not start where its pack ends"));
        }
        if hex(&header.fingerprint) != section.meta.fingerprint {
            return Err(part_error(path, "its pack's fingerprint differs from its shard section's"));
        }
        if section.meta.root_depth != header.height_data_depth {
            return Err(part_error(path, "its plan's root depth is not its pack's height data depth"));
        }
        Some(pack)
    };
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
    // A part without a pack is named by its fingerprint alone, which
    // covers the spec.
    let same_header = match (&s.pack, &first.pack) {
        (Some(a), Some(b)) => {
            let h = (a.header(), b.header());
            (&h.0.body, &h.0.tier, h.0.codec, h.0.height_data_depth, h.0.colour_data_depth)
                == (&h.1.body, &h.1.tier, h.1.codec, h.1.height_data_depth, h.1.colour_data_depth)
                && (h.0.coverage, h.0.compression_level) == (h.1.coverage, h.1.compression_level)
        }
        _ => true,
    };
    if same_bake && same_header {
        return Ok(());
    }
    Err(part_error(
        &s.section.path,
        format!(
            "a part of a different bake than {} (fingerprint {} of {} shards, against {} of {}): all shards and wave files must come from the same inputs, flags and shard count (a wave file left by an earlier bake in the same directory: delete it, or bake that task again)",
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
        "shards {} of this bake are missing (given: {}); bake them with planet-bake shard I/{count} and merge again",
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

    fn void_fill(&self) -> planet_terrain::pack::codec::VoidFill {
        crate::stages::pipeline::void_fill(self.0.meta().void_value)
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
