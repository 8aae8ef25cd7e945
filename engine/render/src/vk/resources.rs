//! Buffers and images with their gpu-allocator memory, and the renderer's
//! long-lived ones (slot images, targets, read-back).
//!
//! The key decision: resources are released explicitly (`destroy`), in the
//! order their owner chooses, because the device they belong to must
//! outlive them; and every image carries the current use of each of its
//! array layers ([`LayerUses`]), so its barriers are derived, not written.

use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};

use std::ops::Range;

use super::Backend;
use super::barrier::{ImageUse, LayerUses};
use super::device::Gpu;
use crate::conv::{CLASS_FORMAT, COLOUR_FORMAT, DEPTH_FORMAT, HEIGHT_FORMAT, HORIZON_FORMAT, TARGET_FORMAT};
use crate::error::{Context, RenderError, Result};
use crate::renderer::lattice_indices;
use planet_terrain::ground::horizon::{HORIZON_LEVELS, HORIZON_TEXELS};

#[derive(Debug)]
pub struct Buffer {
    pub buffer: vk::Buffer,
    pub size: u64,
    allocation: Option<Allocation>,
}

impl Buffer {
    /// No buffer: destroying it does nothing (a placeholder while building).
    pub fn null() -> Buffer {
        Buffer { buffer: vk::Buffer::null(), size: 0, allocation: None }
    }

    pub fn new(
        gpu: &Gpu,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        name: &'static str,
    ) -> Result<Buffer> {
        let info =
            vk::BufferCreateInfo::default().size(size.max(16)).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer = unsafe { gpu.device.create_buffer(&info, None) }.during(name)?;
        // SAFETY: `buffer` is a valid buffer of this device.
        let requirements = unsafe { gpu.device.get_buffer_memory_requirements(buffer) };
        let allocation = gpu.allocator.lock().expect("allocator lock").allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused and unbound.
                unsafe { gpu.device.destroy_buffer(buffer, None) };
                return Err(RenderError::Allocation { what: name, message: e.to_string() });
            }
        };
        // SAFETY: the allocation satisfies the buffer's requirements.
        unsafe { gpu.device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) }.during(name)?;
        Ok(Buffer { buffer, size, allocation: Some(allocation) })
    }

    /// The host-visible bytes (panics for device-local memory).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let size = self.size as usize;
        let slice = self.allocation.as_mut().and_then(|a| a.mapped_slice_mut()).expect("a host-visible buffer");
        &mut slice[..size]
    }

    pub fn bytes(&self) -> &[u8] {
        let slice = self.allocation.as_ref().and_then(|a| a.mapped_slice()).expect("a host-visible buffer");
        &slice[..self.size as usize]
    }

    pub fn destroy(&mut self, gpu: &Gpu) {
        if let Some(allocation) = self.allocation.take() {
            // SAFETY: the owner guarantees the GPU no longer uses the buffer.
            unsafe { gpu.device.destroy_buffer(self.buffer, None) };
            let _ = gpu.allocator.lock().map(|mut a| a.free(allocation));
        }
    }
}

#[derive(Debug)]
pub struct Image {
    pub image: vk::Image,
    pub view: vk::ImageView,
    pub format: vk::Format,
    pub layers: u32,
    /// The use each array layer is in, as recorded so far.
    uses: LayerUses,
    allocation: Option<Allocation>,
}

impl Image {
    /// No image: destroying it does nothing (a placeholder while building).
    pub fn null() -> Image {
        Image {
            image: vk::Image::null(),
            view: vk::ImageView::null(),
            format: vk::Format::UNDEFINED,
            layers: 0,
            uses: LayerUses::new(0),
            allocation: None,
        }
    }

    pub fn new(
        gpu: &Gpu,
        format: vk::Format,
        (width, height): (u32, u32),
        layers: u32,
        usage: vk::ImageUsageFlags,
        name: &'static str,
    ) -> Result<Image> {
        let extent = vk::Extent3D { width, height, depth: 1 };
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(extent)
            .mip_levels(1)
            .array_layers(layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(ImageUse::Undefined.layout());
        // SAFETY: valid device and create info.
        let image = unsafe { gpu.device.create_image(&info, None) }.during(name)?;
        // SAFETY: valid image of this device.
        let requirements = unsafe { gpu.device.get_image_memory_requirements(image) };
        let allocation = gpu.allocator.lock().expect("allocator lock").allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unused, unbound image.
                unsafe { gpu.device.destroy_image(image, None) };
                return Err(RenderError::Allocation { what: name, message: e.to_string() });
            }
        };
        // SAFETY: the allocation satisfies the image's requirements.
        unsafe { gpu.device.bind_image_memory(image, allocation.memory(), allocation.offset()) }.during(name)?;
        let aspect = aspect_of(format);
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(if layers > 1 || usage.contains(vk::ImageUsageFlags::SAMPLED) {
                vk::ImageViewType::TYPE_2D_ARRAY
            } else {
                vk::ImageViewType::TYPE_2D
            })
            .format(format)
            .subresource_range(range(aspect, layers));
        // SAFETY: the view describes the image just created.
        let view = unsafe { gpu.device.create_image_view(&view_info, None) }.during(name)?;
        Ok(Image { image, view, format, layers, uses: LayerUses::new(layers), allocation: Some(allocation) })
    }

    pub fn destroy(&mut self, gpu: &Gpu) {
        if let Some(allocation) = self.allocation.take() {
            // SAFETY: the owner guarantees the GPU no longer uses the image.
            unsafe {
                gpu.device.destroy_image_view(self.view, None);
                gpu.device.destroy_image(self.image, None);
            }
            let _ = gpu.allocator.lock().map(|mut a| a.free(allocation));
        }
    }

    pub fn full_range(&self) -> vk::ImageSubresourceRange {
        range(aspect_of(self.format), self.layers)
    }

    /// The use array layer `layer` is in.
    pub fn use_of(&self, layer: u32) -> ImageUse {
        self.uses.get(layer)
    }

    /// Moves `layers` to `to`; returns the barriers that do it (none for
    /// layers already in a read-only `to`).
    pub fn transition(&mut self, layers: Range<u32>, to: ImageUse) -> Vec<vk::ImageMemoryBarrier2<'static>> {
        self.uses.transition(self.image, aspect_of(self.format), layers, to, true)
    }

    /// Moves every layer to `to`, discarding the contents (after waiting
    /// for whatever used them last).
    pub fn discard_to(&mut self, to: ImageUse) -> Vec<vk::ImageMemoryBarrier2<'static>> {
        self.uses.transition(self.image, aspect_of(self.format), 0..self.layers, to, false)
    }
}

