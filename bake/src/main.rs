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
use planet_bake::{BakeOptions, MergeOptions, MergeStage, Outcome, Progress, WaveOptions, bake, bake_wave, merge};
use planet_cli::map;
use planet_cli::progress::JobProgress;
use planet_terrain::pack::lock::{Contention, Sharing, WriterLock};

mod args;
use args::{BakeArgs, Cli, Mode, Resources, Surface};

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

fn run(cli: Cli) -> Result<()> {
    let reporter = Reporter(JobProgress::new("tiles"));
    let mode = cli.into_mode();
    // The report is written last: a bad path found then would fail a run
    // whose output is already in place.
    if let Some(problem) = report_path(&mode).and_then(|p| planet_cli::fs::unwritable_destination("--report", p)) {
        bail!(problem);
    }
    match &mode {
        Mode::Bake(args) => {
            let options = args.options()?;
            run_bake(&options, args.dem.as_deref(), &args.surface, &args.resources, &reporter)
        }
        Mode::Shard(args) => {
            let options = args.options()?;
            run_bake(&options, args.bake.dem.as_deref(), &args.bake.surface, &args.bake.resources, &reporter)
        }
        Mode::Patch(args) => {
            let options = args.options()?;
            run_bake(&options, args.dem.as_deref(), &args.surface, &args.resources, &reporter)
        }
        Mode::Digest(args) => run_digest(args, &reporter),
        Mode::Wave(args) => {
            let options = args.options();
            check_paths(&Inputs::parts(&args.parts.parts), &options.out, args.parts.report.as_deref())?;
            let _lock = writer_lock(&options.out, Sharing::Exclusive, args.parts.wait, &reporter)?;
            run_wave(&options, args.parts.report.as_deref(), &reporter)
        }
        Mode::Merge(args) => {
            let (options, parts) = (args.options(), args.parts());
            check_paths(&Inputs::parts(&parts.parts), &options.out, parts.report.as_deref())?;
            // Copy tasks write disjoint ranges of one file at once: they share it.
            let sharing =
                if matches!(options.stage, MergeStage::Copy { .. }) { Sharing::Shared } else { Sharing::Exclusive };
            let _lock = writer_lock(&options.out, sharing, parts.wait, &reporter)?;
            run_merge(&options, parts.report.as_deref(), &reporter)
        }
        Mode::WavePlan(args) => {
            let tasks: Vec<String> = planet_bake::wave_tasks(args.shards).iter().map(u32::to_string).collect();
            println!("{}", tasks.join(" "));
            Ok(())
        }
    }
}

/// Where the run writes its JSON report, if anywhere.
fn report_path(mode: &Mode) -> Option<&Path> {
    match mode {
        Mode::Bake(a) => a.resources.report.as_deref(),
        Mode::Shard(a) => a.bake.resources.report.as_deref(),
        Mode::Patch(a) => a.resources.report.as_deref(),
        Mode::Wave(a) => a.parts.report.as_deref(),
        Mode::Merge(a) => a.parts().report.as_deref(),
        Mode::Digest(_) | Mode::WavePlan(_) => None,
    }
}

