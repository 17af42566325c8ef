//! What the echo lane measured: the `echo` field of the `--json` document
//! (absent from documents written before the lane existed, so older
//! baselines still parse), the lane's figures, weft's ratios to the best
//! peer and its targets.
//!
//! Invariant: every figure is computed once, here, from the generator's
//! [`Outcome`]; the table and `compare` only read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cost::{Counts, KINDS};
use super::generator::Outcome;
use super::{EchoConfig, Row};
use crate::common::figure::lane::{Lane, LaneResult, LaneSettings, RowKind, WindowSettings};
use crate::common::figure::skew::{self, Window};
use crate::common::figure::target::{Check, Target, check_all};
use crate::common::figure::{self, Figure, Format, Peer, PeerRatio, Run};
use crate::suites::mixed::latency::Percentiles;

/// weft's throughput over the best peer's must be at least this (issue
/// #16's target).
pub const REQ_PER_S_TARGET: f64 = 1.0;

/// weft's p99 over the best peer's must be at most this.
pub const P99_TARGET: f64 = 1.1;

/// Round trips finished per second, over the highest peer's.
pub const REQ_PER_S: Figure<Figures> =
    Figure::higher("req_per_s", "req/s", |f: &Figures| Some(f.req_per_s))
        .with_format(Format::Whole);

/// The round trips' p99, over the lowest peer p99.
pub const P99: Figure<Figures> =
    Figure::lower("p99_ms", "ms", Figures::p99_ms).with_format(Format::Micros);

/// The server threads' CPU per request (perf), over tokio's.
pub const SERVER_CPU: Figure<Figures> =
    Figure::lower("server_cpu_us_per_req", "µs", |f: &Figures| {
        Some(f.server.as_ref()?.cpu_us_per_req)
    })
    .with_peer(Peer::Tokio);

/// The server threads' system calls per request.
pub const SYSCALLS: Figure<Figures> = Figure::lower("syscalls_per_req", "", |f: &Figures| {
    Some(f.server.as_ref()?.syscalls_per_req)
});

/// Their futex, eventfd and sched_yield calls per request.
pub const WAKES: Figure<Figures> = Figure::lower("wakes_per_req", "", |f: &Figures| {
    Some(f.server.as_ref()?.wakes_per_req)
});

/// Their context switches per request.
pub const SWITCHES: Figure<Figures> =
    Figure::lower("context_switches_per_req", "", |f: &Figures| {
        Some(f.server.as_ref()?.context_switches_per_req)
    });

/// The echo lane's targets on the server's cost (issue #38), on
/// `conn64_64b` at the lane's load and at the paced rate.
pub const COST_TARGETS: [Target<Figures>; 1] = [Target::ratio(
    "echo server CPU/req ≤ 0.9× tokio's",
    SERVER_CPU,
    0.9,
)];

/// The row that also runs paced and is held to [`COST_TARGETS`].
pub const COST_ROW: Row = Row::Conn64Bytes64;

/// The figures `compare` gates, with their floors: the change, in the
/// figure's unit, below which it is noise however large relatively.
///
/// | figure | better | ratio to | floor |
/// |---|---|---|---|
/// | `req_per_s` | higher | the highest peer req/s | 5,000 req/s at 1 connection, 30,000 at 64 |
/// | `p99_ms` | lower | the lowest peer p99 | 0.05 ms at 1 connection, 2 ms at 64 |
///
/// The floors come from six quiet quick runs of one build on the 2-core
/// dev machine (2026-11-24, `others` ≤ 4% in every window but two, left
/// out): weft's req/s was 15.8-20.7k at 1 connection and 157-224k at 64
/// (the VM ran about 20% slower in two of the runs, for every runtime
/// alike), its ratio to the best peer 0.99-1.12 and 1.07-1.42; its p99
/// 74-92 µs at 1 connection and 0.50-2.41 ms at 64, where the tail is
/// made of the load generator's preemptions (p99.9 is ~4 ms for weft and
/// tokio alike: three busy threads on two cores) and moves by whole
/// milliseconds between runs. Each floor is above the widest swing seen;
/// throughput is held mostly by the tolerance (50% by default), above the
/// floors at every row.
pub const FIGURES: [Figure<Figures>; 2] = [
    REQ_PER_S.with_floors(|row| {
        if row == "conn1_64b" {
            5_000.0
        } else {
            30_000.0
        }
    }),
    P99.with_floors(|row| if row == "conn1_64b" { 0.05 } else { 2.0 }),
];

