//! What a device allows the renderer's settings to ask for.
//!
//! The key decision: the settings are checked against the chosen device's
//! own numbers (`maxImageArrayLayers`, `maxStorageBufferRange`, its memory
//! heaps) when the renderer is created, before anything is made from them,
//! as a pure function of those numbers. A setting out of range is then an
//! error that names the setting, the value, the largest value the device
//! takes and why, rather than an invalid Vulkan call or a failed allocation
//! later, and the rule is tested without a GPU. The memory rule is an
//! estimate: the slot images may take at most half the device-local heap,
//! and the per-frame host-visible buffers (staging ring, node records) at
//! most half the host-visible heap, leaving room for everything else.

use planet_terrain::abi::RECORD_BYTES;

use crate::conv::{CLASS_BYTES, COLOUR_BYTES, HEIGHT_BYTES, SIDE, TILE_UPLOAD_BYTES};
use crate::error::{RenderError, Result};
use crate::renderer::RendererSettings;
use crate::slot_layout::SlotLayout;

/// Device memory one slot takes in the three slot images.
pub const SLOT_BYTES: u64 = (HEIGHT_BYTES + COLOUR_BYTES + CLASS_BYTES) as u64;

/// The device's numbers the settings are held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    pub max_image_array_layers: u32,
    pub max_image_dimension_2d: u32,
    pub max_storage_buffer_range: u32,
    /// The largest device-local memory heap, bytes.
    pub device_local_bytes: u64,
    /// The largest host-visible memory heap, bytes.
    pub host_visible_bytes: u64,
}

/// Refuses settings the device cannot hold; see the module documentation.
pub fn check(settings: &RendererSettings, limits: &DeviceLimits) -> Result<()> {
    let too_big =
        |setting: &'static str, value: u64, max: u64, why: String| Err(RenderError::Limit { setting, value, max, why });
    let slots = u64::from(settings.slots);
    let by_memory = limits.device_local_bytes / 2 / SLOT_BYTES;
    let by_images = SlotLayout::max_slots(limits.max_image_array_layers, limits.max_image_dimension_2d);
    let max_slots = by_images.min(by_memory);
    if slots > max_slots {
        let why = if by_memory < by_images {
            format!(
                "{SLOT_BYTES} bytes each may take at most half of the {} byte device-local memory heap",
                limits.device_local_bytes
            )
        } else {
            format!(
                "a slot is a {SIDE}-texel square of an image array layer: maxImageArrayLayers is {} and \
                 maxImageDimension2D {} holds {} squares a layer",
                limits.max_image_array_layers,
                limits.max_image_dimension_2d,
                by_images / u64::from(limits.max_image_array_layers.max(1))
            )
        };
        return too_big("slots", slots, max_slots, why);
    }
    let frames = settings.frames_in_flight.max(1) as u64;
    let nodes = settings.max_nodes as u64;
    let by_range = u64::from(limits.max_storage_buffer_range) / RECORD_BYTES as u64;
    // Host-visible memory per frame in flight: the records and the staging ring.
    let host_budget = limits.host_visible_bytes / 2 / frames;
    let by_host = host_budget / RECORD_BYTES as u64;
    if nodes > by_range.min(by_host) {
        let why = if by_range <= by_host {
            format!(
                "{RECORD_BYTES}-byte node records are one storage buffer, and maxStorageBufferRange is {}",
                limits.max_storage_buffer_range
            )
        } else {
            host_memory_reason(limits, frames)
        };
        return too_big("max_nodes", nodes, by_range.min(by_host), why);
    }
    let left = host_budget.saturating_sub(nodes * RECORD_BYTES as u64);
    let max_uploads = left / TILE_UPLOAD_BYTES as u64;
    let uploads = settings.uploads_per_frame as u64;
    if uploads > max_uploads {
        let why = format!("{TILE_UPLOAD_BYTES} staging bytes each: {}", host_memory_reason(limits, frames));
        return too_big("uploads_per_frame", uploads, max_uploads, why);
    }
    Ok(())
}

fn host_memory_reason(limits: &DeviceLimits, frames: u64) -> String {
    format!(
        "the buffers of {frames} frames in flight may take at most half of the {} byte host-visible memory heap",
        limits.host_visible_bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: DeviceLimits = DeviceLimits {
        max_image_array_layers: 2048,
        max_image_dimension_2d: 262,
        max_storage_buffer_range: 1 << 27,
        device_local_bytes: 8 << 30,
        host_visible_bytes: 8 << 30,
    };

    fn settings(slots: u32, max_nodes: usize, uploads_per_frame: usize) -> RendererSettings {
        RendererSettings { slots, max_nodes, uploads_per_frame, ..RendererSettings::default() }
    }

    fn refusal(settings: &RendererSettings, limits: &DeviceLimits) -> String {
        check(settings, limits).expect_err("refused").to_string()
    }

    #[test]
    fn settings_within_the_device_pass() {
        assert!(check(&settings(8192, 8192, 64), &LIMITS).is_ok());
        // 2^27 bytes of 204-byte records.
        assert!(check(&settings(14, 657_930, 1), &LIMITS).is_ok());
    }

    #[test]
    fn each_setting_past_the_device_names_the_limit_and_its_number() {
        assert_eq!(
            refusal(&settings(8193, 8192, 64), &LIMITS),
            "slots 8193 exceeds what this device allows (at most 8192): a slot is a 131-texel square of an image \
             array layer: maxImageArrayLayers is 2048 and maxImageDimension2D 262 holds 4 squares a layer"
        );
        let small_heap = DeviceLimits { device_local_bytes: 100 << 20, ..LIMITS };
        let error = refusal(&settings(1024, 8192, 64), &small_heap);
        assert!(error.starts_with("slots 1024 exceeds what this device allows (at most 436)"), "{error}");
        assert!(error.contains("half of the 104857600 byte device-local memory heap"), "{error}");
        let error = refusal(&settings(512, 657_931, 64), &LIMITS);
        assert!(error.starts_with("max_nodes 657931 exceeds what this device allows (at most 657930)"), "{error}");
        assert!(error.contains("maxStorageBufferRange is 134217728"), "{error}");
        let error = refusal(&settings(512, usize::MAX, 64), &LIMITS);
        assert!(error.contains("maxStorageBufferRange"), "{error}");
        let error = refusal(&settings(512, 8192, 1 << 40), &LIMITS);
        assert!(
            error.starts_with("uploads_per_frame 1099511627776 exceeds what this device allows (at most "),
            "{error}"
        );
        assert!(error.contains("host-visible memory heap"), "{error}");
    }
}
