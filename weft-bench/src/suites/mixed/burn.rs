//! The requests' work: a loop of dependent integer operations, calibrated
//! at start-up to burn a given amount of CPU time in one go.
//!
//! Why integer work and not "spin until `Instant` says 150 µs passed":
//! on two cores, two workers and the generator share the CPU, and a worker
//! preempted in the middle of a wall-clock spin would do less work than
//! asked while still holding its poll. A fixed amount of work costs the
//! same CPU however often the thread is preempted; a preempted poll just
//! lasts longer, as a real request's would.
//!
//! Calibration times the loop with the thread's own CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`), which does not advance while the thread is
//! off the CPU, so other threads of a busy machine do not skew the rate
//! (they still can through shared caches, SMT siblings or the clock
//! frequency: the suite calibrates again at its end and reports the drift).
//!
//! Invariant: [`Burner::burn`] never awaits and never yields: a request
//! is one poll of exactly this loop.

use std::hint::black_box;
use std::time::Duration;

use crate::common::measure::thread_cpu_time;

use serde::{Deserialize, Serialize};

/// How many trials the calibration times; the rate is their median.
const TRIALS: usize = 11;

/// CPU time of one calibration trial.
const TRIAL_CPU: Duration = Duration::from_millis(2);

/// Burns CPU time: `iterations_per_us` turns of the work loop per
/// microsecond, as measured by [`Burner::calibrate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burner {
    /// Turns of the loop per microsecond of the calibrating thread's CPU.
    pub iterations_per_us: f64,
}

impl Burner {
    /// Times the loop on the calling thread and returns a burner with its
    /// median rate over a few short trials.
    pub fn calibrate() -> Burner {
        // A first guess sized for a fast core, corrected after one trial,
        // so that every trial lasts about `TRIAL_CPU` on any machine.
        let mut iterations: u64 = 1_000_000;
        let first = cpu_of(|| work(iterations));
        iterations = scale(iterations, TRIAL_CPU, first);
        let mut rates: Vec<f64> = (0..TRIALS)
            .map(|_| {
                let cpu = cpu_of(|| work(iterations));
                iterations as f64 / (cpu.as_secs_f64() * 1e6).max(1e-3)
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        Burner {
            iterations_per_us: rates[rates.len() / 2],
        }
    }

    /// Loop turns that make `cpu` of CPU time (at least one).
    pub fn iterations(&self, cpu: Duration) -> u64 {
        ((cpu.as_secs_f64() * 1e6 * self.iterations_per_us).round() as u64).max(1)
    }

    /// Burns about `cpu` of this thread's CPU time without yielding.
    pub fn burn(&self, cpu: Duration) {
        work(self.iterations(cpu));
    }

    /// The CPU time [`burn`](Self::burn)`(cpu)` takes on the calling thread
    /// now: the median of `trials` runs (a check of the calibration).
    pub fn measure(&self, cpu: Duration, trials: usize) -> Duration {
        let mut taken: Vec<Duration> = (0..trials.max(1))
            .map(|_| cpu_of(|| self.burn(cpu)))
            .collect();
        taken.sort();
        taken[taken.len() / 2]
    }
}

/// `iterations` scaled so that a run that took `took` would take `target`.
fn scale(iterations: u64, target: Duration, took: Duration) -> u64 {
    let ratio = target.as_secs_f64() / took.as_secs_f64().max(1e-7);
    ((iterations as f64 * ratio).round() as u64).max(1_000)
}

/// `iterations` turns of xorshift64: each turn depends on the one before,
/// so the compiler can neither vectorize the loop nor fold it away.
#[inline(never)]
fn work(iterations: u64) {
    let mut x: u64 = black_box(0x9E37_79B9_7F4A_7C15);
    for _ in 0..black_box(iterations) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x);
}

/// The calling thread's CPU time spent in `f`.
fn cpu_of(f: impl FnOnce()) -> Duration {
    let before = thread_cpu_time();
    f();
    thread_cpu_time().saturating_sub(before)
}

/// How a calibration held up: the rates at the start and end of the suite
/// and what a short and a long request measured at the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Loop turns per µs of CPU, calibrated before the first run.
    pub iterations_per_us: f64,
    /// The same, calibrated again after the last run.
    pub end_iterations_per_us: Option<f64>,
    /// A short request's burn as measured right after calibrating, µs of
    /// CPU (median of several).
    pub short_measured_us: f64,
    /// A long request's burn as measured right after calibrating, ms of CPU.
    pub long_measured_ms: f64,
}

impl Calibration {
    /// How much the rate moved between the start and the end, percent
    /// (positive: the loop ran faster at the end, so the requests burnt
    /// less CPU than asked).
    pub fn drift_pct(&self) -> Option<f64> {
        self.end_iterations_per_us
            .map(|end| (end / self.iterations_per_us - 1.0) * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibrated_burn_takes_about_the_cpu_asked() {
        let burner = Burner::calibrate();
        assert!(burner.iterations_per_us > 0.0);
        // Loose bounds: tests run beside each other on a shared machine.
        for asked in [Duration::from_micros(500), Duration::from_millis(5)] {
            let took = burner.measure(asked, 5);
            let ratio = took.as_secs_f64() / asked.as_secs_f64();
            assert!(
                (0.5..2.0).contains(&ratio),
                "asked {asked:?}, took {took:?}"
            );
        }
    }

    #[test]
    fn iterations_scale_with_the_time_asked() {
        let burner = Burner {
            iterations_per_us: 400.0,
        };
        assert_eq!(burner.iterations(Duration::from_micros(150)), 60_000);
        assert_eq!(burner.iterations(Duration::from_millis(50)), 20_000_000);
        assert_eq!(burner.iterations(Duration::ZERO), 1);
        assert_eq!(
            scale(
                1_000_000,
                Duration::from_millis(2),
                Duration::from_millis(1)
            ),
            2_000_000
        );
    }

    #[test]
    fn drift_is_relative_to_the_start() {
        let calibration = Calibration {
            iterations_per_us: 400.0,
            end_iterations_per_us: Some(420.0),
            short_measured_us: 150.0,
            long_measured_ms: 50.0,
        };
        assert!((calibration.drift_pct().unwrap() - 5.0).abs() < 1e-9);
    }
}
