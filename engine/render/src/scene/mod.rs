//! The host driver of a frame: camera -> selection -> residency -> tiles ->
//! records -> [`Renderer::render`]. The viewer and the tests go through this
//! one path, so what the tests see is what users get.
//!
//! The key decision: a scene is four parts, each holding its own state and
//! doing its own phase of a frame, so a frame reads as four calls and a
//! render ([`TerrainScene::frame`]): `selection` (the cut, held or
//! remembered), `streaming` (tiles into slots, failures, the loader),
//! `ground` (the base, the layers, the ground drawn) and `look` (light,
//! colour, shadows and the push constants). The analytic ellipsoid is drawn
//! beneath the terrain unless the residency plan says the cut `covers_body`
//! (every selected node drew real data), and always when there is no height
//! source at all. A tile whose stored data cannot be read (a payload
//! failing its checksum or decode) does not end the frame: residency marks
//! it failed, its nodes keep their ancestor's coarser ground, and the
//! failure is kept once for the caller to report
//! ([`TerrainScene::take_failures`]).

use std::sync::Arc;

use planet_terrain::abi::NodeRecord;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Body;
use planet_terrain::ground::HeightSource;
use planet_terrain::layers::{LayerError, LayerStack};
use planet_terrain::lod::{FrameStatistics, SelectionSettings};

use crate::error::{RenderError, Result};
pub use crate::frame::{Delivery, FrameReport, FrameRequest, ReadBack, TileFailure};
pub use crate::pacing::FramePhases;
use crate::pacing::PhaseClock;
use crate::renderer::{FrameInput, Renderer};
pub use crate::shadows::ShadowMode;

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
    ground: ground::Ground,
    selection: selection::Selection,
    streaming: streaming::Streaming,
    look: look::Look,
    /// Frames drawn.
    frame: u64,
}

impl TerrainScene {
    pub fn new(
        body: Body,
        source: Option<Arc<dyn HeightSource>>,
        renderer: &Renderer,
        settings: SceneSettings,
    ) -> TerrainScene {
        let streaming = streaming::Streaming::new(&settings, renderer, source.clone());
        TerrainScene {
            selection: selection::Selection::new(settings.selection, streaming.in_background()),
            streaming,
            look: look::Look::new(&body, settings.shadows),
            ground: ground::Ground::new(body, source),
            frame: 0,
        }
    }

    /// Tiles found unreadable since the last call, each stored tile once:
    /// the caller reports them (the scene draws on without them).
    pub fn take_failures(&mut self) -> Vec<TileFailure> {
        self.streaming.take_failures()
    }

    /// What happened to the source since the last call, for the caller to
    /// say: that it began failing (naming it and how), that it answers
    /// again. Said once per change, not once per tile.
    pub fn take_source_notices(&mut self) -> Vec<String> {
        self.streaming.take_source_notices()
    }

    pub fn body(&self) -> &Body {
        &self.ground.body
    }

    pub fn set_appearance(&mut self, appearance: Appearance) {
        self.look.appearance = appearance;
    }

    /// Cast shadows and ambient occlusion on, off or painted as a mask.
    pub fn set_shadows(&mut self, mode: ShadowMode) {
        self.look.shadows.set_mode(mode);
    }

    /// The horizon map the last frame shaded with, and the maps built so
    /// far with the last one's milliseconds.
    pub fn horizon_map(&self) -> (Option<&planet_terrain::ground::horizon::HorizonMap>, (usize, f64)) {
        (self.look.shadows.map(), self.look.shadows.builds())
    }

    /// The near plane for the next frames (the viewer keeps it a fraction
    /// of the camera's height above the ground).
    pub fn set_near(&mut self, near_m: f64) {
        self.selection.settings.near_m = near_m;
    }

    /// How far the body has turned under the stars (radians,
    /// [`sky_turn_at`]); 0 until set, the sky of the goldens.
    pub fn set_sky_turn(&mut self, radians: f64) {
        self.look.sky_turn = radians;
    }

    /// The season the snow follows ([`season_at`]: the fraction of the
    /// year since the March equinox); `None` (until set, the goldens') the
    /// year's snowline whatever the date.
    pub fn set_season(&mut self, year_fraction: Option<f64>) {
        self.look.season = year_fraction;
    }

    /// The selection's error target (pixels) and node budget.
    pub fn selection(&self) -> (f64, usize) {
        (self.selection.settings.target_error_px, self.selection.settings.node_budget)
    }

