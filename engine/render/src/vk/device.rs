//! The Vulkan instance, device, queue and allocator, and the validation
//! message log.
//!
//! The key decision: the loader is opened at run time (ash's `loaded`), so a
//! binary built here runs on any machine with a driver, and validation
//! messages are collected rather than printed, so a test can fail on the
//! first one. Device choice prefers a discrete GPU and falls back to any
//! Vulkan 1.3 device with a graphics queue, lavapipe included.

use std::ffi::{CStr, c_void};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use crate::error::{Context, RenderError, Result};
use crate::limits::DeviceLimits;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// What the debug messenger has reported (warnings and errors).
pub type MessageLog = Arc<Mutex<Vec<String>>>;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuSettings {
    /// Turn on the Khronos validation layers and collect their messages.
    pub validation: bool,
    /// Leave the work-counting queries off even where the device has them:
    /// the path a device without them takes, for tests.
    pub skip_work_counts: bool,
}

/// The native handles of a window to present to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowHandles {
    pub display: raw_window_handle::RawDisplayHandle,
    pub window: raw_window_handle::RawWindowHandle,
}

/// A window surface and the loader that owns its functions.
pub(crate) struct Surface {
    pub loader: ash::khr::surface::Instance,
    pub surface: vk::SurfaceKHR,
}

pub struct Gpu {
    _entry: ash::Entry,
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    messages: MessageLog,
    /// Keeps the pointer the messenger holds alive until it is destroyed.
    _messages_for_callback: Box<MessageLog>,
    pub(crate) surface: Option<Surface>,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    pub device_name: String,
    /// Nanoseconds per timestamp tick; `None` when the queue has no timestamps.
    pub timestamp_period_ns: Option<f64>,
    pub vertex_stores: bool,
    pub wireframe: bool,
    /// Whether pipeline statistics queries are enabled (the
    /// `pipelineStatisticsQuery` feature): per-pass invocation counts.
    pub pipeline_statistics: bool,
    /// Whether occlusion queries count exactly (`occlusionQueryPrecise`):
    /// the shaded pass's covered pixels.
    pub precise_occlusion: bool,
    pub limits: DeviceLimits,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("device_name", &self.device_name).finish_non_exhaustive()
    }
}

/// The debug messenger's callback: records each validation message.
///
/// # Safety
/// Called by the Vulkan loader only, with `data` valid for the call and
/// `user` the `MessageLog` registered with the messenger, which the
/// `Gpu` keeps alive for as long as the messenger exists.
unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes valid callback data for the duration of the
    // call, and `user` is the `MessageLog` boxed in `Gpu`, which outlives the
    // messenger (it is destroyed first in `Drop`).
    unsafe {
        let message = if data.is_null() || (*data).p_message.is_null() {
            "(no message)".to_string()
        } else {
            CStr::from_ptr((*data).p_message).to_string_lossy().into_owned()
        };
        let log = &*(user as *const MessageLog);
        if let Ok(mut log) = log.lock() {
            log.push(format!("[{severity:?} {kind:?}] {message}"));
        }
    }
    vk::FALSE
}

