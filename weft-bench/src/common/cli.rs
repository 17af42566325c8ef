//! The command line: `weft-bench [run] [OPTIONS]` (the default: the
//! scheduler lane, then the timers, mixed, echo, HTTP, file, service and
//! stall lanes), `weft-bench timers`, `mixed`, `echo`, `http`, `file`,
//! `service` and `stall` (one lane alone), `weft-bench compare BASE.json NEW.json`,
//! `weft-bench metrics` (the metrics lane) and `weft-bench metrics-dump
//! --format json|prometheus`. `timers-rss` and `service-serve` are hidden:
//! the timers lane re-runs this binary with the first to measure
//! `bytes_per_timer` in a process of its own, the service lane with the
//! second to run `weft-service` in a process of its own.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::common::compare;
use crate::common::figure::gate::Tolerances;
use crate::common::figure::{self, table::header};
use crate::common::json::{self, Document};
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Tuning, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::common::summary;
use crate::serve::floor::Floor;
use crate::serve::server::Serving;
use crate::suites::echo::{self, EchoConfig, Row};
use crate::suites::file::{self, FileConfig};
use crate::suites::http::{self, HttpConfig};
use crate::suites::metrics::{self, MetricsConfig, Part, dump, wait::Mechanism};
use crate::suites::mixed::{self, Load, MixedConfig, Variant};
use crate::suites::scheduler::report;
use crate::suites::scheduler::workloads::Workload;
use crate::suites::scheduler::{self, RunConfig};
use crate::suites::service::soak::SoakConfig;
use crate::suites::service::{self, ServiceConfig};
use crate::suites::stall::{self, Case, StallConfig};
use crate::suites::timers::{self, Experiment, TimersConfig};

/// The benchmark lane: weft next to tokio and smol on tokio's scheduler
/// workloads, in the same run.
#[derive(Debug, Parser)]
#[command(name = "weft-bench", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Options of `run`, the default subcommand.
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the scheduler, timers, mixed, echo, HTTP, file, service and
    /// stall lanes, and print their tables (the default).
    ///
    /// Quick profile: the scheduler lane in well under two minutes; full:
    /// twice the rounds, twice the iterations per round (and each lane's
    /// full profile).
    Run(RunArgs),
    /// The timers lane alone: weft's timers next to tokio's and async-io's.
    ///
    /// Quick profile: the lane in well under a minute; full: three to five
    /// repetitions of every row, longer loops. `stuck_worker` uses at
    /// least 2 workers.
    Timers(TimersArgs),
    /// The mixed lane alone: 150 µs and 50 ms requests on one runtime.
    ///
    /// Quick profile: 1.5 s measured per load and runtime, the lane in
    /// about 30 s; full: 6 s.
    Mixed(MixedArgs),
    /// The echo lane alone: TCP echo over loopback, one load generator.
    ///
    /// Quick profile: 0.5 s warm-up and 1.5 s measured per row and
    /// runtime (and the floor), the lane in about 45 s; full: 1 s and 6 s.
    Echo(EchoArgs),
    /// The HTTP lane alone: hyper's hello server, one hyper-client thread.
    ///
    /// Quick profile: 0.5 s warm-up and 3 s measured per runtime (and the
    /// floor), the lane in about 35 s; full: 1 s and 10 s.
    Http(HttpArgs),
    /// The file lane alone: 64 tasks reading and writing 8 MiB files beside
    /// a 1 ms ticker.
    ///
    /// Quick profile: five rounds, each a warm-up and a measured pass per
    /// runtime, the lane in about 10 s; full: fifteen rounds.
    File(FileArgs),
    /// The service lane alone: weft-service (axum over SQLite or
    /// PostgreSQL) on weft and on tokio, /fortunes and seed 004 over HTTP.
    ///
    /// Quick profile: 1 s warm-up and 5 s measured per load and runtime,
    /// the lane in about 40 s; full: 2 s and 20 s. `--soak SECONDS`: seed
    /// 004 alone for that long per runtime, the server's RSS, threads,
    /// descriptors and the errors sampled every 10 s, and a verdict.
    Service(ServiceArgs),
    /// The stall lane alone: a ticker, tasks and TCP round trips while
    /// tasks block one or every worker in a synchronous sleep.
    ///
    /// Quick profile: 1 s calm and a 2 s stall per case and runtime, one
    /// trial, the lane in about 20 s; full: 2 s calm, 3 s stall, three
    /// trials.
    Stall(StallArgs),
    /// Run weft-service with these arguments (run by the service lane).
    #[command(hide = true)]
    ServiceServe(ServiceServeArgs),
    /// Serve the HTTP lane's hello server on one runtime (or its floor)
    /// for an outside load generator (`wrk -c64 http://ADDRESS/`); prints
    /// its address.
    HttpServe(HttpServeArgs),
    /// Measure `bytes_per_timer` in this process (run by the timers lane).
    #[command(hide = true)]
    TimersRss(RssArgs),
    /// Compare two `--json` documents; exit 1 on a failure or regression.
    Compare(CompareArgs),
    /// The metrics lane: are weft's counters exact, and cheap to sample?
    ///
    /// Quick profile: the whole lane in about a minute; full: 20 s per
    /// sampling interval, twice the overhead rounds.
    Metrics(MetricsArgs),
    /// Run a small workload on weft and print `Handle::metrics()`.
    MetricsDump(DumpArgs),
}

