//! The scheduler suite as the shared code sees it: its options, alone
//! (`weft-bench scheduler`) and in the default run (`--workers`, `--only`,
//! `--iteration-timeout`), and its part of the document, `compare` and
//! the summary.

use std::time::Duration;

use clap::Args;

use super::result::{GATED, MEDIAN_MS, SchedulerResults};
use super::workloads::Workload;
use super::{RunConfig, report};
use crate::common::figure::Row;
use crate::common::figure::gate::Gate;
use crate::common::run::{Runtimes, dedup, only};
use crate::common::runtimes::{RuntimeKind, Tuning};
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// tokio's scheduler workloads: spawning, waking, yielding.
pub struct Scheduler;

// The scheduler suite's options, in the default run too.
#[derive(Debug, Clone, Args)]
pub struct SchedulerFlags {
    /// Worker threads of every runtime in the scheduler suite.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// The scheduler suite: run only these workloads (repeat the flag or
    /// separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "WORKLOAD")]
    only: Vec<Workload>,
    /// Seconds to wait for one iteration before marking the runtime failed.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = positive_seconds)]
    iteration_timeout: Duration,
    /// weft: largest batch taken from the inject queue at once.
    #[arg(long, hide = true, value_name = "N")]
    inject_batch_cap: Option<usize>,
    /// weft: disable the LIFO slot.
    #[arg(long, hide = true)]
    no_lifo: bool,
}

/// The scheduler suite alone: tokio's scheduler workloads, blocks of
/// iterations alternating between the runtimes.
///
/// Quick profile: well under two minutes; full: twice the rounds, twice
/// the iterations per round.
#[derive(Debug, Clone, Args)]
pub struct SchedulerArgs {
    #[command(flatten)]
    flags: SchedulerFlags,
    #[command(flatten)]
    runtimes: Runtimes,
}

impl SchedulerFlags {
    fn config(&self, profile: Profile, runtimes: &[RuntimeKind]) -> RunConfig {
        let setup = Setup::new(profile, usize::from(self.workers), runtimes);
        RunConfig {
            workloads: only(&Workload::ALL, &self.only),
            tuning: Tuning {
                inject_batch_cap: self.inject_batch_cap,
                lifo_slot: !self.no_lifo,
                ..Tuning::default()
            },
            iteration_timeout: self.iteration_timeout,
            ..RunConfig::describing(setup)
        }
    }
}

fn positive_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if seconds > 0.0 && seconds <= 86_400.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err("must be more than 0 and at most 86400 seconds".to_owned())
    }
}

impl Suite for Scheduler {
    type Options = SchedulerArgs;
    type RunOptions = SchedulerFlags;
    type Config = RunConfig;
    type Results = SchedulerResults;

    const NAME: &'static str = "scheduler";
    const ABOUT: &'static str = "tokio's scheduler workloads";
    const TOP_LEVEL: bool = true;

    fn alone(&self, options: SchedulerArgs, profile: Profile) -> Result<RunConfig, String> {
        let runtimes = dedup(&options.runtimes.runtimes);
        Ok(options.flags.config(profile, &runtimes))
    }

    fn in_run(&self, options: SchedulerFlags, run: &RunContext) -> RunConfig {
        options.config(run.profile, &run.runtimes)
    }

    fn setup(&self, config: &RunConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &RunConfig) -> Result<SchedulerResults, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &SchedulerResults) -> String {
        report::render(results)
    }

    fn failed(&self, results: &SchedulerResults) -> bool {
        results.workloads.iter().any(Row::any_failed)
    }

    fn gate(
        &self,
        gate: &Gate,
        base: Option<&SchedulerResults>,
        new: Option<&SchedulerResults>,
    ) -> (String, bool) {
        let (mut text, passed) = gate.check(
            &GATED,
            base.map(|b| &b.workloads[..]),
            new.map(|n| &n.workloads[..]),
        );
        let workers = |r: Option<&SchedulerResults>| r.map(|r| r.settings.suite.workers);
        if let (Some(b), Some(n)) = (workers(base), workers(new))
            && b != n
            && !text.is_empty()
        {
            text.push_str(&format!(
                "warning: the scheduler suite ran on {b} workers in BASE, {n} in NEW; the ratios \
                 may not be comparable\n"
            ));
        }
        (text, passed)
    }

    fn summarize(&self, results: &SchedulerResults, table: &mut SummaryTable) {
        for workload in &results.workloads {
            table.line(Self::NAME, workload.name.clone(), &MEDIAN_MS, workload);
        }
    }

    fn absent(&self, setup: &Setup) -> Option<SchedulerResults> {
        Some(SchedulerResults {
            settings: RunConfig::describing(setup.clone()).settings(),
            workloads: Vec::new(),
            warnings: Vec::new(),
        })
    }
}
