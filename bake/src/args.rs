//! planet-bake's command line (the binary's, not the library's): one clap
//! subcommand per mode, each with the flags that mode takes and no other.
//!
//! The key decision: the mode is the subcommand, chosen once by clap, and
//! `Mode` is the enum the binary dispatches and reports on; no mode is
//! inferred from which flags are present. `planet-bake --dem ... --out ...`
//! with no subcommand is the full bake (`planet-bake bake`), as it always
//! was. Flags shared by several modes are `Args` groups flattened into
//! each (`Inputs`, `BodyArgs`, `Resources`), so a flag means the same
//! wherever it appears.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};
use planet_bake::landmarks::Landmark;
use planet_bake::{BakeOptions, MergeOptions, MergeStage, WaveOptions};
use planet_cli::shard::{Shard, ShardArg, shard_from_scheduler};
use planet_terrain::Body;

#[derive(Parser, Debug)]
#[command(
    name = "planet-bake",
    version,
    about = "Bake a GDAL raster into a .planetpack, with landmark and accuracy audits",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) mode: Option<Mode>,
    /// With no subcommand: the full bake (`planet-bake bake`).
    #[command(flatten)]
    pub(crate) bake: BakeArgs,
}

impl Cli {
    /// The mode to run: the subcommand, or the full bake without one.
    pub(crate) fn into_mode(self) -> Mode {
        self.mode.unwrap_or(Mode::Bake(self.bake))
    }
}

/// What planet-bake does.
#[derive(Subcommand, Debug)]
pub(crate) enum Mode {
    /// Bake a raster into a pack (the default: `planet-bake --dem DEM --out PACK`).
    Bake(BakeArgs),
    /// Re-bake only the tiles a box touches, in place in an existing pack, from a small DEM
    /// (or imagery, or classes, alone).
    Patch(PatchArgs),
    /// Bake part I of N of a sharded bake into a shard file (merged by `merge`).
    Shard(ShardArgs),
    /// Read the inputs whole once and write their digest manifest to --out: the first step
    /// of a cluster bake, whose shards take it with --inputs-digest. It takes the bake's own
    /// flags, so a scheduler runs the shards' command line with `digest` in front.
    Digest(BakeArgs),
    /// Bake one task of one wave of the levels above the shards into a wave file.
    Wave(WaveArgs),
    /// Merge the parts of a sharded bake (its shard files, and its wave files when the waves
    /// were baked: then the merge only lays out) into the pack, the bytes a single-process
    /// bake writes; or one stage of a merge on many nodes.
    Merge(MergeArgs),
    /// Print the tasks of each wave of a bake cut into N shards, first wave first, space
    /// separated (what a scheduler submits).
    WavePlan(WavePlanArgs),
}

/// The rasters a bake reads besides the DEM, and what it does with voids.
#[derive(Args, Debug, Clone)]
pub(crate) struct Surface {
    /// An RGB raster to colour the ground with (makes a codec 2 pack).
    #[arg(long)]
    pub(crate) imagery: Option<PathBuf>,
    /// A surface-class raster, e.g. a land/sea mask (makes codec 1, or 2 with imagery).
    #[arg(long)]
    pub(crate) classes: Option<PathBuf>,
    /// The elevation of every void (nodata) sample, e.g. 0 for the oceans of a
    /// land-only DEM; without it voids are filled from surrounding samples.
    #[arg(long, allow_hyphen_values = true, value_parser = planet_cli::args::finite)]
    pub(crate) void_value: Option<f64>,
    /// A scene file whose layers (craters, pads, ...) are baked into the ground.
    #[arg(long)]
    pub(crate) scene: Option<PathBuf>,
    /// An extra landmark LAT,LON,MIN,MAX (degrees, metres); repeatable.
    #[arg(long = "landmark", allow_hyphen_values = true)]
    pub(crate) landmarks: Vec<String>,
    /// A pack of the ground under the raster (a global pack under a regional DEM): the raster
    /// is compared with its shape at its resolution before anything is written, and refused
    /// when it reads better flipped, rotated, with axes swapped or shifted, or in feet.
    #[arg(long, value_name = "PACK")]
    pub(crate) base: Option<PathBuf>,
}

