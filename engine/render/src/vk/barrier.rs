//! Barriers derived from declared uses (wgpu-hal's model).
//!
//! The key decision: no call site writes a barrier. A resource is always in
//! one declared use ([`ImageUse`] for images, [`MemoryUse`] for global
//! memory), each use maps to exactly one (stages, access, layout) in
//! [`ImageUse::state`] / [`MemoryUse::state`], and a barrier is derived from
//! a transition `from -> to`: the first scope is `from`'s stages and its
//! writes, the second is `to`'s stages and accesses, the layouts are the two
//! uses' layouts. Images track the current use of every array layer
//! ([`LayerUses`]), so a barrier's `oldLayout` is what the layer really is
//! (never a guess), and moving a layer to the read-only use it already has
//! records nothing.

use std::ops::Range;

use ash::vk;

/// What an image (or one of its array layers) is being used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ImageUse {
    /// Fresh memory: nothing to wait for, nothing worth keeping.
    Undefined,
    /// A swapchain image just acquired: the acquire semaphore's wait at the
    /// transfer stage orders it, and its old contents are not kept.
    Acquired,
    /// Written by a copy, blit or clear.
    TransferDst,
    /// Read by a copy or blit.
    TransferSrc,
    /// Sampled or fetched by the vertex and fragment shaders.
    ShaderRead,
    /// Drawn into as a colour attachment (blending reads it too).
    ColorTarget,
    /// Tested and written as the depth attachment.
    DepthTarget,
    /// Handed to the presentation engine.
    Present,
}

/// What global memory (buffers, through `MemoryBarrier2`) is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemoryUse {
    /// Written by a copy or a fill.
    TransferDst,
    /// Read and written as a storage buffer by the vertex shader.
    VertexStorage,
    /// Read and written as a storage buffer by the fragment shader.
    FragmentStorage,
    /// Read by the host after the frame's fence.
    HostRead,
}

const WRITES: vk::AccessFlags2 = vk::AccessFlags2::from_raw(
    vk::AccessFlags2::TRANSFER_WRITE.as_raw()
        | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE.as_raw()
        | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw()
        | vk::AccessFlags2::SHADER_STORAGE_WRITE.as_raw()
        | vk::AccessFlags2::HOST_WRITE.as_raw(),
);

const SHADERS: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::from_raw(
    vk::PipelineStageFlags2::VERTEX_SHADER.as_raw() | vk::PipelineStageFlags2::FRAGMENT_SHADER.as_raw(),
);

const FRAGMENT_TESTS: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::from_raw(
    vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS.as_raw() | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS.as_raw(),
);

impl ImageUse {
    /// The one mapping from a use to the stages that perform it, the
    /// accesses it makes and the layout it needs.
    pub(crate) fn state(self) -> (vk::PipelineStageFlags2, vk::AccessFlags2, vk::ImageLayout) {
        use vk::{AccessFlags2 as A, ImageLayout as L, PipelineStageFlags2 as S};
        match self {
            ImageUse::Undefined => (S::NONE, A::NONE, L::UNDEFINED),
            ImageUse::Acquired => (S::ALL_TRANSFER, A::NONE, L::UNDEFINED),
            ImageUse::TransferDst => (S::ALL_TRANSFER, A::TRANSFER_WRITE, L::TRANSFER_DST_OPTIMAL),
            ImageUse::TransferSrc => (S::ALL_TRANSFER, A::TRANSFER_READ, L::TRANSFER_SRC_OPTIMAL),
            ImageUse::ShaderRead => (SHADERS, A::SHADER_SAMPLED_READ, L::SHADER_READ_ONLY_OPTIMAL),
            ImageUse::ColorTarget => (
                S::COLOR_ATTACHMENT_OUTPUT,
                A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE,
                L::COLOR_ATTACHMENT_OPTIMAL,
            ),
            ImageUse::DepthTarget => (
                FRAGMENT_TESTS,
                A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
                L::DEPTH_ATTACHMENT_OPTIMAL,
            ),
            ImageUse::Present => (S::NONE, A::NONE, L::PRESENT_SRC_KHR),
        }
    }

    pub(crate) fn layout(self) -> vk::ImageLayout {
        self.state().2
    }

    /// Whether the use writes: a write after a write of the same use still
    /// needs a barrier (a memory dependency without a layout change).
    pub(crate) fn writes(self) -> bool {
        self.state().1.intersects(WRITES)
    }
}

impl MemoryUse {
    /// The one mapping from a memory use to its stages and accesses.
    pub(crate) fn state(self) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
        use vk::{AccessFlags2 as A, PipelineStageFlags2 as S};
        let storage = A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE;
        match self {
            MemoryUse::TransferDst => (S::ALL_TRANSFER, A::TRANSFER_WRITE),
            MemoryUse::VertexStorage => (S::VERTEX_SHADER, storage),
            MemoryUse::FragmentStorage => (S::FRAGMENT_SHADER, storage),
            MemoryUse::HostRead => (S::HOST, A::HOST_READ),
        }
    }
}

/// The barrier for `range` of `image` moving from use `from` to use `to`.
/// With `keep` false the old contents are discarded (old layout
/// `UNDEFINED`) but the first scope still waits for `from`'s accesses.
pub(crate) fn image_barrier(
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    from: ImageUse,
    to: ImageUse,
    keep: bool,
) -> vk::ImageMemoryBarrier2<'static> {
    let (src_stage, src_access, old_layout) = from.state();
    let (dst_stage, dst_access, new_layout) = to.state();
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access & WRITES)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
        .old_layout(if keep { old_layout } else { vk::ImageLayout::UNDEFINED })
        .new_layout(new_layout)
        .image(image)
        .subresource_range(range)
}

