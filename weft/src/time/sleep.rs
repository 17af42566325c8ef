//! `Sleep`: a future that completes at a deadline.
//!
//! A `Sleep` is armed at its first poll, on the wheel of the worker polling
//! it (or the outside wheel when polled off the workers), and disarmed when
//! dropped before it fires. Its state is its own: the wheel holds only the
//! deadline and the waker; whether the timer fired is read from the wheel
//! (a stale key means it fired), so no allocation is shared between the two.
//!
//! Pinned by `time.rs` (the missed-tick behaviours and the resets of an
//! interval on the paused clock, a past deadline completing at the first
//! poll, `Debug`) and `two_runtimes.rs`
//! (`a_sleep_of_one_runtime_polled_on_the_others_workers_fires`). The
//! cost rules are said where they are (the clock reading saved at
//! creation, `known_ahead`'s comparison, the home-wheel guard).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::Instant;
use crate::runtime::context;
use crate::runtime::{Shared, TimerClosed as Closed, TimerRef};
use crate::util::loom::sync::Arc;

/// Waits until `duration` has elapsed.
///
/// Equivalent to `sleep_until(Instant::now() + duration)`. Durations longer
/// than [`FAR_FUTURE`](super::FAR_FUTURE) (about 30 years) are capped to it,
/// so `sleep(Duration::MAX)` is a sleep that never ends in practice and does
/// not panic. The timer's resolution is finer than a millisecond: a sleep
/// ends once its deadline has passed, usually within ~0.1 ms of it.
///
/// # Panics
///
/// Outside a weft runtime: call it from a task, inside `Runtime::block_on`,
/// or under a `Runtime::enter` guard.
///
/// ```
/// use std::time::Duration;
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let start = weft::time::Instant::now();
///     weft::time::sleep(Duration::from_millis(2)).await;
///     assert!(start.elapsed() >= Duration::from_millis(2));
/// });
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let shared = current_runtime("sleep");
    let now = Instant::now();
    let mut sleep = Sleep::new(shared, now.saturating_add(duration));
    // A cost rule: without the reading (the `!` deleted, every test
    // passes) the first poll reads the clock itself.
    if !duration.is_zero() {
        sleep.future_at_ns = sleep.shared.time.clock.to_ns(now.into_std());
    }
    sleep
}

/// Waits until `deadline`.
///
/// # Panics
///
/// Outside a weft runtime, like [`sleep`].
///
/// ```
/// use std::time::Duration;
/// use weft::time::{Instant, sleep_until};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(1);
///     sleep_until(deadline).await;
///     assert!(Instant::now() >= deadline);
/// });
/// ```
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(current_runtime("sleep_until"), deadline)
}

#[track_caller]
pub(crate) fn current_runtime(function: &str) -> Arc<Shared> {
    match context::current() {
        Some(shared) => {
            shared.config.check_time_enabled();
            shared
        }
        None => crate::runtime::context::no_runtime(format_args!(
            "`weft::time::{function}` called outside of a weft runtime: timers need a runtime to \
             fire them. Call it from a task, inside `Runtime::block_on`, or while a \
             `Runtime::enter` guard is alive"
        )),
    }
}

/// The future returned by [`sleep`] and [`sleep_until`].
///
/// Completes once its deadline has passed. If its runtime has shut down it
/// completes at the next poll: no timer can fire any more, and waiting
/// forever would hang whoever polls it.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    shared: Arc<Shared>,
    deadline: Instant,
    /// A clock reading (ns) at which the deadline was known to be ahead;
    /// 0 if none. The first poll arms the timer without reading the clock
    /// again when there is one: a clock read is ~28 ns of a ~120 ns
    /// arm-and-cancel. A sleep first polled after its deadline is then
    /// armed already due and fires at its worker's next look at the wheel
    /// (or the keeper's), never early.
    future_at_ns: u64,
    timer: Option<TimerRef>,
    elapsed: bool,
    /// `!Unpin`, as tokio's `Sleep`: code written for tokio pins it, and
    /// code written here runs on tokio unchanged. Nothing in it is
    /// structurally pinned (its timer is a handle, not a pointer to it).
    _pinned: std::marker::PhantomPinned,
}

