//! The conformance capture (the `CAPTURE` vertex shader writing every
//! vertex's position to a storage buffer, rasteriser off) and the read-back
//! of a finished frame.
//!
//! The key decision: the capture runs through the same frame resources,
//! descriptor set, push constants and records as a drawn frame (only the
//! pipeline differs), so what it checks is what the depth and shaded passes
//! compute; it waits for the device before and after, being a test path.

use ash::vk;
use gpu_allocator::MemoryLocation;
use planet_terrain::abi::{NODE_VERTICES, PushConstants, binding};

use super::Backend;
use super::barrier::{MemoryUse, memory_barrier};
use super::frames::Retired;
use super::resources::Buffer;
use crate::error::{Context, Result};
use crate::image::RgbaImage;

impl Backend {
    /// Whether the device can run the capture (vertex-stage stores).
    pub(crate) fn can_capture(&self) -> bool {
        self.pipelines.capture.is_some()
    }

    /// Runs the capture over the `count` records written into retired frame
    /// resources; returns `NODE_VERTICES` positions per record.
    pub(crate) fn capture(
        &mut self,
        frame: Retired,
        constants: PushConstants,
        count: usize,
    ) -> Result<Option<Vec<[f32; 3]>>> {
        let Some(capture) = self.pipelines.capture else { return Ok(None) };
        let index = frame.index();
        let vertices = count * NODE_VERTICES as usize;
        let mut buffer = Buffer::new(
            &self.gpu,
            (vertices.max(1) * 16) as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuToCpu,
            "captured vertices",
        )?;
        let result = self.run_capture(index, capture, constants, count, &buffer);
        let positions = result.map(|()| {
            buffer
                .bytes()
                .chunks_exact(16)
                .take(vertices)
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
        index: usize,
        capture: vk::Pipeline,
        constants: PushConstants,
        count: usize,
        buffer: &Buffer,
    ) -> Result<()> {
        let frame = self.frame_handles(index);
        let fence = self.frames[index].fence;
        let info = [vk::DescriptorBufferInfo::default().buffer(buffer.buffer).offset(0).range(vk::WHOLE_SIZE)];
        let write = [vk::WriteDescriptorSet::default()
            .dst_set(frame.set)
            .dst_binding(binding::CAPTURED)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info)];
        let device = self.gpu.device.clone();
        // SAFETY: the set is not in use (the caller finished every frame and
        // retired this one); all handles are valid.
        unsafe {
            device.update_descriptor_sets(&write, &[]);
            device.reset_command_pool(frame.pool, vk::CommandPoolResetFlags::empty()).during("resetting commands")?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            device.begin_command_buffer(frame.commands, &begin).during("recording")?;
        }
        let area = crate::renderer::PixelRect::whole(self.settings.size);
        self.begin_depth_only(frame.commands, area, true);
        let to_host = [memory_barrier(MemoryUse::VertexStorage, MemoryUse::HostRead)];
        // SAFETY: recording inside the depth-only rendering begun above;
        // the barrier makes the vertex stores visible to the host.
        unsafe {
            device.cmd_bind_pipeline(frame.commands, vk::PipelineBindPoint::GRAPHICS, capture);
            self.bind_common(frame.commands, frame.set, &constants, area);
            if count > 0 {
                device.cmd_draw(frame.commands, NODE_VERTICES, count as u32, 0, 0);
            }
            device.cmd_end_rendering(frame.commands);
            device.cmd_pipeline_barrier2(frame.commands, &vk::DependencyInfo::default().memory_barriers(&to_host));
            device.end_command_buffer(frame.commands).during("recording")?;
            let commands = [frame.commands];
            let submit = [vk::SubmitInfo::default().command_buffers(&commands)];
            device.queue_submit(self.gpu.queue, &submit, fence).during("submitting the capture")?;
        }
        self.frames[index].submitted = true;
        self.frames[index].read_back = false;
        self.frame_number += 1;
        self.finish()?;
        Ok(())
    }

    /// The image of the last frame submitted with `read_back`, once it is
    /// finished; `None` when that frame was not read back (or was taken).
    pub(crate) fn read_back(&mut self) -> Result<Option<RgbaImage>> {
        self.finish()?;
        let last = self.last_frame_index();
        if !self.frames[last].read_back {
            return Ok(None);
        }
        self.frames[last].read_back = false;
        let (width, height) = self.settings.size;
        let pixels = self.readback.bytes()[..(width * height * 4) as usize].to_vec();
        Ok(Some(RgbaImage { width, height, pixels }))
    }
}
