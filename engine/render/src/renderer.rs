//! The renderer's safe face: the public `Renderer` and the types a frame
//! goes in and comes out as.
//!
//! The key decision: this file holds no `unsafe`. It deals in domain types
//! (tiles, node records, slot contents) and drives [`vk::Backend`], which
//! deals in Vulkan handles: it encodes each frame's tiles into the staging
//! ring, completes records with what their slots hold (`conv`), keeps one
//! write per slot per frame (the last), and leaves recording, submission and
//! every barrier to the backend.

use std::collections::HashSet;

use planet_terrain::abi::{HorizonBasis, LATTICE_SIDE, NodeRecord, PushConstants, RECORD_BYTES};
use planet_terrain::ground::SourceTile;

use crate::conv::{self, SlotContent, TILE_UPLOAD_BYTES};
use crate::error::{RenderError, Result};
use crate::image::RgbaImage;
use crate::recovery::LiveBackend;
use crate::vk::Backend;
use crate::vk::device::{GpuSettings, WindowHandles};
use crate::vk::frames::{Retired, SlotWrite};

/// Vertices one node instance draws: the 33 x 33 lattice, then 4 x 33 skirt.
pub use planet_terrain::abi::NODE_VERTICES;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RendererSettings {
    pub size: (u32, u32),
    /// Array layers per slot image: how many tiles can be resident.
    pub slots: u32,
    /// Most node records one frame may draw.
    pub max_nodes: usize,
    pub frames_in_flight: usize,
    /// Most tile uploads one frame may carry (the staging ring's size).
    pub uploads_per_frame: usize,
    pub gpu: GpuSettings,
}

impl Default for RendererSettings {
    fn default() -> Self {
        RendererSettings {
            size: (1280, 720),
            slots: 512,
            max_nodes: 8192,
            frames_in_flight: 2,
            uploads_per_frame: 32,
            gpu: GpuSettings::default(),
        }
    }
}

/// Draw calls recorded per pass in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawCalls {
    pub terrain_depth: u32,
    pub terrain_shaded: u32,
    /// The analytic ellipsoid (0 when the cut covers the body).
    pub body: u32,
    pub sky: u32,
    /// The UI pass (egui's panels), 0 or 1.
    pub ui: u32,
    /// Rigid bodies, one draw each ([`Renderer::set_bodies`]).
    pub bodies: u32,
}

/// GPU milliseconds per pass of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassTimes {
    pub terrain_depth_ms: f64,
    pub terrain_shaded_ms: f64,
    pub sky_ms: f64,
    /// Every pass of the second view (0 without one).
    pub second_view_ms: f64,
}

impl PassTimes {
    /// The frame's GPU time: every pass timed.
    pub fn total_ms(&self) -> f64 {
        self.terrain_depth_ms + self.terrain_shaded_ms + self.sky_ms + self.second_view_ms
    }
}

/// A rectangle of the frame's target, pixels from its top-left corner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl PixelRect {
    /// The whole of a target of `size`.
    pub fn whole(size: (u32, u32)) -> PixelRect {
        PixelRect { x: 0, y: 0, width: size.0, height: size.1 }
    }

    /// Whether `self` lies inside a target of `size`, with a pixel at least.
    pub fn fits(&self, size: (u32, u32)) -> bool {
        self.width > 0
            && self.height > 0
            && u64::from(self.x) + u64::from(self.width) <= u64::from(size.0)
            && u64::from(self.y) + u64::from(self.height) <= u64::from(size.1)
    }

    pub(crate) fn to_vk(self) -> ash::vk::Rect2D {
        ash::vk::Rect2D {
            offset: ash::vk::Offset2D { x: self.x as i32, y: self.y as i32 },
            extent: ash::vk::Extent2D { width: self.width, height: self.height },
        }
    }
}

/// How a frame's picture is composed with the previous frame's: a session
/// with several bodies draws the far ones first, each a frame of its own
/// without the sky, then the body the camera is at over them with its sky.
/// Their depths compare (one camera, one near plane, reversed Z), so the
/// nearer ground hides the farther, and the sky lands only where no body did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compose {
    /// Keep the previous frame's colour and depth (else clear them).
    pub over_previous: bool,
    /// Draw the sky (stars, the body's air) where nothing else landed.
    pub sky: bool,
}