impl Gpu {
    /// Creates the instance and the device; with `window`, also the
    /// window's surface, and the device is one that can present to it.
    #[expect(
        clippy::too_many_lines,
        reason = "instance, device, queues, allocator and messenger created in the one order Vulkan requires, each failure unwinding what came before"
    )]
    pub fn new(settings: GpuSettings, window: Option<WindowHandles>) -> Result<Gpu> {
        // SAFETY: loading the system Vulkan loader runs its initialisers;
        // it is the documented way to use a dynamically loaded loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| RenderError::Loader(e.to_string()))?;
        let messages: MessageLog = Arc::new(Mutex::new(Vec::new()));
        let messages_for_callback = Box::new(messages.clone());

        let mut layers = Vec::new();
        let mut extensions = Vec::new();
        if let Some(window) = window {
            let required = ash_window::enumerate_required_extensions(window.display)
                .map_err(|e| crate::conv::map_result(e, "finding the window's surface extensions"))?;
            extensions.extend_from_slice(required);
        }
        if settings.validation {
            // SAFETY: plain enumeration with a valid entry.
            let available = unsafe { entry.enumerate_instance_layer_properties() }.during("listing layers")?;
            let found = available.iter().any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
            if !found {
                return Err(RenderError::NoValidationLayers);
            }
            layers.push(VALIDATION_LAYER.as_ptr());
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let app = vk::ApplicationInfo::default()
            .application_name(c"planet")
            .engine_name(c"planet-render")
            .api_version(vk::API_VERSION_1_3);
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(&*messages_for_callback as *const MessageLog as *mut c_void);
        let mut instance_info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        if settings.validation {
            // Covers instance creation and destruction too.
            instance_info = instance_info.push_next(&mut messenger_info);
        }
        // SAFETY: every pointer in the create info refers to locals alive
        // for the call.
        let instance = unsafe { entry.create_instance(&instance_info, None) }.during("creating the instance")?;
        let debug = if settings.validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: valid instance with the extension enabled; the user
            // data box lives in the returned `Gpu`.
            match unsafe { loader.create_debug_utils_messenger(&messenger_info, None) } {
                Ok(messenger) => Some((loader, messenger)),
                Err(e) => {
                    // SAFETY: nothing else was created from the instance.
                    unsafe { instance.destroy_instance(None) };
                    return Err(crate::conv::map_result(e, "creating the debug messenger"));
                }
            }
        } else {
            None
        };
        let mut gpu = PartialGpu { instance: Some(instance), debug, surface: None };
        if let Some(window) = window {
            let loader = ash::khr::surface::Instance::new(&entry, gpu.instance());
            // SAFETY: the handles come from a live window that outlives the
            // renderer (the viewer drops the renderer first).
            let surface =
                unsafe { ash_window::create_surface(&entry, gpu.instance(), window.display, window.window, None) }
                    .during("creating the window surface")?;
            gpu.surface = Some(Surface { loader, surface });
        }
        let (physical, queue_family, device_name) = choose_device(gpu.instance(), gpu.surface.as_ref())?;
        let instance = gpu.instance();
        // SAFETY: `physical` came from this instance.
        let features = unsafe { instance.get_physical_device_features(physical) };
        let vertex_stores = features.vertex_pipeline_stores_and_atomics == vk::TRUE;
        if features.fragment_stores_and_atomics != vk::TRUE {
            return Err(RenderError::NoDevice {
                found: format!("{device_name} (lacks fragmentStoresAndAtomics, which the hole counter needs)"),
            });
        }
        // Counting features are optional: without them the frame's counts
        // are reported as unavailable, nothing else changes.
        let counts = !settings.skip_work_counts;
        let pipeline_statistics = counts && features.pipeline_statistics_query == vk::TRUE;
        let precise_occlusion = counts && features.occlusion_query_precise == vk::TRUE;
        let enabled = vk::PhysicalDeviceFeatures::default()
            .vertex_pipeline_stores_and_atomics(vertex_stores)
            .fragment_stores_and_atomics(true)
            .fill_mode_non_solid(features.fill_mode_non_solid == vk::TRUE)
            .pipeline_statistics_query(pipeline_statistics)
            .occlusion_query_precise(precise_occlusion);
        let mut features12 = vk::PhysicalDeviceVulkan12Features::default().scalar_block_layout(true);
        let mut features13 =
            vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true).synchronization2(true);
        let priorities = [1.0f32];
        let queues =
            [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let device_extensions = if window.is_some() { vec![ash::khr::swapchain::NAME.as_ptr()] } else { Vec::new() };
        let device_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&device_extensions)
            .enabled_features(&enabled)
            .push_next(&mut features12)
            .push_next(&mut features13);
        // SAFETY: the create info references locals alive for the call.
        let device = unsafe { instance.create_device(physical, &device_info, None) }.during("creating the device")?;
        // SAFETY: the family was created with one queue.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        // SAFETY: valid physical device.
        let properties = unsafe { instance.get_physical_device_properties(physical) };
        // SAFETY: valid physical device.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let timestamp_period_ns = (families[queue_family as usize].timestamp_valid_bits > 0)
            .then_some(f64::from(properties.limits.timestamp_period));
        // SAFETY: valid physical device.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let limits = device_limits(&properties.limits, &memory);
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing was created from the device yet.
                unsafe { device.destroy_device(None) };
                return Err(RenderError::Allocation { what: "the allocator", message: e.to_string() });
            }
        };
        let (instance, debug, surface) = gpu.take();
        Ok(Gpu {
            _entry: entry,
            instance,
            debug,
            messages,
            _messages_for_callback: messages_for_callback,
            surface,
            physical,
            device,
            queue,
            queue_family,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            device_name,
            timestamp_period_ns,
            vertex_stores,
            wireframe: features.fill_mode_non_solid == vk::TRUE,
            pipeline_statistics,
            precise_occlusion,
            limits,
        })
    }

    /// Validation messages so far.
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Waits for `fence` at most `GPU_WAIT_TIMEOUT`: past it, or on a lost
    /// device, an error that says the GPU stopped responding.
    pub fn wait_for_fence(&self, fence: vk::Fence, during: &'static str) -> Result<()> {
        // SAFETY: the fence belongs to this device; a bounded wait.
        unsafe { self.device.wait_for_fences(&[fence], true, crate::conv::wait_timeout_ns()) }.during(during)
    }

    /// Waits for the device to be idle. Unbounded (Vulkan has no timeout
    /// here), so callers first wait for their submitted work through
    /// bounded fence waits: a GPU that stopped responding is caught there,
    /// and this only waits for what fences do not cover (presentation).
    pub fn wait_idle(&self) -> Result<()> {
        // SAFETY: valid device; no other thread records on it.
        unsafe { self.device.device_wait_idle() }.during("waiting for the device")
    }
}

