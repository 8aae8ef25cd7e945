//! Surviving a lost device: the renderer's backend is made again, and
//! what the host kept (the cut, caches, layers, physics, the flight) goes
//! on untouched.
//!
//! The key decision: a lost device invalidates GPU objects only. The
//! renderer drops its backend (every Vulkan object, the window's swapchain
//! first, since a window takes one at a time), makes a new one with the
//! same settings, and forgets what its slots held; the scene then plans
//! its residency from empty, so the next frames upload what the cut needs.
//! Frame numbers and validation messages carry across, so a log and the
//! validation check see one renderer. `PLANET_DEVICE_LOST_AT=FRAME` (or
//! [`crate::Renderer::lose_device_at`]) makes frame FRAME fail as a lost
//! device does, once: a test hook like the bake's crash windows.

use std::ops::{Deref, DerefMut};

use crate::vk::Backend;

/// The variable naming the frame (the renderer's number) to lose the device at.
pub const DEVICE_LOST_AT: &str = "PLANET_DEVICE_LOST_AT";

/// The backend; absent only while a lost one is being replaced (a
/// renderer whose replacement failed is not used again: its caller got
/// the error).
#[derive(Debug)]
pub(crate) struct LiveBackend(pub(crate) Option<Backend>);

impl Deref for LiveBackend {
    type Target = Backend;
    fn deref(&self) -> &Backend {
        self.0.as_ref().expect("a renderer whose device could not be made again is not used")
    }
}

impl DerefMut for LiveBackend {
    fn deref_mut(&mut self) -> &mut Backend {
        self.0.as_mut().expect("a renderer whose device could not be made again is not used")
    }
}

/// The frame `PLANET_DEVICE_LOST_AT` names, if it names one.
pub(crate) fn device_lost_at_from_env() -> Option<u64> {
    std::env::var(DEVICE_LOST_AT).ok()?.trim().parse().ok()
}
