//! The stall suite, `weft-bench stall` (and in the default
//! run): do timers, spawned tasks and I/O keep going while tasks block
//! worker threads in a synchronous call (issue 51, item 2: "timers keep
//! time through a stall").
//!
//! One runtime with 2 workers (weft with its stall monitor on, as built by
//! default; tokio's multi-thread runtime with its I/O and time drivers;
//! smol's executor on 2 threads, with async-io's timers and reactor) runs
//! three kinds of short work the whole time:
//!
//! * **timers**: a ticker task sleeps 10 ms in a loop and records, for
//!   each sleep, its deadline and when it woke;
//! * **tasks**: a client thread outside the runtime, in closed loop,
//!   spawns one task through the runtime's handle per request; the task
//!   answers on a channel the client waits on (polling its stop flag every
//!   50 ms); the client records each answer;
//! * **I/O**: a client task writes 64 bytes to an echo task over one
//!   loopback TCP connection and reads them back, in closed loop; both
//!   ends are tasks of the runtime; it records each round trip.
//!
//! After a warm-up, the **calm** window (1 s) measures each kind's rate.
//! Then blockers are spawned through the handle, one after the other (the
//! next once the previous one runs, so that none waits queued behind
//! another): tasks that call `std::thread::sleep` for the stall (2 s, full
//! profile 3 s) inside their poll, as a blocking database driver would.
//! [`Case::One`] spawns one (1 of 2 workers blocked), [`Case::All`] one
//! per worker (2 of 2). The **stall** window is the time every blocker
//! was blocked at once: from the last one's start to the first one's end.
//! Each kind's rate in it, as a share of its calm rate, is the suite's
//! figure; and the ticker's lateness (wake − deadline) p99 over the ticks
//! outstanding during the stall (due before its end, not fired at its
//! start; a tick that never fired counts until the trial's end).
//!
//! Whether the intended workers were blocked is checked: the blockers'
//! starts must lie within 100 ms of each other, and on weft a task dump
//! taken during the stall must show every blocker polled by a worker slot
//! (weft's monitor may lend a queued blocker to a spare thread instead,
//! which then blocks the spare, not a worker); otherwise the suite warns.
//! A stall window shorter than half the stall fails the trial.
//!
//! Each (case, trial, runtime) runs on a runtime built for it and dropped
//! after it (after the blockers returned), on a thread of its own
//! abandoned with a warning if it does not answer within
//! [`StallConfig::timeout`]. Trials alternate the runtimes, each trial
//! starting one runtime later (quick: one trial per case, full: three).
//! Per runtime and case: each kind's share, the median and the minimum
//! over the trials (a stranded timer shows as a trial at 0%); weft's
//! ratio to the best peer on each; its targets on the minimum ([`result`]
//! has them: with every worker blocked timers ≥ 90% and tasks and I/O ≥
//! 80%, with one blocked all three ≥ 90%). [`workload`] is the scene,
//! [`shares`] the arithmetic on its timestamps, [`result`] the JSON,
//! figures and targets, [`report`] the table. A missed target never fails
//! the run; a runtime that failed does.

pub mod report;
pub mod result;
pub mod shares;
pub mod suite;
pub mod workload;

pub use suite::Stall;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::common::figure::rows::RowKind;
use crate::common::figure::skew::Watch;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::common::thread::on_thread;

use result::{StallResult, StallRow, StallRun, StallSettings, TrialFigures};
use workload::Trial;

crate::common::figure::rows::rows! {
    /// A case of the suite: how many workers the blockers hold.
    pub enum Case {
        /// One worker blocked, the others free.
        One = ("one_blocked", "one blocked"),
        /// Every worker blocked.
        All = ("all_blocked", "all blocked"),
    }
}

impl Case {
    /// The blockers it spawns on a runtime with `workers` workers.
    pub fn blockers(self, workers: usize) -> usize {
        match self {
            Case::One => 1,
            Case::All => workers.max(1),
        }
    }

    /// `1 of 2`, `2 of 2`.
    pub fn describe(self, workers: usize) -> String {
        format!("{} of {workers}", self.blockers(workers))
    }
}

/// How long each part of a trial lasts; recorded in the document's
/// settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizes {
    /// From the start of the work until the calm window, ms (the
    /// connection made, the threads up).
    pub warmup_ms: u64,
    /// The calm window, just before the blockers, ms.
    pub calm_ms: u64,
    /// How long each blocker sleeps inside its poll, ms.
    pub stall_ms: u64,
    /// After the blockers returned, before the work stops, ms (a timer
    /// stranded by the stall fires in it).
    pub tail_ms: u64,
    /// Trials per case and runtime, the runtimes alternating.
    pub trials: usize,
    /// The ticker's sleep, ms.
    pub tick_ms: u64,
    /// Bytes of each I/O round trip.
    pub message_bytes: usize,
    /// The largest gap between the blockers' starts before the suite warns
    /// that they did not block at once, ms.
    pub start_spread_ms: u64,
}

impl Sizes {
    /// The sizes of `profile`: quick 0.3 s warm-up, 1 s calm, 2 s stall,
    /// one trial; full 0.5 s, 2 s, 3 s, three trials; a 10 ms ticker, 64 B
    /// round trips.
    pub fn of(profile: Profile) -> Sizes {
        let quick = Sizes {
            warmup_ms: 300,
            calm_ms: 1_000,
            stall_ms: 2_000,
            tail_ms: 100,
            trials: 1,
            tick_ms: 10,
            message_bytes: 64,
            start_spread_ms: 100,
        };
        match profile {
            Profile::Quick => quick,
            Profile::Full => Sizes {
                warmup_ms: 500,
                calm_ms: 2_000,
                stall_ms: 3_000,
                trials: 3,
                ..quick
            },
        }
    }

