//! The service suite, `weft-bench service` (and in the default run): `weft-service` (an axum application over a real
//! database) on weft and on tokio, 2 workers each, each in a process of
//! its own, under one load generator outside it (issue 37, item 5).
//!
//! | load | what |
//! |---|---|
//! | `fortunes_conn64` | TechEmpower's `/fortunes`, 64 keep-alive connections in closed loop |
//! | `seed004` | seed 004 over HTTP: `GET /users/{random}` at 1,000 a second in open loop (Poisson arrivals, latency from the arrival) beside 2 closed-loop clients on `GET /report` (50 ms of CPU in one poll) |
//!
//! Each (load, runtime) pair runs on a server started for it
//! ([`server`]: this executable re-run as `weft-bench service-serve`,
//! which is `weft_service::run`) and stopped after it with `SIGTERM`,
//! which must end it gracefully; only one server is ever alive. The
//! database is the service's embedded SQLite (a fresh file per server),
//! or PostgreSQL with `--database URL`. Per pair: the measured requests'
//! rate and latency percentiles, `/report`s per second, the server's CPU
//! and the generator's, errors; per load, weft's ratios to tokio's and
//! the targets: `/fortunes` req/s ≥ 1.0× tokio's; `/users` p99 ≤
//! 5 ms and ≤ 0.1× tokio's, `/report` per second ≥ 0.5× tokio's.
//! [`load`] is the generator, [`result`] the JSON, figures and targets,
//! [`report`] the table. A missed target never fails the run; a runtime
//! that failed a load does.
//!
//! `--soak SECONDS` runs only seed 004, that long on each runtime, with
//! the server sampled every 10 s and a verdict on its growth ([`soak`]).

pub mod chart;
pub mod load;
pub mod report;
pub mod result;
pub mod server;
pub mod soak;
pub mod suite;

pub use suite::Service;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::figure::rows::RowKind;
use crate::common::figure::skew::{BUSY_OTHERS_PCT, Skew, Watch};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::common::thread::on_thread;

use load::{Outcome, Plan, Shape};
use result::{ServiceResult, ServiceRow, ServiceRun, ServiceSettings};
use server::Server;
use soak::SoakConfig;

/// The runtimes the service runs on (it has no smol build).
pub const RUNTIMES: [RuntimeKind; 2] = [RuntimeKind::Weft, RuntimeKind::Tokio];

crate::common::figure::rows::rows! {
    /// One load of the suite.
    pub enum Load {
        /// `/fortunes`, 64 connections, closed loop.
        Fortunes = ("fortunes_conn64", "/fortunes, 64 conn"),
        /// `/users` in open loop beside closed-loop `/report`s.
        Seed004 = ("seed004", "seed 004: /users + /report"),
    }
}

/// Everything a run of the service suite needs to know.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Profile, workers of every server, runtimes in order.
    pub setup: Setup,
    /// `None`: the embedded SQLite; else a PostgreSQL URL.
    pub database: Option<String>,
    /// Warm-up, window, drain, stall.
    pub plan: Plan,
    pub connections: usize,
    pub users_per_s: f64,
    pub reporters: usize,
    pub report_ms: u64,
    /// The `weft-bench` executable that serves (`service-serve`): this
    /// one, or the built binary when the suite runs from a test.
    pub server_exe: PathBuf,
    /// A soak instead of the suite's loads ([`ServiceConfig::soak`]).
    pub soak: Option<SoakConfig>,
}

impl ServiceConfig {
    /// The default configuration of `setup` on `database`: 1 s of warm-up,
    /// 5 s measured per pair (quick; 2 s and 20 s full), the loads.
    pub fn new(setup: Setup, database: Option<String>) -> ServiceConfig {
        let (warmup, measure) = match setup.profile {
            Profile::Quick => (Duration::from_secs(1), Duration::from_secs(5)),
            Profile::Full => (Duration::from_secs(2), Duration::from_secs(20)),
        };
        ServiceConfig {
            setup,
            database,
            plan: Plan {
                warmup,
                measure,
                drain_timeout: Duration::from_secs(5),
                stall_timeout: Duration::from_secs(10),
                soak: None,
            },
            connections: 64,
            users_per_s: 1_000.0,
            reporters: 2,
            report_ms: 50,
            server_exe: std::env::current_exe().unwrap_or_else(|_| "weft-bench".into()),
            soak: None,
        }
    }

    /// This configuration made a soak: seed 004 alone, measured for the
    /// soak's duration on each runtime, sampled.
    pub fn soak(self, soak: SoakConfig) -> ServiceConfig {
        ServiceConfig {
            plan: Plan {
                measure: soak.duration,
                soak: Some(soak.clone()),
                ..self.plan
            },
            soak: Some(soak),
            ..self
        }
    }

