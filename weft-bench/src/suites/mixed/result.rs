//! What the mixed suite measured: the `mixed` field of the `--json`
//! document (absent from documents written before the suite existed, so
//! older baselines still parse), the suite's figures, each weft variant's
//! ratios to the peers and its targets.
//!
//! Invariant: every figure is computed once, here, from the generator's
//! [`Outcome`]; the table, the chart and `compare` only read them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::burn::Calibration;
use super::generator::Outcome;
use super::targets::{Check, Rule};
use super::{Load, MixedConfig, Variant};
use crate::common::figure::rows::{Gated, RowKind};
use crate::common::figure::skew::{self, Skew, Window};
use crate::common::figure::{self, Figure, Peer, PeerRatio, Run};
use crate::common::latency::Percentiles;
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{SuiteSettings, WindowSettings};

/// The short requests' p99, over the lowest peer's.
pub const SHORT_P99: Figure<Figures> =
    Figure::lower("short_p99_ms", "ms", |f| Some(f.short.as_ref()?.p99_ms));

/// The long requests' throughput, over tokio's.
pub const LONG_PER_S: Figure<Figures> =
    Figure::higher("long_per_s", "req/s", |f: &Figures| Some(f.long_per_s)).with_peer(Peer::Tokio);

/// The process's CPU per second, over tokio's.
pub const CPU: Figure<Figures> = Figure::lower("cpu_ms_per_s", "ms/s", |f: &Figures| {
    Some(f.window.cpu_ms_per_s)
})
.with_peer(Peer::Tokio);

/// The figures `compare` gates, of weft (the default variant; the others
/// are diagnostic), with their floors:
///
/// | figure | better | ratio to | floor |
/// |---|---|---|---|
/// | `short_p99_ms` | lower | the best peer's short p99 | 25 ms at 32+2 and open, 80 ms at 128+8 |
/// | `long_per_s` | higher | tokio's long throughput | 8 req/s |
/// | `cpu_ms_per_s` | lower | tokio's CPU | 400 ms/s |
///
/// The floors come from quiet quick re-runs on the 2-core dev machine with
/// the stall monitor in (2026-11-23, six runs): weft's short p99 was
/// 12.8-17.3 ms at 32+2, 77-98 ms at 128+8 and 4.6-6.5 ms open loop, its
/// long throughput 17-23 req/s; each floor is above the widest swing seen.
/// (Before the monitor every runtime's p99 moved by whole 50 ms polls and
/// the floors were 400/250 ms.)
pub const FIGURES: [Figure<Figures>; 3] = [
    SHORT_P99.with_floors(|load| if load == "closed_128_8" { 80.0 } else { 25.0 }),
    LONG_PER_S.with_floor(8.0),
    CPU.with_floor(400.0),
];

/// The mixed suite in `compare`.
pub const GATED: Gated<Figures> = Gated::new("mixed", "load", &FIGURES);

