//! The multi-thread work-stealing scheduler.
//!
//! # Parts
//!
//! - `queue.rs`: each worker's bounded local ring (256 tasks, steal half).
//! - LIFO slot (in [`Remote`]): the task a running task just woke or spawned
//!   runs next on the same worker, at most [`MAX_LIFO_STREAK`] times in a
//!   row. The slot is an `AtomicPtr`, so it is stealable: a task parked there
//!   behind a long poll is not stuck (tokio #4941); thieves take it only on
//!   their last pass, after every queue (as Go takes `runnext`), so tasks that
//!   talk to each other keep their locality.
//! - `inject.rs`: one lock-free global queue for tasks from outside and for
//!   overflow. Drained in batches (their size: `Inject::batch_limit`)
//!   at every periodic global check and before a LIFO task while a backlog
//!   of at least a batch waits and the worker's ring is short (cap:
//!   `inject_batch_cap`, 32), and whenever the local ring is empty or a task
//!   has yielded (cap: half the ring, 128) (`worker.rs`, step 1).
//! - `idle.rs`: the searching/unparked state word and the sleeper list.
//! - `park.rs`: how one worker sleeps.
//! - `worker.rs`: the run loop.
//! - `schedule.rs`: where a woken or spawned task goes (the scheduler's
//!   side of the task cell's `Schedule` seam).
//! - `monitor.rs`: the stall monitor and its spare threads.
//!
//! # What weft takes from each peer
//!
//! tokio's locality for wakes from inside (the LIFO slot, the local ring, a
//! yield to the back of the local ring), so tasks that wake each other stay
//! in one cache; smol's drain of outside work (a batch from the inject
//! queue whenever the local ring runs dry, not one task per periodic check),
//! so remote spawns into a saturated runtime do not wait. How large the dry
//! batches are decides the busy workloads (speed: a yielding busy task
//! brings in one batch before it runs again). The measurements behind both
//! are in docs/experiments.md (#inject-batches).
//!
//! Whether a push wakes a sleeper is decided by `idle.rs`'s rules, never
//! left to the stall monitor, whose wake comes only at its next sample: a
//! safety net for a lost wake-up, not a scheduling path (speed: a spawn
//! beside a long poll would wait that long;
//! docs/experiments.md#wakes-gated-on-the-backlog).
//!
//! Which lines every worker shares, and why none is a runtime-wide lock, is
//! docs/architecture.md's "At 64 cores".
//!
//! # How the other parts attach
//!
//! - **Timers**: each worker fires its own wheel at its periodic check,
//!   with the outside wheel and the wheels of stalled workers, and every
//!   wheel before it sleeps; of the sleepers, the keeper
//!   (`runtime/time/driver.rs`) parks with a timeout (`worker/timers.rs`).
//!   `idle.rs` does not know about it: the keeper is an ordinary sleeper
//!   that takes itself off the list when its timeout, not a notifier,
//!   wakes it.
//! - **I/O** stacks under `park.rs` the same way: the keeper parks in the
//!   poller with the same timeout instead of the condvar, and
//!   `Parker::unpark` also pokes the poller.
//! - **Lanes**: `Latency` and `Batch` tasks wait in runtime-wide lock-free
//!   queues (`Shared::latency`, `Shared::batch`) rather than a ring per
//!   lane (`worker/pick.rs`, `runtime/task/lane.rs`); `Default` tasks keep
//!   the LIFO slot and the rings.
//! - **The stall monitor** (`monitor.rs`): workers publish each poll in
//!   their `Remote` (two stores per poll); the monitor lends spare slots
//!   (`Remote`s after the workers', with their own rings) to spare threads
//!   while every awake thread is stuck, and fires timers while no worker
//!   can; a worker whose thread it demoted hands its `Core` to a normal
//!   thread after the poll (`Core` moves only between polls).

pub(crate) mod block_in_place;
pub(crate) mod idle;
pub(crate) mod inject;
pub(crate) mod monitor;
pub(crate) mod panic_policy;
pub(crate) mod park;
pub(crate) mod queue;
mod schedule;
pub(crate) mod worker;

