//! CPU time, as the build reports it per phase and per worker thread
//! (`build --json`'s `timings`), so that the share of a build that runs
//! on one thread can be read on any machine.
//!
//! Where the system does not say (no `getrusage` or thread clock), the
//! times are `None` and the report leaves them out.

use std::time::Duration;

/// CPU time (user and system) this process has used so far, all its
/// threads together.
#[cfg(unix)]
pub fn process() -> Option<Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given and nothing else.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: getrusage returned 0, so it wrote the struct.
    let usage = unsafe { usage.assume_init() };
    Some(timeval(usage.ru_utime) + timeval(usage.ru_stime))
}

/// CPU time the calling thread has used so far.
#[cfg(unix)]
pub fn thread() -> Option<Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

#[cfg(unix)]
fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
}

/// CPU time this process has used so far: not known here.
#[cfg(not(unix))]
pub fn process() -> Option<Duration> {
    None
}

/// CPU time the calling thread has used so far: not known here.
#[cfg(not(unix))]
pub fn thread() -> Option<Duration> {
    None
}

/// Milliseconds of CPU between two readings, if both were taken.
pub fn ms_between(from: Option<Duration>, to: Option<Duration>) -> Option<u64> {
    Some(to?.saturating_sub(from?).as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn work_on_a_thread_shows_in_its_clock_and_the_process_s() {
        let (p0, t0) = (process().unwrap(), thread().unwrap());
        // Spin until the thread's own clock has moved by a fixed amount
        // of CPU: no sleep counts, only work.
        let mut x = 0u64;
        while thread().unwrap() - t0 < Duration::from_millis(20) {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (p1, t1) = (process().unwrap(), thread().unwrap());
        assert!(t1 - t0 >= Duration::from_millis(20));
        // The process counts the thread's work (rusage has a coarser
        // grain than the thread clock).
        assert!(p1 - p0 >= Duration::from_millis(10), "{:?}", p1 - p0);
        assert_eq!(ms_between(Some(t0), None), None);
        assert!(ms_between(Some(t0), Some(t1)).unwrap() >= 20);
    }
}
