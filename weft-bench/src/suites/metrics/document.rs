//! The metrics suite's `--json` document (schema [`SCHEMA`], described on
//! [`MetricsDocument`]) and the targets of issue 7, judged from what was
//! measured.

use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::common::json::{Machine, Versions};
use crate::common::stats;
use crate::suites::metrics::counting::{CountingConfig, CountingRun};
use crate::suites::metrics::estimate::error_pct;
use crate::suites::metrics::overhead::{OverheadConfig, OverheadResult};
use crate::suites::metrics::wait::NOISE;
use crate::suites::metrics::{MetricsConfig, Part};

/// Identifies the document format.
pub const SCHEMA: &str = "weft-bench-metrics/1";

/// `Counter`'s error must stay under this at every interval, percent.
pub const COUNTER_ERR_TARGET_PCT: f64 = 0.5;

/// A sampler period this many times its interval means the sampler was
/// kept off the CPU (by the workload or by another process).
pub const STARVED_FACTOR: f64 = 10.0;

/// Other processes using more than this percentage of the machine make a
/// measurement suspect.
pub const BUSY_OTHERS_PCT: f64 = 5.0;

/// The `Handle::metrics()` sampler may slow a workload by this much.
pub const OVERHEAD_TARGET_RATIO: f64 = 1.01;

/// One run of the metrics suite, written by `weft-bench metrics --json
/// FILE`. Compact JSON, like the suites' document; rates are transactions
/// per second, times as their field names say:
///
/// ```jsonc
/// {
///   "schema": "weft-bench-metrics/1", "created_unix_s": …, "duration_s": 55.0,
///   "machine": { … }, "versions": { … },             // as in weft-bench/1
///   "settings": { "profile": "quick", "workers": 4, "tasks": 100, "wait_noise_pct": 10.0,
///                 "intervals_ms": [1000.0, 500.0, 200.0, 50.0, 10.0, 1.0], "window_s": 3.0,
///                 "min_samples": 5, "warmup_s": 0.3, "baseline_interval_ms": 1000.0,
///                 "overhead_rounds": 10, "overhead_sampler_interval_ms": 1.0,
///                 "parts": ["counting", "overhead"] },
///   "targets": { "counter_max_abs_err_pct": 0.10, "counter_target_met": true,
///                "counter_max_abs_time_weighted_err_pct": 0.00001, "counts_exact": true,
///                "overhead": [{ "workload": "spawn_many_local", "status": "unresolved" }, …],
///                "overhead_pooled": { "rounds": 70, "on_off_median": 1.002, "on_off_above_one": 38,
///                                     "on_tick_median": 1.003, "on_tick_above_one": 37 },
///                "snapshots_monotonic": true,
///                "disturbances": ["chained_spawn: other processes used 51% of the machine"] },
///   "counting": [{                                   // one per wait: 10 ms, then 10 µs
///     "wait": { "nominal_us": 10000.0, "mechanism": "timer" },   // or "spin"
///     "tasks": 100,
///     "exactness": { "task_total": 201013, "counter_total": 201013, "swap_total": 201013,
///                    "baseline_swap_total": 201013, "exact": true },
///     "phases": [{
///       "interval_ms": 1.0, "window_s": 3.0, "others_cpu_pct": 0.0,
///       "exact_tps": 9919.4, "counter_window_tps": 9919.4,
///       "period_mean_ms": 1.07, "period_max_ms": 4.3,
///       "baseline":         { "samples": 3, "mean_tps": …, "stddev_tps": …, "err_pct": … },
///       "baseline_nominal": { … },                   // the baseline's count ÷ 1 s
///       "swap_nominal":  { "samples": 2805, "mean_tps": 10612, "stddev_tps": 3360,
///                          "err_pct": 6.98, "err_vs_baseline_pct": 6.98 },
///       "swap_measured": { … }, "counter": { … },
///       "samples": {                                 // one element per sample
///         "swap_counts": […], "swap_dt_ns": […],
///         "counter_counts": […], "counter_dt_ns": […], "counter_tps": […] },
///       "baseline_samples": { "counts": […], "dt_ns": […] }
///     }, …]
///   }, …],
///   "overhead": [{                                   // one per workload
///     "workload": "spawn_many_local", "iterations_per_round": 20, "others_cpu_pct": 0.0,
///     "off": { …summary as in weft-bench/1… }, "tick": { … }, "on": { … },
///     "on_off":   { "value": 1.029, "rounds": [ … ], "resolved": false },
///     "tick_off": { … }, "on_tick": { … },
///     "sampler":      { "reads": 520, "mean_period_ms": 1.14, "mean_read_us": 0.7, "decreases": 0 },
///     "tick_sampler": { "reads": 530, "mean_period_ms": 1.13, "mean_read_us": 0.0, "decreases": 0 },
///     "iterations": { "off": { "ms": […], "csw_voluntary": […], "csw_involuntary": […] },
///                     "tick": { … }, "on": { … } }
///   }, …]
/// }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricsDocument {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// When the run started, seconds since the Unix epoch.
    pub created_unix_s: u64,
    /// How long the run took, s.
    pub duration_s: f64,
    /// Where it ran.
    pub machine: Machine,
    /// What was measured.
    pub versions: Versions,
    /// How it was measured.
    pub settings: MetricsSettings,
    /// The targets, judged.
    pub targets: Targets,
    /// The counting experiment, one entry per wait.
    pub counting: Vec<CountingRun>,
    /// The sampler overhead, one entry per workload.
    pub overhead: Vec<OverheadResult>,
}

