//! How many finished tiles a frame copies, and where a frame's host time went.
//!
//! The key decision: with tiles produced in the background, the frame
//! thread's CPU time is what is bounded, not the uploads. Selection's cost
//! swings with the camera (a frame that meets hundreds of new nodes costs
//! several times one that meets none) while copying a finished tile into
//! staging costs about the same every time, so the frame decides its upload
//! budget after selection, from what selection actually cost this frame:
//! what is left of [`FRAME_CPU_TARGET_MS`], less the rest of the frame as
//! recent frames measured it, divided by a tile's measured copy cost. A
//! tile left over waits in the loader for the next frame while its node
//! draws its resident ancestor, as it does while any budget is spent, so a
//! smaller budget delays detail and never opens a hole. Uploads keep
//! [`MIN_UPLOAD_MS`] however expensive the selection, and never fewer than
//! [`MIN_UPLOADS`], so streaming always advances. The estimate
//! can be wrong when the machine is (another process taking the memory
//! bandwidth makes every copy three times slower at once), so the renderer
//! also stops staging the loader's tiles once the frame's thread time
//! passes the target (`FrameInput::staging_limit`); those leave their slots
//! unwritten (`Residency::withdraw_upload`) and go back to the loader.

/// The frame thread's CPU time (milliseconds) a scene frame with background
/// loading aims to stay under: issue #15 asks for a p99 of 4 ms for the
/// whole frame thread, and the caller's own work (the camera's ground, the
/// log) and the variation of a shared machine take the rest.
pub const FRAME_CPU_TARGET_MS: f64 = 2.6;

/// Uploads a frame takes at least, however expensive its selection: a
/// frame copies 4 tiles in about 0.12 ms on the 2-core VM.
pub const MIN_UPLOADS: usize = 4;

/// Frame-thread time (milliseconds) uploads keep however expensive the
/// selection, as far as the measured copy cost allows it: about 16 tiles on
/// the 2-core VM. Selection near rough ground costs several milliseconds,
/// past the whole target; left to the hard floor of 4, the 2,000 tiles a
/// jump wants took 500 frames to copy while the loader sat idle.
pub const MIN_UPLOAD_MS: f64 = 0.5;

/// Where a scene frame's thread CPU time went (milliseconds), phase by
/// phase; they add up to the frame's time inside the scene.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FramePhases {
    /// Selecting the cut (bounds included) on the frame, or, with the
    /// selection on its own thread, taking and following its cut.
    pub selection_ms: f64,
    /// Wall-clock time (not CPU) the frame waited for the selection
    /// thread's cut of its own view (at most 1.5 ms past the first frame).
    pub selection_wait_ms: f64,
    /// Residency's plan and the loader's hand-over.
    pub residency_ms: f64,
    /// The nodes' records.
    pub records_ms: f64,
    /// The renderer: staging, recording, submission (and freeing).
    pub render_ms: f64,
    /// Of `render_ms`, copying the uploads into staging.
    pub staging_ms: f64,
    /// Uploads the frame allowed itself (all of them: loading on the frame).
    pub upload_budget: usize,
    /// Node bounds selection asked of the source, the rest kept from
    /// earlier frames.
    pub bounds_from_source: usize,
    /// The cut drawn was selected for an earlier view (or other settings)
    /// and followed to this one (`planet_terrain::lod::Cut::follow`): its
    /// selection, on its own thread, had not caught up with the camera.
    pub selection_lagging: bool,
}

/// The frame thread's CPU clock, read once per phase boundary.
#[derive(Debug)]
pub(crate) struct PhaseClock {
    start: std::time::Duration,
    last: std::time::Duration,
}

impl PhaseClock {
    pub(crate) fn start() -> PhaseClock {
        let now = crate::clock::thread_cpu_time();
        PhaseClock { start: now, last: now }
    }

    /// The thread CPU time `ms` milliseconds after the start.
    pub(crate) fn start_plus(&self, ms: f64) -> std::time::Duration {
        self.start + std::time::Duration::from_secs_f64(ms / 1e3)
    }

