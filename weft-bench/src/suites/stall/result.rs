//! What the stall suite measured: the `stall` field of the `--json`
//! document (absent from documents written before the suite existed, so
//! older baselines still parse), the figures `compare` gates, weft's
//! ratios to the best peer and its targets.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::shares::{self, Span};
use super::workload::Trial;
use super::{Case, Sizes, StallConfig};
use crate::common::figure::rows::{FigureRow, Gated, SuiteResult, RowKind};
use crate::common::figure::skew::{self, Readings, Window};
use crate::common::figure::target::Target;
use crate::common::figure::{Figure, Run};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::SuiteSettings;
use crate::common::stats::median;
use crate::common::stats::percentile;

/// The ticker's rate during the stall, percent of its calm rate (the
/// median of the trials), over the best peer's.
pub const TIMERS: Figure<Figures> =
    Figure::higher("timers_pct", "%", |f: &Figures| Some(f.timers_pct));

/// The same for the tasks answered.
pub const TASKS: Figure<Figures> =
    Figure::higher("tasks_pct", "%", |f: &Figures| Some(f.tasks_pct));

/// The same for the I/O round trips.
pub const IO: Figure<Figures> = Figure::higher("io_pct", "%", |f: &Figures| Some(f.io_pct));

/// The ticker's lateness p99 over the ticks outstanding during the stalls,
/// over the best peer's.
pub const TICK_P99: Figure<Figures> =
    Figure::lower("tick_p99_us", "µs", |f: &Figures| f.tick_p99_us);

/// The lowest of the trials' ticker shares (what the targets bound).
pub const TIMERS_MIN: Figure<Figures> =
    Figure::higher("timers_min_pct", "%", |f: &Figures| Some(f.timers_min_pct));

/// The lowest of the trials' task shares.
pub const TASKS_MIN: Figure<Figures> =
    Figure::higher("tasks_min_pct", "%", |f: &Figures| Some(f.tasks_min_pct));

/// The lowest of the trials' I/O shares.
pub const IO_MIN: Figure<Figures> =
    Figure::higher("io_min_pct", "%", |f: &Figures| Some(f.io_min_pct));

/// The figures `compare` gates: the three shares (a fall is the
/// regression), floors of 15 points, and the ticker's p99 in the stall, a
/// floor of 5 ms. Provisional: set from the first runs on the shared
/// 2-core dev machine, not yet from a series of quiet re-runs.
pub const FIGURES: [Figure<Figures>; 4] = [
    TIMERS.with_floor(15.0),
    TASKS.with_floor(15.0),
    IO.with_floor(15.0),
    TICK_P99.with_floor(5_000.0),
];

/// The stall suite in `compare`.
pub const GATED: Gated<Figures> = Gated::new("stall", "case", &FIGURES);

/// weft's targets with one worker blocked (issue 51): timers, tasks and
/// I/O each ≥ 90% of their calm rate, in every trial. Reported, never
/// gating.
pub const ONE_TARGETS: [Target<Figures>; 3] = [
    Target::value("one blocked: timers ≥ 90% of calm", TIMERS_MIN, 90.0),
    Target::value("one blocked: tasks ≥ 90% of calm", TASKS_MIN, 90.0),
    Target::value("one blocked: I/O ≥ 90% of calm", IO_MIN, 90.0),
];

/// weft's targets with every worker blocked: timers ≥ 90%, tasks and I/O
/// ≥ 80% of their calm rate, in every trial.
pub const ALL_TARGETS: [Target<Figures>; 3] = [
    Target::value("all blocked: timers ≥ 90% of calm", TIMERS_MIN, 90.0),
    Target::value("all blocked: tasks ≥ 80% of calm", TASKS_MIN, 80.0),
    Target::value("all blocked: I/O ≥ 80% of calm", IO_MIN, 80.0),
];

impl Case {
    /// weft's targets in this case.
    pub fn targets(self) -> &'static [Target<Figures>] {
        match self {
            Case::One => &ONE_TARGETS,
            Case::All => &ALL_TARGETS,
        }
    }
}

