//! The timers suite, `weft-bench timers` (and in the default
//! run): weft's timers next to tokio's and async-io's (smol) on the same
//! rows, every row lower-is-better:
//!
//! | row | what |
//! |---|---|
//! | `arm_cancel_ns` | create, arm (one poll) and drop a 10 s sleep, per iteration |
//! | `bytes_per_timer` | resident memory per pending timer, 1 M timers, in a child process |
//! | `spread_p99_us`, `spread_max_us` | lateness of 100 k timers spread over 1 s |
//! | `spread_cpu_ms` | the process's CPU while they fire |
//! | `sleep_1ms_p99_us` | overshoot of a 1 ms sleep on an idle runtime |
//! | `stuck_worker_late_max_us` | lateness of a timer armed on a worker that then spins 50 ms |
//! | `heartbeat_cpu_per_wake_ns` | CPU per wake of 10 k tasks sleeping 1 ms in a loop |
//! | `idle_cpu_ms_per_s` | CPU per second with 10 k hour-long timers pending |
//! | `drop_ms` | dropping that runtime |
//!
//! [`workloads`] says exactly how each is measured, [`rss`] for
//! `bytes_per_timer`; [`crate::common::runtimes::timer`] is the timer of
//! each runtime behind one trait, so every row is written once. [`sizes`] are the profiles' sizes.
//!
//! Rows are grouped by [`Experiment`] (one experiment yields one or more
//! rows). For each experiment and repetition the runtimes run one after the
//! other, each on a runtime built for that repetition and dropped after it,
//! on a thread of its own: a runtime that has not answered within
//! [`TimersConfig::timeout`] is marked failed for the experiment and its
//! thread abandoned (with a warning), so a timer that never fires cannot
//! hang the run. A row's value is the median of its repetitions.
//! [`result`] is the JSON, [`report`] the table; each row is one figure
//! ([`RowSpec`]), gated by `compare` ([`GATED`]).

pub mod probe;
pub mod report;
pub mod result;
pub mod rss;
pub mod sizes;
pub mod suite;
pub mod workloads;

pub use suite::Timers;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

use crate::common::figure::Figure;
use crate::common::figure::rows::Gated;
use crate::common::figure::skew::Watch;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::Setup;
use crate::common::thread::on_thread;

use result::{TimerRow, TimerValue, TimersResult, TimersSettings};
use sizes::Sizes;
use workloads::Measured;

/// One measurement of the suite, yielding one or more rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Experiment {
    /// `arm_cancel_ns`.
    #[value(name = "arm_cancel")]
    ArmCancel,
    /// `bytes_per_timer`.
    #[value(name = "bytes_per_timer")]
    BytesPerTimer,
    /// `spread_p99_us`, `spread_max_us`, `spread_cpu_ms`.
    #[value(name = "spread")]
    Spread,
    /// `sleep_1ms_p99_us`.
    #[value(name = "sleep_1ms")]
    Sleep1ms,
    /// `stuck_worker_late_max_us`.
    #[value(name = "stuck_worker")]
    StuckWorker,
    /// `heartbeat_cpu_per_wake_ns`.
    #[value(name = "heartbeat")]
    Heartbeat,
    /// `idle_cpu_ms_per_s`, `drop_ms`.
    #[value(name = "idle")]
    Idle,
}

/// A row of the suite: a lower-is-better figure of its own, weft's value
/// over the best peer's. Its floor is the growth below which `compare`
/// calls a change of weft's value (or of its ratio, counted in weft's
/// unit) noise, in the row's unit: a few µs of lateness, a few ns of CPU.
/// Set from re-runs of one build on the 2-core dev machine (README).
pub type RowSpec = Figure<f64>;

const fn row(name: &'static str, unit: &'static str, floor: f64) -> RowSpec {
    fn value(value: &f64) -> Option<f64> {
        Some(*value)
    }
    Figure::lower(name, unit, value).with_floor(floor)
}

const ARM_CANCEL: [RowSpec; 1] = [row("arm_cancel_ns", "ns", 20.0)];
const BYTES_PER_TIMER: [RowSpec; 1] = [row("bytes_per_timer", "bytes", 16.0)];
const SPREAD: [RowSpec; 3] = [
    row("spread_p99_us", "µs", 200.0),
    row("spread_max_us", "µs", 5_000.0),
    row("spread_cpu_ms", "ms", 50.0),
];
const SLEEP_1MS: [RowSpec; 1] = [row("sleep_1ms_p99_us", "µs", 200.0)];
const STUCK_WORKER: [RowSpec; 1] = [row("stuck_worker_late_max_us", "µs", 500.0)];
const HEARTBEAT: [RowSpec; 1] = [row("heartbeat_cpu_per_wake_ns", "ns", 300.0)];
const IDLE: [RowSpec; 2] = [
    row("idle_cpu_ms_per_s", "ms/s", 2.0),
    row("drop_ms", "ms", 5.0),
];

impl Experiment {
    /// Every experiment, in the order the suite runs them.
    pub const ALL: [Experiment; 7] = [
        Experiment::ArmCancel,
        Experiment::BytesPerTimer,
        Experiment::Spread,
        Experiment::Sleep1ms,
        Experiment::StuckWorker,
        Experiment::Heartbeat,
        Experiment::Idle,
    ];

