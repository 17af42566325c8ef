//! The arithmetic of the stall suite, on a trial's timestamps: windows
//! ([`Span`]), rates in them, a rate's share of its calm rate, the stall
//! window from the blockers' times, the ticker's latenesses, and whether
//! the blockers blocked the workers intended.
//!
//! Rules (pinned by the tests):
//!
//! * A window is half-open, `[start, end)`; an event counts in the window
//!   its timestamp lies in (a tick by its wake, a task by its answer's
//!   arrival, a round trip by its end).
//! * A share is the stall rate over the calm rate, in percent; none when
//!   the calm rate is zero (the suite then fails the trial: that kind did
//!   not run at all).
//! * The stall is the time every blocker was blocked at once: from the
//!   last one's start to the first one's end; none if they never
//!   overlapped.
//! * A tick is outstanding during the stall when it was due before the
//!   stall's end and had not fired at its start; its lateness is its wake
//!   minus its deadline, or, if it never fired, the trial's end minus its
//!   deadline (a lower bound).
//! * Percentiles are by nearest rank ([`crate::common::stats::percentile`]).

use std::time::{Duration, Instant};

use super::workload::{Blocker, Trial};

/// A window of time, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Its first instant.
    pub start: Instant,
    /// The instant after its last.
    pub end: Instant,
}

impl Span {
    /// The window from `start` to `end` (empty if `end` is earlier).
    pub fn new(start: Instant, end: Instant) -> Span {
        Span {
            start,
            end: end.max(start),
        }
    }

    /// Its length.
    pub fn len(&self) -> Duration {
        self.end - self.start
    }

    /// Whether it has no length.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Whether `t` lies in it.
    pub fn contains(&self, t: Instant) -> bool {
        self.start <= t && t < self.end
    }

    /// How many of `times` lie in it.
    pub fn count(&self, times: impl IntoIterator<Item = Instant>) -> usize {
        times.into_iter().filter(|&t| self.contains(t)).count()
    }

    /// How many of `times` lie in it, per second of it (0 when empty).
    pub fn per_s(&self, times: impl IntoIterator<Item = Instant>) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.count(times) as f64 / self.len().as_secs_f64()
    }
}

/// One sleep of the ticker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// When it was due.
    pub deadline: Instant,
    /// When the ticker woke from it; `None` if it never did.
    pub wake: Option<Instant>,
}

/// The wakes of `ticks`.
pub fn wakes(ticks: &[Tick]) -> impl Iterator<Item = Instant> + '_ {
    ticks.iter().filter_map(|tick| tick.wake)
}

/// `during` as a share of `calm`, percent; `None` when `calm` is not
/// positive.
pub fn share_pct(during: f64, calm: f64) -> Option<f64> {
    (calm > 0.0).then(|| during / calm * 100.0)
}

/// The time every blocker was blocked at once: from the last one's start
/// to the first one's end; `None` without blockers or if they never
/// overlapped.
pub fn stall_span(blockers: &[Blocker]) -> Option<Span> {
    let start = blockers.iter().map(|b| b.start).max()?;
    let end = blockers.iter().map(|b| b.end).min()?;
    (end > start).then(|| Span::new(start, end))
}

/// The time between the first blocker's start and the last one's.
pub fn start_spread(blockers: &[Blocker]) -> Duration {
    let first = blockers.iter().map(|b| b.start).min();
    let last = blockers.iter().map(|b| b.start).max();
    first
        .zip(last)
        .map_or(Duration::ZERO, |(first, last)| last - first)
}

/// The lateness, µs, of every tick outstanding during `span` (module
/// doc); a tick that never fired is late until `end`.
pub fn outstanding_lateness_us(ticks: &[Tick], span: Span, end: Instant) -> Vec<f64> {
    ticks
        .iter()
        .filter(|tick| tick.deadline < span.end && tick.wake.unwrap_or(end) >= span.start)
        .map(|tick| {
            us(tick
                .wake
                .unwrap_or(end)
                .saturating_duration_since(tick.deadline))
        })
        .collect()
}

/// The lateness, µs, of every tick that woke in `span`.
pub fn woken_lateness_us(ticks: &[Tick], span: Span) -> Vec<f64> {
    let woken = ticks
        .iter()
        .filter_map(|tick| Some((tick.deadline, tick.wake?)));
    woken
        .filter(|&(_, wake)| span.contains(wake))
        .map(|(deadline, wake)| us(wake.saturating_duration_since(deadline)))
        .collect()
}

