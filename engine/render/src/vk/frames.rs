//! Per-frame resources and their rotation: command buffer, node records,
//! staging ring, descriptor set, timestamp and work-counting queries and the
//! hole counter, one set per frame in flight, each guarded by a fence.
//!
//! The key decision: a frame's resources are reused only after its fence
//! was waited (`begin_frame` retires the oldest frame before anything of it
//! is written), so the host never writes what the GPU may still read, and
//! what the GPU reported (timestamps, work counts, holes) is collected at
//! that wait.

use ash::vk;
use gpu_allocator::MemoryLocation;
use planet_terrain::abi::{HorizonBasis, MAX_VIEWS, RECORD_BYTES, binding, timestamp};

use super::Backend;
use super::barrier::ImageUse;
use super::counts::CountQueries;
use super::resources::Buffer;
use crate::conv::{HORIZON_UPLOAD_BYTES, TILE_UPLOAD_BYTES};
use crate::error::{Context, Result};
use crate::renderer::{CompletedFrame, DrawCalls, FrameInput, PassTimes};

pub(crate) struct FrameResources {
    pub(crate) pool: vk::CommandPool,
    pub(crate) commands: vk::CommandBuffer,
    pub(crate) fence: vk::Fence,
    pub(crate) records: Buffer,
    pub(crate) staging: Buffer,
    pub(crate) set: vk::DescriptorSet,
    pub(crate) queries: vk::QueryPool,
    pub(crate) counts: CountQueries,
    pub(crate) counters: Buffer,
    /// Where the horizon map lies this frame (`abi::HorizonBasis`).
    pub(crate) horizon_frame: Buffer,
    /// A whole horizon map, staged when the frame carries a new one.
    pub(crate) horizon_staging: Buffer,
    pub(crate) acquired: vk::Semaphore,
    pub(crate) submitted: bool,
    pub(crate) read_back: bool,
    /// Whether the submission in flight recorded the counting queries (a
    /// conformance capture does not): only then are they read at its wait.
    pub(crate) counted: bool,
    pub(crate) frame: u64,
}

impl FrameResources {
    /// # Safety
    /// Nothing of this frame is pending on the GPU.
    pub(crate) unsafe fn destroy(&mut self, gpu: &super::device::Gpu) {
        let device = &gpu.device;
        // SAFETY: per the function contract; destroying null handles is a no-op.
        unsafe {
            device.destroy_semaphore(self.acquired, None);
            device.destroy_query_pool(self.queries, None);
            device.destroy_fence(self.fence, None);
            device.destroy_command_pool(self.pool, None);
            self.counts.destroy(gpu);
        }
        self.records.destroy(gpu);
        self.staging.destroy(gpu);
        self.counters.destroy(gpu);
        self.horizon_frame.destroy(gpu);
        self.horizon_staging.destroy(gpu);
    }
}

/// Frame resources that `begin_frame` retired: the only way to write their
/// host-visible buffers and to submit them, so the host never writes what
/// the GPU may still read. Consumed by the submission.
#[derive(Debug)]
pub(crate) struct Retired {
    index: usize,
}

impl Retired {
    pub(super) fn index(&self) -> usize {
        self.index
    }
}

/// One tile write into a slot's layers: block `k` of the staging ring
/// holds the k-th write; heights always, colour and classes when present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotWrite {
    pub(crate) slot: u32,
    pub(crate) colour: bool,
    pub(crate) classes: bool,
}

/// What submitting a frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Submitted {
    pub(crate) frame: u64,
    pub(crate) draw_calls: DrawCalls,
    pub(crate) presented: bool,
    /// Milliseconds blocked on the swapchain.
    pub(crate) waited_ms: f64,
}

