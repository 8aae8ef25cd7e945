//! Buffers and images with their gpu-allocator memory. They are released
//! explicitly (`destroy`), in the order their owner chooses, because the
//! device they belong to must outlive them.

use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};

use crate::error::{Context, RenderError, Result};
use crate::gpu::Gpu;

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
            .initial_layout(vk::ImageLayout::UNDEFINED);
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
        Ok(Image { image, view, format, layers, allocation: Some(allocation) })
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