    /// Milliseconds since the last call (or the start).
    pub(crate) fn lap(&mut self) -> f64 {
        let now = crate::clock::thread_cpu_time();
        let lap = now.saturating_sub(self.last).as_secs_f64() * 1e3;
        self.last = now;
        lap
    }
}

/// The upload budget from what frames cost: see the module documentation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UploadPacer {
    /// Most uploads a frame may take (the staging ring's share).
    max_uploads: usize,
    /// A tile's copy into staging, milliseconds (a running estimate).
    per_upload_ms: f64,
    /// The frame besides selection and staging, milliseconds (a running
    /// estimate).
    rest_ms: f64,
}

/// Weight of the newest frame in the running estimates: about the last
/// four frames count.
const NEWEST: f64 = 0.25;

impl UploadPacer {
    pub(crate) fn new(max_uploads: usize) -> UploadPacer {
        // Starting points from the 2-core VM (docs/PERFORMANCE.md): the
        // first frames measure their own.
        UploadPacer { max_uploads, per_upload_ms: 0.03, rest_ms: 0.8 }
    }

    /// Uploads the frame may take, after its selection cost `spent_ms`.
    pub(crate) fn budget(&self, spent_ms: f64) -> usize {
        let room = (FRAME_CPU_TARGET_MS - spent_ms - self.rest_ms).max(MIN_UPLOAD_MS);
        let fits = (room / self.per_upload_ms).floor();
        if fits.is_nan() || fits < MIN_UPLOADS as f64 {
            MIN_UPLOADS.min(self.max_uploads)
        } else {
            (fits as usize).min(self.max_uploads)
        }
    }

    /// Learns from a finished frame: `uploads` tiles staged in `staging_ms`,
    /// and `rest_ms` of its time neither selection nor staging.
    pub(crate) fn observe(&mut self, uploads: usize, staging_ms: f64, rest_ms: f64) {
        // A few tiles say little about the cost of one (the clock's own
        // cost and a cold cache line weigh as much).
        if uploads >= MIN_UPLOADS {
            self.per_upload_ms += NEWEST * (staging_ms / uploads as f64 - self.per_upload_ms);
        }
        // A rare slow frame (the OS, a page fault) raises the estimate at
        // once; it comes back down over a few frames.
        self.rest_ms = if rest_ms > self.rest_ms { rest_ms } else { self.rest_ms + NEWEST * (rest_ms - self.rest_ms) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expensive_selection_leaves_fewer_uploads_and_never_fewer_than_the_floor() {
        let mut pacer = UploadPacer::new(32);
        // Tiles at 0.05 ms each, the rest of the frame 0.6 ms, steadily.
        for _ in 0..40 {
            pacer.observe(32, 1.6, 0.6);
        }
        // (2.6 - 0.3 - 0.6) / 0.05 = 34, held to 32; (2.6 - 1.43 - 0.6) / 0.05
        // = 11.4; past that uploads keep MIN_UPLOAD_MS: 0.5 / 0.05 = 10.
        let budgets: Vec<usize> = [0.0, 0.3, 1.43, 1.9, 8.0].iter().map(|&spent| pacer.budget(spent)).collect();
        assert_eq!(budgets, vec![32, 32, 11, 10, 10]);
        // Copies slower than MIN_UPLOAD_MS / MIN_UPLOADS keep the hard floor.
        for _ in 0..40 {
            pacer.observe(32, 32.0 * 0.2, 0.6);
        }
        assert_eq!(pacer.budget(8.0), MIN_UPLOADS);
    }

    #[test]
    fn a_slow_frame_raises_the_estimate_at_once_and_it_decays() {
        let mut pacer = UploadPacer::new(32);
        for _ in 0..40 {
            pacer.observe(32, 1.6, 0.6);
        }
        pacer.observe(32, 1.6, 2.0);
        assert_eq!(pacer.budget(0.0), 12, "(2.6 - 2.0) / 0.05, from the next frame");
        for _ in 0..40 {
            pacer.observe(12, 0.6, 0.6);
        }
        assert_eq!(pacer.budget(0.0), 32, "back once frames are quick again");
    }
}
