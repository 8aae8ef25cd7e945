//! The host driver of a frame: camera -> selection -> residency -> tiles ->
//! records -> [`Renderer::render`]. The viewer and the tests go through this
//! one path, so what the tests see is what users get.
//!
//! The key decision: the analytic ellipsoid is drawn beneath the terrain
//! unless the residency plan says the cut `covers_body` (every selected node
//! drew real data), and always when there is no height source at all.
//! A tile whose stored data cannot be read (a payload failing its checksum
//! or decode) does not end the frame: residency marks it failed, its nodes
//! keep their ancestor's coarser ground, and the failure is kept once for
//! the caller to report ([`TerrainScene::take_failures`]).

use planet_terrain::ground::BoundsAt;
use std::collections::HashSet;
use std::sync::Arc;

use glam::DVec3;
use planet_terrain::camera::View;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Body;
use planet_terrain::ground::{HeightFunction, HeightSource};
use planet_terrain::layers::{LayerError, LayerStack};
use planet_terrain::lod::{Binding, FrameStatistics, Residency, ResidencySettings, SelectionSettings, build_records};

use crate::conv::TILE_UPLOAD_BYTES;
use crate::error::{RenderError, Result};
pub use crate::frame::{FrameOptions, FrameReport, ReadBack, TileFailure};
use crate::loader::TileLoader;
pub use crate::pacing::FramePhases;
use crate::pacing::{PhaseClock, UploadPacer};
use crate::renderer::{FrameInput, HorizonInput, Renderer};
use crate::selection::CutSelection;
pub use crate::shadows::ShadowMode;
use crate::shadows::Shadows;

pub use crate::look::{Appearance, season_at, sky_turn_at, sun_at, sun_for};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneSettings {
    pub selection: SelectionSettings,
    /// Tile uploads allowed per frame (the residency byte budget), at most
    /// the renderer's `uploads_per_frame`; frames in flight are the
    /// renderer's alone.
    pub uploads_per_frame: usize,
    pub loading: Loading,
    /// Cast shadows and ambient occlusion from the horizon map.
    pub shadows: ShadowMode,
    /// What becomes of a tile its source could not be reached for.
    pub unreachable: Unreachable,
}

/// What becomes of a tile whose source could not be reached for now (a
/// server failing or slow past its own retries): its nodes draw their
/// nearest resident ancestor either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unreachable {
    /// Asked for again after a backoff: a flight or a window goes on and
    /// fills in when the source answers again.
    #[default]
    RetryLater,
    /// Given up at once: a shot ends rather than wait on a source that is
    /// failing, and counts the tile as not drawn.
    GiveUp,
}

impl Default for SceneSettings {
    fn default() -> Self {
        SceneSettings {
            selection: SelectionSettings::default(),
            uploads_per_frame: 32,
            loading: Loading::OnFrame,
            shadows: ShadowMode::On,
            unreachable: Unreachable::RetryLater,
        }
    }
}

/// Tiles a frame copies into staging at most when the loader produces them
/// (then the frame's whole share of a tile): 32 (3.9 MB, about 1 ms on the
/// 2-core VM, docs/performance-history.md) pass 1,900 tiles a second at 60 fps.
pub const BACKGROUND_UPLOADS_PER_FRAME: usize = 32;

/// Where tiles are produced (read, decoded, synthesized, edited).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loading {
    /// Inside the frame that uploads them: a frame shows every tile it
    /// asked for, so a sequence of frames is the same on every run (tests,
    /// frame-by-frame captures).
    OnFrame,
    /// On this many worker threads: a frame never waits for a tile (nor
    /// do its bounds wait for a read), a node draws its ancestor until its
    /// own tile is produced, and a frame uploads at most
    /// [`BACKGROUND_UPLOADS_PER_FRAME`] tiles.
    Background { threads: usize },
}