    /// The loads it runs: seed 004 alone in a soak, else every one.
    pub fn loads(&self) -> &'static [Load] {
        match self.soak {
            Some(_) => &[Load::Seed004],
            None => Load::all(),
        }
    }

    /// For smoke tests: 0.2 s of warm-up, 1 s measured, 100 point reads a
    /// second, 8 connections, 5 ms reports, served by `server_exe`.
    pub fn tiny(setup: Setup, server_exe: PathBuf) -> ServiceConfig {
        let config = ServiceConfig::new(setup, None);
        ServiceConfig {
            plan: Plan {
                warmup: Duration::from_millis(200),
                measure: Duration::from_secs(1),
                ..config.plan
            },
            connections: 8,
            users_per_s: 100.0,
            report_ms: 5,
            server_exe,
            ..config
        }
    }

    fn shape(&self, load: Load) -> Shape {
        match load {
            Load::Fortunes => Shape::Closed {
                path: "/fortunes",
                connections: self.connections,
                marker: "フレームワークのベンチマーク",
            },
            Load::Seed004 => Shape::Seed004 {
                users_per_s: self.users_per_s,
                reporters: self.reporters,
                report_ms: self.report_ms,
                seed: 37,
            },
        }
    }

    /// Longest wait for one pair: its run, drain and stall, the server's
    /// start and stop, with room for a loaded machine.
    fn timeout(&self) -> Duration {
        let p = &self.plan;
        p.warmup + p.measure + p.drain_timeout + p.stall_timeout + Duration::from_secs(90)
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &ServiceConfig) -> ServiceResult {
    let mut watch = Watch::start("service");
    let mut rows = Vec::new();
    for &load in config.loads() {
        let mut runs = BTreeMap::new();
        for &kind in &config.setup.runtimes {
            let run = match measure(config, load, kind, &mut watch.warnings) {
                Ok(outcome) => ServiceRun::from_outcome(load, &outcome),
                Err(why) => ServiceRun::failed(why),
            };
            eprintln!(
                "  service: {} on {}: {}",
                load.name(),
                kind.name(),
                report::one_line(&run)
            );
            let what = format!("service: {} on {}", load.name(), kind.name());
            watch.window(&what, &run, "requests", config.plan.drain_timeout);
            if let Some(f) = run.ok().filter(|f| f.errors > 0) {
                watch.warnings.push(format!(
                    "{what}: {} failed requests or wrong answers (the first: {})",
                    f.errors,
                    f.first_error.as_deref().unwrap_or("?")
                ));
            }
            runs.insert(kind.name().to_owned(), run);
        }
        rows.push(ServiceRow::of(load, runs));
    }
    ServiceResult {
        settings: ServiceSettings::new(config),
        skew: skew(watch, &rows),
        rows,
    }
}

/// What may have skewed the suite. The machine's CPU outside this process
/// includes the servers', so the others' share is the windows' (each
/// corrected for its server), weighted by their length, not the
/// [`Watch`]'s reading over the suite.
fn skew(watch: Watch, rows: &[ServiceRow]) -> Skew {
    let mut warnings = watch.warnings;
    let windows = rows
        .iter()
        .flat_map(|row| row.runtimes.values())
        .filter_map(|run| run.ok().map(|f| &f.window));
    let (mut weighted, mut seconds) = (0.0, 0.0);
    for window in windows {
        if let Some(pct) = window.others_cpu_pct {
            weighted += pct * window.window_s;
            seconds += window.window_s;
        }
    }
    let others_cpu_pct = (seconds > 0.0).then(|| weighted / seconds);
    if let Some(pct) = others_cpu_pct.filter(|&pct| pct >= BUSY_OTHERS_PCT) {
        warnings.push(format!(
            "other processes used {pct:.0}% of the machine during the service suite's windows"
        ));
    }
    Skew {
        others_cpu_pct,
        warnings,
    }
}

/// `load` on a server on `kind`, on a thread of its own.
fn measure(
    config: &ServiceConfig,
    load: Load,
    kind: RuntimeKind,
    warnings: &mut Vec<String>,
) -> Result<Outcome, String> {
    let (shape, plan) = (config.shape(load), config.plan.clone());
    let (workers, database) = (config.setup.workers, config.database.clone());
    let exe = config.server_exe.clone();
    let work = move || {
        let server =
            Server::start(&exe, kind, workers, database.as_deref()).map_err(|e| e.to_string())?;
        let outcome = load::run(&server, &shape, &plan).map_err(|e| e.to_string())?;
        server.stop().map_err(|e| format!("after the load: {e}"))?;
        Ok(outcome)
    };
    let timeout = config.timeout();
    let abandoned = || {
        warnings.push(format!(
            "service: {} on {} gave no result within {} s; its thread (and server) abandoned",
            load.name(),
            kind.name(),
            timeout.as_secs()
        ));
    };
    on_thread(format!("service-{}", kind.name()), timeout, work, abandoned)
}