/// The profile of a command that measures, and where its JSON goes.
#[derive(Debug, Args)]
struct Profiled {
    /// Quick profile (the default; the command's help says how long).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Full profile: longer windows or more rounds (the command's help).
    #[arg(long)]
    full: bool,
    /// Also write the results to FILE as JSON (a lane run alone writes a
    /// document with no workloads).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// What a lane run alone takes.
#[derive(Debug, Args)]
struct LaneArgs {
    /// Worker threads of every runtime.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    #[command(flatten)]
    profiled: Profiled,
    #[command(flatten)]
    runtimes: Runtimes,
}

// `--runtimes` of `run` and of a lane run alone. (A plain comment: clap
// reads a doc comment on an `Args` struct as its command's `about`.)
#[derive(Debug, Args)]
struct Runtimes {
    /// The runtimes to run, in the order each row runs them.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "weft,tokio,smol"
    )]
    runtimes: Vec<RuntimeKind>,
}

impl Runtimes {
    /// The runtimes asked for (each once), `profile` on `workers` workers.
    fn setup(&self, profile: Profile, workers: u16) -> Setup {
        Setup::new(profile, usize::from(workers), &dedup(&self.runtimes))
    }
}

#[derive(Debug, Args)]
#[command(mut_arg("runtimes", |arg| arg.help("The runtimes to run, in the order their blocks alternate")))]
struct RunArgs {
    /// Worker threads of every runtime.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    #[command(flatten)]
    profiled: Profiled,
    /// Run only these workloads (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "WORKLOAD")]
    only: Vec<Workload>,
    #[command(flatten)]
    runtimes: Runtimes,
    /// Seconds to wait for one iteration before marking the runtime failed.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = positive_seconds)]
    iteration_timeout: Duration,
    /// weft: largest batch taken from the inject queue at once.
    #[arg(long, hide = true, value_name = "N")]
    inject_batch_cap: Option<usize>,
    /// weft: disable the LIFO slot.
    #[arg(long, hide = true)]
    no_lifo: bool,
    /// The lanes to run (always in the order scheduler, timers, mixed, echo,
    /// http, file, service, stall).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "scheduler,timers,mixed,echo,http,file,service,stall"
    )]
    lanes: Vec<Lane>,
    /// Worker threads of every runtime in the timers lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    timer_workers: u16,
    /// Worker threads of every runtime in the mixed lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    mixed_workers: u16,
    /// Worker threads of every runtime in the echo lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    echo_workers: u16,
    /// Worker threads of every server in the HTTP lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    http_workers: u16,
    /// Worker threads of every runtime in the file lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    file_workers: u16,
    /// Worker threads of every server in the service lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    service_workers: u16,
    /// Worker threads of every runtime in the stall lane.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    stall_workers: u16,
    /// The service lane's database: a postgres:// URL (default: the
    /// service's embedded SQLite).
    #[arg(long, value_name = "URL")]
    service_database: Option<String>,
    /// Where the mixed lane's chart goes (default: beside `--json` as
    /// STEM-mixed.svg, else weft-bench/mixed.svg in the target directory).
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
}

