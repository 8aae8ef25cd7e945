//! Streaming, a scene's second part: the tiles of the drawn nodes into
//! GPU slots. It plans the slots (residency), takes what the loader
//! produced or produces it here, sorts the uploads (marking tiles that
//! failed, backing off a source that cannot be reached), judges whether a
//! frame is complete, and, after the renderer, hands back what it could
//! not stage.
//!
//! The key decision: streaming owns every piece of state about tiles in
//! flight (residency, the loader and its pacer, failures and retries), so
//! what a frame's `--stats` residency phase measures is this part alone.

use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::Ellipsoid;
use planet_terrain::ground::{BoundsAt, HeightFunction, HeightSource, SourceError, SourceTile};
use planet_terrain::layers::Footprint;
use planet_terrain::lod::residency::FramePlan;
use planet_terrain::lod::{Binding, Cut, FrameStatistics, Residency, ResidencySettings};

use super::{BACKGROUND_UPLOADS_PER_FRAME, Loading, SceneSettings, SlotRange, Unreachable};
use crate::conv::{EncodedUpload, TILE_UPLOAD_BYTES};
use crate::error::{RenderError, Result};
use crate::frame::TileFailure;
use crate::loader::TileLoader;
use crate::pacing::{FRAME_CPU_TARGET_MS, FramePhases, MIN_UPLOAD_MS, PhaseClock, UploadPacer};
use crate::renderer::Renderer;
use crate::tiles::{Ready, SourceTrouble, is_transient, produce_tiles, unreadable_tile, was_asked};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The slots planned for a cut and the tiles produced for its uploads, one
/// outcome per upload in the plan's order.
pub(super) struct Streamed {
    pub(super) plan: FramePlan,
    pub(super) produced: Vec<std::result::Result<Ready, SourceError>>,
}

