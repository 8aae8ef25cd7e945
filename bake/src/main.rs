//! planet-bake: any GDAL-readable DEM to a `.planetpack`.
//!
//! The binary is flags, progress and the report; everything else is the
//! library. Progress is a live bar on a terminal (indicatif, through
//! `planet_cli::progress`) and a sparse log otherwise, so a bake under CI or nohup writes a readable log. Errors
//! print their whole cause chain, exit 1, and leave nothing at `--out` that
//! looks like a finished pack. `PLANET_ABORT_AT` and `PLANET_ABORT_AFTER_TILES`
//! are test hooks that abort inside a named crash window (docs/planetpack.md,
//! "Crash windows").

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;
use planet_bake::landmarks::Landmark;
use planet_bake::{BakeOptions, MergeOptions, MergeStage, Progress, WaveOptions, bake, bake_wave, merge};
use planet_cli::map;
use planet_cli::progress::JobProgress;
use planet_cli::shard::{ShardArg, shard_from_scheduler};
use planet_terrain::Body;
use planet_terrain::pack::lock::{Contention, Sharing, WriterLock};

#[derive(Parser, Debug)]
#[command(
    name = "planet-bake",
    version,
    about = "Bake a GDAL raster into a .planetpack, with landmark and accuracy audits"
)]
struct Cli {
    /// The elevation raster (anything GDAL opens: GeoTIFF, netCDF, VRT, COG, ...).
    /// A --region patch may leave it out to patch --imagery or --classes alone.
    #[arg(long, required_unless_present_any = ["imagery", "classes", "merge", "wave_plan"])]
    dem: Option<PathBuf>,
    /// An RGB raster to colour the ground with (makes a codec 2 pack).
    #[arg(long)]
    imagery: Option<PathBuf>,
    /// A surface-class raster, e.g. a land/sea mask (makes codec 1, or 2 with imagery).
    #[arg(long)]
    classes: Option<PathBuf>,
    /// The body: earth, moon or mars.
    #[arg(long, conflicts_with = "radii")]
    body: Option<String>,
    /// Ellipsoid radii A,B,C in metres, for any other body.
    #[arg(long, value_parser = planet_cli::args::radii)]
    radii: Option<[f64; 3]>,
    /// Name for a body given by --radii.
    #[arg(long, default_value = "body")]
    name: String,
    /// Output pack (or shard file, wave file, digest manifest).
    #[arg(long, required_unless_present = "wave_plan")]
    out: Option<PathBuf>,
    /// Deepest depth to bake (default: the depth the data supports).
    #[arg(long)]
    depth: Option<u8>,
    /// Quality tier name written into the pack.
    #[arg(long, default_value = "standard")]
    tier: String,
    /// Worker threads (default: one per core; at most 4 per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Continue a killed bake of the same inputs and parameters.
    #[arg(long)]
    resume: bool,
    /// Re-bake only the tiles this box touches, in place in an existing --out: S,W,N,E degrees.
    #[arg(long, allow_hyphen_values = true)]
    region: Option<String>,
    /// Write a JSON report of the bake here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// An extra landmark LAT,LON,MIN,MAX (degrees, metres); repeatable.
    #[arg(long = "landmark", allow_hyphen_values = true)]
    landmarks: Vec<String>,
    /// Memory budget for the whole bake, e.g. 512M, 2G (default: half the machine's memory).
    /// It sizes the source caches and bounds --depth; the pack's bytes never depend on it.
    #[arg(long, value_name = "SIZE", value_parser = planet_cli::args::bytes)]
    memory: Option<u64>,
    /// The elevation of every void (nodata) sample, e.g. 0 for the oceans of a
    /// land-only DEM; without it voids are filled from surrounding samples.
    #[arg(long, allow_hyphen_values = true, value_parser = planet_cli::args::finite)]
    void_value: Option<f64>,
    /// A scene file whose layers (craters, pads, ...) are baked into the ground.
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Keep an existing --out baked from the same inputs and parameters.
    #[arg(long)]
    if_unchanged: bool,
    /// When another command is writing --out (a bake, a patch, an
    /// upgrade), wait for it to finish instead of refusing.
    #[arg(long)]
    wait: bool,
    /// Bake only part I of N of a sharded bake (0 <= I < N) into a shard file at --out,
    /// or `auto`: the part from a Slurm array task or a Kubernetes Indexed Job.
    /// `{i}` and `{count}` in --out become I and N (so does n in braces). Merge the shards
    /// with --merge.
    #[arg(long, value_name = "I/N|auto", value_parser = planet_cli::shard::shard)]
    shard: Option<planet_cli::shard::ShardArg>,
    /// The shard count for `--shard auto` under a Kubernetes Indexed Job (its completions);
    /// or set PLANET_SHARD_COUNT. Under Slurm the array gives it.
    #[arg(long, value_name = "N", requires = "shard")]
    shard_count: Option<u32>,
    /// Merge these parts of one sharded bake (its shard files, and its wave files when the
    /// waves were baked: then the merge only lays out) into the pack at --out, the bytes a
    /// single-process bake writes. Reads no raster: give only --out (and --jobs, --memory,
    /// --resume). With --wave, the parts a wave task reads.
    #[arg(long, value_name = "PART", num_args = 1.., conflicts_with_all = ["dem", "imagery", "classes", "shard", "shard_count", "region", "scene", "body", "radii", "name", "depth", "tier", "level", "void_value", "landmarks", "if_unchanged", "inputs_digest", "digest_inputs", "base"])]
    merge: Vec<PathBuf>,
    /// With --merge: bake wave W of the levels above the shards (task --task J of it) into a
    /// wave file at --out instead of merging, from the shard files and every earlier wave's
    /// files given to --merge. The merge then lays out shards and waves without filtering.
    #[arg(long, value_name = "W", requires_all = ["merge", "task"])]
    wave: Option<u32>,
    /// The task of --wave to bake, counted from 0 (a Slurm array index, a Kubernetes
    /// completion index). `{j}` in --out becomes it.
    #[arg(long, value_name = "J", requires = "wave")]
    task: Option<u32>,
    /// With --merge: lay the pack out for M copy tasks instead of merging whole (the first
    /// stage of a merge on many nodes): its index in PACK.tmp, the tasks' ranges in PACK.layout.
    /// Then --copy K for each K below M, anywhere, then --commit.
    #[arg(long, value_name = "M", requires = "merge", conflicts_with_all = ["wave", "copy", "commit", "resume", "memory"], value_parser = clap::value_parser!(u32).range(1..=65536))]
    copy_tasks: Option<u32>,
    /// With --merge: copy range K of a pack laid out with --copy-tasks (a Slurm array index, a
    /// Kubernetes completion index), read it back and mark it done. Run again alone if killed.
    #[arg(long, value_name = "K", requires = "merge", conflicts_with_all = ["wave", "commit", "resume", "memory"])]
    copy: Option<u32>,
    /// With --merge: once every copy task is done, check the laid-out pack's every rule, record
    /// its detail law and rename it to --out.
    #[arg(long, requires = "merge", conflicts_with_all = ["wave", "resume", "memory"])]
    commit: bool,
    /// Print the tasks of each wave of a bake cut into N shards, first wave first, space
    /// separated (what a scheduler submits), and exit.
    #[arg(long, value_name = "N", exclusive = true, value_parser = clap::value_parser!(u32).range(1..=i64::from(planet_cli::shard::MAX_SHARDS)))]
    wave_plan: Option<u32>,
    /// Read the inputs whole once and write their digest manifest to --out instead of baking:
    /// the first step of a cluster bake, whose shards take it with --inputs-digest.
    #[arg(long, conflicts_with_all = ["shard", "merge", "region", "resume", "inputs_digest"])]
    digest_inputs: bool,
    /// Take the inputs' digests from this manifest (made by --digest-inputs), checking each
    /// file's length and a sample of its chunks instead of reading it whole. Same pack bytes.
    #[arg(long, value_name = "MANIFEST")]
    inputs_digest: Option<PathBuf>,
    /// A pack of the ground under the raster (a global pack under a regional DEM): the raster
    /// is compared with its shape at its resolution before anything is written, and refused
    /// when it reads better flipped, rotated, with axes swapped or shifted, or in feet.
    #[arg(long, value_name = "PACK")]
    base: Option<PathBuf>,
    /// zstd level for tile payloads. 4 by measurement (PERFORMANCE.md, "Bake throughput"):
    /// on ETOPO5 and an 8192 x 4096 raster, 1.0-1.2% larger packs than level 9 at a
    /// quarter of its encode time.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true)]
    level: i8,
}