/// A body's ground as the renderer sees it, across frames.
#[derive(Debug)]
pub struct TerrainScene {
    body: Body,
    /// What is drawn: the base source with the layer stack applied (a fresh
    /// immutable snapshot after every edit), or the base when there are no
    /// layers.
    source: Option<Arc<dyn HeightSource>>,
    base: Option<Arc<dyn HeightSource>>,
    layers: LayerStack,
    edits: usize,
    residency: Residency,
    settings: SceneSettings,
    appearance: Appearance,
    frame: u64,
    deepest_ground_m: f64,
    freeze_next: bool,
    /// A cut held still (`freeze`): drawn from wherever the camera goes.
    frozen: Option<Frozen>,
    /// Stored tiles found unreadable so far (each reported once).
    unreadable: HashSet<TileAddress>,
    /// Failures not yet taken by the caller.
    failures: Vec<TileFailure>,
    /// Transient failures per tile, for the backoff.
    retries: std::collections::HashMap<planet_terrain::geo::address::TileKey, u32>,
    /// Tiles given up because their source could not be reached
    /// ([`Unreachable::GiveUp`]).
    unreachable: HashSet<TileAddress>,
    /// What the scene says about its source failing for now.
    trouble: crate::tiles::SourceTrouble,
    /// The workers of `Loading::Background`.
    loader: Option<TileLoader>,
    /// Where the cut is selected (on the frame, or on its own thread when
    /// tiles load in the background), with the bounds it was given.
    selection: CutSelection,
    /// The upload budget of `Loading::Background` frames.
    pacer: UploadPacer,
    /// The last selected cut's tiles ([`TerrainScene::drawn_ground_depths_at`]).
    last_cut: planet_terrain::geo::address::TileMap<TileAddress, ()>,
    /// The shallowest depth the last cut drew (the hole count's floor).
    coarsest_drawn: Option<u8>,
    /// [`TerrainScene::set_sky_turn`].
    sky_turn: f64,
    /// [`TerrainScene::set_season`].
    season: Option<f64>,
    /// The horizon map: cast shadows and ambient occlusion.
    shadows: Shadows,
}

#[derive(Debug)]
struct Frozen {
    cut: planet_terrain::lod::Cut,
    bindings: Vec<Option<Binding>>,
    statistics: FrameStatistics,
}

impl TerrainScene {
    pub fn new(
        body: Body,
        source: Option<Arc<dyn HeightSource>>,
        renderer: &Renderer,
        settings: SceneSettings,
    ) -> TerrainScene {
        let mut uploads = settings.uploads_per_frame.min(renderer.settings().uploads_per_frame);
        if let Loading::Background { .. } = settings.loading {
            uploads = uploads.min(BACKGROUND_UPLOADS_PER_FRAME);
        }
        let residency = Residency::new(ResidencySettings {
            slots: renderer.settings().slots as usize,
            frames_in_flight: renderer.settings().frames_in_flight as u64,
            upload_budget_bytes: uploads * TILE_UPLOAD_BYTES,
            tile_bytes: TILE_UPLOAD_BYTES,
        });
        let appearance = Appearance::for_body(&body);
        let deepest_ground_m = source.as_deref().map_or(0.0, deepest_ground);
        let loader = match settings.loading {
            Loading::OnFrame => None,
            Loading::Background { threads } => Some(TileLoader::new(source.clone(), threads)),
        };
        TerrainScene {
            body,
            base: source.clone(),
            source,
            layers: LayerStack::new(),
            edits: 0,
            residency,
            settings,
            appearance,
            frame: 0,
            deepest_ground_m,
            freeze_next: false,
            frozen: None,
            unreadable: HashSet::new(),
            failures: Vec::new(),
            retries: std::collections::HashMap::new(),
            unreachable: HashSet::new(),
            trouble: Default::default(),
            selection: if loader.is_some() { CutSelection::on_thread() } else { CutSelection::on_frame() },
            loader,
            pacer: UploadPacer::new(uploads),
            last_cut: Default::default(),
            coarsest_drawn: None,
            sky_turn: 0.0,
            season: None,
            shadows: Shadows::new(settings.shadows),
        }
    }

    /// Tiles found unreadable since the last call, each stored tile once:
    /// the caller reports them (the scene draws on without them).
    pub fn take_failures(&mut self) -> Vec<TileFailure> {
        std::mem::take(&mut self.failures)
    }

