//! One shard of a sharded bake (`planet-bake shard I/N`): the same stages as a full
//! bake (landmark audit, tiles through `PackWriter`, accuracy audit of the
//! assembled file, rename), restricted to the part of the tile set the plan
//! (`shard`) gives this shard, plus the surfaces of the coarse tiles the
//! merge will filter (`shard_file`).
//!
//! The key decision: every shard computes the whole plan itself, from the
//! same inputs and flags, instead of being told its part by a coordinator.
//! The plan is a pure function of them and of the coverage's geometry (no
//! data is read for it), so the tasks of a job array need nothing but their
//! index, and the merge can check that all shards computed the same plan
//! (in each shard's section). The tiles a shard holds it finds from its
//! own part alone (`shard_tiles`), so its fixed costs follow its share. A
//! killed shard resumes alone (`--resume`), from its own journal, as a
//! whole bake does. A part of a regional bake whose ground is all voids
//! holds no tile: its file is the shard section alone.

use planet_cli::shard::Shard;
use rayon::prelude::*;

use crate::cluster::file::{ShardMeta, append_section, hex};
use crate::cluster::plan::{SetShape, ShardPlan, WorkModel};
use crate::cluster::tiles::{ShardTiles, shard_tiles};
use crate::error::BakeError;
use crate::report::cluster::ShardReport;
use crate::report::{AccuracyReport, BakeReport, CoverageReport, LandmarkReport, MemoryReport, Report};
use crate::run::{Prepared, Run};
use crate::run::{open_writer, settle_spec};
use crate::stages::audit::accuracy_audit;
use crate::stages::pipeline::TileBake;
use crate::stages::tile_set::{DataTest, until_error};
use planet_terrain::pack::partial_path;
use planet_terrain::pack::writer::scratch_dir;
use std::path::Path;

/// What a tile costs to bake from these rasters, for the plan.
fn work_model(inputs: &crate::stages::sampling::Inputs, body: &planet_terrain::Body) -> Result<WorkModel, BakeError> {
    let radius = body.ellipsoid().max_radius();
    let mut model = WorkModel { rasters: [(0.0, false); 2], raster_count: 0 };
    for raster in std::iter::once(&inputs.dem).chain(inputs.imagery.as_ref()) {
        model.rasters[model.raster_count] = (raster.pixel_spacing_m(radius)?.finest_m(), !raster.is_projected());
        model.raster_count += 1;
    }
    Ok(model)
}

/// The writer of `shard`'s own tiles (its subtrees at and below the root
/// depth): a global set's part generated from its run of roots, a regional
/// one's listed. Returns it and how many tiles it resumed.
fn open_part_writer(
    run: &Run,
    spec: &planet_terrain::pack::PackSpec,
    tiles: &ShardTiles,
    plan: &ShardPlan,
    shard: Shard,
) -> Result<(planet_terrain::pack::PackWriter, usize), BakeError> {
    let part = shard.index as usize;
    let roots = plan.starts[part]..plan.starts.get(part + 1).copied().unwrap_or(u64::MAX);
    if let Some(mine) = tiles.own.global_subtrees(plan.root_depth, roots) {
        return open_writer(run, spec, mine);
    }
    let mut failed = None;
    let opened = open_writer(run, spec, until_error(tiles.own.iter(), &mut failed))?;
    failed.map_or(Ok(opened), Err)
}

