//! What the echo lane measured: the `echo` field of the `--json` document
//! (absent from documents written before the lane existed, so older
//! baselines still parse), weft's ratios to the best peer and its targets.
//!
//! Invariant: every figure is computed once, here, from the generator's
//! [`Outcome`]; the table and `compare` only read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::generator::Outcome;
use super::{EchoConfig, Row};
use crate::json::Status;
use crate::mixed::latency::Percentiles;
use crate::mixed::result::{PeerRatio, ratio};
use crate::runtimes::RuntimeKind;

/// weft's throughput over the best peer's must be at least this (issue
/// #16's target).
pub const REQ_PER_S_TARGET: f64 = 1.0;

/// weft's p99 over the best peer's must be at most this.
pub const P99_TARGET: f64 = 1.1;

/// One run of the echo lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoResult {
    /// How it was measured.
    pub settings: EchoSettings,
    /// One entry per row, in the order measured.
    pub rows: Vec<RowResult>,
    /// Percent of the machine other processes used during the lane, where
    /// `/proc` tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Anything that may have skewed the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How the echo lane was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// The runtimes, in the order each row ran them.
    pub runtimes: Vec<String>,
    /// Warm-up excluded from the figures, ms.
    pub warmup_ms: f64,
    /// The measured window, ms.
    pub measure_ms: f64,
    /// Longest wait for the window's round trips after it, ms.
    pub drain_timeout_ms: f64,
    /// The most a server's connection task reads at once, bytes.
    pub server_buffer_bytes: usize,
}

impl EchoSettings {
    /// The settings of `config`.
    pub fn new(config: &EchoConfig) -> EchoSettings {
        let t = &config.timing;
        EchoSettings {
            profile: config.profile.name().to_owned(),
            workers: config.workers,
            runtimes: config
                .runtimes
                .iter()
                .map(|r| r.name().to_owned())
                .collect(),
            warmup_ms: t.warmup.as_secs_f64() * 1e3,
            measure_ms: t.measure.as_secs_f64() * 1e3,
            drain_timeout_ms: t.drain_timeout.as_secs_f64() * 1e3,
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
}

/// One row on one runtime.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EchoRun {
    /// Whether it completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it measured; present when `status` is `ok`.
    pub figures: Option<Figures>,
}

/// The figures of one row on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The measured window, s.
    pub window_s: f64,
    /// Round trips finished per second of the window.
    pub req_per_s: f64,
    /// Round-trip latencies of the window; `None` if none finished.
    pub latency: Option<Percentiles>,
    /// The process's CPU over the window, ms per s of wall time.
    pub cpu_ms_per_s: f64,
    /// The process's CPU over the window per round trip finished in it, µs
    /// (absent when none finished, and from documents written before it
    /// existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_req: Option<f64>,
    /// The load generator's thread's share of it, ms per s: near 1,000 the
    /// generator, not the server, bounds the throughput.
    pub generator_cpu_ms_per_s: f64,
    /// Round trips of the window unfinished after the drain (their latency
    /// so far is in the percentiles).
    pub unfinished: u64,
    /// Percent of the machine other processes used during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
}

impl Figures {
    /// The round trips' p99, ms.
    pub fn p99_ms(&self) -> Option<f64> {
        self.latency.as_ref().map(|p| p.p99_ms)
    }
}

impl EchoRun {
    /// The figures of a completed run.
    pub fn from_outcome(outcome: &Outcome) -> EchoRun {
        let window_s = outcome.window.as_secs_f64().max(1e-9);
        let cpu_window_s = outcome.cpu_window.as_secs_f64().max(1e-9);
        EchoRun {
            figures: Some(Figures {
                window_s,
                req_per_s: outcome.finished as f64 / window_s,
                latency: outcome.latency.summary(),
                cpu_ms_per_s: outcome.cpu.as_secs_f64() * 1e3 / cpu_window_s,
                cpu_us_per_req: (outcome.finished > 0)
                    .then(|| outcome.cpu.as_secs_f64() * 1e6 / outcome.finished as f64),
                generator_cpu_ms_per_s: outcome.generator_cpu.as_secs_f64() * 1e3 / cpu_window_s,
                unfinished: outcome.unfinished,
                others_cpu_pct: outcome.others_cpu_pct,
            }),
            ..EchoRun::default()
        }
    }

