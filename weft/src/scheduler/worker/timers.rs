//! The worker's side of timers: which wheels it fires and when, how the
//! keeper sleeps, and the rules that keep dense timers cheap (each rule's
//! measurement is at its constant). The handshake deciding who keeps time
//! is `time/driver.rs`'s; `Core::park` calls into this file.
//!
//! Mutation testing (2026-11-25, `MUTANTS_JUDGE=tests`, 52 mutants): 21
//! caught by a first pass (`lib`, `time`, `idle_cpu`, `metrics`); the 31
//! others were run against the whole suite: 1 hung it (the keeper's
//! poller-or-condvar test turned around: readiness no longer wakes it),
//! 27 passed, 3 failed tests that have nothing to do with timers
//! (`lanes.rs`'s slow-start thread
//! count, now fixed as a test that could fail by itself, and twice
//! `a_default_task_with_a_slow_poll_moves_to_the_batch_lane`; not
//! trusted as catches). Most are the cost rules of this file, which
//! change when timers fire or who helps, never whether a due timer
//! fires: `FIRED_ALONE_MAX` and the helper wakes (`fire_timers`' two
//! thresholds, `help_with_fired_timers`: 13), the `KEEPER_MIN_GAP_NS`
//! bookkeeping (`last_fired_ns`, `may_fire_again`, the keeper's gap: 9),
//! the "more due" hint (`|=` made `&=`, 3: the rest fire at the next check
//! or park) and `fire_timers`' answer made never true (the park's
//! re-check finds the fired tasks); equivalent: the own-wheel test's `&&`
//! made `||` (a wheel with nothing due fires nothing) and the keeper's
//! `wake_at > now` made `>=` (a zero-length sleep). `wheels ==
//! Wheels::All` turned around is a cost too: the keeper woken for a
//! timer on a stuck worker's wheel no longer fires it at the park, finds
//! it still due and goes round its loop until its periodic check
//! (`next_task`, which then fires every wheel) comes; `tests/time.rs`'s
//! `a_timer_on_a_stuck_workers_own_wheel_is_fired_by_the_idle_worker`
//! (stall monitor off) passes, the keeper waking 30-250 times a timer
//! instead of 2-4. That count is not asserted: without the mutant the
//! test saw 38 wakes once in 5 runs beside two CPU hogs (likely a keeper
//! going round while the wheel's owner, preempted, held its lock:
//! `fire_due`'s `try_lock` skips it). The paused clock's "no jump while
//! I/O delivers" (`woken > 0` made never true, `test-util` only) is
//! killed by `tests/time.rs`'s `a_paused_clock_does_not_jump_past_ready_io`
//! (5 of 5 runs: the clock jumped the hour).

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
/// `sleep(1 ms)` loop never waits on it).
///
/// 100,000 timers over a second on 2 workers (timers lane; weft's CPU and
/// p99 lateness, tokio's CPU in the same run; 2-4 runs each):
/// - 150 µs: 0.16-0.19 s, 0.18-0.26 ms (before `FIRED_ALONE_MAX`);
/// - 300 µs: 0.09-0.10 s, 0.33 ms (tokio 0.08-0.09 s);
/// - 350 µs: 0.09-0.10 s, 0.38-0.41 ms (tokio 0.09 s);
/// - 400 µs: 0.08 s, 0.44 ms (tokio 0.09 s);
/// - 1 ms: 0.10 s, 1.07 ms. (tokio's own p99: 2 ms.)
///
/// 400 µs is the shortest gap whose CPU stays under tokio's.
const KEEPER_MIN_GAP_NS: u64 = 400_000;

/// Tasks of fired timers a worker starts on alone before it wakes another
/// worker to help. Timer tasks are usually short (a timeout's check, a
/// heartbeat): with 100,000 timers over a second, waking a helper for each
/// batch of ~30 cost 0.17-0.19 s of CPU against 0.10-0.11 s without
/// (KEEPER_MIN_GAP 300 µs, 2 runs each). A smaller batch still gets help if
/// it is not drained [`UNHELPED_WAIT_NS`] later (`next_task`).
const FIRED_ALONE_MAX: usize = crate::time::driver::FIRE_BUDGET / 2;

/// How long tasks of timers fired without a helper may wait in the ring
/// before a helper is woken (checked at the periodic check).
const UNHELPED_WAIT_NS: u64 = 200_000;

/// Whose timer wheels a worker fires.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Wheels {
    /// Its own and the outside wheel (a busy worker's periodic check).
    OwnAndOutside,
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
        if wheels == Wheels::All {
            for wheel in (0..outside).filter(|&w| w != own) {
                if time.is_due(wheel, now) {
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
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| waker.wake()));
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
    /// registration (`io/driver.rs`): a keeper that read 0 is poked.
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