/// The echo lane in `compare`.
pub const LANE: Lane<Figures> = Lane::new("echo", "row", &FIGURES);

/// One run of the echo lane. In JSON:
///
/// ```jsonc
/// "echo": {                                      // absent when the lane did not run
///   "settings": { "profile": "quick", "workers": 2, "runtimes": ["weft", "tokio", "smol"],
///                 "warmup_ms": 500.0, "measure_ms": 1500.0, "drain_timeout_ms": 5000.0,
///                 "server_buffer_bytes": 8192 },
///   "rows": [{
///     "name": "conn64_64b",                      // conn1_64b | conn64_64b | conn64_4k
///     "connections": 64, "message_bytes": 64,
///     "runtimes": {
///       "weft": { "status": "ok",                // failed: "status": "failed", "error": "…", "figures": null
///         "figures": {
///           "window_s": 1.5, "req_per_s": 227472.0,
///           "latency": { "count": 341208, "p50_ms": 0.275, "p90_ms": 0.3, "p99_ms": 0.432,
///                        "p999_ms": 2.741, "max_ms": 8.215, "mean_ms": 0.281 },   // round trips; null if none
///           "cpu_ms_per_s": 1988.0,              // the process's CPU over the window
///           "cpu_us_per_req": 8.7,               // that CPU per round trip finished in it (absent in older documents)
///           "generator_cpu_ms_per_s": 985.0,     // the load generator thread's part of it
///           "unfinished": 0,                     // round trips of the window still out after the drain
///           "others_cpu_pct": 0.2,               // other processes' share of the machine meanwhile
///           "server": { … } } },                 // the server's own cost per request: ServerCost
///                                                // (absent if not counted: "server_error": "perf not available: …")
///       "tokio": { … }, "smol": { … }
///     },
///     "ratios": {                                // weft's; absent when weft or every peer failed
///       "req_per_s_vs_best": { "peer": "tokio", "value": 1.20 },   // over the highest peer req/s
///       "p99_vs_best": { "peer": "tokio", "value": 0.52 },         // over the lowest peer p99
///       "req_per_s_met": true, "p99_met": true   // targets: ≥ 1.0 and ≤ 1.1; reported, never gating
///     },
///     "targets": [{ "runtime": "weft", "target": "echo server CPU/req ≤ 0.9× tokio's",   // conn64_64b only:
///                   "figure": "server_cpu_us_per_req_vs_tokio", "limit": 0.9,          // COST_TARGETS, a Check each
///                   "value": 1.12, "met": false }],
///     "paced": { "name": "conn64_64b_paced", "rate_per_s": 58179.0,   // conn64_64b only: Paced, at 60% of
///                "runtimes": { … }, "targets": [ … ] }                // tokio's req/s above, as the row's
///   }, …],
///   "others_cpu_pct": 0.4, "warnings": ["…"]    // as in timers
/// }
/// ```
pub type EchoResult = LaneResult<EchoSettings, RowResult>;

/// How the echo lane was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoSettings {
    /// Profile, workers, runtimes.
    #[serde(flatten)]
    pub lane: LaneSettings,
    /// Warm-up, window, drain.
    #[serde(flatten)]
    pub window: WindowSettings,
    /// The most a server's connection task reads at once, bytes.
    pub server_buffer_bytes: usize,
}

impl EchoSettings {
    /// The settings of `config`.
    pub fn new(config: &EchoConfig) -> EchoSettings {
        EchoSettings {
            lane: super::Lane::settings(config),
            window: config.timing.window(),
            server_buffer_bytes: super::server::BUFFER_BYTES,
        }
    }
}

