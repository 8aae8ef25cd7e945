//! Counting the terrain passes' GPU work: one pipeline statistics query per
//! terrain pass (input triangles, vertex shader runs, triangles out of the
//! clipper, fragment shader runs) and precise occlusion queries on the
//! shaded terrain draw and on the sky draw, per frame in flight.
//!
//! The key decisions: counts are optional, like timestamps. The query pools
//! exist only where the device has `pipelineStatisticsQuery` (and, for the
//! covered pixels, `occlusionQueryPrecise`; device.rs enables both when
//! offered); elsewhere every helper here records nothing and a frame reports
//! its counts as unavailable, so no device loses the renderer for lack of a
//! counter. The statistics queries wrap the terrain draws alone, so the sky,
//! the panels and any pass drawn after the terrain never enter them. Covered
//! pixels are counted apart from the shaded pass, as the frame's pixels less
//! those the sky's draw passed (it passes only where the depth is still the
//! clear value): a count taken by the shaded pass's own depth test would
//! grow with it if that test ever let overdraw through, and so could not
//! show the depth prepass at work. The shaded pass's own count is the other
//! half of that comparison: the fragments through its early depth test,
//! which are those its shader runs for on any device (terrain.frag declares
//! early fragment tests), whatever the device's statistics count.

use ash::vk;

use super::Backend;
use super::device::Gpu;
use crate::error::{Context, Result};
use crate::renderer::{PassCounts, WorkCounts};

/// What each pipeline statistics query counts. Results come back in the
/// order of these bits: input primitives, vertex shader invocations,
/// clipping primitives, fragment shader invocations.
const STATISTICS: vk::QueryPipelineStatisticFlags = vk::QueryPipelineStatisticFlags::from_raw(
    vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_PRIMITIVES.as_raw()
        | vk::QueryPipelineStatisticFlags::VERTEX_SHADER_INVOCATIONS.as_raw()
        | vk::QueryPipelineStatisticFlags::CLIPPING_PRIMITIVES.as_raw()
        | vk::QueryPipelineStatisticFlags::FRAGMENT_SHADER_INVOCATIONS.as_raw(),
);

/// A terrain pass whose work is counted: its pipeline statistics slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CountedPass {
    Depth = 0,
    Shaded = 1,
}

/// Pipeline statistics slots per frame: one per `CountedPass`.
const PASSES: u32 = 2;

/// Occlusion query slots of one frame.
mod occlusion {
    /// The sky's draw: the pixels nothing covers.
    pub const SKY: u32 = 0;
    /// The shaded terrain draw: fragments through its depth test.
    pub const SHADED: u32 = 1;
    pub const COUNT: u32 = 2;
}

/// A frame's counting queries; null pools where the device cannot count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CountQueries {
    pub(crate) statistics: vk::QueryPool,
    pub(crate) occlusion: vk::QueryPool,
}

impl CountQueries {
    pub(crate) fn null() -> CountQueries {
        CountQueries { statistics: vk::QueryPool::null(), occlusion: vk::QueryPool::null() }
    }

    /// The pools for one frame, or null ones where `gpu` does not count.
    pub(crate) fn new(gpu: &Gpu) -> Result<CountQueries> {
        let mut queries = CountQueries::null();
        let device = &gpu.device;
        // SAFETY: valid device; the create infos reference locals; the
        // features the query types need were enabled (device.rs).
        unsafe {
            if gpu.pipeline_statistics {
                queries.statistics = device
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::PIPELINE_STATISTICS)
                            .query_count(PASSES)
                            .pipeline_statistics(STATISTICS),
                        None,
                    )
                    .during("creating the statistics query pool")?;
            }
            if gpu.pipeline_statistics && gpu.precise_occlusion {
                let made = device.create_query_pool(
                    &vk::QueryPoolCreateInfo::default()
                        .query_type(vk::QueryType::OCCLUSION)
                        .query_count(occlusion::COUNT),
                    None,
                );
                match made {
                    Ok(pool) => queries.occlusion = pool,
                    Err(e) => {
                        queries.destroy(gpu);
                        return Err(crate::conv::map_result(e, "creating the occlusion query pool"));
                    }
                }
            }
        }
        Ok(queries)
    }

    /// # Safety
    /// No pending submission uses the pools.
    pub(crate) unsafe fn destroy(&mut self, gpu: &Gpu) {
        // SAFETY: per the function contract; destroying null handles is a no-op.
        unsafe {
            gpu.device.destroy_query_pool(self.statistics, None);
            gpu.device.destroy_query_pool(self.occlusion, None);
        }
        *self = CountQueries::null();
    }

    /// Reads what a completed frame of `pixels` pixels counted; `None`
    /// without statistics.
    ///
    /// # Safety
    /// The frame that last recorded these queries (`record_count_reset`,
    /// then a begin and end of each) has completed.
    pub(crate) unsafe fn read(&self, gpu: &Gpu, pixels: u64) -> Option<WorkCounts> {
        if self.statistics == vk::QueryPool::null() {
            return None;
        }
        let mut passes = [[0u64; 4]; PASSES as usize];
        // SAFETY: per the function contract the queries are available; one
        // [u64; 4] per query matches the four statistics counted.
        unsafe {
            gpu.device.get_query_pool_results(self.statistics, 0, &mut passes, vk::QueryResultFlags::TYPE_64).ok()?;
        }
        let pass = |k: CountedPass| {
            let [input_primitives, vertex_invocations, clipping_primitives, fragment_invocations] = passes[k as usize];
            PassCounts { input_primitives, vertex_invocations, clipping_primitives, fragment_invocations }
        };
        let mut samples = [0u64; occlusion::COUNT as usize];
        let occluded = self.occlusion != vk::QueryPool::null()
            // SAFETY: as above, one 64-bit value per occlusion query.
            && unsafe {
                gpu.device.get_query_pool_results(self.occlusion, 0, &mut samples, vk::QueryResultFlags::TYPE_64)
            }
            .is_ok();
        Some(WorkCounts {
            terrain_depth: pass(CountedPass::Depth),
            terrain_shaded: pass(CountedPass::Shaded),
            covered_pixels: occluded.then(|| pixels.saturating_sub(samples[occlusion::SKY as usize])),
            shaded_samples_passed: occluded.then_some(samples[occlusion::SHADED as usize]),
        })
    }
}

