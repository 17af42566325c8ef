//! What a worker runs next: steps 0-4 of the loop (`worker.rs`'s module
//! doc): the lanes, a stalled slot's queue, the inject queue's batches, the
//! LIFO slot and the ring; and the periodic check's interval and the batch
//! lane's pay.
//!
//! Every rule here is an order of picks, not a path to a task: a worker
//! about to sleep re-checks every queue (`idle.rs`, rule 4), so a pick
//! made in another order delays a task, never strands it (the loom models
//! of `worker/loom_tests.rs` and `runtime/scheduler/loom_tests.rs`). Which order
//! is for fairness and which for speed is said at each rule.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::{
    BatchCap, Core, DRY_BATCH_CAP, MAX_BATCH_CREDIT_NS, MAX_GLOBAL_INTERVAL, MIN_GLOBAL_INTERVAL,
    Wheels,
};
use crate::runtime::scheduler::MAX_LIFO_STREAK;
use crate::runtime::task::{Lane, Task};

impl Core {
    pub(super) fn next_task(&self) -> Option<Task> {
        let countdown = self.ticks_to_global_check.get() - 1;
        self.ticks_to_global_check.set(countdown);
        if countdown == 0 {
            self.tune_global_interval();
            self.help_with_fired_timers();
            self.fire_timers(Wheels::OwnOutsideAndStalled);
            self.poll_io_now();
            // The batch lane's share comes before the latency lane, so a
            // latency flood cannot starve it.
            // `> 0`: at exactly zero the lane has earned nothing yet
            // (fairness: `lanes.rs`'s share test).
            if self.batch_credit_ns.get() > 0 {
                if let Some(task) = self.take_lane(Lane::Batch) {
                    return Some(task);
                }
            }
        } else if self.timers_due.get() {
            self.fire_timers(Wheels::OwnOutsideAndStalled);
        }
        if let Some(task) = self.take_lane(Lane::Latency) {
            return Some(task);
        }
        // smol's half of the policy: outside work is drained now, not only
        // at the periodic check, when the ring is dry or a task has just
        // yielded (a yield asks to let others run, and the inject queue's
        // tasks are others too: tokio gets the same effect by parking
        // yielded tasks outside its run queue), and before a LIFO task when
        // outside work piles up (step 1 of the module doc). The backlog flag
        // is refreshed at every batch: one length read per batch, never one
        // per tick on the contended inject indices.
        let dry = self.yielded.replace(false) || self.local.is_empty();
        if (dry || countdown == 0) && self.shared.any_stalled.load(Ordering::Relaxed) {
            // Tasks queued behind a stalled worker's poll waited longest.
            // An order of picks, not a path to them: the same tasks are
            // reached by `steal_work`, by the spare the monitor hands them
            // to, and by their owner after its poll.
            if let Some(task) = self.rescue_stalled() {
                return Some(task);
            }
        }
        // A fairness rule, not a path: the inject queue is also drained
        // whenever the ring and LIFO slot are empty (the last line of this
        // function), so outside work is delayed, not lost; without it an
        // outside spawn waited seconds behind tasks waking each other. The
        // backlog clause's short-ring bound is a speed rule (step 1 of the
        // module doc); a dry worker takes the larger batch
        // (`inject_batches.rs`).
        if dry
            || countdown == 0
            || (self.inject_backlog.get()
                && self.remote().has_lifo()
                && self.local.len() < self.shared.config.inject_batch_cap)
        {
            let cap = if dry { BatchCap::Dry } else { BatchCap::Check };
            if let Some(task) = self.take_inject_batch(cap) {
                // The batch waited in the inject queue longer than the task
                // in the LIFO slot: that one queues behind it.
                if let Some(lifo) = self.remote().take_lifo() {
                    self.push_back(lifo);
                }
                return Some(task);
            }
        }
        if let Some(task) = self.take_own_lifo() {
            return Some(task);
        }
        self.lifo_streak.set(0);
        self.local
            .pop()
            .or_else(|| self.take_inject_batch(BatchCap::Dry))
    }

    /// Takes the queued tasks of a slot the monitor found stalled: its LIFO
    /// task, or half its ring (through the thieves' side).
    ///
    /// Speed only (`steal_work`, the spare and the owner after its poll
    /// reach the same tasks): without it a task could stay trapped for
    /// hundreds of milliseconds in the mixed lane's tail; rescuing only
    /// when the ring is dry was tried and dropped
    /// ([handoffs](../../../../docs/experiments.md#handoffs)).
    pub(super) fn rescue_stalled(&self) -> Option<Task> {
        let remotes = &self.shared.remotes;
        for (victim, remote) in remotes.iter().enumerate() {
            if victim == self.index || !remote.watch.is_stalled() {
                continue;
            }
            let before = self.local.len();
            let task = remote
                .take_lifo()
                .or_else(|| remote.steal.steal_into(&self.local));
            if let Some(task) = task {
                self.count_steal(before);
                return Some(task);
            }
        }
        None
    }