/// One row on every runtime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RowResult {
    /// `conn1_64b`, `conn64_64b` or `conn64_4k`.
    pub name: String,
    /// Connections of the closed loop.
    pub connections: usize,
    /// Bytes of every message.
    pub message_bytes: usize,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, EchoRun>,
    /// weft against the best peer; absent when weft or every peer failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratios: Option<Ratios>,
    /// weft's targets on the server's cost at the lane's load (the rows
    /// that have them: echo's `conn64_64b`, the HTTP row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Check>,
    /// The same row at a fixed rate below saturation, so the servers are
    /// compared doing equal work; absent on other rows and without tokio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<Paced>,
}

/// A row run again at a fixed rate: [`super::PACED_SHARE`] of tokio's
/// req/s at the lane's load in the same run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Paced {
    /// The row's name with `_paced` (`conn64_64b_paced`).
    pub name: String,
    /// The rate every runtime was sent, requests per second.
    pub rate_per_s: f64,
    /// Keyed by runtime name, as the row's.
    pub runtimes: BTreeMap<String, EchoRun>,
    /// weft's targets on the server's cost at this rate.
    #[serde(default)]
    pub targets: Vec<Check>,
}

impl Paced {
    /// The paced runs of row `row` at `rate_per_s`, checked against
    /// `targets`.
    pub fn new(
        row: &str,
        rate_per_s: f64,
        runtimes: BTreeMap<String, EchoRun>,
        targets: &[Target<Figures>],
    ) -> Paced {
        Paced {
            name: format!("{row}_paced"),
            rate_per_s,
            targets: check_all(targets, &runtimes),
            runtimes,
        }
    }
}

/// The server's own cost per request over the window: perf's counts on
/// the server's threads only ([`super::cost`]) over the requests that
/// finished in it. In JSON:
///
/// ```jsonc
/// "server": { "cpu_us_per_req": 7.9, "syscalls_per_req": 2.2,
///             "syscalls_by_kind": { "read": 1.0, "write": 1.0, "epoll_wait": 0.15,
///                                   "futex": 0.02, "eventfd": 0.01, "sched_yield": 0.0,
///                                   "other": 0.02 },
///             "wakes_per_req": 0.03, "context_switches_per_req": 0.04 }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerCost {
    /// The server threads' CPU (task clock) per request, µs.
    pub cpu_us_per_req: f64,
    /// Their system calls per request.
    pub syscalls_per_req: f64,
    /// Those by kind ([`super::cost::KINDS`]: read/recv, write/writev/send,
    /// epoll_wait, futex, eventfd (a read or write on one), sched_yield,
    /// other), per request.
    pub syscalls_by_kind: BTreeMap<String, f64>,
    /// futex + eventfd + sched_yield per request: the runtime's own
    /// wake-ups, zero at the kernel's floor.
    pub wakes_per_req: f64,
    /// Their context switches per request.
    pub context_switches_per_req: f64,
}

impl ServerCost {
    /// `counts` over `requests`; `None` without requests.
    pub fn of(counts: &Counts, requests: u64) -> Option<ServerCost> {
        let n = (requests > 0).then_some(requests as f64)?;
        let per = |count: u64| count as f64 / n;
        let kind = |name: &str| {
            KINDS
                .iter()
                .position(|k| *k == name)
                .map_or(0, |i| counts.kinds[i])
        };
        Some(ServerCost {
            cpu_us_per_req: counts.task_clock.as_secs_f64() * 1e6 / n,
            syscalls_per_req: per(counts.syscalls),
            syscalls_by_kind: KINDS
                .iter()
                .zip(counts.kinds)
                .map(|(name, count)| ((*name).to_owned(), per(count)))
                .collect(),
            wakes_per_req: per(kind("futex") + kind("eventfd") + kind("sched_yield")),
            context_switches_per_req: per(counts.context_switches),
        })
    }
}

figure::impl_row!(RowResult, EchoRun);
figure::impl_row!(Paced, EchoRun);

/// One row on one runtime.
pub type EchoRun = Run<Figures>;

