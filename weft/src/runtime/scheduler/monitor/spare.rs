//! Spare threads: the threads that run work lent by the monitor (a spare
//! slot, or a worker core whose demoted thread gave it back), and the
//! spawner thread that starts them.
//!
//! Invariants (correctness; `lanes.rs` and the loom models in
//! `loom_tests.rs`):
//! - A slot's ring has one owner at a time: slots are lent under the
//!   monitor's lock, one thread at a time, and a spare gives a slot back
//!   only once its ring and LIFO slot are empty (only tasks running on the
//!   holder push there).
//! - Spare threads never exceed the spare slots plus one per worker (a
//!   worker core handed back needs a thread): `Monitor::start_spares`.
//! - A demoted spare gives back what it holds without the monitor's lock
//!   (`Monitor::hand_back`) and ends.
//! - Threads are started by the spawner, never by the monitor thread
//!   (speed: thread creation can wait on C-library locks held by an ending
//!   demoted thread).

use std::sync::atomic::Ordering;

use crate::util::locks::{Condvar, MutexGuard};
use crate::util::loom::sync::Arc;

use super::{HandBack, Monitor, State};
use crate::runtime::scheduler::Shared;
use crate::runtime::scheduler::queue::Local;
use crate::runtime::scheduler::worker::{Core, RunExit};
use crate::runtime::task::Task;

impl Monitor {
    /// Finds threads for what waits for one (lent slots, orphaned worker
    /// cores): idle spares first, then threads already on their way, then
    /// new ones, asked of the spawner.
    pub(super) fn find_threads(&self, shared: &Arc<Shared>, state: &mut MutexGuard<'_, State>) {
        let waiting = state.lent.len() + state.orphans.len();
        // Threads on their way count as found (lanes.rs's
        // `a_spare_slow_to_start_is_waited_for_not_started_again`).
        let missing = waiting.saturating_sub(idle_spares(state) + state.starting);
        self.wake_idle_spares(state, waiting);
        self.start_spares(shared, state, missing);
    }