/// The bake's progress through planet-cli's (a bar on a terminal, log
/// lines otherwise).
struct Reporter(JobProgress);

impl Progress for Reporter {
    fn stage(&self, message: &str) {
        self.0.stage(message);
    }

    fn tiles(&self, done: usize, total: usize) {
        self.0.update(done, total);
    }
}

/// `--out`, which clap requires of every run but `--wave-plan`'s.
fn out(cli: &Cli) -> &Path {
    cli.out.as_deref().expect("clap requires --out unless --wave-plan")
}

fn options(cli: &Cli) -> Result<BakeOptions> {
    let body = match (&cli.body, &cli.radii) {
        (Some(name), None) => Body::named(name)?,
        (None, Some(r)) => Body::custom(&cli.name, *r)?,
        (None, None) => bail!("give --body earth|moon|mars or --radii A,B,C"),
        (Some(_), Some(_)) => unreachable!("clap refuses both"),
    };
    let landmarks =
        cli.landmarks.iter().map(|l| Landmark::parse(l).map_err(anyhow::Error::msg)).collect::<Result<_>>()?;
    let region = cli.region.as_deref().map(planet_bake::parse_region).transpose().map_err(anyhow::Error::msg)?;
    if cli.dem.is_none() && region.is_none() {
        bail!("--dem is required unless --region patches --imagery or --classes alone");
    }
    if region.is_some() && !out(cli).exists() {
        bail!("--region patches an existing pack, and {} does not exist", out(cli).display());
    }
    if region.is_some() && cli.resume {
        bail!("--region and --resume do not combine: a patch is re-run, not resumed");
    }
    if cli.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let shard = match cli.shard {
        None => None,
        Some(ShardArg::Given(s)) => Some(s),
        Some(ShardArg::Auto) => {
            Some(shard_from_scheduler(cli.shard_count, |name| std::env::var(name).ok()).map_err(anyhow::Error::msg)?)
        }
    };
    let out = match shard {
        Some(s) => PathBuf::from(
            out(cli)
                .to_string_lossy()
                .replace("{i}", &s.index.to_string())
                .replace("{count}", &s.count.to_string())
                .replace("{n}", &s.count.to_string()),
        ),
        None => out(cli).to_owned(),
    };
    let scene = match &cli.scene {
        Some(path) => Some(planet_cli::scene::load_layer_stack(path, &body)?),
        None => None,
    };
    Ok(BakeOptions {
        // An empty path is "no DEM" (BakeOptions::has_dem): a colour- or class-only patch.
        dem: cli.dem.clone().unwrap_or_default(),
        imagery: cli.imagery.clone(),
        classes: cli.classes.clone(),
        body,
        out,
        depth: cli.depth,
        tier: cli.tier.clone(),
        jobs: cli.jobs,
        resume: cli.resume,
        region,
        landmarks,
        memory: cli.memory,
        compression_level: cli.level,
        if_unchanged: cli.if_unchanged,
        scene,
        void_value: cli.void_value,
        shard,
        inputs_digest: cli.inputs_digest.clone(),
        base: cli.base.clone(),
    })
}