/// One run of the stall suite. In JSON:
///
/// ```jsonc
/// "stall": {                                     // absent when the suite did not run
///   "settings": { "profile": "quick", "workers": 2, "runtimes": ["weft", "tokio", "smol"],
///                 "sizes": { "warmup_ms": 300, "calm_ms": 1000, "stall_ms": 2000, "tail_ms": 100,
///                            "trials": 1, "tick_ms": 10, "message_bytes": 64,
///                            "start_spread_ms": 100 } },
///   "rows": [{
///     "name": "one_blocked",                     // or "all_blocked"
///     "runtimes": {
///       "weft": { "status": "ok",                // failed: "status": "failed", "error": "…", "figures": null
///         "figures": {
///           "timers_pct": 99.5, "timers_min_pct": 99.5,   // stall rate ÷ calm rate: median, lowest trial
///           "tasks_pct": 96.0, "tasks_min_pct": 96.0,
///           "io_pct": 93.1, "io_min_pct": 93.1,
///           "tick_p99_us": 1840.0, "tick_max_us": 2950.0,  // ticks outstanding in the stalls, pooled
///           "calm_tick_p99_us": 420.0,          // ticks woken in the calm windows, pooled
///           "trials": [{
///             "calm_ms": 1000.1, "stall_ms": 1999.0,
///             "calm_per_s": { "timers": 99.1, "tasks": 31000.0, "io": 24000.0 },
///             "stall_per_s": { … }, "share_pct": { … },
///             "ticks_outstanding": 201, "tick_p99_us": 1840.0, "tick_max_us": 2950.0,
///             "calm_tick_p99_us": 420.0,
///             "blockers": [{ "start_ms": 0.0, "ms": 2000.1, "thread": "weft-worker" }],
///             "blocker_slots": [0]              // weft: slots polling them mid-stall (≥ workers: spare)
///           }],
///           "window_s": 1.999, "cpu_ms_per_s": 1650.0, "unfinished": 0,   // over the stalls
///           "others_cpu_pct": 3.0,
///           "monitor": { "stalls": 1, "handoffs": 0, … } } },   // weft only, over the stalls
///       "tokio": { … }, "smol": { … }
///     },
///     "ratios": { "timers_pct": { "peer": "tokio", "value": 1.01 }, "tasks_pct": { … },
///                 "io_pct": { … }, "tick_p99_us": { … } },   // absent without a peer above zero
///     "targets": [
///       { "runtime": "weft", "target": "one blocked: timers ≥ 90% of calm",
///         "figure": "timers_min_pct", "limit": 90.0, "value": 99.5, "met": true }, …
///     ]
///   }, { "name": "all_blocked", … }],
///   "others_cpu_pct": 4.1, "warnings": ["…"]
/// }
/// ```
pub type StallResult = SuiteResult<StallSettings, StallRow>;

/// How the stall suite was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StallSettings {
    /// Profile, workers, runtimes in the order the first trial ran them
    /// (each later trial starts one runtime later).
    #[serde(flatten)]
    pub suite: SuiteSettings,
    /// How long each part of a trial lasts.
    pub sizes: Sizes,
}

impl StallSettings {
    /// The settings of `config`.
    pub fn new(config: &StallConfig) -> StallSettings {
        StallSettings {
            suite: config.setup.settings(RuntimeKind::name),
            sizes: config.sizes.clone(),
        }
    }
}

/// One case on every runtime, with weft's ratio on each of [`FIGURES`]
/// and the case's targets.
pub type StallRow = FigureRow<Figures>;

impl StallRow {
    /// The row of `case` from every runtime's run.
    pub fn of(case: Case, runtimes: BTreeMap<String, StallRun>) -> StallRow {
        FigureRow::new(case.name(), runtimes, &FIGURES, case.targets())
    }
}

/// One runtime's trials of a case.
pub type StallRun = Run<Figures>;

/// A figure of each kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Kinds {
    /// The ticker.
    pub timers: f64,
    /// The tasks answered.
    pub tasks: f64,
    /// The I/O round trips.
    pub io: f64,
}

impl Kinds {
    /// Each kind's `of`.
    fn map(self, of: impl Fn(f64) -> f64) -> Kinds {
        Kinds {
            timers: of(self.timers),
            tasks: of(self.tasks),
            io: of(self.io),
        }
    }
}

/// One blocker of a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockerFigures {
    /// Its start after the first blocker's, ms.
    pub start_ms: f64,
    /// How long it was blocked, ms.
    pub ms: f64,
    /// The thread that polled it.
    pub thread: String,
}

/// One trial's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialFigures {
    /// The calm window, ms.
    pub calm_ms: f64,
    /// The stall window (every blocker blocked), ms.
    pub stall_ms: f64,
    /// Each kind's rate in the calm window, per s.
    pub calm_per_s: Kinds,
    /// Each kind's rate in the stall window, per s.
    pub stall_per_s: Kinds,
    /// Each kind's stall rate over its calm rate, percent.
    pub share_pct: Kinds,
    /// Ticks outstanding during the stall.
    pub ticks_outstanding: usize,
    /// Their lateness p99 and max, µs; `None` without one.
    pub tick_p99_us: Option<f64>,
    /// The largest.
    pub tick_max_us: Option<f64>,
    /// The lateness p99 of the ticks woken in the calm window, µs.
    pub calm_tick_p99_us: Option<f64>,
    /// The blockers.
    pub blockers: Vec<BlockerFigures>,
    /// weft: the slots polling a blocker during the stall (a worker's
    /// index, or a spare slot's at or above the worker count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker_slots: Option<Vec<usize>>,
}