/// How a run was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricsSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every weft runtime.
    pub workers: usize,
    /// Tasks counting transactions.
    pub tasks: usize,
    /// Relative half-width of the uniform noise on every wait, percent.
    pub wait_noise_pct: f64,
    /// Sampling intervals, ms, in the order run.
    pub intervals_ms: Vec<f64>,
    /// A phase samples at least this long, s...
    pub window_s: f64,
    /// ...and at least this many intervals.
    pub min_samples: u32,
    /// The tasks run this long before the first phase, s.
    pub warmup_s: f64,
    /// The baseline sampler's interval, ms.
    pub baseline_interval_ms: f64,
    /// Rounds of the overhead part.
    pub overhead_rounds: usize,
    /// The `Handle::metrics()` sampler's interval, ms.
    pub overhead_sampler_interval_ms: f64,
    /// The parts run.
    pub parts: Vec<String>,
}

impl MetricsSettings {
    /// The settings of `config` as run.
    pub fn new(
        config: &MetricsConfig,
        counting: &[CountingConfig],
        overhead: &OverheadConfig,
    ) -> MetricsSettings {
        let first = &counting[0];
        MetricsSettings {
            profile: config.profile.name().to_owned(),
            workers: config.workers,
            tasks: config.tasks,
            wait_noise_pct: NOISE * 100.0,
            intervals_ms: first.intervals.iter().map(|i| ms(*i)).collect(),
            window_s: first.window.as_secs_f64(),
            min_samples: first.min_samples,
            warmup_s: first.warmup.as_secs_f64(),
            baseline_interval_ms: ms(first.baseline_interval),
            overhead_rounds: overhead.rounds,
            overhead_sampler_interval_ms: ms(overhead.interval),
            parts: config
                .parts
                .iter()
                .map(|p| match p {
                    Part::Counting => "counting".to_owned(),
                    Part::Overhead => "overhead".to_owned(),
                })
                .collect(),
        }
    }
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The targets of issue 7 against what this run measured. In JSON one
/// object: the counting part's fields, the overhead part's, and
/// `disturbances`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Targets {
    /// The counting part's.
    #[serde(flatten)]
    pub counting: CountingTargets,
    /// The overhead part's.
    #[serde(flatten)]
    pub overhead: OverheadTargets,
    /// What may have disturbed the measurements: phases whose sampler was
    /// starved (a period over [`STARVED_FACTOR`] times its interval), and
    /// phases or workloads during which other processes used more than
    /// [`BUSY_OTHERS_PCT`] of the machine.
    pub disturbances: Vec<String>,
}