impl Backend {
    /// Whether frames count their terrain passes' work.
    pub(crate) fn counts_work(&self) -> bool {
        self.gpu.pipeline_statistics
    }

    /// Resets a frame's counting queries. `commands` is recording, outside
    /// any rendering.
    pub(super) fn record_count_reset(&self, commands: vk::CommandBuffer, queries: CountQueries) {
        let device = &self.gpu.device;
        // SAFETY: recording outside rendering; the pools are this frame's
        // and no pending submission uses them (the frame was retired).
        unsafe {
            if queries.statistics != vk::QueryPool::null() {
                device.cmd_reset_query_pool(commands, queries.statistics, 0, PASSES);
            }
            if queries.occlusion != vk::QueryPool::null() {
                device.cmd_reset_query_pool(commands, queries.occlusion, 0, occlusion::COUNT);
            }
        }
    }

    /// Starts counting `pass`'s work. `commands` is recording inside the
    /// pass's rendering, which `end_counting` closes the count in.
    pub(super) fn begin_counting(&self, commands: vk::CommandBuffer, queries: CountQueries, pass: CountedPass) {
        if queries.statistics != vk::QueryPool::null() {
            // SAFETY: recording; the query was reset this frame and is
            // begun once, and no other statistics query is active.
            unsafe {
                let none = vk::QueryControlFlags::empty();
                self.gpu.device.cmd_begin_query(commands, queries.statistics, pass as u32, none);
            }
        }
        if pass == CountedPass::Shaded {
            self.begin_occlusion(commands, queries, occlusion::SHADED);
        }
    }

    /// Stops counting `pass`'s work, in the rendering `begin_counting` ran in.
    pub(super) fn end_counting(&self, commands: vk::CommandBuffer, queries: CountQueries, pass: CountedPass) {
        if pass == CountedPass::Shaded {
            self.end_occlusion(commands, queries, occlusion::SHADED);
        }
        if queries.statistics != vk::QueryPool::null() {
            // SAFETY: recording, in the rendering where `begin_counting`
            // began this query.
            unsafe { self.gpu.device.cmd_end_query(commands, queries.statistics, pass as u32) };
        }
    }

    /// Starts counting the sky's samples. `commands` is recording inside
    /// the rendering the sky is drawn in, which `end_sky_count` closes the
    /// count in.
    pub(super) fn begin_sky_count(&self, commands: vk::CommandBuffer, queries: CountQueries) {
        self.begin_occlusion(commands, queries, occlusion::SKY);
    }

    /// Stops counting the sky's samples, in the rendering `begin_sky_count` ran in.
    pub(super) fn end_sky_count(&self, commands: vk::CommandBuffer, queries: CountQueries) {
        self.end_occlusion(commands, queries, occlusion::SKY);
    }

    fn begin_occlusion(&self, commands: vk::CommandBuffer, queries: CountQueries, slot: u32) {
        if queries.occlusion != vk::QueryPool::null() {
            // SAFETY: recording; the query was reset this frame and is begun
            // once, no other occlusion query is active (the shaded draw's
            // ends before the sky's begins), and the device counts
            // precisely (the pool exists only then).
            unsafe {
                let precise = vk::QueryControlFlags::PRECISE;
                self.gpu.device.cmd_begin_query(commands, queries.occlusion, slot, precise);
            }
        }
    }

    fn end_occlusion(&self, commands: vk::CommandBuffer, queries: CountQueries, slot: u32) {
        if queries.occlusion != vk::QueryPool::null() {
            // SAFETY: recording, in the rendering where `begin_occlusion` began it.
            unsafe { self.gpu.device.cmd_end_query(commands, queries.occlusion, slot) };
        }
    }
}
