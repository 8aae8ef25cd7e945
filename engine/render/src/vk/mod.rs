//! The Vulkan half of the renderer: every `unsafe` block of the crate lives
//! under this module, behind the safe methods of [`Backend`].
//!
//! The key decision: the split follows the safe/unsafe line, wgpu-hal style.
//! `Renderer` (renderer.rs) and the frame driver (scene/) are safe code
//! that deal in domain types (tiles, records, slot contents); `Backend`
//! owns the device and every object made from it and deals in handles,
//! one file per concern: `device` (instance, device, validation log),
//! `resources` (memory, images and their per-layer uses), `pipelines`,
//! `frames` (per-frame resources and their fences), `counts` (per-pass
//! work counters), `encode` (recording a frame), `present` (swapchain),
//! `capture` (conformance capture and read-back), `barrier` (barriers
//! derived from declared uses), `bodies` (the rigid bodies' pass) and `ui`
//! (egui's panels over the frame).
//! Objects land in the `Backend` as soon as they exist, so a failure
//! part-way through creation leaves nothing behind (`Drop` releases them).

pub(crate) mod barrier;
mod bodies;
mod capture;
mod counts;
pub(crate) mod device;
mod encode;
pub(crate) mod frames;
mod pipelines;
mod present;
mod resources;
mod ui;

use std::mem::ManuallyDrop;

use ash::vk;

use self::device::{Gpu, WindowHandles};
use self::frames::FrameResources;
use self::pipelines::Pipelines;
use self::present::Swapchain;
use self::resources::{Buffer, Image};
use crate::error::Result;
use crate::renderer::{CompletedFrame, RendererSettings};
use crate::slot_layout::SlotLayout;

pub(crate) struct Backend {
    settings: RendererSettings,
    pipelines: Pipelines,
    descriptor_pool: vk::DescriptorPool,
    sampler: vk::Sampler,
    /// Where each slot lives in the slot images (`crate::slot_layout`).
    slot_layout: SlotLayout,
    /// The slot images: each slot a square of one array layer.
    heights: Image,
    colour: Image,
    classes: Image,
    /// The horizon map's levels (`ground::horizon`), written whole.
    horizon: Image,
    target: Image,
    depth: Image,
    readback: Buffer,
    indices: Buffer,
    /// egui's paint pass, built on the first frame with a UI (ui.rs).
    ui: Option<ui::UiPass>,
    swapchain: Option<Swapchain>,
    vsync: bool,
    completed: Vec<CompletedFrame>,
    frames: Vec<FrameResources>,
    frame_number: u64,
    /// Rigid bodies drawn in each frame's shaded pass (vk/bodies.rs).
    bodies: Vec<crate::bodies::BodyDraw>,
    // Declared last: dropped after every resource above is released.
    gpu: ManuallyDrop<Gpu>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("gpu", &*self.gpu).field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Backend {
    pub(crate) fn new(settings: RendererSettings, window: Option<WindowHandles>, vsync: bool) -> Result<Backend> {
        let gpu = Gpu::new(settings.gpu, window)?;
        // Before anything is sized from the settings (the `Gpu` drops itself).
        crate::limits::check(&settings, &gpu.limits)?;
        let limits = &gpu.limits;
        let slot_layout = SlotLayout::new(settings.slots, limits.max_image_array_layers, limits.max_image_dimension_2d)
            .expect("limits::check admits only slots the device's layers hold");
        // Every handle starts null; whatever is created before a failure is
        // released by `Drop` (destroying a null handle is a no-op).
        let mut backend = Backend {
            settings,
            pipelines: Pipelines::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            sampler: vk::Sampler::null(),
            slot_layout,
            heights: Image::null(),
            colour: Image::null(),
            classes: Image::null(),
            horizon: Image::null(),
            target: Image::null(),
            depth: Image::null(),
            readback: Buffer::null(),
            indices: Buffer::null(),
            ui: None,
            swapchain: None,
            vsync,
            completed: Vec::new(),
            frames: Vec::new(),
            frame_number: 0,
            bodies: Vec::new(),
            gpu: ManuallyDrop::new(gpu),
        };
        backend.build_pipelines()?;
        backend.build_images()?;
        backend.build_targets()?;
        backend.build_frames()?;
        if window.is_some() {
            backend.swapchain = Some(Swapchain::new(&backend.gpu, settings.size, vsync, vk::SwapchainKHR::null())?);
        }
        Ok(backend)
    }

    pub(crate) fn settings(&self) -> &RendererSettings {
        &self.settings
    }

    pub(crate) fn slot_layout(&self) -> SlotLayout {
        self.slot_layout
    }

    pub(crate) fn device_name(&self) -> &str {
        &self.gpu.device_name
    }

    pub(crate) fn validation_messages(&self) -> Vec<String> {
        self.gpu.messages()
    }

    pub(crate) fn supports_wireframe(&self) -> bool {
        self.pipelines.wire.is_some()
    }

    pub(crate) fn frames_submitted(&self) -> u64 {
        self.frame_number
    }

    pub(crate) fn take_completed(&mut self) -> Vec<CompletedFrame> {
        std::mem::take(&mut self.completed)
    }

    /// Resizes the target (and the swapchain of a windowed renderer);
    /// waits for the device first. A zero size is ignored (minimised).
    pub(crate) fn resize(&mut self, size: (u32, u32)) -> Result<()> {
        if size.0 == 0 || size.1 == 0 || size == self.settings.size && self.swapchain_matches(size) {
            return Ok(());
        }
        self.finish()?;
        self.rebuild_targets(size)?;
        self.recreate_swapchain()
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
}

impl Drop for Backend {
    fn drop(&mut self) {
        // Bounded waits for every submitted frame first. A GPU that stopped
        // responding or was lost may still be using what is below: leave
        // it all to the process's exit rather than free it under the GPU.
        if self.finish().is_err() || self.gpu.wait_idle().is_err() {
            return;
        }
        let gpu = &self.gpu;
        // SAFETY: the device is idle, so nothing below is in use; children go
        // before the objects they were made from, and the `Gpu` (allocator,
        // device, instance) last.
        unsafe {
            if let Some(mut swapchain) = self.swapchain.take() {
                swapchain.destroy(gpu);
            }
            for frame in &mut self.frames {
                frame.destroy(gpu);
            }
            if let Some(ui) = self.ui.take() {
                ui.destroy(&gpu.device);
            }
            gpu.device.destroy_descriptor_pool(self.descriptor_pool, None);
            self.pipelines.destroy(&gpu.device);
            gpu.device.destroy_sampler(self.sampler, None);
        }
        for image in [
            &mut self.heights,
            &mut self.colour,
            &mut self.classes,
            &mut self.horizon,
            &mut self.target,
            &mut self.depth,
        ] {
            image.destroy(gpu);
        }
        self.readback.destroy(gpu);
        self.indices.destroy(gpu);
        // SAFETY: every object made from the device is gone.
        unsafe { ManuallyDrop::drop(&mut self.gpu) };
    }
}