impl Backend {
    pub(super) fn build_frames(&mut self) -> Result<()> {
        let count = self.settings.frames_in_flight as u32;
        let sizes = [
            vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 4 * count },
            vk::DescriptorPoolSize { ty: vk::DescriptorType::SAMPLED_IMAGE, descriptor_count: 2 * count },
            vk::DescriptorPoolSize { ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, descriptor_count: 2 * count },
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

    #[expect(
        clippy::too_many_lines,
        reason = "one frame's GPU resources created together, so their lifetimes and destroy order match"
    )]
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
            counts: CountQueries::null(),
            counters: Buffer::null(),
            horizon_frame: Buffer::null(),
            horizon_staging: Buffer::null(),
            acquired: vk::Semaphore::null(),
            submitted: false,
            read_back: false,
            counted: false,
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
                frame.counts = CountQueries::new(gpu)?;
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
            frame.horizon_frame = Buffer::new(
                gpu,
                (std::mem::size_of::<HorizonBasis>() * MAX_VIEWS as usize) as u64,
                vk::BufferUsageFlags::STORAGE_BUFFER,
                MemoryLocation::CpuToGpu,
                "horizon frame",
            )?;
            frame.horizon_frame.bytes_mut().fill(0);
            frame.horizon_staging = Buffer::new(
                gpu,
                HORIZON_UPLOAD_BYTES as u64,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "horizon staging",
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
                (self.settings.uploads_per_frame.max(1) * TILE_UPLOAD_BYTES) as u64,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "staging ring",
            )?;
            // Touched once now, so the first frames to fill the ring do not
            // pay its page faults (milliseconds of a 64-tile frame's host time).
            frame.staging.bytes_mut().fill(0);
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
                .image_layout(ImageUse::ShaderRead.layout())];
            let colour = [vk::DescriptorImageInfo::default()
                .sampler(self.sampler)
                .image_view(self.colour.view)
                .image_layout(ImageUse::ShaderRead.layout())];
            let classes = [vk::DescriptorImageInfo::default()
                .image_view(self.classes.view)
                .image_layout(ImageUse::ShaderRead.layout())];
            let counters = [vk::DescriptorBufferInfo::default().buffer(frame.counters.buffer).range(vk::WHOLE_SIZE)];
            let horizon = [vk::DescriptorImageInfo::default()
                .sampler(self.sampler)
                .image_view(self.horizon.view)
                .image_layout(ImageUse::ShaderRead.layout())];
            let horizon_frame =
                [vk::DescriptorBufferInfo::default().buffer(frame.horizon_frame.buffer).range(vk::WHOLE_SIZE)];
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
                    .dst_binding(binding::HORIZON)
                    .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                    .image_info(&horizon),
                vk::WriteDescriptorSet::default()
                    .dst_set(frame.set)
                    .dst_binding(binding::HORIZON_BASIS)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&horizon_frame),
            ];
            // SAFETY: the set is fresh and unused.
            unsafe { device.update_descriptor_sets(&writes, &[]) };
            Ok(())
        })();
        match result {
            Ok(()) => Ok(frame),
            Err(e) => {
                // SAFETY: nothing of this frame was submitted.
                unsafe { frame.destroy(gpu) };
                Err(e)
            }
        }
    }

    /// Retires the oldest frame in flight so its resources can be written;
    /// returns them and that frame's GPU times.
    pub(crate) fn begin_frame(&mut self) -> Result<(Retired, Option<PassTimes>)> {
        let index = (self.frame_number % self.frames.len() as u64) as usize;
        let times = self.wait(index)?;
        let frame = &self.frames[index];
        // SAFETY: the fence is not in use by a pending submission (waited).
        unsafe { self.gpu.device.reset_fences(&[frame.fence]) }.during("resetting a fence")?;
        Ok((Retired { index }, times))
    }

    /// The staging ring of retired frame resources.
    pub(crate) fn staging_mut(&mut self, frame: &Retired) -> &mut [u8] {
        self.frames[frame.index].staging.bytes_mut()
    }

    /// The horizon frame and horizon staging of retired frame resources.
    pub(crate) fn horizon_mut(&mut self, frame: &Retired) -> (&mut [u8], &mut [u8]) {
        let frame = &mut self.frames[frame.index];
        (frame.horizon_frame.bytes_mut(), frame.horizon_staging.bytes_mut())
    }

    /// The node-record buffer of retired frame resources.
    pub(crate) fn records_mut(&mut self, frame: &Retired) -> &mut [u8] {
        self.frames[frame.index].records.bytes_mut()
    }

    /// Records retired frame resources (staged and with records written
    /// since `begin_frame`), submits them and presents.
    pub(crate) fn submit(&mut self, frame: Retired, input: &FrameInput<'_>, writes: &[SlotWrite]) -> Result<Submitted> {
        let index = frame.index;
        let waiting = std::time::Instant::now();
        let target = if input.present { self.acquire(index)? } else { None };
        let mut waited_ms = waiting.elapsed().as_secs_f64() * 1e3;
        let draw_calls = self.record(index, input, writes, target)?;
        let frame = &mut self.frames[index];
        frame.read_back = input.read_back;
        // A second view's passes are not counted: the counts are the main
        // view's, and its covered pixels are reckoned over the whole target.
        frame.counted = input.second.is_none();
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
        // in `begin_frame` and is unsignalled, and the semaphores belong to
        // this frame and the acquired image.
        unsafe { self.gpu.device.queue_submit(self.gpu.queue, &[submit], frame.fence) }.during("submitting a frame")?;
        frame.submitted = true;
        let waiting = std::time::Instant::now();
        let presented = match target {
            Some(image) => self.present(image)?,
            None => false,
        };
        waited_ms += waiting.elapsed().as_secs_f64() * 1e3;
        let frame = self.frame_number;
        self.frame_number += 1;
        Ok(Submitted { frame, draw_calls, presented, waited_ms })
    }

    /// Waits for every frame in flight; returns the GPU times of the last one.
    pub(crate) fn finish(&mut self) -> Result<Option<PassTimes>> {
        let last = self.last_frame_index();
        let mut times = None;
        for k in 0..self.frames.len() {
            let t = self.wait(k)?;
            if k == last {
                times = t;
            }
        }
        Ok(times)
    }

    /// The resources of the frame submitted last.
    pub(super) fn last_frame_index(&self) -> usize {
        ((self.frame_number + self.frames.len() as u64 - 1) % self.frames.len() as u64) as usize
    }

    /// Waits for frame resources `index` if submitted; returns its GPU times.
    fn wait(&mut self, index: usize) -> Result<Option<PassTimes>> {
        let frame = &mut self.frames[index];
        if !frame.submitted {
            return Ok(None);
        }
        self.gpu.wait_for_fence(frame.fence, "waiting for a frame")?;
        frame.submitted = false;
        let counter = |at: usize| u32::from_le_bytes(frame.counters.bytes()[at..at + 4].try_into().expect("4 bytes"));
        let (hole_pixels, no_data_pixels) = (counter(0), counter(4));
        let times = self.gpu.timestamp_period_ns.and_then(|period| {
            let mut stamps = [0u64; timestamp::COUNT as usize];
            // SAFETY: the frame completed, so its queries are available.
            let got = unsafe {
                self.gpu.device.get_query_pool_results(frame.queries, 0, &mut stamps, vk::QueryResultFlags::TYPE_64)
            };
            got.ok()?;
            let ms = |a: u32, b: u32| stamps[b as usize].wrapping_sub(stamps[a as usize]) as f64 * period * 1e-6;
            Some(PassTimes {
                terrain_depth_ms: ms(timestamp::FRAME_START, timestamp::DEPTH_DONE),
                terrain_shaded_ms: ms(timestamp::DEPTH_DONE, timestamp::SHADED_DONE),
                sky_ms: ms(timestamp::SHADED_DONE, timestamp::SKY_DONE),
                second_view_ms: ms(timestamp::SKY_DONE, timestamp::VIEWS_DONE),
            })
        });
        // A resize waits for every frame first, so this is the frame's size.
        let pixels = u64::from(self.settings.size.0) * u64::from(self.settings.size.1);
        let counts = if std::mem::take(&mut frame.counted) {
            // SAFETY: the frame completed, and `counted` says its
            // submission recorded the queries.
            unsafe { frame.counts.read(&self.gpu, pixels) }
        } else {
            None
        };
        self.completed.push(CompletedFrame { frame: frame.frame, gpu: times, hole_pixels, no_data_pixels, counts });
        Ok(times)
    }
}