    /// A new error target and node budget for the next frames (the view
    /// panel's sliders); the budget is held to the renderer's node capacity
    /// by the caller.
    pub fn set_selection(&mut self, target_error_px: f64, node_budget: usize) {
        self.selection.settings.target_error_px = target_error_px;
        self.selection.settings.node_budget = node_budget;
    }

    /// The ground before any layer: what the scene was made with.
    pub fn base(&self) -> Option<&Arc<dyn HeightSource>> {
        self.ground.base()
    }

    /// The ground as drawn: the base source with the layers applied.
    pub fn source(&self) -> Option<&Arc<dyn HeightSource>> {
        self.ground.drawn()
    }

    pub fn layers(&self) -> &LayerStack {
        self.ground.layers()
    }

    /// How many edits have been applied (a generation number for caches of
    /// the ground).
    pub fn edits(&self) -> usize {
        self.ground.edits()
    }

    /// Mutates the layer stack. Every footprint the mutation touched
    /// re-stages the resident tiles it reaches (ahead of streaming misses,
    /// into the slots they hold), so the edit is drawn from the next frame;
    /// node bounds follow the new ground at the next selection (the
    /// selector notices a new ground itself). Returns the tiles queued for
    /// re-staging. Without a height source there is no ground to edit and
    /// the mutation is refused.
    pub fn edit<R>(
        &mut self,
        mutate: impl FnOnce(&mut LayerStack, &planet_terrain::geo::body::Ellipsoid) -> std::result::Result<R, LayerError>,
    ) -> std::result::Result<(R, usize), LayerError> {
        let edited = self.ground.edit(mutate)?;
        let drawn = self.ground.drawn().cloned();
        let ellipsoid = *self.ground.body.ellipsoid();
        let touched = self.streaming.ground_edited(&edited.function, &edited.footprints, &ellipsoid, drawn);
        self.selection.release();
        Ok((edited.result, touched))
    }

    /// Holds the current cut (and what it is bound to) still, or lets it go.
    /// While frozen, nothing is selected or streamed; the held cut is drawn
    /// from the moving camera, to inspect it from elsewhere.
    pub fn set_frozen(&mut self, frozen: bool) {
        self.selection.set_frozen(frozen);
    }

    pub fn is_frozen(&self) -> bool {
        self.selection.is_frozen()
    }

    /// Draws the frame `request` asks for: selection, streaming, the
    /// records, the look, and the render. A device lost on the way is made
    /// again and the frame drawn on the new one from empty slots
    /// ([`FrameReport::device_lost`]; without the panels, whose textures the
    /// caller sends again); the cut, caches and layers survive.
    pub fn frame(&mut self, renderer: &mut Renderer, request: &FrameRequest<'_>) -> Result<FrameReport> {
        match self.frame_on_device(renderer, request) {
            Err(RenderError::DeviceLost { during }) => {
                renderer.recover()?;
                self.device_lost();
                // The UI's textures went with the device: this frame goes
                // without the panels, and the caller sends them whole again
                // for the next (`device_lost` tells it to).
                let retry = FrameRequest { delivery: Delivery { ui: None, ..request.delivery }, ..*request };
                let report = self.frame_on_device(renderer, &retry)?;
                Ok(FrameReport { device_lost: Some(during), ..report })
            }
            drawn => drawn,
        }
    }

    /// What the GPU held is gone (a lost device, made again): the slots
    /// are empty, the horizon map's texels unsent, a held cut's bindings
    /// void.
    fn device_lost(&mut self) {
        self.streaming.device_lost();
        self.look.shadows.device_lost();
        self.selection.release();
    }