/// The latenesses, µs, of a trial's ticks: outstanding in the stall, woken
/// in the calm window.
struct Latenesses {
    stall: Vec<f64>,
    calm: Vec<f64>,
}

impl Latenesses {
    fn of(trial: &Trial, stall: Span) -> Latenesses {
        Latenesses {
            stall: shares::outstanding_lateness_us(&trial.ticks, stall, trial.end),
            calm: shares::woken_lateness_us(&trial.ticks, trial.calm),
        }
    }
}

impl TrialFigures {
    /// The figures of `trial`; an error when its blockers never blocked
    /// at once for half the stall, or a kind did not run in the calm
    /// window.
    pub fn of(trial: &Trial, sizes: &Sizes) -> Result<TrialFigures, String> {
        let stall = stall_of(trial, sizes)?;
        let rates = |span: Span| Kinds {
            timers: span.per_s(shares::wakes(&trial.ticks)),
            tasks: span.per_s(trial.tasks.iter().copied()),
            io: span.per_s(trial.round_trips.iter().copied()),
        };
        let (calm_per_s, stall_per_s) = (rates(trial.calm), rates(stall));
        for (kind, rate) in [
            ("ticks", calm_per_s.timers),
            ("tasks answered", calm_per_s.tasks),
            ("I/O round trips", calm_per_s.io),
        ] {
            if rate <= 0.0 {
                return Err(format!("no {kind} in the calm window"));
            }
        }
        let share = |stall: f64, calm: f64| shares::share_pct(stall, calm).unwrap_or(0.0);
        let late = Latenesses::of(trial, stall);
        let first = trial.blockers.iter().map(|b| b.start).min();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        Ok(TrialFigures {
            calm_ms: ms(trial.calm.len()),
            stall_ms: ms(stall.len()),
            share_pct: Kinds {
                timers: share(stall_per_s.timers, calm_per_s.timers),
                tasks: share(stall_per_s.tasks, calm_per_s.tasks),
                io: share(stall_per_s.io, calm_per_s.io),
            },
            calm_per_s,
            stall_per_s,
            ticks_outstanding: late.stall.len(),
            tick_p99_us: percentile(&late.stall, 0.99),
            tick_max_us: percentile(&late.stall, 1.0),
            calm_tick_p99_us: percentile(&late.calm, 0.99),
            blockers: (trial.blockers.iter())
                .map(|b| BlockerFigures {
                    start_ms: first.map_or(0.0, |first| ms(b.start - first)),
                    ms: ms(b.end - b.start),
                    thread: b.thread.clone(),
                })
                .collect(),
            blocker_slots: trial.blocker_slots.clone(),
        })
    }
}

/// The stall window of `trial`: the blockers' overlap, at least half the
/// stall long.
fn stall_of(trial: &Trial, sizes: &Sizes) -> Result<Span, String> {
    let half = Duration::from_millis(sizes.stall_ms) / 2;
    match shares::stall_span(&trial.blockers) {
        Some(span) if span.len() >= half => Ok(span),
        overlap => Err(format!(
            "the {} blockers were blocked together for {:.0} ms, less than half the {} ms stall",
            trial.blockers.len(),
            overlap.map_or(0.0, |span| span.len().as_secs_f64() * 1e3),
            sizes.stall_ms
        )),
    }
}

/// The figures of one runtime over its trials of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The ticker's stall rate over its calm rate, percent: the median of
    /// the trials.
    pub timers_pct: f64,
    /// The lowest trial's.
    pub timers_min_pct: f64,
    /// The tasks' share, the median of the trials.
    pub tasks_pct: f64,
    /// The lowest trial's.
    pub tasks_min_pct: f64,
    /// The I/O round trips' share, the median of the trials.
    pub io_pct: f64,
    /// The lowest trial's.
    pub io_min_pct: f64,
    /// The lateness p99 of the ticks outstanding during the stalls, every
    /// trial's pooled, µs; `None` without one.
    #[serde(default)]
    pub tick_p99_us: Option<f64>,
    /// The largest of them.
    #[serde(default)]
    pub tick_max_us: Option<f64>,
    /// The lateness p99 of the ticks woken in the calm windows, pooled.
    #[serde(default)]
    pub calm_tick_p99_us: Option<f64>,
    /// Each trial's figures, in the order run.
    pub trials: Vec<TrialFigures>,
    /// The stall windows together: their length, the process's CPU over
    /// the stalls, the others' share.
    #[serde(flatten)]
    pub window: Window,
    /// weft's stall-monitor counters over the stalls, summed. Absent for
    /// the peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<BTreeMap<String, u64>>,
}

