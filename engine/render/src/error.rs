//! The renderer's one error type. Only what a caller cannot foresee is an
//! error (no device, out of memory, a lost device); misuse is a panic.

use ash::vk;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot load the Vulkan loader (libvulkan.so.1): {0}; install libvulkan1 and a driver (tools/deps.sh)")]
    Loader(String),
    #[error(
        "validation layers were requested but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)"
    )]
    NoValidationLayers,
    #[error("no Vulkan 1.3 device with a graphics queue (found: {found})")]
    NoDevice { found: String },
    #[error("the GPU device was lost during {during} (a driver reset or a fault; the frame cannot go on)")]
    DeviceLost { during: &'static str },
    #[error("out of GPU memory during {during}")]
    OutOfMemory { during: &'static str },
    #[error("Vulkan call failed during {during}: {result}")]
    Vulkan { during: &'static str, result: vk::Result },
    #[error("GPU memory allocation failed for {what}: {message}")]
    Allocation { what: &'static str, message: String },
    #[error("{setting} {value} exceeds what this device allows (at most {max}): {why}")]
    Limit { setting: &'static str, value: u64, max: u64, why: String },
    #[error("the GPU stopped responding: {during} did not finish within {seconds} s (the device may be lost or hung)")]
    Timeout { during: &'static str, seconds: u64 },
    #[error("{records} node records exceed the renderer's capacity of {capacity} (raise the node capacity)")]
    TooManyNodes { records: usize, capacity: usize },
    #[error("could not produce tile {tile}: {message}")]
    Source { tile: String, message: String },
    #[error("the UI pass failed during {during}: {message}")]
    Ui { during: &'static str, message: String },
    #[error("could not write {path}: {message}")]
    Image { path: String, message: String },
}

pub type Result<T> = std::result::Result<T, RenderError>;

/// Attaches what was being done to a failed Vulkan call.
pub(crate) trait Context<T> {
    fn during(self, during: &'static str) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, vk::Result> {
    fn during(self, during: &'static str) -> Result<T> {
        self.map_err(|result| crate::conv::map_result(result, during))
    }
}
