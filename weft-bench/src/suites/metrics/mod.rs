//! The metrics suite, `weft-bench metrics`: are weft's metrics exact, and
//! are they cheap? Two experiments (see the crate's README for how to read
//! their tables):
//!
//! 1. [`counting`]: the published under-count experiment replayed on weft:
//!    100 tasks count transactions, samplers read the count at intervals
//!    from 1 s down to 1 ms, and each way of turning counts into a rate
//!    ([`estimate`]) is compared with the exact mean rate. The tasks wait
//!    through [`wait`], on the stand-in [`timer`] or spinning.
//! 2. [`overhead`]: the suite's scheduler workloads with and without
//!    a `Handle::metrics()` sampler every millisecond.
//!
//! [`crate::common::others`] measures how much of the machine other processes used
//! meanwhile. [`document`] is the `--json` document and the targets; [`report`]
//! prints the tables; [`dump`] is `weft-bench metrics-dump`, a snapshot
//! printed as JSON or Prometheus text.

pub mod counting;
pub mod document;
pub mod dump;
pub mod estimate;
pub mod overhead;
pub mod report;
pub mod suite;
pub mod timer;
pub mod wait;

pub use suite::Metrics;

use std::io;
use std::time::{Duration, Instant, SystemTime};

use clap::ValueEnum;

use crate::common::json::{Machine, Versions};
use crate::common::setup::Profile;
use crate::suites::scheduler::workloads::Workload;

use counting::{BASELINE_INTERVAL, CountingConfig, CountingRun};
use document::{MetricsDocument, MetricsSettings, SCHEMA, Targets};
use overhead::{OverheadConfig, OverheadResult};
use wait::{Mechanism, Wait};

/// The sampling intervals of the counting experiment, in the order run.
pub const INTERVALS: [Duration; 6] = [
    Duration::from_secs(1),
    Duration::from_millis(500),
    Duration::from_millis(200),
    Duration::from_millis(50),
    Duration::from_millis(10),
    Duration::from_millis(1),
];

/// The interval of the `Handle::metrics()` sampler in the overhead part.
pub const METRICS_SAMPLER_INTERVAL: Duration = Duration::from_millis(1);

/// A part of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Part {
    /// The counting experiment.
    Counting,
    /// The `Handle::metrics()` sampler's overhead.
    Overhead,
}

/// Everything a run of the metrics suite needs to know.
#[derive(Debug, Clone)]
pub struct MetricsConfig {
    /// Quick or full.
    pub profile: Profile,
    /// Worker threads of every weft runtime.
    pub workers: usize,
    /// Tasks of the counting experiment.
    pub tasks: usize,
    /// How the 10 µs wait is waited.
    pub short_wait: Mechanism,
    /// The parts to run.
    pub parts: Vec<Part>,
}

impl MetricsConfig {
    /// The counting runs: a 10 ms wait on the timer, then a 10 µs wait.
    fn counting(&self) -> Vec<CountingConfig> {
        let (window, min_samples, warmup) = match self.profile {
            Profile::Quick => (Duration::from_secs(3), 5, Duration::from_millis(300)),
            Profile::Full => (Duration::from_secs(20), 20, Duration::from_secs(1)),
        };
        let waits = [
            (Duration::from_millis(10), Mechanism::Timer),
            (Duration::from_micros(10), self.short_wait),
        ];
        waits
            .into_iter()
            .map(|(nominal, mechanism)| CountingConfig {
                workers: self.workers,
                tasks: self.tasks,
                wait: Wait { nominal, mechanism },
                intervals: INTERVALS.to_vec(),
                window,
                min_samples,
                warmup,
                baseline_interval: BASELINE_INTERVAL,
            })
            .collect()
    }

    fn overhead(&self) -> OverheadConfig {
        let (rounds, iteration_factor) = match self.profile {
            Profile::Quick => (10, 1),
            Profile::Full => (20, 2),
        };
        OverheadConfig {
            workers: self.workers,
            rounds,
            iteration_factor,
            interval: METRICS_SAMPLER_INTERVAL,
            workloads: Workload::ALL.to_vec(),
        }
    }
}

/// Runs the suite, printing a line on stderr as each phase and workload
/// completes, and returns the document.
pub fn run(config: &MetricsConfig) -> io::Result<MetricsDocument> {
    let started = Instant::now();
    let created_unix_s = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let counting_configs = config.counting();
    let overhead_config = config.overhead();
    let mut counting: Vec<CountingRun> = Vec::new();
    if config.parts.contains(&Part::Counting) {
        for wait_config in &counting_configs {
            let label = wait_config.wait.label();
            let run = counting::run(wait_config, |phase| {
                eprintln!("weft-bench metrics: {}", report::phase_line(&label, phase));
            })?;
            counting.push(run);
        }
    }
    let mut overhead: Vec<OverheadResult> = Vec::new();
    if config.parts.contains(&Part::Overhead) {
        overhead = overhead::run(&overhead_config, |result| {
            eprintln!("weft-bench metrics: {}", report::overhead_line(result));
        })?;
    }
    Ok(MetricsDocument {
        schema: SCHEMA.to_owned(),
        created_unix_s,
        duration_s: started.elapsed().as_secs_f64(),
        machine: Machine::detect(),
        versions: Versions::detect(),
        settings: MetricsSettings::new(config, &counting_configs, &overhead_config),
        targets: Targets::evaluate(&counting, &overhead),
        counting,
        overhead,
    })
}

/// `duration` in whole nanoseconds (saturating).
pub(crate) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// `1 s`, `500 ms`, `10 µs`: a duration in its largest whole unit.
pub fn duration_label(duration: Duration) -> String {
    let ns = duration.as_nanos();
    match ns {
        n if n >= 1_000_000_000 && n % 1_000_000_000 == 0 => format!("{} s", n / 1_000_000_000),
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{} µs", n / 1_000),
        n => format!("{n} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_labelled_in_their_largest_unit() {
        assert_eq!(duration_label(Duration::from_secs(1)), "1 s");
        assert_eq!(duration_label(Duration::from_millis(500)), "500 ms");
        assert_eq!(duration_label(Duration::from_micros(10)), "10 µs");
        assert_eq!(duration_label(Duration::from_micros(1500)), "1500 µs");
    }

    #[test]
    fn the_quick_profile_fits_its_budget() {
        let config = MetricsConfig {
            profile: Profile::Quick,
            workers: 4,
            tasks: 100,
            short_wait: Mechanism::Spin,
            parts: vec![Part::Counting, Part::Overhead],
        };
        let counting: Duration = config
            .counting()
            .iter()
            .map(|c| c.warmup + INTERVALS.iter().map(|&i| c.window_for(i)).sum::<Duration>())
            .sum();
        assert!(counting <= Duration::from_secs(45), "{counting:?}");
    }
}
