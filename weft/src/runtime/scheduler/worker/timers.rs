//! The worker's side of timers: which wheels it fires and when, how the
//! keeper sleeps, and the rules that keep dense timers cheap (each constant
//! says where it was measured). The handshake deciding who keeps time
//! is `runtime/time/driver.rs`'s; `Core::park` calls into this file.
//!
//! Correctness: a due timer fires, and a keeper sleeping in the reactor's
//! poller is woken by readiness (`sleep_as_keeper`); a paused test clock does
//! not jump while I/O delivers, pinned by `tests/time.rs`'s
//! `a_paused_clock_does_not_jump_past_ready_io`. Everything else here is a
//! cost rule, which changes when timers fire or who helps, never whether a
//! due timer fires: `FIRED_ALONE_MAX` and the helper wakes, the
//! `KEEPER_MIN_GAP_NS` bookkeeping, the "more due" hint (the rest fire at
//! the next check or park), and a parking worker firing every wheel
//! (`Wheels::All`: without it a keeper woken for a stuck worker's timer
//! goes round its loop until its periodic check fires it; `tests/time.rs`'s
//! `a_timer_on_a_stuck_workers_own_wheel_is_fired_by_the_idle_worker`
//! pins that the timer fires, not how many wakes it took).

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Core;

/// How often a keeper whose paused test clock may not jump yet looks again
/// (a worker or `block_on` that goes idle also pokes it).
const PAUSED_CLOCK_RECHECK: Duration = Duration::from_millis(1);

/// The least time a keeper sleeps after it last fired timers, so timers a
/// few microseconds apart are fired in batches instead of one futex wake
/// each: 100,000 timers spread over a second would otherwise keep a core
/// busy waking. The cost is lateness: at most this much plus the wake-up
/// when timers are dense; none for a timer armed after a quiet gap (a
/// `sleep(1 ms)` loop never waits on it). A speed rule (CPU against
/// lateness), not correctness: 400 µs is the shortest gap whose CPU stays
/// under tokio's in the timers lane.
/// Measured: docs/experiments.md#dense-timers. None under loom: a model
/// must take the same path at every replay, and this rule reads the real
/// clock.
const KEEPER_MIN_GAP_NS: u64 = if cfg!(loom) { 0 } else { 400_000 };

/// Tasks of fired timers a worker starts on alone before it wakes another
/// worker to help. Timer tasks are usually short (a timeout's check, a
/// heartbeat), so under dense timers a helper woken for each small batch
/// costs more CPU than it saves (a speed rule). A smaller batch still gets
/// help if it is not drained [`UNHELPED_WAIT_NS`] later (`next_task`).
/// Measured: docs/experiments.md#dense-timers
const FIRED_ALONE_MAX: usize = crate::runtime::time::driver::FIRE_BUDGET / 2;

/// How long tasks of timers fired without a helper may wait in the ring
/// before a helper is woken (checked at the periodic check).
const UNHELPED_WAIT_NS: u64 = 200_000;

/// Whose timer wheels a worker fires.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Wheels {
    /// Its own, the outside wheel, and the wheel of every worker the stall
    /// monitor found stalled (a busy worker's periodic check). A stalled
    /// worker reaches no periodic check of its own until its poll returns:
    /// without the last part its timers wait for that poll whenever no
    /// other worker goes idle (correctness of "no timer waits on a stuck
    /// poll": `worker/loom_tests.rs`'s
    /// `a_timer_on_a_stalled_workers_wheel_fires_from_the_busy_one` and
    /// `tests/time.rs`'s `a_stalled_workers_timer_fires_while_the_other_is_busy`
    /// fail without it). While nothing is stalled this costs one relaxed load
    /// of a line the monitor writes only when a stall begins or ends.
    OwnOutsideAndStalled,
    /// Every wheel with a due timer whose lock is free: a worker about to
    /// sleep or just woken serves the timers of workers stuck in a poll.
    All,
}

