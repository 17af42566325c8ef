//! What the mixed lane measured: the `mixed` field of the `--json`
//! document (absent from documents written before the lane existed, so
//! older baselines still parse), each weft variant's ratios to the peers
//! and its targets.
//!
//! Invariant: every figure is computed once, here, from the generator's
//! [`Outcome`]; the table, the chart and `compare` only read them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::burn::Calibration;
use super::generator::Outcome;
use super::latency::Percentiles;
use super::targets::{Check, Rule};
use super::{Load, MixedConfig, Variant};
use crate::json::Status;
use crate::runtimes::RuntimeKind;

/// One run of the mixed lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixedResult {
    /// How it was measured.
    pub settings: MixedSettings,
    /// The work loop's calibration, and how it held up.
    pub calibration: Calibration,
    /// One entry per load, in the order measured.
    pub loads: Vec<LoadResult>,
    /// Percent of the machine other processes used during the lane, where
    /// `/proc` tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Anything that may have skewed the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How the mixed lane was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixedSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// The runtimes, in the order each load ran them.
    pub runtimes: Vec<String>,
    /// CPU a short request burns, µs.
    pub short_cpu_us: f64,
    /// CPU a long request burns, ms.
    pub long_cpu_ms: f64,
    /// Warm-up excluded from the figures, ms.
    pub warmup_ms: f64,
    /// The measured window, ms.
    pub measure_ms: f64,
    /// Longest wait for the window's requests after it, ms.
    pub drain_timeout_ms: f64,
    /// The open loop's schedule seed.
    pub open_seed: u64,
    /// How long the generator spins before an open-loop arrival, µs.
    pub spin_us: f64,
}

impl MixedSettings {
    /// The settings of `config`.
    pub fn new(config: &MixedConfig, seed: u64, spin: Duration) -> MixedSettings {
        let t = &config.timing;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        MixedSettings {
            profile: config.profile.name().to_owned(),
            workers: config.workers,
            runtimes: config
                .variants
                .iter()
                .map(|v| v.name())
                .chain(config.oracle.then_some(ORACLE))
                .map(str::to_owned)
                .collect(),
            short_cpu_us: ms(t.short_cpu) * 1e3,
            long_cpu_ms: ms(t.long_cpu),
            warmup_ms: ms(t.warmup),
            measure_ms: ms(t.measure),
            drain_timeout_ms: ms(t.drain_timeout),
            open_seed: seed,
            spin_us: ms(spin) * 1e3,
        }
    }
}

/// One load on every runtime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadResult {
    /// `closed_32_2`, `closed_128_8` or `open_2000`.
    pub name: String,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, MixedRun>,
    /// Each weft variant against the peers, keyed by its name.
    pub ratios: BTreeMap<String, Ratios>,
    /// Each weft variant's targets.
    pub targets: Vec<Check>,
}

/// One load on one runtime.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MixedRun {
    /// Whether it completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it measured; present when `status` is `ok`.
    pub figures: Option<Figures>,
}

/// The figures of one load on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The measured window, s.
    pub window_s: f64,
    /// Short requests finished per second of the window.
    pub short_per_s: f64,
    /// Long requests finished per second of the window.
    pub long_per_s: f64,
    /// Latencies of the short requests due in the window; `None` if none.
    pub short: Option<Percentiles>,
    /// Latencies of the long requests due in the window; `None` if none.
    pub long: Option<Percentiles>,
    /// The process's CPU over the window, ms per s of wall time.
    pub cpu_ms_per_s: f64,
    /// Open loop: p99 of how late the generator submitted an arrival, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_lag_p99_ms: Option<f64>,
    /// Open loop: the short requests' latencies from their submission
    /// (without the generator's lateness: the runtime's own part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_from_submit: Option<Percentiles>,
    /// Requests of the window unfinished after the drain (their latency
    /// so far is in the percentiles).
    pub unfinished: u64,
    /// Percent of the machine other processes used during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// weft's stall-monitor counters over the whole run (warm-up and drain
    /// included): stalls, handoffs, spares started and woken, threads
    /// demoted, step-asides, task demotions. Absent for the peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<BTreeMap<String, u64>>,
}