    /// What happened to the source since the last call, for the caller to
    /// say: that it began failing (naming it and how), that it answers
    /// again. Said once per change, not once per tile.
    pub fn take_source_notices(&mut self) -> Vec<String> {
        self.trouble.take_notices()
    }

    pub fn body(&self) -> &Body {
        &self.body
    }

    pub fn set_appearance(&mut self, appearance: Appearance) {
        self.appearance = appearance;
    }

    /// Cast shadows and ambient occlusion on, off or painted as a mask.
    pub fn set_shadows(&mut self, mode: ShadowMode) {
        self.shadows.set_mode(mode);
    }

    /// The horizon map the last frame shaded with, and the maps built so
    /// far with the last one's milliseconds.
    pub fn horizon_map(&self) -> (Option<&planet_terrain::ground::horizon::HorizonMap>, (usize, f64)) {
        (self.shadows.map(), self.shadows.builds())
    }

    /// The near plane for the next frames (the viewer keeps it a fraction
    /// of the camera's height above the ground).
    pub fn set_near(&mut self, near_m: f64) {
        self.settings.selection.near_m = near_m;
    }

    /// How far the body has turned under the stars (radians,
    /// [`sky_turn_at`]); 0 until set, the sky of the goldens.
    pub fn set_sky_turn(&mut self, radians: f64) {
        self.sky_turn = radians;
    }

    /// The season the snow follows ([`season_at`]: the fraction of the
    /// year since the March equinox); `None` (until set, the goldens') the
    /// year's snowline whatever the date.
    pub fn set_season(&mut self, year_fraction: Option<f64>) {
        self.season = year_fraction;
    }

    /// The selection's error target (pixels) and node budget.
    pub fn selection(&self) -> (f64, usize) {
        (self.settings.selection.target_error_px, self.settings.selection.node_budget)
    }

    /// A new error target and node budget for the next frames (the view
    /// panel's sliders); the budget is held to the renderer's node capacity
    /// by the caller.
    pub fn set_selection(&mut self, target_error_px: f64, node_budget: usize) {
        self.settings.selection.target_error_px = target_error_px;
        self.settings.selection.node_budget = node_budget;
    }

    /// The ground before any layer: what the scene was made with.
    pub fn base(&self) -> Option<&Arc<dyn HeightSource>> {
        self.base.as_ref()
    }

    /// The ground as drawn: the base source with the layers applied.
    pub fn source(&self) -> Option<&Arc<dyn HeightSource>> {
        self.source.as_ref()
    }

    pub fn layers(&self) -> &LayerStack {
        &self.layers
    }

    /// How many edits have been applied (a generation number for caches of
    /// the ground).
    pub fn edits(&self) -> usize {
        self.edits
    }

    /// Mutates the layer stack. Every footprint the mutation touched
    /// re-stages the resident tiles it reaches (ahead of streaming misses,
    /// into the slots they hold), so the edit is drawn from the next frame;
    /// node bounds follow the new ground at the next selection. Returns the
    /// tiles queued for re-staging. Without a height source there is no
    /// ground to edit and the mutation is refused.
    pub fn edit<R>(
        &mut self,
        mutate: impl FnOnce(&mut LayerStack, &planet_terrain::geo::body::Ellipsoid) -> std::result::Result<R, LayerError>,
    ) -> std::result::Result<(R, usize), LayerError> {
        let Some(base) = self.base.clone() else {
            return Err(LayerError::Invalid { order: 0, reason: "a body with no ground cannot be edited".into() });
        };
        let ellipsoid = *self.body.ellipsoid();
        let result = mutate(&mut self.layers, &ellipsoid)?;
        let footprints = self.layers.drain_journal();
        let function = HeightFunction::new(base.clone(), self.layers.clone());
        let touched: Vec<TileAddress> = self
            .residency
            .resident_tiles()
            .filter(|&tile| {
                let (lo, hi) = function.tile_bounds(tile).map_or((0.0, 0.0), |b| (b.min_elevation, b.max_elevation));
                footprints.iter().any(|f| f.touches(&ellipsoid, tile, lo, hi))
            })
            .collect();
        for &tile in &touched {
            self.residency.request_restage(tile);
        }
        // A crater can dig below anything the source held.
        self.deepest_ground_m = deepest_ground(&function);
        self.source = Some(if self.layers.is_empty() { base } else { Arc::new(function) });
        if let Some(loader) = &mut self.loader {
            loader.reset(self.source.clone());
        }
        self.edits += 1;
        // A held cut was bound to the old ground; let it go.
        self.frozen = None;
        Ok((result, touched.len()))
    }

