//! Domain-to-Vulkan conversions in one place: the slot formats and the
//! byte encoding of a tile into them, the push-constant block, and the
//! mapping of `vk::Result` onto [`RenderError`].

use ash::vk;
use planet_terrain::abi::{
    NodeRecord, SLOT_CLASS_LEVELS_SHIFT, SLOT_COLOUR_LEVELS_SHIFT, SLOT_HAS_CLASSES, SLOT_HAS_COLOUR,
};
use planet_terrain::geo::address::TILE_STORED_SAMPLES;
use planet_terrain::ground::SourceTile;
use planet_terrain::ground::horizon::{HORIZON_LEVELS, HORIZON_TEXELS};

use crate::error::RenderError;

/// Heights: u16 fractions of the tile's own range, read with integer fetches.
pub const HEIGHT_FORMAT: vk::Format = vk::Format::R16_UINT;
/// Colour: sRGB-encoded bytes, filtered (colour is not authoritative).
pub const COLOUR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// Surface classes: one byte, integer fetches.
pub const CLASS_FORMAT: vk::Format = vk::Format::R8_UINT;
/// The horizon map: horizon angle and openness as half floats, filtered.
pub const HORIZON_FORMAT: vk::Format = vk::Format::R16G16_SFLOAT;
/// Staging bytes of a whole horizon map (every level).
pub const HORIZON_UPLOAD_BYTES: usize = HORIZON_LAYER_BYTES * HORIZON_LEVELS as usize;
/// Bytes of one level of the horizon map.
pub const HORIZON_LAYER_BYTES: usize = (HORIZON_TEXELS * HORIZON_TEXELS) as usize * 4;
pub const TARGET_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

pub const SIDE: u32 = TILE_STORED_SAMPLES;
pub const SAMPLES: usize = (SIDE * SIDE) as usize;
pub const HEIGHT_BYTES: usize = SAMPLES * 2;
pub const COLOUR_BYTES: usize = SAMPLES * 4;
pub const CLASS_BYTES: usize = SAMPLES;
/// Each block starts on a 16-byte boundary of the staging ring (copy offsets
/// must be multiples of the texel size; 16 serves all three formats).
pub const HEIGHT_OFFSET: usize = 0;
pub const COLOUR_OFFSET: usize = (HEIGHT_BYTES + 15) & !15;
pub const CLASS_OFFSET: usize = COLOUR_OFFSET + COLOUR_BYTES;
/// Staging bytes one tile upload takes.
pub const TILE_UPLOAD_BYTES: usize = (CLASS_OFFSET + CLASS_BYTES + 15) & !15;

/// How a slot's u16 samples decode, and what else it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SlotContent {
    pub height_base: f32,
    pub height_step: f32,
    pub flags: u32,
}

impl SlotContent {
    /// The decoded height of quantised sample `q`, exactly as the shader
    /// computes it.
    pub fn decode(&self, q: u16) -> f32 {
        self.height_base + f32::from(q) * self.height_step
    }
}

/// The depths a source's colour and classes come from: deeper tiles carry
/// them resampled (colour bilinear, classes nearest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataDepths {
    /// The depth the colour is measured to.
    pub colour: Option<u8>,
    /// The deepest tiles the source stores (its height or colour data
    /// depth, whichever is deeper): classes past it are nearest copies.
    pub classes: Option<u8>,
}

impl DataDepths {
    pub fn of(source: &dyn planet_terrain::ground::HeightSource) -> DataDepths {
        let colour = source.colour_data_depth();
        DataDepths { colour, classes: source.data_depth().max(colour) }
    }
}

