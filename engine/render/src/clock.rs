//! The calling thread's CPU time: what a frame cost the host, apart from
//! the time the OS gave other threads (on a machine whose cores also run a
//! software rasteriser, wall time per frame mostly measures the sharing).

use std::time::Duration;

/// CPU time the calling thread has used so far (rustix's safe
/// `clock_gettime`: the crate keeps every `unsafe` under `vk/`).
pub fn thread_cpu_time() -> Duration {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_grows_with_work_and_not_with_sleep() {
        let start = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time() - start;
        let mut x = 0u64;
        let busy = std::time::Instant::now();
        while busy.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let worked = thread_cpu_time() - start - slept;
        assert!(slept < Duration::from_millis(20), "sleeping used {slept:?}");
        assert!(worked > Duration::from_millis(5), "working used {worked:?}");
    }
}
