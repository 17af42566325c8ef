//! The stall suite as the shared code sees it: its options, alone
//! (`weft-bench stall`) and in the default run (`--stall-workers`), and
//! its part of `compare` and the summary (with weft's targets as notes:
//! they are absolute shares, not ratios).

use clap::Args;

use super::result::{FIGURES, GATED, StallResult};
use super::{Case, StallConfig, report};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::{SuiteArgs, only};
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// A 10 ms ticker, spawned tasks and TCP round trips while tasks block
/// workers in a synchronous sleep.
pub struct Stall;

/// The stall suite alone: a ticker, tasks and TCP round trips while tasks
/// block one or every worker in a synchronous sleep.
///
/// Quick profile: 1 s calm and a 2 s stall per case and runtime, one
/// trial, the suite in about 20 s; full: 2 s calm, 3 s stall, three
/// trials.
#[derive(Debug, Clone, Args)]
pub struct StallArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Run only these cases (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CASE")]
    only: Vec<Case>,
}

// The stall suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct StallRunArgs {
    /// Worker threads of every runtime in the stall suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    stall_workers: u16,
}

impl Suite for Stall {
    type Options = StallArgs;
    type RunOptions = StallRunArgs;
    type Config = StallConfig;
    type Results = StallResult;

    const NAME: &'static str = "stall";
    const ABOUT: &'static str = "timers, tasks and I/O while workers are blocked";

    fn alone(&self, options: StallArgs, profile: Profile) -> Result<StallConfig, String> {
        Ok(StallConfig {
            cases: only(Case::ALL, &options.only),
            ..StallConfig::new(options.suite.setup(profile))
        })
    }

    fn in_run(&self, options: StallRunArgs, run: &RunContext) -> StallConfig {
        let workers = usize::from(options.stall_workers);
        StallConfig::new(Setup::new(run.profile, workers, &run.runtimes))
    }

    fn setup(&self, config: &StallConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &StallConfig) -> Result<StallResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &StallResult) -> String {
        report::render(results)
    }

    fn failed(&self, results: &StallResult) -> bool {
        results.any_failed()
    }

    fn gate(&self, gate: &Gate, base: Option<&StallResult>, new: Option<&StallResult>) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &StallResult, table: &mut SummaryTable) {
        for row in &results.rows {
            for figure in &FIGURES {
                let name = format!("{} {}", row.name, figure.name);
                table.line(Self::NAME, name, figure, row);
            }
        }
        for row in results.rows.iter().filter(|row| !row.targets.is_empty()) {
            let checks: Vec<String> = row.targets.iter().map(|check| check.line()).collect();
            table.note(format!(
                "stall {}: weft's targets (the lowest trial's share): {}",
                row.name,
                checks.join("; ")
            ));
        }
    }
}