use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use crate::metrics::{RuntimeMetrics, SharedCounter, WorkerCounters};
use crate::runtime::blocking::BlockingPool;
#[cfg(not(loom))]
use crate::runtime::current_thread::CurrentThread;
use crate::runtime::task::{Lane, Registry, Task};
use crate::runtime::time::driver::{Driver, Poke};
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::{AtomicBool, AtomicPtr, Ordering, fence};

use idle::Idle;
use inject::Inject;
use park::Parker;
use queue::Steal;

/// Polls in a row a worker takes from its LIFO slot before it goes back to
/// its ring in FIFO order, so two tasks waking each other cannot starve it.
pub(crate) const MAX_LIFO_STREAK: u32 = 3;

/// Scheduler settings fixed at build time.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The runtime's name (`Builder::name`), if given.
    pub(crate) name: Option<String>,
    pub(crate) num_workers: usize,
    /// Upper bound on one batch from the inject queue.
    pub(crate) inject_batch_cap: usize,
    /// Whether a woken task goes to the LIFO slot.
    pub(crate) lifo_slot: bool,
    /// Target time between two periodic global checks, in nanoseconds.
    pub(crate) global_check_target_ns: u64,
    /// One poll in this many is timed for the poll-time histogram.
    pub(crate) poll_time_sample_every: u32,
    /// Whether slow `Default` tasks move to the `Batch` lane.
    pub(crate) demote_slow_tasks: bool,
    /// The `Batch` lane's guaranteed fraction of each worker's awake time.
    pub(crate) batch_share: f64,
    /// Worker slots for the stall monitor's spare threads, after the
    /// `num_workers` worker slots (`max_threads - num_workers`).
    pub(crate) spare_slots: usize,
    /// Epoll instances of the reactor (`runtime/io/driver.rs`; no reactor under
    /// loom).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) io_shards: usize,
    /// Whether runtime threads ask for the shortest time slice and the
    /// monitor lengthens the slice of a long poll (`Builder::time_slices`).
    pub(crate) time_slices: bool,
    /// Whether runtime threads ask for a 1 µs timer slack
    /// (`Builder::fine_timer_slack`).
    pub(crate) fine_timer_slack: bool,
    /// What a task's panic does to the runtime (`runtime/scheduler/panic_policy.rs`).
    pub(crate) unhandled_panic: panic_policy::UnhandledPanic,
    /// `Builder::global_queue_interval`: ticks between periodic checks,
    /// fixed (`None`: adapted to `global_check_target_ns`).
    pub(crate) global_queue_interval: Option<u32>,
    /// `Builder::on_thread_park` and `on_thread_unpark`.
    pub(crate) park_hooks: ParkHooks,
    /// `Builder::drivers_opt_in` without `enable_io`: registering an I/O
    /// source panics.
    pub(crate) io_disabled: bool,
    /// `Builder::drivers_opt_in` without `enable_time`: making a timer
    /// panics.
    pub(crate) time_disabled: bool,
}

/// The program's hooks around a worker's sleep (user code: called with no
/// runtime lock held, a panic contained).
#[derive(Clone, Default)]
pub(crate) struct ParkHooks {
    pub(crate) on_park: Option<std::sync::Arc<dyn Fn() + Send + Sync>>,
    pub(crate) on_unpark: Option<std::sync::Arc<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for ParkHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkHooks")
            .field("on_park", &self.on_park.is_some())
            .field("on_unpark", &self.on_unpark.is_some())
            .finish()
    }
}

impl Config {
    /// Asks the kernel for what the runtime's threads are tuned with, as
    /// far as the builder allows: called first by every thread that runs
    /// tasks or the monitor.
    pub(crate) fn tune_this_thread(&self) {
        if self.fine_timer_slack {
            crate::runtime::sys::set_fine_timer_slack();
        }
        if self.time_slices {
            crate::runtime::sys::request_short_slice();
        }
    }