/// A lane of the default run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Lane {
    /// tokio's scheduler workloads.
    Scheduler,
    /// The timers rows.
    Timers,
    /// Short and long requests on one runtime.
    Mixed,
    /// TCP echo over loopback.
    Echo,
    /// hyper's hello server.
    Http,
    /// Files read and written beside a ticker.
    File,
    /// weft-service under HTTP load.
    Service,
    /// Timers, tasks and I/O while workers are blocked.
    Stall,
}

#[derive(Debug, Args)]
struct TimersArgs {
    #[command(flatten)]
    lane: LaneArgs,
    /// Run only these experiments (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "EXPERIMENT")]
    only: Vec<Experiment>,
}

#[derive(Debug, Args)]
struct MixedArgs {
    /// Worker threads of every runtime.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    #[command(flatten)]
    profiled: Profiled,
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

#[derive(Debug, Args)]
struct EchoArgs {
    #[command(flatten)]
    lane: LaneArgs,
    /// Run only these rows (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ROW")]
    only: Vec<Row>,
    /// Skip the floor row (each row served with no async runtime, after
    /// the runtimes: what this machine needs for the same work).
    #[arg(long)]
    no_floor: bool,
}

#[derive(Debug, Args)]
struct HttpServeArgs {
    /// The runtime serving.
    #[arg(long, value_enum, required_unless_present = "floor")]
    runtime: Option<RuntimeKind>,
    /// Serve the lane's floor instead: the hello answer with no async
    /// runtime (`weft_bench::floor`).
    #[arg(long, conflicts_with = "runtime")]
    floor: bool,
    /// Its worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// How long to serve, in seconds.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
}

#[derive(Debug, Args)]
struct HttpArgs {
    #[command(flatten)]
    lane: LaneArgs,
    /// Keep-alive connections of the load generator.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    connections: u16,
    /// Skip the floor row (the hello request answered with no async
    /// runtime, after the runtimes: what this machine needs for it).
    #[arg(long)]
    no_floor: bool,
}

#[derive(Debug, Args)]
struct FileArgs {
    #[command(flatten)]
    lane: LaneArgs,
}

#[derive(Debug, Args)]
struct StallArgs {
    #[command(flatten)]
    lane: LaneArgs,
    /// Run only these cases (repeat the flag or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CASE")]
    only: Vec<Case>,
}

#[derive(Debug, Args)]
struct ServiceArgs {
    /// Worker threads of every server.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    #[command(flatten)]
    profiled: Profiled,
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

#[derive(Debug, Args)]
struct ServiceServeArgs {
    /// weft-service's own arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

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

#[derive(Debug, Args)]
struct CompareArgs {
    /// The baseline document.
    base: PathBuf,
    /// The document to check against it.
    new: PathBuf,
    /// Allowed growth, percent, of weft's median and of its ratios.
    #[arg(long, default_value_t = compare::DEFAULT_TOLERANCE_PCT, value_name = "PCT")]
    tolerance: f64,
    /// Allowed growth, percent, of weft's context switches per iteration.
    #[arg(long, default_value_t = compare::DEFAULT_CSW_TOLERANCE_PCT, value_name = "PCT")]
    csw_tolerance: f64,
}

#[derive(Debug, Args)]
struct MetricsArgs {
    /// Worker threads of every weft runtime.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    #[command(flatten)]
    profiled: Profiled,
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

#[derive(Debug, Args)]
struct DumpArgs {
    /// The output format.
    #[arg(long, value_enum)]
    format: dump::Format,
    /// Worker threads.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
}

impl Profiled {
    fn profile(&self) -> Profile {
        if self.full {
            Profile::Full
        } else {
            Profile::Quick
        }
    }
}

impl LaneArgs {
    fn setup(&self) -> Setup {
        self.runtimes.setup(self.profiled.profile(), self.workers)
    }