impl Default for Compose {
    /// A frame of its own: cleared, with its sky.
    fn default() -> Compose {
        Compose { over_previous: false, sky: true }
    }
}

/// A frame's second view: its own constants (camera, clip rows), the
/// records from `first_record` on, its horizon basis, drawn over `area`
/// after the main view (beside it, or an inset over it).
#[derive(Clone, Copy, Debug)]
pub struct SecondViewInput {
    pub constants: PushConstants,
    /// Records before this index are the main view's, the rest this view's.
    pub first_record: usize,
    /// The horizon map from this view's camera (the map is the main
    /// view's; `HorizonBasis::default()`: no map, lit and open).
    pub horizon: HorizonBasis,
    pub area: PixelRect,
}

/// What one pass's pipeline statistics query counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassCounts {
    /// Triangles the input assembler read: instances x 2304 (the lattice's
    /// 2048 and the skirt's 256).
    pub input_primitives: u64,
    /// Vertex shader runs. At least one per distinct vertex per instance
    /// (`NODE_VERTICES`); more where the device's reuse of shaded vertices
    /// across neighbouring triangles falls short.
    pub vertex_invocations: u64,
    /// Triangles out of the clipper (culled ones gone, clipped ones split).
    pub clipping_primitives: u64,
    /// Fragment shader runs (0 in the depth pass, which has no fragment
    /// shader).
    pub fragment_invocations: u64,
}

/// The GPU work of a frame's two terrain passes, as the device counted it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkCounts {
    pub terrain_depth: PassCounts,
    pub terrain_shaded: PassCounts,
    /// Pixels the terrain (and the analytic body, when drawn) covers: the
    /// frame's pixels less those the sky's draw passed, by a precise
    /// occlusion query, so counted apart from the shaded pass. `None` where
    /// the device cannot count occlusion exactly.
    pub covered_pixels: Option<u64>,
    /// Fragments that passed the shaded pass's depth test (a precise
    /// occlusion query): those its fragment shader runs for, since it
    /// declares early fragment tests (helper invocations aside). With the
    /// prepass at work, each covered terrain pixel once. `None` as above.
    pub shaded_samples_passed: Option<u64>,
}

impl WorkCounts {
    /// Fragment shader runs of the shaded pass per covered pixel: 1 when
    /// the depth prepass leaves the shaded pass exactly the visible
    /// fragments to shade.
    pub fn shaded_fragments_per_covered_pixel(&self) -> Option<f64> {
        self.covered_pixels.filter(|&p| p > 0).map(|p| self.terrain_shaded.fragment_invocations as f64 / p as f64)
    }

    /// Fragments through the shaded pass's early depth test per covered
    /// pixel: the shading the prepass leaves, the same measure on every
    /// device whatever its statistics count (1 when each covered pixel is
    /// shaded once).
    pub fn shaded_samples_per_covered_pixel(&self) -> Option<f64> {
        match (self.shaded_samples_passed, self.covered_pixels) {
            (Some(samples), Some(pixels)) if pixels > 0 => Some(samples as f64 / pixels as f64),
            _ => None,
        }
    }
}

