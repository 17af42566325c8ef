//! What the scheduler suite measured: its part of the `--json` document,
//! which predates the suites' sections and sits at the document's top
//! level (`settings`, `workloads`, `warnings`: [`SchedulerResults`]), and
//! the figures `compare` gates ([`SCHEDULER`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats::{Comparison, Summary};
use crate::common::figure::rows::Gated;
use crate::common::figure::{self, Attempt, Figure, Format, Peer, Status, Tolerance};
use crate::common::measure::Sample;
use crate::common::setup::SuiteSettings;

/// weft's median iteration time, over the best peer's.
pub const MEDIAN_MS: Figure<Summary> = Figure::lower("median_ms", "ms", |s| Some(s.median_ms));

/// Growth in context switches per iteration below which a change is noise:
/// a few switches are noise on workloads that switch a few times.
pub const CSW_FLOOR: f64 = 20.0;

/// The scheduler suite's figures `compare` gates: weft's median over the
/// best peer's and over tokio's (measured side by side in one run, they
/// cancel most of the machine's drift and are comparable across
/// machines), and its context switches per iteration, with their own,
/// wider tolerance (they swing far more between runs of one build than
/// times do) and [`CSW_FLOOR`].
pub const SCHEDULER: [Figure<Summary>; 3] = [
    MEDIAN_MS,
    MEDIAN_MS.with_peer(Peer::Tokio),
    Figure::lower("csw_per_iter", "switches", |s: &Summary| {
        Some(s.csw_per_iter)
    })
    .with_peer(Peer::None)
    .with_format(Format::Count)
    .with_floor(CSW_FLOOR)
    .with_tolerance(Tolerance::Switches),
];

/// The scheduler suite in `compare`.
pub const GATED: Gated<Summary> = Gated::new("scheduler", "workload", &SCHEDULER);

/// The scheduler suite's part of the document, at its top level:
///
/// ```jsonc
///   "settings": {
///     "profile": "quick", "workers": 4, "rounds": 5,
///     "runtimes": ["weft", "tokio", "smol"],       // block order
///     "iteration_timeout_s": 10.0,
///     "weft_inject_batch_cap": null, "weft_lifo_slot": true
///   },
///   "workloads": [{ … }],                          // WorkloadResult
///   "warnings": ["…"],                             // absent when empty
/// ```
///
/// When the suite did not run, `settings` describes the first suite that
/// did (its profile, workers and runtimes; the rest weft's defaults) and
/// `workloads` is empty.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SchedulerResults {
    /// How it was measured.
    pub settings: Settings,
    /// One entry per workload, in the order they ran.
    pub workloads: Vec<WorkloadResult>,
    /// Anything that may have disturbed the run (an abandoned runtime).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How a run was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Profile, workers, the runtimes in the order their blocks alternate
    /// (as every suite's).
    #[serde(flatten)]
    pub suite: SuiteSettings,
    /// Rounds: blocks of iterations per runtime, alternating runtimes.
    pub rounds: usize,
    /// Longest wait for one iteration before a runtime is marked failed.
    pub iteration_timeout_s: f64,
    /// weft's `inject_batch_cap`, if overridden.
    pub weft_inject_batch_cap: Option<usize>,
    /// weft's `lifo_slot`.
    pub weft_lifo_slot: bool,
}

/// One workload on every runtime. In JSON:
///
/// ```jsonc
/// {
///   "name": "spawn_many_local",
///   "iterations_per_round": 20,                  // round r = elements r*20 .. r*20+19 of each array
///   "runtimes": {
///     "weft": {
///       "status": "ok",                          // or "failed", with "error": "…"
///       "summary": {                             // null unless status is ok
///         "median_ms": 4.10, "min_ms": 2.32, "max_ms": 5.55,
///         "round_medians_ms": [4.29, 3.56, 3.18, 4.21, 4.21],
///         "spread_pct": 27.0,
///         "csw_per_iter": 221.8, "csw_voluntary_per_iter": 176.5, "csw_involuntary_per_iter": 45.3,
///         "counters_per_iter": { "polls": 10000.0, "parks": 158.0, … }   // weft only
///       },
///       "iterations": {                          // one element per measured iteration, in order
///         "ms": [3.1641, …],                     // rounded to 0.1 µs
///         "csw_voluntary": [457, …], "csw_involuntary": [331, …],
///         "counters": { "polls": [10000, …], … }  // weft only
///       }
///     },
///     "tokio": { … }, "smol": { … }
///   },
///   "comparison": {                              // null when weft or every peer failed
///     "best":  { "peer": "smol",  "value": 0.51, "rounds": [0.52, 0.43, …], "resolved": true },
///     "tokio": { "peer": "tokio", "value": 0.40, "rounds": [0.44, …], "resolved": true },  // null without tokio
///     "verdict": "faster"                        // "faster" | "slower" | "unresolved"
///   }
/// }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// The workload's name (tokio's benchmark name).
    pub name: String,
    /// Measured iterations per round (after warm-up).
    pub iterations_per_round: usize,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, RuntimeResult>,
    /// weft against its peers; absent when weft or every peer failed.
    pub comparison: Option<Comparison>,
}

