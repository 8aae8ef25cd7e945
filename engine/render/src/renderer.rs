//! The frame: uploads into array-image slots, then a position-only depth
//! pass, then the shaded pass, the analytic body, the sky and the HUD; each
//! terrain pass is one instanced draw of the shared 33 x 33 lattice (plus
//! its skirt). A windowed frame ends by blitting the target into the
//! swapchain image (`present.rs`).
//!
//! The key decisions: reversed Z with an infinite far plane (one D32 depth
//! buffer from orbit to the ground); an upload moves only the layers it
//! writes out of `SHADER_READ_ONLY_OPTIMAL`, behind a barrier whose first
//! scope is every earlier frame's shader reads, so it can never overwrite a
//! layer a frame still in flight reads; and per-frame resources (command buffer,
//! records, staging, timestamps) rotate over `frames_in_flight` fences.

use std::mem::ManuallyDrop;

use ash::vk;
use gpu_allocator::MemoryLocation;
use planet_terrain::abi::{LATTICE_SIDE, NodeRecord, PushConstants, RECORD_BYTES, binding, timestamp};
use planet_terrain::ground::SourceTile;

use crate::conv::{self, CLASS_OFFSET, COLOUR_OFFSET, HEIGHT_OFFSET, SIDE, SlotContent, TILE_UPLOAD_BYTES};
use crate::error::{Context, RenderError, Result};
use crate::gpu::{Gpu, GpuSettings, WindowHandles};
use crate::image::RgbaImage;
use crate::present::Swapchain;
use crate::resources::{Buffer, Image};

/// Vertices one node instance draws: the 33 x 33 lattice, then 4 x 33 skirt.
pub use planet_terrain::abi::NODE_VERTICES;
/// The HUD overlay's size in pixels (drawn at the top-left corner).
pub const HUD_SIZE: (u32, u32) = (480, 176);
pub const HUD_BYTES: usize = (HUD_SIZE.0 * HUD_SIZE.1 * 4) as usize;

pub(crate) mod spirv {
    pub const TERRAIN_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain.vert.spv"));
    pub const TERRAIN_DEPTH_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain_depth.vert.spv"));
    pub const TERRAIN_CAPTURE_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain_capture.vert.spv"));
    pub const TERRAIN_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain.frag.spv"));
    pub const SKY_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sky.vert.spv"));
    pub const SKY_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sky.frag.spv"));
    pub const BODY_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/body.frag.spv"));
    pub const HUD_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hud.frag.spv"));
}

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
    pub hud: u32,
}

/// GPU milliseconds per pass of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassTimes {
    pub terrain_depth_ms: f64,
    pub terrain_shaded_ms: f64,
    pub sky_ms: f64,
}

/// One frame's worth of work.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput<'a> {
    pub constants: PushConstants,
    /// Records to draw; the renderer fills each one's decode fields from
    /// what its slot holds.
    pub records: &'a [NodeRecord],
    /// Tiles to write into slots before drawing.
    pub uploads: &'a [(u32, &'a SourceTile)],
    /// Copy the finished image back for [`Renderer::take_image`].
    pub read_back: bool,
    /// Draw the terrain's triangles as lines (when the device can).
    pub wireframe: bool,
    /// The HUD overlay (`HUD_SIZE`, RGBA8, top row first), if any.
    pub hud: Option<&'a [u8]>,
    /// Present to the window (a windowed renderer only).
    pub present: bool,
}

/// What the GPU reported for a frame once it completed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompletedFrame {
    pub frame: u64,
    pub gpu: Option<PassTimes>,
    /// Pixels whose ray met the body below its deepest ground and showed
    /// the sky: holes in the cover (0 while the analytic body is drawn).
    pub hole_pixels: u32,
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
}

pub(crate) struct FrameResources {
    pub(crate) pool: vk::CommandPool,
    pub(crate) commands: vk::CommandBuffer,
    pub(crate) fence: vk::Fence,
    pub(crate) records: Buffer,
    pub(crate) staging: Buffer,
    pub(crate) set: vk::DescriptorSet,
    pub(crate) queries: vk::QueryPool,
    pub(crate) counters: Buffer,
    pub(crate) acquired: vk::Semaphore,
    pub(crate) submitted: bool,
    pub(crate) read_back: bool,
    pub(crate) frame: u64,
}

pub(crate) struct Pipelines {
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) depth: vk::Pipeline,
    pub(crate) shaded: vk::Pipeline,
    pub(crate) sky: vk::Pipeline,
    pub(crate) body: vk::Pipeline,
    pub(crate) hud: vk::Pipeline,
    pub(crate) wire: Option<vk::Pipeline>,
    pub(crate) capture: Option<vk::Pipeline>,
}