    /// The scheduler lane's configuration with no workload: it only
    /// describes the document's settings.
    fn run_config(&self) -> RunConfig {
        RunConfig::describing(self.setup())
    }
}

impl MetricsArgs {
    fn config(&self) -> MetricsConfig {
        let parts = [Part::Counting, Part::Overhead];
        MetricsConfig {
            profile: self.profiled.profile(),
            workers: usize::from(self.workers),
            tasks: self.tasks as usize,
            short_wait: self.short_wait,
            parts: only(&parts, &self.only),
        }
    }
}

impl RunArgs {
    /// Every runtime asked for on `workers` workers.
    fn setup(&self, workers: u16) -> Setup {
        self.runtimes.setup(self.profiled.profile(), workers)
    }

    fn config(&self) -> RunConfig {
        RunConfig {
            workloads: only(&Workload::ALL, &self.only),
            tuning: Tuning {
                inject_batch_cap: self.inject_batch_cap,
                lifo_slot: !self.no_lifo,
                ..Tuning::default()
            },
            iteration_timeout: self.iteration_timeout,
            ..RunConfig::describing(self.setup(self.workers))
        }
    }

    /// The lanes asked for, each on its own workers: the mixed lane on
    /// every variant of the runtimes asked for (weft brings its two).
    fn lanes(&self) -> Lanes {
        let on = |lane| self.lanes.contains(&lane);
        let mixed = |setup: Setup| {
            let variants = Variant::of(&setup.runtimes);
            MixedConfig::new(Setup::new(setup.profile, setup.workers, &variants))
        };
        Lanes {
            scheduler: on(Lane::Scheduler).then(|| self.config()),
            settings: self.config(),
            timers: on(Lane::Timers).then(|| TimersConfig::new(self.setup(self.timer_workers))),
            mixed: on(Lane::Mixed).then(|| mixed(self.setup(self.mixed_workers))),
            echo: on(Lane::Echo).then(|| EchoConfig::new(self.setup(self.echo_workers))),
            http: on(Lane::Http).then(|| HttpConfig::new(self.setup(self.http_workers))),
            file: on(Lane::File).then(|| FileConfig::new(self.setup(self.file_workers))),
            stall: on(Lane::Stall).then(|| StallConfig::new(self.setup(self.stall_workers))),
            service: on(Lane::Service).then(|| {
                let setup = self.setup(self.service_workers);
                let runtimes: Vec<RuntimeKind> = (setup.runtimes.iter())
                    .filter(|kind| service::RUNTIMES.contains(kind))
                    .copied()
                    .collect();
                let setup = Setup::new(setup.profile, setup.workers, &runtimes);
                ServiceConfig::new(setup, self.service_database.clone())
            }),
            json: self.profiled.json.clone(),
            chart: self.chart.clone(),
        }
    }
}

impl ServiceArgs {
    fn setup(&self) -> Setup {
        let profile = self.profiled.profile();
        Setup::new(profile, usize::from(self.workers), &self.runtimes)
    }

