//! The analytic request: seed 004's loop, run for a budget of CPU time in
//! one poll (no await inside), as the seed's 55 ms requests hold their
//! worker.
//!
//! The budget is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not
//! the wall clock: a thread that is preempted or demoted does the same
//! work, only later, so both runtimes are asked for the same computation.

use std::time::Duration;

use serde::Serialize;

use crate::db::User;

/// Iterations between two reads of the CPU clock (~140 µs in release).
const CHUNK: u64 = 10_000;

#[derive(Debug, Serialize)]
pub struct Report {
    /// The CPU budget asked for.
    pub ms: u64,
    /// The CPU time spent computing.
    pub cpu_ms: f64,
    /// Rows read.
    pub rows: usize,
    pub first_id: Option<i64>,
    pub iterations: u64,
    /// The loop's result, seeded from the rows.
    pub value: f64,
}

/// Runs seed 004's loop on `rows` until `budget` of this thread's CPU
/// time is spent.
pub fn compute(rows: &[User], budget: Duration) -> Report {
    let checksum: f64 = rows
        .iter()
        .map(|user| (user.id as f64) + (user.name.len() + user.email.len()) as f64)
        .sum();
    let start = thread_cpu_time();
    let mut s: f64 = 20181218.333333 + checksum;
    let mut iterations = 0u64;
    while thread_cpu_time() - start < budget {
        for i in iterations + 1..=iterations + CHUNK {
            let i = i as f64;
            let i = i * i;
            let s1 = s * i;
            s = s1 / (s + 7.7);
        }
        iterations += CHUNK;
    }
    let spent = thread_cpu_time() - start;
    Report {
        ms: budget.as_millis() as u64,
        cpu_ms: spent.as_secs_f64() * 1e3,
        rows: rows.len(),
        first_id: rows.first().map(|user| user.id),
        iterations,
        value: std::hint::black_box(s),
    }
}

/// The calling thread's CPU time.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through a pointer to a
    // live, writable one; `CLOCK_THREAD_CPUTIME_ID` is always supported on
    // Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_the_budget() {
        let report = compute(&[], Duration::from_millis(5));
        assert!(report.cpu_ms >= 5.0, "{report:?}");
        assert!(report.iterations > 0);
        assert_eq!(compute(&[], Duration::ZERO).iterations, 0);
    }
}
