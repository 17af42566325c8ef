//! The HTTP suite, `weft-bench http` (and in the default
//! run): hyper's HTTP/1.1 "hello world" server on weft, tokio and smol
//! with 2 workers each, driven by one closed-loop load generator, hyper's
//! HTTP/1 client on a thread of its own with 64 keep-alive connections
//! (issue #17).
//!
//! The servers ([`server`]) differ only in their runtime glue (weft's
//! `weft::hyper::{Io, Executor}`, hyper-util's `TokioIo`/`TokioExecutor`,
//! the suite's own adapters for smol); the generator ([`generator`]) is the
//! same for all three. Each runtime runs on a server built for it and
//! dropped after it, on a thread of its own that is abandoned (with a
//! warning) if it does not answer in time (the echo suite's
//! `measure_pair`); only one server is ever alive. Per runtime: req/s,
//! latency percentiles, the process's CPU (per second and per request);
//! weft's req/s and p99 over the best peer's, and whether they meet the
//! issue's targets (req/s ≥ 1.1× the best peer's, p99 no worse). After
//! the runtimes, the floor ([`floor`], [`crate::serve::floor`]: the same request
//! answered with no runtime) runs the same way, never a peer
//! (`--no-floor`: not).
//! [`result`] is the JSON and the figures `compare` gates (the echo
//! suite's, with this suite's floors), [`report`] the table. A missed target
//! never fails the run; a runtime that failed does.

pub mod floor;
pub mod generator;
pub mod report;
pub mod result;
pub mod server;
pub mod suite;

pub use suite::Http;

use std::sync::mpsc;
use std::time::Duration;

use crate::common::figure::skew::Watch;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::serve::floor::Floor;
use crate::serve::load::{Outcome, Plan};
use crate::serve::{
    Report, ServeConfig, Served, Timing, measure_pair, run_row, serve_and_load, server_name,
};

use result::{HttpResult, HttpSettings};

/// The suite's one row in JSON and `compare`: the hello server, 64
/// connections.
pub const ROW: &str = "hello_conn64";

/// The generator's connections (the 64).
pub const CONNECTIONS: usize = 64;

/// The timing of `profile`. Quick: 0.5 s warm-up and 3 s measured per
/// runtime, about 35 s for the three and the floor, at the suite's load and
/// paced; full: 1 s and 10 s.
pub fn timing(profile: Profile) -> Timing {
    Timing::measuring(profile, Duration::from_secs(3), Duration::from_secs(10))
}

/// Everything a run of the HTTP suite needs to know.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Profile, workers of every server's runtime, runtimes in order.
    pub setup: Setup,
    /// Durations ([`timing`], or [`Timing::tiny`] in smoke tests).
    pub timing: Timing,
    /// The generator's keep-alive connections.
    pub connections: usize,
    /// Whether the row also runs on the floor ([`floor`]), after the
    /// runtimes (`--no-floor`: not).
    pub floor: bool,
}

impl HttpConfig {
    /// The default configuration of `setup`: the profile's timing, 64
    /// connections.
    pub fn new(setup: Setup) -> HttpConfig {
        HttpConfig {
            timing: timing(setup.profile),
            connections: CONNECTIONS,
            floor: true,
            setup,
        }
    }

    fn plan(&self, rate_per_s: Option<f64>) -> Plan {
        self.timing.plan(self.connections, 0, rate_per_s)
    }
}

impl ServeConfig for HttpConfig {
    fn setup(&self) -> &Setup {
        &self.setup
    }
    fn timing(&self) -> &Timing {
        &self.timing
    }
    fn floor(&self) -> bool {
        self.floor
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &HttpConfig) -> HttpResult {
    let mut watch = Watch::start("http");
    let served = Served {
        suite: "http",
        name: ROW,
        label: "hello",
        units: "requests",
        line: report::one_line,
    };
    let measure = |kind, rate, watch: &mut Watch| measure(kind, rate, config, watch);
    let (runs, paced) = run_row(&served, config, &mut watch, &result::COST_TARGETS, measure);
    HttpResult {
        settings: HttpSettings::new(config),
        rows: vec![result::row(config.connections, runs, paced)],
        skew: watch.finish(),
    }
}

/// The hello server on `server` (`None`: the floor) under the generator,
/// on a thread of its own.
fn measure(
    server: Option<RuntimeKind>,
    rate: Option<f64>,
    config: &HttpConfig,
    watch: &mut Watch,
) -> Result<Outcome, String> {
    let (mut plan, workers) = (config.plan(rate), config.setup.workers);
    let load = move |address, probe| {
        plan.options.probe = probe;
        generator::run(address, &plan)
    };
    let pair = move |sender: &mpsc::Sender<Report>| match server {
        Some(RuntimeKind::Weft) => serve_and_load(|| server::start::<Weft>(workers), load, sender),
        Some(RuntimeKind::Tokio) => {
            serve_and_load(|| server::start::<Tokio>(workers), load, sender)
        }
        Some(RuntimeKind::Smol) => serve_and_load(|| server::start::<Smol>(workers), load, sender),
        None => serve_and_load(|| Floor::start::<floor::Hello>(workers), load, sender),
    };
    let (timeout, name) = (config.timing.timeout(), server_name(server));
    measure_pair("http", name, ROW, timeout, &mut watch.warnings, pair)
}
