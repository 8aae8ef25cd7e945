//! Recording a frame: uploads into array-image slots, the position-only
//! depth pass, the shaded pass, the analytic body, the sky, the UI's
//! panels (ui.rs), then the read-back copy and/or the blit into the swapchain image.
//!
//! The key decisions: reversed Z with an infinite far plane (one D32 depth
//! buffer from orbit to the ground); and an upload moves only the layers it
//! writes out of `ShaderRead`, each exactly once per frame (the caller
//! passes one write per slot), behind a barrier whose first scope is every
//! earlier shader read on the queue, so it never overwrites a layer a frame
//! still in flight reads. Every barrier comes from `barrier.rs`.

use ash::vk;
use planet_terrain::abi::{FLAG_ANALYTIC_BODY, PushConstants, timestamp};

use super::Backend;
use super::barrier::{ImageUse, MemoryUse, memory_barrier};
use super::counts::{CountQueries, CountedPass};
use super::frames::SlotWrite;
use super::resources::Image;
use crate::conv::{CLASS_OFFSET, COLOUR_OFFSET, HEIGHT_OFFSET, HORIZON_LAYER_BYTES, SIDE, TILE_UPLOAD_BYTES};
use crate::error::{Context, Result};
use crate::renderer::{Compose, DrawCalls, FrameInput, PixelRect, lattice_indices_len};
use planet_terrain::ground::horizon::HORIZON_TEXELS;

/// One view's share of a frame's recording.
struct ViewPass<'a> {
    constants: &'a PushConstants,
    /// The records it draws (instances, indices into the frame's records).
    records: std::ops::Range<u32>,
    area: PixelRect,
    /// The main view: drawn first, timed, counted, with the rigid bodies.
    main: bool,
    /// Over what the target holds (a second view, a nearer body), and
    /// whether with the sky.
    compose: Compose,
}

/// The handles of one frame's resources that recording uses (copied, so
/// the images' use tracking can be updated while recording).
#[derive(Clone, Copy)]
pub(super) struct FrameHandles {
    pub(super) pool: vk::CommandPool,
    pub(super) commands: vk::CommandBuffer,
    pub(super) set: vk::DescriptorSet,
    pub(super) queries: vk::QueryPool,
    pub(super) counts: CountQueries,
    pub(super) counters: vk::Buffer,
    pub(super) staging: vk::Buffer,
    pub(super) horizon_staging: vk::Buffer,
}

impl Backend {
    pub(super) fn frame_handles(&self, index: usize) -> FrameHandles {
        let frame = &self.frames[index];
        FrameHandles {
            pool: frame.pool,
            commands: frame.commands,
            set: frame.set,
            queries: frame.queries,
            counts: frame.counts,
            counters: frame.counters.buffer,
            staging: frame.staging.buffer,
            horizon_staging: frame.horizon_staging.buffer,
        }
    }