/// The body the pack is of.
#[derive(Args, Debug, Clone)]
pub(crate) struct BodyArgs {
    /// The body: earth, moon or mars.
    #[arg(long, conflicts_with = "radii")]
    pub(crate) body: Option<String>,
    /// Ellipsoid radii A,B,C in metres, for any other body.
    #[arg(long, value_parser = planet_cli::args::radii)]
    pub(crate) radii: Option<[f64; 3]>,
    /// Name for a body given by --radii.
    #[arg(long, default_value = "body")]
    pub(crate) name: String,
}

impl BodyArgs {
    fn body(&self) -> Result<Body> {
        match (&self.body, &self.radii) {
            (Some(name), None) => Ok(Body::named(name)?),
            (None, Some(r)) => Ok(Body::custom(&self.name, *r)?),
            (None, None) => bail!("give --body earth|moon|mars or --radii A,B,C"),
            (Some(_), Some(_)) => unreachable!("clap refuses both"),
        }
    }
}

/// What a run may use, and where it reports.
#[derive(Args, Debug, Clone)]
pub(crate) struct Resources {
    /// Worker threads (default: one per core; at most 4 per core).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Memory budget for the whole run, e.g. 512M, 2G (default: half the machine's memory).
    /// It sizes the source caches and bounds --depth; the pack's bytes never depend on it.
    #[arg(long, value_name = "SIZE", value_parser = planet_cli::args::bytes)]
    pub(crate) memory: Option<u64>,
    /// When another command is writing --out (a bake, a patch, an upgrade), wait for it to
    /// finish instead of refusing.
    #[arg(long)]
    pub(crate) wait: bool,
    /// Write a JSON report of the run here.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
}

/// A bake of a whole pack (or, with `shard`, of one part of it).
#[derive(Args, Debug, Clone)]
pub(crate) struct BakeArgs {
    /// The elevation raster (anything GDAL opens: GeoTIFF, netCDF, VRT, COG, ...).
    #[arg(long, required = true)]
    pub(crate) dem: Option<PathBuf>,
    /// The pack to write (a shard: the shard file; `{i}` and `{count}` become I and N).
    #[arg(long, required = true)]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) body: BodyArgs,
    #[command(flatten)]
    pub(crate) surface: Surface,
    /// Deepest depth to bake (default: the depth the data supports).
    #[arg(long)]
    pub(crate) depth: Option<u8>,
    /// Quality tier name written into the pack.
    #[arg(long, default_value = "standard")]
    pub(crate) tier: String,
    /// zstd level for tile payloads. 4 by measurement (PERFORMANCE.md, "Bake throughput"):
    /// on ETOPO5 and an 8192 x 4096 raster, 1.0-1.2% larger packs than level 9 at a
    /// quarter of its encode time.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    pub(crate) level: i8,
    /// Continue a killed bake of the same inputs and parameters.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Keep an existing --out baked from the same inputs and parameters.
    #[arg(long)]
    pub(crate) if_unchanged: bool,
    /// Take the inputs' digests from this manifest (made by `digest`), checking each file's
    /// length and a sample of its chunks instead of reading it whole. Same pack bytes.
    #[arg(long, value_name = "MANIFEST")]
    pub(crate) inputs_digest: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) resources: Resources,
}

/// A region patch of an existing pack.
#[derive(Args, Debug, Clone)]
pub(crate) struct PatchArgs {
    /// The box to re-bake: S,W,N,E degrees.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) region: String,
    /// The pack patched in place.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// The elevation raster; left out, --imagery or --classes alone are patched.
    #[arg(long, required_unless_present_any = ["imagery", "classes"])]
    pub(crate) dem: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) body: BodyArgs,
    #[command(flatten)]
    pub(crate) surface: Surface,
    /// The pack's depth, if given checked against it.
    #[arg(long)]
    pub(crate) depth: Option<u8>,
    /// The pack's tier, checked against it.
    #[arg(long, default_value = "standard")]
    pub(crate) tier: String,
    #[command(flatten)]
    pub(crate) resources: Resources,
}

/// One part of a sharded bake.
#[derive(Args, Debug, Clone)]
pub(crate) struct ShardArgs {
    /// The part: I/N (0 <= I < N), or `auto`: from a Slurm array task or a Kubernetes
    /// Indexed Job.
    #[arg(value_name = "I/N|auto", value_parser = planet_cli::shard::shard)]
    pub(crate) part: ShardArg,
    /// The shard count for `auto`: a Kubernetes Indexed Job's completions (or set
    /// PLANET_SHARD_COUNT). Under Slurm the array gives it unless --count does (a re-submitted
    /// subset, `sbatch --array=2`, bakes shard 2 of --count).
    #[arg(long, value_name = "N")]
    pub(crate) count: Option<u32>,
    #[command(flatten)]
    pub(crate) bake: BakeArgs,
}