    /// The lane's configuration; `Err` for a runtime the service has no
    /// build for.
    fn config(&self) -> Result<ServiceConfig, String> {
        if let Some(kind) = (self.runtimes.iter()).find(|kind| !service::RUNTIMES.contains(kind)) {
            return Err(format!(
                "--runtime {}: weft-service runs on weft and tokio only",
                kind.name()
            ));
        }
        let config = ServiceConfig::new(self.setup(), self.database.clone());
        Ok(match self.soak {
            Some(seconds) => config.soak(SoakConfig::new(Duration::from_secs(seconds))),
            None => config,
        })
    }
}

impl HttpArgs {
    fn http_config(&self) -> HttpConfig {
        HttpConfig {
            connections: usize::from(self.connections),
            floor: !self.no_floor,
            ..HttpConfig::new(self.lane.setup())
        }
    }
}

impl EchoArgs {
    fn echo_config(&self) -> EchoConfig {
        EchoConfig {
            rows: only(Row::ALL, &self.only),
            floor: !self.no_floor,
            ..EchoConfig::new(self.lane.setup())
        }
    }
}

impl MixedArgs {
    fn setup(&self) -> Setup<Variant> {
        let profile = self.profiled.profile();
        Setup::new(profile, usize::from(self.workers), &dedup(&self.runtimes))
    }

    fn run_config(&self) -> RunConfig {
        let setup = self.setup();
        let kinds: Vec<RuntimeKind> = setup.runtimes.iter().map(|v| v.kind()).collect();
        RunConfig::describing(Setup::new(setup.profile, setup.workers, &dedup(&kinds)))
    }

