//! Measuring one iteration: wall time, the whole process's context switches
//! (`getrusage(RUSAGE_SELF)` deltas, the same measurement for every runtime)
//! and, where the runtime has them, its scheduler counter deltas. Also the
//! process's CPU time, which the timers suite reads the same way, a
//! thread's CPU time, and a run's measured window ([`Span`]).

use std::io;
use std::time::{Duration, Instant};

use crate::common::runtimes::Counters;

/// What one iteration cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Wall-clock time of the iteration.
    pub wall: Duration,
    /// Voluntary context switches of the process during the iteration
    /// (a thread blocked: park, futex wait, `sched_yield`).
    pub csw_voluntary: u64,
    /// Involuntary context switches (a thread preempted).
    pub csw_involuntary: u64,
    /// Counter deltas over the iteration, if the runtime has counters.
    pub counters: Option<Counters>,
}

/// Runs `iteration` once and measures it. `counters` is read before and
/// after, outside the timed region.
pub fn sample(
    iteration: impl FnOnce(),
    counters: impl Fn() -> Option<Counters>,
) -> io::Result<Sample> {
    let counters_before = counters();
    let csw_before = ContextSwitches::now()?;
    let start = Instant::now();
    iteration();
    let wall = start.elapsed();
    let csw_after = ContextSwitches::now()?;
    let counters_after = counters();
    Ok(Sample {
        wall,
        csw_voluntary: csw_after.voluntary.saturating_sub(csw_before.voluntary),
        csw_involuntary: csw_after.involuntary.saturating_sub(csw_before.involuntary),
        counters: counters_before
            .zip(counters_after)
            .map(|(before, after)| counter_delta(&before, &after)),
    })
}

/// Field-wise `after - before` of two readings taken from the same runtime.
fn counter_delta(before: &Counters, after: &Counters) -> Counters {
    debug_assert!(before.iter().map(|c| c.0).eq(after.iter().map(|c| c.0)));
    before
        .iter()
        .zip(after)
        .map(|(&(name, old), &(_, new))| (name, new.wrapping_sub(old)))
        .collect()
}

/// The process's context-switch counts since it started.
struct ContextSwitches {
    voluntary: u64,
    involuntary: u64,
}

impl ContextSwitches {
    fn now() -> io::Result<ContextSwitches> {
        let usage = rusage_self()?;
        Ok(ContextSwitches {
            voluntary: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
            involuntary: u64::try_from(usage.ru_nivcsw).unwrap_or(0),
        })
    }
}

/// CPU time (user + system) used so far by every thread of this process,
/// from `getrusage(RUSAGE_SELF)`.
pub fn process_cpu_time() -> io::Result<Duration> {
    let usage = rusage_self()?;
    let timeval = |t: libc::timeval| {
        let seconds = u64::try_from(t.tv_sec).unwrap_or(0);
        let micros = u32::try_from(t.tv_usec).unwrap_or(0);
        Duration::from_secs(seconds) + Duration::from_micros(u64::from(micros))
    };
    Ok(timeval(usage.ru_utime) + timeval(usage.ru_stime))
}

/// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec and the clock id is a
    // constant the platform defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Duration::new(seconds, nanos)
}

/// A run's measured window (every load generator's):
/// from the warm-up's end to its end. A request counts iff it started
/// inside it.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// The warm-up's end, the window's start.
    pub warm_end: Instant,
    /// The window's end.
    pub end: Instant,
}

impl Span {
    /// The window `measure` long after `warmup` from `start`.
    pub fn after(start: Instant, warmup: Duration, measure: Duration) -> Span {
        let warm_end = start + warmup;
        let end = warm_end + measure;
        Span { warm_end, end }
    }

    /// Whether `at` is inside it.
    pub fn contains(&self, at: Instant) -> bool {
        self.warm_end <= at && at < self.end
    }
}

fn rusage_self() -> io::Result<libc::rusage> {
    // SAFETY: `rusage` is plain data for which all-zero bytes are a
    // valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`; RUSAGE_SELF is a
    // valid `who` argument.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_times_the_iteration_and_diffs_counters() {
        let reading = std::cell::Cell::new(10);
        let counters = || {
            let value = reading.get();
            reading.set(value + 5);
            Some(vec![("polls", value)])
        };
        let sample = sample(|| std::thread::sleep(Duration::from_millis(2)), counters).unwrap();
        assert!(sample.wall >= Duration::from_millis(2));
        assert_eq!(sample.counters, Some(vec![("polls", 5)]));
        // Sleeping blocks the thread: at least one voluntary switch.
        assert!(sample.csw_voluntary >= 1);
    }
}
