//! `Interval`: ticks at a fixed period.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::sleep::{Sleep, current_runtime};

/// How late a tick may be before it counts as missed (tokio's leeway).
const MISSED_AFTER: Duration = Duration::from_millis(5);

/// Ticks every `period`; the first tick completes at once.
///
/// # Panics
///
/// If `period` is zero, or outside a weft runtime.
///
/// ```
/// use std::time::Duration;
/// use weft::time::{Instant, interval};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let start = Instant::now();
///     let mut ticks = interval(Duration::from_millis(2));
///     ticks.tick().await; // at once
///     ticks.tick().await;
///     ticks.tick().await;
///     assert!(start.elapsed() >= Duration::from_millis(4));
/// });
/// ```
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    assert_period(period);
    Interval::new(current_runtime("interval"), Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`.
///
/// # Panics
///
/// If `period` is zero, or outside a weft runtime.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert_period(period);
    Interval::new(current_runtime("interval_at"), start, period)
}

#[track_caller]
fn assert_period(period: Duration) {
    assert!(
        period > Duration::ZERO,
        "`weft::time::interval`: the argument `period` must be non-zero (got 0); an interval \
         that never waits would busy-loop its task"
    );
}

/// What an [`Interval`] does when ticks were missed (its task was busy past
/// one or more tick instants).
///
/// With ticks due at 0, 10, 20, 30 ms and the task back only at 25 ms:
/// `Burst` ticks at 25, 25, then 30; `Delay` ticks at 25, then 35, 45;
/// `Skip` ticks at 25, then 30, 40.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Tick as fast as possible until caught up (the default, as tokio's).
    #[default]
    Burst,
    /// Restart the schedule from the late tick: one period after it.
    Delay,
    /// Skip the missed ticks and keep the original phase.
    Skip,
}

impl MissedTickBehavior {
    fn next_tick(self, missed: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            MissedTickBehavior::Burst => missed.saturating_add(period),
            MissedTickBehavior::Delay => now.saturating_add(period),
            MissedTickBehavior::Skip => {
                let late = (now - missed).as_nanos();
                let period_ns = period.as_nanos();
                let into_period = u64::try_from(late % period_ns).unwrap_or(0);
                now.saturating_add(period - Duration::from_nanos(into_period))
            }
        }
    }
}

/// Ticks at a fixed period; see [`interval`].
#[derive(Debug)]
pub struct Interval {
    /// Boxed: a `Sleep` is `!Unpin`, an `Interval` is `Unpin` (as
    /// tokio's).
    delay: Pin<Box<Sleep>>,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

impl Interval {
    fn new(
        shared: crate::util::loom::sync::Arc<crate::runtime::Shared>,
        start: Instant,
        period: Duration,
    ) -> Interval {
        Interval {
            delay: Box::pin(Sleep::new(shared, start)),
            period,
            missed_tick_behavior: MissedTickBehavior::default(),
        }
    }

    /// Completes at the next tick and returns its scheduled instant.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick: `Ready(scheduled instant)` once it is due.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.delay.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let scheduled = self.delay.deadline();
        let now = Instant::now();
        let next = if now.saturating_duration_since(scheduled) > MISSED_AFTER {
            self.missed_tick_behavior
                .next_tick(scheduled, now, self.period)
        } else {
            scheduled.saturating_add(self.period)
        };
        self.delay.as_mut().reset(next);
        Poll::Ready(scheduled)
    }

    /// The next tick is one period from now.
    pub fn reset(&mut self) {
        self.reset_at(Instant::now().saturating_add(self.period));
    }

    /// The next tick completes at once.
    pub fn reset_immediately(&mut self) {
        self.reset_at(Instant::now());
    }

    /// The next tick is `after` from now.
    pub fn reset_after(&mut self, after: Duration) {
        self.reset_at(Instant::now().saturating_add(after));
    }

    /// The next tick is at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.delay.as_mut().reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The current missed-tick behaviour.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what happens when ticks are missed.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }
}
