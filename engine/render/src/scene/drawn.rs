//! What a frame drew, for those who must keep clear of it: the grounds a
//! frame may draw under a point, and how far its flat lattice cells sag
//! (which lowers the sky's floor in the push constants); and frames drawn
//! until what they draw is resident.
//!
//! The key decision: the camera keeps clear of the ground it is shown, not
//! only of the finest ground. A coarse cut (a small budget) or a stand-in
//! (an ancestor drawn while a tile loads, as after a jump) draws a coarser
//! surface, which can lie above the finest one; a camera held 1.5 m over
//! the finest ground then stood under the ground it was shown and saw sky
//! through it.

use glam::DVec3;
use planet_terrain::camera::View;
use planet_terrain::geo::address::TileAddress;

use planet_terrain::abi::PushConstants;

use super::{FrameReport, ReadBack};
use crate::error::Result;
use crate::renderer::Renderer;

impl super::TerrainScene {
    /// The push constants of a view: the camera-relative clip rows (from
    /// the f64 camera, narrowed last), the sun, and the body, as the last
    /// frame's cut left them.
    pub fn constants(&self, view: &View, sun: DVec3, analytic_body: bool) -> PushConstants {
        self.look.constants(&self.ground.body, view, sun, &self.drawn(analytic_body))
    }

    /// The depths whose ground (bilinear between their samples) a frame
    /// may draw at `at`, within a sample: a node draws its lattice (every
    /// fourth sample, so the samples of two levels up) from its own tile
    /// or, while that loads, from its deepest resident ancestor. One is the
    /// last cut's node there; the other the deepest resident tile there
    /// (after a jump, the new cut's node stands on it). The camera keeps
    /// clear of these grounds as well as the finest: a coarser surface can
    /// lie above it.
    pub fn drawn_ground_depths_at(&self, at: planet_terrain::Geodetic) -> [Option<u8>; 2] {
        use planet_terrain::geo::address::MAX_DEPTH;
        let (finest, _, _) = planet_terrain::ground::locate(&self.ground.body, at, MAX_DEPTH);
        let resident_at = |tile: TileAddress| {
            (0..=tile.depth())
                .rev()
                .filter_map(|d| tile.ancestor_at(d))
                .find(|&t| self.streaming.residency().slot_of(t).is_some())
        };
        let node =
            (0..=MAX_DEPTH).filter_map(|d| finest.ancestor_at(d)).find(|t| self.selection.last_cut().contains_key(t));
        let last_cut = node.map(|n| n.depth().saturating_sub(2).min(resident_at(n).map_or(0, |t| t.depth())));
        [last_cut, resident_at(finest).map(|t| t.depth())]
    }

    /// Renders `view` until a frame is complete (every node on its own tile,
    /// nothing pending, both views' when there are two) or `max_frames`
    /// have been drawn; returns the last frame's report (with its GPU
    /// times) and image.
    pub fn render_until_resident(
        &mut self,
        renderer: &mut Renderer,
        view: &View,
        sun: DVec3,
        max_frames: u32,
    ) -> Result<(FrameReport, crate::image::RgbaImage, u32)> {
        let request = super::FrameRequest::headless(*view, sun, ReadBack::Never);
        self.render_until_resident_with(renderer, &request, max_frames, &mut |_, _| {})
    }

    /// [`Self::render_until_resident`] of `request` (its views and sun; the
    /// read-back is this function's), telling `each_frame` of every frame
    /// drawn (its number from 1 and its report) before the last, so a
    /// caller can say how a slow shot is coming along.
    pub fn render_until_resident_with(
        &mut self,
        renderer: &mut Renderer,
        request: &super::FrameRequest<'_>,
        max_frames: u32,
        each_frame: &mut dyn FnMut(u32, &FrameReport),
    ) -> Result<(FrameReport, crate::image::RgbaImage, u32)> {
        let mut frames = 0;
        loop {
            frames += 1;
            let last = frames >= max_frames;
            let mode = if last { ReadBack::Always } else { ReadBack::WhenComplete };
            let delivery = super::Delivery { read_back: mode, ..request.delivery };
            let mut report = self.frame(renderer, &super::FrameRequest { delivery, ..*request })?;
            if report.complete || last {
                report.gpu = renderer.finish()?;
                let image = renderer.take_image()?.expect("the frame was read back");
                return Ok((report, image, frames));
            }
            each_frame(frames, &report);
            // Nothing new to draw until a worker finishes a tile.
            if report.statistics.uploads == 0 {
                self.streaming.wait_for_a_tile();
            }
        }
    }
}
