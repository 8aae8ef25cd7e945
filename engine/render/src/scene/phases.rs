//! The phases of one frame of a [`TerrainScene`], each a function that
//! returns a small struct: select the cut, stream its tiles (plan the
//! slots, take what the loader produced or produce it here), sort the
//! uploads (marking tiles that failed), bind the nodes, judge whether the
//! frame is complete, and, after the renderer, hand back what it could not
//! stage. `TerrainScene::frame_with` calls them in that order and times
//! each into `FramePhases`.
//!
//! The key decision: the phases share no state but what they return and
//! the scene's own fields, so what each one decides (and what a frame's
//! `--stats` phases measure) can be read, and changed, one at a time.

use std::sync::Arc;

use planet_terrain::abi::NodeRecord;
use planet_terrain::camera::View;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::ground::{HeightSource, SourceError, SourceTile};
use planet_terrain::lod::residency::FramePlan;
use planet_terrain::lod::{Binding, Cut, FrameStatistics};

use super::source_error;
use super::{TerrainScene, Unreachable};
use crate::conv::{EncodedUpload, TILE_UPLOAD_BYTES};
use crate::error::{RenderError, Result};
use crate::frame::TileFailure;
use crate::loader::TileLoader;
use crate::pacing::{FRAME_CPU_TARGET_MS, FramePhases, MIN_UPLOAD_MS, PhaseClock};
use crate::renderer::Renderer;
use crate::tiles::{Ready, is_transient, produce_tiles, unreadable_tile, was_asked};

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
    pub(super) nodes_on_ancestors: usize,
    /// Some node has nothing to draw: the ellipsoid is drawn under the cut.
    pub(super) analytic_body: bool,
}

impl TerrainScene {
    /// Selects the cut for `view` (on the frame or from the selection
    /// thread), recording its figures in `phases`.
    pub(super) fn select_cut(
        &mut self,
        source: &Arc<dyn HeightSource>,
        view: &View,
        phases: &mut FramePhases,
    ) -> Result<crate::selection::Selected> {
        let mut selection = self.settings.selection;
        selection.near_m = selection.near_m.max(1e-3);
        let selected = self.selection.select(source, view, &selection).map_err(source_error(None))?;
        if selected.bounds_from_source > 0 {
            // Have the workers read what these bounds were taken without.
            self.loader.iter().for_each(TileLoader::warm_bounds);
        }
        (phases.bounds_from_source, phases.selection_lagging) = (selected.bounds_from_source, selected.lagging);
        phases.selection_wait_ms = selected.wait_ms;
        Ok(selected)
    }

    /// Plans the slots of the drawn nodes (`drawn`: tile and projected
    /// error) and produces their uploads: here, without a loader; else
    /// from what the loader produced, with tiles an edit re-staged produced
    /// here (so an edit is drawn in the next frame).
    pub(super) fn stream(
        &mut self,
        source: &dyn HeightSource,
        drawn: &[(TileAddress, f64)],
        phases: &mut FramePhases,
    ) -> Streamed {
        let Some(loader) = &mut self.loader else {
            phases.upload_budget = self.residency.settings().upload_budget_bytes / TILE_UPLOAD_BYTES;
            let plan = self.residency.plan(self.frame, drawn);
            let produced = produce_tiles(source, plan.uploads.iter().map(|u| u.tile).collect());
            return Streamed { plan, produced: produced.into_iter().map(|r| r.map(Ready::Source)).collect() };
        };
        loader.collect();
        phases.upload_budget = self.pacer.budget(phases.selection_ms);
        self.residency.set_upload_budget_bytes(phases.upload_budget * TILE_UPLOAD_BYTES);
        let plan = self.residency.plan_streaming(self.frame, drawn, &|tile| loader.is_ready(tile));
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
    pub(super) fn sort_uploads<'a>(&mut self, streamed: &'a Streamed) -> Result<Uploads<'a>> {
        let mut uploads = Uploads { source: Vec::new(), encoded: Vec::new() };
        let mut failed_for_now = false;
        for (upload, result) in streamed.plan.uploads.iter().zip(&streamed.produced) {
            match result {
                Ok(Ready::Source(tile)) => uploads.source.push((upload.slot as u32, tile)),
                Ok(Ready::Encoded(tile)) => uploads.encoded.push((upload.slot as u32, tile)),
                Err(error) if is_transient(error) => {
                    failed_for_now = true;
                    self.unreachable_for_now(upload.tile, error);
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
        if self.settings.unreachable == Unreachable::RetryLater {
            self.trouble.settle(self.residency.retrying());
        }
        Ok(uploads)
    }

    /// A tile its source could not be reached for: its ancestor stands in,
    /// and it is asked for again after a backoff that doubles with each
    /// failure the source was asked (8 frames to 512), or given up (a shot).
    fn unreachable_for_now(&mut self, tile: TileAddress, error: &SourceError) {
        match self.settings.unreachable {
            Unreachable::RetryLater => {
                self.trouble.failed(error, "tiles that could not be read draw their ancestors and are asked for again");
                // A read refused while the source waits a failure out was
                // no attempt: asked again in 8 frames (it costs nothing).
                let attempts = self.retries.entry(tile.key()).or_insert(0);
                *attempts += u32::from(was_asked(error));
                let wait = 8u64 << attempts.saturating_sub(1).min(6);
                self.residency.mark_unavailable(tile, self.frame + wait);
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
        let nodes_on_ancestors = plan.bindings.iter().filter(on_ancestor).count();
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
        Completeness { complete, nodes_on_ancestors, analytic_body: !plan.covers_body }
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

    /// The drawn nodes' records, remembering the cut (the selection thread
    /// follows it, the horizon map reads its coarsest depth).
    pub(super) fn record_cut(
        &mut self,
        renderer: &Renderer,
        view: &View,
        cut: &Cut,
        bindings: &[Option<Binding>],
    ) -> Vec<NodeRecord> {
        self.last_cut.clear();
        self.last_cut.extend(cut.nodes.iter().map(|n| (n.tile, ())));
        self.coarsest_drawn = cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| n.tile.depth()).min();
        self.records(renderer, view, cut, bindings)
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

/// Pairs the cut's nodes with the plan's bindings: the plan binds the
/// drawn nodes in the order given, skipping only those with nothing to
/// bind, so one walk does it; a culled node binds nothing.
pub(super) fn bind(cut: &Cut, plan: &FramePlan) -> Vec<Option<Binding>> {
    let mut planned = plan.bindings.iter().peekable();
    cut.nodes
        .iter()
        .map(|n| match n.culled {
            Some(_) => None,
            None => planned.next_if(|b| b.tile == n.tile).copied(),
        })
        .collect()
}
