//! A worker thread's run loop.
//!
//! # The loop
//!
//! Each iteration ("tick") picks one task and polls it:
//!
//! 0. Lanes (`runtime/task/lane.rs`): at the periodic check, a `Batch` task if the
//!    worker owes the batch lane its share (`batch_credit_ns`: it earns
//!    `batch_share` of the awake time between checks and pays with timed
//!    batch polls); then, at every tick, a `Latency` task if that queue is
//!    not empty; and when the monitor has flagged a stalled slot, that
//!    slot's queued tasks before any inject batch (they waited longest).
//! 1. On a periodic global check (every `global_interval` ticks), when the
//!    local ring is empty, when a task has yielded since the last look, or
//!    when outside work is piling up while this worker has little of its
//!    own (the last batch left a full batch behind in the inject queue, a
//!    task waits in the LIFO slot, and the ring holds less than a batch):
//!    a batch from the inject queue, the first run now, the rest appended
//!    to the ring, and a task waiting in the LIFO slot queued behind them
//!    (the batch waited longer). How large a batch may be depends on what
//!    it overtakes: at the periodic check and under the backlog rule local
//!    work is waiting, so `inject_batch_cap` (default 32) bounds it; with
//!    the ring empty or after a yield nothing local is overtaken, and the
//!    bound is half the ring ([`DRY_BATCH_CAP`], tokio's bound for its
//!    empty-queue batch; why it decides busy1/busy2: `runtime/scheduler/mod.rs`).
//!    A batch that fills the whole ring is worse: the LIFO chatter after
//!    it overflows. The backlog rule is what lets remote spawns overtake a
//!    chain of tasks that each spawn the next (busy2); its short-ring
//!    condition keeps a ring's own overflow (parked in the inject queue by
//!    `push_back`) from counting as a backlog (ping_pong). All speed rules:
//!    [inject batches](../../../../docs/experiments.md#inject-batches).
//!    While the stall monitor finds some poll stalled (`Shared::any_stalled`)
//!    a batch is one task: tasks moved into a ring were trapped behind
//!    that worker's next long poll (speed, the mixed lane's tail: a cap of
//!    4 measured like no cap; [handoffs](../../../../docs/experiments.md#handoffs)).
//! 2. The LIFO slot, unless it has run [`MAX_LIFO_STREAK`] times in a row
//!    (then its task goes to the back of the ring).
//! 3. The ring, oldest first.
//! 4. A batch from the inject queue.
//! 5. Searching: steal half of another worker's ring, then the inject queue,
//!    then (last pass) another worker's LIFO slot.
//! 6. A searcher that found nothing yields its core and searches again,
//!    [`SPIN_ROUNDS`] times: work that arrives within that window is taken
//!    without a park/unpark pair: a few `sched_yield` calls per sleep
//!    save the futex pair and the latency of a wake. While it spins the
//!    worker is the searcher, so a push or the keeper's hand-over after
//!    readiness wakes no sleeper and the spinner steals the work; the
//!    yields give the core to the thread producing it (speed: context
//!    switches in the scheduler lane, futex wakes per request in an
//!    I/O-bound server; a busy-wait took the core from the producer
//!    instead; [spinning](../../../../docs/experiments.md#spinning-before-sleep),
//!    [variants](../../../../docs/experiments.md#spin-variants-in-an-io-bound-server)).
//! 7. Sleep (`park`), following the protocol of `idle.rs`.
//!
//! Every poll is published to the stall monitor (`PollWatch::begin/end`,
//! `monitor.rs`). After a poll during which the monitor lowered this
//! thread's priority, `run` returns [`RunExit::Demoted`] and the thread
//! gives this `Core` to a thread of normal priority: a `Core` moves between
//! threads only between polls. A spare thread runs the same loop on a spare
//! slot (`run_spare`) without the sleep protocol: it returns the slot when
//! it finds no work.
//!
//! The periodic check interval adapts: every check measures the mean tick
//! length since the last one and aims at `global_check_target_ns` between
//! checks, clamped to `[2, 127]` ticks.
//!
//! # Files
//!
//! `worker/pick.rs`: steps 0-4 (what runs next) and the periodic check's
//! tuning. `worker/search.rs`: steps 5-6. `worker/park.rs`: step 7 and the
//! poller's hand-over. `worker/timers.rs`: firing timers from the loop.
//! `worker/loom_tests.rs`: the models of the loop's protocols.
//!
//! # Ownership
//!
//! `Core` belongs to the thread running it (its worker thread, or the
//! spare thread that took it over after a demotion). Tasks running on the worker reach it
//! through the thread-local context (`scheduler::context`) to push wakes
//! locally; every field is a `Cell` or an owner-only handle, so a shared
//! reference suffices and no `RefCell` borrow is taken per wake.
//!
//! # Shutdown
//!
//! The runtime sets the shutdown flag and unparks every worker. A worker
//! sees the flag at its next periodic check or wake-up, leaves the loop,
//! marks its core closing (so wakes caused by dropping tasks go the remote
//! way and are dropped too) and drops every task in its LIFO slot and ring.
//! The runtime then drains the inject queue and cancels the tasks still
//! registered (see `Shared::shutdown_drain`).