/// The figures of one row on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The window: its length, the process's CPU, round trips unfinished,
    /// the others' share.
    #[serde(flatten)]
    pub window: Window,
    /// Round trips finished per second of the window.
    pub req_per_s: f64,
    /// Round-trip latencies of the window; `None` if none finished.
    pub latency: Option<Percentiles>,
    /// The process's CPU over the window per round trip finished in it, µs
    /// (absent when none finished, and from documents written before it
    /// existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_req: Option<f64>,
    /// The load generator's thread's share of it, ms per s: near 1,000 the
    /// generator, not the server, bounds the throughput.
    pub generator_cpu_ms_per_s: f64,
    /// The server's own cost per request ([`ServerCost`]); absent when it
    /// was not counted (then `server_error` says why) and in older
    /// documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCost>,
    /// Why `server` is absent: `perf not available: …`, perf's failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_error: Option<String>,
}

impl Figures {
    /// The round trips' p99, ms.
    pub fn p99_ms(&self) -> Option<f64> {
        self.latency.as_ref().map(|p| p.p99_ms)
    }
}

skew::impl_windowed!(Figures);

impl EchoRun {
    /// The figures of a completed run.
    pub fn from_outcome(outcome: &Outcome) -> EchoRun {
        let o = outcome;
        let window = o.readings.window();
        let cpu_window_s = o.readings.cpu_window.as_secs_f64().max(1e-9);
        Run::completed(Figures {
            req_per_s: window.per_s(o.finished),
            latency: o.latency.summary(),
            cpu_us_per_req: (o.finished > 0)
                .then(|| o.readings.cpu.as_secs_f64() * 1e6 / o.finished as f64),
            generator_cpu_ms_per_s: o.generator_cpu.as_secs_f64() * 1e3 / cpu_window_s,
            server: match &o.server {
                Some(Ok(counts)) => ServerCost::of(counts, o.finished),
                _ => None,
            },
            server_error: o.server.clone().and_then(Result::err),
            window,
        })
    }
}

/// weft against the peers on one row, and its targets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// weft's req/s ÷ the highest peer req/s (above 1: weft is better).
    pub req_per_s_vs_best: Option<PeerRatio>,
    /// weft's p99 ÷ the lowest peer p99 (below 1: weft is better).
    pub p99_vs_best: Option<PeerRatio>,
    /// Whether `req_per_s_vs_best` ≥ [`REQ_PER_S_TARGET`].
    pub req_per_s_met: Option<bool>,
    /// Whether `p99_vs_best` ≤ [`P99_TARGET`].
    pub p99_met: Option<bool>,
}

impl Ratios {
    /// weft's ratios to the best peer in `runtimes`, and whether they meet
    /// `req_per_s_target` (at least) and `p99_target` (at most); `None`
    /// when weft or every peer failed. The HTTP lane's targets differ.
    pub fn of(
        runtimes: &BTreeMap<String, EchoRun>,
        req_per_s_target: f64,
        p99_target: f64,
    ) -> Option<Ratios> {
        let req = REQ_PER_S.weft_ratio(runtimes);
        let p99 = P99.weft_ratio(runtimes);
        let met = |figure: &Figure<Figures>, ratio: &Option<PeerRatio>, target| {
            ratio.as_ref().map(|r| figure.better.meets(r.value, target))
        };
        (req.is_some() || p99.is_some()).then(|| Ratios {
            req_per_s_met: met(&REQ_PER_S, &req, req_per_s_target),
            p99_met: met(&P99, &p99, p99_target),
            req_per_s_vs_best: req,
            p99_vs_best: p99,
        })
    }
}

/// What a lane holds a row to: weft's ratios' targets, and those on the
/// server's cost (none on a row without them).
pub struct RowTargets {
    /// weft's req/s over the best peer's, at least.
    pub req_per_s: f64,
    /// weft's p99 over the best peer's, at most.
    pub p99: f64,
    /// On the server's cost, at the lane's load and paced.
    pub cost: &'static [Target<Figures>],
}