figure::impl_row!(WorkloadResult, RuntimeResult);

/// One workload on one runtime.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RuntimeResult {
    /// Whether every round completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Statistics over the iterations; present when `status` is `ok`.
    pub summary: Option<Summary>,
    /// Every measured iteration, in the order measured.
    pub iterations: Iterations,
}

impl RuntimeResult {
    /// The summary, if the runtime completed the workload.
    pub fn ok_summary(&self) -> Option<&Summary> {
        self.ok()
    }
}

figure::impl_attempt!(RuntimeResult, summary: Summary);

/// Per-iteration values, one array element per measured iteration. Round
/// `r` is elements `r * iterations_per_round ..` of every array.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Iterations {
    /// Wall time, milliseconds.
    pub ms: Vec<f64>,
    /// Voluntary context switches of the whole process.
    pub csw_voluntary: Vec<u64>,
    /// Involuntary context switches of the whole process.
    pub csw_involuntary: Vec<u64>,
    /// The runtime's counter deltas, by counter name (weft only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Vec<u64>>,
}

impl Iterations {
    /// Appends one measured iteration (its time rounded to 0.1 µs).
    pub fn push(&mut self, sample: &Sample) {
        self.ms
            .push((sample.wall.as_secs_f64() * 1e7).round() / 1e4);
        self.csw_voluntary.push(sample.csw_voluntary);
        self.csw_involuntary.push(sample.csw_involuntary);
        for &(name, value) in sample.counters.iter().flatten() {
            self.counters
                .entry(name.to_owned())
                .or_default()
                .push(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::common::figure::gate::{Delta, Gate, Tolerances};
    use crate::suites::scheduler::stats;

    /// A workload whose runtimes took `ms` and switched `csw` times in
    /// every iteration.
    fn workload(name: &str, runtimes: &[(&str, f64, u64)]) -> WorkloadResult {
        let runtimes: BTreeMap<String, RuntimeResult> = runtimes
            .iter()
            .map(|&(runtime, ms, csw)| {
                let iterations = Iterations {
                    ms: vec![ms; 4],
                    csw_voluntary: vec![csw; 4],
                    csw_involuntary: vec![0; 4],
                    ..Iterations::default()
                };
                let result = RuntimeResult {
                    summary: stats::summarize(&iterations, 2),
                    iterations,
                    ..Default::default()
                };
                (runtime.to_owned(), result)
            })
            .collect();
        WorkloadResult {
            name: name.to_owned(),
            iterations_per_round: 2,
            comparison: stats::compare(&runtimes, |_| true),
            runtimes,
        }
    }

    fn deltas(base: &[(&str, f64, u64)], new: &[(&str, f64, u64)], same: bool) -> Vec<Delta> {
        let gate = Gate {
            tolerances: Tolerances {
                time_pct: 30.0,
                csw_pct: 200.0,
            },
            same_machine: same,
        };
        gate.compare(&GATED, &[workload("a", base)], &[workload("a", new)])
    }

    fn verdicts(deltas: &[Delta]) -> Vec<String> {
        let to = |d: &Delta| d.peers.as_ref().map_or("-".to_owned(), |p| p.1.clone());
        deltas
            .iter()
            .map(|d| format!("{} to {}: {}", d.name(), to(d), d.describe("workload")))
            .collect()
    }

    const BASE: &[(&str, f64, u64)] = &[("weft", 1.0, 10), ("tokio", 2.0, 10), ("smol", 1.5, 10)];

    #[test]
    fn a_slower_weft_regresses_against_the_best_peer_and_tokio() {
        let new = [("weft", 2.0, 10), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert_eq!(
            verdicts(&deltas(BASE, &new, true)),
            [
                "a median_ms to smol: REGRESSED: weft, ratio",
                "a median_ms to tokio: REGRESSED: ratio",
                "a csw_per_iter to -: ok"
            ]
        );
        // On another machine only the ratios are gated.
        let faster_peers = [("weft", 2.0, 10), ("tokio", 4.0, 10), ("smol", 3.0, 10)];
        assert!(deltas(BASE, &faster_peers, false).iter().all(Delta::passes));
    }

    #[test]
    fn context_switches_have_their_tolerance_and_floor() {
        // Three times as many, but 20 more per iteration: under the floor.
        let few = [("weft", 1.0, 30), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert!(deltas(BASE, &few, true).iter().all(Delta::passes));
        let many = [("weft", 1.0, 40), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert_eq!(
            verdicts(&deltas(BASE, &many, true))[2],
            "a csw_per_iter to -: REGRESSED: weft"
        );
    }
}