/// An instance (and messenger) not yet owned by a `Gpu`: destroyed if device
/// creation fails part-way.
struct PartialGpu {
    instance: Option<ash::Instance>,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    surface: Option<Surface>,
}

type Parts = (ash::Instance, Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>, Option<Surface>);

impl PartialGpu {
    fn instance(&self) -> &ash::Instance {
        self.instance.as_ref().expect("present until taken")
    }

    fn take(&mut self) -> Parts {
        (self.instance.take().expect("taken once"), self.debug.take(), self.surface.take())
    }
}

impl Drop for PartialGpu {
    fn drop(&mut self) {
        if let Some(instance) = self.instance.take() {
            // SAFETY: nothing created from the instance survives; the
            // messenger goes before the instance.
            unsafe {
                if let Some(surface) = self.surface.take() {
                    surface.loader.destroy_surface(surface.surface, None);
                }
                if let Some((loader, messenger)) = self.debug.take() {
                    loader.destroy_debug_utils_messenger(messenger, None);
                }
                instance.destroy_instance(None);
            }
        }
    }
}

/// The numbers the renderer's settings are held to (`crate::limits`): the
/// largest device-local heap, and the largest heap with a host-visible type.
fn device_limits(limits: &vk::PhysicalDeviceLimits, memory: &vk::PhysicalDeviceMemoryProperties) -> DeviceLimits {
    let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
    let types = &memory.memory_types[..memory.memory_type_count as usize];
    let device_local = heaps
        .iter()
        .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .max()
        .unwrap_or_else(|| heaps.iter().map(|h| h.size).max().unwrap_or(0));
    let host_visible = types
        .iter()
        .filter(|t| t.property_flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE))
        .filter_map(|t| heaps.get(t.heap_index as usize).map(|h| h.size))
        .max()
        .unwrap_or(0);
    DeviceLimits {
        max_image_array_layers: limits.max_image_array_layers,
        max_image_dimension_2d: limits.max_image_dimension2_d,
        max_storage_buffer_range: limits.max_storage_buffer_range,
        device_local_bytes: device_local,
        host_visible_bytes: host_visible,
    }
}

fn choose_device(instance: &ash::Instance, surface: Option<&Surface>) -> Result<(vk::PhysicalDevice, u32, String)> {
    // SAFETY: valid instance.
    let devices = unsafe { instance.enumerate_physical_devices() }.during("listing devices")?;
    let mut found = Vec::new();
    let mut best: Option<(u32, vk::PhysicalDevice, u32, String)> = None;
    for device in devices {
        // SAFETY: `device` came from this instance.
        let properties = unsafe { instance.get_physical_device_properties(device) };
        let name = properties.device_name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        found.push(name.clone());
        if properties.api_version < vk::API_VERSION_1_3 {
            continue;
        }
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(device) };
        let presents = |family: usize| {
            surface.is_none_or(|s| {
                // SAFETY: valid device, family index and surface.
                unsafe { s.loader.get_physical_device_surface_support(device, family as u32, s.surface) }
                    .unwrap_or(false)
            })
        };
        let Some(family) = families
            .iter()
            .enumerate()
            .position(|(k, f)| f.queue_flags.contains(vk::QueueFlags::GRAPHICS) && presents(k))
        else {
            continue;
        };
        let rank = match properties.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        };
        if best.as_ref().is_none_or(|b| rank < b.0) {
            best = Some((rank, device, family as u32, name));
        }
    }
    best.map(|(_, d, f, n)| (d, f, n))
        .ok_or_else(|| RenderError::NoDevice { found: if found.is_empty() { "none".into() } else { found.join(", ") } })
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: the owner has released every object made from the device
        // (the renderer drops its resources before the `Gpu`); the allocator
        // goes before the device it holds, the device before the instance,
        // the messenger before the instance.
        unsafe {
            let _ = self.device.device_wait_idle();
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some(surface) = self.surface.take() {
                surface.loader.destroy_surface(surface.surface, None);
            }
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}