    /// Panics, at the caller's line, if the builder left the I/O driver
    /// out (`Builder::drivers_opt_in`).
    #[track_caller]
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn check_io_enabled(&self) {
        if self.io_disabled {
            if cfg!(feature = "tokio-messages") {
                panic!(
                    "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the \
                     runtime builder to enable IO."
                );
            }
            panic!(
                "this weft runtime was built with `drivers_opt_in(true)` and without \
                 `enable_io`: call `enable_io` (or `enable_all`) on its builder to use sockets, \
                 `AsyncFd` and signals"
            );
        }
    }

    /// Panics, at the caller's line, if the builder left the timers out
    /// (`Builder::drivers_opt_in`).
    #[track_caller]
    pub(crate) fn check_time_enabled(&self) {
        if self.time_disabled {
            if cfg!(feature = "tokio-messages") {
                panic!(
                    "A Tokio 1.x context was found, but timers are disabled. Call \
                     `enable_time` on the runtime builder to enable timers."
                );
            }
            panic!(
                "this weft runtime was built with `drivers_opt_in(true)` and without \
                 `enable_time`: call `enable_time` (or `enable_all`) on its builder to use timers"
            );
        }
    }

    /// Worker slots plus spare slots: the length of `Shared::remotes`.
    pub(crate) fn num_slots(&self) -> usize {
        self.num_workers + self.spare_slots
    }
}

/// What other threads may touch of a worker.
pub(crate) struct Remote {
    pub(crate) steal: Steal<Task>,
    /// The LIFO slot: a `Runnable` turned into a raw pointer, or null.
    lifo: AtomicPtr<()>,
    pub(crate) parker: Parker,
    pub(crate) counters: WorkerCounters,
    /// The poll in progress, as the stall monitor sees it. On its own
    /// cache line: its owner writes it at each poll's start and end, while thieves read
    /// `lifo` above. (A precaution: no workload measured a difference.)
    pub(crate) watch: CachePadded<monitor::PollWatch>,
}

impl Remote {
    /// Puts `task` in the slot and returns the task it displaced.
    #[inline]
    pub(crate) fn swap_lifo(&self, task: Option<Task>) -> Option<Task> {
        let new = task.map_or(std::ptr::null_mut(), |t| t.into_raw().as_ptr());
        let old = self.lifo.swap(new, Ordering::AcqRel);
        // Sound: `lifo` is private to `Remote`, starts null and is written
        // only by this swap, so it holds null or a pointer `into_raw` gave up
        // (a `Runnable<TaskMeta>`, as `Task` is); the swap takes it out, so
        // this is its only `from_raw`. The swap's Acquire half reads the
        // Release half of the swap that stored it: the task's memory, written
        // by the threads that had it before, is visible here.
        // SAFETY: `old` is null or a pointer `into_raw` gave up, taken once.
        NonNull::new(old).map(|ptr| unsafe { Task::from_raw(ptr) })
    }

    /// Takes the task in the slot, if any (owner or thief).
    #[inline]
    pub(crate) fn take_lifo(&self) -> Option<Task> {
        if self.lifo.load(Ordering::Relaxed).is_null() {
            return None;
        }
        self.swap_lifo(None)
    }

    /// A hint: whoever acts on it takes the task with the swap in
    /// `swap_lifo`, and that swap's `Acquire` is what publishes the task
    /// (the orderings survey: this load made `Relaxed` passes every model;
    /// the swap's halves made weaker fail the handoff model).
    pub(crate) fn has_lifo(&self) -> bool {
        !self.lifo.load(Ordering::Acquire).is_null()
    }
}

impl Drop for Remote {
    /// Frees a task still in the LIFO slot. None is there by then in a
    /// runtime (`shutdown_drain` takes every LIFO task, after every worker
    /// has stopped), so made a no-op it passes every test; kept for a
    /// `Shared` dropped any other way (a model that stops short of the
    /// drain), which would otherwise leak the task (correctness).
    fn drop(&mut self) {
        drop(self.take_lifo());
    }
}