/// One run of the mixed suite. In JSON:
///
/// ```jsonc
/// "mixed": {                                     // absent when the suite did not run
///   "settings": { "profile": "quick", "workers": 2,
///                 "runtimes": ["weft", "weft-no-stall-monitor", "weft-no-demote", "tokio", "smol", "oracle"],
///                 "short_cpu_us": 150.0, "long_cpu_ms": 50.0, "warmup_ms": 200.0,
///                 "measure_ms": 1500.0, "drain_timeout_ms": 10000.0,
///                 "open_seed": 2000, "spin_us": 20.0 },
///   "calibration": { "iterations_per_us": 681.9,          // work-loop turns per µs of thread CPU
///                    "end_iterations_per_us": 706.1,      // calibrated again after the last load
///                    "short_measured_us": 150.2, "long_measured_ms": 49.9 },
///   "loads": [{
///     "name": "closed_32_2",                     // closed_32_2 | closed_128_8 | open_2000
///     "runtimes": {
///       "weft": { "status": "ok",                // failed: "status": "failed", "error": "…", "figures": null
///         "figures": {
///           "window_s": 1.5, "short_per_s": 760.0, "long_per_s": 38.0,
///           "short": { "count": 1140, "p50_ms": 0.473, "p90_ms": 107.775, "p99_ms": 453.119,
///                      "p999_ms": 454.143, "max_ms": 454.143, "mean_ms": 40.81 },   // null if none
///           "long": { … },                       // the same for the long requests
///           "cpu_ms_per_s": 1964.2,              // the process's CPU over the window
///           "unfinished": 0,                     // requests of the window still running after the drain
///           "threads_started_per_s": 27.3,       // threads the runtime started per s of the window
///                                                //   (weft, tokio; absent for smol and the oracle)
///           "others_cpu_pct": 1.3 } },           // other processes' share of the machine meanwhile
///           // open_2000 also has "submit_lag_p99_ms": the generator's own lateness at p99
///           // weft's variants also have "monitor": { "stalls", "handoffs", "spares_started",
///           //   "spares_woken", "threads_demoted", "step_asides", "task_demotions" }: over the
///           //   whole run, warm-up and drain included (also at the end of the progress line)
///       "weft-no-stall-monitor": { … }, "weft-no-demote": { … }, "tokio": { … }, "smol": { … },
///       "oracle": { … }                          // absent with --no-oracle; in no ratio, no target
///     },
///     "ratios": {                                // per weft variant that completed the load
///       "weft": { "short_p99_vs_best": { "peer": "smol", "value": 8.15 },
///                 "long_per_s_vs_tokio": 1.04, "cpu_vs_tokio": 0.99 }, …
///     },
///     "targets": [                               // per weft variant: reported, never gating
///       { "runtime": "weft", "target": "short p99 ≤ 10 ms", "figure": "short_p99_ms",
///         "limit": 10.0, "value": 453.119, "met": false }, …
///     ]
///   }, …],
///   "others_cpu_pct": 0.4, "warnings": ["…"]    // as in timers
/// }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixedResult {
    /// How it was measured.
    pub settings: MixedSettings,
    /// The work loop's calibration, and how it held up.
    pub calibration: Calibration,
    /// One entry per load, in the order measured.
    pub loads: Vec<LoadResult>,
    /// What may have skewed the figures.
    #[serde(flatten)]
    pub skew: Skew,
}

/// How the mixed suite was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixedSettings {
    /// Profile, workers, runtimes in the order each load ran them.
    #[serde(flatten)]
    pub suite: SuiteSettings,
    /// CPU a short request burns, µs.
    pub short_cpu_us: f64,
    /// CPU a long request burns, ms.
    pub long_cpu_ms: f64,
    /// Warm-up, window, drain.
    #[serde(flatten)]
    pub window: WindowSettings,
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
        let setup = &config.setup;
        let runtimes = setup.runtimes.iter().map(|v| v.name());
        let runtimes = runtimes.chain(config.oracle.then_some(ORACLE));
        MixedSettings {
            suite: SuiteSettings::new(setup.profile, setup.workers, runtimes),
            short_cpu_us: ms(t.short_cpu) * 1e3,
            long_cpu_ms: ms(t.long_cpu),
            window: WindowSettings::new(t.warmup, t.measure, t.drain_timeout),
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

figure::impl_row!(LoadResult, MixedRun);

/// One load on one runtime.
pub type MixedRun = Run<Figures>;

/// The figures of one load on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The window: its length, the process's CPU, requests unfinished, the
    /// others' share.
    #[serde(flatten)]
    pub window: Window,
    /// Short requests finished per second of the window.
    pub short_per_s: f64,
    /// Long requests finished per second of the window.
    pub long_per_s: f64,
    /// Latencies of the short requests due in the window; `None` if none.
    pub short: Option<Percentiles>,
    /// Latencies of the long requests due in the window; `None` if none.
    pub long: Option<Percentiles>,
    /// Open loop: p99 of how late the generator submitted an arrival, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_lag_p99_ms: Option<f64>,
    /// Open loop: the short requests' latencies from their submission
    /// (without the generator's lateness: the runtime's own part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_from_submit: Option<Percentiles>,
    /// weft's stall-monitor counters over the whole run (warm-up and drain
    /// included): stalls, handoffs, spares started and woken, threads
    /// demoted, step-asides, task demotions. Absent for the peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<BTreeMap<String, u64>>,
    /// Threads the runtime started per second of the window (its thread
    /// churn): weft's `RuntimeMetrics::threads_started`, tokio's
    /// `on_thread_start` hook (workers and blocking threads). Absent for
    /// smol, which has no such hook (and whose threads in a
    /// `/proc/self/task` sampling could not be told from the suite's), and
    /// for the oracle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_started_per_s: Option<f64>,
}