impl Sleep {
    pub(crate) fn new(shared: Arc<Shared>, deadline: Instant) -> Sleep {
        Sleep {
            shared,
            deadline,
            future_at_ns: 0,
            timer: None,
            elapsed: false,
            _pinned: std::marker::PhantomPinned,
        }
    }

    /// The instant at which this sleep completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has been reached and the timer fired (or the
    /// sleep completed).
    pub fn is_elapsed(&self) -> bool {
        if self.elapsed {
            return true;
        }
        match self.timer {
            Some(timer) => !self.shared.time.is_armed(timer),
            None => false,
        }
    }

    /// Moves the deadline to `deadline`. The sleep is pending again even if
    /// it had completed; a task waiting on it is woken at the new deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use weft::time::{Instant, sleep};
    ///
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut nap = std::pin::pin!(sleep(Duration::from_secs(3600)));
    ///     nap.as_mut().reset(Instant::now() + Duration::from_millis(1));
    ///     nap.await;
    /// });
    /// ```
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        // SAFETY: no field of a `Sleep` is structurally pinned (its
        // `_pinned` doc): it is only mutated in place here, never moved.
        let this = unsafe { self.get_unchecked_mut() };
        let waker = this.disarm();
        this.deadline = deadline;
        this.future_at_ns = 0;
        this.elapsed = false;
        if let Some(waker) = waker {
            // Keep the waiting task's registration, as tokio does.
            if let Poll::Ready(()) = this.poll_deadline(&waker) {
                crate::util::locks::user_code("a waker's wake (Sleep::reset)");
                waker.wake();
            } else {
                crate::util::locks::user_code("a waker's drop (Sleep::reset)");
            }
        }
    }

    /// Takes the timer off its wheel, returning its waker if it was armed.
    fn disarm(&mut self) -> Option<Waker> {
        self.timer
            .take()
            .and_then(|timer| self.shared.time.cancel(timer))
    }

    fn poll_deadline(&mut self, waker: &Waker) -> Poll<()> {
        if self.elapsed {
            return Poll::Ready(());
        }
        let shared = &self.shared;
        let time = &shared.time;
        if let Some(timer) = self.timer {
            if time.poll_armed(timer, waker) {
                return Poll::Pending;
            }
            self.timer = None;
            self.elapsed = true;
            return Poll::Ready(());
        }
        let deadline = time.clock.to_ns(self.deadline.into_std());
        // `deadline > future_at_ns` made `<` or `==` only costs a clock
        // read (never true for a sleep that saved one); `>=` is
        // equivalent (a saved reading is of a nonzero duration's start).
        let known_ahead = self.future_at_ns != 0 && deadline > self.future_at_ns;
        if !known_ahead && deadline <= time.clock.now_ns() {
            self.elapsed = true;
            return Poll::Ready(());
        }
        // Another runtime's worker arms on this runtime's outside wheel
        // (its index numbers another runtime's wheels: `two_runtimes.rs`).
        // The guard made `false` sends every sleep there: a cost
        // (contention on one lock), every test passes.
        let home = context::with_core(|core| match core {
            Some(core) if std::ptr::eq(&*core.shared, &**shared) => core.own_wheel(),
            _ => time.outside_wheel(),
        });
        match time.arm(home, deadline, waker) {
            Ok((timer, poke)) => {
                self.timer = Some(timer);
                shared.poke_timekeeper(poke);
                Poll::Pending
            }
            Err(Closed) => {
                self.elapsed = true;
                Poll::Ready(())
            }
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A completed sleep spends the task's cooperative budget: a loop of
        // elapsed sleeps yields like a loop of ready reads (`runtime/coop.rs`).
        // SAFETY: as in `reset`: nothing is pinned structurally, nothing
        // is moved.
        let this = unsafe { self.get_unchecked_mut() };
        crate::task::coop::poll_with_budget(cx, |cx| this.poll_deadline(cx.waker()))
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        let waker = self.disarm();
        crate::util::locks::user_code("a waker's drop (Sleep's drop)");
        drop(waker);
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .field("elapsed", &self.elapsed)
            .finish_non_exhaustive()
    }
}