impl RowResult {
    /// A row's result from every runtime's run (and its paced runs), with
    /// weft's ratios and targets: `name` with `connections` of
    /// `message_bytes`, held to `targets`.
    pub fn of(
        (name, connections, message_bytes): (&str, usize, usize),
        runtimes: BTreeMap<String, EchoRun>,
        paced: Option<Paced>,
        targets: &RowTargets,
    ) -> RowResult {
        RowResult {
            name: name.to_owned(),
            connections,
            message_bytes,
            ratios: Ratios::of(&runtimes, targets.req_per_s, targets.p99),
            targets: check_all(targets.cost, &runtimes),
            paced,
            runtimes,
        }
    }

    /// An echo row's result, with the echo lane's targets.
    pub fn new(row: Row, runtimes: BTreeMap<String, EchoRun>, paced: Option<Paced>) -> RowResult {
        let (connections, message_bytes) = row.shape();
        let targets = RowTargets {
            req_per_s: REQ_PER_S_TARGET,
            p99: P99_TARGET,
            cost: if row == COST_ROW { &COST_TARGETS } else { &[] },
        };
        RowResult::of(
            (row.name(), connections, message_bytes),
            runtimes,
            paced,
            &targets,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Readings;
    use crate::suites::mixed::latency::Recorder;
    use std::time::Duration;

    fn outcome(finished: u64, latency_us: u64) -> Outcome {
        let latency = Recorder::hundred(Duration::from_micros(latency_us));
        Outcome {
            latency,
            finished,
            readings: Readings::steady(Duration::from_millis(1_500), Duration::from_millis(2_400)),
            ..Outcome::default()
        }
    }

    #[test]
    fn figures_are_per_second_of_the_window() {
        let run = EchoRun::from_outcome(&outcome(30_000, 80));
        let f = run.ok().unwrap();
        assert_eq!(f.req_per_s, 20_000.0);
        assert_eq!(f.window.cpu_ms_per_s, 1_600.0);
        assert_eq!(f.cpu_us_per_req, Some(80.0));
        assert!((f.p99_ms().unwrap() - 0.080).abs() < 1e-3);
        assert!(EchoRun::failed("x".to_owned()).ok().is_none());
    }

    #[test]
    fn each_ratio_is_to_the_best_peer_on_that_figure() {
        let runs: BTreeMap<String, EchoRun> = [
            ("weft", outcome(33_000, 105)),
            ("tokio", outcome(30_000, 120)),
            ("smol", outcome(27_000, 100)),
        ]
        .into_iter()
        .map(|(name, o)| (name.to_owned(), EchoRun::from_outcome(&o)))
        .collect();
        let row = RowResult::new(Row::Conn64Bytes64, runs, None);
        assert_eq!((row.connections, row.message_bytes), (64, 64));
        let ratios = row.ratios.unwrap();
        let req = ratios.req_per_s_vs_best.unwrap();
        assert_eq!(req.peer, "tokio");
        assert!((req.value - 1.1).abs() < 1e-9, "{req:?}");
        let p99 = ratios.p99_vs_best.unwrap();
        assert_eq!(p99.peer, "smol");
        assert!((p99.value - 1.05).abs() < 0.01, "{p99:?}");
        assert_eq!(ratios.req_per_s_met, Some(true));
        assert_eq!(ratios.p99_met, Some(true));
    }

    #[test]
    fn no_ratios_without_weft() {
        let runs: BTreeMap<String, EchoRun> = [
            ("weft", EchoRun::failed("no net".to_owned())),
            ("tokio", EchoRun::from_outcome(&outcome(30_000, 120))),
        ]
        .into_iter()
        .map(|(name, run)| (name.to_owned(), run))
        .collect();
        assert!(
            RowResult::new(Row::Conn1Bytes64, runs, None)
                .ratios
                .is_none()
        );
    }

    #[test]
    fn the_floors_follow_the_connections() {
        let floors = |row: &str| FIGURES.map(|f| f.floor.at(row));
        assert_eq!(floors("conn1_64b"), [5_000.0, 0.05]);
        assert_eq!(floors("conn64_4k"), [30_000.0, 2.0]);
    }
}
