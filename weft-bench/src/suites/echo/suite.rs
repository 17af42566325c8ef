//! The echo suite as the shared code sees it: its options, alone
//! (`weft-bench echo`) and in the default run (`--echo-workers`), and its
//! part of `compare` and the summary.

use clap::Args;

use super::result::{EchoResult, GATED};
use super::{EchoConfig, Row, report};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::{SuiteArgs, only};
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// TCP echo over loopback; server CPU and system calls per request.
pub struct Echo;

/// The echo suite alone: TCP echo over loopback, one load generator.
///
/// Quick profile: 0.5 s warm-up and 1.5 s measured per row and runtime
/// (and the floor), the suite in about 45 s; full: 1 s and 6 s.
#[derive(Debug, Clone, Args)]
pub struct EchoArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Run only these rows (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ROW")]
    only: Vec<Row>,
    /// Skip the floor row (each row served with no async runtime, after
    /// the runtimes: what this machine needs for the same work).
    #[arg(long)]
    no_floor: bool,
}

// The echo suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct EchoRunArgs {
    /// Worker threads of every runtime in the echo suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    echo_workers: u16,
}

impl Suite for Echo {
    type Options = EchoArgs;
    type RunOptions = EchoRunArgs;
    type Config = EchoConfig;
    type Results = EchoResult;

    const NAME: &'static str = "echo";
    const ABOUT: &'static str = "TCP echo over loopback";

    fn alone(&self, options: EchoArgs, profile: Profile) -> Result<EchoConfig, String> {
        Ok(EchoConfig {
            rows: only(Row::ALL, &options.only),
            floor: !options.no_floor,
            ..EchoConfig::new(options.suite.setup(profile))
        })
    }

    fn in_run(&self, options: EchoRunArgs, run: &RunContext) -> EchoConfig {
        let workers = usize::from(options.echo_workers);
        EchoConfig::new(Setup::new(run.profile, workers, &run.runtimes))
    }

    fn setup(&self, config: &EchoConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &EchoConfig) -> Result<EchoResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &EchoResult) -> String {
        report::render(results)
    }

    fn failed(&self, results: &EchoResult) -> bool {
        results.any_failed()
    }

    fn gate(&self, gate: &Gate, base: Option<&EchoResult>, new: Option<&EchoResult>) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &EchoResult, table: &mut SummaryTable) {
        crate::serve::summary::summarize(Self::NAME, &results.rows, table);
    }
}