impl Core {
    /// Fires the due timers of `wheels`; returns whether any fired (their
    /// tasks are now in this worker's LIFO slot and ring).
    pub(super) fn fire_timers(&self, wheels: Wheels) -> bool {
        let time = &self.shared.time;
        let now = time.clock.now_ns();
        let mut wakers = self.fired.take();
        let mut more = false;
        let outside = time.outside_wheel();
        let own = self.own_wheel();
        if own != outside && time.is_due(own, now) {
            more |= time.fire_due(own, now, true, &mut wakers);
        }
        if time.is_due(outside, now) {
            more |= time.fire_due(outside, now, false, &mut wakers);
        }
        let others = match wheels {
            Wheels::All => true,
            Wheels::OwnOutsideAndStalled => self.shared.any_stalled.load(Ordering::Relaxed),
        };
        if others {
            let remotes = &self.shared.remotes;
            for wheel in (0..outside).filter(|&w| w != own) {
                let wanted = wheels == Wheels::All || remotes[wheel].watch.is_stalled();
                if wanted && time.is_due(wheel, now) {
                    more |= time.fire_due(wheel, now, false, &mut wakers);
                }
            }
        }
        self.timers_due.set(more);
        let fired = wakers.len();
        if fired > 0 {
            self.last_fired_ns.set(Some(now));
        }
        self.waking_batch.set(true);
        for waker in wakers.drain(..) {
            // A foreign waker that panics must not take the worker down.
            let _ = crate::util::locks::call_user("a waker's wake (fired timer)", || waker.wake());
        }
        self.waking_batch.set(false);
        self.fired.set(wakers);
        if fired > FIRED_ALONE_MAX {
            // More than this worker should run alone: let an idle one help.
            self.shared.notify_parked(Some(self.index));
        } else if fired > 1 {
            self.unhelped_timers.set(true);
        }
        fired > 0
    }

    /// Wakes a helper if tasks of timers this worker fired alone still wait
    /// [`UNHELPED_WAIT_NS`] later.
    pub(super) fn help_with_fired_timers(&self) {
        if !self.unhelped_timers.get() {
            return;
        }
        if self.local.is_empty() {
            self.unhelped_timers.set(false);
        } else if self.shared.time.clock.now_ns()
            >= self.last_fired_ns.get().unwrap_or(0) + UNHELPED_WAIT_NS
        {
            self.unhelped_timers.set(false);
            self.shared.notify_parked(Some(self.index));
        }
    }

    /// Whether [`KEEPER_MIN_GAP_NS`] has passed since this worker last fired
    /// timers. Before it sleeps a worker fires due timers only then:
    /// otherwise, with timers a few microseconds apart, every pass through
    /// `park` would find a new one due and the worker would never sleep.
    pub(super) fn may_fire_again(&self) -> bool {
        self.last_fired_ns
            .get()
            .is_none_or(|last| self.shared.time.clock.now_ns() >= last + KEEPER_MIN_GAP_NS)
    }

    /// Sleeps as the keeper until `wake_at` (ns on the runtime's clock), an
    /// unpark, or I/O readiness; returns whether a timer is due and how
    /// many tasks readiness woke (they are in this worker's queue).
    pub(super) fn keep_time_until(&self, wake_at: u64) -> (bool, usize) {
        let time = &self.shared.time;
        if wake_at == u64::MAX {
            return (false, self.sleep_as_keeper(None));
        }
        if time.clock.is_paused() {
            // A paused clock does not jump while I/O is delivering.
            let woken = self.deliver_io_now();
            if woken > 0 {
                return (false, woken);
            }
            #[cfg(feature = "test-util")]
            if self.shared.may_auto_advance() {
                time.clock.advance_to(wake_at);
                return (true, 0);
            }
            return (false, self.sleep_as_keeper(Some(PAUSED_CLOCK_RECHECK)));
        }
        let gap_end = self
            .last_fired_ns
            .get()
            .map_or(0, |last| last + KEEPER_MIN_GAP_NS);
        let wake_at = wake_at.max(gap_end);
        let now = time.clock.now_ns();
        let mut woken = 0;
        if wake_at > now {
            woken = self.sleep_as_keeper(Some(Duration::from_nanos(wake_at - now)));
        }
        (time.clock.now_ns() >= wake_at, woken)
    }

    /// The keeper's sleep: in the reactor's poller while any source is
    /// registered, so readiness wakes it too (`park.rs`); on the condvar
    /// otherwise (cheaper to wake, and its timeout is not rounded up to
    /// whole milliseconds as epoll's is). The count is read after
    /// `begin_keeping`'s fence, which pairs with the one after a first
    /// registration (`runtime/io/driver.rs`): a keeper that read 0 is poked.
    /// Returns how many tasks readiness woke.
    fn sleep_as_keeper(&self, timeout: Option<Duration>) -> usize {
        let parker = &self.remote().parker;
        #[cfg(loom)]
        {
            match timeout {
                None => parker.park(),
                Some(timeout) => {
                    parker.park_timeout(timeout);
                }
            }
            0
        }
        #[cfg(not(loom))]
        {
            let io = &self.shared.io;
            if io.num_registered() == 0 {
                match timeout {
                    None => parker.park(),
                    Some(timeout) => {
                        parker.park_timeout(timeout);
                    }
                }
                return 0;
            }
            let mut woken = 0;
            self.waking_batch.set(true);
            parker.park_in_poller(|| woken = io.wait(timeout, || parker.has_token()));
            self.waking_batch.set(false);
            woken
        }
    }
}