    /// Counts a successful steal: the task returned plus what it moved to
    /// the ring, which held `before` tasks (saturating: thieves may take
    /// from this ring meanwhile).
    pub(super) fn count_steal(&self, before: usize) {
        let counters = self.counters();
        counters.steals.incr();
        counters
            .stolen_tasks
            .add((self.local.len().saturating_sub(before) + 1) as u64);
    }

    /// A task from the runtime-wide queue of `Latency` or `Batch`: an
    /// emptiness check first, so an unused lane costs two loads of lines
    /// no one writes.
    #[inline]
    pub(super) fn take_lane(&self, lane: Lane) -> Option<Task> {
        let queue = self.shared.lane_queue(lane);
        if queue.is_empty() {
            return None;
        }
        queue.pop()
    }

    #[inline]
    pub(super) fn take_own_lifo(&self) -> Option<Task> {
        let task = self.remote().take_lifo()?;
        let streak = self.lifo_streak.get();
        if streak < MAX_LIFO_STREAK {
            self.lifo_streak.set(streak + 1);
            self.counters().lifo_hits.incr();
            return Some(task);
        }
        // Streak exhausted: the LIFO task queues behind older work.
        self.push_back(task);
        None
    }

    /// A batch from the inject queue (its size: `Inject::batch_limit`),
    /// `cap` as [`BatchCap`] says (one while the monitor finds a poll
    /// stalled); the first is returned, the rest go to the ring.
    pub(super) fn take_inject_batch(&self, cap: BatchCap) -> Option<Task> {
        let inject = &self.shared.inject;
        if inject.is_empty() {
            self.inject_backlog.set(false);
            return None;
        }
        let config = &self.shared.config;
        let cap = if self.shared.any_stalled.load(Ordering::Relaxed) {
            // Long polls are running: a batch moved into this ring would
            // wait behind this worker's next poll, which may be the next
            // long one, until a thief or the monitor's rescue gets to it.
            // Left in the inject queue, each task goes to whichever thread
            // is free first. (Performance only: every task is found either
            // way. A flag only the monitor writes, so a workload with no
            // stall pays one load of a line nobody writes.)
            1
        } else {
            match cap {
                BatchCap::Check => config.inject_batch_cap,
                BatchCap::Dry => config.inject_batch_cap.max(DRY_BATCH_CAP),
            }
        };
        let limit = inject.batch_limit(&self.local, config.num_workers, cap);
        let (task, taken) = inject.pop_batch_into(&self.local, &self.stash, limit)?;
        // A hint for the order of the next picks (step 1 of the module
        // doc), not for liveness: mutated, the loom models pass.
        self.inject_backlog
            .set(inject.len() >= config.inject_batch_cap);
        let counters = self.counters();
        counters.inject_batches.incr();
        counters.inject_tasks.add(taken as u64);
        if taken > 1 && !self.searching.get() {
            // More than this worker can start now: let an idle one help.
            // Speed only: each batched
            // task's push already notified a sleeper or found a searcher,
            // and a worker about to sleep re-checks every ring (rule 4),
            // so the rest of the batch is found without this wake, later.
            self.shared.notify_parked(Some(self.index));
        }
        Some(task)
    }

    /// Sets how many ticks until the next periodic check, from the mean
    /// tick length, so checks come about every `global_check_target_ns`;
    /// and pays the `Batch` lane its share of the time since the last one.
    ///
    /// Both are policy, clamped, never a path to a task: a mean far off
    /// brings a check at nearly every tick (`inject_batches.rs`), and the
    /// lane's pay is bounded from above and below by `lanes.rs`.
    pub(super) fn tune_global_interval(&self) {
        let now = Instant::now();
        self.publish_clock(now);
        self.account_busy_time(now);
        let elapsed = now.duration_since(self.last_global_check.get()).as_nanos() as f64;
        self.last_global_check.set(now);
        let tick_ns = elapsed / f64::from(self.global_interval.get());
        let mean = match self.mean_tick_ns.get() {
            0.0 => tick_ns,
            mean => 0.8 * mean + 0.2 * tick_ns,
        };
        self.mean_tick_ns.set(mean);
        let target = self.shared.config.global_check_target_ns as f64;
        let interval = match self.shared.config.global_queue_interval {
            Some(fixed) => fixed,
            None => {
                ((target / mean.max(1.0)) as u32).clamp(MIN_GLOBAL_INTERVAL, MAX_GLOBAL_INTERVAL)
            }
        };
        self.global_interval.set(interval);
        self.ticks_to_global_check.set(interval);
        // The batch lane earns its share of the awake time since the last
        // check (`last_global_check` restarts when the worker wakes).
        let earned = (elapsed * self.shared.config.batch_share) as i64;
        let credit = self.batch_credit_ns.get().saturating_add(earned);
        self.batch_credit_ns.set(credit.min(MAX_BATCH_CREDIT_NS));
    }
}
