//! The bodies pass: one small draw per rigid body, inside the shaded pass.
//!
//! The key decision: bodies have their own pipeline layout whose push
//! constants are one body ([`BodyConstants`]), so they need no buffer, no
//! descriptor write and no upload; the vertex shader makes the shape from
//! the vertex index. They test and write reversed-Z depth against the
//! terrain the depth pass laid down, so the ground hides what is behind it
//! and the sky passes only where neither is.

use ash::vk;
use planet_terrain::abi::{BodyConstants, PushConstants};

use super::Backend;
use crate::bodies::BodyDraw;
use crate::error::{Context, Result};

impl Backend {
    /// The bodies' pipeline layout (the common set layout, so the shaders
    /// may include the generated header; a push range of one body).
    pub(super) fn build_bodies_layout(&mut self) -> Result<()> {
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)
            .offset(0)
            .size(std::mem::size_of::<BodyConstants>() as u32)];
        let layouts = [self.pipelines.set_layout];
        // SAFETY: valid device; the create info references locals.
        self.pipelines.bodies_layout = unsafe {
            self.gpu.device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges),
                None,
            )
        }
        .during("creating the bodies' pipeline layout")?;
        Ok(())
    }

    /// The bodies of the next frames (camera-relative: set every frame).
    pub(crate) fn set_bodies(&mut self, bodies: &[BodyDraw]) {
        self.bodies.clear();
        self.bodies.extend_from_slice(bodies);
    }

    /// Draws the bodies; `commands` is recording inside the shaded pass,
    /// with its viewport and scissor set. Returns the draws recorded.
    pub(super) fn record_bodies(&self, commands: vk::CommandBuffer, frame: &PushConstants) -> u32 {
        if self.bodies.is_empty() {
            return 0;
        }
        let device = &self.gpu.device;
        // SAFETY: recording inside a rendering whose attachments match the
        // pipeline's formats; the push range is the layout's.
        unsafe {
            device.cmd_bind_pipeline(commands, vk::PipelineBindPoint::GRAPHICS, self.pipelines.bodies);
            for body in &self.bodies {
                let constants = body.constants(frame);
                device.cmd_push_constants(
                    commands,
                    self.pipelines.bodies_layout,
                    vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
                    0,
                    bytemuck::bytes_of(&constants),
                );
                device.cmd_draw(commands, body.vertices(), 1, 0, 0);
            }
        }
        self.bodies.len() as u32
    }
}