/// State shared by the workers, the handles and every task's schedule
/// function.
pub(crate) struct Shared {
    /// The runtime's process-unique id (`Handle::id`).
    pub(crate) id: crate::runtime::Id,
    pub(crate) config: Config,
    pub(crate) inject: Inject<Task>,
    /// `Latency`-lane tasks: every worker looks here first.
    pub(crate) latency: Inject<Task>,
    /// `Batch`-lane tasks: run when nothing else waits, or when a worker
    /// owes the lane its share.
    pub(crate) batch: Inject<Task>,
    /// One per worker slot: the `num_workers` workers, then the spare
    /// slots the stall monitor lends to spare threads.
    pub(crate) remotes: Box<[CachePadded<Remote>]>,
    /// The stall monitor and the spare threads (`monitor.rs`).
    pub(crate) monitor: monitor::Monitor,
    /// Some slot was stalled at the monitor's last sample (a hint, read at
    /// periodic checks: a line only the monitor writes, and only when the
    /// answer changes).
    pub(crate) any_stalled: AtomicBool,
    pub(crate) idle: Idle,
    pub(crate) registry: Registry,
    /// The `spawn_blocking` threads (`runtime/blocking/`).
    pub(crate) blocking: BlockingPool,
    /// The panic policy and the `block_on` calls it must reach.
    pub(crate) panic_policy: panic_policy::PanicPolicy,
    /// The timer wheels and the timekeeping handshake (`runtime/time/driver.rs`).
    pub(crate) time: Driver,
    /// The reactor (`runtime/io/driver.rs`); the keeper sleeps in its poller.
    #[cfg(not(loom))]
    pub(crate) io: crate::runtime::io::driver::Driver,
    /// The tokio runtime every thread of this runtime enters, if built
    /// with `tokio_compat` (`runtime/tokio_compat.rs`).
    pub(crate) tokio: crate::runtime::tokio_compat::TokioContext,
    /// `block_on` calls polling their future right now: while one is, a
    /// paused test clock must not jump ahead (`test-util`).
    #[cfg(feature = "test-util")]
    block_on_polling: crate::util::loom::sync::atomic::AtomicUsize,
    shutdown: AtomicBool,
    remote_wake_requests: SharedCounter,
    remote_spawns: SharedCounter,
    remote_finishes: SharedCounter,
    /// Threads started and ended, by kind: each of the runtime's threads
    /// counts itself (`metrics/threads.rs`).
    pub(crate) threads: crate::metrics::ThreadCounters,
    /// Set once, at build, on a current-thread runtime: its scheduler,
    /// which spawns go to (`runtime/current_thread.rs`). Weak: the
    /// scheduler holds this `Shared`, and the `Runtime` owns the scheduler.
    #[cfg(not(loom))]
    current_thread: std::sync::OnceLock<std::sync::Weak<CurrentThread>>,
}

impl Shared {
    /// Builds the shared state and each worker's owner handle of its ring.
    pub(crate) fn new(
        config: Config,
        blocking: BlockingPool,
        monitor: monitor::Monitor,
        tokio: crate::runtime::tokio_compat::TokioContext,
    ) -> std::io::Result<(Arc<Shared>, Vec<queue::Local<Task>>)> {
        let n = config.num_workers;
        let mut locals = Vec::with_capacity(config.num_slots());
        let remotes = (0..config.num_slots())
            .map(|_| {
                let (local, steal) = queue::local();
                locals.push(local);
                CachePadded::new(Remote {
                    steal,
                    lifo: AtomicPtr::new(std::ptr::null_mut()),
                    parker: Parker::new(),
                    counters: WorkerCounters::default(),
                    watch: CachePadded::new(monitor::PollWatch::default()),
                })
            })
            .collect();
        let shared = Arc::new(Shared {
            id: crate::runtime::Id::next(),
            inject: Inject::new(),
            latency: Inject::new(),
            batch: Inject::new(),
            remotes,
            monitor,
            any_stalled: AtomicBool::new(false),
            idle: Idle::new(n),
            registry: Registry::new(n),
            blocking,
            panic_policy: panic_policy::PanicPolicy::new(config.unhandled_panic),
            time: Driver::new(n),
            #[cfg(not(loom))]
            io: crate::runtime::io::driver::Driver::new(config.io_shards)?,
            tokio,
            #[cfg(feature = "test-util")]
            block_on_polling: crate::util::loom::sync::atomic::AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            remote_wake_requests: SharedCounter::default(),
            remote_spawns: SharedCounter::default(),
            remote_finishes: SharedCounter::default(),
            threads: crate::metrics::ThreadCounters::default(),
            #[cfg(not(loom))]
            current_thread: std::sync::OnceLock::new(),
            config,
        });
        Ok((shared, locals))
    }

