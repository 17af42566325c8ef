//! The tokio-patch suite as the shared code sees it: its options, alone
//! (`weft-bench tokio-patch`) and in the default run (none of its own),
//! and its part of `compare` and the summary.

use clap::Args;

use super::{CPU, GATED, P99, TokioPatchConfig, TokioPatchResult};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::SuiteArgs;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// A tokio program (axum, sqlx, reqwest) on tokio and on weft through the
/// `[patch]` line.
pub struct TokioPatch;

/// The tokio-patch suite alone: one program of plain tokio code (axum and
/// sqlx serving, reqwest calling, `examples/tokio-bench`) built on tokio
/// and with tokio patched to weft-tokio, the same rows on both.
///
/// Quick profile: three rounds per build, builds alternating, about 40 s
/// once both builds are cached (the first run builds them, a few minutes);
/// full: seven rounds.
#[derive(Debug, Clone, Args)]
pub struct TokioPatchArgs {
    #[command(flatten)]
    suite: SuiteArgs,
}

// The suite's options in the default run: none (its runtimes are fixed,
// its programs run with their own defaults).
#[derive(Debug, Clone, Copy, Args)]
pub struct TokioPatchRunArgs {}

impl Suite for TokioPatch {
    type Options = TokioPatchArgs;
    type RunOptions = TokioPatchRunArgs;
    type Config = TokioPatchConfig;
    type Results = TokioPatchResult;

    const NAME: &'static str = super::NAME;
    const ABOUT: &'static str = "a tokio program on tokio and on weft through the [patch] line";

    fn alone(&self, options: TokioPatchArgs, profile: Profile) -> Result<TokioPatchConfig, String> {
        Ok(TokioPatchConfig::new(options.suite.setup(profile)))
    }

    fn in_run(&self, _options: TokioPatchRunArgs, run: &RunContext) -> TokioPatchConfig {
        TokioPatchConfig::new(Setup::new(run.profile, 2, &run.runtimes))
    }

    fn setup(&self, config: &TokioPatchConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &TokioPatchConfig) -> Result<TokioPatchResult, String> {
        super::run(config)
    }

    fn render(&self, results: &TokioPatchResult) -> String {
        super::render(results)
    }

    fn failed(&self, results: &TokioPatchResult) -> bool {
        results.any_failed()
    }

    fn gate(
        &self,
        gate: &Gate,
        base: Option<&TokioPatchResult>,
        new: Option<&TokioPatchResult>,
    ) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &TokioPatchResult, table: &mut SummaryTable) {
        for row in &results.rows {
            if row.name == "users_beside_reports" {
                table.line(Self::NAME, format!("{} p99", row.name), &P99, row);
            } else {
                table.line(Self::NAME, format!("{} CPU/req", row.name), &CPU, row);
            }
        }
        for row in &results.rows {
            for check in &row.targets {
                table.note(format!("tokio-patch {}: {}", row.name, check.line()));
            }
        }
    }
}