    /// Holds the current cut (and what it is bound to) still, or lets it go.
    /// While frozen, nothing is selected or streamed; the held cut is drawn
    /// from the moving camera, to inspect it from elsewhere.
    pub fn set_frozen(&mut self, frozen: bool) {
        if !frozen {
            self.frozen = None;
        } else if self.frozen.is_none() {
            self.freeze_next = true;
        }
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some() || self.freeze_next
    }

    /// Draws one frame of `view`, headless. With `read_back`, the frame's
    /// image is copied back when the frame turns out `complete` (or always,
    /// with `ReadBack::Always`).
    pub fn frame(
        &mut self,
        renderer: &mut Renderer,
        view: &View,
        sun: DVec3,
        read_back: ReadBack,
    ) -> Result<FrameReport> {
        self.frame_with(renderer, view, sun, FrameOptions::headless(read_back))
    }

    /// Draws one frame of `view` as `options` say.
    pub fn frame_with(
        &mut self,
        renderer: &mut Renderer,
        view: &View,
        sun: DVec3,
        options: FrameOptions<'_>,
    ) -> Result<FrameReport> {
        let read_back = options.read_back;
        let started = std::time::Instant::now();
        let mut clock = PhaseClock::start();
        let Some(source) = self.source.clone() else {
            // No ground: the ellipsoid alone.
            let read_back = read_back != ReadBack::Never;
            return self.draw_held(renderer, view, sun, &options, &[], None, read_back, started);
        };
        if let Some(frozen) = &self.frozen {
            let (cut, bindings, statistics) = (&frozen.cut, &frozen.bindings, frozen.statistics);
            let records = self.records(renderer, view, cut, bindings);
            let read_back = read_back == ReadBack::Always;
            return self.draw_held(renderer, view, sun, &options, &records, Some(statistics), read_back, started);
        }
        let mut phases = FramePhases::default();
        let selected = self.select_cut(&source, view, &mut phases)?;
        phases.selection_ms = clock.lap();
        let cut = selected.cut;
        let drawn: Vec<(TileAddress, f64)> =
            cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| (n.tile, n.projected_error_px)).collect();
        let streamed = self.stream(source.as_ref(), &drawn, &mut phases);
        let uploads = self.sort_uploads(&streamed)?;
        let bindings = phases::bind(&cut, &streamed.plan);
        phases.residency_ms = clock.lap();
        let records = self.record_cut(renderer, view, &cut, &bindings);
        phases.records_ms = clock.lap();
        let judged = self.completeness(&cut, selected.lagging, &streamed.plan, &uploads);
        let constants = self.constants(view, sun, judged.analytic_body);
        let wait = self.loader.is_none() || read_back == ReadBack::WhenComplete;
        self.shadows.update(&source, view.position, sun, wait);
        let shading = self.shadows.frame_input(view.position);
        let outcome = renderer.render(&FrameInput {
            horizon: shading.as_ref().map(|(basis, texels)| HorizonInput { basis: *basis, texels: texels.as_deref() }),
            constants,
            records: &records,
            uploads: &uploads.source,
            encoded: &uploads.encoded,
            staging_limit: self.staging_limit(&clock),
            data_depths: crate::conv::DataDepths::of(&*source),
            read_back: read_back.wants(judged.complete),
            wireframe: options.wireframe,
            ui: options.ui,
            present: options.present,
        })?;
        let uploaded = uploads.source.len() + outcome.staged_encoded;
        drop(uploads);
        let plan = self.return_unstaged(streamed, outcome.staged_encoded);
        phases.render_ms = clock.lap();
        phases.staging_ms = outcome.staging_ms;
        let rest_ms = phases.residency_ms + phases.records_ms + phases.render_ms - phases.staging_ms;
        self.pacer.observe(outcome.staged_encoded, phases.staging_ms, rest_ms);
        self.frame += 1;
        let statistics = self.statistics(&cut, &plan, uploaded);
        if std::mem::take(&mut self.freeze_next) {
            self.frozen = Some(Frozen { cut, bindings, statistics });
        }
        Ok(FrameReport {
            presented: outcome.presented,
            statistics,
            draw_calls: outcome.draw_calls,
            triangles: outcome.triangles,
            nodes_on_ancestors: judged.nodes_on_ancestors,
            analytic_body: judged.analytic_body,
            complete: judged.complete,
            gpu: outcome.previous_gpu_times,
            host_ms: started.elapsed().as_secs_f64() * 1e3 - outcome.waited_ms,
            waited_ms: outcome.waited_ms,
            phases,
        })
    }

    /// Draws records without selecting or streaming: the ellipsoid alone
    /// (`statistics` None), or a frozen cut from a moving camera.
    #[allow(clippy::too_many_arguments)]
    fn draw_held(
        &mut self,
        renderer: &mut Renderer,
        view: &View,
        sun: DVec3,
        options: &FrameOptions<'_>,
        records: &[planet_terrain::abi::NodeRecord],
        statistics: Option<FrameStatistics>,
        read_back: bool,
        started: std::time::Instant,
    ) -> Result<FrameReport> {
        let analytic_body = statistics.is_none_or(|s| !s.covers_body);
        let constants = self.constants(view, sun, analytic_body);
        let shading = self.shadows.frame_input(view.position);
        let outcome = renderer.render(&FrameInput {
            horizon: shading.as_ref().map(|(basis, texels)| HorizonInput { basis: *basis, texels: texels.as_deref() }),
            constants,
            records,
            uploads: &[],
            encoded: &[],
            staging_limit: None,
            data_depths: Default::default(),
            read_back,
            wireframe: options.wireframe,
            ui: options.ui,
            present: options.present,
        })?;
        self.frame += 1;
        Ok(FrameReport {
            statistics: statistics.unwrap_or_default(),
            draw_calls: outcome.draw_calls,
            triangles: outcome.triangles,
            analytic_body,
            complete: true,
            gpu: outcome.previous_gpu_times,
            host_ms: started.elapsed().as_secs_f64() * 1e3 - outcome.waited_ms,
            waited_ms: outcome.waited_ms,
            presented: outcome.presented,
            ..FrameReport::default()
        })
    }

    /// Records of a cut's drawn nodes. Bindings never name a slot uploaded
    /// this frame (residency makes uploads bindable from the next), so what
    /// the renderer last put in each bound slot is what the frame reads.
    fn records(
        &self,
        renderer: &Renderer,
        view: &View,
        cut: &planet_terrain::lod::Cut,
        bindings: &[Option<Binding>],
    ) -> Vec<planet_terrain::abi::NodeRecord> {
        build_records(self.body.ellipsoid(), view, cut, bindings, |b| {
            let held = renderer.slot_content(b.slot as u32);
            let base = f64::from(held.height_base);
            Some((base, base + 65535.0 * f64::from(held.height_step)))
        })
    }
}

/// The deepest elevation `source` can hold (never above the datum): the
/// roots' bounds hold every elevation of a source. A root whose bounds
/// cannot be read counts as the datum.
fn deepest_ground(source: &dyn HeightSource) -> f64 {
    TileAddress::roots().into_iter().map(|r| source.tile_bounds(r).map_or(0.0, |b| b.min_elevation)).fold(0.0, f64::min)
}

fn source_error(tile: Option<TileAddress>) -> impl Fn(planet_terrain::ground::SourceError) -> RenderError {
    move |e| RenderError::Source {
        tile: tile.map(|t| t.to_string()).unwrap_or_else(|| "(selection)".into()),
        message: e.to_string(),
    }
}

mod drawn;
mod phases;