    /// Records the current-thread scheduler this `Shared` serves (once,
    /// at build).
    #[cfg(not(loom))]
    pub(crate) fn set_current_thread(&self, scheduler: std::sync::Weak<CurrentThread>) {
        if self.current_thread.set(scheduler).is_err() {
            unreachable!("a runtime's scheduler is set once");
        }
    }

    /// The current-thread scheduler, if this is a current-thread runtime
    /// (a dead reference once its `Runtime` is dropped).
    #[cfg(not(loom))]
    #[inline]
    pub(crate) fn current_thread(&self) -> Option<&std::sync::Weak<CurrentThread>> {
        self.current_thread.get()
    }

    /// Whether this is a current-thread runtime.
    pub(crate) fn is_current_thread(&self) -> bool {
        #[cfg(not(loom))]
        return self.current_thread.get().is_some();
        #[cfg(loom)]
        false
    }

    /// Whether shutdown has begun. Only ends loops: what a thread must see
    /// once it has seen the flag (the queues to drain, the registry) is
    /// ordered by `begin_shutdown`'s fence and the registry's lock, not by
    /// this load (the orderings survey: made `Relaxed`, every model passes).
    #[inline]
    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Schedules a task from a thread that is not one of this runtime's
    /// workers (or a worker that is shutting down).
    pub(crate) fn schedule_remote(&self, task: Task) {
        if self.is_shutdown() {
            crate::util::locks::user_code("a task's drop (scheduled after shutdown)");
            drop_task(task); // cancels it: the runtime is gone
            return;
        }
        self.inject.push(task);
        // `notify_parked`'s fence also orders the push before the shutdown
        // re-check below: either `shutdown_drain` sees the task, or we see
        // the flag and drain it ourselves.
        self.notify_parked(None);
        if self.is_shutdown() {
            self.drain_inject();
        }
    }

    /// Schedules a `Latency`- or `Batch`-lane task (from anywhere: the
    /// lanes' queues are runtime-wide).
    pub(crate) fn schedule_lane(&self, task: Task, lane: Lane) {
        if self.is_shutdown() {
            crate::util::locks::user_code("a task's drop (scheduled after shutdown)");
            drop_task(task);
            return;
        }
        self.lane_queue(lane).push(task);
        // As in `schedule_remote`: the fence in `notify_parked` orders the
        // push before the shutdown re-check.
        self.notify_parked(None);
        if self.is_shutdown() {
            self.drain_inject();
        }
    }

    /// The runtime-wide queue of `lane` (the inject queue for `Default`).
    pub(crate) fn lane_queue(&self, lane: Lane) -> &Inject<Task> {
        match lane {
            Lane::Latency => &self.latency,
            Lane::Default => &self.inject,
            Lane::Batch => &self.batch,
        }
    }

    /// Whether any queue holds a task that is not `Batch` work.
    pub(crate) fn has_waiting_work(&self) -> bool {
        !self.inject.is_empty()
            || !self.latency.is_empty()
            || self
                .remotes
                .iter()
                .any(|remote| !remote.steal.is_empty() || remote.has_lifo())
    }

    /// Wakes a sleeping worker if rule 1 of `idle.rs` says so. `by` is the
    /// notifying worker, for its counters.
    pub(crate) fn notify_parked(&self, by: Option<usize>) {
        if let Some(worker) = self.idle.worker_to_notify() {
            match by {
                Some(me) => self.remotes[me].counters.wake_requests.incr(),
                None => self.remote_wake_requests.incr(),
            }
            self.unpark_slot(worker);
        }
    }

    /// A worker's re-check of every queue once it is registered asleep
    /// (rule 4 of `idle.rs`).
    pub(crate) fn notify_if_work_pending(&self, by: usize) {
        let pending = || self.has_waiting_work() || !self.batch.is_empty();
        if let Some(worker) = self.idle.recheck_before_sleep(pending) {
            self.remotes[by].counters.wake_requests.incr();
            self.unpark_slot(worker);
        }
    }