use std::cell::Cell;
use std::task::Waker;
use std::time::Instant;

use crate::metrics::WorkerCounters;
use crate::runtime::task::{Lane, Task};
use crate::util::loom::sync::Arc;

use super::inject::Stash;
use super::queue::{Local, Pushed};
use super::{Remote, Shared, drop_task};

const MIN_GLOBAL_INTERVAL: u32 = 2;
/// How long a spare with nothing to run looks for work before it gives its
/// slot back, while a poll is stalled (`Core::linger_for_work`): under the
/// monitor's sample period (`stall_threshold / 4`, 250 µs by default), so
/// the monitor's next lend is never slower than waiting for it. None under
/// loom (a model must take the same path at every replay).
const SPARE_LINGER: std::time::Duration =
    std::time::Duration::from_micros(if cfg!(loom) { 0 } else { 200 });
const MAX_GLOBAL_INTERVAL: u32 = 127;
const INITIAL_GLOBAL_INTERVAL: u32 = 31;
/// Search attempts, each after a `yield_now`, before a searcher sleeps.
/// One under loom, so the models' state space fits (each round is another
/// full search).
const SPIN_ROUNDS: u32 = if cfg!(loom) { 1 } else { 3 };

/// Cap of a batch taken while the worker has no local work of its own
/// waiting (ring empty, or the running task yielded): half the ring, so the
/// LIFO chatter that follows still fits without overflowing (speed: step 1
/// of the module doc; no test can tell it from another bound).
const DRY_BATCH_CAP: usize = super::queue::CAPACITY / 2;

/// Most time the `Batch` lane may bank while it has nothing to run, so a
/// batch task arriving after a quiet spell does not get a long burst.
const MAX_BATCH_CREDIT_NS: i64 = 10_000_000;
/// Most debt a long batch poll leaves (one second of the lane's share), so
/// one huge poll does not shut the lane out for long after.
const MAX_BATCH_DEBT_NS: i64 = 1_000_000_000;

/// Which bound a batch from the inject queue obeys.
#[derive(Clone, Copy)]
enum BatchCap {
    /// Local work is waiting: the configured `inject_batch_cap`.
    Check,
    /// Nothing local is overtaken: up to [`DRY_BATCH_CAP`].
    Dry,
}

/// Why `Core::park` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    /// It found work (or a due timer) before sleeping.
    DidNotSleep,
    /// A notifier picked it (new work), or the runtime shuts down.
    ByNotifier,
    /// Its timeout as the timekeeper.
    ByTimer,
    /// I/O readiness, as the timekeeper waiting in the poller.
    ByIo,
}

/// Why a worker's loop returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunExit {
    /// The runtime shuts down: the caller closes the core.
    Shutdown,
    /// The stall monitor lowered this thread's priority during a slow
    /// poll: the caller hands the core to a thread of normal priority
    /// (`Monitor::hand_back`).
    Demoted,
}

