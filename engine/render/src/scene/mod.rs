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

use planet_terrain::abi::{NodeRecord, PushConstants};
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Body;
use planet_terrain::ground::HeightSource;
use planet_terrain::layers::{LayerError, LayerStack};
use planet_terrain::lod::{Binding, Cut, FrameStatistics, SelectionSettings};

use crate::error::{RenderError, Result};
pub use crate::frame::{Delivery, FrameReport, FrameRequest, ReadBack, SecondView, SecondViewReport, TileFailure};
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
    /// The renderer's slots this scene keeps its tiles in (`None`: all of
    /// them); scenes of several bodies on one renderer hold disjoint ranges.
    pub slots: Option<SlotRange>,
}

/// A range of the renderer's tile slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRange {
    pub first: u32,
    pub count: u32,
}

impl SlotRange {
    /// Whether the range holds a slot and lies within a renderer's `slots`.
    pub fn fits(&self, slots: u32) -> bool {
        self.count > 0 && u64::from(self.first) + u64::from(self.count) <= u64::from(slots)
    }
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
            slots: None,
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
    /// The second view's selection, while frames have one.
    second: Option<selection::Selection>,
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
            second: None,
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

    /// Keeps this scene's tiles in the renderer's slots `slots` from now
    /// on (the bodies of a session share them out anew when the camera
    /// moves to another): residency starts from empty there, a held cut
    /// is let go.
    pub fn set_slots(&mut self, slots: SlotRange) {
        assert!(slots.count > 0, "a scene needs a slot");
        self.streaming.set_slots(slots);
        self.selection.release();
    }