    /// Does what arming a timer asked for (`time::driver::Poke`).
    pub(crate) fn poke_timekeeper(&self, poke: Poke) {
        match poke {
            Poke::Nobody => {}
            Poke::Keeper(worker) => self.unpark_slot(worker),
            Poke::AnySleeper => self.notify_parked(None),
        }
    }

    /// Fires every due timer of every wheel from the calling thread (the
    /// test clock's `advance`).
    #[cfg(feature = "test-util")]
    pub(crate) fn fire_all_due_timers(&self) {
        let now = self.time.clock.now_ns();
        let mut wakers = Vec::new();
        for wheel in 0..self.time.num_wheels() {
            while self.time.fire_due(wheel, now, true, &mut wakers) {}
        }
        for waker in wakers {
            let _ =
                crate::util::locks::call_user("a waker's wake (fired timer)", move || waker.wake());
        }
        self.poke_keeper();
    }

    /// A `block_on` starts (`true`) or stops (`false`) polling its future.
    /// Only the test clock cares: it may jump ahead only while nobody polls.
    /// (`test-util` only, which the loom build does not enable: no model
    /// judges these orderings; the paused-clock tests of `tests/time.rs`
    /// exercise the count, `a_paused_clock_does_not_jump_while_block_on_is_busy`
    /// fails with it never counted.)
    #[inline]
    pub(crate) fn block_on_polling(&self, polling: bool) {
        #[cfg(feature = "test-util")]
        {
            if polling {
                self.block_on_polling.fetch_add(1, Ordering::AcqRel);
            } else {
                self.block_on_polling.fetch_sub(1, Ordering::AcqRel);
                if self.time.clock.is_paused() {
                    self.poke_keeper();
                }
            }
        }
        #[cfg(not(feature = "test-util"))]
        let _ = polling;
    }

    /// Wakes the worker keeping time, if any, so it looks at the wheels and
    /// the clock again (timers fired by `advance`; a paused clock that may
    /// now jump).
    /// Wakes the thread sleeping on slot `slot`'s parker, through the OS
    /// poller if that is where it sleeps (`park.rs`).
    pub(crate) fn unpark_slot(&self, slot: usize) {
        if self.remotes[slot].parker.unpark() == park::Unparked::WakePoller {
            #[cfg(not(loom))]
            self.io.wake();
        }
    }

    pub(crate) fn poke_keeper(&self) {
        if let Some(keeper) = self.time.keeper() {
            self.unpark_slot(keeper);
        }
    }

    /// Whether a paused clock may jump to the next timer: every worker is
    /// asleep, no `block_on` is polling and no blocking closure is queued
    /// or running (its end wakes a task before its pool thread counts
    /// itself idle, so the jump never comes between the two; a `block_on`
    /// awaiting the closure's handle itself counts as polling only once its
    /// thread runs again, a moment the jump may still fall into).
    #[cfg(feature = "test-util")]
    pub(crate) fn may_auto_advance(&self) -> bool {
        self.idle.counts().unparked == 0
            && self.block_on_polling.load(Ordering::Acquire) == 0
            && !self.blocking.has_work_in_flight()
    }

    /// The current-thread flavor's `may_auto_advance`: its one driver is
    /// about to sleep, so only the other `block_on` calls and the blocking
    /// pool can hold the clock.
    #[cfg(all(feature = "test-util", not(loom)))]
    pub(crate) fn may_auto_advance_current_thread(&self) -> bool {
        self.block_on_polling.load(Ordering::Acquire) == 0 && !self.blocking.has_work_in_flight()
    }