/// The parts a wave or a merge reads, and what it writes.
#[derive(Args, Debug, Clone)]
pub(crate) struct Parts {
    /// The shard files, and the wave files of every wave before (for a wave) or of all waves
    /// (for a merge).
    #[arg(value_name = "PART", required = true, num_args = 1..)]
    pub(crate) parts: Vec<PathBuf>,
    /// The file to write (a wave task: `{j}` becomes its task).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// When another command is writing --out, wait for it to finish instead of refusing.
    #[arg(long)]
    pub(crate) wait: bool,
    /// Write a JSON report of the run here.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
}

/// A memory budget and a journal to resume, for the runs that hold them.
#[derive(Args, Debug, Clone)]
pub(crate) struct Resumable {
    /// Memory budget, e.g. 512M, 2G (default: half the machine's memory).
    #[arg(long, value_name = "SIZE", value_parser = planet_cli::args::bytes)]
    pub(crate) memory: Option<u64>,
    /// Continue a killed run's journal.
    #[arg(long)]
    pub(crate) resume: bool,
}

/// One task of one wave.
#[derive(Args, Debug, Clone)]
pub(crate) struct WaveArgs {
    /// The wave, counted from 0 (above the shards).
    #[arg(value_name = "W")]
    pub(crate) wave: u32,
    /// The task of the wave, counted from 0 (a Slurm array index, a Kubernetes completion index).
    #[arg(long, value_name = "J")]
    pub(crate) task: u32,
    #[command(flatten)]
    pub(crate) parts: Parts,
    #[command(flatten)]
    pub(crate) resumable: Resumable,
}

/// A merge, whole or one of its stages.
#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct MergeArgs {
    #[command(subcommand)]
    pub(crate) stage: Option<MergeStageArgs>,
    #[command(flatten)]
    pub(crate) whole: WholeMerge,
}

/// The whole merge in one process.
#[derive(Args, Debug, Clone)]
pub(crate) struct WholeMerge {
    #[command(flatten)]
    pub(crate) parts: Option<Parts>,
    #[command(flatten)]
    pub(crate) resumable: Resumable,
}

/// The stages of a merge on many nodes: lay out, copy (one task per range), commit.
#[derive(Subcommand, Debug, Clone)]
pub(crate) enum MergeStageArgs {
    /// Lay the pack out for M copy tasks: its index in PACK.tmp, the tasks' ranges in
    /// PACK.layout. Then `merge copy K` for each K below M, anywhere, then `merge commit`.
    Layout {
        /// The copy tasks.
        #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=65536))]
        copy_tasks: u32,
        #[command(flatten)]
        parts: Parts,
    },
    /// Copy range K of a laid-out pack (a Slurm array index, a Kubernetes completion index),
    /// read it back and mark it done. Run again alone if killed.
    Copy {
        /// The copy task.
        #[arg(value_name = "K")]
        task: u32,
        #[command(flatten)]
        parts: Parts,
    },
    /// Once every copy task is done: check the laid-out pack's every rule, record its detail
    /// law and rename it to --out.
    Commit {
        #[command(flatten)]
        parts: Parts,
    },
}

/// The waves of a bake cut into N shards.
#[derive(Args, Debug, Clone)]
pub(crate) struct WavePlanArgs {
    /// The shards.
    #[arg(value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(planet_cli::shard::MAX_SHARDS)))]
    pub(crate) shards: u32,
}

impl Surface {
    fn landmarks(&self) -> Result<Vec<Landmark>> {
        self.landmarks.iter().map(|l| Landmark::parse(l).map_err(anyhow::Error::msg)).collect()
    }
}

/// The library's options for a bake, a patch or a shard from the flags
/// they share: `region` and `shard` say which.
fn options(
    (dem, out): (Option<PathBuf>, PathBuf),
    (body, surface): (&BodyArgs, &Surface),
    (depth, tier): (Option<u8>, &str),
    resources: &Resources,
) -> Result<BakeOptions> {
    if resources.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let body = body.body()?;
    let scene = match &surface.scene {
        Some(path) => Some(planet_cli::scene::load_layer_stack(path, &body)?),
        None => None,
    };
    Ok(BakeOptions {
        // An empty path is "no DEM" (BakeOptions::has_dem): a colour- or class-only patch.
        dem: dem.unwrap_or_default(),
        imagery: surface.imagery.clone(),
        classes: surface.classes.clone(),
        body,
        out,
        depth,
        tier: tier.to_owned(),
        jobs: resources.jobs,
        resume: false,
        region: None,
        landmarks: surface.landmarks()?,
        memory: resources.memory,
        compression_level: 4,
        if_unchanged: false,
        scene,
        void_value: surface.void_value,
        shard: None,
        inputs_digest: None,
        base: surface.base.clone(),
    })
}