/// A bake, a shard or a patch (`options` says which): the paths checked,
/// the writers' lock held from here to the end (planning, baking or
/// patching, the audit, the commit and the report: #50, two patches at
/// once lost the first), then the run and its summary line.
fn run_bake(
    options: &BakeOptions,
    dem: Option<&Path>,
    surface: &Surface,
    resources: &Resources,
    reporter: &Reporter,
) -> Result<()> {
    let inputs = Inputs::of_bake(dem, surface, options.inputs_digest.as_deref());
    check_paths(&inputs, &options.out, resources.report.as_deref())?;
    let _lock = writer_lock(&options.out, Sharing::Exclusive, resources.wait, reporter)?;
    let mut report = bake(options, reporter)?;
    let report_path = resources.report.as_deref();
    if let Some(shard) = options.shard {
        if let Some(path) = report_path {
            planet_cli::fs::write_json(path, &report).context("writing the report")?;
        }
        reporter.stage(&format!(
            "done: shard {shard} in {} ({} tiles); accuracy audit passed; merge the shards with planet-bake merge",
            options.out.display(),
            report.tiles()
        ));
        return Ok(());
    }
    if let Some(path) = report_path {
        // The picture first: a report never names a file that is not there.
        let picture = path.with_extension("provenance.png");
        provenance_picture(&options.out, &picture)
            .with_context(|| format!("drawing the report's provenance picture {}", picture.display()))?;
        report.set_provenance_png(&picture);
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let rate = report.output_samples_per_second().map(|r| format!(", {:.2} M samples/s", r / 1e6)).unwrap_or_default();
    let audit = match report.outcome() {
        Outcome::UpToDate => "up to date; its accuracy audit passed before it was put in place",
        Outcome::PatchAlreadyApplied => "this patch was applied already; nothing changed",
        _ => "accuracy audit passed",
    };
    if let Some(line) = report.voids_line() {
        reporter.stage(&line);
    }
    reporter.stage(&format!(
        "done: {} ({} tiles{rate}); {audit}{}",
        options.out.display(),
        report.tiles(),
        report_path.map(|p| format!("; report in {}", p.display())).unwrap_or_default()
    ));
    Ok(())
}

/// `digest --dem ... --out MANIFEST` (and the bake's other flags).
fn run_digest(args: &BakeArgs, reporter: &Reporter) -> Result<()> {
    let (dem, out) = (args.dem.as_deref().expect("clap requires --dem"), args.out());
    let inputs = Inputs::of_bake(Some(dem), &args.surface, None);
    check_paths(&inputs, out, None)?;
    reporter.stage("reading every input to digest it");
    let (imagery, classes) = (args.surface.imagery.as_deref(), args.surface.classes.as_deref());
    let files = planet_bake::write_inputs_manifest(dem, imagery, classes, out)?;
    reporter.stage(&format!("done: {} lists {files} files; give it to each shard with --inputs-digest", out.display()));
    Ok(())
}

/// The writers' lock of `out` (`planet_terrain::pack::lock`), held while
/// this command writes it: refused while another holds it, or waited for
/// with `--wait`.
fn writer_lock(out: &Path, sharing: Sharing, wait: bool, reporter: &Reporter) -> Result<WriterLock> {
    let contention = if wait { Contention::Wait } else { Contention::Refuse };
    let waiting = |holder: &str| reporter.stage(&format!("waiting for {holder}, which is writing {}", out.display()));
    Ok(WriterLock::acquire_as(out, "planet-bake", sharing, contention, waiting)?)
}

/// The files a run reads, by the flag that names each: what its outputs
/// must not name.
struct Inputs<'a> {
    rasters: Vec<(&'static str, &'a Path)>,
    files: Vec<(&'static str, &'a Path)>,
}

