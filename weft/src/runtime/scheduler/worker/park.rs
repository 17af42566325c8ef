//! Step 7 of the loop (`worker.rs`'s module doc): sleeping, as `idle.rs`'s
//! protocol says, as the time keeper of `runtime/time/driver.rs` (waiting in the
//! reactor while sources are registered), and the reactor's poller handed
//! on after a readiness wake-up (`runtime/io/driver.rs`).
//!
//! Correctness: a worker registers asleep, then re-checks every queue
//! (`idle.rs`, rule 4; the loom model
//! `work_behind_a_long_poll_reaches_the_sleeping_worker`); a keeper woken
//! by readiness gives up the poller before it polls a task
//! (`tests/net.rs`).

use std::time::Instant;

use super::{Core, Wheels, Woken};

impl Core {
    /// A keeper woken by readiness hands the poller over, so the next
    /// readiness is not left behind the poll this worker is about to start
    /// (`runtime/io/driver.rs`). With several tasks woken a helper is wanted
    /// anyway: `notify_parked` wakes one to search, and it takes the
    /// poller when it finds nothing. With one task, a sleeper is only
    /// poked: it stays registered asleep, loops in `park`, takes the free
    /// keeper role and waits in the poller, without a search.
    ///
    /// Pinned by `net.rs`'s
    /// `readiness_is_not_stuck_behind_the_long_poll_of_the_task_it_woke_first`.
    /// The split by `woken` is a choice of wake (speed), not of whether one
    /// happens: each branch gets the poller taken.
    pub(super) fn hand_over_poller(&self, woken: usize) {
        if woken > 1 {
            self.shared.notify_parked(Some(self.index));
        } else if let Some(sleeper) = self.shared.idle.any_sleeper_except(self.index) {
            self.shared.unpark_slot(sleeper);
        }
    }

    /// Delivers I/O readiness already there, without blocking, at the
    /// periodic check (a busy worker's look; skipped while nothing is
    /// registered or the keeper holds the poller).
    #[inline]
    pub(super) fn poll_io_now(&self) {
        // Pinned by `tests/net.rs`'s
        // `readiness_reaches_a_task_while_the_worker_stays_busy`; the
        // helper wake below is speed only (the woken tasks wait for this
        // worker or a thief otherwise).
        if self.deliver_io_now() > 1 {
            // More than this worker should start alone: let one help.
            self.shared.notify_parked(Some(self.index));
        }
    }

    /// Delivers the readiness already there; returns how many tasks it
    /// woke (they are in this worker's queue).
    pub(super) fn deliver_io_now(&self) -> usize {
        #[cfg(not(loom))]
        {
            self.waking_batch.set(true);
            let woken = self.shared.io.poll_ready_now();
            self.waking_batch.set(false);
            woken
        }
        #[cfg(loom)]
        0
    }

    pub(super) fn has_tasks(&self) -> bool {
        !self.local.is_empty() || self.remote().has_lifo()
    }

    /// Step 7: sleep until a notifier picks this worker, the runtime shuts
    /// down, or (as the keeper of `runtime/time/driver.rs`) a timer is due.
    pub(super) fn park(&self) -> Woken {
        // `has_tasks` is a shortcut, not a rule: without it the worker
        // registers asleep and its re-check below finds its own ring, so a
        // sleeper (perhaps itself) is woken for it.
        if self.has_tasks() || (self.may_fire_again() && self.fire_timers(Wheels::All)) {
            return Woken::DidNotSleep;
        }
        let hooks = &self.shared.config.park_hooks;
        if let Some(hook) = &hooks.on_park {
            let _ = crate::util::locks::call_user("on_thread_park", || hook());
        }
        let woken = self.sleep();
        if let Some(hook) = &hooks.on_unpark {
            let _ = crate::util::locks::call_user("on_thread_unpark", || hook());
        }
        woken
    }

    /// The sleep itself: registered asleep, re-check, then parked until a
    /// notifier, a timer or readiness (`park`'s).
    fn sleep(&self) -> Woken {
        let idle = &self.shared.idle;
        let time = &self.shared.time;
        let was_searching = self.searching.replace(false);
        // Every worker re-checks the queues once it is registered asleep,
        // not only the last searcher (as Go's `findrunnable` does): a worker
        // that was not searching may have looked at the queues before a
        // push whose pusher saw a searcher and woke nobody, while that
        // searcher's own wake (rule 4) found this worker still awake. The
        // model `work_behind_a_long_poll_reaches_the_sleeping_worker` found
        // that interleaving: the pushed task then waited behind the
        // searcher's long poll while this worker slept.
        idle.transition_worker_to_parked(self.index, was_searching);
        self.shared.notify_if_work_pending(self.index);
        self.counters().parks.incr();
        self.account_busy_time(Instant::now());
        if time.clock.is_paused() {
            // The keeper may now jump the paused clock: let it look.
            self.shared.poke_keeper();
        }
        loop {
            if self.shared.is_shutdown() {
                time.end_keeping(self.index);
                if !idle.unpark_worker_by_id(self.index) {
                    // A notifier had picked us, counting us as searching:
                    // `close` gives that back.
                    self.searching.set(true);
                }
                return Woken::ByNotifier;
            }
            let (timer_due, io_woken) = match time.begin_keeping(self.index) {
                None => {
                    self.remote().parker.park();
                    (false, 0)
                }
                Some(wake_at) => self.keep_time_until(wake_at),
            };
            let notified = !idle.is_parked(self.index);
            // The timer and I/O wakes below are out of the loom models'
            // reach (loom builds no reactor, and its `wait_timeout` never
            // times out): `tests/http.rs` (a timer that must wake its
            // keeper) and `tests/net.rs` (readiness behind a long poll)
            // pin them.
            if notified || timer_due || io_woken > 0 {
                time.end_keeping(self.index);
                // Woken by a timer, the worker takes itself off the sleeper
                // list, unless a notifier got there first and counted it as
                // searching.
                if notified || !idle.unpark_worker_by_id(self.index) {
                    self.searching.set(true);
                }
                self.counters().unparks.incr();
                let now = Instant::now();
                self.publish_clock(now);
                self.last_global_check.set(now);
                self.busy_since.set(now);
                if io_woken > 0 {
                    self.hand_over_poller(io_woken);
                }
                return if notified {
                    Woken::ByNotifier
                } else if io_woken > 0 {
                    Woken::ByIo
                } else {
                    Woken::ByTimer
                };
            }
        }
    }
}