/// A worker's private state.
pub(crate) struct Core {
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
    local: Local<Task>,
    stash: Stash<Task>,
    /// Set once the worker leaves its loop: wakes then take the remote path.
    closing: Cell<bool>,
    /// A task yielded since the last look at the inject queue.
    yielded: Cell<bool>,
    /// The last batch left at least a full batch behind in the inject
    /// queue: outside work is piling up (step 1 of the loop).
    /// Cleared when a look finds the inject queue empty.
    inject_backlog: Cell<bool>,
    searching: Cell<bool>,
    lifo_streak: Cell<u32>,
    ticks_to_global_check: Cell<u32>,
    global_interval: Cell<u32>,
    last_global_check: Cell<Instant>,
    mean_tick_ns: Cell<f64>,
    /// Start of the awake time not yet added to the `busy_ns` counter.
    busy_since: Cell<Instant>,
    polls_to_timed_poll: Cell<u32>,
    rng: Cell<u64>,
    /// Due timers were left for the next tick (the fire budget ran out).
    timers_due: Cell<bool>,
    /// When this worker last fired a timer (ns on the runtime's clock), if
    /// ever. (`None` rather than 0: before the first firing nothing may
    /// depend on the clock, or the loom models' replays would diverge.)
    last_fired_ns: Cell<Option<u64>>,
    /// Waking the tasks of fired timers or of I/O readiness: their pushes
    /// wake no other worker (one wake for the whole batch decides that, in
    /// `fire_timers` and `poll_io`).
    waking_batch: Cell<bool>,
    /// Fired timers' tasks were queued without waking a helper: if some are
    /// still queued at the next periodic check, one is woken then.
    unhelped_timers: Cell<bool>,
    /// Wakers of fired timers, woken outside the wheel locks (kept to
    /// reuse the allocation).
    fired: Cell<Vec<Waker>>,
    /// The sequence number of the poll in progress or last finished, as
    /// published in this slot's `PollWatch` (odd inside a poll).
    poll_seq: Cell<u64>,
    /// When the poll in progress began, if this worker times it; after a
    /// `Pending` poll the task's wrapper takes it and reads the clock at
    /// the poll's end, for its dump entry, and leaves that reading in
    /// `timed_poll_end` for the worker (one clock read either way:
    /// `poll_end`; after a completing poll the worker reads it itself).
    timed_poll_start: Cell<Option<Instant>>,
    timed_poll_end: Cell<Option<Instant>>,
    /// This worker's last clock reading, ns on the registry's clock (also
    /// published in the slot's `PollWatch` for dumps).
    clock_ns: Cell<u64>,
    /// Time this worker owes the `Batch` lane (positive) or the lane owes
    /// it (negative), in nanoseconds: `batch_share` of its awake time, paid
    /// with batch polls.
    batch_credit_ns: Cell<i64>,
}

/// Polls a task once. A panic in the task's poll is caught by the task
/// itself (it becomes a `JoinError`); this catches a panic from dropping a
/// cancelled task's future, which must not take the worker down.
#[inline]
fn poll(task: Task) {
    task.metadata().check_published();
    // A fresh cooperative budget for each poll (`task/coop.rs`).
    crate::task::coop::reset();
    let _ = crate::util::locks::call_user("a task's poll (worker)", move || task.run());
}