impl<'a> Inputs<'a> {
    fn of_bake(dem: Option<&'a Path>, surface: &'a Surface, digest: Option<&'a Path>) -> Inputs<'a> {
        let rasters =
            [("--dem", dem), ("--imagery", surface.imagery.as_deref()), ("--classes", surface.classes.as_deref())];
        let files =
            [("--scene", surface.scene.as_deref()), ("--inputs-digest", digest), ("--base", surface.base.as_deref())];
        Inputs {
            rasters: rasters.into_iter().filter_map(|(f, p)| Some((f, p?))).collect(),
            files: files.into_iter().filter_map(|(f, p)| Some((f, p?))).collect(),
        }
    }

    fn parts(parts: &'a [PathBuf]) -> Inputs<'a> {
        Inputs { rasters: Vec::new(), files: parts.iter().map(|p| ("PART", p.as_path())).collect() }
    }
}

/// Refuses, before any work, a run whose outputs (`out`: the pack, shard,
/// wave file or digest manifest; the report and its picture) name one of
/// its inputs or each other. A patch's --out is read and written in place:
/// that is what a patch is.
fn check_paths(inputs: &Inputs, out: &Path, report: Option<&Path>) -> Result<()> {
    use planet_cli::paths::{named, pack_output, raster};
    let mut checked: Vec<_> = inputs.rasters.iter().map(|&(flag, p)| raster(flag, p)).collect();
    checked.extend(inputs.files.iter().map(|&(flag, p)| named(flag, p)));
    let picture = report.map(|r| r.with_extension("provenance.png"));
    let mut outputs = vec![pack_output("--out", out)];
    outputs.extend(report.map(|r| named("--report", r)));
    outputs.extend(picture.as_deref().map(|p| named("--report's provenance picture", p)));
    planet_cli::paths::check_paths(&checked, &outputs).map_err(anyhow::Error::msg)
}

/// `wave W --task J PART... --out WAVE_FILE`.
fn run_wave(options: &WaveOptions, report_path: Option<&Path>, reporter: &Reporter) -> Result<()> {
    let report = bake_wave(options, reporter)?;
    if let Some(path) = report_path {
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let (wave, task) = (options.wave, options.task);
    reporter.stage(&match report.tiles() {
        0 => format!("done: wave {wave} task {task} has no tiles to bake; no file written"),
        n => format!("done: wave {wave} task {task}: {} ({n} tiles); accuracy audit passed", options.out.display()),
    });
    Ok(())
}

/// `merge [layout --copy-tasks M | copy K | commit] PART... --out PACK`.
fn run_merge(options: &MergeOptions, report_path: Option<&Path>, reporter: &Reporter) -> Result<()> {
    let report = merge(options, reporter)?;
    if let Some(path) = report_path {
        planet_cli::fs::write_json(path, &report).context("writing the report")?;
    }
    let out = options.out.display();
    reporter.stage(&match options.stage {
        MergeStage::LayOut { copy_tasks } => format!(
            "done: {out} laid out ({} tiles) for {copy_tasks} copy tasks; run `merge copy K` for K in 0..{copy_tasks}, then `merge commit`",
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

/// Every mode parses as its documented command line, and the plain form is
/// the full bake.
#[cfg(test)]
#[test]
fn each_mode_is_its_own_subcommand() {
    let parse = |line: &str| Cli::try_parse_from(line.split_whitespace()).map(Cli::into_mode);
    assert!(matches!(parse("planet-bake --dem d.tif --out p.planetpack --body earth"), Ok(Mode::Bake(_))));
    assert!(matches!(parse("planet-bake bake --dem d.tif --out p.planetpack --body earth"), Ok(Mode::Bake(_))));
    assert!(matches!(parse("planet-bake shard 1/4 --dem d.tif --out s --body earth"), Ok(Mode::Shard(_))));
    assert!(matches!(
        parse("planet-bake patch --region 1,2,3,4 --out p --classes c.tif --body earth"),
        Ok(Mode::Patch(_))
    ));
    assert!(matches!(parse("planet-bake digest --dem d.tif --out m.json --body earth"), Ok(Mode::Digest(_))));
    assert!(matches!(parse("planet-bake wave 0 --task 1 a b --out w"), Ok(Mode::Wave(_))));
    assert!(matches!(parse("planet-bake merge a b --out p"), Ok(Mode::Merge(_))));
    let Ok(Mode::Merge(m)) = parse("planet-bake merge layout --copy-tasks 3 a b --out p") else { panic!("layout") };
    assert_eq!(m.options().stage, MergeStage::LayOut { copy_tasks: 3 });
    let Ok(Mode::Merge(m)) = parse("planet-bake merge copy 2 a b --out p") else { panic!("copy") };
    assert_eq!((m.options().stage, m.options().shards.len()), (MergeStage::Copy { task: 2 }, 2));
    assert!(matches!(parse("planet-bake wave-plan 16"), Ok(Mode::WavePlan(_))));
    // A mode's flags are its own: a patch has no --resume, a merge no --dem.
    assert!(parse("planet-bake patch --region 1,2,3,4 --out p --dem d.tif --body earth --resume").is_err());
    assert!(parse("planet-bake merge a b --out p --dem d.tif").is_err());
    assert!(parse("planet-bake merge copy 2 a b --out p --resume").is_err());
    assert!(parse("planet-bake --out p.planetpack --body earth").is_err(), "the full bake needs --dem");
}

/// Every flag and argument `planet-bake --help` lists says what it does.
#[cfg(test)]
#[test]
fn every_argument_says_what_it_does() {
    planet_cli::args::assert_every_argument_described(&<Cli as clap::CommandFactory>::command());
}
