//! A worker thread's run loop.
//!
//! # The loop
//!
//! Each iteration ("tick") picks one task and polls it:
//!
//! 0. Lanes (`task/lane.rs`): at the periodic check, a `Batch` task if the
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
//!    empty-queue batch; why it decides busy1/busy2: `scheduler/mod.rs`).
//!    Measured on a 2-core EPYC VM, three lane runs each: busy1 2.0 →
//!    1.1-1.7 ms on 2 workers, 1.2 → 1.0 ms on 4; busy2 0.24-0.28 →
//!    0.17-0.23 ms on 2. A batch that fills the whole ring is worse: the
//!    LIFO chatter after it overflows (cap 256: ping_pong 0.45 → 2.3 ms).
//!    The backlog rule is what lets remote spawns overtake a chain of tasks
//!    that each spawn the next (busy2: 0.50 → 0.32 ms on 2 workers, 0.31 →
//!    0.22 ms on 4, three lane runs each); without its short-ring condition, a ring's own overflow (parked
//!    in the inject queue by `push_back`) counted as a backlog too and sent
//!    ping_pong's LIFO chatter through the ring: 0.87 → 2.8 ms.
//!    While the stall monitor finds some poll stalled (`Shared::any_stalled`)
//!    a batch is one task: tasks moved into a ring were trapped behind
//!    that worker's next long poll. Mixed lane, 2 workers, 5 alternated
//!    quick runs each (2026-11-24): short p99 at 32 + 2 closed-loop clients
//!    13.0-14.7 → 8.0-10.3 ms, at 128 + 8 80-108 → 44-54 ms, p99.9 at
//!    32 + 2 15.8-21.3 → 9.0-13.2 ms; long throughput and the open loop
//!    unchanged within their spread. A cap of 4 measured like no cap: one
//!    trapped task per batch is enough to make the tail.
//! 2. The LIFO slot, unless it has run [`MAX_LIFO_STREAK`] times in a row
//!    (then its task goes to the back of the ring).
//! 3. The ring, oldest first.
//! 4. A batch from the inject queue.
//! 5. Searching: steal half of another worker's ring, then the inject queue,
//!    then (last pass) another worker's LIFO slot.
//! 6. A searcher that found nothing yields its core and searches again,
//!    [`SPIN_ROUNDS`] times: work that arrives within that window is taken
//!    without a park/unpark pair. (Measured on 2 cores, 4 workers:
//!    spawn_many_local went from ~200 to ~40 context switches per iteration
//!    and got faster; a `spin_loop` busy-wait of the same length cut the
//!    switches too but took the core from the spawning thread and cost 30%
//!    in time. The HTTP lane, 2026-11-24, 3 alternated runs each of
//!    `weft-bench http --runtimes weft,tokio`: no spin, req/s 0.91-0.97 of
//!    tokio's and p99 1.23-1.29 ms against 0.98-1.09 and 0.62-0.88 ms with
//!    3 rounds; 8, 16 and 32 rounds within 3's spread. The spin costs a
//!    few `sched_yield` calls per sleep, and saves the futex pair and the
//!    latency of a wake.)
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
//! # Ownership
//!
//! `Core` belongs to the thread running it (its worker thread, or the
//! spare thread that took it over after a demotion). Tasks running on the worker reach it
//! through the thread-local context (`runtime::context`) to push wakes
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
use std::sync::atomic::Ordering;
use std::task::Waker;
use std::time::Instant;

use crate::loom::sync::Arc;
use crate::metrics::WorkerCounters;
use crate::task::{Lane, Task};

use super::idle::LeftSearching;
use super::inject::Stash;
use super::queue::{Local, Pushed};
use super::{MAX_LIFO_STREAK, Remote, Shared, drop_task};

const MIN_GLOBAL_INTERVAL: u32 = 2;
const MAX_GLOBAL_INTERVAL: u32 = 127;
const INITIAL_GLOBAL_INTERVAL: u32 = 31;
/// Search attempts, each after a `yield_now`, before a searcher sleeps.
/// One under loom, so the models' state space fits (each round is another
/// full search).
const SPIN_ROUNDS: u32 = if cfg!(loom) { 1 } else { 3 };