skew::impl_windowed!(Figures);

impl StallRun {
    /// The figures of a runtime's trials of a case (each must pass
    /// [`TrialFigures::of`]).
    pub fn from_trials(trials: &[Trial], sizes: &Sizes) -> StallRun {
        let mut each = Vec::with_capacity(trials.len());
        let (mut stall_late, mut calm_late) = (Vec::new(), Vec::new());
        let mut stalls = Duration::ZERO;
        for trial in trials {
            let (figures, stall) = match (TrialFigures::of(trial, sizes), stall_of(trial, sizes)) {
                (Ok(figures), Ok(stall)) => (figures, stall),
                (Err(err), _) | (_, Err(err)) => return StallRun::failed(err),
            };
            let late = Latenesses::of(trial, stall);
            stall_late.extend(late.stall);
            calm_late.extend(late.calm);
            stalls += stall.len();
            each.push(figures);
        }
        let shares: Vec<Kinds> = each.iter().map(|t| t.share_pct).collect();
        let (Some(median), Some(min)) = (aggregate(&shares, median), aggregate(&shares, min))
        else {
            return StallRun::failed("no trial measured".to_owned());
        };
        let wall: Duration = trials.iter().map(|t| t.stall_wall).sum();
        let cpu: Duration = trials.iter().map(|t| t.stall_cpu).sum();
        Run::completed(Figures {
            timers_pct: median.timers,
            timers_min_pct: min.timers,
            tasks_pct: median.tasks,
            tasks_min_pct: min.tasks,
            io_pct: median.io,
            io_min_pct: min.io,
            tick_p99_us: percentile(&stall_late, 0.99),
            tick_max_us: percentile(&stall_late, 1.0),
            calm_tick_p99_us: percentile(&calm_late, 0.99),
            trials: each,
            window: Readings {
                window: stalls,
                cpu,
                cpu_window: wall,
                unfinished: 0,
                others_cpu_pct: others_pct(trials),
            }
            .window(),
            monitor: monitor(trials),
        })
    }
}

/// `of` each kind over `shares`; `None` if empty.
fn aggregate(shares: &[Kinds], of: fn(&[f64]) -> Option<f64>) -> Option<Kinds> {
    let kind = |pick: fn(&Kinds) -> f64| of(&shares.iter().map(pick).collect::<Vec<_>>());
    Some(Kinds {
        timers: kind(|k| k.timers)?,
        tasks: kind(|k| k.tasks)?,
        io: kind(|k| k.io)?,
    })
}

/// The smallest of `values`; `None` if empty.
fn min(values: &[f64]) -> Option<f64> {
    values.iter().copied().min_by(f64::total_cmp)
}

/// The monitor's counters summed over `trials`, if they have them.
fn monitor(trials: &[Trial]) -> Option<BTreeMap<String, u64>> {
    let mut sum: Option<BTreeMap<String, u64>> = None;
    for &(name, value) in trials.iter().filter_map(|t| t.monitor.as_ref()).flatten() {
        *sum.get_or_insert_default()
            .entry(name.to_owned())
            .or_default() += value;
    }
    sum
}

/// The others' share over `trials`' stalls, each weighted by its length.
fn others_pct(trials: &[Trial]) -> Option<f64> {
    let mut weighted = 0.0;
    let mut seconds = 0.0;
    for trial in trials {
        let s = trial.stall_wall.as_secs_f64();
        weighted += trial.others_cpu_pct? * s;
        seconds += s;
    }
    (seconds > 0.0).then(|| weighted / seconds)
}

impl Figures {
    /// Each kind's share: the median and the lowest trial's.
    pub fn shares(&self) -> [(&'static str, f64, f64); 3] {
        [
            ("timers", self.timers_pct, self.timers_min_pct),
            ("tasks", self.tasks_pct, self.tasks_min_pct),
            ("I/O", self.io_pct, self.io_min_pct),
        ]
    }

    /// The calm rates of each kind, the median of the trials.
    pub fn calm_per_s(&self) -> Option<Kinds> {
        let calm: Vec<Kinds> = self.trials.iter().map(|t| t.calm_per_s).collect();
        aggregate(&calm, median).map(|k| k.map(f64::round))
    }
}

#[cfg(test)]
pub(crate) mod tests;
