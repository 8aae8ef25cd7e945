//! The calling thread's CPU time: what a frame cost the host, apart from
//! the time the OS gave other threads (on a machine whose cores also run a
//! software rasteriser, wall time per frame mostly measures the sharing).

use std::time::Duration;

/// CPU time the calling thread has used so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer,
    // which points at a live local of that type; CLOCK_THREAD_CPUTIME_ID is
    // supported on every Linux this renderer runs on, and on failure the
    // zeroed value is returned unchanged.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
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
