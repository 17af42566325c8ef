//! Steps 5 and 6 of the loop (`worker.rs`'s module doc): searching for
//! work elsewhere (another slot's ring, the global queues, another slot's
//! LIFO slot, the batch lane) and a short spin before sleeping.
//!
//! The searching state is `idle.rs`'s protocol (correctness: rule 4, a
//! last searcher that finds work wakes another; loom models in
//! `runtime/scheduler/loom_tests.rs`); the victim order and the spin are speed.

use super::{BatchCap, Core, SPIN_ROUNDS};
use crate::runtime::scheduler::idle::LeftSearching;
use crate::runtime::task::{Lane, Task};

impl Core {
    pub(super) fn next_random(&self, bound: usize) -> usize {
        // xorshift64*: cheap and good enough to pick a victim. Only where a
        // search starts: every victim is tried from there, so a poor or
        // constant answer costs contention among thieves, never a missed
        // task.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % bound
    }

    /// Step 5 of the loop. Enters the searching state if allowed.
    pub(super) fn search(&self) -> Option<Task> {
        if !self.searching.get() {
            if !self.shared.idle.transition_worker_to_searching() {
                return None;
            }
            self.searching.set(true);
        }
        self.steal_work()
    }

    /// Work from elsewhere: another slot's ring, the global queues, another
    /// slot's LIFO slot, and last the batch lane.
    pub(super) fn steal_work(&self) -> Option<Task> {
        if let Some(task) = self.take_lane(Lane::Latency) {
            return Some(task);
        }
        let remotes = &self.shared.remotes;
        let n = remotes.len();
        let start = self.next_random(n);
        let victims = (0..n).map(|i| (start + i) % n).filter(|&v| v != self.index);
        for victim in victims.clone() {
            let before = self.local.len();
            if let Some(task) = remotes[victim].steal.steal_into(&self.local) {
                self.count_steal(before);
                return Some(task);
            }
        }
        if let Some(task) = self.take_inject_batch(BatchCap::Dry) {
            return Some(task);
        }
        // Last pass: a LIFO slot whose owner has not got to it.
        for victim in victims {
            if let Some(task) = remotes[victim].take_lifo() {
                let counters = self.counters();
                counters.steals.incr();
                counters.stolen_tasks.incr();
                return Some(task);
            }
        }
        self.take_lane(Lane::Batch)
    }

    /// A short spin before sleeping: work that arrives within a few
    /// microseconds is taken without a park/unpark pair.
    ///
    /// Speed only: with no spin the worker goes straight to the sleep
    /// protocol, which alone keeps work from being stranded.
    pub(super) fn spin_for_work(&self) -> Option<Task> {
        // One spinner is enough to catch the next task; more would only
        // take turns on the cores with the thread producing the work.
        if !self.searching.get() || self.shared.idle.counts().searching > 1 {
            return None;
        }
        for _ in 0..SPIN_ROUNDS {
            // Yield rather than burn the core: on an oversubscribed machine
            // the thread producing the work may be waiting for it.
            std::thread::yield_now();
            if let Some(task) = self.search() {
                return Some(task);
            }
        }
        None
    }

    pub(super) fn stop_searching(&self) {
        self.searching.set(false);
        if self.shared.idle.transition_worker_from_searching() == LeftSearching::WasLast {
            // Rule 4: more work may be waiting; keep one worker looking.
            self.shared.notify_parked(Some(self.index));
        }
    }
}