    /// Wakes idle spares, the most recently idle first, until `waiting`
    /// are woken and not yet back (or none is idle).
    fn wake_idle_spares(&self, state: &mut MutexGuard<'_, State>, waiting: usize) {
        while state.woken_spares < waiting && state.idle_spares.wake_last() {
            state.woken_spares += 1;
            self.spares_woken.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Asks the spawner thread for `count` more spare threads, as far as
    /// `max_threads` allows; returns how many it will start.
    ///
    /// Never on the monitor thread itself: creating a thread takes locks
    /// of the C library (its stack cache, a malloc arena) that a thread
    /// ending at a lowered priority may hold while it waits for a core, and
    /// the monitor stopped for that long stops every handoff (seen in a
    /// trace: [the open-loop tail](../../../../../docs/experiments.md#the-open-loop-tail)).
    pub(super) fn start_spares(
        &self,
        shared: &Arc<Shared>,
        state: &mut MutexGuard<'_, State>,
        count: usize,
    ) -> usize {
        // A thread per spare slot, and one per worker, whose core comes
        // back without a thread when its thread is demoted (lanes.rs's
        // `a_demoted_workers_core_gets_a_thread_while_every_spare_slot_is_stuck`).
        let limit = state.held.len() + shared.config.num_workers;
        let mut asked = 0;
        // At the limit with a thread still wanted only between a demoted
        // spare's hand-back and its leaving the count (`run_spare`).
        while asked < count && self.spare_threads.load(Ordering::Relaxed) < limit {
            self.spare_threads.fetch_add(1, Ordering::Relaxed);
            state.starting += 1;
            state.to_start += 1;
            asked += 1;
        }
        if asked == 0 {
            return 0;
        }
        if !state.spawner {
            // Started once, here, with nothing else to hold up yet.
            let name = Some(self.config.spawner_name.clone());
            if (self.config.spawn_thread)(shared.clone(), run_spawner, name).is_err() {
                self.spare_threads.fetch_sub(asked, Ordering::Relaxed);
                state.starting -= asked;
                state.to_start -= asked;
                return 0;
            }
            state.spawner = true;
        }
        self.wake_spawner.notify_one();
        asked
    }

    /// A spare thread ends, or one asked for will not start: one fewer
    /// counted. A read-modify-write, never a load and a store: demoted spares
    /// count themselves out without the monitor's lock, while the monitor
    /// counts new ones in under it (`loom_tests.rs`'s
    /// `spare_threads_counted_out_without_the_lock_race_the_monitor`).
    pub(super) fn spare_thread_gone(&self) {
        self.spare_threads.fetch_sub(1, Ordering::Relaxed);
    }

    /// Lends a free spare slot to a spare thread: a warm one if one waits,
    /// else a new one. Whether a slot was lent.
    pub(super) fn hand_off(&self, shared: &Arc<Shared>, state: &mut MutexGuard<'_, State>) -> bool {
        let Some(slot) = state.free.pop() else {
            return false; // every spare slot is in use: max_threads reached
        };
        let first_spare = shared.config.num_workers;
        state.held[slot.0 - first_spare] = true;
        state.lent.push(slot);
        self.handoffs.fetch_add(1, Ordering::Relaxed);
        // A spare thread per held slot at most, so the count of spare
        // threads never passes the count of spare slots (lanes.rs's
        // `a_slot_lent_while_a_core_waits_for_its_thread_gets_another_thread`).
        let waiting = state.lent.len() + state.orphans.len();
        if idle_spares(state) >= waiting {
            self.wake_idle_spares(state, waiting);
            return true;
        }
        if idle_spares(state) + state.starting >= waiting || self.start_spares(shared, state, 1) > 0
        {
            return true;
        }
        // No thread to run it: take the slot back.
        let slot = state.lent.pop().expect("pushed above");
        state.held[slot.0 - first_spare] = false;
        state.free.push(slot);
        false
    }
}

/// The spawner thread's loop: starts the spare threads the monitor asks
/// for (`Monitor::start_spares` says why not the monitor itself), until
/// shutdown.
pub(crate) fn run_spawner(shared: &Arc<Shared>) {
    let _counted = shared.threads.count(crate::metrics::ThreadKind::Monitor);
    let monitor = &shared.monitor;
    let mut state = monitor.lock();
    while !state.shutdown {
        if state.to_start == 0 {
            state = monitor
                .wake_spawner
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
            continue;
        }
        state.to_start -= 1;
        drop(state);
        // Outside the monitor's lock: the name comes from the program.
        let started = (monitor.config.spawn_thread)(shared.clone(), run_spare, None);
        state = monitor.lock();
        // (A started thread counts itself, in `run_spare`.)
        if started.is_err() {
            state.starting -= 1;
            monitor.spare_thread_gone();
        }
    }
    // Asked for and not started: no longer coming.
    state.starting -= state.to_start;
    monitor
        .spare_threads
        .fetch_sub(state.to_start, Ordering::Relaxed);
    state.to_start = 0;
}

/// Spare threads idle or woken and not yet back: each will take a slot or
/// an orphan that waits.
fn idle_spares(state: &State) -> usize {
    state.idle_spares.len() + state.woken_spares
}

/// A spare thread's loop: run lent slots and orphaned worker cores until
/// none comes for `spare_idle_timeout`, the runtime shuts down, or the
/// monitor demotes this thread (which then gives back what it holds and
/// ends, without taking the monitor's lock). (`pub(super)` for the loom
/// models, which run it on their own threads: no thread starts under loom.)
pub(super) fn run_spare(shared: &Arc<Shared>) {
    let _counted = shared.threads.count(crate::metrics::ThreadKind::Spare);
    let monitor = &shared.monitor;
    // Counted here, before the thread takes any work, not by the spawner
    // once the thread is created: a task this spare runs is then never seen
    // with the spare uncounted (`lanes.rs`'s
    // `every_spare_thread_is_joined_by_the_runtimes_drop`).
    monitor.spares_started.fetch_add(1, Ordering::Relaxed);
    let wake_me = Arc::new(Condvar::new());
    let mut state = monitor.lock();
    state.starting -= 1;
    let retired = loop {
        if state.shutdown {
            break false;
        }
        if let Some(core) = state.orphans.pop() {
            drop(state);
            if run_orphan(monitor, core) == RunExit::Demoted {
                monitor.spare_thread_gone();
                return;
            }
            state = monitor.lock();
            continue;
        }
        if let Some((index, local)) = state.lent.pop() {
            drop(state);
            let Some(local) = run_lent(shared, index, local) else {
                monitor.spare_thread_gone();
                return;
            };
            state = monitor.lock();
            state.held[index - shared.config.num_workers] = false;
            if !state.shutdown {
                state.free.push((index, local));
            }
            continue;
        }
        state.idle_spares.push(&wake_me);
        let (guard, wait) = wake_me
            .wait_timeout(state, monitor.config.spare_idle_timeout)
            .unwrap_or_else(|e| e.into_inner());
        state = guard;
        if state.idle_spares.remove(&wake_me) {
            // Not woken for work (timed out, spuriously, or shutdown):
            // retire once timed out with nothing to take.
            if wait.timed_out() && state.lent.is_empty() && state.orphans.is_empty() {
                break true;
            }
        } else {
            // Woken for a slot or an orphan; if another spare took it
            // first, wait again rather than retire.
            state.woken_spares -= 1;
        }
    };
    monitor.spare_thread_gone();
    drop(state);
    if retired {
        monitor.spares_retired.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs an orphaned worker core on this thread: this thread is that worker
/// until shutdown (then it closes the core) or its own demotion (then it
/// hands the core back to the monitor). How the run ended.
fn run_orphan(monitor: &Monitor, core: Core) -> RunExit {
    let exit = {
        let _on_slot = core.remote_watch().attach_thread();
        let _core = crate::runtime::context::set_core(&core);
        core.run()
    };
    match exit {
        RunExit::Shutdown => core.close(),
        RunExit::Demoted => monitor.hand_back(HandBack::Worker(core)),
    }
    exit
}

/// Runs lent spare slot `index` until it finds no work; its ring back, or
/// `None` when the monitor demoted this thread meanwhile (the slot is then
/// handed back to the monitor).
fn run_lent(shared: &Arc<Shared>, index: usize, local: Local<Task>) -> Option<Local<Task>> {
    let core = Core::new(index, shared.clone(), local);
    {
        let _on_slot = core.remote_watch().attach_thread();
        let _core = crate::runtime::context::set_core(&core);
        core.run_spare();
    }
    let demoted = core.remote_watch().is_thread_demoted();
    let local = core.into_local();
    if demoted {
        shared.monitor.hand_back(HandBack::Slot(index, local));
        return None;
    }
    if shared.config.time_slices {
        // Its last poll may have been a long one, its slice lengthened, and
        // the slot taken by another thread before the monitor's next sample
        // (which then leaves it alone).
        crate::runtime::sys::request_short_slice();
    }
    Some(local)
}