    /// Records frame resources `index`: `writes` are the staged tiles (one
    /// per slot), `present` the acquired swapchain image, if any.
    pub(super) fn record(
        &mut self,
        index: usize,
        input: &FrameInput<'_>,
        writes: &[SlotWrite],
        present: Option<u32>,
    ) -> Result<DrawCalls> {
        let frame = self.frame_handles(index);
        let commands = frame.commands;
        let mut draws = DrawCalls::default();
        if let Some(ui) = input.ui {
            self.prepare_ui(ui)?;
        }
        let device = self.gpu.device.clone();
        // SAFETY: the frame's resources were retired (its fence waited), so
        // its pool, buffers and query pool are free to reuse.
        unsafe {
            device.reset_command_pool(frame.pool, vk::CommandPoolResetFlags::empty()).during("resetting commands")?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            device.begin_command_buffer(commands, &begin).during("recording")?;
            device.cmd_reset_query_pool(commands, frame.queries, 0, timestamp::COUNT);
            device.cmd_fill_buffer(commands, frame.counters, 0, vk::WHOLE_SIZE, 0);
        }
        self.record_count_reset(commands, frame.counts);
        self.record_uploads(commands, frame.staging, writes);
        if let Some(texels) = input.horizon.and_then(|h| h.texels) {
            self.record_horizon_upload(commands, frame.horizon_staging, (texels.len() / HORIZON_LAYER_BYTES) as u32);
        }
        let counters_ready = [memory_barrier(MemoryUse::TransferDst, MemoryUse::FragmentStorage)];
        // SAFETY: recording; the barrier orders the counters' clear before
        // the terrain's and the sky's increments.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().memory_barriers(&counters_ready));
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::TOP_OF_PIPE,
                frame.queries,
                timestamp::FRAME_START,
            );
        }
        let main = ViewPass {
            constants: &input.constants,
            records: 0..input.second.map_or(input.records.len(), |second| second.first_record) as u32,
            area: input.main_area.unwrap_or_else(|| PixelRect::whole(self.settings.size)),
            main: true,
            compose: input.compose,
        };
        self.record_view(commands, frame, &main, input.wireframe, &mut draws);
        if let Some(second) = &input.second {
            let view = ViewPass {
                constants: &second.constants,
                records: second.first_record as u32..input.records.len() as u32,
                area: second.area,
                main: false,
                compose: Compose { over_previous: true, sky: input.compose.sky },
            };
            self.record_view(commands, frame, &view, input.wireframe, &mut draws);
        }
        // SAFETY: recording, outside any rendering; the slot was reset above.
        unsafe {
            device.cmd_write_timestamp2(
                commands,
                vk::PipelineStageFlags2::ALL_GRAPHICS,
                frame.queries,
                timestamp::VIEWS_DONE,
            );
        }
        if let Some(ui) = input.ui.filter(|ui| !ui.primitives.is_empty()) {
            draws.ui += self.record_ui(commands, ui)?;
        }
        if input.read_back || present.is_some() {
            self.record_finish(commands, input.read_back, present);
        }
        // SAFETY: the command buffer is recording.
        unsafe { device.end_command_buffer(commands) }.during("recording")?;
        Ok(draws)
    }

    /// Records one view's depth pass and shaded pass (terrain, the rigid
    /// bodies on the main view, the analytic body, the sky) over its area.
    /// The main view is drawn first, into a target it clears, and is the
    /// one timed and counted; a second view then clears the depth of its
    /// own area only and draws over the target (beside the main view, or
    /// an inset over it). `commands` is recording, outside any rendering.
    fn record_view(
        &mut self,
        commands: vk::CommandBuffer,
        frame: FrameHandles,
        view: &ViewPass<'_>,
        wireframe: bool,
        draws: &mut DrawCalls,
    ) {
        let device = self.gpu.device.clone();
        let analytic_body = view.constants.flags & FLAG_ANALYTIC_BODY != 0;
        let counts = if view.main { Some(frame.counts) } else { None };
        let stamp = |slot: u32| {
            if view.main {
                // SAFETY: recording (a timestamp may be written inside a
                // rendering or outside); each slot is written once per frame
                // (only the main view stamps), after the reset.
                unsafe {
                    device.cmd_write_timestamp2(commands, vk::PipelineStageFlags2::ALL_GRAPHICS, frame.queries, slot);
                }
            }
        };
        // A second view clears the depth of its own area: beneath it lies
        // the main view's, from another camera.
        self.begin_depth_only(commands, view.area, !view.compose.over_previous || !view.main);
        draws.terrain_depth += self.draw_terrain(commands, frame, view, self.pipelines.depth, CountedPass::Depth);
        // SAFETY: recording inside the depth-only rendering begun above.
        unsafe { device.cmd_end_rendering(commands) };
        stamp(timestamp::DEPTH_DONE);

        // The main view redraws the target whole; a second view keeps what
        // the main view drew outside its area. The depth pass's writes must
        // land before the shaded pass tests against them.
        let mut barriers = match view.compose.over_previous {
            false => self.target.discard_to(ImageUse::ColorTarget),
            true => self.target.transition(0..1, ImageUse::ColorTarget),
        };
        barriers.extend(self.depth.transition(0..1, ImageUse::DepthTarget));
        let load = if view.compose.over_previous { vk::AttachmentLoadOp::LOAD } else { vk::AttachmentLoadOp::CLEAR };
        let colour = [vk::RenderingAttachmentInfo::default()
            .image_view(self.target.view)
            .image_layout(ImageUse::ColorTarget.layout())
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] } })];
        // Stored: a frame composed over this one (a nearer body) tests its
        // ground and its sky against it, the ellipsoid's depth included.
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view)
            .image_layout(ImageUse::DepthTarget.layout())
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE);
        let rendering = vk::RenderingInfo::default()
            .render_area(view.area.to_vk())
            .layer_count(1)
            .color_attachments(&colour)
            .depth_attachment(&depth);
        // SAFETY: recording; the barriers put the target and the depth
        // buffer in the layouts the attachments name; every handle is this
        // renderer's.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&barriers));
            device.cmd_begin_rendering(commands, &rendering);
        }
        let shaded = match (wireframe, self.pipelines.wire) {
            (true, Some(wire)) => wire,
            _ => self.pipelines.shaded,
        };
        draws.terrain_shaded += self.draw_terrain(commands, frame, view, shaded, CountedPass::Shaded);
        stamp(timestamp::SHADED_DONE);
        // The rigid bodies are camera-relative to the main view's camera.
        let bodies = if view.main { self.record_bodies(commands, view.constants) } else { 0 };
        if bodies > 0 {
            // The bodies' layout pushes other constants: the frame's are
            // undefined after it (layouts with different push ranges are
            // not compatible), so the analytic body and the sky get them,
            // and the common set, again.
            self.bind_common(commands, frame.set, view.constants, view.area);
        }
        draws.bodies += bodies;
        // SAFETY: recording inside the shaded rendering begun above.
        unsafe {
            if analytic_body {
                device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.body);
                device.cmd_draw(commands, 3, 1, 0, 0);
                draws.body += 1;
            }
            if view.compose.sky {
                device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.sky);
                counts.inspect(|&c| self.begin_sky_count(commands, c));
                device.cmd_draw(commands, 3, 1, 0, 0);
                counts.inspect(|&c| self.end_sky_count(commands, c));
                draws.sky += 1;
            }
            device.cmd_end_rendering(commands);
        }
        stamp(timestamp::SKY_DONE);
    }

    /// Binds `pipeline` and draws the view's records, one instance each of
    /// the lattice, counted as `pass` on the main view; returns the draws
    /// recorded (none without records). `commands` is recording inside the
    /// pass's rendering.
    fn draw_terrain(
        &self,
        commands: vk::CommandBuffer,
        frame: FrameHandles,
        view: &ViewPass<'_>,
        pipeline: vk::Pipeline,
        pass: CountedPass,
    ) -> u32 {
        let device = &self.gpu.device;
        let instances = view.records.end - view.records.start;
        let counts = if view.main { Some(frame.counts) } else { None };
        // SAFETY: recording inside a rendering whose attachments match the
        // pipeline's; the pipeline, set and index buffer are this
        // renderer's, and the instances name records written this frame.
        unsafe {
            device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, pipeline);
            self.bind_common(commands, frame.set, view.constants, view.area);
            counts.inspect(|&c| self.begin_counting(commands, c, pass));
            if instances > 0 {
                device.cmd_draw_indexed(commands, lattice_indices_len(), instances, 0, 0, view.records.start);
            }
            counts.inspect(|&c| self.end_counting(commands, c, pass));
        }
        u32::from(instances > 0)
    }

    /// Copies staged tiles into their slots' squares.
    /// `commands` is recording; `staging` holds `writes` in order.
    fn record_uploads(&mut self, commands: vk::CommandBuffer, staging: vk::Buffer, writes: &[SlotWrite]) {
        if writes.is_empty() {
            return;
        }
        let layout = self.slot_layout;
        let region = |offset: usize, slot: u32| {
            let (layer, (x, y)) = layout.place(slot);
            vk::BufferImageCopy::default()
                .buffer_offset(offset as u64)
                .image_subresource(
                    vk::ImageSubresourceLayers::default()
                        .aspect_mask(vk::ImageAspectFlags::COLOR)
                        .mip_level(0)
                        .base_array_layer(layer)
                        .layer_count(1),
                )
                .image_offset(vk::Offset3D { x: x as i32, y: y as i32, z: 0 })
                .image_extent(vk::Extent3D { width: SIDE, height: SIDE, depth: 1 })
        };
        let mut heights = Vec::new();
        let mut colour = Vec::new();
        let mut classes = Vec::new();
        let mut before = Vec::new();
        let mut written = std::collections::HashSet::with_capacity(writes.len());
        // A layer moves to TRANSFER_DST once however many of its slots are
        // written: the copies into it are of disjoint squares.
        let to_transfer = |image: &mut Image, layer: u32, before: &mut Vec<_>| {
            if image.use_of(layer) != ImageUse::TransferDst {
                before.extend(image.transition(layer..layer + 1, ImageUse::TransferDst));
            }
        };
        for (k, write) in writes.iter().enumerate() {
            let (base, slot) = (k * TILE_UPLOAD_BYTES, write.slot);
            // Two copies into one square in one command would race.
            assert!(written.insert(slot), "slot {slot} written twice in one frame");
            let (layer, _) = layout.place(slot);
            heights.push(region(base + HEIGHT_OFFSET, slot));
            to_transfer(&mut self.heights, layer, &mut before);
            if write.colour {
                colour.push(region(base + COLOUR_OFFSET, slot));
                to_transfer(&mut self.colour, layer, &mut before);
            }
            if write.classes {
                classes.push(region(base + CLASS_OFFSET, slot));
                to_transfer(&mut self.classes, layer, &mut before);
            }
        }
        // Only the layers written move back; the rest never left ShaderRead.
        let mut after = Vec::new();
        for image in [&mut self.heights, &mut self.colour, &mut self.classes] {
            let layers = image.layers;
            after.extend(image.transition(0..layers, ImageUse::ShaderRead));
        }
        let device = &self.gpu.device;
        let dst = ImageUse::TransferDst.layout();
        // SAFETY: `commands` is recording and `staging` holds the blocks the
        // regions name; the barriers move exactly the written layers to
        // TRANSFER_DST and back, and each slot's square (disjoint from every
        // other's, `SlotLayout::place`) is the target of one region.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&before));
            for (image, regions) in
                [(self.heights.image, &heights), (self.colour.image, &colour), (self.classes.image, &classes)]
            {
                if !regions.is_empty() {
                    device.cmd_copy_buffer_to_image(commands, staging, image, dst, regions);
                }
            }
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&after));
        }
    }

    /// Copies a whole staged horizon map (`levels` layers) into its image.
    /// `commands` is recording; `staging` holds the levels in order.
    fn record_horizon_upload(&mut self, commands: vk::CommandBuffer, staging: vk::Buffer, levels: u32) {
        let before = self.horizon.discard_to(ImageUse::TransferDst);
        let regions: Vec<vk::BufferImageCopy> = (0..levels)
            .map(|level| {
                vk::BufferImageCopy::default()
                    .buffer_offset((level as usize * HORIZON_LAYER_BYTES) as u64)
                    .image_subresource(
                        vk::ImageSubresourceLayers::default()
                            .aspect_mask(vk::ImageAspectFlags::COLOR)
                            .base_array_layer(level)
                            .layer_count(1),
                    )
                    .image_extent(vk::Extent3D { width: HORIZON_TEXELS, height: HORIZON_TEXELS, depth: 1 })
            })
            .collect();
        let layers = self.horizon.layers;
        let after = self.horizon.transition(0..layers, ImageUse::ShaderRead);
        let device = &self.gpu.device;
        // SAFETY: `commands` is recording and `staging` holds `levels`
        // whole layers; the first barrier waits for every earlier read of
        // the map on the queue (frames still in flight) before the copy.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&before));
            if !regions.is_empty() {
                let dst = ImageUse::TransferDst.layout();
                device.cmd_copy_buffer_to_image(commands, staging, self.horizon.image, dst, &regions);
            }
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&after));
        }
    }

    /// Copies the finished target back to the host and/or blits it into
    /// swapchain image `present`. `commands` is recording, after the colour
    /// pass; `present` was acquired.
    fn record_finish(&mut self, commands: vk::CommandBuffer, read_back: bool, present: Option<u32>) {
        let (width, height) = self.settings.size;
        let mut to_transfer = self.target.transition(0..1, ImageUse::TransferSrc);
        let swapchain_image = present.map(|k| self.swapchain.as_ref().expect("a windowed renderer").images[k as usize]);
        let colour_range = super::resources::range(vk::ImageAspectFlags::COLOR, 1);
        if let Some(image) = swapchain_image {
            // The acquire semaphore's wait covers the transfer stage.
            to_transfer.push(super::barrier::image_barrier(
                image,
                colour_range,
                ImageUse::Acquired,
                ImageUse::TransferDst,
                true,
            ));
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
        let to_host = [memory_barrier(MemoryUse::TransferDst, MemoryUse::HostRead)];
        let device = &self.gpu.device;
        // SAFETY: `commands` is recording, after the colour pass; the target
        // and the swapchain image have the same extent (the renderer follows
        // the swapchain).
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_transfer));
            let src = ImageUse::TransferSrc.layout();
            if read_back {
                device.cmd_copy_image_to_buffer(commands, self.target.image, src, self.readback.buffer, &region);
                device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().memory_barriers(&to_host));
            }
            if let Some(image) = swapchain_image {
                let dst = ImageUse::TransferDst.layout();
                device.cmd_blit_image(commands, self.target.image, src, image, dst, &blit, vk::Filter::NEAREST);
                let to_present = [super::barrier::image_barrier(
                    image,
                    colour_range,
                    ImageUse::TransferDst,
                    ImageUse::Present,
                    true,
                )];
                device
                    .cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_present));
            }
        }
    }

    /// Sets the viewport and scissor and binds the set, the push constants
    /// and the lattice's index buffer. `commands` is recording.
    pub(super) fn bind_common(
        &self,
        commands: vk::CommandBuffer,
        set: vk::DescriptorSet,
        constants: &PushConstants,
        area: PixelRect,
    ) {
        let device = &self.gpu.device;
        let viewport = [vk::Viewport {
            x: area.x as f32,
            y: area.y as f32,
            width: area.width as f32,
            height: area.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissor = [area.to_vk()];
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

    /// Begins depth-only rendering into the depth buffer over `area`,
    /// cleared there (the depth pass of a view, and the capture pass) or
    /// kept (a nearer body drawn over a farther one). `commands` is
    /// recording.
    pub(super) fn begin_depth_only(&mut self, commands: vk::CommandBuffer, area: PixelRect, clear: bool) {
        let load = if clear { vk::AttachmentLoadOp::CLEAR } else { vk::AttachmentLoadOp::LOAD };
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view)
            .image_layout(ImageUse::DepthTarget.layout())
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 0.0, stencil: 0 } });
        let rendering = vk::RenderingInfo::default().render_area(area.to_vk()).layer_count(1).depth_attachment(&depth);
        // Cleared, the last frame's (or view's) depth is not kept, only
        // waited for; kept, the last frame's writes land first.
        let barrier = match clear {
            true => self.depth.discard_to(ImageUse::DepthTarget),
            false => self.depth.transition(0..1, ImageUse::DepthTarget),
        };
        let device = &self.gpu.device;
        // SAFETY: recording state; the depth image is this renderer's and
        // the barrier puts it in the layout the attachment names.
        unsafe {
            device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&barrier));
            device.cmd_begin_rendering(commands, &rendering);
        }
    }
}