/// Bakes part `shard` of the pack `run.options` describe into the shard
/// file at `--out`.
#[expect(clippy::too_many_lines, reason = "a shard's stages in order, mirroring bake_full; debt: as bake_full")]
pub(crate) fn bake_shard(run: &Run, shard: Shard) -> Result<BakeReport, BakeError> {
    let (options, progress) = (run.options, run.progress);
    let (prepared, digests) = run.prepare_and_digest()?;
    let (spec, depth, tile_state) = settle_spec(run, &prepared, &digests)?;
    let Prepared { inputs, data_depth, landmarks, .. } = prepared;
    progress.stage(&format!("planning {} shards to depth {depth} (the data supports depth {data_depth})", shard.count));
    let shape = if spec.coverage.is_global() {
        SetShape::Global { depth }
    } else {
        SetShape::Regional { depth, coverage: &spec.coverage }
    };
    let model = work_model(&inputs, &options.body)?;
    let plan = ShardPlan::new(&options.body, shape, spec.height_data_depth, shard.count, &model)?;
    progress.stage(&format!("shard {shard}: choosing its tiles"));
    let test = DataTest { inputs: &inputs, body: &options.body, depth };
    let tiles = shard_tiles(&test, &spec.coverage, &plan, shard.index, scratch_dir(&options.out))?;
    let mine = tiles.own_len(&plan, shard.index);
    progress.stage(&format!(
        "shard {shard}: {mine} tiles in subtrees at depth {}, the surfaces of {} coarse tiles, {} coarse tiles declared",
        plan.root_depth,
        tiles.surfaces.len(),
        tiles.declared.len()
    ));
    let baked = if mine == 0 {
        // All its ground is voids: no pack, the section alone.
        None
    } else {
        Some(bake_own_tiles(run, &spec, (&inputs, data_depth), (&tiles, &plan), shard)?)
    };
    progress.stage(&format!("sampling the surfaces of {} coarse tiles for the merge", tiles.surfaces.len()));
    let has_surface = spec.codec.has_classes() || spec.codec.has_colour();
    let surfaces: Vec<_> = tiles
        .surfaces
        .par_iter()
        .map(|&t| -> Result<_, BakeError> { Ok((t, has_surface.then(|| inputs.surface(&spec.body, t)).transpose()?)) })
        .collect::<Result<_, _>>()?;
    let meta = ShardMeta {
        shard: shard.index,
        shards: shard.count,
        fingerprint: hex(&spec.fingerprint),
        root_depth: plan.root_depth,
        starts: plan.starts.clone(),
        work: plan.work.clone(),
        total_tiles: plan.total_tiles,
        tile_set_digest: hex(&plan.tile_set_digest),
        void_value: options.void_value,
        dem: options.dem.display().to_string(),
        build: crate::cluster::file::build_id()?,
        wave: None,
    };
    let (resumed, per_depth) = match baked {
        Some(Baked { assembled, resumed, per_depth }) => {
            let file_length = assembled.summary().file_length;
            append_section(assembled.path(), file_length, &meta, &surfaces, &tiles.declared)?;
            assembled.commit()?;
            (resumed, per_depth)
        }
        None => {
            commit_section_only(&options.out, &spec.fingerprint, |at| {
                append_section(at, 0, &meta, &surfaces, &tiles.declared)
            })?;
            (0, Vec::new())
        }
    };
    let report = ShardReport {
        out: options.out.display().to_string(),
        shard: shard.index,
        shards: shard.count,
        root_depth: plan.root_depth,
        depth,
        coverage: CoverageReport::from(spec.coverage),
        bake_tiles: plan.total_tiles,
        tiles: mine as usize,
        tiles_resumed: resumed,
        coarse_surfaces: surfaces.len(),
        coarse_declared: tiles.declared.len(),
        estimated_work: plan.work[shard.index as usize],
        bake_estimated_work: plan.work.iter().sum(),
        landmarks: LandmarkReport::from(&landmarks),
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        seconds: run.started.elapsed().as_secs_f64(),
        memory: MemoryReport::new(&run.memory, Some(tile_state)),
    };
    Ok(BakeReport::new(Report::Shard(Box::new(report))))
}

/// A shard's own tiles baked, assembled and audited, not yet in place.
struct Baked {
    assembled: planet_terrain::pack::Assembled,
    resumed: usize,
    /// The accuracy audit, per depth.
    per_depth: Vec<crate::stages::audit::DepthAudit>,
}

/// Bakes `shard`'s own tiles (`tiles.0`, of `tiles.1`'s plan) from
/// `source.0`, assembles and audits them.
fn bake_own_tiles(
    run: &Run,
    spec: &planet_terrain::pack::PackSpec,
    source: (&crate::stages::sampling::Inputs, u8),
    tiles: (&ShardTiles, &ShardPlan),
    shard: Shard,
) -> Result<Baked, BakeError> {
    let (inputs, data_depth) = source;
    let (writer, resumed) = open_part_writer(run, spec, tiles.0, tiles.1, shard)?;
    TileBake {
        source: inputs,
        spec,
        data_depth,
        progress: run.progress,
        already_done: resumed,
        total: writer.tile_count() as usize,
        held_level_tiles: run.memory.held_level_tiles(),
    }
    .run(&writer, &writer)?;
    let assembled = writer.assemble()?;
    run.progress.stage(&format!("accuracy audit of {}", assembled.path().display()));
    let held = run.memory.held_level_tiles();
    let audit = accuracy_audit(inputs, assembled.path(), 0..u8::MAX, held, run.progress)?;
    let per_depth = audit.passed(assembled.path())?;
    Ok(Baked { assembled, resumed, per_depth })
}

/// Puts a section-only shard file in place at `out`, durably: `write`
/// writes it into a temporary file of its own beside `out` (two runs of
/// one task at once never share one), which is then renamed over `out`.
/// Then removes a journal an earlier run of this bake left at `out`
/// (begun before a resumed run found the part holds no tile: it cannot,
/// but a journal of the same bake is stale either way).
fn commit_section_only(
    out: &Path,
    fingerprint: &[u8; 32],
    write: impl FnOnce(&Path) -> Result<(), BakeError>,
) -> Result<(), BakeError> {
    let fail =
        |what: &str, e: std::io::Error| BakeError::Shard { path: out.to_owned(), message: format!("{what}: {e}") };
    let dir = scratch_dir(out);
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail("creating its temporary file", e))?;
    write(temporary.path())?;
    temporary.persist(out).map_err(|e| fail("putting it in place", e.error))?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| fail("syncing its directory", e))?;
    let partial = partial_path(out);
    if planet_terrain::pack::writer::partial_fingerprint(out).as_ref() == Some(fingerprint) {
        std::fs::remove_file(&partial).map_err(|e| BakeError::Shard {
            path: partial.clone(),
            message: format!("removing this stale journal of the same bake: {e}"),
        })?;
    }
    Ok(())
}
