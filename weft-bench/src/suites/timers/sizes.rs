//! How much each row of the timers suite measures, per profile. Durations
//! are milliseconds (as `f64`, so a smoke test can ask for fractions).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::common::setup::Profile;

/// The sizes of every row; recorded in the document's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizes {
    /// `arm_cancel_ns`: sleeps armed and cancelled per repetition.
    pub arm_cancel_iterations: usize,
    /// `arm_cancel_ns`: repetitions (the row is their median).
    pub arm_cancel_repetitions: usize,
    /// `bytes_per_timer`: timers held at once in the child process.
    pub rss_timers: usize,
    /// `spread_*`: timers.
    pub spread_timers: usize,
    /// `spread_*`: the deadlines are spread evenly over this span.
    pub spread_span_ms: f64,
    /// `spread_*`: the first deadline is this long after the spawning began.
    pub spread_lead_ms: f64,
    /// `sleep_1ms_p99_us`: consecutive 1 ms sleeps.
    pub sleep_iterations: usize,
    /// `stuck_worker_late_max_us`: times the stuck-worker scene is played.
    pub stuck_iterations: usize,
    /// `stuck_worker_late_max_us`: the timer's delay.
    pub stuck_deadline_ms: f64,
    /// `stuck_worker_late_max_us`: how long its worker spins meanwhile.
    pub stuck_spin_ms: f64,
    /// `heartbeat_cpu_per_wake_ns`: tasks, each sleeping 1 ms in a loop.
    pub heartbeat_tasks: usize,
    /// `heartbeat_cpu_per_wake_ns`: the measured window.
    pub heartbeat_window_ms: f64,
    /// `heartbeat_cpu_per_wake_ns`: repetitions. A single one moves by 2-3×
    /// from one repetition to the next (every runtime at once, and weft
    /// alone between ~220 and ~460 ns); the median of three is steadier.
    pub heartbeat_repetitions: usize,
    /// `idle_cpu_ms_per_s`: tasks, each sleeping an hour.
    pub idle_tasks: usize,
    /// `idle_cpu_ms_per_s`: the measured window.
    pub idle_window_ms: f64,
    /// Heartbeat and idle: wait this long after spawning before measuring.
    pub settle_ms: f64,
    /// Repetitions of every other row (each row is the median).
    pub repetitions: usize,
}

impl Sizes {
    /// The sizes of `profile`. Quick: the whole suite in about half a
    /// minute on two cores; full: three repetitions and longer loops.
    pub fn of(profile: Profile) -> Sizes {
        let quick = Sizes {
            arm_cancel_iterations: 200_000,
            arm_cancel_repetitions: 5,
            rss_timers: 1_000_000,
            spread_timers: 100_000,
            spread_span_ms: 1_000.0,
            spread_lead_ms: 100.0,
            sleep_iterations: 500,
            stuck_iterations: 10,
            stuck_deadline_ms: 5.0,
            stuck_spin_ms: 50.0,
            heartbeat_tasks: 10_000,
            heartbeat_window_ms: 1_000.0,
            heartbeat_repetitions: 3,
            idle_tasks: 10_000,
            idle_window_ms: 1_000.0,
            settle_ms: 200.0,
            repetitions: 1,
        };
        match profile {
            Profile::Quick => quick,
            Profile::Full => Sizes {
                arm_cancel_iterations: 400_000,
                sleep_iterations: 2_000,
                stuck_iterations: 30,
                heartbeat_repetitions: 5,
                repetitions: 3,
                ..quick
            },
        }
    }

    /// Tiny sizes for smoke tests: every row in well under a second per
    /// runtime (not meaningful as measurements).
    pub fn tiny() -> Sizes {
        Sizes {
            arm_cancel_iterations: 2_000,
            arm_cancel_repetitions: 1,
            rss_timers: 20_000,
            spread_timers: 1_000,
            spread_span_ms: 20.0,
            spread_lead_ms: 20.0,
            sleep_iterations: 10,
            stuck_iterations: 2,
            stuck_deadline_ms: 2.0,
            stuck_spin_ms: 10.0,
            heartbeat_tasks: 100,
            heartbeat_window_ms: 50.0,
            heartbeat_repetitions: 1,
            idle_tasks: 100,
            idle_window_ms: 50.0,
            settle_ms: 20.0,
            repetitions: 1,
        }
    }
}

/// `ms` milliseconds as a `Duration` (negative or NaN: zero).
pub fn ms(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms / 1e3).unwrap_or(Duration::ZERO)
}
