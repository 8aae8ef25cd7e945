//! One shard of a sharded bake (`--shard I/N`): the same stages as a full
//! bake (landmark audit, tiles through `PackWriter`, accuracy audit of the
//! assembled file, rename), restricted to the part of the tile set the plan
//! (`shard`) gives this shard, plus the surfaces of the coarse tiles the
//! merge will filter (`shard_file`).
//!
//! The key decision: every shard computes the whole tile set and the whole
//! plan itself, from the same inputs and flags, instead of being told its
//! part by a coordinator. The plan is a pure function of them, so the tasks
//! of a job array need nothing but their index, and the merge can check
//! that all shards computed the same plan and the same tile set (digests in
//! each shard's section). A killed shard resumes alone (`--resume`), from
//! its own journal, as a whole bake does.

use planet_cli::shard::Shard;
use rayon::prelude::*;
use serde::Serialize;

use crate::audit::accuracy_audit;
use crate::bake::{Prepared, Run};
use crate::error::BakeError;
use crate::full::{open_writer, settle_spec};
use crate::pipeline::TileBake;
use crate::report::{AccuracyReport, BakeReport, CoverageReport, LandmarkReport, MemoryReport, Report};
use crate::shard::{ShardPlan, WorkModel};
use crate::shard_file::{ShardMeta, append_section, hex};
use crate::tile_set::{tile_set, until_error};
use planet_terrain::pack::writer::scratch_dir;

/// What a shard did, for the report.
#[derive(Debug, Serialize)]
pub(crate) struct ShardReport {
    pub(crate) out: String,
    pub(crate) shard: u32,
    pub(crate) shards: u32,
    pub(crate) root_depth: u8,
    pub(crate) depth: u8,
    pub(crate) coverage: CoverageReport,
    /// Tiles of the whole bake, of this shard, and resumed from its journal.
    pub(crate) bake_tiles: u64,
    pub(crate) tiles: usize,
    pub(crate) tiles_resumed: usize,
    /// Coarse tiles whose surface this shard sampled for the merge.
    pub(crate) coarse_surfaces: usize,
    /// This shard's estimated work, and the whole bake's (`shard` module).
    pub(crate) estimated_work: u64,
    pub(crate) bake_estimated_work: u64,
    pub(crate) landmarks: LandmarkReport,
    pub(crate) accuracy_audit: AccuracyReport,
    pub(crate) seconds: f64,
    pub(crate) memory: MemoryReport,
}

/// What a tile costs to bake from these rasters, for the plan.
fn work_model(inputs: &crate::sampling::Inputs, body: &planet_terrain::Body) -> Result<WorkModel, BakeError> {
    let radius = body.ellipsoid().max_radius();
    let mut model = WorkModel { rasters: [(0.0, false); 2], raster_count: 0 };
    for raster in std::iter::once(&inputs.dem).chain(inputs.imagery.as_ref()) {
        model.rasters[model.raster_count] = (raster.pixel_spacing_m(radius)?.finest_m(), !raster.is_projected());
        model.raster_count += 1;
    }
    Ok(model)
}

/// The writer of `shard`'s own tiles (its subtrees at and below the root
/// depth): a global set's part generated from its run of roots, a listed
/// set walked. Returns it and how many tiles it resumed.
fn open_part_writer(
    run: &Run,
    spec: &planet_terrain::pack::PackSpec,
    tiles: &crate::tile_set::TileSet,
    plan: &ShardPlan,
    shard: Shard,
) -> Result<(planet_terrain::pack::PackWriter, usize), BakeError> {
    let part = shard.index as usize;
    let roots = plan.starts[part]..plan.starts.get(part + 1).copied().unwrap_or(u64::MAX);
    if let Some(mine) = tiles.global_subtrees(plan.root_depth, roots) {
        return open_writer(run, spec, mine);
    }
    let mut failed = None;
    let mine = until_error(tiles.iter(), &mut failed)
        .filter(|t| t.depth() >= plan.root_depth && plan.part_of(*t) == shard.index);
    let opened = open_writer(run, spec, mine)?;
    failed.map_or(Ok(opened), Err)
}

/// Bakes part `shard` of the pack `run.options` describe into the shard
/// file at `--out`.
pub(crate) fn bake_shard(run: &Run, shard: Shard) -> Result<BakeReport, BakeError> {
    let (options, progress) = (run.options, run.progress);
    let (prepared, digests) = run.prepare_and_digest()?;
    let (spec, depth, tile_state) = settle_spec(run, &prepared, &digests)?;
    let Prepared { inputs, data_depth, landmarks, .. } = prepared;
    progress.stage(&format!("choosing tiles to depth {depth} (the data supports depth {data_depth})"));
    let tiles = tile_set(&inputs, &options.body, &spec.coverage, depth, scratch_dir(&options.out))?;
    let model = work_model(&inputs, &options.body)?;
    let plan = ShardPlan::new(&options.body, &tiles, spec.height_data_depth, shard.count, &model)?;
    // The coarse levels are a third of the roots' count, and this part's
    // share of them is listed: its surfaces go into the shard file.
    let mut coarse = Vec::new();
    for d in 0..plan.root_depth {
        for tile in tiles.depth(d) {
            let tile = tile?;
            if plan.part_of(tile) == shard.index {
                coarse.push(tile);
            }
        }
    }
    let (writer, resumed) = open_part_writer(run, &spec, &tiles, &plan, shard)?;
    let mine = writer.tile_count() as usize;
    progress.stage(&format!(
        "shard {shard}: {mine} of {} tiles in subtrees at depth {}, and the surfaces of {} coarse tiles",
        tiles.len(),
        plan.root_depth,
        coarse.len()
    ));
    TileBake {
        source: &inputs,
        spec: &spec,
        data_depth,
        progress,
        already_done: resumed,
        total: mine,
        held_level_tiles: run.memory.held_level_tiles(),
    }
    .run(&writer, &writer)?;
    let assembled = writer.assemble()?;
    progress.stage(&format!("accuracy audit of {}", assembled.path().display()));
    let audit = accuracy_audit(&inputs, assembled.path(), 0..u8::MAX, run.memory.held_level_tiles(), progress)?;
    let per_depth = audit.passed(assembled.path())?;
    progress.stage(&format!("sampling the surfaces of {} coarse tiles for the merge", coarse.len()));
    let has_surface = spec.codec.has_classes() || spec.codec.has_colour();
    let surfaces: Vec<_> = coarse
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
        build: crate::shard_file::build_id()?,
        wave: None,
    };
    append_section(assembled.path(), assembled.summary().file_length, &meta, &surfaces)?;
    assembled.commit()?;
    let report = ShardReport {
        out: options.out.display().to_string(),
        shard: shard.index,
        shards: shard.count,
        root_depth: plan.root_depth,
        depth,
        coverage: CoverageReport::from(spec.coverage),
        bake_tiles: plan.total_tiles,
        tiles: mine,
        tiles_resumed: resumed,
        coarse_surfaces: coarse.len(),
        estimated_work: plan.work[shard.index as usize],
        bake_estimated_work: plan.work.iter().sum(),
        landmarks: LandmarkReport::from(&landmarks),
        accuracy_audit: AccuracyReport { passed: true, per_depth },
        seconds: run.started.elapsed().as_secs_f64(),
        memory: MemoryReport::new(&run.memory, Some(tile_state)),
    };
    Ok(BakeReport::new(Report::Shard(Box::new(report))))
}