/// One frame's worth of work.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput<'a> {
    pub constants: PushConstants,
    /// Records to draw; the renderer fills each one's decode fields from
    /// what its slot holds.
    pub records: &'a [NodeRecord],
    /// Tiles to write into slots before drawing, encoded here.
    pub uploads: &'a [(u32, &'a SourceTile)],
    /// Tiles to write into slots before drawing, encoded already (by the
    /// loader's threads): the frame only copies them. A slot is in one of
    /// the two lists at most.
    pub encoded: &'a [(u32, &'a crate::conv::EncodedUpload)],
    /// The calling thread's CPU time ([`crate::clock::thread_cpu_time`])
    /// past which no more of `encoded` is staged, the first
    /// `pacing::MIN_UPLOADS` excepted: the frame's time is up, and
    /// the caller keeps the rest for a later frame
    /// ([`FrameOutcome::staged_encoded`]). `None`: all of them.
    pub staging_limit: Option<std::time::Duration>,
    /// The depths the uploads' colour and classes come from (deeper tiles
    /// carry them resampled).
    pub data_depths: crate::conv::DataDepths,
    /// Copy the finished image back for [`Renderer::take_image`].
    pub read_back: bool,
    /// Draw the terrain's triangles as lines (when the device can).
    pub wireframe: bool,
    /// egui's panels, drawn over everything else, if any.
    pub ui: Option<&'a UiFrame>,
    /// Present to the window (a windowed renderer only).
    pub present: bool,
    /// The horizon map to shade with; `None`: no cast shadows and open sky
    /// everywhere.
    pub horizon: Option<HorizonInput<'a>>,
    /// Where the main view is drawn (`None`: the whole target).
    pub main_area: Option<PixelRect>,
    /// Whether the frame draws over the last one's picture, and its sky.
    pub compose: Compose,
    /// A second view, drawn after the main one.
    pub second: Option<SecondViewInput>,
}

/// The horizon map a frame shades with (`planet_terrain::ground::horizon`).
#[derive(Clone, Copy, Debug)]
pub struct HorizonInput<'a> {
    pub basis: HorizonBasis,
    /// A new map's texels (`HorizonMap::texel_bytes`), written before the
    /// frame draws; `None` when the image holds the map already.
    pub texels: Option<&'a [u8]>,
}

/// What egui produced for one frame: the textures to change first and the
/// clipped meshes to draw (in points, `pixels_per_point` pixels each).
/// Pass every one egui produces to a frame, even with nothing to draw:
/// its texture changes (the font atlas first) are applied only there.
#[derive(Debug, Default)]
pub struct UiFrame {
    pub textures: egui::TexturesDelta,
    pub primitives: Vec<egui::ClippedPrimitive>,
    pub pixels_per_point: f32,
}

impl Drop for UiFrame {
    fn drop(&mut self) {
        // The deltas were applied by the frame that drew this (egui's own
        // check would otherwise call every drop a lost update).
        self.textures.clear();
    }
}

/// What the GPU reported for a frame once it completed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompletedFrame {
    pub frame: u64,
    pub gpu: Option<PassTimes>,
    /// Pixels whose ray met the body below its deepest ground and showed
    /// the sky: holes in the cover (0 while the analytic body is drawn).
    pub hole_pixels: u32,
    /// Pixels of ground no pack measured (`NO_DATA_CLASS`), drawn as no data.
    pub no_data_pixels: u32,
    /// The terrain passes' work as counted by the device; `None` where it
    /// has no pipeline statistics queries.
    pub counts: Option<WorkCounts>,
}

/// What recording a frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameOutcome {
    pub frame: u64,
    pub draw_calls: DrawCalls,
    pub triangles: u64,
    /// GPU times of the frame this one waited for (the oldest in flight).
    pub previous_gpu_times: Option<PassTimes>,
    /// Whether the frame reached the window (false when the surface was
    /// out of date or the window minimised).
    pub presented: bool,
    /// Milliseconds spent blocked on the GPU (the oldest frame in flight,
    /// the swapchain): host time that is not host work.
    pub waited_ms: f64,
    /// The calling thread's CPU time copying and encoding the uploads into
    /// staging (what the scene's upload budget trades against selection).
    pub staging_ms: f64,
    /// How many of `FrameInput::encoded`, from the first, were staged.
    pub staged_encoded: usize,
}

