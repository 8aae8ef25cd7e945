//! The swapchain: images to present, recreated when the surface changes.
//!
//! The key decision: the renderer always draws into its own target image
//! and a windowed frame ends by blitting that image into the acquired
//! swapchain image, so headless and windowed frames are the same frame (and
//! `--frames` can read back exactly what the window shows). An out-of-date
//! or suboptimal surface is recreated at the next frame; a minimised window
//! (zero extent) presents nothing.

use ash::vk;

use super::Backend;
use super::device::Gpu;
use crate::error::{Context, Result};

pub(crate) struct Swapchain {
    pub loader: ash::khr::swapchain::Device,
    pub swapchain: vk::SwapchainKHR,
    pub images: Vec<vk::Image>,
    pub extent: vk::Extent2D,
    /// Signalled when the frame that blits into image k is done.
    pub rendered: Vec<vk::Semaphore>,
}

impl Swapchain {
    pub fn new(gpu: &Gpu, size: (u32, u32), vsync: bool, old: vk::SwapchainKHR) -> Result<Swapchain> {
        let surface = gpu.surface.as_ref().expect("a windowed renderer has a surface");
        // SAFETY: valid physical device and surface of this instance.
        let (caps, formats, modes) = unsafe {
            (
                surface
                    .loader
                    .get_physical_device_surface_capabilities(gpu.physical, surface.surface)
                    .during("reading surface capabilities")?,
                surface
                    .loader
                    .get_physical_device_surface_formats(gpu.physical, surface.surface)
                    .during("reading surface formats")?,
                surface
                    .loader
                    .get_physical_device_surface_present_modes(gpu.physical, surface.surface)
                    .during("reading present modes")?,
            )
        };
        // The shaders write display-encoded values, so a UNORM image keeps
        // them as they are (an sRGB image would encode them twice).
        let format = formats
            .iter()
            .find(|f| f.format == vk::Format::B8G8R8A8_UNORM || f.format == vk::Format::R8G8B8A8_UNORM)
            .copied()
            .unwrap_or(formats[0]);
        let mode = if vsync {
            vk::PresentModeKHR::FIFO
        } else if modes.contains(&vk::PresentModeKHR::IMMEDIATE) {
            vk::PresentModeKHR::IMMEDIATE
        } else if modes.contains(&vk::PresentModeKHR::MAILBOX) {
            vk::PresentModeKHR::MAILBOX
        } else {
            vk::PresentModeKHR::FIFO
        };
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: size.0.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: size.1.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface.surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old);
        let loader = ash::khr::swapchain::Device::new(&gpu.instance, &gpu.device);
        // SAFETY: valid device with the swapchain extension, and surface.
        let swapchain = unsafe { loader.create_swapchain(&info, None) }.during("creating the swapchain")?;
        // SAFETY: the swapchain was just created.
        let images = unsafe { loader.get_swapchain_images(swapchain) }.during("listing swapchain images")?;
        let mut rendered = Vec::with_capacity(images.len());
        for _ in &images {
            // SAFETY: valid device.
            let semaphore = unsafe { gpu.device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
                .during("creating a semaphore")?;
            rendered.push(semaphore);
        }
        Ok(Swapchain { loader, swapchain, images, extent, rendered })
    }

    /// # Safety
    /// The device is idle (nothing uses the swapchain or its semaphores).
    pub unsafe fn destroy(&mut self, gpu: &Gpu) {
        // SAFETY: per the function contract.
        unsafe {
            for semaphore in self.rendered.drain(..) {
                gpu.device.destroy_semaphore(semaphore, None);
            }
            self.loader.destroy_swapchain(self.swapchain, None);
        }
        self.swapchain = vk::SwapchainKHR::null();
    }
}

impl Backend {
    pub(super) fn swapchain_matches(&self, size: (u32, u32)) -> bool {
        self.swapchain.as_ref().is_none_or(|s| (s.extent.width, s.extent.height) == size)
    }

    pub(super) fn recreate_swapchain(&mut self) -> Result<()> {
        let Some(mut old) = self.swapchain.take() else { return Ok(()) };
        // Bounded first (a hung GPU ends here with an error), then idle.
        self.finish()?;
        self.gpu.wait_idle()?;
        let created = Swapchain::new(&self.gpu, self.settings.size, self.vsync, old.swapchain);
        // SAFETY: the device is idle; the old swapchain was retired by the
        // new one's creation (or is simply released on failure).
        unsafe { old.destroy(&self.gpu) };
        let swapchain = created?;
        // The window decides the extent; follow it with the target.
        let extent = (swapchain.extent.width, swapchain.extent.height);
        self.swapchain = Some(swapchain);
        if extent != self.settings.size && extent.0 > 0 && extent.1 > 0 {
            self.rebuild_targets(extent)?;
        }
        Ok(())
    }

    /// Acquires the next swapchain image for frame resources `index`;
    /// `None` when the window cannot take a frame now (minimised, or the
    /// surface changed: it is recreated for the next frame).
    pub(super) fn acquire(&mut self, index: usize) -> Result<Option<u32>> {
        let Some(swapchain) = &self.swapchain else { return Ok(None) };
        if swapchain.extent.width == 0 || swapchain.extent.height == 0 {
            return Ok(None);
        }
        if (swapchain.extent.width, swapchain.extent.height) != self.settings.size {
            self.recreate_swapchain()?;
            return Ok(None);
        }
        let swapchain = self.swapchain.as_ref().expect("checked");
        // SAFETY: the semaphore is unsignalled: its last wait was by this
        // frame resource's previous submission, retired in `begin_frame`.
        let acquired = unsafe {
            swapchain.loader.acquire_next_image(
                swapchain.swapchain,
                crate::conv::wait_timeout_ns(),
                self.frames[index].acquired,
                vk::Fence::null(),
            )
        };
        match acquired {
            // Suboptimal still presents; it is recreated afterwards.
            Ok((image, _suboptimal)) => Ok(Some(image)),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.recreate_swapchain()?;
                Ok(None)
            }
            Err(e) => Err(crate::conv::map_result(e, "acquiring a swapchain image")),
        }
    }

    pub(super) fn present(&mut self, image: u32) -> Result<bool> {
        let swapchain = self.swapchain.as_ref().expect("presenting to it");
        let waits = [swapchain.rendered[image as usize]];
        let chains = [swapchain.swapchain];
        let images = [image];
        let info = vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&chains).image_indices(&images);
        // SAFETY: the image was acquired and the submit that renders into it
        // signals `waits`.
        match unsafe { swapchain.loader.queue_present(self.gpu.queue, &info) } {
            Ok(false) => Ok(true),
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.recreate_swapchain()?;
                Ok(true)
            }
            Err(e) => Err(crate::conv::map_result(e, "presenting")),
        }
    }
}