impl BakeArgs {
    pub(crate) fn out(&self) -> &std::path::Path {
        self.out.as_deref().expect("clap requires --out")
    }

    pub(crate) fn options(&self) -> Result<BakeOptions> {
        let out = self.out().to_owned();
        let o =
            options((self.dem.clone(), out), (&self.body, &self.surface), (self.depth, &self.tier), &self.resources)?;
        Ok(BakeOptions {
            resume: self.resume,
            compression_level: self.level,
            if_unchanged: self.if_unchanged,
            inputs_digest: self.inputs_digest.clone(),
            ..o
        })
    }
}

impl PatchArgs {
    pub(crate) fn options(&self) -> Result<BakeOptions> {
        let region = planet_bake::parse_region(&self.region).map_err(anyhow::Error::msg)?;
        if !self.out.exists() {
            bail!("patch: --out {} does not exist; a patch changes an existing pack", self.out.display());
        }
        let o = options(
            (self.dem.clone(), self.out.clone()),
            (&self.body, &self.surface),
            (self.depth, &self.tier),
            &self.resources,
        )?;
        Ok(BakeOptions { region: Some(region), ..o })
    }
}

impl ShardArgs {
    /// The part this run bakes.
    pub(crate) fn shard(&self) -> Result<Shard> {
        match self.part {
            ShardArg::Given(s) if self.count.is_some_and(|n| n != s.count) => bail!(
                "shard {s}: --count {} disagrees with the part's N; --count is for `shard auto` only",
                self.count.unwrap_or(0)
            ),
            ShardArg::Given(s) => Ok(s),
            ShardArg::Auto => {
                shard_from_scheduler(self.count, |name| std::env::var(name).ok()).map_err(anyhow::Error::msg)
            }
        }
    }

    pub(crate) fn options(&self) -> Result<BakeOptions> {
        let shard = self.shard()?;
        let out = self
            .bake
            .out()
            .to_string_lossy()
            .replace("{i}", &shard.index.to_string())
            .replace("{count}", &shard.count.to_string())
            .replace("{n}", &shard.count.to_string());
        Ok(BakeOptions { shard: Some(shard), out: out.into(), ..self.bake.options()? })
    }
}

impl MergeArgs {
    /// The merge's options: the stage run and the parts it reads.
    pub(crate) fn options(&self) -> MergeOptions {
        let (parts, stage, resumable) = match &self.stage {
            None => (
                self.whole.parts.as_ref().expect("clap requires the parts"),
                MergeStage::Whole,
                Some(&self.whole.resumable),
            ),
            Some(MergeStageArgs::Layout { copy_tasks, parts }) => {
                (parts, MergeStage::LayOut { copy_tasks: *copy_tasks }, None)
            }
            Some(MergeStageArgs::Copy { task, parts }) => (parts, MergeStage::Copy { task: *task }, None),
            Some(MergeStageArgs::Commit { parts }) => (parts, MergeStage::Commit, None),
        };
        MergeOptions {
            shards: parts.parts.clone(),
            out: parts.out.clone(),
            jobs: parts.jobs,
            memory: resumable.and_then(|r| r.memory),
            resume: resumable.is_some_and(|r| r.resume),
            stage,
        }
    }

    pub(crate) fn parts(&self) -> &Parts {
        match &self.stage {
            None => self.whole.parts.as_ref().expect("clap requires the parts"),
            Some(
                MergeStageArgs::Layout { parts, .. }
                | MergeStageArgs::Copy { parts, .. }
                | MergeStageArgs::Commit { parts },
            ) => parts,
        }
    }
}

impl WaveArgs {
    pub(crate) fn options(&self) -> WaveOptions {
        let out = self.parts.out.to_string_lossy().replace("{j}", &self.task.to_string());
        WaveOptions {
            parts: self.parts.parts.clone(),
            out: out.into(),
            wave: self.wave,
            task: self.task,
            jobs: self.parts.jobs,
            memory: self.resumable.memory,
            resume: self.resumable.resume,
        }
    }
}
