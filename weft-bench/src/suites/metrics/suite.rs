//! The metrics suite as the shared code sees it: its options (not in the
//! default run unless `--lanes` names it), its document of its own
//! (schema `weft-bench-metrics/1`) when run alone with `--json`, and
//! `metrics-dump`. It has no figure for `compare` or the summary; a wrong
//! count (not a missed target) fails the run.

use std::process::ExitCode;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::document::MetricsDocument;
use super::wait::Mechanism;
use super::{MetricsConfig, Part, dump, report};
use crate::common::figure::gate::Gate;
use crate::common::run::only;
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{NoOptions, RunContext, Suite, Tool};

/// Counts read while counting; the cost of sampling `Handle::metrics()`.
pub struct Metrics;

/// The metrics suite: are weft's counters exact, and cheap to sample?
///
/// Quick profile: the whole suite in about a minute; full: 20 s per
/// sampling interval, twice the overhead rounds.
#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    /// Worker threads of every weft runtime.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// Tasks counting transactions.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    tasks: u32,
    /// How the 10 µs wait is waited: spin (yield until the deadline) or timer.
    #[arg(long, value_enum, default_value = "spin")]
    short_wait: Mechanism,
    /// Run only these parts (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PART")]
    only: Vec<Part>,
}

// `metrics-dump`'s options.
#[derive(Debug, Args)]
struct DumpArgs {
    /// The output format.
    #[arg(long, value_enum)]
    format: dump::Format,
    /// Worker threads.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
}

/// Prints a `Handle::metrics()` snapshot after a few workloads.
fn metrics_dump(matches: &ArgMatches) -> ExitCode {
    let args = DumpArgs::from_arg_matches(matches).unwrap_or_else(|err| err.exit());
    match dump::render(args.format, usize::from(args.workers)) {
        Ok(text) => {
            println!("{}", text.trim_end());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("weft-bench: metrics-dump failed: {err}");
            ExitCode::FAILURE
        }
    }
}

impl Suite for Metrics {
    type Options = MetricsArgs;
    type RunOptions = NoOptions;
    type Config = MetricsConfig;
    type Results = MetricsDocument;

    const NAME: &'static str = "metrics";
    const ABOUT: &'static str = "weft's counters: exact, and cheap to sample? (not by default)";
    const DEFAULT: bool = false;
    const OWN_DOCUMENT: bool = true;

    fn alone(&self, options: MetricsArgs, profile: Profile) -> Result<MetricsConfig, String> {
        let parts = [Part::Counting, Part::Overhead];
        Ok(MetricsConfig {
            profile,
            workers: usize::from(options.workers),
            tasks: options.tasks as usize,
            short_wait: options.short_wait,
            parts: only(&parts, &options.only),
        })
    }

    /// Its defaults: 4 workers, 100 tasks, a spinning short wait, both
    /// parts.
    fn in_run(&self, _: NoOptions, run: &RunContext) -> MetricsConfig {
        MetricsConfig {
            profile: run.profile,
            workers: 4,
            tasks: 100,
            short_wait: Mechanism::Spin,
            parts: vec![Part::Counting, Part::Overhead],
        }
    }

    fn setup(&self, config: &MetricsConfig) -> Setup {
        Setup::new(config.profile, config.workers, &[RuntimeKind::Weft])
    }

    fn run(&self, config: &MetricsConfig) -> Result<MetricsDocument, String> {
        super::run(config).map_err(|err| err.to_string())
    }

    fn render(&self, results: &MetricsDocument) -> String {
        report::render(results)
    }

    /// A count was wrong: a lost count, or a snapshot that went down.
    fn failed(&self, results: &MetricsDocument) -> bool {
        !results.targets.correct()
    }

    /// Nothing gated: the suite's targets are reported, its counts checked.
    fn gate(&self, _: &Gate, _: Option<&MetricsDocument>, _: Option<&MetricsDocument>) -> (String, bool) {
        (String::new(), true)
    }

    fn tools(&self) -> Vec<Tool> {
        let command = Command::new("metrics-dump")
            .about("Run a small workload on weft and print `Handle::metrics()`");
        vec![Tool {
            command: DumpArgs::augment_args(command),
            main: metrics_dump,
        }]
    }
}