/// This frame's uploads by kind: produced on the frame (encoded as they
/// are staged) or by the loader (only copied), each with its slot.
pub(super) struct Uploads<'a> {
    pub(super) source: Vec<(u32, &'a SourceTile)>,
    pub(super) encoded: Vec<(u32, &'a EncodedUpload)>,
}

/// How much of the frame is drawn from its own tiles.
pub(super) struct Completeness {
    /// Every node drew its own tile, nothing waits and the cut is the
    /// frame's own: the image is final.
    pub(super) complete: bool,
    /// Some node has nothing to draw: the ellipsoid is drawn under the cut.
    pub(super) analytic_body: bool,
}

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Streaming {
    residency: Residency,
    /// The renderer's slot residency's slot 0 is (a scene may hold a range
    /// of them: several bodies share the renderer's slots).
    first_slot: u32,
    /// The renderer's slots, all of them: a range must lie inside.
    renderer_slots: u32,
    /// The workers of `Loading::Background`.
    loader: Option<TileLoader>,
    /// The upload budget of `Loading::Background` frames.
    pacer: UploadPacer,
    unreachable_policy: Unreachable,
    /// Stored tiles found unreadable so far (each reported once).
    unreadable: HashSet<TileAddress>,
    /// Failures not yet taken by the caller.
    failures: Vec<TileFailure>,
    /// Transient failures per tile, for the backoff.
    retries: HashMap<planet_terrain::geo::address::TileKey, u32>,
    /// Tiles given up because their source could not be reached
    /// ([`Unreachable::GiveUp`]).
    unreachable: HashSet<TileAddress>,
    /// What the scene says about its source failing for now.
    trouble: SourceTrouble,
}

impl Streaming {
    /// Streaming for `renderer`'s slots as `settings` say; with background
    /// loading, workers producing from `source`.
    pub(super) fn new(
        settings: &SceneSettings,
        renderer: &Renderer,
        source: Option<Arc<dyn HeightSource>>,
    ) -> Streaming {
        let mut uploads = settings.uploads_per_frame.min(renderer.settings().uploads_per_frame);
        if let Loading::Background { .. } = settings.loading {
            uploads = uploads.min(BACKGROUND_UPLOADS_PER_FRAME);
        }
        let slots = settings.slots.unwrap_or(SlotRange { first: 0, count: renderer.settings().slots });
        assert!(slots.fits(renderer.settings().slots), "{slots:?} outside the renderer's slots");
        let residency = Residency::new(ResidencySettings {
            slots: slots.count as usize,
            frames_in_flight: renderer.settings().frames_in_flight as u64,
            upload_budget_bytes: uploads * TILE_UPLOAD_BYTES,
            tile_bytes: TILE_UPLOAD_BYTES,
        });
        let loader = match settings.loading {
            Loading::OnFrame => None,
            Loading::Background { threads } => Some(TileLoader::new(source, threads)),
        };
        Streaming {
            residency,
            first_slot: slots.first,
            renderer_slots: renderer.settings().slots,
            loader,
            pacer: UploadPacer::new(uploads),
            unreachable_policy: settings.unreachable,
            unreadable: HashSet::new(),
            failures: Vec::new(),
            retries: HashMap::new(),
            unreachable: HashSet::new(),
            trouble: SourceTrouble::default(),
        }
    }

    /// The device was made again: no slot holds a tile, so residency plans
    /// from empty (the loader keeps what it produced; what it freed is
    /// asked for again).
    pub(super) fn device_lost(&mut self) {
        self.set_slots(self.slots());
    }

    /// Residency over the renderer's slots `slots` from now on, planned
    /// from empty (what they held is uploaded again as needed).
    pub(super) fn set_slots(&mut self, slots: SlotRange) {
        assert!(slots.fits(self.renderer_slots), "{slots:?} outside the renderer's {} slots", self.renderer_slots);
        let settings = ResidencySettings { slots: slots.count as usize, ..*self.residency.settings() };
        self.residency = Residency::new(settings);
        self.first_slot = slots.first;
    }

    /// The renderer's slots this scene's residency holds.
    pub(super) fn slots(&self) -> SlotRange {
        SlotRange { first: self.first_slot, count: self.residency.settings().slots as u32 }
    }

    /// Whether tiles are produced by workers (a frame never waits for one).
    pub(super) fn in_background(&self) -> bool {
        self.loader.is_some()
    }

    pub(super) fn residency(&self) -> &Residency {
        &self.residency
    }

    /// Tiles found unreadable since the last call, each stored tile once.
    pub(super) fn take_failures(&mut self) -> Vec<TileFailure> {
        std::mem::take(&mut self.failures)
    }

    /// What happened to the source since the last call (once per change).
    pub(super) fn take_source_notices(&mut self) -> Vec<String> {
        self.trouble.take_notices()
    }

    /// Has the workers read what a selection's bounds were taken without.
    pub(super) fn warm_bounds(&self) {
        self.loader.iter().for_each(TileLoader::warm_bounds);
    }

    /// The ground changed to `function` where `footprints` reach: every
    /// resident tile they touch is re-staged (ahead of streaming misses,
    /// into the slot it holds) and the workers produce from `drawn` from
    /// now on. Returns how many tiles were queued.
    pub(super) fn ground_edited(
        &mut self,
        function: &HeightFunction,
        footprints: &[Footprint],
        ellipsoid: &Ellipsoid,
        drawn: Option<Arc<dyn HeightSource>>,
    ) -> usize {
        let touched: Vec<TileAddress> = self
            .residency
            .resident_tiles()
            .filter(|&tile| {
                let (lo, hi) = function.tile_bounds(tile).map_or((0.0, 0.0), |b| (b.min_elevation, b.max_elevation));
                footprints.iter().any(|f| f.touches(ellipsoid, tile, lo, hi))
            })
            .collect();
        for &tile in &touched {
            self.residency.request_restage(tile);
        }
        if let Some(loader) = &mut self.loader {
            loader.reset(drawn);
        }
        touched.len()
    }

    /// After a frame that uploaded nothing: waits (a while) for a worker to
    /// finish a tile, so the next frame has something new to draw.
    pub(super) fn wait_for_a_tile(&self) {
        if let Some(loader) = &self.loader {
            loader.wait(std::time::Duration::from_millis(250));
        }
    }

    /// Adapts the background upload budget to what staging cost this frame.
    pub(super) fn observe_staging(&mut self, staged: usize, staging_ms: f64, rest_ms: f64) {
        self.pacer.observe(staged, staging_ms, rest_ms);
    }

    /// Plans the slots of the drawn nodes (`drawn`: tile and projected
    /// error) and produces their uploads: here, without a loader; else
    /// from what the loader produced, with tiles an edit re-staged produced
    /// here (so an edit is drawn in the next frame).
    pub(super) fn stream(
        &mut self,
        source: &dyn HeightSource,
        drawn: &[(TileAddress, f64)],
        frame: u64,
        phases: &mut FramePhases,
    ) -> Streamed {
        let Some(loader) = &mut self.loader else {
            phases.upload_budget = self.residency.settings().upload_budget_bytes / TILE_UPLOAD_BYTES;
            let plan = self.residency.plan(frame, drawn);
            let produced = produce_tiles(source, plan.uploads.iter().map(|u| u.tile).collect());
            return Streamed { plan, produced: produced.into_iter().map(|r| r.map(Ready::Source)).collect() };
        };
        loader.collect();
        phases.upload_budget = self.pacer.budget(phases.selection_ms);
        self.residency.set_upload_budget_bytes(phases.upload_budget * TILE_UPLOAD_BYTES);
        let plan = self.residency.plan_streaming(frame, drawn, &|tile| loader.is_ready(tile));
        let restaged: Vec<TileAddress> = plan.uploads.iter().filter(|u| u.restage).map(|u| u.tile).collect();
        let mut restaged = produce_tiles(source, restaged).into_iter();
        let produced = plan
            .uploads
            .iter()
            .map(|u| match u.restage {
                true => restaged.next().expect("one per re-staged upload").map(Ready::Source),
                false => loader.take(u.tile).expect("planned only once ready").map(Ready::Encoded),
            })
            .collect();
        // After taking this frame's tiles: what is not wanted any more is dropped.
        loader.request(&plan.requests);
        Streamed { plan, produced }
    }

    /// The uploads that were produced, by kind. A tile that could not be
    /// read for a transient cause (network, disk) is asked for again after
    /// a backoff; one whose data is bad keeps its ancestor for good and is
    /// reported once; any other error ends the frame.
    pub(super) fn sort_uploads<'a>(&mut self, streamed: &'a Streamed, frame: u64) -> Result<Uploads<'a>> {
        let mut uploads = Uploads { source: Vec::new(), encoded: Vec::new() };
        let mut failed_for_now = false;
        for (upload, result) in streamed.plan.uploads.iter().zip(&streamed.produced) {
            match result {
                Ok(Ready::Source(tile)) => uploads.source.push((self.first_slot + upload.slot as u32, tile)),
                Ok(Ready::Encoded(tile)) => uploads.encoded.push((self.first_slot + upload.slot as u32, tile)),
                Err(error) if is_transient(error) => {
                    failed_for_now = true;
                    self.unreachable_for_now(upload.tile, error, frame);
                }
                Err(error) => {
                    let Some(stored) = unreadable_tile(error) else {
                        return Err(RenderError::Source { tile: upload.tile.to_string(), message: error.to_string() });
                    };
                    // Its slot is not written; its nodes keep their ancestor.
                    self.residency.mark_failed(upload.tile);
                    if self.unreadable.insert(stored) {
                        self.failures.push(TileFailure { tile: upload.tile, stored, message: error.to_string() });
                    }
                }
            }
        }
        let read_some = !uploads.source.is_empty() || !uploads.encoded.is_empty();
        if read_some && !failed_for_now {
            self.trouble.read_again();
        }
        if self.unreachable_policy == Unreachable::RetryLater {
            self.trouble.settle(self.residency.retrying());
        }
        Ok(uploads)
    }

    /// A tile its source could not be reached for: its ancestor stands in,
    /// and it is asked for again after a backoff that doubles with each
    /// failure the source was asked (8 frames to 512), or given up (a shot).
    fn unreachable_for_now(&mut self, tile: TileAddress, error: &SourceError, frame: u64) {
        match self.unreachable_policy {
            Unreachable::RetryLater => {
                self.trouble.failed(error, "tiles that could not be read draw their ancestors and are asked for again");
                // A read refused while the source waits a failure out was
                // no attempt: asked again in 8 frames (it costs nothing).
                let attempts = self.retries.entry(tile.key()).or_insert(0);
                *attempts += u32::from(was_asked(error));
                let wait = 8u64 << attempts.saturating_sub(1).min(6);
                self.residency.mark_unavailable(tile, frame + wait);
            }
            Unreachable::GiveUp => {
                self.trouble.failed(error, "tiles that could not be read are given up, their ancestors drawn instead");
                self.residency.mark_failed(tile);
                self.unreachable.insert(tile);
            }
        }
    }

    /// Whether the frame drawn from `cut` and `plan` is final.
    pub(super) fn completeness(&self, cut: &Cut, lagging: bool, plan: &FramePlan, uploads: &Uploads) -> Completeness {
        let on_ancestor = |b: &&Binding| b.source != b.tile;
        // A node whose own tile failed has its ancestor for good: it waits
        // for nothing. One whose tile failed for now waits for its retry.
        let waiting_on_ancestors =
            plan.bindings.iter().filter(on_ancestor).filter(|b| !self.residency.is_given_up(b.tile)).count();
        let complete = uploads.source.is_empty()
            && uploads.encoded.is_empty()
            && !cut.deferred
            && !lagging
            && plan.pending == 0
            && waiting_on_ancestors == 0
            && (plan.covers_body || self.a_root_is_given_up());
        Completeness { complete, analytic_body: !plan.covers_body }
    }

    /// Whether a root tile was given up for good: the ground will not cover
    /// the body, and waiting for it is pointless.
    fn a_root_is_given_up(&self) -> bool {
        TileAddress::roots().into_iter().any(|root| self.residency.is_given_up(root))
    }

    /// Frees the loader's tiles the renderer staged (the first
    /// `staged_encoded` of them, in the order staged) and puts the rest
    /// back: they leave their slots and wait in the loader for a later
    /// frame. Returns the plan.
    pub(super) fn return_unstaged(&mut self, streamed: Streamed, staged_encoded: usize) -> FramePlan {
        let Some(loader) = &mut self.loader else { return streamed.plan };
        let mut staged = Vec::with_capacity(staged_encoded);
        for (upload, result) in streamed.plan.uploads.iter().zip(streamed.produced) {
            if let Ok(Ready::Encoded(tile)) = result {
                if staged.len() < staged_encoded {
                    staged.push(Ok(tile));
                } else {
                    self.residency.withdraw_upload(upload.tile);
                    loader.put_back(upload.tile, Ok(tile));
                }
            }
        }
        loader.free(staged);
        streamed.plan
    }

    /// Until when the renderer may copy the loader's tiles into staging:
    /// past the frame's target (or the uploads' own share, when the
    /// selection spent it) they wait for the next frame. `None` (no limit)
    /// when tiles are produced on the frame.
    pub(super) fn staging_limit(&self, clock: &PhaseClock) -> Option<std::time::Duration> {
        self.loader.as_ref().map(|_| {
            let share = crate::clock::thread_cpu_time() + std::time::Duration::from_secs_f64(MIN_UPLOAD_MS / 1e3);
            clock.start_plus(FRAME_CPU_TARGET_MS).max(share)
        })
    }

    /// Pairs each cut's nodes with the plan's bindings, the cuts in the order
    /// their drawn nodes were given to the plan: the plan binds the drawn nodes
    /// in that order, skipping only those with nothing to bind, so one walk
    /// does it; a culled node binds nothing. (A tile drawn by two cuts binds
    /// alike in both, so a skipped node never takes the next cut's binding.)
    /// Bindings name the renderer's slots: residency's, from the scene's first.
    pub(super) fn bind<const N: usize>(&self, cuts: [Option<&Cut>; N], plan: &FramePlan) -> [Vec<Option<Binding>>; N] {
        let first_slot = self.first_slot as usize;
        let mut planned = plan.bindings.iter().map(|b| Binding { slot: b.slot + first_slot, ..*b }).peekable();
        cuts.map(|cut| {
            cut.map_or_else(Vec::new, |cut| {
                cut.nodes
                    .iter()
                    .map(|n| match n.culled {
                        Some(_) => None,
                        None => planned.next_if(|b| b.tile == n.tile),
                    })
                    .collect()
            })
        })
    }

    /// The frame's statistics: the cut's and the plan's, with this frame's
    /// uploads and the streaming state.
    pub(super) fn statistics(&self, cut: &Cut, plan: &FramePlan, uploaded: usize) -> FrameStatistics {
        let mut statistics = FrameStatistics::new(&cut.statistics, plan);
        statistics.uploads = uploaded;
        statistics.failed_tiles = self.unreadable.len();
        statistics.unreachable_tiles = self.unreachable.len();
        statistics.source_failing = self.trouble.is_failing();
        statistics.retrying_tiles = self.residency.retrying();
        statistics.tiles_in_flight = self.loader.as_ref().map_or(0, TileLoader::in_flight);
        statistics
    }
}
