//! The HTTP suite as the shared code sees it: its options, alone
//! (`weft-bench http`) and in the default run (`--http-workers`), its part
//! of `compare` and the summary, and `http-serve` (its hello server for an
//! outside load generator).

use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::result::{GATED, HttpResult};
use super::{HttpConfig, floor, report, server};
use crate::common::figure::gate::Gate;
use crate::common::figure::rows::rows_of;
use crate::common::run::SuiteArgs;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite, Tool};
use crate::common::summary::SummaryTable;
use crate::serve::floor::Floor;
use crate::serve::server::Serving;

/// hyper's hello server; server CPU and system calls per request.
pub struct Http;

/// The HTTP suite alone: hyper's hello server, one hyper-client thread.
///
/// Quick profile: 0.5 s warm-up and 3 s measured per runtime (and the
/// floor), the suite in about 35 s; full: 1 s and 10 s.
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Keep-alive connections of the load generator.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    connections: u16,
    /// Skip the floor row (the hello request answered with no async
    /// runtime, after the runtimes: what this machine needs for it).
    #[arg(long)]
    no_floor: bool,
}

// The HTTP suite's options in the default run.
#[derive(Debug, Clone, Args)]
pub struct HttpRunArgs {
    /// Worker threads of every server in the HTTP suite.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    http_workers: u16,
}

// `http-serve`'s options.
#[derive(Debug, Args)]
struct HttpServeArgs {
    /// The runtime serving.
    #[arg(long, value_enum, required_unless_present = "floor")]
    runtime: Option<RuntimeKind>,
    /// Serve the suite's floor instead: the hello answer with no async
    /// runtime (`weft_bench::serve::floor`).
    #[arg(long, conflicts_with = "runtime")]
    floor: bool,
    /// Its worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// How long to serve, in seconds.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
}

/// Serves the suite's hello server for an outside load generator.
fn http_serve(matches: &ArgMatches) -> ExitCode {
    fn serve<S: Serving>(started: std::io::Result<S>, seconds: u64) -> std::io::Result<()> {
        let server = started?;
        println!("http://{}/", server.address());
        std::thread::sleep(Duration::from_secs(seconds));
        server.stop()
    }
    let args = HttpServeArgs::from_arg_matches(matches).unwrap_or_else(|err| err.exit());
    let (workers, seconds) = (usize::from(args.workers), args.seconds);
    let served = match args.runtime.filter(|_| !args.floor) {
        Some(RuntimeKind::Weft) => serve(server::start::<Weft>(workers), seconds),
        Some(RuntimeKind::Tokio) => serve(server::start::<Tokio>(workers), seconds),
        Some(RuntimeKind::Smol) => serve(server::start::<Smol>(workers), seconds),
        None => serve(Floor::start::<floor::Hello>(workers), seconds),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-bench: http-serve: {err}");
            ExitCode::FAILURE
        }
    }
}

impl Suite for Http {
    type Options = HttpArgs;
    type RunOptions = HttpRunArgs;
    type Config = HttpConfig;
    type Results = HttpResult;

    const NAME: &'static str = "http";
    const ABOUT: &'static str = "hyper's hello server";

    fn alone(&self, options: HttpArgs, profile: Profile) -> Result<HttpConfig, String> {
        Ok(HttpConfig {
            connections: usize::from(options.connections),
            floor: !options.no_floor,
            ..HttpConfig::new(options.suite.setup(profile))
        })
    }

    fn in_run(&self, options: HttpRunArgs, run: &RunContext) -> HttpConfig {
        let workers = usize::from(options.http_workers);
        HttpConfig::new(Setup::new(run.profile, workers, &run.runtimes))
    }

    fn setup(&self, config: &HttpConfig) -> Setup {
        config.setup.clone()
    }

    fn run(&self, config: &HttpConfig) -> Result<HttpResult, String> {
        Ok(super::run(config))
    }

    fn render(&self, results: &HttpResult) -> String {
        report::render(results)
    }

    fn failed(&self, results: &HttpResult) -> bool {
        results.any_failed()
    }

    fn gate(&self, gate: &Gate, base: Option<&HttpResult>, new: Option<&HttpResult>) -> (String, bool) {
        gate.check(&GATED, rows_of(base), rows_of(new))
    }

    fn summarize(&self, results: &HttpResult, table: &mut SummaryTable) {
        crate::serve::summary::summarize(Self::NAME, &results.rows, table);
    }

    fn tools(&self) -> Vec<Tool> {
        let command = Command::new("http-serve").about(
            "Serve the HTTP suite's hello server on one runtime (or its floor) for an outside \
             load generator (`wrk -c64 http://ADDRESS/`); prints its address",
        );
        vec![Tool {
            command: HttpServeArgs::augment_args(command),
            main: http_serve,
        }]
    }
}
