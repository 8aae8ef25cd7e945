//! Selection, a scene's first part: the cut a frame draws, and what is
//! remembered of it. It selects (on the frame, or from the selection
//! thread), holds a cut still when asked (`freeze`), and turns the drawn
//! nodes into the GPU's records, remembering the last cut's tiles and its
//! coarsest depth (the camera keeps clear of them; the sky's floor sags
//! with it).
//!
//! The key decision: the cut and everything derived from it live here, so
//! what a frame's `--stats` selection and records phases measure is this
//! part alone, and a held cut is one value.

use std::sync::Arc;

use planet_terrain::abi::NodeRecord;
use planet_terrain::camera::View;
use planet_terrain::geo::address::{TileAddress, TileMap};
use planet_terrain::geo::body::Ellipsoid;
use planet_terrain::ground::HeightSource;
use planet_terrain::lod::{Binding, Cut, FrameStatistics, SelectionSettings, build_records};

use super::source_error;
use crate::error::Result;
use crate::pacing::FramePhases;
use crate::renderer::Renderer;
use crate::selection::CutSelection;
pub(super) use crate::selection::Selected;

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Selection {
    /// Where the cut is selected (on the frame, or on its own thread when
    /// tiles load in the background), with the bounds it was given.
    cuts: CutSelection,
    pub(super) settings: SelectionSettings,
    freeze_next: bool,
    /// A cut held still (`freeze`): drawn from wherever the camera goes.
    frozen: Option<Frozen>,
    /// The last selected cut's tiles ([`super::TerrainScene::drawn_ground_depths_at`]).
    last_cut: TileMap<TileAddress, ()>,
    /// The shallowest depth the last cut drew (the hole count's floor).
    coarsest_drawn: Option<u8>,
}

/// A cut held still, with what it was bound to.
#[derive(Debug)]
pub(super) struct Frozen {
    pub(super) cut: Cut,
    pub(super) bindings: Vec<Option<Binding>>,
    pub(super) statistics: FrameStatistics,
}

impl Selection {
    /// Selection as `settings` say; on its own thread when tiles load in
    /// the background.
    pub(super) fn new(settings: SelectionSettings, in_background: bool) -> Selection {
        Selection {
            cuts: if in_background { CutSelection::on_thread() } else { CutSelection::on_frame() },
            settings,
            freeze_next: false,
            frozen: None,
            last_cut: TileMap::default(),
            coarsest_drawn: None,
        }
    }

    /// Selects the cut for `view` (on the frame or from the selection
    /// thread), recording its figures in `phases`.
    pub(super) fn select(
        &mut self,
        source: &Arc<dyn HeightSource>,
        view: &View,
        phases: &mut FramePhases,
    ) -> Result<Selected> {
        let mut settings = self.settings;
        settings.near_m = settings.near_m.max(1e-3);
        let selected = self.cuts.select(source, view, &settings).map_err(source_error(None))?;
        (phases.bounds_from_source, phases.selection_lagging) = (selected.bounds_from_source, selected.lagging);
        phases.selection_wait_ms = selected.wait_ms;
        Ok(selected)
    }

    /// The drawn nodes' records, remembering the cut (the selection thread
    /// follows it, the horizon map reads its coarsest depth).
    pub(super) fn record(
        &mut self,
        renderer: &Renderer,
        ellipsoid: &Ellipsoid,
        view: &View,
        cut: &Cut,
        bindings: &[Option<Binding>],
    ) -> Vec<NodeRecord> {
        self.last_cut.clear();
        self.last_cut.extend(cut.nodes.iter().map(|n| (n.tile, ())));
        self.coarsest_drawn = cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| n.tile.depth()).min();
        records(renderer, ellipsoid, view, cut, bindings)
    }

    /// The held cut's records from `view`, and its statistics, if a cut is held.
    pub(super) fn held(
        &self,
        renderer: &Renderer,
        ellipsoid: &Ellipsoid,
        view: &View,
    ) -> Option<(Vec<NodeRecord>, FrameStatistics)> {
        let frozen = self.frozen.as_ref()?;
        Some((records(renderer, ellipsoid, view, &frozen.cut, &frozen.bindings), frozen.statistics))
    }

    /// Holds `cut` if a freeze was asked for since the last frame.
    pub(super) fn hold_if_asked(&mut self, cut: Cut, bindings: Vec<Option<Binding>>, statistics: FrameStatistics) {
        if std::mem::take(&mut self.freeze_next) {
            self.frozen = Some(Frozen { cut, bindings, statistics });
        }
    }

    /// Holds the next cut still, or lets a held one go.
    pub(super) fn set_frozen(&mut self, frozen: bool) {
        if !frozen {
            self.frozen = None;
        } else if self.frozen.is_none() {
            self.freeze_next = true;
        }
    }

    pub(super) fn is_frozen(&self) -> bool {
        self.frozen.is_some() || self.freeze_next
    }

    /// A held cut was bound to the old ground; an edit lets it go.
    pub(super) fn release(&mut self) {
        self.frozen = None;
    }

    pub(super) fn last_cut(&self) -> &TileMap<TileAddress, ()> {
        &self.last_cut
    }

    pub(super) fn coarsest_drawn(&self) -> Option<u8> {
        self.coarsest_drawn
    }
}

/// Records of a cut's drawn nodes. Bindings never name a slot uploaded
/// this frame (residency makes uploads bindable from the next), so what
/// the renderer last put in each bound slot is what the frame reads.
fn records(
    renderer: &Renderer,
    ellipsoid: &Ellipsoid,
    view: &View,
    cut: &Cut,
    bindings: &[Option<Binding>],
) -> Vec<NodeRecord> {
    build_records(ellipsoid, view, cut, bindings, |b| {
        let held = renderer.slot_content(b.slot as u32);
        let base = f64::from(held.height_base);
        Some((base, base + 65535.0 * f64::from(held.height_step)))
    })
}
