//! The service suite as the shared code sees it: its options, alone
//! (`weft-bench service`, with `--soak`) and in the default run
//! (`--service-workers`, `--service-database`), its chart beside the
//! document, its part of `compare` and the summary, and the hidden
//! `service-serve` subcommand its servers run as.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::result::{GATED, ServiceResult, figures};
use super::soak::SoakConfig;
use super::{RUNTIMES, ServiceConfig, chart, report};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite, Tool};
use crate::common::summary::SummaryTable;

/// weft-service (axum over SQLite or PostgreSQL) under HTTP load, on weft
/// and tokio.
pub struct Service;

/// The service suite alone: weft-service (axum over SQLite or PostgreSQL)
/// on weft and on tokio, /fortunes and seed 004 over HTTP.
///
/// Quick profile: 1 s warm-up and 5 s measured per load and runtime, the
/// suite in about 40 s; full: 2 s and 20 s. `--soak SECONDS`: seed 004
/// alone for that long per runtime, the server's RSS, threads,
/// descriptors and the errors sampled every 10 s, and a verdict.
#[derive(Debug, Clone, Args)]
pub struct ServiceArgs {
    /// Worker threads of every server.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// A postgres:// URL (default: the service's embedded SQLite, a fresh
    /// file per server).
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// The runtimes to serve on, in order (weft, tokio).
    #[arg(
        long = "runtime",
        value_enum,
        value_delimiter = ',',
        default_value = "weft,tokio"
    )]
    runtimes: Vec<RuntimeKind>,
    /// A soak instead of the loads: seed 004 for SECONDS on each runtime,
    /// the server sampled every 10 s, judged against its state after the
    /// first minute.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    soak: Option<u64>,
}

// The service suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct ServiceRunArgs {
    /// Worker threads of every server in the service suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    service_workers: u16,
    /// The service suite's database: a postgres:// URL (default: the
    /// service's embedded SQLite).
    #[arg(long, value_name = "URL")]
    service_database: Option<String>,
}

// weft-service's own arguments (`service-serve`).
#[derive(Debug, Args)]
struct ServiceServeArgs {
    /// weft-service's own arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Runs weft-service with its own arguments (the suite's servers).
fn service_serve(matches: &ArgMatches) -> ExitCode {
    let args = ServiceServeArgs::from_arg_matches(matches).unwrap_or_else(|err| err.exit());
    let argv = std::iter::once("weft-service".to_owned()).chain(args.args);
    let parsed = <weft_service::Args as clap::Parser>::parse_from(argv);
    match weft_service::run(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-service: {err}");
            ExitCode::FAILURE
        }
    }
}

impl Suite for Service {
    type Options = ServiceArgs;
    type RunOptions = ServiceRunArgs;
    type Config = ServiceConfig;
    type Results = ServiceResult;

    const NAME: &'static str = "service";
    const ABOUT: &'static str = "weft-service under HTTP load";

    /// `Err` for a runtime the service has no build for.
    fn alone(&self, options: ServiceArgs, profile: Profile) -> Result<ServiceConfig, String> {
        if let Some(kind) = (options.runtimes.iter()).find(|kind| !RUNTIMES.contains(kind)) {
            return Err(format!(
                "--runtime {}: weft-service runs on weft and tokio only",
                kind.name()
            ));
        }
        let setup = Setup::new(profile, usize::from(options.workers), &options.runtimes);
        let config = ServiceConfig::new(setup, options.database);
        Ok(match options.soak {
            Some(seconds) => config.soak(SoakConfig::new(Duration::from_secs(seconds))),
            None => config,
        })
    }

    /// The runtimes asked for that the service has a build for.
    fn in_run(&self, options: ServiceRunArgs, run: &RunContext) -> ServiceConfig {
        let runtimes: Vec<RuntimeKind> = (run.runtimes.iter())
            .filter(|kind| RUNTIMES.contains(kind))
            .copied()
            .collect();
        let workers = usize::from(options.service_workers);
        let setup = Setup::new(run.profile, workers, &runtimes);
        ServiceConfig::new(setup, options.service_database)
    }

    fn setup(&self, config: &ServiceConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &ServiceConfig) -> Result<ServiceResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &ServiceResult) -> String {
        report::render(results)
    }

    fn after(&self, _config: &ServiceConfig, results: &ServiceResult, json: Option<&Path>) {
        let path = chart::path_for(json);
        match chart::write(&path, results) {
            Ok(()) => println!("service suite chart: {}", path.display()),
            Err(err) => eprintln!("weft-bench: cannot write {}: {err}", path.display()),
        }
    }

    fn failed(&self, results: &ServiceResult) -> bool {
        results.any_failed()
    }

    fn gate(
        &self,
        gate: &Gate,
        base: Option<&ServiceResult>,
        new: Option<&ServiceResult>,
    ) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &ServiceResult, table: &mut SummaryTable) {
        for row in &results.rows {
            for figure in figures(&row.name) {
                let name = format!("{} {}", row.name, figure.name);
                table.line(Self::NAME, name, figure, row);
            }
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let command = Command::new("service-serve")
            .about("Run weft-service with these arguments (run by the service suite)")
            .hide(true);
        vec![Tool {
            command: ServiceServeArgs::augment_args(command),
            main: service_serve,
        }]
    }
}
