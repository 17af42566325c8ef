//! The scheduler suite, `weft-bench scheduler` (and the first of the
//! default run): tokio's scheduler workloads ([`workloads`]) on weft,
//! tokio and smol. For each workload it builds every runtime once (each
//! on its own [`driver`] thread), then alternates blocks of iterations
//! between them — weft, tokio, smol, weft, tokio, smol, … — so that drift
//! of the machine hits all of them alike. One alternation is a *round*.
//!
//! Each block sets the workload up, runs warm-up iterations (a quarter of
//! the block, at least one: the previous block belonged to another runtime
//! and left its caches cold), then the measured iterations, then tears the
//! set-up down. Only one runtime works at any time; the others are idle.
//!
//! A runtime that fails (or hangs: see [`driver`]) is marked failed for
//! that workload and skipped in the remaining rounds; the other runtimes
//! carry on. [`stats`] summarizes the iterations and compares weft with
//! its peers, [`result`] is the suite's part of the document and the
//! figures `compare` gates, [`report`] its tables.

pub mod driver;
pub mod report;
pub mod result;
pub mod stats;
pub mod suite;
pub mod workloads;

pub use suite::Scheduler;

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::common::runtimes::{RuntimeKind, Tuning};
use crate::common::setup::{Profile, Setup};
use driver::{Block, Driver};
use result::{SchedulerResults, Settings, WorkloadResult};
use workloads::Workload;

/// Rounds of `profile`: blocks of iterations per runtime, alternating.
fn rounds(profile: Profile) -> usize {
    match profile {
        Profile::Quick => 5,
        Profile::Full => 10,
    }
}

/// One block of `workload` in `profile`: its measured iterations (twice
/// as many in full), preceded by a quarter as many warm-up iterations (at
/// least one).
fn block(profile: Profile, workload: Workload) -> Block {
    let iterations = match profile {
        Profile::Quick => workload.quick_iterations_per_round(),
        Profile::Full => 2 * workload.quick_iterations_per_round(),
    };
    Block {
        warmup: iterations.div_ceil(4),
        iterations,
    }
}

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// How many iterations (the profile), on how many workers, the
    /// runtimes in the order their blocks alternate.
    pub setup: Setup,
    /// The workloads, in order.
    pub workloads: Vec<Workload>,
    /// weft's scheduler settings.
    pub tuning: Tuning,
    /// Longest wait for one iteration (or a build, set-up, tear-down or
    /// shutdown) before a runtime is marked failed.
    pub iteration_timeout: Duration,
}

impl RunConfig {
    /// A configuration with no workload, describing a document's settings
    /// when another suite runs alone: `setup`, weft's defaults, a 10 s
    /// timeout.
    pub fn describing(setup: Setup) -> RunConfig {
        RunConfig {
            setup,
            workloads: Vec::new(),
            tuning: Tuning::default(),
            iteration_timeout: Duration::from_secs(10),
        }
    }

    /// Its settings in the document.
    pub fn settings(&self) -> Settings {
        Settings {
            suite: self.setup.settings(RuntimeKind::name),
            rounds: rounds(self.setup.profile),
            iteration_timeout_s: self.iteration_timeout.as_secs_f64(),
            weft_inject_batch_cap: self.tuning.inject_batch_cap,
            weft_lifo_slot: self.tuning.lifo_slot,
        }
    }

    /// Iterations of the whole run, warm-up included.
    fn total_iterations(&self) -> u64 {
        let per_runtime: usize = self
            .workloads
            .iter()
            .map(|&w| block(self.setup.profile, w))
            .map(|block| rounds(self.setup.profile) * (block.warmup + block.iterations))
            .sum();
        (per_runtime * self.setup.runtimes.len()) as u64
    }
}

/// Runs every workload of `config` and returns what it measured.
pub fn run(config: &RunConfig) -> SchedulerResults {
    let progress = Progress::new(config.total_iterations());
    let mut warnings = Vec::new();
    let workloads = config
        .workloads
        .iter()
        .map(|&workload| run_workload(workload, config, &progress, &mut warnings))
        .collect();
    progress.bar.finish_and_clear();
    SchedulerResults {
        settings: config.settings(),
        workloads,
        warnings,
    }
}

fn run_workload(
    workload: Workload,
    config: &RunConfig,
    progress: &Progress,
    warnings: &mut Vec<String>,
) -> WorkloadResult {
    let block = block(config.setup.profile, workload);
    let rounds = rounds(config.setup.profile);
    let mut drivers: Vec<Driver> = config
        .setup
        .runtimes
        .iter()
        .map(|&kind| {
            let (workers, tuning) = (config.setup.workers, config.tuning);
            Driver::start(kind, workload, workers, tuning, config.iteration_timeout)
        })
        .collect();
    for round in 1..=rounds {
        for driver in drivers.iter_mut() {
            if !driver.is_running() {
                // Its share of the bar will not come: count it as done.
                progress.bar.inc((block.warmup + block.iterations) as u64);
                continue;
            }
            let name = driver.kind().name();
            let message = format!("{} · {name} · round {round}/{rounds}", workload.name());
            progress.bar.set_message(message);
            driver.run_block(block, |done| progress.bar.inc(done));
        }
    }
    let runtimes = drivers
        .into_iter()
        .map(|driver| {
            let name = driver.kind().name().to_owned();
            (name, driver.close(block.iterations, warnings))
        })
        .collect();
    let result = WorkloadResult {
        name: workload.name().to_owned(),
        iterations_per_round: block.iterations,
        comparison: stats::compare(&runtimes, |_| true),
        runtimes,
    };
    progress.note(&report::one_line(&result, &config.settings().suite.runtimes));
    result
}

/// The progress bar on stderr, with a fallback to plain lines when stderr is
/// not a terminal (where indicatif draws nothing).
struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} iterations  {msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> ");
        bar.set_style(style);
        Progress { bar }
    }

    fn note(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("weft-bench: {line}");
        } else {
            self.bar.println(line);
        }
    }
}