    /// Marks the runtime as shutting down and wakes every worker so it sees
    /// the flag. Idempotent.
    pub(crate) fn begin_shutdown(&self) -> bool {
        // The swap's `AcqRel` is not what the protocol rests on (the
        // orderings survey: made `Acquire` or `Release`, every model
        // passes): the fence below is, and the registry's lock orders the
        // drain. The swap picks the one caller that goes first.
        let first = !self.shutdown.swap(true, Ordering::AcqRel);
        // Orders the flag before the inject drain, pairing with the fence
        // in `schedule_remote`'s notify.
        fence(Ordering::SeqCst);
        for slot in 0..self.remotes.len() {
            self.unpark_slot(slot);
        }
        self.monitor.begin_shutdown();
        first
    }

    /// A task's poll panicked: under `UnhandledPanic::ShutdownRuntime`, the
    /// first such panic shuts the runtime down and wakes its `block_on`
    /// calls, which panic (`runtime/scheduler/panic_policy.rs`).
    #[cold]
    pub(crate) fn task_panicked(&self, panic: &(dyn std::any::Any + Send)) {
        if self.panic_policy.task_panicked(panic) {
            self.begin_shutdown();
            self.panic_policy.wake_block_ons();
        }
    }

    /// Drops every task still queued in the inject queue and the lanes'
    /// queues.
    pub(crate) fn drain_inject(&self) {
        for queue in [&self.inject, &self.latency, &self.batch] {
            while let Some(task) = queue.pop() {
                drop_task(task);
            }
        }
    }

    /// After the workers are gone: cancels every task that is still alive
    /// (queued, or pending with its waker held elsewhere), dropping each
    /// future exactly once.
    pub(crate) fn shutdown_drain(&self) {
        // Sockets fail from now on; their waiting tasks are woken (and,
        // being this runtime's, dropped by the shut-down scheduler).
        #[cfg(not(loom))]
        self.io.shut_down();
        self.drain_inject();
        for remote in self.remotes.iter() {
            if let Some(task) = remote.take_lifo() {
                drop_task(task);
            }
        }
        // The wheels hold wakers (task references, each holding this
        // `Shared`): dropping them breaks that cycle; the tasks themselves
        // are cancelled through the registry below.
        for waker in self.time.close() {
            let _ =
                crate::util::locks::call_user("a waker's drop (timer at shutdown)", move || {
                    drop(waker)
                });
        }
        // Waking a registered task now reaches `schedule_remote`, which sees
        // the shutdown flag and drops it (cancelling it).
        for waker in self.registry.close() {
            let _ = crate::util::locks::call_user(
                "a task's drop (registry drain at shutdown)",
                move || {
                    waker.wake();
                },
            );
        }
        self.drain_inject();
    }

    #[inline]
    pub(crate) fn count_remote_spawn(&self) {
        self.remote_spawns.incr();
    }

    /// Counts a dropped task future on the worker that dropped it, if it is
    /// one of ours, or on the striped remote counter. (The "ours" guard
    /// made `true` passes every test: another runtime's worker
    /// drops this runtime's task only when it wakes one as this runtime
    /// shuts down, and then the finish lands on a worker counter here, not
    /// the remote one: the totals and `live_tasks` stay right. Made `false`
    /// it fails `metrics.rs`.)
    #[inline]
    pub(crate) fn count_task_finished(&self) {
        let on_worker = crate::runtime::context::with_core(|core| match core {
            Some(core) if std::ptr::eq(&*core.shared, self) => {
                self.remotes[core.index].counters.tasks_finished.incr();
                true
            }
            _ => false,
        });
        if !on_worker {
            self.remote_finishes.incr();
        }
    }

