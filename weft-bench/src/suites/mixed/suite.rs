//! The mixed suite as the shared code sees it: its options, alone
//! (`weft-bench mixed`) and in the default run (`--mixed-workers`,
//! `--chart`), its chart beside the document, and its part of `compare`
//! and the summary.

use std::path::{Path, PathBuf};

use clap::Args;

use super::result::{GATED, LoadResult, MixedResult, SHORT_P99};
use super::{Load, MixedConfig, Variant, chart, report};
use crate::common::figure::Row;
use crate::common::figure::gate::Gate;
use crate::common::run::{dedup, only};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary::SummaryTable;

/// 150 µs and 50 ms requests on one runtime: short-request latency beside
/// long polls.
pub struct Mixed;

/// The mixed suite alone: 150 µs and 50 ms requests on one runtime.
///
/// Quick profile: 1.5 s measured per load and runtime, the suite in about
/// 30 s; full: 6 s.
#[derive(Debug, Clone, Args)]
pub struct MixedArgs {
    /// Worker threads of every runtime.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// Where the chart goes (default: beside `--json` as STEM-mixed.svg,
    /// else weft-bench/mixed.svg in the target directory).
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
    /// Run only these loads (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LOAD")]
    only: Vec<Load>,
    /// The runtimes to run, in the order each load runs them.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "weft,weft-no-stall-monitor,weft-no-demote,tokio,smol"
    )]
    runtimes: Vec<Variant>,
    /// Skip the oracle row (the load served by a scheduler told each
    /// request's kind, after the runtimes: what this machine allows).
    #[arg(long)]
    no_oracle: bool,
}

// The mixed suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct MixedRunArgs {
    /// Worker threads of every runtime in the mixed suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    mixed_workers: u16,
    /// Where the mixed suite's chart goes (default: beside `--json` as
    /// STEM-mixed.svg, else weft-bench/mixed.svg in the target directory).
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
}

impl Suite for Mixed {
    type Options = MixedArgs;
    type RunOptions = MixedRunArgs;
    type Config = MixedConfig;
    type Results = MixedResult;

    const NAME: &'static str = "mixed";
    const ABOUT: &'static str = "short and long requests on one runtime";

    fn alone(&self, options: MixedArgs, profile: Profile) -> Result<MixedConfig, String> {
        let workers = usize::from(options.workers);
        let setup = Setup::new(profile, workers, &dedup(&options.runtimes));
        Ok(MixedConfig {
            oracle: !options.no_oracle,
            loads: only(Load::ALL, &options.only),
            chart: options.chart,
            ..MixedConfig::new(setup)
        })
    }

    /// Every variant of the runtimes asked for (weft brings its two).
    fn in_run(&self, options: MixedRunArgs, run: &RunContext) -> MixedConfig {
        let variants = Variant::of(&run.runtimes);
        let workers = usize::from(options.mixed_workers);
        MixedConfig {
            chart: options.chart,
            ..MixedConfig::new(Setup::new(run.profile, workers, &variants))
        }
    }

    fn setup(&self, config: &MixedConfig) -> Setup {
        let kinds: Vec<RuntimeKind> = config.setup.runtimes.iter().map(|v| v.kind()).collect();
        Setup::new(config.setup.profile, config.setup.workers, &dedup(&kinds))
    }

    fn run(&self, config: &MixedConfig) -> Result<MixedResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &MixedResult) -> String {
        report::render(results)
    }

    fn after(&self, config: &MixedConfig, results: &MixedResult, json: Option<&Path>) {
        let path = (config.chart.clone()).unwrap_or_else(|| chart::path_for(json));
        match chart::write(&path, results) {
            Ok(()) => println!("mixed suite chart: {}", path.display()),
            // The chart is a view of the numbers above: losing it does not
            // lose the run.
            Err(err) => eprintln!("weft-bench: cannot write {}: {err}", path.display()),
        }
    }

    fn failed(&self, results: &MixedResult) -> bool {
        results.loads.iter().any(Row::any_failed)
    }

    fn gate(
        &self,
        gate: &Gate,
        base: Option<&MixedResult>,
        new: Option<&MixedResult>,
    ) -> (String, bool) {
        fn loads(results: Option<&MixedResult>) -> Option<&[LoadResult]> {
            results.map(|results| &results.loads[..])
        }
        gate.check(&GATED, loads(base), loads(new))
    }

    fn summarize(&self, results: &MixedResult, table: &mut SummaryTable) {
        for load in &results.loads {
            let name = format!("{} short p99", load.name);
            table.line(Self::NAME, name, &SHORT_P99, load);
        }
    }
}