/// A duration in µs.
fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// What says the blockers did not block the workers intended: starts
/// further apart than `spread_limit`, and on weft blockers not polled by
/// a worker slot during the stall (a spare slot's, or none seen).
pub fn placement_notes(trial: &Trial, spread_limit: Duration) -> Vec<String> {
    let mut notes = Vec::new();
    let spread = start_spread(&trial.blockers);
    if spread > spread_limit {
        notes.push(format!(
            "the blockers started {:.0} ms apart (more than {} ms): the stall window is only \
             the time they were all blocked",
            spread.as_secs_f64() * 1e3,
            spread_limit.as_millis()
        ));
    }
    if let Some(slots) = &trial.blocker_slots {
        let on_workers = slots.iter().filter(|&&slot| slot < trial.workers).count();
        let on_spares = slots.len() - on_workers;
        if on_workers < trial.blockers_spawned {
            notes.push(format!(
                "{on_workers} of {} blockers were polled by a worker during the stall ({on_spares} \
                 by a spare slot): fewer workers blocked than intended",
                trial.blockers_spawned
            ));
        }
    }
    notes
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `ms` after `t0`.
    pub(crate) fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    pub(crate) fn blocker(t0: Instant, start: u64, end: u64) -> Blocker {
        Blocker {
            start: at(t0, start),
            end: at(t0, end),
            thread: "worker".to_owned(),
        }
    }

    #[test]
    fn windows_are_half_open_and_rates_per_second() {
        let t0 = Instant::now();
        let span = Span::new(at(t0, 100), at(t0, 600));
        let times: Vec<Instant> = [50, 100, 300, 599, 600].map(|ms| at(t0, ms)).into();
        assert_eq!(span.count(times.iter().copied()), 3);
        assert!((span.per_s(times.iter().copied()) - 6.0).abs() < 1e-9);
        let empty = Span::new(at(t0, 5), at(t0, 1));
        assert!(empty.is_empty());
        assert_eq!(empty.per_s(times), 0.0);
    }

    #[test]
    fn shares_are_percent_of_the_calm_rate() {
        assert_eq!(share_pct(50.0, 100.0), Some(50.0));
        assert_eq!(share_pct(0.0, 100.0), Some(0.0));
        assert_eq!(share_pct(120.0, 100.0), Some(120.0));
        assert_eq!(share_pct(5.0, 0.0), None);
    }

    #[test]
    fn the_stall_is_the_blockers_overlap() {
        let t0 = Instant::now();
        let both = [blocker(t0, 10, 2_010), blocker(t0, 40, 2_040)];
        let span = stall_span(&both).unwrap();
        assert_eq!((span.start, span.end), (at(t0, 40), at(t0, 2_010)));
        assert_eq!(start_spread(&both), Duration::from_millis(30));
        let apart = [blocker(t0, 0, 100), blocker(t0, 100, 200)];
        assert_eq!(stall_span(&apart), None);
        assert_eq!(stall_span(&[]), None);
        assert_eq!(start_spread(&[]), Duration::ZERO);
    }

    #[test]
    fn outstanding_ticks_include_the_stranded_one() {
        let t0 = Instant::now();
        let tick = |deadline, wake: Option<u64>| Tick {
            deadline: at(t0, deadline),
            wake: wake.map(|ms| at(t0, ms)),
        };
        let ticks = [
            tick(90, Some(91)),       // fired before the stall: not counted
            tick(101, Some(2_000)),   // stranded until the stall's end
            tick(95, Some(150)),      // due before, fired during: counted
            tick(2_005, Some(2_006)), // due after the stall: not counted
            tick(1_990, None),        // never fired: late until the end
        ];
        let stall = Span::new(at(t0, 100), at(t0, 2_000));
        let late = outstanding_lateness_us(&ticks, stall, at(t0, 2_100));
        assert_eq!(late, [1_899_000.0, 55_000.0, 110_000.0]);
        let calm = Span::new(t0, at(t0, 100));
        assert_eq!(woken_lateness_us(&ticks, calm), [1_000.0]);
        assert_eq!(wakes(&ticks).count(), 4);
    }
}