impl MixedRun {
    /// The figures of a completed run.
    pub fn from_outcome(outcome: &Outcome) -> MixedRun {
        let window_s = outcome.window.as_secs_f64().max(1e-9);
        let cpu_window_s = outcome.cpu_window.as_secs_f64().max(1e-9);
        MixedRun {
            figures: Some(Figures {
                window_s,
                short_per_s: outcome.short_finished as f64 / window_s,
                long_per_s: outcome.long_finished as f64 / window_s,
                short: outcome.short.summary(),
                long: outcome.long.summary(),
                cpu_ms_per_s: outcome.cpu.as_secs_f64() * 1e3 / cpu_window_s,
                submit_lag_p99_ms: outcome
                    .submit_lag
                    .as_ref()
                    .and_then(|lag| lag.summary())
                    .map(|p| p.p99_ms),
                short_from_submit: outcome
                    .short_from_submit
                    .as_ref()
                    .and_then(|from_submit| from_submit.summary()),
                unfinished: outcome.unfinished,
                others_cpu_pct: outcome.others_cpu_pct,
                monitor: outcome.monitor.as_ref().map(|counters| {
                    counters
                        .iter()
                        .map(|&(name, value)| (name.to_owned(), value))
                        .collect()
                }),
            }),
            ..MixedRun::default()
        }
    }

    /// A run that failed.
    pub fn failed(error: String) -> MixedRun {
        MixedRun {
            status: Status::Failed,
            error: Some(error),
            figures: None,
        }
    }

    /// The figures, if the run completed.
    pub fn ok(&self) -> Option<&Figures> {
        self.figures.as_ref().filter(|_| self.status == Status::Ok)
    }

    /// Requests left unfinished (0 for a failed run).
    pub fn unfinished(&self) -> u64 {
        self.ok().map_or(0, |f| f.unfinished)
    }
}

/// One weft variant against the peers on one load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// Its short p99 ÷ the lowest peer short p99 (below 1: weft is better).
    pub short_p99_vs_best: Option<PeerRatio>,
    /// Its long throughput ÷ tokio's (above 1: weft is better).
    pub long_per_s_vs_tokio: Option<f64>,
    /// Its CPU per second ÷ tokio's (below 1: weft used less).
    pub cpu_vs_tokio: Option<f64>,
}

/// A ratio to a named peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerRatio {
    /// The peer.
    pub peer: String,
    /// The ratio.
    pub value: f64,
}

/// The oracle's name in the runs (`super::oracle`): neither weft nor a peer.
pub const ORACLE: &str = "oracle";

/// Whether `name` is one of weft's variants.
pub fn is_weft(name: &str) -> bool {
    Variant::ALL
        .iter()
        .any(|v| v.name() == name && v.kind() == RuntimeKind::Weft)
}

/// Whether `name` is one of weft's peers: neither weft nor the oracle.
pub fn is_peer(name: &str) -> bool {
    !is_weft(name) && name != ORACLE
}

impl LoadResult {
    /// A load's result from every runtime's run, with the weft variants'
    /// ratios and targets.
    pub fn new(load: Load, runtimes: BTreeMap<String, MixedRun>) -> LoadResult {
        let tokio = runtimes
            .get(RuntimeKind::Tokio.name())
            .and_then(MixedRun::ok);
        let mut ratios = BTreeMap::new();
        let mut targets = Vec::new();
        // In the lane's order, so the targets list weft before its variants.
        for variant in Variant::ALL
            .iter()
            .filter(|v| v.kind() == RuntimeKind::Weft)
        {
            let Some(run) = runtimes.get(variant.name()) else {
                continue;
            };
            let own = run.ok();
            if let Some(own) = own {
                ratios.insert(
                    variant.name().to_owned(),
                    Ratios {
                        short_p99_vs_best: short_p99_vs_best(own, &runtimes, |_| true),
                        long_per_s_vs_tokio: tokio
                            .and_then(|t| ratio(own.long_per_s, t.long_per_s)),
                        cpu_vs_tokio: tokio.and_then(|t| ratio(own.cpu_ms_per_s, t.cpu_ms_per_s)),
                    },
                );
            }
            for rule in Rule::of(load) {
                targets.push(rule.check(variant.name(), own, tokio));
            }
        }
        LoadResult {
            name: load.name().to_owned(),
            runtimes,
            ratios,
            targets,
        }
    }