/// Lattice triangles (each cell split along its (i, j)-(i+1, j+1) diagonal,
/// the direction the morph's cell-centre blend assumes) row by row, each
/// skirt quad right after the lattice row whose edge vertices it hangs
/// from: the first row's edge after row 0, the two side quads of row `j`
/// after row `j`, the last row's edge after the last row. The triangles are
/// those of lattice-then-skirt; the order lets a device's reuse of shaded
/// vertices reach the edge vertices a skirt shares with the lattice, which
/// a skirt drawn after the whole lattice shades a second time (lavapipe:
/// 1530 vertex shader runs per node before, see docs/PERFORMANCE.md).
pub fn lattice_indices() -> Vec<u16> {
    let v = |i: u32, j: u32| (j * LATTICE_SIDE + i) as u16;
    let last = LATTICE_SIDE - 1;
    let skirt_quad = |out: &mut Vec<u16>, edge: u32, k: u32| {
        let on_edge = |k: u32| match edge {
            0 => v(0, k),
            1 => v(last, k),
            2 => v(k, 0),
            _ => v(k, last),
        };
        let skirt = |k: u32| (LATTICE_SIDE * LATTICE_SIDE + edge * LATTICE_SIDE + k) as u16;
        out.extend_from_slice(&[on_edge(k), on_edge(k + 1), skirt(k + 1), on_edge(k), skirt(k + 1), skirt(k)]);
    };
    let mut out = Vec::with_capacity(lattice_indices_len() as usize);
    for j in 0..last {
        for i in 0..last {
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i, j + 1), v(i + 1, j + 1));
            out.extend_from_slice(&[a, b, d, a, d, c]);
        }
        skirt_quad(&mut out, 0, j);
        skirt_quad(&mut out, 1, j);
        let row_edge = match j {
            0 => Some(2),
            _ if j == last - 1 => Some(3),
            _ => None,
        };
        if let Some(edge) = row_edge {
            for k in 0..last {
                skirt_quad(&mut out, edge, k);
            }
        }
    }
    out
}

/// The Vulkan terrain renderer: one instanced draw of the shared lattice
/// per terrain pass, tiles in array-image slots.
pub struct Renderer {
    backend: LiveBackend,
    /// How each slot decodes: what the last write into it put there.
    slot_contents: Vec<SlotContent>,
    /// How it was made, to make it again after a lost device.
    window: Option<WindowHandles>,
    vsync: bool,
    /// Frames submitted on devices lost before this one: numbers go on.
    frames_before: u64,
    /// Validation messages of devices lost before this one.
    earlier_messages: Vec<String>,
    /// The frame to fail as a lost device does (a test hook, once).
    lose_device_at: Option<u64>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("backend", &self.backend).finish_non_exhaustive()
    }
}

impl Renderer {
    /// A headless renderer: frames are read back, never presented.
    pub fn new(settings: RendererSettings) -> Result<Renderer> {
        Renderer::create(settings, None, true)
    }

    /// A renderer that presents to `window` (vsync: FIFO; otherwise
    /// immediate or mailbox where the surface offers them).
    pub fn new_windowed(settings: RendererSettings, window: WindowHandles, vsync: bool) -> Result<Renderer> {
        Renderer::create(settings, Some(window), vsync)
    }

    fn create(settings: RendererSettings, window: Option<WindowHandles>, vsync: bool) -> Result<Renderer> {
        assert!(settings.frames_in_flight >= 1 && settings.slots >= 1 && settings.size.0 > 0 && settings.size.1 > 0);
        let backend = LiveBackend(Some(Backend::new(settings, window, vsync)?));
        Ok(Renderer {
            backend,
            slot_contents: vec![SlotContent::default(); settings.slots as usize],
            window,
            vsync,
            frames_before: 0,
            earlier_messages: Vec::new(),
            lose_device_at: crate::recovery::device_lost_at_from_env(),
        })
    }

    /// Makes the device again after it was lost (`RenderError::DeviceLost`):
    /// every GPU object is dropped and made anew with the same settings,
    /// the slots hold nothing, and frame numbers and validation messages
    /// go on (`recovery.rs`). The caller re-uploads what it draws
    /// (`TerrainScene::frame` does).
    pub fn recover(&mut self) -> Result<()> {
        let settings = *self.backend.settings();
        self.earlier_messages.extend(self.backend.validation_messages());
        self.frames_before += self.backend.frames_submitted();
        // The old backend goes first: a window takes one swapchain at a time.
        drop(self.backend.0.take());
        self.backend.0 = Some(Backend::new(settings, self.window, self.vsync)?);
        self.slot_contents = vec![SlotContent::default(); settings.slots as usize];
        Ok(())
    }

