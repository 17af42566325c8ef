//! How much of the machine *other* processes used while something was
//! measured: the busy CPU time of the whole machine (`/proc/stat`) minus
//! this process's own (`/proc/self/stat`), over the wall time times the
//! cores. The dev machines are shared, and a sampler kept off the CPU by
//! another process skews means of per-sample rates; this figure says when
//! that happened. Linux only (elsewhere it is `None`), with the kernel's
//! clock-tick resolution (10 ms at 100 Hz): meaningful over seconds.

use std::fs;
use std::time::Instant;

/// CPU times at one instant.
#[derive(Debug, Clone, Copy)]
pub struct CpuTimes {
    machine_busy_ticks: u64,
    own_ticks: u64,
    at: Instant,
}

impl CpuTimes {
    /// Reads them now; `None` where `/proc` cannot tell.
    pub fn now() -> Option<CpuTimes> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        let own = fs::read_to_string("/proc/self/stat").ok()?;
        Some(CpuTimes {
            machine_busy_ticks: machine_busy(&stat)?,
            own_ticks: own_ticks(&own)?,
            at: Instant::now(),
        })
    }

    /// Percent of the machine (all cores) that other processes kept busy
    /// between `earlier` and `self`.
    pub fn others_pct_since(&self, earlier: &CpuTimes) -> Option<f64> {
        // SAFETY: sysconf has no preconditions.
        let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let cores = std::thread::available_parallelism().ok()?.get() as f64;
        let seconds = self.at.checked_duration_since(earlier.at)?.as_secs_f64();
        if ticks_per_s <= 0 || seconds <= 0.0 {
            return None;
        }
        let machine = self
            .machine_busy_ticks
            .saturating_sub(earlier.machine_busy_ticks);
        let own = self.own_ticks.saturating_sub(earlier.own_ticks);
        let others_s = machine.saturating_sub(own) as f64 / ticks_per_s as f64;
        Some((others_s / (seconds * cores) * 100.0).min(100.0))
    }
}

/// Percent of the machine other processes used from `earlier` until now;
/// `None` where either reading is missing.
pub fn since(earlier: Option<CpuTimes>) -> Option<f64> {
    CpuTimes::now()?.others_pct_since(&earlier?)
}

/// Busy ticks of all cores from `/proc/stat`'s first line: user, nice,
/// system, irq, softirq, steal (guest time is already in user).
fn machine_busy(stat: &str) -> Option<u64> {
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let field = |i: usize| fields.get(i).copied().unwrap_or(0);
    Some(field(0) + field(1) + field(2) + field(5) + field(6) + field(7))
}

/// utime + stime of this process from `/proc/self/stat` (fields 14 and
/// 15; the command name before them may contain spaces, so count from
/// its closing parenthesis).
fn own_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) is index 11.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_formats() {
        let stat = "cpu  401178 5 180569 546893 1918 7 193 310 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(
            machine_busy(stat),
            Some(401178 + 5 + 180569 + 7 + 193 + 310)
        );
        let own = "14845 (a (b) c) R 14842 14842 24239 0 -1 4194304 124 0 0 0 17 4 0 0 20 0";
        assert_eq!(own_ticks(own), Some(21));
    }

    #[test]
    fn others_are_a_percentage() {
        if let Some(before) = CpuTimes::now() {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let others = CpuTimes::now().unwrap().others_pct_since(&before).unwrap();
            assert!((0.0..=100.0).contains(&others), "{others}");
        }
    }
}