    /// weft's (default) figures, if it completed the load.
    pub fn weft(&self) -> Option<&Figures> {
        self.runtimes.get(Variant::Weft.name())?.ok()
    }
}

/// `a ÷ b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// `own`'s short p99 over the lowest of the peers that completed the load
/// and pass `include_peer`.
pub fn short_p99_vs_best(
    own: &Figures,
    runtimes: &BTreeMap<String, MixedRun>,
    include_peer: impl Fn(&str) -> bool,
) -> Option<PeerRatio> {
    let own_p99 = own.short.as_ref()?.p99_ms;
    let (peer, p99) = runtimes
        .iter()
        .filter(|(name, _)| is_peer(name) && include_peer(name))
        .filter_map(|(name, run)| Some((name, run.ok()?.short.as_ref()?.p99_ms)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(PeerRatio {
        peer: peer.clone(),
        value: ratio(own_p99, p99)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed::latency::Recorder;

    fn outcome(short_ms: u64, longs: u64, cpu_ms: u64) -> Outcome {
        let mut short = Recorder::new();
        for _ in 0..100 {
            short.record(Duration::from_millis(short_ms));
        }
        Outcome {
            short,
            short_finished: 300,
            long_finished: longs,
            window: Duration::from_millis(1_500),
            cpu: Duration::from_millis(cpu_ms),
            cpu_window: Duration::from_millis(1_500),
            ..Outcome::default()
        }
    }

    #[test]
    fn figures_are_per_second_of_the_window() {
        let run = MixedRun::from_outcome(&outcome(5, 30, 3_000));
        let f = run.ok().unwrap();
        assert_eq!((f.short_per_s, f.long_per_s), (200.0, 20.0));
        assert_eq!(f.cpu_ms_per_s, 2_000.0);
        assert!(f.long.is_none());
        assert!(MixedRun::failed("x".to_owned()).ok().is_none());
    }

    #[test]
    fn ratios_are_to_the_best_peer_and_to_tokio() {
        let runs: BTreeMap<String, MixedRun> = [
            ("weft", outcome(5, 30, 3_000)),
            ("weft-no-demote", outcome(20, 15, 3_000)),
            ("tokio", outcome(100, 30, 2_400)),
            ("smol", outcome(50, 20, 3_000)),
            // The oracle is faster than everybody, and neither a peer nor
            // weft: no ratio names it, none is computed for it.
            (ORACLE, outcome(1, 0, 3_000)),
        ]
        .into_iter()
        .map(|(name, o)| (name.to_owned(), MixedRun::from_outcome(&o)))
        .collect();
        let load = LoadResult::new(Load::Closed32x2, runs);
        let weft = &load.ratios["weft"];
        let best = weft.short_p99_vs_best.as_ref().unwrap();
        assert_eq!(best.peer, "smol");
        assert!((best.value - 0.1).abs() < 1e-3, "{best:?}");
        assert_eq!(weft.long_per_s_vs_tokio, Some(1.0));
        assert_eq!(weft.cpu_vs_tokio, Some(1.25));
        assert_eq!(load.ratios["weft-no-demote"].long_per_s_vs_tokio, Some(0.5));
        assert!(!load.ratios.contains_key(ORACLE));
        assert!(!is_peer(ORACLE) && !is_weft(ORACLE) && is_peer("tokio"));
        // Two targets each for the two weft variants that ran.
        let verdicts: Vec<(&str, &str)> = load
            .targets
            .iter()
            .map(|c| (c.runtime.as_str(), c.verdict()))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("weft", "met"),
                ("weft", "met"),
                ("weft-no-demote", "missed"),
                ("weft-no-demote", "missed")
            ]
        );
    }
}
