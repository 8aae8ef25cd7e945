//! Where a slot lives in the slot images.
//!
//! The key decision: a slot is a square of `SIDE` texels in one array layer,
//! and a layer holds `per_side` x `per_side` of them when the slots asked
//! for outnumber the device's array layers (`maxImageArrayLayers`, 2,048 on
//! every device we know). One image per kind therefore still holds every
//! slot, so a frame stays one instanced draw with a dynamically uniform
//! binding; the shaders recover the packing from the image's own size
//! (`textureSize`), so no constant crosses the ABI. Slots at or under the
//! layer limit keep one slot per layer, the layout every earlier frame had.
//! Every stored texel a shader reads lies inside its own slot's square (the
//! colour is filtered only between texel centres 1.5 and `SIDE` - 0.5), so
//! packing changes no pixel's inputs.

use crate::conv::SIDE;

/// How slots are packed into layers of the slot images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotLayout {
    /// Slots along each side of a layer.
    pub per_side: u32,
    /// Array layers of each slot image.
    pub layers: u32,
}

impl SlotLayout {
    /// The layout of `slots` slots on a device with `max_layers` array
    /// layers: the fewest slots per layer that fit. `None` when a layer
    /// would have to be wider than `max_dimension` texels.
    pub fn new(slots: u32, max_layers: u32, max_dimension: u32) -> Option<SlotLayout> {
        let slots = slots.max(1);
        let max_layers = max_layers.max(1);
        let mut per_side = 1u32;
        while u64::from(per_side).pow(2) * u64::from(max_layers) < u64::from(slots) {
            per_side += 1;
        }
        if per_side * SIDE > max_dimension {
            return None;
        }
        Some(SlotLayout { per_side, layers: slots.div_ceil(per_side * per_side) })
    }

    /// The most slots a device with these limits holds.
    pub fn max_slots(max_layers: u32, max_dimension: u32) -> u64 {
        let per_side = u64::from((max_dimension / SIDE).max(1));
        per_side * per_side * u64::from(max_layers)
    }

    /// Width and height of each layer, texels.
    pub fn layer_side(&self) -> u32 {
        self.per_side * SIDE
    }

    /// The layer slot `slot` is in and its square's first texel there.
    /// The shaders' `slot_texel` (shaders/common.glsl) is the same rule.
    pub fn place(&self, slot: u32) -> (u32, (u32, u32)) {
        let per_layer = self.per_side * self.per_side;
        let within = slot % per_layer;
        (slot / per_layer, ((within % self.per_side) * SIDE, (within / self.per_side) * SIDE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_within_the_layer_limit_keep_a_layer_each() {
        let layout = SlotLayout::new(2048, 2048, 16384).expect("fits");
        assert_eq!(layout, SlotLayout { per_side: 1, layers: 2048 });
        assert_eq!(layout.place(2047), (2047, (0, 0)));
    }

    #[test]
    fn more_slots_than_layers_share_layers_in_squares() {
        let layout = SlotLayout::new(4102, 2048, 16384).expect("fits");
        assert_eq!(layout, SlotLayout { per_side: 2, layers: 1026 });
        assert_eq!(layout.layer_side(), 2 * SIDE);
        let places: Vec<_> = (0..5).map(|s| layout.place(s)).collect();
        assert_eq!(places, [(0, (0, 0)), (0, (SIDE, 0)), (0, (0, SIDE)), (0, (SIDE, SIDE)), (1, (0, 0))]);
        // Every slot has its own square.
        let mut seen = std::collections::HashSet::new();
        assert!((0..4102).all(|s| seen.insert(layout.place(s))));
        assert!(seen.iter().all(|&(layer, _)| layer < layout.layers));
    }

    #[test]
    fn a_layer_never_outgrows_the_device() {
        assert_eq!(SlotLayout::new(5, 1, SIDE * 2), None);
        assert_eq!(SlotLayout::new(4, 1, SIDE * 2), Some(SlotLayout { per_side: 2, layers: 1 }));
        assert_eq!(SlotLayout::max_slots(2048, 4096), 31 * 31 * 2048);
    }
}