/// The counting part's targets; each `None` without the part.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountingTargets {
    /// Largest |error| of `Counter` over every phase of every wait,
    /// percent.
    pub counter_max_abs_err_pct: Option<f64>,
    /// Whether it is under [`COUNTER_ERR_TARGET_PCT`].
    pub counter_target_met: Option<bool>,
    /// Largest |error| of the Counter's time-weighted rate (Σ Δcount ÷
    /// Σ Δt over a phase's samples) against exact, percent.
    pub counter_max_abs_time_weighted_err_pct: Option<f64>,
    /// Every wait's end-of-run totals agreed exactly.
    pub counts_exact: Option<bool>,
}

/// The overhead part's targets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverheadTargets {
    /// Per workload, the sampler overhead against
    /// [`OVERHEAD_TARGET_RATIO`].
    #[serde(rename = "overhead")]
    pub workloads: Vec<OverheadTarget>,
    /// Every round of every workload taken together.
    pub overhead_pooled: Option<PooledOverhead>,
    /// No `Handle::metrics()` read saw summed polls decrease (`None`
    /// without the part).
    pub snapshots_monotonic: Option<bool>,
}

/// One workload's overhead against the target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverheadTarget {
    /// The workload.
    pub workload: String,
    /// `met`: every round slowed by at most 1%; `missed`: every round by
    /// more; `unresolved`: the rounds disagree.
    pub status: TargetStatus,
}

/// The round ratios of every workload, pooled: a summary with more power
/// than any one workload's rounds (each round is still its own workload's
/// off/tick/on blocks side by side).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PooledOverhead {
    /// Rounds pooled.
    pub rounds: usize,
    /// Median of the rounds' `on ÷ off`.
    pub on_off_median: f64,
    /// Rounds whose `on ÷ off` is above 1.0.
    pub on_off_above_one: usize,
    /// Median of the rounds' `on ÷ tick` (the reads alone).
    pub on_tick_median: f64,
    /// Rounds whose `on ÷ tick` is above 1.0.
    pub on_tick_above_one: usize,
}

impl PooledOverhead {
    fn of(results: &[OverheadResult]) -> Option<PooledOverhead> {
        let on_off: Vec<f64> = results
            .iter()
            .flat_map(|r| r.on_off.rounds.clone())
            .collect();
        let on_tick: Vec<f64> = results
            .iter()
            .flat_map(|r| r.on_tick.rounds.clone())
            .collect();
        let above = |v: &[f64]| v.iter().filter(|&&r| r > 1.0).count();
        Some(PooledOverhead {
            rounds: on_off.len(),
            on_off_median: stats::median(&on_off)?,
            on_off_above_one: above(&on_off),
            on_tick_median: stats::median(&on_tick)?,
            on_tick_above_one: above(&on_tick),
        })
    }
}

/// Whether every round is on the same side of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetStatus {
    /// Every round meets it.
    Met,
    /// Every round misses it.
    Missed,
    /// The rounds disagree.
    Unresolved,
}

impl TargetStatus {
    /// Judges per-round `on ÷ off` ratios against [`OVERHEAD_TARGET_RATIO`].
    pub fn of_rounds(round_ratios: &[f64]) -> TargetStatus {
        if round_ratios.iter().all(|&r| r <= OVERHEAD_TARGET_RATIO) {
            TargetStatus::Met
        } else if round_ratios.iter().all(|&r| r > OVERHEAD_TARGET_RATIO) {
            TargetStatus::Missed
        } else {
            TargetStatus::Unresolved
        }
    }

    /// The status as printed.
    pub fn name(self) -> &'static str {
        match self {
            TargetStatus::Met => "met",
            TargetStatus::Missed => "missed",
            TargetStatus::Unresolved => "unresolved",
        }
    }
}