impl Core {
    pub(crate) fn new(index: usize, shared: Arc<Shared>, local: Local<Task>) -> Core {
        // A spare slot gets a new `Core` each time it is lent: its polls
        // continue the slot's sequence, or the monitor, remembering the
        // number it last saw the slot inside, would take a new poll with
        // the same number for that old poll still running (a stall that is
        // none, a short poll marked slow, its thread demoted). Between
        // holders the slot is outside any poll: the number is even.
        let poll_seq = shared.remotes[index].watch.current_seq();
        debug_assert_eq!(poll_seq % 2, 0, "a slot lent while inside a poll");
        let interval = shared
            .config
            .global_queue_interval
            .unwrap_or(INITIAL_GLOBAL_INTERVAL);
        let core = Core {
            index,
            shared,
            local,
            stash: Stash::new(),
            closing: Cell::new(false),
            yielded: Cell::new(false),
            inject_backlog: Cell::new(false),
            searching: Cell::new(false),
            lifo_streak: Cell::new(0),
            ticks_to_global_check: Cell::new(interval),
            global_interval: Cell::new(interval),
            last_global_check: Cell::new(Instant::now()),
            mean_tick_ns: Cell::new(0.0),
            busy_since: Cell::new(Instant::now()),
            polls_to_timed_poll: Cell::new(1),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F),
            ),
            timers_due: Cell::new(false),
            last_fired_ns: Cell::new(None),
            waking_batch: Cell::new(false),
            unhelped_timers: Cell::new(false),
            fired: Cell::new(Vec::new()),
            poll_seq: Cell::new(poll_seq),
            timed_poll_start: Cell::new(None),
            timed_poll_end: Cell::new(None),
            clock_ns: Cell::new(0),
            batch_credit_ns: Cell::new(0),
        };
        core.publish_clock(core.last_global_check.get());
        core
    }

    /// Records a clock reading this worker made anyway, for dumps
    /// (`PollWatch::publish_clock`) and the idle time of the tasks it polls.
    #[inline]
    pub(super) fn publish_clock(&self, now: Instant) {
        let ns = self.shared.registry.clock_ns(now);
        self.clock_ns.set(ns);
        self.remote().watch.publish_clock(ns);
    }

    /// How the poll in progress ends, for the polled task's registry entry
    /// (called by the task's wrapper after a `Pending` poll): its length
    /// if this worker times it (the clock is read here instead of in
    /// `run_task`), and the end as this worker last read its clock.
    #[inline]
    pub(crate) fn poll_end(&self) -> crate::runtime::task::PollEnd {
        match self.timed_poll_start.take() {
            None => crate::runtime::task::PollEnd {
                clock_ns: self.clock_ns.get(),
                timed: None,
            },
            Some(start) => {
                let end = Instant::now();
                self.timed_poll_end.set(Some(end));
                self.publish_clock(end);
                crate::runtime::task::PollEnd {
                    clock_ns: self.clock_ns.get(),
                    timed: Some(end.saturating_duration_since(start)),
                }
            }
        }
    }

    /// Polls a task this worker times; how long the poll took.
    #[inline]
    fn timed_poll(&self, task: Task) -> std::time::Duration {
        let start = Instant::now();
        self.publish_clock(start);
        self.timed_poll_start.set(Some(start));
        poll(task);
        self.timed_poll_start.set(None);
        let end = self.timed_poll_end.take().unwrap_or_else(Instant::now);
        end.saturating_duration_since(start)
    }

    /// The owner side of this slot's ring, for the next holder of a spare
    /// slot (the ring is empty: see `run_spare`).
    pub(crate) fn into_local(self) -> Local<Task> {
        self.local
    }

    /// This worker's index among the runtime's `num_workers`; `None` on a
    /// spare slot (`runtime::worker_index`).
    pub(crate) fn worker_index(&self) -> Option<usize> {
        (!self.is_spare()).then_some(self.index)
    }

    /// Whether this is a spare slot lent by the stall monitor.
    fn is_spare(&self) -> bool {
        self.index >= self.shared.config.num_workers
    }

    /// The timer wheel tasks running here arm their timers on: the worker's
    /// own, or for a spare slot the outside wheel.
    ///
    /// Own wheels are for speed, not correctness: a worker about to sleep
    /// fires every wheel and a busy one the outside wheel and its own, so
    /// any wheel would do; one wheel for all would make every arming
    /// contend on one lock.
    pub(crate) fn own_wheel(&self) -> usize {
        if self.is_spare() {
            self.shared.time.outside_wheel()
        } else {
            self.index
        }
    }

    /// Whether the stall monitor marked the poll in progress as slow.
    #[inline]
    pub(crate) fn poll_was_slow(&self) -> bool {
        self.remote().watch.is_slow(self.poll_seq.get())
    }

    pub(crate) fn count_demotion(&self) {
        self.counters().demotions.incr();
    }

    #[inline]
    fn remote(&self) -> &Remote {
        &self.shared.remotes[self.index]
    }

    #[inline]
    fn counters(&self) -> &WorkerCounters {
        &self.remote().counters
    }

    /// Whether a wake on this thread may use the local fast path: only for
    /// a task of this worker's own runtime, and not once the worker is
    /// closing (nothing would run its queue again). Answering `false` is
    /// always correct, only slower (the remote path, through the inject
    /// queue and a wake).
    #[inline]
    pub(crate) fn accepts_local(&self, shared: *const Shared) -> bool {
        std::ptr::eq(&*self.shared, shared) && !self.closing.get()
    }

    /// Counts a task spawned by the task running here.
    #[inline]
    pub(crate) fn count_spawn(&self) {
        self.counters().spawned_local.incr();
    }

    /// Schedules a task woken (or spawned) by the task running here.
    #[inline]
    pub(crate) fn schedule_local(&self, task: Task, is_yield: bool) {
        if is_yield {
            self.yielded.set(true);
            self.push_back(task);
        } else if !self.shared.config.lifo_slot {
            self.push_back(task);
        } else if let Some(displaced) = self.remote().swap_lifo(Some(task)) {
            self.push_back(displaced);
        }
    }

    /// Appends a task to the ring. The owner will run it, so the wake-up of
    /// a sleeping worker here is for parallelism, not liveness: a stale,
    /// fence-free look at the idle counts decides whether to try. Speed
    /// only, every part of that decision: the task is on this worker's own
    /// ring, which it empties before it sleeps, and any worker about to
    /// sleep re-checks every ring (rule 4 of `idle.rs`), so a skipped wake
    /// delays a task, never strands it (the loom models pass without it).
    #[inline]
    fn push_back(&self, task: Task) {
        match self.local.push_back(task, &self.shared.inject) {
            Pushed::Local if self.waking_batch.get() => {}
            Pushed::Local => {
                let counts = self.shared.idle.counts();
                if counts.searching == 0 && counts.unparked < self.shared.config.num_workers {
                    self.shared.notify_parked(Some(self.index));
                }
            }
            Pushed::Overflowed => {
                self.counters().overflows.incr();
                self.shared.notify_parked(Some(self.index));
            }
        }
    }

    /// The run loop; returns when the runtime shuts down (the caller then
    /// calls `close`) or after a poll during which the monitor demoted this
    /// thread.
    pub(crate) fn run(&self) -> RunExit {
        while !self.shared.is_shutdown() {
            if let Some(task) = self
                .next_task()
                .or_else(|| self.search())
                .or_else(|| self.spin_for_work())
            {
                if self.searching.get() {
                    self.stop_searching();
                }
                self.run_task(task);
                if self.stays_demoted() {
                    self.account_busy_time(Instant::now());
                    return RunExit::Demoted;
                }
            } else {
                if self.park() == Woken::ByNotifier {
                    // New work arrived: the monitor watches from now on.
                    // Not for a timer's wake: a keeper that fires timers
                    // and sleeps again would wake the monitor thousands of
                    // times a second under dense timers (speed: the timers
                    // lane's CPU).
                    self.shared.monitor.worker_woke();
                }
                self.fire_timers(Wheels::All);
            }
        }
        RunExit::Shutdown
    }

    /// After a poll: whether the monitor demoted this thread during it and
    /// the thread keeps the lowered priority (it then gives the slot to a
    /// thread of normal priority). A process that may raise priorities
    /// gets it back here and the thread goes on (no thread ends and none is
    /// started for a demotion: `monitor.rs`). One relaxed load when not
    /// demoted.
    #[inline]
    fn stays_demoted(&self) -> bool {
        let watch = &self.remote().watch;
        if !watch.is_thread_demoted() {
            return false;
        }
        if watch.restore_thread_priority() {
            self.shared.monitor.thread_restored();
            return false;
        }
        true
    }

    /// The poll watch of this core's slot.
    pub(crate) fn remote_watch(&self) -> &super::monitor::PollWatch {
        &self.remote().watch
    }

    /// A spare thread's loop on a lent slot (`monitor.rs`): the worker loop
    /// without the sleep/wake protocol. Returns once it finds no work (its
    /// own ring and LIFO slot are then empty, and only tasks running here
    /// could refill them) or the runtime shuts down.
    pub(crate) fn run_spare(&self) {
        while !self.shared.is_shutdown() {
            let task = self
                .rescue_stalled()
                .or_else(|| self.next_task())
                .or_else(|| self.steal_work())
                .or_else(|| self.linger_for_work());
            match task {
                Some(task) => self.run_task(task),
                None => break,
            }
            if self.stays_demoted() {
                break;
            }
        }
        if self.shared.is_shutdown() {
            self.close();
        } else {
            self.account_busy_time(Instant::now());
            // Found nothing: the ring and LIFO slot are empty. Demoted
            // after a poll: what its tasks queued here goes to the inject
            // queue, for threads of normal priority.
            while let Some(task) = self.remote().take_lifo().or_else(|| self.local.pop()) {
                self.shared.schedule_remote(task);
            }
        }
    }

    /// A spare with nothing to run keeps its slot for up to
    /// [`SPARE_LINGER`] while some worker is stalled, delivering readiness
    /// and firing timers itself and looking for work, before it gives the
    /// slot back. Work that arrives during a stall otherwise waits for the
    /// monitor's next sample to lend a spare again: a closed loop of short
    /// requests, or a socket's two ends answering each other, then moves
    /// one step per sample period. A speed rule (the stall lane's shares);
    /// bounded, and only while a poll is stalled, so an idle runtime spins
    /// nowhere.
    #[cold]
    fn linger_for_work(&self) -> Option<Task> {
        let until = Instant::now() + SPARE_LINGER;
        let stalled = || {
            self.shared
                .any_stalled
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        while stalled() && !self.shared.is_shutdown() {
            self.deliver_io_now();
            self.fire_timers(Wheels::OwnOutsideAndStalled);
            if let Some(task) = self.next_task().or_else(|| self.steal_work()) {
                return Some(task);
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::yield_now();
        }
        None
    }

    #[inline]
    fn run_task(&self, task: Task) {
        let counters = self.counters();
        counters.polls.incr();
        let watch = &self.remote().watch;
        let seq = self.poll_seq.get() + 1;
        self.poll_seq.set(seq);
        let lane = task.metadata().lane();
        watch.begin(seq, task.metadata());
        if lane != Lane::Default {
            // Lane polls are all timed: the batch share is paid in time,
            // and latency work is rare enough to afford two clock reads.
            let took = self.timed_poll(task);
            let took_ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
            if lane == Lane::Batch {
                counters.batch_polls.incr();
                counters.batch_busy_ns.add(took_ns);
                // Charged `+` or `/`, or the debt floor's sign deleted, the
                // lane takes nearly all the time (96-99% where its share is
                // 25%): `lanes.rs`'s `batch_work_takes_no_more_than_its_share_under_a_latency_flood`.
                let credit = self.batch_credit_ns.get() - took_ns.min(i64::MAX as u64) as i64;
                self.batch_credit_ns.set(credit.max(-MAX_BATCH_DEBT_NS));
            } else {
                counters.latency_polls.incr();
                counters.latency_busy_ns.add(took_ns);
            }
            // The number ends even and new, or a stall goes unseen or
            // short polls in a row look like one (correctness of the
            // monitor's reading: `lanes.rs`'s
            // `a_lane_task_stuck_right_after_a_short_poll_of_its_own_is_seen`,
            // `poll_numbering.rs`).
            self.poll_seq.set(seq + 1);
            watch.end(seq + 1);
            return;
        }
        // One poll in `poll_time_sample_every` is timed (metrics/histogram.rs
        // says why not all).
        let countdown = self.polls_to_timed_poll.get() - 1;
        if countdown > 0 {
            self.polls_to_timed_poll.set(countdown);
            poll(task);
        } else {
            self.polls_to_timed_poll
                .set(self.shared.config.poll_time_sample_every);
            counters.poll_times.record(self.timed_poll(task));
        }
        // As above (`poll_numbering.rs`).
        self.poll_seq.set(seq + 1);
        watch.end(seq + 1);
    }

    /// Adds the awake time since the last call to `busy_ns`.
    fn account_busy_time(&self, now: Instant) {
        let busy = now.saturating_duration_since(self.busy_since.replace(now));
        self.counters()
            .busy_ns
            .add(u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Leaves the loop for good: drops every task this worker still holds.
    pub(crate) fn close(&self) {
        self.account_busy_time(Instant::now());
        self.closing.set(true);
        if self.searching.replace(false) {
            let _ = self.shared.idle.transition_worker_from_searching();
        }
        while let Some(task) = self.remote().take_lifo().or_else(|| self.local.pop()) {
            drop_task(task);
        }
    }
}

mod park;
mod pick;
mod search;
mod timers;

use timers::Wheels;

#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A spare slot gets a new `Core` at each lending; if its poll numbers
    /// restarted, the monitor would take the new holder's poll for the old
    /// holder's poll with the same number, long over (a stall that is
    /// none, and a needless demotion).
    #[test]
    fn a_new_core_for_a_slot_continues_the_slots_poll_numbers() {
        let rt = crate::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let shared = rt.handle().shared.clone();
        let spare_slot = shared.config.num_workers;
        // As a previous holder leaves it: its last poll (number 5) ended.
        shared.remotes[spare_slot].watch.end(6);
        let (local, _steal) = super::super::queue::local();
        let core = Core::new(spare_slot, shared.clone(), local);
        assert_eq!(core.poll_seq.get(), 6);
    }
}
