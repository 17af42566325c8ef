//! The timers suite as the shared code sees it: its options, alone
//! (`weft-bench timers`) and in the default run (`--timer-workers`), its
//! part of `compare` and the summary, and the hidden `timers-rss`
//! subcommand it re-runs this executable with.

use std::process::ExitCode;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::result::TimersResult;
use super::{Experiment, GATED, TimersConfig, report, row_spec, rss};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::{SuiteArgs, only};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite, Tool};
use crate::common::summary::SummaryTable;

/// Timer cost, accuracy, memory, idle CPU, a timer on a stuck worker.
pub struct Timers;

/// The timers suite alone: weft's timers next to tokio's and async-io's.
///
/// Quick profile: the suite in well under a minute; full: three to five
/// repetitions of every row, longer loops. `stuck_worker` uses at least 2
/// workers.
#[derive(Debug, Clone, Args)]
pub struct TimersArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Run only these experiments (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "EXPERIMENT")]
    only: Vec<Experiment>,
}

// The timers suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct TimersRunArgs {
    /// Worker threads of every runtime in the timers suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    timer_workers: u16,
}

// Measure `bytes_per_timer` in this process (run by the timers suite).
#[derive(Debug, Args)]
struct RssArgs {
    /// The runtime to measure.
    #[arg(long, value_enum)]
    runtime: RuntimeKind,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Timers held at once.
    #[arg(long, default_value_t = 1_000_000)]
    timers: usize,
}

fn rss_main(matches: &ArgMatches) -> ExitCode {
    let args = RssArgs::from_arg_matches(matches).unwrap_or_else(|err| err.exit());
    rss::child_main(args.runtime, args.workers.max(1), args.timers)
}

impl Suite for Timers {
    type Options = TimersArgs;
    type RunOptions = TimersRunArgs;
    type Config = TimersConfig;
    type Results = TimersResult;

    const NAME: &'static str = "timers";
    const ABOUT: &'static str = "the timers rows";

    fn alone(&self, options: TimersArgs, profile: Profile) -> Result<TimersConfig, String> {
        Ok(TimersConfig {
            experiments: only(&Experiment::ALL, &options.only),
            ..TimersConfig::new(options.suite.setup(profile))
        })
    }

    fn in_run(&self, options: TimersRunArgs, run: &RunContext) -> TimersConfig {
        let workers = usize::from(options.timer_workers);
        TimersConfig::new(Setup::new(run.profile, workers, &run.runtimes))
    }

    fn setup(&self, config: &TimersConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &TimersConfig) -> Result<TimersResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &TimersResult) -> String {
        report::render(results)
    }

    fn failed(&self, results: &TimersResult) -> bool {
        results.any_failed()
    }

    fn gate(
        &self,
        gate: &Gate,
        base: Option<&TimersResult>,
        new: Option<&TimersResult>,
    ) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &TimersResult, table: &mut SummaryTable) {
        for row in &results.rows {
            if let Some(figure) = row_spec(&row.name) {
                table.line(Self::NAME, row.name.clone(), figure, row);
            }
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let command = Command::new("timers-rss")
            .about("Measure `bytes_per_timer` in this process (run by the timers suite)")
            .hide(true);
        vec![Tool {
            command: RssArgs::augment_args(command),
            main: rss_main,
        }]
    }
}