impl Targets {
    /// Judges the targets from the measurements.
    pub fn evaluate(counting: &[CountingRun], overhead: &[OverheadResult]) -> Targets {
        Targets {
            counting: CountingTargets::of(counting),
            overhead: OverheadTargets::of(overhead),
            disturbances: disturbances(counting, overhead),
        }
    }

    /// Whether every correctness check passed (targets on speed and error
    /// are reported, not enforced).
    pub fn correct(&self) -> bool {
        self.counting.counts_exact != Some(false)
            && self.overhead.snapshots_monotonic != Some(false)
    }
}

impl CountingTargets {
    fn of(counting: &[CountingRun]) -> CountingTargets {
        let phases = || counting.iter().flat_map(|run| &run.phases);
        let counter_max_abs_err_pct = phases()
            .map(|phase| phase.figures.counter.err_pct.abs())
            .reduce(f64::max);
        let time_weighted = phases()
            .map(|phase| error_pct(phase.figures.counter_window_tps, phase.figures.exact_tps))
            .map(f64::abs)
            .reduce(f64::max);
        let measured = !counting.is_empty();
        CountingTargets {
            counter_max_abs_err_pct,
            counter_target_met: counter_max_abs_err_pct.map(|e| e < COUNTER_ERR_TARGET_PCT),
            counter_max_abs_time_weighted_err_pct: time_weighted,
            counts_exact: measured.then(|| counting.iter().all(|r| r.exactness.exact)),
        }
    }
}

impl OverheadTargets {
    fn of(overhead: &[OverheadResult]) -> OverheadTargets {
        let sampled = !overhead.is_empty();
        OverheadTargets {
            workloads: overhead
                .iter()
                .map(|r| OverheadTarget {
                    workload: r.workload.clone(),
                    status: TargetStatus::of_rounds(&r.on_off.rounds),
                })
                .collect(),
            overhead_pooled: PooledOverhead::of(overhead),
            snapshots_monotonic: sampled.then(|| overhead.iter().all(|r| r.sampler.decreases == 0)),
        }
    }
}

/// Lines for [`Targets::disturbances`].
fn disturbances(counting: &[CountingRun], overhead: &[OverheadResult]) -> Vec<String> {
    let busy = |pct: Option<f64>| pct.filter(|&p| p > BUSY_OTHERS_PCT);
    let mut lines = Vec::new();
    for run in counting {
        for phase in &run.phases {
            let what = format!(
                "wait {}, interval {} ms",
                run.wait.label(),
                phase.interval_ms
            );
            if let Some(pct) = busy(phase.others_cpu_pct) {
                lines.push(format!(
                    "{what}: other processes used {pct:.0}% of the machine"
                ));
            }
            let longest = phase.figures.period_max_ms;
            if longest > STARVED_FACTOR * phase.interval_ms {
                lines.push(format!(
                    "{what}: sampler starved, longest period {longest:.1} ms"
                ));
            }
        }
    }
    for result in overhead {
        if let Some(pct) = busy(result.others_cpu_pct) {
            let workload = &result.workload;
            lines.push(format!(
                "{workload}: other processes used {pct:.0}% of the machine"
            ));
        }
    }
    lines
}

/// Writes `document` to `path` as compact JSON (read it with `jq .`).
pub fn write(path: &Path, document: &MetricsDocument) -> io::Result<()> {
    let text = serde_json::to_string(document).map_err(io::Error::other)?;
    fs::write(path, text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_target_needs_every_round() {
        assert_eq!(TargetStatus::of_rounds(&[0.99, 1.005]), TargetStatus::Met);
        assert_eq!(TargetStatus::of_rounds(&[1.02, 1.2]), TargetStatus::Missed);
        assert_eq!(
            TargetStatus::of_rounds(&[0.95, 1.05]),
            TargetStatus::Unresolved
        );
    }
}
