//! The UI pass: egui's tessellated panels drawn over the finished frame,
//! before the read-back copy and the blit to the window.
//!
//! The key decision: the paint pass is `egui-ash-renderer` (0.13: ash 0.38,
//! egui 0.36), not one of our own. It is the maintained ash backend for
//! egui, records into a command buffer we hand it, and supports dynamic
//! rendering, which is how every pass here draws; it brings its own
//! pipeline, font texture uploads and per-clip scissors. It is used with
//! its default allocator (no `gpu-allocator` feature: ours sits in a
//! `Mutex`, the crate wants it behind an `Arc`), which makes one
//! `vkAllocateMemory` per texture and mesh buffer: a handful for a UI.
//! Its texture uploads wait with `vkQueueWaitIdle`, which is unbounded, so
//! every frame in flight is waited for first with our bounded waits and
//! the crate's wait only covers its own small copy. The pass is built on
//! the first frame that asks for a UI, so frames without panels (every
//! golden) make no object of it. Texture frees wait for the next UI frame
//! (after the device finished the frame that drew with them).

use ash::vk;
use egui_ash_renderer::allocator::DefaultAllocator;
use egui_ash_renderer::{DynamicRendering, Options, RenderMode};

use super::Backend;
use super::barrier::ImageUse;
use crate::conv::TARGET_FORMAT;
use crate::error::{RenderError, Result};
use crate::renderer::UiFrame;

type EguiRenderer = egui_ash_renderer::Renderer<DefaultAllocator>;

/// The egui renderer and the pool its texture uploads record in.
pub(super) struct UiPass {
    renderer: EguiRenderer,
    pool: vk::CommandPool,
    /// Textures egui let go of, freed once the frame that used them is done.
    pending_free: Vec<egui::TextureId>,
}

fn ui_error(during: &'static str) -> impl Fn(egui_ash_renderer::RendererError) -> RenderError {
    move |e| RenderError::Ui { during, message: e.to_string() }
}

impl UiPass {
    /// Destroys the pool (the renderer releases itself on drop). The device
    /// must be idle.
    pub(super) fn destroy(self, device: &ash::Device) {
        let pool = self.pool;
        drop(self.renderer);
        // SAFETY: the device is idle (the caller's contract) and the pool's
        // command buffers were all freed after their one-time submits.
        unsafe { device.destroy_command_pool(pool, None) };
    }
}

impl Backend {
    /// Uploads the textures `ui` sets (and frees the ones an earlier frame
    /// let go of), building the pass on first use. Call before recording.
    pub(super) fn prepare_ui(&mut self, ui: &UiFrame) -> Result<()> {
        let needs_device = self.ui.is_none() || !ui.textures.set.is_empty() || !ui.textures.free.is_empty();
        let pending = self.ui.as_ref().is_some_and(|p| !p.pending_free.is_empty());
        if !needs_device && !pending {
            return Ok(());
        }
        // The crate waits on the whole queue: let it wait for nothing of ours.
        self.finish()?;
        if self.ui.is_none() {
            self.ui = Some(self.build_ui()?);
        }
        let queue = self.gpu.queue;
        let pass = self.ui.as_mut().expect("built above");
        for id in std::mem::take(&mut pass.pending_free) {
            pass.renderer.free_texture(id).map_err(ui_error("freeing a UI texture"))?;
        }
        for (id, deltas) in &ui.textures.set {
            for delta in deltas {
                pass.renderer.set_texture(queue, pass.pool, *id, delta).map_err(ui_error("uploading a UI texture"))?;
            }
        }
        pass.pending_free.extend(ui.textures.free.iter().copied());
        Ok(())
    }

    fn build_ui(&self) -> Result<UiPass> {
        let device = &self.gpu.device;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.gpu.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: a valid device and a queue family it was created with.
        let pool = unsafe { device.create_command_pool(&info, None) }
            .map_err(|result| crate::conv::map_result(result, "creating the UI pool"))?;
        let mode = RenderMode::DynamicRendering(DynamicRendering {
            color_attachment_format: TARGET_FORMAT,
            depth_attachment_format: None,
            stencil_attachment_format: None,
        });
        let options = Options { in_flight_frames: self.frames.len(), ..Options::default() };
        match EguiRenderer::with_default_allocator(&self.gpu.instance, self.gpu.physical, device.clone(), mode, options)
        {
            Ok(renderer) => Ok(UiPass { renderer, pool, pending_free: Vec::new() }),
            Err(e) => {
                // SAFETY: the pool was just made and nothing was recorded in it.
                unsafe { device.destroy_command_pool(pool, None) };
                Err(ui_error("building the UI pass")(e))
            }
        }
    }

    /// Draws `ui` over the target (still a colour target after the sky);
    /// returns the draws recorded (one pass). `commands` is recording,
    /// outside any rendering; `prepare_ui` ran for this frame.
    pub(super) fn record_ui(&mut self, commands: vk::CommandBuffer, ui: &UiFrame) -> Result<u32> {
        let (width, height) = self.settings.size;
        let extent = vk::Extent2D { width, height };
        let barriers = self.target.transition(0..1, ImageUse::ColorTarget);
        let colour = [vk::RenderingAttachmentInfo::default()
            .image_view(self.target.view)
            .image_layout(ImageUse::ColorTarget.layout())
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let rendering = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .layer_count(1)
            .color_attachments(&colour);
        let device = self.gpu.device.clone();
        let pass = self.ui.as_mut().expect("prepare_ui built the pass");
        // SAFETY: recording, outside any rendering; the target is this
        // renderer's and in the layout the attachment names (the sky pass
        // left it a colour target; the barrier orders its writes first).
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&barriers));
            device.cmd_begin_rendering(commands, &rendering);
        }
        let drawn = pass.renderer.cmd_draw(commands, extent, ui.pixels_per_point, &ui.primitives);
        // SAFETY: the rendering begun above is still open.
        unsafe { device.cmd_end_rendering(commands) };
        drawn.map_err(ui_error("recording the UI"))?;
        Ok(1)
    }
}
