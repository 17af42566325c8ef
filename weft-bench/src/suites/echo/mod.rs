//! The echo suite, `weft-bench echo` (and in the default
//! run): TCP echo over loopback, a server on each runtime with 2 workers,
//! one load-generator thread outside every runtime (issue #16).
//!
//! | row | connections | message |
//! |---|---|---|
//! | `conn1_64b` | 1 | 64 B |
//! | `conn64_64b` | 64 | 64 B |
//! | `conn64_4k` | 64 | 4 KiB |
//!
//! Every connection runs in closed loop: it sends its message, waits for
//! all of it to come back, records the round trip and sends again. The
//! servers ([`crate::serve::server`]) are one accept loop and one echo task per
//! connection on weft, tokio and smol; the generator ([`generator`]) is
//! one thread with a `mio` poller, the same for all three, so only the
//! server differs between runs.
//!
//! Each (row, runtime) pair runs on a runtime built for it and dropped
//! after it, on a thread of its own that is abandoned (with a warning) if
//! it does not answer in time; the pairs run one after the other, so only
//! one runtime (and one server) is ever alive. Per pair: req/s, latency
//! percentiles, the process's CPU; per row: weft's req/s over the best
//! peer's and its p99 over the best peer's, and whether it meets the
//! issue's targets (req/s ≥ the best peer's, p99 ≤ 1.1× the best peer's).
//! [`result`] is the JSON, the figures `compare` gates and the ratios,
//! [`report`] the table. Each row also runs on the floor
//! ([`crate::serve::floor`]: echo with no runtime) after the runtimes, never a
//! peer (`--no-floor`: not). A missed target never fails the run; a runtime
//! that failed a row does.

pub mod generator;
pub mod report;
pub mod result;
pub mod suite;

pub use suite::Echo;

use std::sync::mpsc;
use std::time::Duration;

use crate::common::figure::rows::RowKind;
use crate::common::figure::skew::Watch;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::serve::floor::{self, Floor};
use crate::serve::load::{Outcome, Plan};
use crate::serve::server::Server;
use crate::serve::{
    Report, ServeConfig, Served, Timing, measure_pair, run_row, serve_and_load, server_name,
};

use result::{EchoResult, EchoSettings};

crate::common::figure::rows::rows! {
    /// One row of the suite.
    pub enum Row {
        /// One connection, 64-byte messages: the latency of one round trip.
        Conn1Bytes64 = ("conn1_64b", "1 conn, 64 B"),
        /// 64 connections, 64-byte messages: many small requests.
        Conn64Bytes64 = ("conn64_64b", "64 conn, 64 B"),
        /// 64 connections, 4 KiB messages: bigger reads and writes.
        Conn64Bytes4k = ("conn64_4k", "64 conn, 4 KiB"),
    }
}

impl Row {
    /// (connections, bytes per message).
    pub fn shape(self) -> (usize, usize) {
        match self {
            Row::Conn1Bytes64 => (1, 64),
            Row::Conn64Bytes64 => (64, 64),
            Row::Conn64Bytes4k => (64, 4096),
        }
    }
}

/// The timing of `profile`. Quick: 0.5 s warm-up and 1.5 s measured per
/// pair, about 20 s for the 9 pairs; full: 1 s and 6 s.
pub fn timing(profile: Profile) -> Timing {
    Timing::measuring(
        profile,
        Duration::from_millis(1_500),
        Duration::from_secs(6),
    )
}

/// Everything a run of the echo suite needs to know.
#[derive(Debug, Clone)]
pub struct EchoConfig {
    /// Profile, workers, runtimes in the order each row runs them.
    pub setup: Setup,
    /// Durations.
    pub timing: Timing,
    /// The rows, in order.
    pub rows: Vec<Row>,
    /// Whether each row also runs on the floor ([`crate::serve::floor`]), after
    /// the runtimes (`--no-floor`: not).
    pub floor: bool,
}

impl EchoConfig {
    /// The default configuration of `setup`: every row, the profile's
    /// timing.
    pub fn new(setup: Setup) -> EchoConfig {
        EchoConfig {
            timing: timing(setup.profile),
            rows: Row::ALL.to_vec(),
            floor: true,
            setup,
        }
    }

    fn plan(&self, row: Row, rate_per_s: Option<f64>) -> Plan {
        let (connections, message_bytes) = row.shape();
        self.timing.plan(connections, message_bytes, rate_per_s)
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &EchoConfig) -> EchoResult {
    let mut watch = Watch::start("echo");
    let mut rows = Vec::new();
    for &row in &config.rows {
        let served = Served {
            suite: "echo",
            name: row.name(),
            label: row.label(),
            units: "round trips",
            line: crate::serve::report::one_line,
        };
        let cost: &[_] = if row == result::COST_ROW {
            &result::COST_TARGETS
        } else {
            &[]
        };
        let measure = |kind, rate, watch: &mut Watch| measure(kind, row, rate, config, watch);
        let (runs, paced) = run_row(&served, config, &mut watch, cost, measure);
        rows.push(result::row(row, runs, paced));
    }
    EchoResult {
        settings: EchoSettings::new(config),
        rows,
        skew: watch.finish(),
    }
}

impl ServeConfig for EchoConfig {
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

/// One row on one server (`None`: the floor), on a thread of its own,
/// abandoned if it does not answer in time.
fn measure(
    server: Option<RuntimeKind>,
    row: Row,
    rate: Option<f64>,
    config: &EchoConfig,
    watch: &mut Watch,
) -> Result<Outcome, String> {
    let (mut plan, workers) = (config.plan(row, rate), config.setup.workers);
    let load = move |address, probe| {
        plan.options.probe = probe;
        generator::run(address, &plan)
    };
    let pair = move |sender: &mpsc::Sender<Report>| match server {
        Some(RuntimeKind::Weft) => serve_and_load(|| Server::<Weft>::start(workers), load, sender),
        Some(RuntimeKind::Tokio) => {
            serve_and_load(|| Server::<Tokio>::start(workers), load, sender)
        }
        Some(RuntimeKind::Smol) => serve_and_load(|| Server::<Smol>::start(workers), load, sender),
        None => serve_and_load(|| Floor::start::<floor::Echo>(workers), load, sender),
    };
    measure_pair(
        "echo",
        server_name(server),
        row.name(),
        config.timing.timeout(),
        &mut watch.warnings,
        pair,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_profile_and_suite_has_its_window() {
        let ms = Duration::from_millis;
        let t = timing(Profile::Quick);
        let quick = (t.warmup, t.measure, t.drain_timeout, t.stall_timeout);
        assert_eq!(quick, (ms(500), ms(1_500), ms(5_000), ms(5_000)));
        let t = timing(Profile::Full);
        assert_eq!((t.warmup, t.measure), (ms(1_000), ms(6_000)));
        let t = crate::suites::http::timing(Profile::Full);
        assert_eq!((t.warmup, t.measure), (ms(1_000), ms(10_000)));
    }

    #[test]
    fn shapes_follow_the_issue() {
        let shapes: Vec<(usize, usize)> = Row::ALL.iter().map(|r| r.shape()).collect();
        assert_eq!(shapes, [(1, 64), (64, 64), (64, 4096)]);
    }
}