fn run(cli: Cli) -> Result<()> {
    let reporter = Reporter(JobProgress::new("tiles"));
    // The report is written last: a bad path found then would fail a bake
    // whose pack is already in place.
    if let Some(problem) = cli.report.as_deref().and_then(|p| planet_cli::fs::unwritable_destination("--report", p)) {
        anyhow::bail!(problem);
    }
    if let Some(shards) = cli.wave_plan {
        let tasks: Vec<String> = planet_bake::wave_tasks(shards).iter().map(u32::to_string).collect();
        println!("{}", tasks.join(" "));
        return Ok(());
    }
    if let (Some(wave), Some(task)) = (cli.wave, cli.task) {
        let out = PathBuf::from(out(&cli).to_string_lossy().replace("{j}", &task.to_string()));
        check_paths(&cli, &out)?;
        let _lock = writer_lock(&cli, &out, &reporter)?;
        return run_wave(&cli, WaveOptions { wave, task, out, ..merge_options(&cli).into() }, &reporter);
    }
    if !cli.merge.is_empty() {
        check_paths(&cli, out(&cli))?;
        // Copy tasks write disjoint ranges of one file at once: they share it.
        let sharing = if cli.copy.is_some() { Sharing::Shared } else { Sharing::Exclusive };
        let _lock = writer_lock_as(&cli, out(&cli), sharing, &reporter)?;
        return run_merge(&cli, &reporter);
    }
    let options = options(&cli)?;
    check_paths(&cli, &options.out)?;
    // Held from here to the end: planning, baking or patching, the audit,
    // the commit and the report (#50: two patches at once lost the first).
    let _lock = (!cli.digest_inputs).then(|| writer_lock(&cli, &options.out, &reporter)).transpose()?;
    if cli.digest_inputs {
        reporter.stage("reading every input to digest it");
        let files = planet_bake::write_inputs_manifest(&options, &options.out)?;
        reporter.stage(&format!(
            "done: {} lists {files} files; give it to each shard with --inputs-digest",
            options.out.display()
        ));
        return Ok(());
    }
    let mut report = bake(&options, &reporter)?;
    if options.shard.is_some() {
        if let Some(path) = &cli.report {
            planet_cli::fs::write_json(path, &report).context("writing the report")?;
        }
        reporter.stage(&format!(
            "done: shard {} ({} tiles); accuracy audit passed; merge the shards with planet-bake --merge",
            options.out.display(),
            report.tiles()
        ));
        return Ok(());
    }
    if let Some(path) = &cli.report {
        // The picture first: a report never names a file that is not there.
        let picture = path.with_extension("provenance.png");
        provenance_picture(&options.out, &picture)
            .with_context(|| format!("drawing the report's provenance picture {}", picture.display()))?;
        report.set_provenance_png(&picture);
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let rate = report.output_samples_per_second().map(|r| format!(", {:.2} M samples/s", r / 1e6)).unwrap_or_default();
    let audit = match report.mode() {
        "up to date" => "up to date; its accuracy audit passed before it was put in place",
        "patch already applied" => "this patch was applied already; nothing changed",
        _ => "accuracy audit passed",
    };
    if let Some(line) = report.voids_line() {
        reporter.stage(&line);
    }
    reporter.stage(&format!(
        "done: {} ({} tiles{rate}); {audit}{}",
        options.out.display(),
        report.tiles(),
        cli.report.as_ref().map(|p| format!("; report in {}", p.display())).unwrap_or_default()
    ));
    Ok(())
}

/// The writers' lock of `out` (`planet_terrain::pack::lock`), held while
/// this command writes it: refused while another holds it, or waited for
/// with `--wait`.
fn writer_lock(cli: &Cli, out: &Path, reporter: &Reporter) -> Result<WriterLock> {
    writer_lock_as(cli, out, Sharing::Exclusive, reporter)
}

fn writer_lock_as(cli: &Cli, out: &Path, sharing: Sharing, reporter: &Reporter) -> Result<WriterLock> {
    let contention = if cli.wait { Contention::Wait } else { Contention::Refuse };
    let waiting = |holder: &str| reporter.stage(&format!("waiting for {holder}, which is writing {}", out.display()));
    Ok(WriterLock::acquire_as(out, "planet-bake", sharing, contention, waiting)?)
}

/// Refuses, before any work, a bake whose outputs (`out`: the pack, shard
/// or digest manifest; the report and its picture) name one of its inputs
/// or each other. A patch's --out is read and written in place: that is
/// what a patch is.
fn check_paths(cli: &Cli, out: &Path) -> Result<()> {
    use planet_cli::paths::{named, pack_output, raster};
    let rasters = [("--dem", &cli.dem), ("--imagery", &cli.imagery), ("--classes", &cli.classes)];
    let files = [("--scene", &cli.scene), ("--inputs-digest", &cli.inputs_digest), ("--base", &cli.base)];
    let mut inputs: Vec<_> = rasters.iter().filter_map(|(flag, p)| p.as_deref().map(|p| raster(flag, p))).collect();
    inputs.extend(files.iter().filter_map(|(flag, p)| p.as_deref().map(|p| named(flag, p))));
    inputs.extend(cli.merge.iter().map(|shard| named("--merge", shard)));
    let picture = cli.report.as_ref().map(|r| r.with_extension("provenance.png"));
    let mut outputs = vec![pack_output("--out", out)];
    outputs.extend(cli.report.as_deref().map(|r| named("--report", r)));
    outputs.extend(picture.as_deref().map(|p| named("--report's provenance picture", p)));
    planet_cli::paths::check_paths(&inputs, &outputs).map_err(anyhow::Error::msg)
}

fn merge_options(cli: &Cli) -> MergeOptions {
    MergeOptions {
        shards: cli.merge.clone(),
        out: out(cli).to_owned(),
        jobs: cli.jobs,
        memory: cli.memory,
        resume: cli.resume,
        stage: match (cli.copy_tasks, cli.copy, cli.commit) {
            (Some(copy_tasks), _, _) => MergeStage::LayOut { copy_tasks },
            (_, Some(task), _) => MergeStage::Copy { task },
            (_, _, true) => MergeStage::Commit,
            _ => MergeStage::Whole,
        },
    }
}

/// `--wave W --task J --merge PART... --out WAVE_FILE`.
fn run_wave(cli: &Cli, options: WaveOptions, reporter: &Reporter) -> Result<()> {
    let report = bake_wave(&options, reporter)?;
    if let Some(path) = &cli.report {
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let (wave, task) = (options.wave, options.task);
    reporter.stage(&match report.tiles() {
        0 => format!("done: wave {wave} task {task} has no tiles to bake; no file written"),
        n => format!("done: wave {wave} task {task}: {} ({n} tiles); accuracy audit passed", options.out.display()),
    });
    Ok(())
}

/// `--merge PART... --out PACK`.
fn run_merge(cli: &Cli, reporter: &Reporter) -> Result<()> {
    let options = merge_options(cli);
    let report = merge(&options, reporter)?;
    if let Some(path) = &cli.report {
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let out = options.out.display();
    reporter.stage(&match options.stage {
        MergeStage::LayOut { copy_tasks } => format!(
            "done: {out} laid out ({} tiles) for {copy_tasks} copy tasks; run --copy K for K in 0..{copy_tasks}, then --commit",
            report.tiles()
        ),
        MergeStage::Copy { task } => format!("done: copy task {task} of {out} ({} tiles); read back", report.tiles()),
        _ => format!("done: {out} ({} tiles, {} filtered here); verified", report.tiles(), report.tiles_filtered().unwrap_or(0)),
    });
    Ok(())
}

/// Widest side of the report's picture, pixels: enough to see a regional
/// box's border, small enough to draw in well under a second.
const REPORT_PICTURE_PX: u32 = 720;

/// The pack's measured, resampled and invented ground as `planet-pack map
/// --what provenance` draws it (see `map::overview`).
fn provenance_picture(pack: &Path, out: &Path) -> Result<()> {
    let packs = planet_cli::stack::PackOpener::default().open_packs(&[pack.to_owned()])?;
    let coverage = packs[0].source.pack().header().coverage;
    let spec = map::overview(map::What::Provenance, &coverage, REPORT_PICTURE_PX);
    planet_cli::picture::write_png(out, &map::render(&packs, &spec)?)
}

fn main() -> ExitCode {
    planet_cli::exit_code(run(Cli::parse()))
}

/// Every flag and argument `planet-bake --help` lists says what it does.
#[cfg(test)]
#[test]
fn every_argument_says_what_it_does() {
    planet_cli::args::assert_every_argument_described(&<Cli as clap::CommandFactory>::command());
}