pub fn aspect_of(format: vk::Format) -> vk::ImageAspectFlags {
    if format == vk::Format::D32_SFLOAT { vk::ImageAspectFlags::DEPTH } else { vk::ImageAspectFlags::COLOR }
}

pub fn range(aspect: vk::ImageAspectFlags, layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .base_mip_level(0)
        .level_count(1)
        .base_array_layer(0)
        .layer_count(layers)
}

impl Backend {
    pub(super) fn build_images(&mut self) -> Result<()> {
        let (side, layers) = (self.slot_layout.layer_side(), self.slot_layout.layers);
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        self.heights = Image::new(&self.gpu, HEIGHT_FORMAT, (side, side), layers, sampled, "height slots")?;
        self.colour = Image::new(&self.gpu, COLOUR_FORMAT, (side, side), layers, sampled, "colour slots")?;
        self.classes = Image::new(&self.gpu, CLASS_FORMAT, (side, side), layers, sampled, "class slots")?;
        let texels = (HORIZON_TEXELS, HORIZON_TEXELS);
        self.horizon = Image::new(&self.gpu, HORIZON_FORMAT, texels, HORIZON_LEVELS, sampled, "horizon map")?;
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
    pub(super) fn build_targets(&mut self) -> Result<()> {
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

    /// Clears the slot images and the horizon map once and leaves them
    /// shader-readable.
    fn initialise_slots(&mut self) -> Result<()> {
        let mut to_clear = Vec::new();
        let mut to_read = Vec::new();
        for image in [&mut self.heights, &mut self.colour, &mut self.classes, &mut self.horizon] {
            to_clear.extend(image.discard_to(ImageUse::TransferDst));
        }
        let images = [&self.heights, &self.colour, &self.classes, &self.horizon].map(|i| (i.image, i.full_range()));
        for image in [&mut self.heights, &mut self.colour, &mut self.classes, &mut self.horizon] {
            to_read.extend(image.transition(0..image.layers, ImageUse::ShaderRead));
        }
        let device = &self.gpu.device;
        // SAFETY: a one-off command buffer on this device's queue, waited
        // for (through a fence, bounded) before its pool and the fence are
        // destroyed; if the wait fails they are left to the device's end.
        // The barriers move every layer to TRANSFER_DST for the clears and
        // then to SHADER_READ_ONLY.
        unsafe {
            let fence = device.create_fence(&vk::FenceCreateInfo::default(), None).during("creating a fence")?;
            let pool = match device.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(self.gpu.queue_family),
                None,
            ) {
                Ok(pool) => pool,
                Err(e) => {
                    device.destroy_fence(fence, None);
                    return Err(crate::conv::map_result(e, "creating a command pool"));
                }
            };
            let mut submitted = false;
            let result = (|| -> Result<()> {
                let commands = device
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(1),
                    )
                    .during("allocating commands")?[0];
                device.begin_command_buffer(commands, &vk::CommandBufferBeginInfo::default()).during("recording")?;
                device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_clear));
                for (image, range) in images {
                    let zero = vk::ClearColorValue { uint32: [0; 4] };
                    device.cmd_clear_color_image(commands, image, ImageUse::TransferDst.layout(), &zero, &[range]);
                }
                device.cmd_pipeline_barrier2(commands, &vk::DependencyInfo::default().image_memory_barriers(&to_read));
                device.end_command_buffer(commands).during("recording")?;
                let buffers = [commands];
                let submit = [vk::SubmitInfo::default().command_buffers(&buffers)];
                device.queue_submit(self.gpu.queue, &submit, fence).during("submitting slot set-up")?;
                submitted = true;
                self.gpu.wait_for_fence(fence, "waiting for slot set-up")
            })();
            // Submitted and not known finished: the GPU may still use both.
            if !submitted || result.is_ok() {
                device.destroy_command_pool(pool, None);
                device.destroy_fence(fence, None);
            }
            result
        }
    }
}