skew::impl_windowed!(Figures);

impl MixedRun {
    /// The figures of a completed run.
    pub fn from_outcome(outcome: &Outcome) -> MixedRun {
        let o = outcome;
        let window = o.readings.window();
        Run::completed(Figures {
            short_per_s: window.per_s(o.short_finished),
            long_per_s: window.per_s(o.long_finished),
            window,
            short: outcome.short.summary(),
            long: outcome.long.summary(),
            submit_lag_p99_ms: outcome
                .submit_lag
                .as_ref()
                .and_then(|lag| lag.summary())
                .map(|p| p.p99_ms),
            short_from_submit: outcome
                .short_from_submit
                .as_ref()
                .and_then(|from_submit| from_submit.summary()),
            monitor: outcome.monitor.as_ref().map(|counters| {
                counters
                    .iter()
                    .map(|&(name, value)| (name.to_owned(), value))
                    .collect()
            }),
            threads_started_per_s: outcome
                .threads_started
                .map(|started| started as f64 / o.readings.cpu_window.as_secs_f64().max(1e-9)),
        })
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

/// The oracle's name in the runs (`super::oracle`): neither weft nor a peer.
pub const ORACLE: &str = "oracle";

/// Whether `name` is one of weft's variants.
pub fn is_weft(name: &str) -> bool {
    Variant::ALL
        .iter()
        .any(|v| v.name() == name && v.kind() == RuntimeKind::Weft)
}

impl LoadResult {
    /// A load's result from every runtime's run, with the weft variants'
    /// ratios and targets.
    pub fn new(load: Load, runtimes: BTreeMap<String, MixedRun>) -> LoadResult {
        let tokio = runtimes
            .get(RuntimeKind::Tokio.name())
            .and_then(MixedRun::ok);
        let all = |_: &str| true;
        let mut ratios = BTreeMap::new();
        let mut targets = Vec::new();
        // In the suite's order, so the targets list weft before its variants.
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
                        short_p99_vs_best: SHORT_P99.ratio(own, &runtimes, all),
                        long_per_s_vs_tokio: LONG_PER_S.ratio(own, &runtimes, all).map(|r| r.value),
                        cpu_vs_tokio: CPU.ratio(own, &runtimes, all).map(|r| r.value),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Readings;
    use crate::common::latency::Recorder;

    fn outcome(short_ms: u64, longs: u64, cpu_ms: u64) -> Outcome {
        let short = Recorder::hundred(Duration::from_millis(short_ms));
        Outcome {
            short,
            short_finished: 300,
            long_finished: longs,
            readings: Readings::steady(Duration::from_millis(1_500), Duration::from_millis(cpu_ms)),
            ..Outcome::default()
        }
    }

    #[test]
    fn figures_are_per_second_of_the_window() {
        let run = MixedRun::from_outcome(&outcome(5, 30, 3_000));
        let f = run.ok().unwrap();
        assert_eq!((f.short_per_s, f.long_per_s), (200.0, 20.0));
        assert_eq!(f.window.cpu_ms_per_s, 2_000.0);
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
        assert!(!is_weft(ORACLE) && is_weft("weft-no-demote") && !is_weft("tokio"));
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