/// The global memory barrier for a transition `from -> to`.
pub(crate) fn memory_barrier(from: MemoryUse, to: MemoryUse) -> vk::MemoryBarrier2<'static> {
    let (src_stage, src_access) = from.state();
    let (dst_stage, dst_access) = to.state();
    vk::MemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access & WRITES)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
}

/// The current use of every array layer of one image, in recording order.
///
/// Frames are recorded and submitted in order on one queue, so the use
/// recorded last is the use the layer is in when the next command buffer
/// starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LayerUses {
    uses: Vec<ImageUse>,
}

impl LayerUses {
    pub(crate) fn new(layers: u32) -> LayerUses {
        LayerUses { uses: vec![ImageUse::Undefined; layers as usize] }
    }

    pub(crate) fn get(&self, layer: u32) -> ImageUse {
        self.uses[layer as usize]
    }

    /// Moves `layers` to `to` and returns the barriers that do it, one per
    /// run of adjacent layers in the same use. A layer already in a
    /// read-only `to` needs nothing; one already in a writing `to` gets a
    /// barrier with an unchanged layout (write after write).
    pub(crate) fn transition(
        &mut self,
        image: vk::Image,
        aspect: vk::ImageAspectFlags,
        layers: Range<u32>,
        to: ImageUse,
        keep: bool,
    ) -> Vec<vk::ImageMemoryBarrier2<'static>> {
        let mut barriers = Vec::new();
        let mut run: Option<(u32, u32, ImageUse)> = None;
        let flush = |run: Option<(u32, u32, ImageUse)>, barriers: &mut Vec<_>| {
            if let Some((first, end, from)) = run {
                let range = vk::ImageSubresourceRange::default()
                    .aspect_mask(aspect)
                    .level_count(1)
                    .base_array_layer(first)
                    .layer_count(end - first);
                barriers.push(image_barrier(image, range, from, to, keep));
            }
        };
        for layer in layers {
            let from = std::mem::replace(&mut self.uses[layer as usize], to);
            if from == to && !to.writes() && keep {
                flush(run.take(), &mut barriers);
                continue;
            }
            run = match run {
                Some((first, end, use_)) if end == layer && use_ == from => Some((first, layer + 1, from)),
                other => {
                    flush(other, &mut barriers);
                    Some((layer, layer + 1, from))
                }
            };
        }
        flush(run, &mut barriers);
        barriers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layouts(barriers: &[vk::ImageMemoryBarrier2<'_>]) -> Vec<(u32, u32, vk::ImageLayout, vk::ImageLayout)> {
        barriers
            .iter()
            .map(|b| {
                let r = b.subresource_range;
                (r.base_array_layer, r.layer_count, b.old_layout, b.new_layout)
            })
            .collect()
    }

    #[test]
    fn a_layer_written_twice_is_never_moved_from_shader_read_twice() {
        let mut uses = LayerUses::new(4);
        let image = vk::Image::null();
        let colour = vk::ImageAspectFlags::COLOR;
        uses.transition(image, colour, 0..4, ImageUse::TransferDst, false);
        uses.transition(image, colour, 0..4, ImageUse::ShaderRead, true);
        let first = uses.transition(image, colour, 2..3, ImageUse::TransferDst, true);
        let second = uses.transition(image, colour, 2..3, ImageUse::TransferDst, true);
        use vk::ImageLayout as L;
        assert_eq!(layouts(&first), [(2, 1, L::SHADER_READ_ONLY_OPTIMAL, L::TRANSFER_DST_OPTIMAL)]);
        // Write after write: a memory dependency, the layout unchanged.
        assert_eq!(layouts(&second), [(2, 1, L::TRANSFER_DST_OPTIMAL, L::TRANSFER_DST_OPTIMAL)]);
        assert_eq!(second[0].src_access_mask, vk::AccessFlags2::TRANSFER_WRITE);
        let back = uses.transition(image, colour, 0..4, ImageUse::ShaderRead, true);
        assert_eq!(layouts(&back), [(2, 1, L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL)]);
    }

    #[test]
    fn adjacent_layers_in_the_same_use_share_one_barrier() {
        let mut uses = LayerUses::new(6);
        let barriers =
            uses.transition(vk::Image::null(), vk::ImageAspectFlags::COLOR, 0..6, ImageUse::TransferDst, true);
        assert_eq!(layouts(&barriers), [(0, 6, vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL)]);
    }

    #[test]
    fn reads_wait_for_nothing_but_writes() {
        let b = memory_barrier(MemoryUse::HostRead, MemoryUse::TransferDst);
        assert_eq!(b.src_access_mask, vk::AccessFlags2::NONE, "a read makes nothing available");
        let b = image_barrier(
            vk::Image::null(),
            vk::ImageSubresourceRange::default(),
            ImageUse::ColorTarget,
            ImageUse::TransferSrc,
            true,
        );
        assert_eq!(b.src_access_mask, vk::AccessFlags2::COLOR_ATTACHMENT_WRITE);
        assert_eq!(b.dst_access_mask, vk::AccessFlags2::TRANSFER_READ);
    }
}