    /// For smoke tests: 0.1 s warm-up, 0.3 s calm, 0.6 s stall (not
    /// meaningful as measurements).
    pub fn tiny() -> Sizes {
        Sizes {
            warmup_ms: 100,
            calm_ms: 300,
            stall_ms: 600,
            tail_ms: 50,
            ..Sizes::of(Profile::Quick)
        }
    }

    /// A trial's length from the work's start until the blockers return.
    pub fn trial(&self) -> Duration {
        Duration::from_millis(self.warmup_ms + self.calm_ms + self.stall_ms + self.tail_ms)
    }
}

/// Everything a run of the stall suite needs to know.
#[derive(Debug, Clone)]
pub struct StallConfig {
    /// Profile (recorded; the sizes say what is run), workers, runtimes in
    /// the order the first trial runs them.
    pub setup: Setup,
    /// How long each part lasts.
    pub sizes: Sizes,
    /// The cases, in order.
    pub cases: Vec<Case>,
    /// Longest wait for one trial of one runtime.
    pub timeout: Duration,
}

impl StallConfig {
    /// The default configuration of `setup`: the profile's sizes, both
    /// cases, a trial's length plus 30 s as the timeout.
    pub fn new(setup: Setup) -> StallConfig {
        let sizes = Sizes::of(setup.profile);
        StallConfig {
            timeout: sizes.trial() + Duration::from_secs(30),
            sizes,
            setup,
            cases: Case::ALL.to_vec(),
        }
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &StallConfig) -> StallResult {
    let mut watch = Watch::start("stall");
    let mut rows = Vec::new();
    for &case in &config.cases {
        let runs = run_case(case, config, &mut watch.warnings);
        for (name, run) in &runs {
            let what = format!("stall: {} on {name}", case.name());
            watch.window(&what, run, "requests", Duration::ZERO);
        }
        rows.push(StallRow::of(case, runs));
    }
    StallResult {
        settings: StallSettings::new(config),
        rows,
        skew: watch.finish(),
    }
}

/// Every trial of `case`, the runtimes alternating within each, each
/// trial starting one runtime later; a runtime that failed a trial sits
/// out the trials after it.
fn run_case(
    case: Case,
    config: &StallConfig,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, StallRun> {
    let workers = config.setup.workers;
    let mut trials: Vec<(RuntimeKind, Vec<Trial>, Option<String>)> = config
        .setup
        .runtimes
        .iter()
        .map(|&kind| (kind, Vec::new(), None))
        .collect();
    let count = config.sizes.trials.max(1);
    for number in 1..=count {
        trials.rotate_left(usize::from(number > 1));
        for (kind, done, error) in trials.iter_mut().filter(|t| t.2.is_none()) {
            let name = kind.name();
            let measured = measure(*kind, case, config, warnings).and_then(|trial| {
                let figures = TrialFigures::of(&trial, &config.sizes)?;
                Ok((trial, figures))
            });
            let line = match &measured {
                Ok((trial, figures)) => report::trial_line(figures, trial),
                Err(err) => format!("FAILED: {err}"),
            };
            eprintln!(
                "weft-bench: stall: {} ({}) on {name}, trial {number}/{count}: {line}",
                case.name(),
                case.describe(workers)
            );
            match measured {
                Ok((trial, _)) => {
                    let notes = trial.notes.iter();
                    let case = case.name();
                    warnings
                        .extend(notes.map(|note| {
                            format!("stall: {case} on {name}, trial {number}: {note}")
                        }));
                    done.push(trial);
                }
                Err(err) => *error = Some(err),
            }
        }
    }
    let runs = trials.into_iter().map(|(kind, done, error)| {
        let run = match error {
            None => StallRun::from_trials(&done, &config.sizes),
            Some(err) => StallRun::failed(err),
        };
        (kind.name().to_owned(), run)
    });
    runs.collect()
}

/// One trial of `case` on `kind`, on a thread of its own, abandoned if it
/// does not answer in time.
fn measure(
    kind: RuntimeKind,
    case: Case,
    config: &StallConfig,
    warnings: &mut Vec<String>,
) -> Result<Trial, String> {
    let (workers, timeout, sizes) = (config.setup.workers, config.timeout, config.sizes.clone());
    let blockers = case.blockers(workers);
    let work = move || match kind {
        RuntimeKind::Weft => workload::measure::<Weft>(blockers, &sizes, workers),
        RuntimeKind::Tokio => workload::measure::<Tokio>(blockers, &sizes, workers),
        RuntimeKind::Smol => workload::measure::<Smol>(blockers, &sizes, workers),
    };
    let abandoned = || {
        warnings.push(format!(
            "stall: {} abandoned in {} after {} s; it may still be running and disturb what \
             follows",
            kind.name(),
            case.name(),
            timeout.as_secs()
        ));
    };
    on_thread(format!("stall-{}", kind.name()), timeout, work, abandoned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_block_one_worker_or_every_worker() {
        assert_eq!((Case::One.blockers(2), Case::All.blockers(2)), (1, 2));
        assert_eq!(Case::All.describe(4), "4 of 4");
        assert_eq!(Case::One.describe(2), "1 of 2");
        assert_eq!(Case::from_name("all_blocked"), Some(Case::All));
    }

    #[test]
    fn the_quick_profile_stays_short() {
        let quick = Sizes::of(Profile::Quick);
        assert_eq!(
            (quick.calm_ms, quick.stall_ms, quick.trials),
            (1_000, 2_000, 1)
        );
        // Two cases on three runtimes: about 20 s.
        assert!(quick.trial() * 6 <= Duration::from_secs(21));
        let full = Sizes::of(Profile::Full);
        assert_eq!((full.stall_ms, full.trials), (3_000, 3));
    }
}
