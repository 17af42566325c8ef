//! The file suite as the shared code sees it: its options, alone
//! (`weft-bench file`) and in the default run (`--file-workers`), and its
//! part of `compare` and the summary.

use clap::Args;

use super::result::{FileResult, GATED, TICK_P99, TOTAL};
use super::{FileConfig, report};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::SuiteArgs;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// 64 tasks reading and writing 8 MiB files beside a 1 ms ticker.
pub struct File;

/// The file suite alone: 64 tasks reading and writing 8 MiB files beside
/// a 1 ms ticker.
///
/// Quick profile: five rounds, each a warm-up and a measured pass per
/// runtime, the suite in about 10 s; full: fifteen rounds.
#[derive(Debug, Clone, Args)]
pub struct FileArgs {
    #[command(flatten)]
    suite: SuiteArgs,
}

// The file suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct FileRunArgs {
    /// Worker threads of every runtime in the file suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    file_workers: u16,
}

impl Suite for File {
    type Options = FileArgs;
    type RunOptions = FileRunArgs;
    type Config = FileConfig;
    type Results = FileResult;

    const NAME: &'static str = "file";
    const ABOUT: &'static str = "files read and written beside a ticker";

    fn alone(&self, options: FileArgs, profile: Profile) -> Result<FileConfig, String> {
        Ok(FileConfig::new(options.suite.setup(profile)))
    }

    fn in_run(&self, options: FileRunArgs, run: &RunContext) -> FileConfig {
        let workers = usize::from(options.file_workers);
        FileConfig::new(Setup::new(run.profile, workers, &run.runtimes))
    }

    fn setup(&self, config: &FileConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &FileConfig) -> Result<FileResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &FileResult) -> String {
        report::render(results)
    }

    fn failed(&self, results: &FileResult) -> bool {
        results.any_failed()
    }

    fn gate(&self, gate: &Gate, base: Option<&FileResult>, new: Option<&FileResult>) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &FileResult, table: &mut SummaryTable) {
        for row in &results.rows {
            for (figure, what) in [(&TOTAL, "total"), (&TICK_P99, "tick p99")] {
                table.line(Self::NAME, format!("{} {what}", row.name), figure, row);
            }
        }
    }
}
