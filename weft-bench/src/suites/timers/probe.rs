//! Small instruments the timers rows share: the process's resident set
//! (`/proc/self/statm`), a countdown that a waiting thread blocks on without
//! spending CPU, a busy spin, and sort-based percentiles.
//!
//! CPU time is [`crate::common::measure::process_cpu_time`], the same
//! `getrusage(RUSAGE_SELF)` the scheduler suite reads context switches with.

use std::fs;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The process's resident set size in bytes: `/proc/self/statm`'s second
/// field (resident pages) times the page size.
pub fn resident_bytes() -> io::Result<u64> {
    let statm = fs::read_to_string("/proc/self/statm")?;
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unexpected /proc/self/statm"))?;
    // SAFETY: sysconf has no preconditions.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page_size =
        u64::try_from(page_size).map_err(|_| io::Error::other("sysconf(_SC_PAGESIZE) failed"))?;
    Ok(pages * page_size)
}

/// Counts finished tasks down to zero; [`wait`](Self::wait) blocks the
/// calling thread (no spinning, so no CPU of its own in a CPU figure) until
/// the last one has finished.
pub struct Countdown {
    left: AtomicUsize,
    done: Mutex<bool>,
    zero: Condvar,
}

impl Countdown {
    /// A countdown from `count`.
    pub fn new(count: usize) -> Countdown {
        Countdown {
            left: AtomicUsize::new(count),
            done: Mutex::new(count == 0),
            zero: Condvar::new(),
        }
    }

    /// One task finished; the last one wakes the waiter.
    pub fn finish(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.zero.notify_all();
        }
    }

    /// Blocks until every task has finished.
    pub fn wait(&self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.zero.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Keeps the calling thread busy for `duration` without yielding it.
pub fn spin(duration: Duration) {
    let end = Instant::now() + duration;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// Blocks the calling thread until `deadline` (at once if it has passed).
pub fn sleep_until(deadline: Instant) {
    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
}

/// Nanoseconds as microseconds.
pub fn us(nanos: u64) -> f64 {
    nanos as f64 / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_releases_the_waiter_at_zero() {
        let countdown = std::sync::Arc::new(Countdown::new(2));
        let worker = countdown.clone();
        let thread = std::thread::spawn(move || {
            worker.finish();
            worker.finish();
        });
        countdown.wait();
        thread.join().unwrap();
        Countdown::new(0).wait();
    }

    #[test]
    fn resident_set_is_read() {
        assert!(resident_bytes().unwrap() > 0);
    }
}