    fn mixed_config(&self) -> MixedConfig {
        MixedConfig {
            oracle: !self.no_oracle,
            loads: only(Load::ALL, &self.only),
            ..MixedConfig::new(self.setup())
        }
    }
}

impl StallArgs {
    fn stall_config(&self) -> StallConfig {
        StallConfig {
            cases: only(Case::ALL, &self.only),
            ..StallConfig::new(self.lane.setup())
        }
    }
}

impl TimersArgs {
    fn timers_config(&self) -> TimersConfig {
        TimersConfig {
            experiments: only(&Experiment::ALL, &self.only),
            ..TimersConfig::new(self.lane.setup())
        }
    }
}

/// `all`, or those of them in `chosen` when any is (`--only`).
fn only<T: PartialEq + Copy>(all: &[T], chosen: &[T]) -> Vec<T> {
    let chosen = |item: &&T| chosen.is_empty() || chosen.contains(item);
    all.iter().filter(chosen).copied().collect()
}

fn positive_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if seconds > 0.0 && seconds <= 86_400.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err("must be more than 0 and at most 86400 seconds".to_owned())
    }
}

/// `items` without repeats, in order.
fn dedup<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut unique = Vec::with_capacity(items.len());
    for &item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique
}

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Run(cli.run)) {
        Command::Run(args) => run(args.lanes()),
        Command::Timers(args) => run(Lanes {
            timers: Some(args.timers_config()),
            ..Lanes::alone(&args.lane)
        }),
        Command::Mixed(args) => run(Lanes {
            mixed: Some(args.mixed_config()),
            chart: args.chart.clone(),
            json: args.profiled.json.clone(),
            ..Lanes::none(args.run_config())
        }),
        Command::Echo(args) => run(Lanes {
            echo: Some(args.echo_config()),
            ..Lanes::alone(&args.lane)
        }),
        Command::File(args) => run(Lanes {
            file: Some(FileConfig::new(args.lane.setup())),
            ..Lanes::alone(&args.lane)
        }),
        Command::Stall(args) => run(Lanes {
            stall: Some(args.stall_config()),
            ..Lanes::alone(&args.lane)
        }),
        Command::Service(args) => match args.config() {
            Ok(config) => run(Lanes {
                service: Some(config),
                json: args.profiled.json.clone(),
                ..Lanes::none(RunConfig::describing(args.setup()))
            }),
            Err(err) => {
                eprintln!("weft-bench: {err}");
                ExitCode::from(2)
            }
        },
        Command::ServiceServe(args) => {
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
        Command::HttpServe(args) => http_serve(&args),
        Command::Http(args) => run(Lanes {
            http: Some(args.http_config()),
            ..Lanes::alone(&args.lane)
        }),
        Command::TimersRss(args) => {
            timers::rss::child_main(args.runtime, args.workers.max(1), args.timers)
        }
        Command::Compare(args) => {
            let tolerances = Tolerances {
                time_pct: args.tolerance,
                csw_pct: args.csw_tolerance,
            };
            compare::main(&args.base, &args.new, tolerances)
        }
        Command::Metrics(args) => run_metrics(&args),
        Command::MetricsDump(args) => match dump::render(args.format, usize::from(args.workers)) {
            Ok(text) => {
                println!("{}", text.trim_end());
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("weft-bench: metrics-dump failed: {err}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Runs the metrics lane; exits 1 if it could not run or a count was
/// wrong (a lost count, a decreasing snapshot), not for a missed target.
fn run_metrics(args: &MetricsArgs) -> ExitCode {
    let document = match metrics::run(&args.config()) {
        Ok(document) => document,
        Err(err) => {
            eprintln!("weft-bench: metrics lane failed: {err}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", metrics::report::render(&document));
    if let Some(path) = &args.profiled.json {
        if let Err(err) = metrics::document::write(path, &document) {
            eprintln!("weft-bench: cannot write {}: {err}", path.display());
            return ExitCode::FAILURE;
        }
        eprintln!("weft-bench: wrote {}", path.display());
    }
    if document.targets.correct() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The lanes one invocation runs, and where their results go.
struct Lanes {
    /// The scheduler lane, if it runs.
    scheduler: Option<RunConfig>,
    /// The document's settings when the scheduler lane does not run.
    settings: RunConfig,
    /// The timers lane, if it runs.
    timers: Option<TimersConfig>,
    /// The mixed lane, if it runs.
    mixed: Option<MixedConfig>,
    /// The echo lane, if it runs.
    echo: Option<EchoConfig>,
    /// The HTTP lane, if it runs.
    http: Option<HttpConfig>,
    /// The file lane, if it runs.
    file: Option<FileConfig>,
    /// The service lane, if it runs.
    service: Option<ServiceConfig>,
    /// The stall lane, if it runs.
    stall: Option<StallConfig>,
    /// `--json`.
    json: Option<PathBuf>,
    /// `--chart`: the mixed lane's chart, if not the default place.
    chart: Option<PathBuf>,
}

impl Lanes {
    /// No lane, and a document described by `settings`.
    fn none(settings: RunConfig) -> Lanes {
        Lanes {
            scheduler: None,
            settings,
            timers: None,
            mixed: None,
            echo: None,
            http: None,
            file: None,
            service: None,
            stall: None,
            json: None,
            chart: None,
        }
    }

    /// No lane yet, for a lane run alone with `args`.
    fn alone(args: &LaneArgs) -> Lanes {
        Lanes {
            json: args.profiled.json.clone(),
            ..Lanes::none(args.run_config())
        }
    }
}

/// Serves the HTTP lane's hello server for an outside load generator.
fn http_serve(args: &HttpServeArgs) -> ExitCode {
    fn serve<S: Serving>(started: std::io::Result<S>, seconds: u64) -> std::io::Result<()> {
        let server = started?;
        println!("http://{}/", server.address());
        std::thread::sleep(std::time::Duration::from_secs(seconds));
        server.stop()
    }
    let (workers, seconds) = (usize::from(args.workers), args.seconds);
    let served = match args.runtime.filter(|_| !args.floor) {
        Some(RuntimeKind::Weft) => serve(http::server::start::<Weft>(workers), seconds),
        Some(RuntimeKind::Tokio) => serve(http::server::start::<Tokio>(workers), seconds),
        Some(RuntimeKind::Smol) => serve(http::server::start::<Smol>(workers), seconds),
        None => serve(Floor::start::<http::floor::Hello>(workers), seconds),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-bench: http-serve: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the scheduler, timers, mixed, echo, HTTP, file, service and stall
/// lanes (those given, in that order), prints their tables, writes one
/// document and the mixed and service lanes' charts; exits 1 if any
/// runtime failed a workload, a timer row, a mixed load, an echo row, the
/// HTTP row, the file row, a service load or a stall case (a missed target
/// does not fail the run).
fn run(lanes: Lanes) -> ExitCode {
    let mut document = match &lanes.scheduler {
        Some(config) => {
            let document = scheduler::run(config);
            print!("{}", report::render(&document));
            document
        }
        None => scheduler::document(&lanes.settings, Vec::new(), Vec::new()),
    };
    if lanes.scheduler.is_none() {
        // The first lane to run heads the output with the machine.
        let first = [
            ("timers", lanes.timers.is_some()),
            ("mixed", lanes.mixed.is_some()),
            ("echo", lanes.echo.is_some()),
            ("http", lanes.http.is_some()),
            ("file", lanes.file.is_some()),
            ("service", lanes.service.is_some()),
            ("stall", lanes.stall.is_some()),
        ]
        .into_iter()
        .find(|&(_, runs)| runs);
        if let Some((lane, _)) = first {
            print!("{}", header(lane, &document.machine, &document.versions));
        }
    }
    document.lanes.timers = lane(lanes.timers, timers::run, timers::report::render);
    document.lanes.mixed = lane(lanes.mixed, mixed::run, mixed::report::render);
    if let Some(result) = &document.lanes.mixed {
        let chart = lanes
            .chart
            .unwrap_or_else(|| mixed::chart::path_for(lanes.json.as_deref()));
        match mixed::chart::write(&chart, result) {
            Ok(()) => println!("mixed lane chart: {}", chart.display()),
            // The chart is a view of the numbers above: losing it does not
            // lose the run.
            Err(err) => eprintln!("weft-bench: cannot write {}: {err}", chart.display()),
        }
    }
    document.lanes.echo = lane(lanes.echo, echo::run, echo::report::render);
    document.lanes.http = lane(lanes.http, http::run, http::report::render);
    document.lanes.file = lane(lanes.file, file::run, file::report::render);
    document.lanes.service = lane(lanes.service, service::run, service::report::render);
    if let Some(result) = &document.lanes.service {
        let chart = service::chart::path_for(lanes.json.as_deref());
        match service::chart::write(&chart, result) {
            Ok(()) => println!("service lane chart: {}", chart.display()),
            Err(err) => eprintln!("weft-bench: cannot write {}: {err}", chart.display()),
        }
    }
    document.lanes.stall = lane(lanes.stall, stall::run, stall::report::render);
    print!("{}", summary::render(&document));
    if let Some(path) = lanes.json.as_deref() {
        if let Err(err) = json::write(path, &document) {
            eprintln!("weft-bench: cannot write {}: {err}", path.display());
            return ExitCode::FAILURE;
        }
        eprintln!("weft-bench: wrote {}", path.display());
    }
    if any_failed(&document) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs a lane if it is configured, and prints its tables.
fn lane<C, R>(config: Option<C>, run: fn(&C) -> R, render: fn(&R) -> String) -> Option<R> {
    let result = run(&config?);
    print!("{}", render(&result));
    Some(result)
}

fn any_failed(document: &Document) -> bool {
    fn failed<R: figure::Row>(rows: &[R]) -> bool {
        rows.iter().any(figure::Row::any_failed)
    }
    use compare::{loads, rows};
    failed(&document.workloads)
        || rows(&document.lanes.timers).is_some_and(failed)
        || loads(document).is_some_and(failed)
        || rows(&document.lanes.echo).is_some_and(failed)
        || rows(&document.lanes.http).is_some_and(failed)
        || rows(&document.lanes.file).is_some_and(failed)
        || rows(&document.lanes.service).is_some_and(failed)
        || rows(&document.lanes.stall).is_some_and(failed)
}