    /// Tasks spawned and not yet finished (`RuntimeMetrics::live_tasks`
    /// without the rest of a snapshot; the same saturating read).
    pub(crate) fn live_tasks(&self) -> u64 {
        let (mut spawned, mut finished) = (self.remote_spawns.get(), self.remote_finishes.get());
        for remote in self.remotes.iter() {
            spawned += remote.counters.spawned_local.get();
            finished += remote.counters.tasks_finished.get();
        }
        spawned.saturating_sub(finished)
    }

    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        let (workers, spares) = self.remotes.split_at(self.config.num_workers);
        let workers = workers
            .iter()
            .map(|remote| remote.counters.snapshot())
            .collect();
        let mut metrics = RuntimeMetrics::from_workers(workers);
        for spare in spares {
            let counters = spare.counters.snapshot();
            metrics.spare_slots.accumulate(&counters);
            metrics.total.accumulate(&counters);
        }
        self.monitor.fill_metrics(&mut metrics);
        metrics.spawned_remote = self.remote_spawns.get();
        metrics.finished_remote = self.remote_finishes.get();
        metrics.remote_wake_requests = self.remote_wake_requests.get();
        // Saturating: the counters are read one after another, not as one
        // atomic picture, so a racing snapshot may see a finish first.
        metrics.live_tasks = (metrics.total.spawned_local + metrics.spawned_remote)
            .saturating_sub(metrics.total.tasks_finished + metrics.finished_remote);
        metrics.inject_queue_depth = self.inject.len();
        metrics.latency_queue_depth = self.latency.len();
        metrics.batch_queue_depth = self.batch.len();
        metrics.local_queue_depths = self.remotes[..self.config.num_workers]
            .iter()
            .map(|remote| remote.steal.len() + usize::from(remote.has_lifo()))
            .collect();
        let pool = self.blocking.metrics();
        metrics.blocking_threads = pool.threads;
        metrics.blocking_idle_threads = pool.idle_threads;
        metrics.blocking_queue_depth = pool.queue_depth;
        metrics.blocking_tasks_spawned = pool.spawned;
        metrics.timers_pending = self.time.pending();
        (
            metrics.threads_started_by_kind,
            metrics.threads_ended_by_kind,
        ) = self.threads.snapshot();
        metrics
    }
}

/// Drops a task without running it (cancelling it), containing a panic
/// from its future's destructor.
///
/// A second guard: `TaskFuture`'s own `Drop` contains that panic too, so
/// made a no-op (the task still dropped on return) this passes every
/// test, `faults.rs`'s panicking destructors at shutdown included (under
/// loom it would also skip the publication check).
///
/// A drop never runs inside another: a future's destructor may wake a
/// task of a runtime that is shut down (a connection pool's close event
/// does), and the waker's caller may hold a lock the woken task's own
/// destructor takes (event-listener's list lock): dropping that task
/// inline would deadlock on it. While a drop runs on a thread, the tasks
/// its destructor hands here wait on the thread's list, and the outermost
/// drop drops them once it is done.
pub(crate) fn drop_task(task: Task) {
    // Dropping touches the task's memory as a poll does (loom only).
    task.metadata().check_published();
    // During the thread's own teardown (a runtime or set kept in a
    // thread-local) the lists are gone: the task is dropped where it is.
    match DROPPING.try_with(|dropping| dropping.replace(true)) {
        Ok(true) => {
            // Were the list gone, the closure (and the task in it) would
            // be dropped right here.
            let _ = DEFERRED_DROPS.try_with(move |deferred| deferred.borrow_mut().push(task));
            return;
        }
        Ok(false) => {}
        Err(_) => {
            let _ = crate::util::locks::call_user("a task's drop", move || drop(task));
            return;
        }
    }
    let _ = crate::util::locks::call_user("a task's drop", move || drop(task));
    while let Some(next) = DEFERRED_DROPS
        .try_with(|deferred| deferred.borrow_mut().pop())
        .ok()
        .flatten()
    {
        let _ = crate::util::locks::call_user("a task's drop", move || drop(next));
    }
    let _ = DROPPING.try_with(|dropping| dropping.set(false));
}

// Per modelled thread under loom (every modelled thread runs on one OS
// thread), per OS thread otherwise.
#[cfg(not(loom))]
std::thread_local! {
    /// A task's drop is running on this thread (`drop_task`).
    static DROPPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tasks handed to `drop_task` during that drop, dropped after it.
    static DEFERRED_DROPS: std::cell::RefCell<Vec<Task>> = const { std::cell::RefCell::new(Vec::new()) };
}
#[cfg(loom)]
loom::thread_local! {
    static DROPPING: std::cell::Cell<bool> = std::cell::Cell::new(false);
    static DEFERRED_DROPS: std::cell::RefCell<Vec<Task>> = std::cell::RefCell::new(Vec::new());
}

#[cfg(all(test, loom))]
mod loom_tests;
