//! Creating the renderer's Vulkan objects: pipelines, slot images, targets,
//! per-frame resources. Split from `renderer.rs` so the frame logic reads on
//! its own; every object lands in the `Renderer` as soon as it exists, so a
//! failure part-way leaves nothing behind.

use std::ffi::CStr;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::conv::{CLASS_FORMAT, COLOUR_FORMAT, DEPTH_FORMAT, HEIGHT_FORMAT, SIDE, TARGET_FORMAT, TILE_UPLOAD_BYTES};
use planet_terrain::abi::{PushConstants, RECORD_BYTES, binding, timestamp};

use crate::error::{Context, Result};
use crate::renderer::{FrameResources, Renderer, lattice_indices, spirv};
use crate::resources::{Buffer, Image};

const MAIN: &CStr = c"main";

/// Which pipeline to make.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    TerrainDepth,
    TerrainShaded,
    TerrainWire,
    Body,
    Sky,
    Hud,
    Capture,
}

impl Renderer {
    pub(crate) fn build(&mut self) -> Result<()> {
        self.build_layouts()?;
        for kind in [Kind::TerrainDepth, Kind::TerrainShaded, Kind::Body, Kind::Sky, Kind::Hud] {
            let pipeline = self.build_pipeline(kind)?;
            match kind {
                Kind::TerrainDepth => self.pipelines.depth = pipeline,
                Kind::TerrainShaded => self.pipelines.shaded = pipeline,
                Kind::Body => self.pipelines.body = pipeline,
                Kind::Sky => self.pipelines.sky = pipeline,
                _ => self.pipelines.hud = pipeline,
            }
        }
        if self.gpu.vertex_stores {
            self.pipelines.capture = Some(self.build_pipeline(Kind::Capture)?);
        }
        if self.gpu.wireframe {
            self.pipelines.wire = Some(self.build_pipeline(Kind::TerrainWire)?);
        }
        self.build_images()?;
        self.build_targets()?;
        self.build_frames()?;
        Ok(())
    }