    /// Frame `frame` (a number of [`Renderer::frames_submitted`]) fails as
    /// a lost device does, once: a test hook (`PLANET_DEVICE_LOST_AT`).
    pub fn lose_device_at(&mut self, frame: u64) {
        self.lose_device_at = Some(frame);
    }

    /// Frames submitted so far (the next frame's number).
    pub fn frames_submitted(&self) -> u64 {
        self.frames_before + self.backend.frames_submitted()
    }

    /// The frames the GPU finished since the last call, oldest first.
    pub fn take_completed(&mut self) -> Vec<CompletedFrame> {
        let before = self.frames_before;
        let mut completed = self.backend.take_completed();
        completed.iter_mut().for_each(|c| c.frame += before);
        completed
    }

    /// Whether the device can draw lines (the wireframe toggle).
    pub fn supports_wireframe(&self) -> bool {
        self.backend.supports_wireframe()
    }

    /// Whether the device counts each terrain pass's work
    /// ([`CompletedFrame::counts`]): pipeline statistics queries.
    pub fn counts_work(&self) -> bool {
        self.backend.counts_work()
    }

    /// Resizes the target (and the swapchain of a windowed renderer);
    /// waits for the device first. A zero size is ignored (minimised).
    pub fn resize(&mut self, size: (u32, u32)) -> Result<()> {
        self.backend.resize(size)
    }

    pub fn device_name(&self) -> &str {
        self.backend.device_name()
    }

    /// Slots along each side of a slot image's layer: 1 unless the slots
    /// outnumber the device's array layers (`slot_layout.rs`).
    pub fn slots_per_layer_side(&self) -> u32 {
        self.backend.slot_layout().per_side
    }

    /// The rigid bodies every frame draws from now on, camera-relative (so
    /// set them each frame, with that frame's camera).
    pub fn set_bodies(&mut self, bodies: &[crate::bodies::BodyDraw]) {
        self.backend.set_bodies(bodies);
    }

    pub fn settings(&self) -> &RendererSettings {
        self.backend.settings()
    }

    /// Validation messages reported so far (empty without validation),
    /// lost devices' included.
    pub fn validation_messages(&self) -> Vec<String> {
        let mut messages = self.earlier_messages.clone();
        messages.extend(self.backend.validation_messages());
        messages
    }

    /// How slot `slot` decodes (what the last upload into it put there).
    pub fn slot_content(&self, slot: u32) -> SlotContent {
        self.slot_contents[slot as usize]
    }