    /// [`TerrainScene::frame`] on the device as it is.
    fn frame_on_device(&mut self, renderer: &mut Renderer, request: &FrameRequest<'_>) -> Result<FrameReport> {
        let started = std::time::Instant::now();
        let mut clock = PhaseClock::start();
        let (view, sun, read_back) = (&request.view, request.sun, request.delivery.read_back);
        let ellipsoid = *self.ground.body.ellipsoid();
        let Some(source) = self.ground.drawn().cloned() else {
            // No ground: the ellipsoid alone.
            return self.draw_held(renderer, request, &[], None, read_back != ReadBack::Never, started);
        };
        if let Some((records, statistics)) = self.selection.held(renderer, &ellipsoid, view) {
            let read_back = read_back == ReadBack::Always;
            return self.draw_held(renderer, request, &records, Some(statistics), read_back, started);
        }
        let mut phases = FramePhases::default();
        // 1. Selection: the cut.
        let selected = self.selection.select(&source, view, &mut phases)?;
        if selected.bounds_from_source > 0 {
            // Have the workers read what these bounds were taken without.
            self.streaming.warm_bounds();
        }
        phases.selection_ms = clock.lap();
        let cut = selected.cut;
        // 2. Streaming: the drawn nodes' tiles into slots.
        let drawn: Vec<(TileAddress, f64)> =
            cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| (n.tile, n.projected_error_px)).collect();
        let streamed = self.streaming.stream(source.as_ref(), &drawn, self.frame, &mut phases);
        let uploads = self.streaming.sort_uploads(&streamed, self.frame)?;
        let bindings = streaming::bind(&cut, &streamed.plan);
        phases.residency_ms = clock.lap();
        // 3. The records of the cut.
        let records = self.selection.record(renderer, &ellipsoid, view, &cut, &bindings);
        phases.records_ms = clock.lap();
        let judged = self.streaming.completeness(&cut, selected.lagging, &streamed.plan, &uploads);
        // 4. The look: light, shadows and the constants.
        let constants = self.constants(view, sun, judged.analytic_body);
        let wait = !self.streaming.in_background() || read_back == ReadBack::WhenComplete;
        self.look.update_shadows(&source, view, sun, wait);
        let shading = self.look.horizon(view);
        let rendered = renderer.render(&FrameInput {
            horizon: look::horizon_input(&shading),
            constants,
            records: &records,
            uploads: &uploads.source,
            encoded: &uploads.encoded,
            staging_limit: self.streaming.staging_limit(&clock),
            data_depths: crate::conv::DataDepths::of(&*source),
            read_back: read_back.wants(judged.complete),
            wireframe: request.delivery.wireframe,
            ui: request.delivery.ui,
            present: request.delivery.present,
        });
        let outcome = match rendered {
            Ok(outcome) => outcome,
            Err(error) => {
                // The loader's tiles taken for this frame wait for a later one.
                drop(uploads);
                self.streaming.return_unstaged(streamed, 0);
                return Err(error);
            }
        };
        let uploaded = uploads.source.len() + outcome.staged_encoded;
        drop(uploads);
        let plan = self.streaming.return_unstaged(streamed, outcome.staged_encoded);
        phases.render_ms = clock.lap();
        phases.staging_ms = outcome.staging_ms;
        let rest_ms = phases.residency_ms + phases.records_ms + phases.render_ms - phases.staging_ms;
        self.streaming.observe_staging(outcome.staged_encoded, phases.staging_ms, rest_ms);
        self.frame += 1;
        let statistics = self.streaming.statistics(&cut, &plan, uploaded);
        self.selection.hold_if_asked(cut, bindings, statistics);
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
            device_lost: None,
        })
    }

    /// Draws records without selecting or streaming: the ellipsoid alone
    /// (`statistics` None), or a frozen cut from a moving camera.
    fn draw_held(
        &mut self,
        renderer: &mut Renderer,
        request: &FrameRequest<'_>,
        records: &[NodeRecord],
        statistics: Option<FrameStatistics>,
        read_back: bool,
        started: std::time::Instant,
    ) -> Result<FrameReport> {
        let analytic_body = statistics.is_none_or(|s| !s.covers_body);
        let constants = self.constants(&request.view, request.sun, analytic_body);
        let shading = self.look.horizon(&request.view);
        let outcome = renderer.render(&FrameInput {
            horizon: look::horizon_input(&shading),
            constants,
            records,
            uploads: &[],
            encoded: &[],
            staging_limit: None,
            data_depths: Default::default(),
            read_back,
            wireframe: request.delivery.wireframe,
            ui: request.delivery.ui,
            present: request.delivery.present,
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

    /// What the look needs of the other parts for a frame whose cut leaves
    /// the ellipsoid showing (`analytic_body`) or not.
    fn drawn(&self, analytic_body: bool) -> look::Drawn {
        look::Drawn {
            analytic_body,
            deepest_m: self.ground.deepest_m,
            coarsest_depth: self.selection.coarsest_drawn(),
            near_m: self.selection.settings.near_m,
        }
    }
}

fn source_error(tile: Option<TileAddress>) -> impl Fn(planet_terrain::ground::SourceError) -> RenderError {
    move |e| RenderError::Source {
        tile: tile.map(|t| t.to_string()).unwrap_or_else(|| "(selection)".into()),
        message: e.to_string(),
    }
}

mod drawn;
mod ground;
mod look;
mod selection;
mod streaming;