pub struct Renderer {
    pub(crate) settings: RendererSettings,
    pub(crate) pipelines: Pipelines,
    pub(crate) descriptor_pool: vk::DescriptorPool,
    pub(crate) sampler: vk::Sampler,
    pub(crate) heights: Image,
    pub(crate) colour: Image,
    pub(crate) classes: Image,
    pub(crate) target: Image,
    pub(crate) depth: Image,
    pub(crate) readback: Buffer,
    pub(crate) indices: Buffer,
    pub(crate) hud: Image,
    pub(crate) swapchain: Option<Swapchain>,
    pub(crate) vsync: bool,
    pub(crate) completed: Vec<CompletedFrame>,
    pub(crate) frames: Vec<FrameResources>,
    pub(crate) slot_contents: Vec<SlotContent>,
    pub(crate) frame_number: u64,
    // Declared last: dropped after every resource above is released.
    pub(crate) gpu: ManuallyDrop<Gpu>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("gpu", &*self.gpu).field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// Lattice triangles (each cell split along its (i, j)-(i+1, j+1) diagonal,
/// the direction the morph's cell-centre blend assumes), then the skirt.
pub fn lattice_indices() -> Vec<u16> {
    let v = |i: u32, j: u32| (j * LATTICE_SIDE + i) as u16;
    let mut out = Vec::with_capacity(6912);
    for j in 0..LATTICE_SIDE - 1 {
        for i in 0..LATTICE_SIDE - 1 {
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i, j + 1), v(i + 1, j + 1));
            out.extend_from_slice(&[a, b, d, a, d, c]);
        }
    }
    let last = LATTICE_SIDE - 1;
    for edge in 0..4u32 {
        let on_edge = |k: u32| match edge {
            0 => v(0, k),
            1 => v(last, k),
            2 => v(k, 0),
            _ => v(k, last),
        };
        let skirt = |k: u32| (LATTICE_SIDE * LATTICE_SIDE + edge * LATTICE_SIDE + k) as u16;
        for k in 0..last {
            out.extend_from_slice(&[on_edge(k), on_edge(k + 1), skirt(k + 1), on_edge(k), skirt(k + 1), skirt(k)]);
        }
    }
    out
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
        let gpu = Gpu::new(settings.gpu, window)?;
        // Every handle starts null; whatever `build` creates before a
        // failure is released by `Drop` (destroying a null handle is a no-op).
        let mut renderer = Renderer {
            settings,
            pipelines: Pipelines {
                set_layout: vk::DescriptorSetLayout::null(),
                layout: vk::PipelineLayout::null(),
                depth: vk::Pipeline::null(),
                shaded: vk::Pipeline::null(),
                sky: vk::Pipeline::null(),
                body: vk::Pipeline::null(),
                hud: vk::Pipeline::null(),
                wire: None,
                capture: None,
            },
            descriptor_pool: vk::DescriptorPool::null(),
            sampler: vk::Sampler::null(),
            heights: Image::null(),
            colour: Image::null(),
            classes: Image::null(),
            target: Image::null(),
            depth: Image::null(),
            readback: Buffer::null(),
            indices: Buffer::null(),
            hud: Image::null(),
            swapchain: None,
            vsync,
            completed: Vec::new(),
            frames: Vec::new(),
            slot_contents: vec![SlotContent::default(); settings.slots as usize],
            frame_number: 0,
            gpu: ManuallyDrop::new(gpu),
        };
        renderer.build()?;
        if window.is_some() {
            renderer.swapchain = Some(Swapchain::new(&renderer.gpu, settings.size, vsync, vk::SwapchainKHR::null())?);
        }
        Ok(renderer)
    }

    /// Frames submitted so far (the next frame's number).
    pub fn frames_submitted(&self) -> u64 {
        self.frame_number
    }

    /// The frames the GPU finished since the last call, oldest first.
    pub fn take_completed(&mut self) -> Vec<CompletedFrame> {
        std::mem::take(&mut self.completed)
    }

    /// Whether the device can draw lines (the wireframe toggle).
    pub fn supports_wireframe(&self) -> bool {
        self.pipelines.wire.is_some()
    }

    /// Resizes the target (and the swapchain of a windowed renderer);
    /// waits for the device first. A zero size is ignored (minimised).
    pub fn resize(&mut self, size: (u32, u32)) -> Result<()> {
        if size.0 == 0 || size.1 == 0 || size == self.settings.size && self.swapchain_matches(size) {
            return Ok(());
        }
        self.finish()?;
        self.rebuild_targets(size)?;
        self.recreate_swapchain()
    }

    fn swapchain_matches(&self, size: (u32, u32)) -> bool {
        self.swapchain.as_ref().is_none_or(|s| (s.extent.width, s.extent.height) == size)
    }

    fn recreate_swapchain(&mut self) -> Result<()> {
        let Some(mut old) = self.swapchain.take() else { return Ok(()) };
        self.gpu.wait_idle()?;
        let created = Swapchain::new(&self.gpu, self.settings.size, self.vsync, old.swapchain);
        // SAFETY: the device is idle; the old swapchain was retired by the
        // new one's creation (or is simply released on failure).
        unsafe { old.destroy(&self.gpu) };
        let swapchain = created?;
        // The window decides the extent; follow it with the target.
        let extent = (swapchain.extent.width, swapchain.extent.height);
        self.swapchain = Some(swapchain);
        if extent != self.settings.size && extent.0 > 0 && extent.1 > 0 {
            self.rebuild_targets(extent)?;
        }
        Ok(())
    }

    /// Replaces the colour and depth targets and the read-back buffer with
    /// ones of `size`. The device must be idle.
    fn rebuild_targets(&mut self, size: (u32, u32)) -> Result<()> {
        self.settings.size = size;
        self.target.destroy(&self.gpu);
        self.depth.destroy(&self.gpu);
        self.readback.destroy(&self.gpu);
        self.build_targets()
    }

    pub fn device_name(&self) -> &str {
        &self.gpu.device_name
    }

    pub fn settings(&self) -> &RendererSettings {
        &self.settings
    }

    /// Validation messages reported so far (empty without validation).
    pub fn validation_messages(&self) -> Vec<String> {
        self.gpu.messages()
    }

    /// How slot `slot` decodes (what the last upload into it put there).
    pub fn slot_content(&self, slot: u32) -> SlotContent {
        self.slot_contents[slot as usize]
    }

    /// Records and submits one frame (and presents it, for a windowed
    /// renderer asked to).
    pub fn render(&mut self, input: &FrameInput<'_>) -> Result<FrameOutcome> {
        if input.records.len() > self.settings.max_nodes {
            return Err(RenderError::TooManyNodes { records: input.records.len(), capacity: self.settings.max_nodes });
        }
        assert!(input.uploads.len() <= self.settings.uploads_per_frame, "uploads beyond the staging ring");
        if let Some(hud) = input.hud {
            assert_eq!(hud.len(), HUD_BYTES, "a HUD overlay of HUD_SIZE");
        }
        let index = (self.frame_number % self.frames.len() as u64) as usize;
        let waiting = std::time::Instant::now();
        let previous_gpu_times = self.retire(index)?;
        let mut waited_ms = waiting.elapsed().as_secs_f64() * 1e3;

        // Stage uploads (and the HUD) and note how each slot decodes.
        {
            let hud_at = self.hud_staging_offset();
            let staging = self.frames[index].staging.bytes_mut();
            for (k, (slot, tile)) in input.uploads.iter().enumerate() {
                let block = &mut staging[k * TILE_UPLOAD_BYTES..(k + 1) * TILE_UPLOAD_BYTES];
                self.slot_contents[*slot as usize] = conv::encode_tile(tile, block);
            }
            if let Some(hud) = input.hud {
                staging[hud_at..hud_at + HUD_BYTES].copy_from_slice(hud);
            }
        }
        {
            self.write_records(index, input.records);
        }
        let waiting = std::time::Instant::now();
        let target = if input.present { self.acquire(index)? } else { None };
        waited_ms += waiting.elapsed().as_secs_f64() * 1e3;
        let draw_calls = self.record(index, input, target)?;
        let frame = &mut self.frames[index];
        frame.read_back = input.read_back;
        frame.frame = self.frame_number;
        let commands = [frame.commands];
        let wait = [frame.acquired];
        let wait_stages = [vk::PipelineStageFlags::TRANSFER];
        let mut submit = vk::SubmitInfo::default().command_buffers(&commands);
        let signal;
        if let Some(image) = target {
            signal = [self.swapchain.as_ref().expect("acquired from it").rendered[image as usize]];
            submit = submit.wait_semaphores(&wait).wait_dst_stage_mask(&wait_stages).signal_semaphores(&signal);
        }
        // SAFETY: the command buffer is fully recorded, the fence was reset
        // in `retire` and is unsignalled, and the semaphores belong to this
        // frame and the acquired image.
        unsafe { self.gpu.device.queue_submit(self.gpu.queue, &[submit], frame.fence) }.during("submitting a frame")?;
        frame.submitted = true;
        let waiting = std::time::Instant::now();
        let presented = match target {
            Some(image) => self.present(image)?,
            None => false,
        };
        waited_ms += waiting.elapsed().as_secs_f64() * 1e3;
        let outcome = FrameOutcome {
            frame: self.frame_number,
            draw_calls,
            triangles: input.records.len() as u64 * u64::from(lattice_indices_len() / 3),
            previous_gpu_times,
            presented,
            waited_ms,
        };
        self.frame_number += 1;
        Ok(outcome)
    }

    /// Writes `records` into frame resources `index`, each completed with
    /// what its slot holds (`conv::filled_record`).
    fn write_records(&mut self, index: usize, records: &[NodeRecord]) {
        let contents = &self.slot_contents;
        let bytes = self.frames[index].records.bytes_mut();
        for (record, out) in records.iter().zip(bytes.chunks_exact_mut(RECORD_BYTES)) {
            let filled = conv::filled_record(record, contents[record.slot as usize]);
            out.copy_from_slice(bytemuck::bytes_of(&filled));
        }
    }

    fn hud_staging_offset(&self) -> usize {
        self.settings.uploads_per_frame.max(1) * TILE_UPLOAD_BYTES
    }

    /// Acquires the next swapchain image for frame resources `index`;
    /// `None` when the window cannot take a frame now (minimised, or the
    /// surface changed: it is recreated for the next frame).
    fn acquire(&mut self, index: usize) -> Result<Option<u32>> {
        let Some(swapchain) = &self.swapchain else { return Ok(None) };
        if swapchain.extent.width == 0 || swapchain.extent.height == 0 {
            return Ok(None);
        }
        if (swapchain.extent.width, swapchain.extent.height) != self.settings.size {
            self.recreate_swapchain()?;
            return Ok(None);
        }
        let swapchain = self.swapchain.as_ref().expect("checked");
        // SAFETY: the semaphore is unsignalled: its last wait was by this
        // frame resource's previous submission, retired above.
        let acquired = unsafe {
            swapchain.loader.acquire_next_image(
                swapchain.swapchain,
                u64::MAX,
                self.frames[index].acquired,
                vk::Fence::null(),
            )
        };
        match acquired {
            Ok((image, false)) => Ok(Some(image)),
            Ok((image, true)) => {
                // Suboptimal still presents; recreate afterwards.
                Ok(Some(image))
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.recreate_swapchain()?;
                Ok(None)
            }
            Err(e) => Err(crate::conv::map_result(e, "acquiring a swapchain image")),
        }
    }

    fn present(&mut self, image: u32) -> Result<bool> {
        let swapchain = self.swapchain.as_ref().expect("presenting to it");
        let waits = [swapchain.rendered[image as usize]];
        let chains = [swapchain.swapchain];
        let images = [image];
        let info = vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&chains).image_indices(&images);
        // SAFETY: the image was acquired and the submit that renders into it
        // signals `waits`.
        match unsafe { swapchain.loader.queue_present(self.gpu.queue, &info) } {
            Ok(false) => Ok(true),
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.recreate_swapchain()?;
                Ok(true)
            }
            Err(e) => Err(crate::conv::map_result(e, "presenting")),
        }
    }

    /// Waits for every frame in flight; returns the GPU times of the last one.
    pub fn finish(&mut self) -> Result<Option<PassTimes>> {
        let last = ((self.frame_number + self.frames.len() as u64 - 1) % self.frames.len() as u64) as usize;
        let mut times = None;
        for k in 0..self.frames.len() {
            let t = self.wait(k)?;
            if k == last {
                times = t;
            }
        }
        Ok(times)
    }

    /// The image of the last frame rendered with `read_back`, once finished.
    pub fn take_image(&mut self) -> Result<Option<RgbaImage>> {
        self.finish()?;
        let last = ((self.frame_number + self.frames.len() as u64 - 1) % self.frames.len() as u64) as usize;
        if !self.frames[last].read_back {
            return Ok(None);
        }
        self.frames[last].read_back = false;
        let (width, height) = self.settings.size;
        let pixels = self.readback.bytes()[..(width * height * 4) as usize].to_vec();
        Ok(Some(RgbaImage { width, height, pixels }))
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
        let Some(capture) = self.pipelines.capture else { return Ok(None) };
        // Upload through an ordinary frame with nothing drawn.
        self.render(&FrameInput {
            constants,
            records: &[],
            uploads,
            read_back: false,
            wireframe: false,
            hud: None,
            present: false,
        })?;
        self.finish()?;
        let count = records.len() * NODE_VERTICES as usize;
        let mut buffer = Buffer::new(
            &self.gpu,
            (count.max(1) * 16) as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuToCpu,
            "captured vertices",
        )?;
        let result = self.run_capture(capture, constants, records, &buffer);
        let positions = result.map(|()| {
            buffer
                .bytes()
                .chunks_exact(16)
                .take(count)
                .map(|c| {
                    let f = |k: usize| f32::from_le_bytes(c[4 * k..4 * k + 4].try_into().expect("4 bytes"));
                    [f(0), f(1), f(2)]
                })
                .collect()
        });
        buffer.destroy(&self.gpu);
        positions.map(Some)
    }

    fn run_capture(
        &mut self,
        capture: vk::Pipeline,
        constants: PushConstants,
        records: &[NodeRecord],
        buffer: &Buffer,
    ) -> Result<()> {
        let index = (self.frame_number % self.frames.len() as u64) as usize;
        self.retire(index)?;
        self.write_records(index, records);
        let frame = &self.frames[index];
        let info = [vk::DescriptorBufferInfo::default().buffer(buffer.buffer).offset(0).range(vk::WHOLE_SIZE)];
        let write = [vk::WriteDescriptorSet::default()
            .dst_set(frame.set)
            .dst_binding(binding::CAPTURED)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info)];
        let device = &self.gpu.device;
        // SAFETY: the set is not in use (every frame was retired by
        // `finish` and this one by `retire`); all handles are valid.
        unsafe {
            device.update_descriptor_sets(&write, &[]);
            device.reset_command_pool(frame.pool, vk::CommandPoolResetFlags::empty()).during("resetting commands")?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            device.begin_command_buffer(frame.commands, &begin).during("recording")?;
            self.begin_depth_only(frame.commands);
            device.cmd_bind_pipeline(frame.commands, vk::PipelineBindPoint::GRAPHICS, capture);
            self.bind_common(frame.commands, frame.set, &constants);
            if !records.is_empty() {
                device.cmd_draw(frame.commands, NODE_VERTICES, records.len() as u32, 0, 0);
            }
            device.cmd_end_rendering(frame.commands);
            let to_host = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::VERTEX_SHADER)
                .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)];
            device.cmd_pipeline_barrier2(frame.commands, &vk::DependencyInfo::default().memory_barriers(&to_host));
            device.end_command_buffer(frame.commands).during("recording")?;
            let commands = [frame.commands];
            let submit = [vk::SubmitInfo::default().command_buffers(&commands)];
            device.queue_submit(self.gpu.queue, &submit, frame.fence).during("submitting the capture")?;
        }
        self.frames[index].submitted = true;
        self.frames[index].read_back = false;
        self.frame_number += 1;
        self.finish()?;
        Ok(())
    }

    /// Waits for frame resources `index` if submitted; returns its GPU times.
    fn wait(&mut self, index: usize) -> Result<Option<PassTimes>> {
        let frame = &mut self.frames[index];
        if !frame.submitted {
            return Ok(None);
        }
        // SAFETY: the fence belongs to this device and was submitted.
        unsafe { self.gpu.device.wait_for_fences(&[frame.fence], true, u64::MAX) }.during("waiting for a frame")?;
        frame.submitted = false;
        let hole_pixels = u32::from_le_bytes(frame.counters.bytes()[0..4].try_into().expect("4 bytes"));
        let times = self.gpu.timestamp_period_ns.and_then(|period| {
            let mut stamps = [0u64; timestamp::COUNT as usize];
            // SAFETY: the frame completed, so its queries are available.
            let got = unsafe {
                self.gpu.device.get_query_pool_results(frame.queries, 0, &mut stamps, vk::QueryResultFlags::TYPE_64)
            };
            got.ok()?;
            let ms = |a: u64, b: u64| b.wrapping_sub(a) as f64 * period * 1e-6;
            Some(PassTimes {
                terrain_depth_ms: ms(stamps[timestamp::FRAME_START as usize], stamps[timestamp::DEPTH_DONE as usize]),
                terrain_shaded_ms: ms(stamps[timestamp::DEPTH_DONE as usize], stamps[timestamp::SHADED_DONE as usize]),
                sky_ms: ms(stamps[timestamp::SHADED_DONE as usize], stamps[timestamp::SKY_DONE as usize]),
            })
        });
        self.completed.push(CompletedFrame { frame: frame.frame, gpu: times, hole_pixels });
        Ok(times)
    }

    /// Waits for the frame that last used resources `index` and readies them.
    fn retire(&mut self, index: usize) -> Result<Option<PassTimes>> {
        let times = self.wait(index)?;
        let frame = &self.frames[index];
        // SAFETY: the fence is not in use by a pending submission (waited).
        unsafe { self.gpu.device.reset_fences(&[frame.fence]) }.during("resetting a fence")?;
        Ok(times)
    }

    fn bind_common(&self, commands: vk::CommandBuffer, set: vk::DescriptorSet, constants: &PushConstants) {
        let device = &self.gpu.device;
        let (width, height) = self.settings.size;
        let viewport = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: width as f32,
            height: height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissor = [vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width, height } }];
        // SAFETY: recording state; the set and layout are compatible.
        unsafe {
            device.cmd_set_viewport(commands, 0, &viewport);
            device.cmd_set_scissor(commands, 0, &scissor);
            device.cmd_bind_descriptor_sets(
                commands,
                vk::PipelineBindPoint::GRAPHICS,
                self.pipelines.layout,
                0,
                &[set],
                &[],
            );
            device.cmd_push_constants(
                commands,
                self.pipelines.layout,
                vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
                0,
                bytemuck::bytes_of(constants),
            );
            device.cmd_bind_index_buffer(commands, self.indices.buffer, 0, vk::IndexType::UINT16);
        }
    }

    fn begin_depth_only(&self, commands: vk::CommandBuffer) {
        let (width, height) = self.settings.size;
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view)
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 0.0, stencil: 0 } });
        let rendering = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width, height } })
            .layer_count(1)
            .depth_attachment(&depth);
        let device = &self.gpu.device;
        let barrier = [vk::ImageMemoryBarrier2::default()
            .src_stage_mask(
                vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
            )
            .src_access_mask(vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE)
            .dst_stage_mask(
                vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
            )
            .dst_access_mask(
                vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ,
            )
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .image(self.depth.image)
            .subresource_range(self.depth.full_range())];
        // SAFETY: recording state; the depth image is this renderer's.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&barrier));
            device.cmd_begin_rendering(commands, &rendering);
        }
    }

    fn record(&mut self, index: usize, input: &FrameInput<'_>, present: Option<u32>) -> Result<DrawCalls> {
        let frame = &self.frames[index];
        let commands = frame.commands;
        let device = &self.gpu.device;
        let mut draws = DrawCalls::default();
        let terrain = !input.records.is_empty();
        let analytic_body = input.constants.flags & 1 != 0;
        // SAFETY: the frame's resources were retired (its fence waited), so
        // its pool, buffers and query pool are free to reuse; every handle
        // below belongs to this renderer.
        unsafe {
            device.reset_command_pool(frame.pool, vk::CommandPoolResetFlags::empty()).during("resetting commands")?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            device.begin_command_buffer(commands, &begin).during("recording")?;
            device.cmd_reset_query_pool(commands, frame.queries, 0, timestamp::COUNT);
            device.cmd_fill_buffer(commands, frame.counters.buffer, 0, vk::WHOLE_SIZE, 0);
            self.record_uploads(commands, frame.staging.buffer, input.uploads, input.hud.is_some());
            let counters_ready = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::CLEAR)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::FRAGMENT_SHADER)
                .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_READ | vk::AccessFlags2::SHADER_STORAGE_WRITE)];
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().memory_barriers(&counters_ready));
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::TOP_OF_PIPE,
                frame.queries,
                timestamp::FRAME_START,
            );
            self.begin_depth_only(commands);
            device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.depth);
            self.bind_common(commands, frame.set, &input.constants);
            if terrain {
                device.cmd_draw_indexed(commands, lattice_indices_len(), input.records.len() as u32, 0, 0, 0);
                draws.terrain_depth += 1;
            }
            device.cmd_end_rendering(commands);
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::ALL_GRAPHICS,
                frame.queries,
                timestamp::DEPTH_DONE,
            );

            let (width, height) = self.settings.size;
            let to_attachment = [vk::ImageMemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COPY | vk::PipelineStageFlags2::BLIT)
                .src_access_mask(vk::AccessFlags2::TRANSFER_READ)
                .dst_stage_mask(vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT)
                .dst_access_mask(vk::AccessFlags2::COLOR_ATTACHMENT_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .image(self.target.image)
                .subresource_range(self.target.full_range())];
            let depth_to_read = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS)
                .src_access_mask(vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE)
                .dst_stage_mask(
                    vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
                )
                .dst_access_mask(
                    vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE,
                )];
            device.cmd_pipeline_barrier2(
                commands,
                &vk::DependencyInfo::default().image_memory_barriers(&to_attachment).memory_barriers(&depth_to_read),
            );
            let colour = [vk::RenderingAttachmentInfo::default()
                .image_view(self.target.view)
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] } })];
            let depth = vk::RenderingAttachmentInfo::default()
                .image_view(self.depth.view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::LOAD)
                .store_op(vk::AttachmentStoreOp::DONT_CARE);
            let rendering = vk::RenderingInfo::default()
                .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width, height } })
                .layer_count(1)
                .color_attachments(&colour)
                .depth_attachment(&depth);
            device.cmd_begin_rendering(commands, &rendering);
            let shaded = match (input.wireframe, self.pipelines.wire) {
                (true, Some(wire)) => wire,
                _ => self.pipelines.shaded,
            };
            device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, shaded);
            self.bind_common(commands, frame.set, &input.constants);
            if terrain {
                device.cmd_draw_indexed(commands, lattice_indices_len(), input.records.len() as u32, 0, 0, 0);
                draws.terrain_shaded += 1;
            }
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::ALL_GRAPHICS,
                frame.queries,
                timestamp::SHADED_DONE,
            );
            if analytic_body {
                device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.body);
                device.cmd_draw(commands, 3, 1, 0, 0);
                draws.body += 1;
            }
            device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.sky);
            device.cmd_draw(commands, 3, 1, 0, 0);
            draws.sky += 1;
            if input.hud.is_some() {
                device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.hud);
                device.cmd_draw(commands, 3, 1, 0, 0);
                draws.hud += 1;
            }
            device.cmd_end_rendering(commands);
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::ALL_GRAPHICS,
                frame.queries,
                timestamp::SKY_DONE,
            );

            if input.read_back || present.is_some() {
                self.record_finish(commands, input.read_back, present);
            }
            device.end_command_buffer(commands).during("recording")?;
        }
        Ok(draws)
    }

    /// Copies staged tiles into their slots' layers.
    ///
    /// # Safety
    /// `commands` is recording; `staging` holds `uploads` in order.
    unsafe fn record_uploads(
        &self,
        commands: vk::CommandBuffer,
        staging: vk::Buffer,
        uploads: &[(u32, &SourceTile)],
        hud: bool,
    ) {
        if uploads.is_empty() && !hud {
            return;
        }
        let device = &self.gpu.device;
        let region = |offset: usize, slot: u32| {
            vk::BufferImageCopy::default()
                .buffer_offset(offset as u64)
                .image_subresource(
                    vk::ImageSubresourceLayers::default()
                        .aspect_mask(vk::ImageAspectFlags::COLOR)
                        .mip_level(0)
                        .base_array_layer(slot)
                        .layer_count(1),
                )
                .image_extent(vk::Extent3D { width: SIDE, height: SIDE, depth: 1 })
        };
        // Only the layers written change layout; the rest of each image stays
        // readable. The first barrier's source scope is every shader read
        // submitted earlier on this queue, so no frame still in flight can
        // read a layer while it is overwritten.
        let layer = |image: vk::Image, slot: u32, to_transfer: bool| {
            let range = vk::ImageSubresourceRange::default()
                .aspect_mask(vk::ImageAspectFlags::COLOR)
                .level_count(1)
                .base_array_layer(slot)
                .layer_count(1);
            let shaders = vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::FRAGMENT_SHADER;
            let barrier = vk::ImageMemoryBarrier2::default().image(image).subresource_range(range);
            if to_transfer {
                barrier
                    .src_stage_mask(shaders)
                    .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                    .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .old_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
                    .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            } else {
                barrier
                    .src_stage_mask(vk::PipelineStageFlags2::COPY)
                    .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .dst_stage_mask(shaders)
                    .dst_access_mask(vk::AccessFlags2::SHADER_SAMPLED_READ)
                    .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                    .new_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
            }
        };
        let mut heights = Vec::new();
        let mut colour = Vec::new();
        let mut classes = Vec::new();
        let mut before = Vec::new();
        let mut after = Vec::new();
        for (k, (slot, tile)) in uploads.iter().enumerate() {
            let base = k * TILE_UPLOAD_BYTES;
            heights.push(region(base + HEIGHT_OFFSET, *slot));
            let mut images = vec![self.heights.image];
            if tile.colour.is_some() {
                colour.push(region(base + COLOUR_OFFSET, *slot));
                images.push(self.colour.image);
            }
            if tile.classes.is_some() {
                classes.push(region(base + CLASS_OFFSET, *slot));
                images.push(self.classes.image);
            }
            for image in images {
                before.push(layer(image, *slot, true));
                after.push(layer(image, *slot, false));
            }
        }
        if hud {
            before.push(layer(self.hud.image, 0, true));
            after.push(layer(self.hud.image, 0, false));
        }
        let hud_region = [vk::BufferImageCopy::default()
            .buffer_offset(self.hud_staging_offset() as u64)
            .image_subresource(
                vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1),
            )
            .image_extent(vk::Extent3D { width: HUD_SIZE.0, height: HUD_SIZE.1, depth: 1 })];
        let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
        // SAFETY: per the function contract; the barriers move exactly the
        // written layers to TRANSFER_DST and back.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&before));
            if hud {
                device.cmd_copy_buffer_to_image(commands, staging, self.hud.image, dst, &hud_region);
            }
            if !heights.is_empty() {
                device.cmd_copy_buffer_to_image(commands, staging, self.heights.image, dst, &heights);
            }
            if !colour.is_empty() {
                device.cmd_copy_buffer_to_image(commands, staging, self.colour.image, dst, &colour);
            }
            if !classes.is_empty() {
                device.cmd_copy_buffer_to_image(commands, staging, self.classes.image, dst, &classes);
            }
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&after));
        }
    }

    /// Copies the finished target back to the host and/or blits it into
    /// swapchain image `present`.
    ///
    /// # Safety
    /// `commands` is recording, after the colour pass; `present` was acquired.
    unsafe fn record_finish(&self, commands: vk::CommandBuffer, read_back: bool, present: Option<u32>) {
        let device = &self.gpu.device;
        let (width, height) = self.settings.size;
        let mut to_transfer = vec![
            vk::ImageMemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT)
                .src_access_mask(vk::AccessFlags2::COLOR_ATTACHMENT_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::COPY | vk::PipelineStageFlags2::BLIT)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)
                .old_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
                .image(self.target.image)
                .subresource_range(self.target.full_range()),
        ];
        let swapchain_image = present.map(|k| self.swapchain.as_ref().expect("a windowed renderer").images[k as usize]);
        let colour_range = crate::resources::range(vk::ImageAspectFlags::COLOR, 1);
        if let Some(image) = swapchain_image {
            // The acquire semaphore's wait covers the transfer stage.
            to_transfer.push(
                vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(vk::PipelineStageFlags2::BLIT)
                    .dst_stage_mask(vk::PipelineStageFlags2::BLIT)
                    .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .old_layout(vk::ImageLayout::UNDEFINED)
                    .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                    .image(image)
                    .subresource_range(colour_range),
            );
        }
        let layers = vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1);
        let region = [vk::BufferImageCopy::default().image_subresource(layers).image_extent(vk::Extent3D {
            width,
            height,
            depth: 1,
        })];
        let corner = vk::Offset3D { x: width as i32, y: height as i32, z: 1 };
        let blit = [vk::ImageBlit::default()
            .src_subresource(layers)
            .src_offsets([vk::Offset3D::default(), corner])
            .dst_subresource(layers)
            .dst_offsets([vk::Offset3D::default(), corner])];
        let to_host = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::HOST)
            .dst_access_mask(vk::AccessFlags2::HOST_READ)];
        // SAFETY: per the function contract; the target and the swapchain
        // image have the same extent (the renderer follows the swapchain).
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_transfer));
            if read_back {
                device.cmd_copy_image_to_buffer(
                    commands,
                    self.target.image,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    self.readback.buffer,
                    &region,
                );
                device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().memory_barriers(&to_host));
            }
            if let Some(image) = swapchain_image {
                device.cmd_blit_image(
                    commands,
                    self.target.image,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    image,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &blit,
                    vk::Filter::NEAREST,
                );
                let to_present = [vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(vk::PipelineStageFlags2::BLIT)
                    .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .dst_stage_mask(vk::PipelineStageFlags2::BOTTOM_OF_PIPE)
                    .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                    .new_layout(vk::ImageLayout::PRESENT_SRC_KHR)
                    .image(image)
                    .subresource_range(colour_range)];
                device
                    .cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_present));
            }
        }
    }
}