/// Cap of a batch taken while the worker has no local work of its own
/// waiting (ring empty, or the running task yielded): half the ring, so the
/// LIFO chatter that follows still fits without overflowing. A performance
/// rule (step 1 of the module doc has the measurements): made `% 2` (0, so
/// `inject_batch_cap` alone) or `* 2` (a full ring, capped by its free
/// room) every test passes.
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
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || task.run()));
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
        Core {
            index,
            shared,
            local,
            stash: Stash::new(),
            closing: Cell::new(false),
            yielded: Cell::new(false),
            inject_backlog: Cell::new(false),
            searching: Cell::new(false),
            lifo_streak: Cell::new(0),
            ticks_to_global_check: Cell::new(INITIAL_GLOBAL_INTERVAL),
            global_interval: Cell::new(INITIAL_GLOBAL_INTERVAL),
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
            batch_credit_ns: Cell::new(0),
        }
    }

    /// The owner side of this slot's ring, for the next holder of a spare
    /// slot (the ring is empty: see `run_spare`).
    pub(crate) fn into_local(self) -> Local<Task> {
        self.local
    }

    /// Whether this is a spare slot lent by the stall monitor.
    fn is_spare(&self) -> bool {
        self.index >= self.shared.config.num_workers
    }

    /// The timer wheel tasks running here arm their timers on: the worker's
    /// own, or for a spare slot the outside wheel.
    ///
    /// Own wheels are for cost, not correctness: with every timer on the
    /// outside wheel (`is_spare` made always true, 2026-11-25) or on wheel
    /// 0 or 1 (this function made `0` or `1`) every test passes, since a
    /// worker about to sleep fires every wheel and a busy one the outside
    /// wheel and its own; all arming would then contend on one lock, and a
    /// timer on a busy worker's wheel other than its own waits for that
    /// wheel's worker or a sleeper.
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
    /// queue and a wake): the callers' "always `false`" mutants are
    /// performance-only, which no model or test tells apart.
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
    /// fence-free look at the idle counts decides whether to try.
    /// Performance only, every part of that decision (the `waking_batch`
    /// guard, the counts compared): cargo-mutants' mutants of it pass the
    /// loom models (2026-11-24), as they must: the task is on this
    /// worker's own ring, which it empties before it sleeps, and any worker
    /// about to sleep re-checks every ring (rule 4 of `idle.rs`), so a
    /// skipped wake delays a task, never strands it.
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
                if self.remote().watch.is_thread_demoted() {
                    self.account_busy_time(Instant::now());
                    return RunExit::Demoted;
                }
            } else {
                if self.park() == Woken::ByNotifier {
                    // New work arrived: the monitor watches from now on.
                    // (Not for a timer's wake: a keeper that fires timers
                    // and sleeps again would wake the monitor thousands of
                    // times a second under dense timers, +30 ms CPU per
                    // second in the timers lane's spread row.)
                    self.shared.monitor.worker_woke();
                }
                self.fire_timers(Wheels::All);
            }
        }
        RunExit::Shutdown
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
                .or_else(|| self.steal_work());
            match task {
                Some(task) => self.run_task(task),
                None => break,
            }
            if self.remote().watch.is_thread_demoted() {
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
            let start = Instant::now();
            poll(task);
            let took = start.elapsed();
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
            // Mutants (2026-11-25): `poll_seq` left odd (`seq * 1`) or
            // set back (`seq - 1`) makes the next poll's number even or a
            // repeat, so a stall goes unseen or short polls in a row look
            // like one (`lanes.rs`'s `a_lane_task_stuck_right_after_a_short_poll_of_its_own_is_seen`,
            // `poll_numbering.rs`). The
            // watch's `end(seq - 1)` stores the even number it held before
            // (equivalent); `end(seq * 1)` leaves it odd until the next
            // poll begins, so the gap between polls may read as a poll:
            // every test passes.
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
            let start = Instant::now();
            poll(task);
            counters.poll_times.record(start.elapsed());
        }
        // `poll_seq` set back (`seq - 1`) here makes a run of short polls
        // read as one: the monitor marks it slow and the task is demoted
        // (`poll_numbering.rs`). `end(seq - 1)` is equivalent, as above.
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

    fn next_task(&self) -> Option<Task> {
        let countdown = self.ticks_to_global_check.get() - 1;
        self.ticks_to_global_check.set(countdown);
        if countdown == 0 {
            self.tune_global_interval();
            self.help_with_fired_timers();
            self.fire_timers(Wheels::OwnAndOutside);
            self.poll_io_now();
            // The batch lane's share comes before the latency lane, so a
            // latency flood cannot starve it.
            // `> 0`, not `>= 0`: at exactly zero the lane has earned
            // nothing yet. The boundary is policy (made `>=` it passes
            // every model and test: one poll of overdraft, repaid from
            // the next earnings); the other mutants of it starve the lane
            // and fail `lanes.rs`'s share test.
            if self.batch_credit_ns.get() > 0 {
                if let Some(task) = self.take_lane(Lane::Batch) {
                    return Some(task);
                }
            }
        } else if self.timers_due.get() {
            self.fire_timers(Wheels::OwnAndOutside);
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
            // An order of picks, not a path to them (mutants of the
            // condition above pass every model and test, 2026-11-24): the
            // same tasks are reached by `steal_work`, by the spare the
            // monitor hands them to, and by their owner after its poll.
            if let Some(task) = self.rescue_stalled() {
                return Some(task);
            }
        }
        // A fairness rule, not a path (its two `||` made `&&` pass every
        // model and test, 2026-11-24): the inject queue is also drained
        // whenever the ring and LIFO slot are empty (the last line of this
        // function), so outside work is delayed, not lost. Measured: with
        // `countdown == 0 && (...)` an outside spawn waited 2.8 s behind
        // sixteen tasks waking each other on one worker (under 10 ms
        // without). The backlog clause's short-ring bound (`<`) is a
        // performance rule too: made `==`, `>` or `<=` it passes every
        // model and test (2026-11-24); what it buys is measured in step 1
        // of the module doc (busy2, ping_pong). Its `&&` made `||` fails
        // `inject_batches.rs` (a dry worker kept to the check cap).
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
    /// Performance only: made `None` (or its victim test turned) it passes
    /// every model and test (2026-11-24), as `steal_work`, the spare and
    /// the owner after its poll reach the same tasks. Measured made `None`
    /// (mixed lane, weft only, 4 alternated quick runs): closed 32 + 2
    /// short max 18-32 -> 29-349 ms and p99.9 9-11 -> 8-274 ms (two runs
    /// of four with a task trapped for 80-350 ms), while p99 at 128 + 8
    /// fell 32-37 -> 21-32 ms and the open loop stayed within its spread.
    /// Kept for the trapped-task tail. Rescuing less eagerly, only when the
    /// ring is dry (not at the periodic check), was tried (2026-11-25, 4
    /// alternated pairs): 32 + 2 p99 8.0-8.9 -> 7.1-7.8 ms, but 128 + 8
    /// p99 25.9-28.0 -> 28.1-43.8 ms and its max up, the open loop within
    /// its spread: not kept.
    fn rescue_stalled(&self) -> Option<Task> {
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
    fn count_steal(&self, before: usize) {
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
    fn take_lane(&self, lane: Lane) -> Option<Task> {
        let queue = self.shared.lane_queue(lane);
        if queue.is_empty() {
            return None;
        }
        queue.pop()
    }

    #[inline]
    fn take_own_lifo(&self) -> Option<Task> {
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

    /// `min(len / workers + 1, cap, free slots + 1)` tasks from the inject
    /// queue, `cap` as [`BatchCap`] says (one while the monitor finds a
    /// poll stalled); the first is returned, the rest go to the ring.
    fn take_inject_batch(&self, cap: BatchCap) -> Option<Task> {
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
            // Performance only (cargo-mutants' five mutants of this test
            // pass the loom models, judged by them alone): each batched
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
    /// Both are policy, clamped, never a path to a task: of the mutants of
    /// the arithmetic (2026-11-25), `inject_batches.rs` catches three (a
    /// mean far off brings a check at nearly every tick, so a dry worker
    /// takes the check's small batches); the other seven shift the
    /// interval within its clamp and pass every test. The share's
    /// `elapsed * batch_share` made `+` or `/` pays the lane more than its
    /// share: `lanes.rs` bounds it from above as well as from below.
    fn tune_global_interval(&self) {
        let now = Instant::now();
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
        let interval = (target / mean.max(1.0)) as u32;
        let interval = interval.clamp(MIN_GLOBAL_INTERVAL, MAX_GLOBAL_INTERVAL);
        self.global_interval.set(interval);
        self.ticks_to_global_check.set(interval);
        // The batch lane earns its share of the awake time since the last
        // check (`last_global_check` restarts when the worker wakes).
        let earned = (elapsed * self.shared.config.batch_share) as i64;
        let credit = self.batch_credit_ns.get().saturating_add(earned);
        self.batch_credit_ns.set(credit.min(MAX_BATCH_CREDIT_NS));
    }

    fn next_random(&self, bound: usize) -> usize {
        // xorshift64*: cheap and good enough to pick a victim. Only where a
        // search starts: every victim is tried from there, so a poor or
        // constant answer (cargo-mutants' 14 mutants, every test passes)
        // costs contention among thieves, never a missed task.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % bound
    }

    /// Step 5 of the loop. Enters the searching state if allowed.
    fn search(&self) -> Option<Task> {
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
    fn steal_work(&self) -> Option<Task> {
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
    /// Performance only: with no spin the worker goes straight to the
    /// sleep protocol, which alone keeps work from being stranded
    /// (cargo-mutants' mutants of this function all pass the loom models).
    fn spin_for_work(&self) -> Option<Task> {
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

    fn stop_searching(&self) {
        self.searching.set(false);
        if self.shared.idle.transition_worker_from_searching() == LeftSearching::WasLast {
            // Rule 4: more work may be waiting; keep one worker looking.
            self.shared.notify_parked(Some(self.index));
        }
    }

    /// A keeper woken by readiness hands the poller over, so the next
    /// readiness is not left behind the poll this worker is about to start
    /// (`io/driver.rs`). With several tasks woken a helper is wanted
    /// anyway: `notify_parked` wakes one to search, and it takes the
    /// poller when it finds nothing. With one task, a sleeper is only
    /// poked: it stays registered asleep, loops in `park`, takes the free
    /// keeper role and waits in the poller, without a search.
    ///
    /// Made a no-op, it fails `net.rs`'s
    /// `readiness_is_not_stuck_behind_the_long_poll_of_the_task_it_woke_first`.
    /// The split by `woken` is a choice of wake, not of whether one
    /// happens (each branch gets the poller taken): its three mutants pass
    /// every model and test (2026-11-24, on a quiet machine).
    fn hand_over_poller(&self, woken: usize) {
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
    fn poll_io_now(&self) {
        // Made a no-op, `tests/net.rs`'s
        // `readiness_reaches_a_task_while_the_worker_stays_busy` fails;
        // the helper test below is a cost rule (made `==`, `<` or `>=`
        // every test passes: the woken tasks wait for this worker or a
        // thief).
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

    fn has_tasks(&self) -> bool {
        !self.local.is_empty() || self.remote().has_lifo()
    }

    /// Step 7: sleep until a notifier picks this worker, the runtime shuts
    /// down, or (as the keeper of `time/driver.rs`) a timer is due.
    fn park(&self) -> Woken {
        // `has_tasks` is a shortcut, not a rule: without it the worker
        // registers asleep and its re-check below finds its own ring, so a
        // sleeper (perhaps itself) is woken for it (cargo-mutants' `&&` for
        // the `||` passes the loom models and the tests).
        if self.has_tasks() || (self.may_fire_again() && self.fire_timers(Wheels::All)) {
            return Woken::DidNotSleep;
        }
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
            // reach: loom builds no reactor (`io_woken` is 0) and loom's
            // `wait_timeout` never times out, so a keeper's timer is never
            // due in a model. cargo-mutants' mutants of those tests and of
            // `io_woken > 0` (12) all pass the models; the ordinary tests
            // judge them: of five checked, each caught (`tests/http.rs`
            // hangs on a timer that never wakes its keeper;
            // `tests/net.rs` fails on readiness left behind a long poll).
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
    /// none: the mixed lane showed ~4x as many task demotions as long
    /// requests until this held).
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