    /// The rows it yields, in the order of its figures.
    pub fn rows(self) -> &'static [RowSpec] {
        match self {
            Experiment::ArmCancel => &ARM_CANCEL,
            Experiment::BytesPerTimer => &BYTES_PER_TIMER,
            Experiment::Spread => &SPREAD,
            Experiment::Sleep1ms => &SLEEP_1MS,
            Experiment::StuckWorker => &STUCK_WORKER,
            Experiment::Heartbeat => &HEARTBEAT,
            Experiment::Idle => &IDLE,
        }
    }

    fn repetitions(self, sizes: &Sizes) -> usize {
        match self {
            Experiment::ArmCancel => sizes.arm_cancel_repetitions,
            Experiment::Heartbeat => sizes.heartbeat_repetitions,
            _ => sizes.repetitions,
        }
        .max(1)
    }
}

/// The row called `name`, if the suite has one.
pub fn row_spec(name: &str) -> Option<&'static RowSpec> {
    Experiment::ALL
        .iter()
        .flat_map(|e| e.rows())
        .find(|spec| spec.name == name)
}

/// The timers suite in `compare`: each row is its own figure.
pub const GATED: Gated<f64> = Gated::by_row("timers", "row", |name| {
    row_spec(name).map_or(&[], std::slice::from_ref)
});

/// Everything a run of the timers suite needs to know.
#[derive(Debug, Clone)]
pub struct TimersConfig {
    /// Profile (recorded; the sizes say what is run), workers, runtimes in
    /// the order each repetition runs them.
    pub setup: Setup,
    /// How much each row measures.
    pub sizes: Sizes,
    /// The experiments, in order.
    pub experiments: Vec<Experiment>,
    /// This binary, re-run for `bytes_per_timer` (a test passes
    /// `CARGO_BIN_EXE_weft-bench`, its own executable being the test's).
    pub exe: PathBuf,
    /// Longest wait for one repetition of one runtime.
    pub timeout: Duration,
}

impl TimersConfig {
    /// The default configuration of `setup`: the profile's sizes, every
    /// experiment, this executable, a 60 s timeout.
    pub fn new(setup: Setup) -> TimersConfig {
        TimersConfig {
            sizes: Sizes::of(setup.profile),
            setup,
            experiments: Experiment::ALL.to_vec(),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("weft-bench")),
            timeout: Duration::from_secs(60),
        }
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &TimersConfig) -> TimersResult {
    let mut watch = Watch::start("timers");
    let mut rows = Vec::new();
    for &experiment in &config.experiments {
        let measured = run_experiment(experiment, config, &mut watch.warnings);
        for row in &measured {
            eprintln!("weft-bench: timers: {}", report::one_line(row));
        }
        rows.extend(measured);
    }
    TimersResult {
        settings: TimersSettings {
            suite: config.setup.settings(RuntimeKind::name),
            sizes: config.sizes.clone(),
        },
        rows,
        skew: watch.finish(),
    }
}

/// Every repetition of `experiment`, runtimes alternating within each, and
/// its rows.
fn run_experiment(
    experiment: Experiment,
    config: &TimersConfig,
    warnings: &mut Vec<String>,
) -> Vec<TimerRow> {
    // Per runtime: each repetition's figures, and the error that ended it.
    let mut outcomes: Vec<(RuntimeKind, Vec<Vec<f64>>, Option<String>)> = config
        .setup
        .runtimes
        .iter()
        .map(|&kind| (kind, Vec::new(), None))
        .collect();
    for _ in 0..experiment.repetitions(&config.sizes) {
        for (kind, repetitions, error) in outcomes.iter_mut().filter(|o| o.2.is_none()) {
            let name = kind.name();
            match measure(experiment, *kind, config, warnings) {
                Ok(measured) => {
                    let notes = measured.notes.iter();
                    warnings.extend(notes.map(|note| format!("timers: {name}: {note}")));
                    repetitions.push(measured.figures);
                }
                Err(err) => *error = Some(err),
            }
        }
    }
    let rows = experiment.rows().iter().enumerate();
    rows.map(|(index, spec)| {
        let runtimes = outcomes.iter().map(|(kind, repetitions, error)| {
            let values: Vec<f64> = repetitions
                .iter()
                .filter_map(|r| r.get(index))
                .copied()
                .collect();
            let value = match error {
                None => TimerValue::ok(values),
                Some(err) => TimerValue::failed(err.clone(), values),
            };
            (kind.name().to_owned(), value)
        });
        TimerRow::new(spec, runtimes.collect::<BTreeMap<_, _>>())
    })
    .collect()
}

/// One repetition of `experiment` on `kind`: in a child process for
/// `bytes_per_timer`, otherwise on a thread of its own, abandoned if it
/// does not answer within the timeout.
fn measure(
    experiment: Experiment,
    kind: RuntimeKind,
    config: &TimersConfig,
    warnings: &mut Vec<String>,
) -> Result<Measured, String> {
    let (workers, timeout) = (config.setup.workers, config.timeout);
    if experiment == Experiment::BytesPerTimer {
        let timers = config.sizes.rss_timers;
        return rss::measure_in_child(&config.exe, kind, workers, timers, timeout).map(|bytes| {
            Measured {
                figures: vec![bytes],
                notes: Vec::new(),
            }
        });
    }
    let sizes = config.sizes.clone();
    let work = move || match kind {
        RuntimeKind::Weft => workloads::measure::<Weft>(experiment, &sizes, workers),
        RuntimeKind::Tokio => workloads::measure::<Tokio>(experiment, &sizes, workers),
        RuntimeKind::Smol => workloads::measure::<Smol>(experiment, &sizes, workers),
    };
    let abandoned = || {
        warnings.push(format!(
            "timers: {} abandoned in {experiment:?} after {} s; it may still be running and \
             disturb what follows",
            kind.name(),
            timeout.as_secs()
        ));
    };
    on_thread(format!("timers-{}", kind.name()), timeout, work, abandoned)
}