/// Quantises a tile against its own range and lays it out for upload into
/// `staging` (`TILE_UPLOAD_BYTES` long). Returns how the slot decodes.
pub fn encode_tile(tile: &SourceTile, depths: DataDepths, staging: &mut [u8]) -> SlotContent {
    let (lo, hi) = tile.heights.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let step = if hi > lo { (hi - lo) / 65535.0 } else { 0.0 };
    let quantised = quantise(&tile.heights, lo, step);
    for (k, q) in quantised.iter().enumerate() {
        staging[HEIGHT_OFFSET + 2 * k..HEIGHT_OFFSET + 2 * k + 2].copy_from_slice(&q.to_le_bytes());
    }
    let mut flags = 0;
    if let Some(colour) = &tile.colour {
        for (k, c) in colour.iter().enumerate() {
            staging[COLOUR_OFFSET + 4 * k..COLOUR_OFFSET + 4 * k + 4].copy_from_slice(&[c[0], c[1], c[2], 255]);
        }
        flags |= SLOT_HAS_COLOUR;
        let levels = depths.colour.map_or(0, |d| tile.tile.depth().saturating_sub(d)).min(31);
        flags |= u32::from(levels) << SLOT_COLOUR_LEVELS_SHIFT;
    }
    if let Some(classes) = &tile.classes {
        staging[CLASS_OFFSET..CLASS_OFFSET + CLASS_BYTES].copy_from_slice(classes);
        flags |= SLOT_HAS_CLASSES;
        let levels = depths.classes.map_or(0, |d| tile.tile.depth().saturating_sub(d)).min(7);
        flags |= u32::from(levels) << SLOT_CLASS_LEVELS_SHIFT;
    }
    SlotContent { height_base: lo, height_step: step, flags }
}

/// A tile laid out for upload ahead of its frame (on a loader thread): the
/// bytes [`encode_tile`] writes into staging and how the slot decodes, so
/// the frame only copies them.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedUpload {
    pub bytes: Vec<u8>,
    pub content: SlotContent,
    pub colour: bool,
    pub classes: bool,
}

/// [`encode_tile`] into a buffer of its own.
pub fn encode_upload(tile: &SourceTile, depths: DataDepths) -> EncodedUpload {
    let mut bytes = vec![0; TILE_UPLOAD_BYTES];
    let content = encode_tile(tile, depths, &mut bytes);
    EncodedUpload { bytes, content, colour: tile.colour.is_some(), classes: tile.classes.is_some() }
}

/// Heights as u16 fractions of `base + q * step`, nearest.
pub fn quantise(heights: &[f32], base: f32, step: f32) -> Vec<u16> {
    heights
        .iter()
        .map(|&h| if step > 0.0 { ((h - base) / step).round().clamp(0.0, 65535.0) as u16 } else { 0 })
        .collect()
}

/// A record completed with what its slot holds: how its heights decode,
/// what blocks the slot has, and a skirt at least four quantisation steps
/// deep (the per-tile quantisation neighbours may disagree by). Draws and
/// the conformance capture both read records through this.
pub fn filled_record(record: &NodeRecord, content: SlotContent) -> NodeRecord {
    NodeRecord {
        height_base: content.height_base,
        height_step: content.height_step,
        slot_flags: content.flags,
        skirt_m: record.skirt_m.max(4.0 * content.height_step),
        ..*record
    }
}

/// How long any wait on the GPU (a frame's fence, a swapchain image) may
/// take before the GPU counts as no longer responding: far beyond any frame
/// this renderer draws, even on a CPU rasteriser, and short enough that a
/// hung device ends the run with an error instead of a hang.
pub const GPU_WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The timeout of a Vulkan wait, in nanoseconds.
pub(crate) fn wait_timeout_ns() -> u64 {
    GPU_WAIT_TIMEOUT.as_nanos() as u64
}

/// A failed Vulkan call as the renderer's error: a lost device, memory, or
/// (for a bounded wait, `TIMEOUT`) a GPU that stopped responding.
pub(crate) fn map_result(result: vk::Result, during: &'static str) -> RenderError {
    match result {
        vk::Result::ERROR_DEVICE_LOST => RenderError::DeviceLost { during },
        vk::Result::TIMEOUT | vk::Result::NOT_READY => {
            RenderError::Timeout { during, seconds: GPU_WAIT_TIMEOUT.as_secs() }
        }
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
            RenderError::OutOfMemory { during }
        }
        result => RenderError::Vulkan { during, result },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_that_runs_out_or_a_lost_device_says_the_gpu_stopped() {
        assert_eq!(
            map_result(vk::Result::TIMEOUT, "waiting for a frame").to_string(),
            "the GPU stopped responding: waiting for a frame did not finish within 10 s (the device may be lost or hung)"
        );
        assert_eq!(
            map_result(vk::Result::ERROR_DEVICE_LOST, "waiting for a frame").to_string(),
            "the GPU device was lost during waiting for a frame (a driver reset or a fault; the frame cannot go on)"
        );
        assert!(matches!(map_result(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY, "x"), RenderError::OutOfMemory { .. }));
        assert_eq!(wait_timeout_ns(), 10_000_000_000, "finite: never u64::MAX");
    }
}