    /// Records and submits one frame (and presents it, for a windowed
    /// renderer asked to).
    pub fn render(&mut self, input: &FrameInput<'_>) -> Result<FrameOutcome> {
        if self.lose_device_at.is_some_and(|at| at == self.frames_submitted()) {
            self.lose_device_at = None;
            return Err(RenderError::DeviceLost { during: "a frame (PLANET_DEVICE_LOST_AT, a test hook)" });
        }
        let settings = *self.backend.settings();
        if input.records.len() > settings.max_nodes {
            return Err(RenderError::TooManyNodes { records: input.records.len(), capacity: settings.max_nodes });
        }
        let areas = input.main_area.into_iter().chain(input.second.map(|s| s.area));
        for area in areas {
            assert!(area.fits(settings.size), "a view's area {area:?} outside the {:?} target", settings.size);
        }
        assert!(
            input.second.is_none_or(|s| s.first_record <= input.records.len()),
            "a second view's records start past the frame's"
        );
        assert!(
            input.uploads.len() + input.encoded.len() <= settings.uploads_per_frame,
            "uploads beyond the staging ring"
        );
        let uploads = last_write_per_slot(input.uploads);
        let waiting = std::time::Instant::now();
        let (frame, previous_gpu_times) = self.backend.begin_frame()?;
        let waited_ms = waiting.elapsed().as_secs_f64() * 1e3;

        // Stage uploads and note how each slot decodes.
        let staging_started = crate::clock::thread_cpu_time();
        let staging = self.backend.staging_mut(&frame);
        let mut writes = Vec::with_capacity(uploads.len());
        for (k, (slot, tile)) in uploads.iter().enumerate() {
            let block = &mut staging[k * TILE_UPLOAD_BYTES..(k + 1) * TILE_UPLOAD_BYTES];
            self.slot_contents[*slot as usize] = conv::encode_tile(tile, input.data_depths, block);
            writes.push(SlotWrite { slot: *slot, colour: tile.colour.is_some(), classes: tile.classes.is_some() });
        }
        let mut staged_encoded = 0;
        for (slot, tile) in input.encoded {
            let late = |limit: std::time::Duration| crate::clock::thread_cpu_time() >= limit;
            if staged_encoded >= crate::pacing::MIN_UPLOADS && input.staging_limit.is_some_and(late) {
                break;
            }
            staged_encoded += 1;
            debug_assert!(!uploads.iter().any(|(s, _)| s == slot), "slot {slot} written twice in one frame");
            let k = writes.len();
            staging[k * TILE_UPLOAD_BYTES..(k + 1) * TILE_UPLOAD_BYTES].copy_from_slice(&tile.bytes);
            self.slot_contents[*slot as usize] = tile.content;
            writes.push(SlotWrite { slot: *slot, colour: tile.colour, classes: tile.classes });
        }
        let staging_ms = (crate::clock::thread_cpu_time() - staging_started).as_secs_f64() * 1e3;
        self.write_records(&frame, input.records);
        let (horizon_frame, horizon_staging) = self.backend.horizon_mut(&frame);
        let horizon = input.horizon.map_or(HorizonBasis::default(), |h| h.basis);
        let second_horizon = input.second.map_or(HorizonBasis::default(), |s| s.horizon);
        for (k, basis) in [horizon, second_horizon].iter().enumerate() {
            let bytes = bytemuck::bytes_of(basis);
            horizon_frame[k * bytes.len()..(k + 1) * bytes.len()].copy_from_slice(bytes);
        }
        if let Some(texels) = input.horizon.and_then(|h| h.texels) {
            assert!(
                texels.len() <= horizon_staging.len() && texels.len().is_multiple_of(conv::HORIZON_LAYER_BYTES),
                "a horizon map is whole levels"
            );
            horizon_staging[..texels.len()].copy_from_slice(texels);
        }
        let submitted = self.backend.submit(frame, input, &writes)?;
        Ok(FrameOutcome {
            frame: submitted.frame,
            draw_calls: submitted.draw_calls,
            triangles: input.records.len() as u64 * u64::from(lattice_indices_len() / 3),
            previous_gpu_times,
            presented: submitted.presented,
            waited_ms: waited_ms + submitted.waited_ms,
            staging_ms,
            staged_encoded,
        })
    }

    /// Writes `records` into retired frame resources, each completed with
    /// what its slot holds (`conv::filled_record`).
    fn write_records(&mut self, frame: &Retired, records: &[NodeRecord]) {
        let contents = &self.slot_contents;
        let bytes = self.backend.records_mut(frame);
        for (record, out) in records.iter().zip(bytes.chunks_exact_mut(RECORD_BYTES)) {
            let filled = conv::filled_record(record, contents[record.slot as usize]);
            out.copy_from_slice(bytemuck::bytes_of(&filled));
        }
    }

    /// Waits for every frame in flight; returns the GPU times of the last one.
    pub fn finish(&mut self) -> Result<Option<PassTimes>> {
        self.backend.finish()
    }

    /// The image of the last frame rendered with `read_back`, once finished.
    pub fn take_image(&mut self) -> Result<Option<RgbaImage>> {
        self.backend.read_back()
    }