    fn build_layouts(&mut self) -> Result<()> {
        let both = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::RECORDS)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(both),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::SLOT_HEIGHTS)
                .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                .descriptor_count(1)
                .stage_flags(both),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::SLOT_COLOUR)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(both),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::SLOT_CLASSES)
                .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                .descriptor_count(1)
                .stage_flags(both),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::CAPTURED)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::COUNTERS)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::FRAGMENT),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::HUD)
                .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::FRAGMENT),
        ];
        let device = &self.gpu.device;
        // SAFETY: valid device; the create infos reference locals.
        unsafe {
            self.pipelines.set_layout = device
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)
                .during("creating the descriptor set layout")?;
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)
                .offset(0)
                .size(std::mem::size_of::<PushConstants>() as u32)];
            let layouts = [self.pipelines.set_layout];
            self.pipelines.layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges),
                    None,
                )
                .during("creating the pipeline layout")?;
        }
        Ok(())
    }

    fn shader(&self, code: &[u8]) -> Result<vk::ShaderModule> {
        let words: Vec<u32> =
            code.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        // SAFETY: `words` is SPIR-V produced by glslangValidator at build time.
        unsafe { self.gpu.device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .during("creating a shader module")
    }

    fn build_pipeline(&self, kind: Kind) -> Result<vk::Pipeline> {
        let (vertex, fragment) = match kind {
            Kind::TerrainDepth => (spirv::TERRAIN_DEPTH_VERT, None),
            Kind::TerrainShaded | Kind::TerrainWire => (spirv::TERRAIN_VERT, Some(spirv::TERRAIN_FRAG)),
            Kind::Body => (spirv::SKY_VERT, Some(spirv::BODY_FRAG)),
            Kind::Sky => (spirv::SKY_VERT, Some(spirv::SKY_FRAG)),
            Kind::Hud => (spirv::SKY_VERT, Some(spirv::HUD_FRAG)),
            Kind::Capture => (spirv::TERRAIN_CAPTURE_VERT, None),
        };
        let vertex = self.shader(vertex)?;
        let fragment = match fragment.map(|f| self.shader(f)).transpose() {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: the module is unused.
                unsafe { self.gpu.device.destroy_shader_module(vertex, None) };
                return Err(e);
            }
        };
        let mut stages = vec![
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vertex).name(MAIN),
        ];
        if let Some(fragment) = fragment {
            stages.push(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::FRAGMENT)
                    .module(fragment)
                    .name(MAIN),
            );
        }
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly =
            vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(if kind == Kind::TerrainWire { vk::PolygonMode::LINE } else { vk::PolygonMode::FILL })
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0)
            .rasterizer_discard_enable(kind == Kind::Capture);
        let multisample =
            vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        // Reversed Z: nearer is greater. The shaded pass redraws exactly the
        // depth pass's positions (`precise` end to end), so it tests
        // greater-or-equal without writing; the body writes the ellipsoid's
        // depth; the sky sits at depth 0 and so lands only where nothing
        // did; the HUD ignores depth.
        let (test, write, compare) = match kind {
            Kind::TerrainDepth | Kind::Capture => (true, true, vk::CompareOp::GREATER),
            Kind::TerrainShaded | Kind::TerrainWire => (true, false, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Body => (true, true, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Sky => (true, false, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Hud => (false, false, vk::CompareOp::ALWAYS),
        };
        let depth = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(test)
            .depth_write_enable(write)
            .depth_compare_op(compare);
        let blend_attachments = [if kind == Kind::Hud {
            vk::PipelineColorBlendAttachmentState::default()
                .blend_enable(true)
                .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
                .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                .color_blend_op(vk::BlendOp::ADD)
                .src_alpha_blend_factor(vk::BlendFactor::ONE)
                .dst_alpha_blend_factor(vk::BlendFactor::ZERO)
                .alpha_blend_op(vk::BlendOp::ADD)
                .color_write_mask(vk::ColorComponentFlags::RGBA)
        } else {
            vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)
        }];
        let with_colour = !matches!(kind, Kind::TerrainDepth | Kind::Capture);
        let blend = if with_colour {
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments)
        } else {
            vk::PipelineColorBlendStateCreateInfo::default()
        };
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let colour_formats = [TARGET_FORMAT];
        let mut rendering = vk::PipelineRenderingCreateInfo::default().depth_attachment_format(DEPTH_FORMAT);
        if with_colour {
            rendering = rendering.color_attachment_formats(&colour_formats);
        }
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(self.pipelines.layout)
            .push_next(&mut rendering);
        // SAFETY: valid device, layout and modules; the create info references locals.
        let result = unsafe { self.gpu.device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
        // SAFETY: modules may be destroyed once pipelines are created.
        unsafe {
            self.gpu.device.destroy_shader_module(vertex, None);
            if let Some(fragment) = fragment {
                self.gpu.device.destroy_shader_module(fragment, None);
            }
        }
        result.map(|p| p[0]).map_err(|(_, e)| crate::conv::map_result(e, "creating a pipeline"))
    }

    fn build_images(&mut self) -> Result<()> {
        let slots = self.settings.slots;
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        self.heights = Image::new(&self.gpu, HEIGHT_FORMAT, (SIDE, SIDE), slots, sampled, "height slots")?;
        self.colour = Image::new(&self.gpu, COLOUR_FORMAT, (SIDE, SIDE), slots, sampled, "colour slots")?;
        self.classes = Image::new(&self.gpu, CLASS_FORMAT, (SIDE, SIDE), slots, sampled, "class slots")?;
        self.hud =
            Image::new(&self.gpu, vk::Format::R8G8B8A8_UNORM, crate::renderer::HUD_SIZE, 1, sampled, "HUD overlay")?;
        let indices = lattice_indices();
        self.indices = Buffer::new(
            &self.gpu,
            (indices.len() * 2) as u64,
            vk::BufferUsageFlags::INDEX_BUFFER,
            MemoryLocation::CpuToGpu,
            "lattice indices",
        )?;
        for (k, i) in indices.iter().enumerate() {
            self.indices.bytes_mut()[2 * k..2 * k + 2].copy_from_slice(&i.to_le_bytes());
        }
        let sampler_info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(0.0);
        // SAFETY: valid device and create info.
        self.sampler = unsafe { self.gpu.device.create_sampler(&sampler_info, None) }.during("creating the sampler")?;
        self.initialise_slots()
    }

    /// The colour and depth targets and the read-back buffer, at the
    /// current size (again after a resize).
    pub(crate) fn build_targets(&mut self) -> Result<()> {
        let size = self.settings.size;
        self.target = Image::new(
            &self.gpu,
            TARGET_FORMAT,
            size,
            1,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            "colour target",
        )?;
        self.depth =
            Image::new(&self.gpu, DEPTH_FORMAT, size, 1, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT, "depth")?;
        self.readback = Buffer::new(
            &self.gpu,
            u64::from(size.0) * u64::from(size.1) * 4,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
            "read-back",
        )?;
        Ok(())
    }

    /// Clears the slot images once and leaves them shader-readable.
    fn initialise_slots(&mut self) -> Result<()> {
        let device = &self.gpu.device;
        // SAFETY: a one-off command buffer on this device's queue, waited
        // for before its pool is destroyed.
        unsafe {
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(self.gpu.queue_family),
                    None,
                )
                .during("creating a command pool")?;
            let result = (|| -> Result<()> {
                let commands = device
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(1),
                    )
                    .during("allocating commands")?[0];
                device.begin_command_buffer(commands, &vk::CommandBufferBeginInfo::default()).during("recording")?;
                let images = [&self.heights, &self.colour, &self.classes, &self.hud];
                let to_general: Vec<_> = images
                    .iter()
                    .map(|image| {
                        vk::ImageMemoryBarrier2::default()
                            .dst_stage_mask(vk::PipelineStageFlags2::CLEAR)
                            .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                            .old_layout(vk::ImageLayout::UNDEFINED)
                            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                            .image(image.image)
                            .subresource_range(image.full_range())
                    })
                    .collect();
                device
                    .cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_general));
                for image in images {
                    let zero = vk::ClearColorValue { uint32: [0; 4] };
                    device.cmd_clear_color_image(
                        commands,
                        image.image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &zero,
                        &[image.full_range()],
                    );
                }
                let done: Vec<_> = images
                    .iter()
                    .map(|image| {
                        vk::ImageMemoryBarrier2::default()
                            .src_stage_mask(vk::PipelineStageFlags2::CLEAR)
                            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                            .dst_stage_mask(
                                vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::FRAGMENT_SHADER,
                            )
                            .dst_access_mask(vk::AccessFlags2::SHADER_SAMPLED_READ)
                            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                            .new_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
                            .image(image.image)
                            .subresource_range(image.full_range())
                    })
                    .collect();
                device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&done));
                device.end_command_buffer(commands).during("recording")?;
                let buffers = [commands];
                let submit = [vk::SubmitInfo::default().command_buffers(&buffers)];
                device.queue_submit(self.gpu.queue, &submit, vk::Fence::null()).during("submitting slot set-up")?;
                device.queue_wait_idle(self.gpu.queue).during("waiting for slot set-up")
            })();
            let _ = device.queue_wait_idle(self.gpu.queue);
            device.destroy_command_pool(pool, None);
            result
        }
    }

    fn build_frames(&mut self) -> Result<()> {
        let count = self.settings.frames_in_flight as u32;
        let sizes = [
            vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 3 * count },
            vk::DescriptorPoolSize { ty: vk::DescriptorType::SAMPLED_IMAGE, descriptor_count: 3 * count },
            vk::DescriptorPoolSize { ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, descriptor_count: count },
        ];
        // SAFETY: valid device and create info.
        self.descriptor_pool = unsafe {
            self.gpu.device.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes),
                None,
            )
        }
        .during("creating the descriptor pool")?;
        for _ in 0..count {
            let frame = self.build_frame()?;
            self.frames.push(frame);
        }
        Ok(())
    }

    fn build_frame(&mut self) -> Result<FrameResources> {
        let gpu = &self.gpu;
        let device = &gpu.device;
        let mut frame = FrameResources {
            pool: vk::CommandPool::null(),
            commands: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            records: Buffer::null(),
            staging: Buffer::null(),
            set: vk::DescriptorSet::null(),
            queries: vk::QueryPool::null(),
            counters: Buffer::null(),
            acquired: vk::Semaphore::null(),
            submitted: false,
            read_back: false,
            frame: 0,
        };
        let result = (|| -> Result<()> {
            // SAFETY: valid device; create infos reference locals.
            unsafe {
                frame.pool = device
                    .create_command_pool(
                        &vk::CommandPoolCreateInfo::default().queue_family_index(gpu.queue_family),
                        None,
                    )
                    .during("creating a command pool")?;
                frame.commands = device
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default().command_pool(frame.pool).command_buffer_count(1),
                    )
                    .during("allocating commands")?[0];
                frame.fence = device.create_fence(&vk::FenceCreateInfo::default(), None).during("creating a fence")?;
                frame.queries = device
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(timestamp::COUNT),
                        None,
                    )
                    .during("creating a query pool")?;
                frame.acquired = device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .during("creating a semaphore")?;
            }
            frame.counters = Buffer::new(
                gpu,
                16,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                "frame counters",
            )?;
            frame.records = Buffer::new(
                gpu,
                (self.settings.max_nodes.max(1) * RECORD_BYTES) as u64,
                vk::BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
                "node records",
            )?;
            frame.staging = Buffer::new(
                gpu,
                (self.settings.uploads_per_frame.max(1) * TILE_UPLOAD_BYTES + crate::renderer::HUD_BYTES) as u64,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "staging ring",
            )?;
            let layouts = [self.pipelines.set_layout];
            // SAFETY: the pool has room for one set per frame.
            frame.set = unsafe {
                device.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(self.descriptor_pool)
                        .set_layouts(&layouts),
                )
            }
            .during("allocating a descriptor set")?[0];
            let records = [vk::DescriptorBufferInfo::default().buffer(frame.records.buffer).range(vk::WHOLE_SIZE)];
            let heights = [vk::DescriptorImageInfo::default()
                .image_view(self.heights.view)
                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
            let colour = [vk::DescriptorImageInfo::default()
                .sampler(self.sampler)
                .image_view(self.colour.view)
                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
            let classes = [vk::DescriptorImageInfo::default()
                .image_view(self.classes.view)
                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
            let counters = [vk::DescriptorBufferInfo::default().buffer(frame.counters.buffer).range(vk::WHOLE_SIZE)];
            let hud = [vk::DescriptorImageInfo::default()
                .image_view(self.hud.view)
                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
            let writes = [
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::RECORDS)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&records),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::SLOT_HEIGHTS)
                    .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                    .image_info(&heights),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::SLOT_COLOUR)
                    .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                    .image_info(&colour),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::SLOT_CLASSES)
                    .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                    .image_info(&classes),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::COUNTERS)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&counters),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::HUD)
                    .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                    .image_info(&hud),
            ];
            // SAFETY: the set is fresh and unused.
            unsafe { device.update_descriptor_sets(&writes, &[]) };
            Ok(())
        })();
        match result {
            Ok(()) => Ok(frame),
            Err(e) => {
                // SAFETY: nothing of this frame was submitted.
                unsafe {
                    device.destroy_semaphore(frame.acquired, None);
                    device.destroy_query_pool(frame.queries, None);
                    device.destroy_fence(frame.fence, None);
                    device.destroy_command_pool(frame.pool, None);
                }
                frame.records.destroy(gpu);
                frame.staging.destroy(gpu);
                frame.counters.destroy(gpu);
                Err(e)
            }
        }
    }
}