    /// The renderer's slots this scene keeps its tiles in.
    pub fn slots(&self) -> SlotRange {
        self.streaming.slots()
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

    /// The renderer's device was lost and made again during another
    /// scene's frame (scenes of several bodies share a renderer): this
    /// scene's slots are empty too, and it uploads what it draws afresh.
    pub fn device_was_lost(&mut self) {
        self.device_lost();
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
    #[expect(
        clippy::too_many_lines,
        reason = "a frame's four phases in order: the uploads borrow the streamed tiles until the render returns them"
    )]
    fn frame_on_device(&mut self, renderer: &mut Renderer, request: &FrameRequest<'_>) -> Result<FrameReport> {
        let started = std::time::Instant::now();
        let mut clock = PhaseClock::start();
        let (view, sun, read_back) = (&request.view, request.sun, request.delivery.read_back);
        let ellipsoid = *self.ground.body.ellipsoid();
        if request.second.is_none() {
            // Its cut and bounds go; a second view later starts afresh.
            self.second = None;
        }
        let Some(source) = self.ground.drawn().cloned() else {
            // No ground: the ellipsoid alone.
            let views = HeldViews::default();
            return self.draw_held(renderer, request, views, None, read_back != ReadBack::Never, started);
        };
        if let Some(held) = self.draw_frozen(renderer, request, started) {
            return held;
        }
        let mut phases = FramePhases::default();
        // 1. Selection: the cut of each view.
        let (selected, second) = self.select_views(&source, request, &mut phases)?;
        phases.selection_ms = clock.lap();
        let cut = selected.cut;
        // 2. Streaming: the drawn nodes' tiles into slots, both views' in
        // one plan (the union, most wanted first, in one slot budget).
        let mut drawn = drawn_tiles(&cut);
        drawn.extend(second.iter().flat_map(|(_, s)| drawn_tiles(&s.cut)));
        let streamed = self.streaming.stream(source.as_ref(), &drawn, self.frame, &mut phases);
        let uploads = self.streaming.sort_uploads(&streamed, self.frame)?;
        let cuts = [Some(&cut), second.as_ref().map(|(_, s)| &s.cut)];
        let [bindings, second_bindings] = self.streaming.bind(cuts, &streamed.plan);
        phases.residency_ms = clock.lap();
        // 3. The records of the cuts, the main view's first.
        let mut records = self.selection.record(renderer, &ellipsoid, view, &cut, &bindings);
        let first_second_record = records.len();
        if let (Some((asked, s)), Some(selection)) = (&second, self.second.as_mut()) {
            records.extend(selection.record(renderer, &ellipsoid, &asked.view, &s.cut, &second_bindings));
        }
        phases.records_ms = clock.lap();
        let lagging = selected.lagging || second.as_ref().is_some_and(|(_, s)| s.lagging);
        let judged = self.streaming.completeness(&cut, lagging, &streamed.plan, &uploads);
        let complete = judged.complete && second.as_ref().is_none_or(|(_, s)| !s.cut.deferred);
        // 4. The look: light, shadows and the constants.
        let constants = self.constants(view, sun, judged.analytic_body);
        let wait = !self.streaming.in_background() || read_back == ReadBack::WhenComplete;
        self.look.update_shadows(&source, view, sun, wait);
        let shading = self.look.horizon(view);
        let second_input =
            second.as_ref().map(|(asked, _)| self.second_input(asked, sun, judged.analytic_body, first_second_record));
        let rendered = renderer.render(&FrameInput {
            horizon: look::horizon_input(&shading),
            constants,
            records: &records,
            uploads: &uploads.source,
            encoded: &uploads.encoded,
            staging_limit: self.streaming.staging_limit(&clock),
            data_depths: crate::conv::DataDepths::of(&*source),
            read_back: read_back.wants(complete),
            wireframe: request.delivery.wireframe,
            ui: request.delivery.ui,
            present: request.delivery.present,
            main_area: request.delivery.area,
            compose: request.delivery.compose,
            second: second_input,
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
        let statistics = self.view_statistics(&cut, &bindings, &plan, uploaded);
        let second_report = second.as_ref().map(|(_, s)| SecondViewReport {
            statistics: self.view_statistics(&s.cut, &second_bindings, &plan, uploaded),
            nodes_on_ancestors: on_ancestors(&second_bindings),
        });
        self.selection.hold_if_asked(cut, bindings.clone(), statistics);
        Ok(FrameReport {
            presented: outcome.presented,
            statistics,
            draw_calls: outcome.draw_calls,
            triangles: outcome.triangles,
            nodes_on_ancestors: on_ancestors(&bindings),
            analytic_body: judged.analytic_body,
            complete,
            gpu: outcome.previous_gpu_times,
            host_ms: started.elapsed().as_secs_f64() * 1e3 - outcome.waited_ms,
            waited_ms: outcome.waited_ms,
            phases,
            device_lost: None,
            second: second_report,
        })
    }

    /// Selects the cut of the main view and of the second, if asked.
    fn select_views(
        &mut self,
        source: &Arc<dyn HeightSource>,
        request: &FrameRequest<'_>,
        phases: &mut FramePhases,
    ) -> Result<(selection::Selected, Option<(SecondView, selection::Selected)>)> {
        let selected = self.selection.select(source, &request.view, phases)?;
        let second = match request.second {
            Some(asked) => Some((asked, self.select_second(source, &asked, phases)?)),
            None => None,
        };
        if phases.bounds_from_source > 0 {
            // Have the workers read what these bounds were taken without.
            self.streaming.warm_bounds();
        }
        Ok((selected, second))
    }

    /// A view's statistics: its cut's, with the frame's residency figures
    /// and its own dropped nodes.
    fn view_statistics(
        &self,
        cut: &Cut,
        bindings: &[Option<Binding>],
        plan: &planet_terrain::lod::residency::FramePlan,
        uploaded: usize,
    ) -> FrameStatistics {
        let mut statistics = self.streaming.statistics(cut, plan, uploaded);
        statistics.nodes_dropped = dropped_nodes(cut, bindings);
        statistics
    }

    /// Selects the second view's cut, with its own selection (made at its
    /// first frame): the main view's settings with its own error target
    /// and near plane. Its figures add to `phases`.
    fn select_second(
        &mut self,
        source: &Arc<dyn HeightSource>,
        asked: &SecondView,
        phases: &mut FramePhases,
    ) -> Result<selection::Selected> {
        let settings = SelectionSettings {
            target_error_px: asked.target_error_px,
            near_m: asked.near_m,
            ..self.selection.settings
        };
        let in_background = self.streaming.in_background();
        let selection = self.second.get_or_insert_with(|| selection::Selection::new(settings, in_background));
        selection.settings = settings;
        let mut own = FramePhases::default();
        let selected = selection.select(source, &asked.view, &mut own)?;
        phases.bounds_from_source += own.bounds_from_source;
        phases.selection_lagging |= own.selection_lagging;
        phases.selection_wait_ms += own.selection_wait_ms;
        Ok(selected)
    }

    /// A held cut (`freeze`) drawn from the request's cameras, if one is held.
    fn draw_frozen(
        &mut self,
        renderer: &mut Renderer,
        request: &FrameRequest<'_>,
        started: std::time::Instant,
    ) -> Option<Result<FrameReport>> {
        let ellipsoid = *self.ground.body.ellipsoid();
        let (records, statistics) = self.selection.held(renderer, &ellipsoid, &request.view)?;
        let second = request.second.and_then(|s| self.selection.held(renderer, &ellipsoid, &s.view));
        let views = HeldViews { main: records, second: second.map(|(records, _)| records).unwrap_or_default() };
        let read_back = request.delivery.read_back == ReadBack::Always;
        Some(self.draw_held(renderer, request, views, Some(statistics), read_back, started))
    }

    /// What the renderer needs of the second view: its constants, its
    /// records (from `first_record`), its horizon basis and its area.
    fn second_input(
        &self,
        asked: &SecondView,
        sun: glam::DVec3,
        analytic_body: bool,
        first_record: usize,
    ) -> crate::renderer::SecondViewInput {
        crate::renderer::SecondViewInput {
            constants: self.second_constants(asked, sun, analytic_body),
            first_record,
            horizon: self.look.shadows.basis_from(asked.view.position).unwrap_or_default(),
            area: asked.area,
        }
    }

    /// The second view's push constants: its camera, its cut's sag, its
    /// near plane, and the view index its horizon basis is read by.
    fn second_constants(&self, asked: &SecondView, sun: glam::DVec3, analytic_body: bool) -> PushConstants {
        let drawn = look::Drawn {
            analytic_body,
            deepest_m: self.ground.deepest_m,
            coarsest_depth: self.second.as_ref().and_then(selection::Selection::coarsest_drawn),
            near_m: asked.near_m,
        };
        let mut constants = self.look.constants(&self.ground.body, &asked.view, sun, &drawn);
        constants.flags |= 1 << planet_terrain::abi::VIEW_SHIFT;
        constants
    }

    /// Draws records without selecting or streaming: the ellipsoid alone
    /// (`statistics` None), or a frozen cut from moving cameras.
    fn draw_held(
        &mut self,
        renderer: &mut Renderer,
        request: &FrameRequest<'_>,
        views: HeldViews,
        statistics: Option<FrameStatistics>,
        read_back: bool,
        started: std::time::Instant,
    ) -> Result<FrameReport> {
        let analytic_body = statistics.is_none_or(|s| !s.covers_body);
        let constants = self.constants(&request.view, request.sun, analytic_body);
        let shading = self.look.horizon(&request.view);
        let first_record = views.main.len();
        let mut records = views.main;
        records.extend(views.second);
        let second = request.second.map(|asked| self.second_input(&asked, request.sun, analytic_body, first_record));
        let outcome = renderer.render(&FrameInput {
            horizon: look::horizon_input(&shading),
            constants,
            records: &records,
            uploads: &[],
            encoded: &[],
            staging_limit: None,
            data_depths: Default::default(),
            read_back,
            wireframe: request.delivery.wireframe,
            ui: request.delivery.ui,
            present: request.delivery.present,
            main_area: request.delivery.area,
            compose: request.delivery.compose,
            second,
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
            second: request.second.map(|_| SecondViewReport::default()),
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

/// The records of a frame drawn without selecting, per view.
#[derive(Default)]
struct HeldViews {
    main: Vec<NodeRecord>,
    second: Vec<NodeRecord>,
}

/// A cut's drawn nodes (tile and projected error), as streaming asks for them.
fn drawn_tiles(cut: &Cut) -> Vec<(TileAddress, f64)> {
    cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| (n.tile, n.projected_error_px)).collect()
}

/// Nodes bound to an ancestor's tile (theirs is not resident yet).
fn on_ancestors(bindings: &[Option<Binding>]) -> usize {
    bindings.iter().flatten().filter(|b| b.source != b.tile).count()
}

/// Drawn nodes with nothing resident to draw: neither their tile nor any
/// ancestor's.
fn dropped_nodes(cut: &Cut, bindings: &[Option<Binding>]) -> usize {
    cut.nodes.iter().zip(bindings).filter(|(n, b)| n.culled.is_none() && b.is_none()).count()
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