    /// Runs the capture variant of the terrain vertex shader over `records`
    /// and returns every vertex's camera-relative position (`NODE_VERTICES`
    /// per record): the GPU half of the conformance test. `uploads` are
    /// written first. `None` when the device cannot store from vertex shaders.
    pub fn capture_vertices(
        &mut self,
        constants: PushConstants,
        records: &[NodeRecord],
        uploads: &[(u32, &SourceTile)],
    ) -> Result<Option<Vec<[f32; 3]>>> {
        if !self.backend.can_capture() {
            return Ok(None);
        }
        // Upload through an ordinary frame with nothing drawn.
        self.render(&FrameInput {
            constants,
            records: &[],
            uploads,
            encoded: &[],
            staging_limit: None,
            data_depths: Default::default(),
            read_back: false,
            wireframe: false,
            ui: None,
            present: false,
            horizon: None,
            main_area: None,
            compose: Compose::default(),
            second: None,
        })?;
        self.finish()?;
        let (frame, _) = self.backend.begin_frame()?;
        self.write_records(&frame, records);
        self.backend.capture(frame, constants, records.len())
    }
}

/// One upload per slot, the last one given for it (in the order of those
/// last writes): writing a slot twice in one frame would copy twice into
/// one layer, and only the last write is what the slot holds afterwards.
/// `Residency` never plans that (a slot is written at most once per plan);
/// this keeps `render`'s own contract for any caller of the public API.
pub(crate) fn last_write_per_slot<'a>(uploads: &[(u32, &'a SourceTile)]) -> Vec<(u32, &'a SourceTile)> {
    let mut seen = HashSet::with_capacity(uploads.len());
    let mut kept: Vec<(u32, &SourceTile)> =
        uploads.iter().rev().filter(|(slot, _)| seen.insert(*slot)).copied().collect();
    kept.reverse();
    kept
}

/// Indices one node instance draws: two triangles per lattice cell and per
/// skirt quad (6912 for the 33 x 33 lattice).
pub fn lattice_indices_len() -> u32 {
    let cells = LATTICE_SIDE - 1;
    (cells * cells + 4 * cells) * 6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_write_to_a_slot_wins_and_the_rest_keep_their_order() {
        let tile = |h: f32| SourceTile {
            tile: planet_terrain::geo::address::TileAddress::roots()[0],
            heights: vec![h],
            classes: None,
            colour: None,
            provenance: planet_terrain::ground::Provenance::Invented,
            voids: None,
        };
        let tiles = [tile(1.0), tile(2.0), tile(3.0), tile(4.0)];
        let uploads = [(5, &tiles[0]), (7, &tiles[1]), (5, &tiles[2]), (9, &tiles[3])];
        let kept: Vec<(u32, f32)> = last_write_per_slot(&uploads).iter().map(|(s, t)| (*s, t.heights[0])).collect();
        assert_eq!(kept, [(7, 2.0), (5, 3.0), (9, 4.0)]);
    }

    /// The triangles of the lattice, then of the skirt edge by edge: what
    /// `lattice_indices` draws, in another order.
    fn lattice_then_skirt() -> Vec<[u16; 3]> {
        let v = |i: u32, j: u32| (j * LATTICE_SIDE + i) as u16;
        let last = LATTICE_SIDE - 1;
        let mut out = Vec::new();
        for j in 0..last {
            for i in 0..last {
                let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i, j + 1), v(i + 1, j + 1));
                out.extend([[a, b, d], [a, d, c]]);
            }
        }
        for edge in 0..4u32 {
            let on_edge = |k: u32| [v(0, k), v(last, k), v(k, 0), v(k, last)][edge as usize];
            let skirt = |k: u32| (LATTICE_SIDE * LATTICE_SIDE + edge * LATTICE_SIDE + k) as u16;
            for k in 0..last {
                out.extend([[on_edge(k), on_edge(k + 1), skirt(k + 1)], [on_edge(k), skirt(k + 1), skirt(k)]]);
            }
        }
        out
    }

    #[test]
    fn the_interleaved_skirt_draws_the_same_triangles_with_the_same_winding() {
        let mut drawn: Vec<[u16; 3]> = lattice_indices().chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        let mut expected = lattice_then_skirt();
        drawn.sort_unstable();
        expected.sort_unstable();
        assert_eq!(drawn, expected);
    }

    #[test]
    fn the_lattice_has_as_many_indices_as_a_draw_takes() {
        assert_eq!(lattice_indices().len() as u32, lattice_indices_len());
        assert!(lattice_indices().iter().all(|&i| u32::from(i) < NODE_VERTICES));
    }
}