pub fn lattice_indices_len() -> u32 {
    (32 * 32 + 4 * 32) * 6
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let _ = self.gpu.wait_idle();
        let gpu = &self.gpu;
        let device = &gpu.device;
        // SAFETY: the device is idle, so nothing below is in use; children go
        // before the objects they were made from, and the `Gpu` (allocator,
        // device, instance) last.
        unsafe {
            if let Some(mut swapchain) = self.swapchain.take() {
                swapchain.destroy(gpu);
            }
            for frame in &mut self.frames {
                device.destroy_semaphore(frame.acquired, None);
                frame.counters.destroy(gpu);
                device.destroy_query_pool(frame.queries, None);
                device.destroy_fence(frame.fence, None);
                device.destroy_command_pool(frame.pool, None);
                frame.records.destroy(gpu);
                frame.staging.destroy(gpu);
            }
            device.destroy_descriptor_pool(self.descriptor_pool, None);
            destroy_pipelines(device, &self.pipelines);
            device.destroy_sampler(self.sampler, None);
        }
        for image in
            [&mut self.heights, &mut self.colour, &mut self.classes, &mut self.target, &mut self.depth, &mut self.hud]
        {
            image.destroy(gpu);
        }
        self.readback.destroy(gpu);
        self.indices.destroy(gpu);
        // SAFETY: every object made from the device is gone.
        unsafe { ManuallyDrop::drop(&mut self.gpu) };
    }
}

/// # Safety
/// The pipelines are not in use.
unsafe fn destroy_pipelines(device: &ash::Device, p: &Pipelines) {
    // SAFETY: per the function contract.
    unsafe {
        for pipeline in [Some(p.depth), Some(p.shaded), Some(p.sky), Some(p.body), Some(p.hud), p.wire, p.capture]
            .into_iter()
            .flatten()
        {
            if pipeline != vk::Pipeline::null() {
                device.destroy_pipeline(pipeline, None);
            }
        }
        device.destroy_pipeline_layout(p.layout, None);
        device.destroy_descriptor_set_layout(p.set_layout, None);
    }
}
