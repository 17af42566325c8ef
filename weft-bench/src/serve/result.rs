//! What a row of servers measured (the echo suite's rows, the HTTP
//! suite's one): each server's figures over the window ([`Figures`], with
//! the server's own cost, [`ServerCost`]), the row on every runtime
//! ([`ServedRow`], and its [`Paced`] runs), weft's ratios to the best peer
//! and the targets a suite holds its rows to ([`RowTargets`]); and the
//! figures a suite gates ([`REQ_PER_S`], [`P99`]) or holds to a target on
//! the server's cost ([`SERVER_CPU`], [`SYSCALLS`], [`WAKES`],
//! [`SWITCHES`]).
//!
//! Invariant: every figure is computed once, here, from the generator's
//! [`Outcome`]; the tables and `compare` only read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cost::{Counts, KINDS};
use super::load::Outcome;
use crate::common::figure::skew::{self, Window};
use crate::common::figure::target::{Check, Target, check_all};
use crate::common::figure::{self, Figure, Format, Peer, PeerRatio, Run};
use crate::common::latency::Percentiles;

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

/// One row on every runtime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServedRow {
    /// `conn1_64b`, `conn64_64b` or `conn64_4k`.
    pub name: String,
    /// Connections of the closed loop.
    pub connections: usize,
    /// Bytes of every message.
    pub message_bytes: usize,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, ServedRun>,
    /// weft against the best peer; absent when weft or every peer failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratios: Option<Ratios>,
    /// weft's targets on the server's cost at the suite's load (the rows
    /// that have them: echo's `conn64_64b`, the HTTP row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Check>,
    /// The same row at a fixed rate below saturation, so the servers are
    /// compared doing equal work; absent on other rows and without tokio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<Paced>,
}

/// A row run again at a fixed rate: [`super::PACED_SHARE`] of tokio's
/// req/s at the suite's load in the same run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Paced {
    /// The row's name with `_paced` (`conn64_64b_paced`).
    pub name: String,
    /// The rate every runtime was sent, requests per second.
    pub rate_per_s: f64,
    /// Keyed by runtime name, as the row's.
    pub runtimes: BTreeMap<String, ServedRun>,
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
        runtimes: BTreeMap<String, ServedRun>,
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
/// the server's threads only ([`crate::serve::cost`]) over the requests that
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
    /// Those by kind ([`crate::serve::cost::KINDS`]: read/recv, write/writev/send,
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

figure::impl_row!(ServedRow, ServedRun);
figure::impl_row!(Paced, ServedRun);

/// One row on one runtime.
pub type ServedRun = Run<Figures>;

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

impl ServedRun {
    /// The figures of a completed run.
    pub fn from_outcome(outcome: &Outcome) -> ServedRun {
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
    /// Whether `req_per_s_vs_best` meets the suite's target (at least).
    pub req_per_s_met: Option<bool>,
    /// Whether `p99_vs_best` meets the suite's target (at most).
    pub p99_met: Option<bool>,
}

impl Ratios {
    /// weft's ratios to the best peer in `runtimes`, and whether they meet
    /// `req_per_s_target` (at least) and `p99_target` (at most); `None`
    /// when weft or every peer failed. The HTTP suite's targets differ.
    pub fn of(
        runtimes: &BTreeMap<String, ServedRun>,
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

/// What a suite holds a row to: weft's ratios' targets, and those on the
/// server's cost (none on a row without them).
pub struct RowTargets {
    /// weft's req/s over the best peer's, at least.
    pub req_per_s: f64,
    /// weft's p99 over the best peer's, at most.
    pub p99: f64,
    /// On the server's cost, at the suite's load and paced.
    pub cost: &'static [Target<Figures>],
}

impl ServedRow {
    /// A row's result from every runtime's run (and its paced runs), with
    /// weft's ratios and targets: `name` with `connections` of
    /// `message_bytes`, held to `targets`.
    pub fn of(
        (name, connections, message_bytes): (&str, usize, usize),
        runtimes: BTreeMap<String, ServedRun>,
        paced: Option<Paced>,
        targets: &RowTargets,
    ) -> ServedRow {
        ServedRow {
            name: name.to_owned(),
            connections,
            message_bytes,
            ratios: Ratios::of(&runtimes, targets.req_per_s, targets.p99),
            targets: check_all(targets.cost, &runtimes),
            paced,
            runtimes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Readings;
    use crate::common::latency::Recorder;
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
        let run = ServedRun::from_outcome(&outcome(30_000, 80));
        let f = run.ok().unwrap();
        assert_eq!(f.req_per_s, 20_000.0);
        assert_eq!(f.window.cpu_ms_per_s, 1_600.0);
        assert_eq!(f.cpu_us_per_req, Some(80.0));
        assert!((f.p99_ms().unwrap() - 0.080).abs() < 1e-3);
        assert!(ServedRun::failed("x".to_owned()).ok().is_none());
    }
}
