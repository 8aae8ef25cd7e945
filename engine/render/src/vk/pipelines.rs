//! Pipeline layouts, shader modules and the graphics pipelines.
//!
//! The key decision: one descriptor set layout and one push-constant block
//! (`planet_terrain::abi`'s bindings and `PushConstants`) serve every
//! pipeline, so a frame binds its set once per pass and the shaders' ABI has
//! one definition; pipelines use dynamic rendering (no render passes) and
//! dynamic viewport and scissor, so a resize rebuilds no pipeline.

use std::ffi::CStr;

use ash::vk;
use planet_terrain::abi::{PushConstants, binding};

use super::Backend;
use crate::conv::{DEPTH_FORMAT, TARGET_FORMAT};
use crate::error::{Context, Result};

const MAIN: &CStr = c"main";

/// The SPIR-V that build.rs compiled from `shaders/`.
mod spirv {
    pub const TERRAIN_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain.vert.spv"));
    pub const TERRAIN_DEPTH_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain_depth.vert.spv"));
    pub const TERRAIN_CAPTURE_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain_capture.vert.spv"));
    pub const TERRAIN_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terrain.frag.spv"));
    pub const SKY_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sky.vert.spv"));
    pub const SKY_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sky.frag.spv"));
    pub const BODY_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/body.frag.spv"));
    pub const BODIES_VERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bodies.vert.spv"));
    pub const BODIES_FRAG: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bodies.frag.spv"));
}

pub(crate) struct Pipelines {
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) depth: vk::Pipeline,
    pub(crate) shaded: vk::Pipeline,
    pub(crate) sky: vk::Pipeline,
    pub(crate) body: vk::Pipeline,
    pub(crate) wire: Option<vk::Pipeline>,
    pub(crate) capture: Option<vk::Pipeline>,
    /// Rigid bodies (vk/bodies.rs), with their own push-constant layout.
    pub(crate) bodies_layout: vk::PipelineLayout,
    pub(crate) bodies: vk::Pipeline,
}

impl Pipelines {
    /// No pipelines yet: destroying them does nothing.
    pub(crate) fn null() -> Pipelines {
        Pipelines {
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            depth: vk::Pipeline::null(),
            shaded: vk::Pipeline::null(),
            sky: vk::Pipeline::null(),
            body: vk::Pipeline::null(),
            wire: None,
            capture: None,
            bodies_layout: vk::PipelineLayout::null(),
            bodies: vk::Pipeline::null(),
        }
    }

    /// # Safety
    /// The pipelines are not in use.
    pub(crate) unsafe fn destroy(&self, device: &ash::Device) {
        // SAFETY: per the function contract.
        unsafe {
            for pipeline in [
                Some(self.depth),
                Some(self.shaded),
                Some(self.sky),
                Some(self.body),
                Some(self.bodies),
                self.wire,
                self.capture,
            ]
            .into_iter()
            .flatten()
            {
                if pipeline != vk::Pipeline::null() {
                    device.destroy_pipeline(pipeline, None);
                }
            }
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_pipeline_layout(self.bodies_layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Which pipeline to make.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    TerrainDepth,
    TerrainShaded,
    TerrainWire,
    Body,
    Sky,
    Capture,
    Bodies,
}

impl Backend {
    /// The layouts and every pipeline the device supports.
    pub(super) fn build_pipelines(&mut self) -> Result<()> {
        self.build_layouts()?;
        self.build_bodies_layout()?;
        for kind in [Kind::TerrainDepth, Kind::TerrainShaded, Kind::Body, Kind::Sky, Kind::Bodies] {
            let pipeline = self.build_pipeline(kind)?;
            match kind {
                Kind::TerrainDepth => self.pipelines.depth = pipeline,
                Kind::TerrainShaded => self.pipelines.shaded = pipeline,
                Kind::Body => self.pipelines.body = pipeline,
                Kind::Sky => self.pipelines.sky = pipeline,
                _ => self.pipelines.bodies = pipeline,
            }
        }
        if self.gpu.vertex_stores {
            self.pipelines.capture = Some(self.build_pipeline(Kind::Capture)?);
        }
        if self.gpu.wireframe {
            self.pipelines.wire = Some(self.build_pipeline(Kind::TerrainWire)?);
        }
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
                .binding(binding::HORIZON)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::FRAGMENT),
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding::HORIZON_BASIS)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
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

    #[expect(
        clippy::too_many_lines,
        reason = "one graphics pipeline's create-info chain, which Vulkan takes as one nested struct"
    )]
    fn build_pipeline(&self, kind: Kind) -> Result<vk::Pipeline> {
        let (vertex, fragment) = match kind {
            Kind::TerrainDepth => (spirv::TERRAIN_DEPTH_VERT, None),
            Kind::TerrainShaded | Kind::TerrainWire => (spirv::TERRAIN_VERT, Some(spirv::TERRAIN_FRAG)),
            Kind::Body => (spirv::SKY_VERT, Some(spirv::BODY_FRAG)),
            Kind::Sky => (spirv::SKY_VERT, Some(spirv::SKY_FRAG)),
            Kind::Capture => (spirv::TERRAIN_CAPTURE_VERT, None),
            Kind::Bodies => (spirv::BODIES_VERT, Some(spirv::BODIES_FRAG)),
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
        // did; bodies test and write it.
        let (test, write, compare) = match kind {
            Kind::TerrainDepth | Kind::Capture => (true, true, vk::CompareOp::GREATER),
            Kind::TerrainShaded | Kind::TerrainWire => (true, false, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Body => (true, true, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Sky => (true, false, vk::CompareOp::GREATER_OR_EQUAL),
            Kind::Bodies => (true, true, vk::CompareOp::GREATER),
        };
        let depth = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(test)
            .depth_write_enable(write)
            .depth_compare_op(compare);
        let blend_attachments =
            [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)];
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
            .layout(if kind == Kind::Bodies { self.pipelines.bodies_layout } else { self.pipelines.layout })
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
}