    /// A run that failed.
    pub fn failed(error: String) -> EchoRun {
        EchoRun {
            status: Status::Failed,
            error: Some(error),
            figures: None,
        }
    }

    /// The figures, if the run completed.
    pub fn ok(&self) -> Option<&Figures> {
        self.figures.as_ref().filter(|_| self.status == Status::Ok)
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
        let req = vs_best_peer(runtimes, |f| Some(f.req_per_s), Better::Higher, |_| true);
        let p99 = vs_best_peer(runtimes, Figures::p99_ms, Better::Lower, |_| true);
        (req.is_some() || p99.is_some()).then(|| Ratios {
            req_per_s_met: req.as_ref().map(|r| r.value >= req_per_s_target),
            p99_met: p99.as_ref().map(|r| r.value <= p99_target),
            req_per_s_vs_best: req,
            p99_vs_best: p99,
        })
    }
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Lower is better (latency).
    Lower,
    /// Higher is better (throughput).
    Higher,
}

/// weft's `value` over the best of the peers that completed the row and
/// pass `include_peer` (the highest if higher is better, else the lowest).
pub fn vs_best_peer(
    runtimes: &BTreeMap<String, EchoRun>,
    value: impl Fn(&Figures) -> Option<f64>,
    better: Better,
    include_peer: impl Fn(&str) -> bool,
) -> Option<PeerRatio> {
    let own = value(runtimes.get(RuntimeKind::Weft.name())?.ok()?)?;
    let peers = runtimes
        .iter()
        .filter(|(name, _)| name.as_str() != RuntimeKind::Weft.name() && include_peer(name))
        .filter_map(|(name, run)| Some((name, value(run.ok()?)?)));
    let (peer, best) = match better {
        Better::Lower => peers.min_by(|a, b| a.1.total_cmp(&b.1)),
        Better::Higher => peers.max_by(|a, b| a.1.total_cmp(&b.1)),
    }?;
    Some(PeerRatio {
        peer: peer.clone(),
        value: ratio(own, best)?,
    })
}

impl RowResult {
    /// A row's result from every runtime's run, with weft's ratios.
    pub fn new(row: Row, runtimes: BTreeMap<String, EchoRun>) -> RowResult {
        let (connections, message_bytes) = row.shape();
        RowResult {
            name: row.name().to_owned(),
            connections,
            message_bytes,
            ratios: Ratios::of(&runtimes, REQ_PER_S_TARGET, P99_TARGET),
            runtimes,
        }
    }

    /// weft's figures, if it completed the row.
    pub fn weft(&self) -> Option<&Figures> {
        self.runtimes.get(RuntimeKind::Weft.name())?.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed::latency::Recorder;
    use std::time::Duration;

    fn outcome(finished: u64, latency_us: u64) -> Outcome {
        let mut latency = Recorder::new();
        for _ in 0..100 {
            latency.record(Duration::from_micros(latency_us));
        }
        Outcome {
            latency,
            finished,
            window: Duration::from_millis(1_500),
            cpu: Duration::from_millis(2_400),
            cpu_window: Duration::from_millis(1_500),
            ..Outcome::default()
        }
    }

    #[test]
    fn figures_are_per_second_of_the_window() {
        let run = EchoRun::from_outcome(&outcome(30_000, 80));
        let f = run.ok().unwrap();
        assert_eq!(f.req_per_s, 20_000.0);
        assert_eq!(f.cpu_ms_per_s, 1_600.0);
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
        let row = RowResult::new(Row::Conn64Bytes64, runs);
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
        assert!(RowResult::new(Row::Conn1Bytes64, runs).ratios.is_none());
    }
}
