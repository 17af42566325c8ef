//! The stall monitor and its spare threads: short work keeps moving while
//! every worker is stuck inside a long poll.
//!
//! # What it watches
//!
//! Every worker slot publishes the poll it is in ([`PollWatch`]): a
//! sequence number, odd while the slot's thread is inside a poll and bumped
//! at each poll's start and end, and the polled task's name, spawn location
//! and lane (`'static`, `runtime/task/label.rs` says why) and address (for task
//! dumps): relaxed stores on the slot's own line, no clock read, no
//! read-modify-write. The
//! monitor thread samples the sequence numbers: a slot showing the same odd
//! number as at its last sample has been inside one poll since then.
//!
//! - Past `slow_poll_threshold`, the monitor marks that poll slow; when it
//!   returns, the task's own wrapper sees the mark and moves a `Default`
//!   task to the `Batch` lane (`runtime/task/lane.rs`).
//! - Past `stall_threshold`, the poll is a stall: counted once, reported
//!   once to the `on_stall` hook with the task's name and location.
//! - While every awake thread is stalled, none waits in the reactor's
//!   poller and none reaches its periodic look at it: the monitor takes the
//!   readiness itself, without blocking, at each sample
//!   (`Sampler::deliver_io`), so a socket's task reaches a queue and the
//!   rule below.
//! - While every awake thread (worker or spare) is stalled and work other
//!   than batch work waits (inject or lane queue, any ring or LIFO slot),
//!   nothing is making progress on it: the monitor *hands the waiting work
//!   to a spare thread*; and again while fewer threads of normal priority
//!   run it than `normal_threads_wanted` allows (up to one per worker, as
//!   long as the demoted threads keep `batch_share` by their weight). It
//!   lends the spare an unused worker slot (a ring,
//!   a LIFO slot, counters, the outside timer wheel) and the spare runs the
//!   ordinary worker loop on it, taking the stuck worker's LIFO task and
//!   ring by stealing (the lock-free paths every thief uses) and the global
//!   queues, until it finds nothing; it then returns the slot and waits to
//!   be needed again (a *warm* spare), exiting after `spare_idle_timeout`.
//!   A warm spare is used before a new thread is started, and threads never
//!   exceed `max_threads` (workers plus spare slots).
//! - The threads of those stalled polls are demoted (`sys::demote_thread`,
//!   nice 10, one-way for an unprivileged process): the threads running
//!   the work they hold up get the cores first. After its poll a demoted
//!   thread of a process that may raise priorities (`CAP_SYS_NICE`, as
//!   root) gets its old nice value back and goes on as before
//!   (`PollWatch::restore_thread_priority`): no thread ends or starts for a
//!   demotion. Elsewhere a demoted
//!   worker thread gives its `Core` back (`Monitor::hand_back`, lock-free:
//!   a low-priority thread must not hold a lock that normal threads wait
//!   for) and ends; the monitor, at its next sample, gives the core to a
//!   spare thread of normal priority (an idle one, or a new one: a thread
//!   started by the demoted one would inherit its priority). A demoted
//!   spare gives its slot back the same way and ends. New spare threads
//!   are started by a *spawner* thread, never by the monitor: creating a
//!   thread takes C-library locks that an ending demoted thread may hold
//!   for milliseconds (`Monitor::start_spares`).
//! - A thread seen inside one poll at two samples in a row gets a time
//!   slice longer than the kernel's default until the poll is over
//!   (`sys::lengthen_slice`), so any thread that wakes on its core, a
//!   spare or a thread outside the runtime, runs at once rather than at
//!   the next tick; the monitor gives it the short slice back at the first
//!   sample after the poll (two system calls each way, on the monitor
//!   thread, only for polls that last a sample period).
//! - Lowered is not enough to give way at once (`sys::install_step_aside`
//!   says why): when work has waited for [`STEP_ASIDE_AFTER`] samples and
//!   no thread of normal priority began or ended a poll meanwhile, the
//!   monitor asks each demoted thread still inside its stalled poll to
//!   *step aside*: a signal whose handler sleeps 30 µs, so the kernel runs
//!   the waiting thread on that core at once rather than at its next tick.
//!
//! # Tried and dropped
//!
//! Each measured in the mixed lane; the numbers are in
//! `docs/experiments.md` ([demotion], [handoffs], [the open-loop tail],
//! [stepping aside], [time slices]):
//!
//! - `SCHED_IDLE` instead of nice 10: a thread that gets no CPU while
//!   normal threads run turns every lock it holds into a priority
//!   inversion (the application's too).
//! - Normal threads sleeping `batch_share` of their time so demoted polls
//!   get their share: long throughput up, short p99 doubled.
//! - Demoting only a stalled poll whose CPU clock ran half the wall time:
//!   the open-loop tail went, the closed-loop long throughput with it.
//! - A warm reserve of spares, demoting every stalled poll, `sched_yield`
//!   in the step-aside handler, task threads a nice step below the
//!   monitor: none moved the open-loop p99 beyond its spread.
//! - A 0.5 ms `stall_threshold`; stepping aside at demotion; handing off
//!   before `stall_threshold`; a 0.7 ms slice for workers and spares:
//!   no better, or worse.
//! - An external ticker process to make each core pick again: some gain,
//!   not built into a runtime.
//!
//! [demotion]: ../../../../docs/experiments.md#demotion
//! [handoffs]: ../../../../docs/experiments.md#handoffs
//! [the open-loop tail]: ../../../../docs/experiments.md#the-open-loop-tail
//! [stepping aside]: ../../../../docs/experiments.md#stepping-aside
//! [time slices]: ../../../../docs/experiments.md#time-slices
//!
//! # Files
//!
//! `watch.rs`: what a slot publishes ([`PollWatch`]). `sample.rs`: the
//! monitor thread's loop (sample, decide, act) and its rules. `spare.rs`:
//! spare threads and the spawner. `loom_tests.rs`: the models of the
//! handoff, the hand-back and the monitor's sleep.
//!
//! # Why the stuck worker keeps its queue
//!
//! The stuck thread is inside a task's poll, and that task may wake others
//! onto the worker's ring at any moment; taking the ring's owner side away
//! from it would give the ring two owners. So ownership never moves while
//! a poll runs: the spare reaches the stuck worker's tasks through the
//! steal side, which is built for concurrent thieves, and the stuck thread
//! carries on as that worker when its poll returns (or, if it was demoted,
//! gives the whole `Core` back then: between polls nothing else uses it). Each ring has
//! exactly one owner at every moment (a worker, or the one spare holding
//! the slot: slots are lent under the monitor's lock, one thread at a
//! time). A spare does not join the sleep/wake protocol of `idle.rs`: it
//! never parks holding a slot, and it gives the slot back only after its
//! own ring and LIFO slot are empty, which nothing else can refill (only
//! tasks running on the holder push there). The loom model
//! `monitor/loom_tests.rs` checks that a stuck worker returning from its
//! poll while a spare drains its queue loses no task and runs none twice.
//!
//! # Cost when nothing is stuck
//!
//! Two stores per poll on the hot path. The monitor sleeps on a condvar
//! while every worker is parked (a worker woken for new work wakes it; one
//! woken by its timer as the timekeeper does not, or dense timers would
//! wake the monitor thousands of times a second: a poll that gets stuck
//! after a timer's wake is seen at the next wake for work, or within
//! [`IDLE_RECHECK`]), and
//! while workers are busy it samples every `stall_threshold / 4`, backing
//! off by doubling up to [`MAX_PERIOD`] while no poll lasts from one sample
//! to the next (Go's sysmon backs off the same way, 20 µs to 10 ms).

// The monitor's sleep handshake (`sleeping`, its fences, the state lock
// and `wake_monitor`) and the hand-back handshake (`handed_back`, `closed`
// and their fences) are protocols, and so is the count of spare threads
// (`spare_threads`: written with and without the lock): those are loom's
// under `cfg(loom)`, and `loom_tests.rs` models them. The counters are
// `std` atomics (read for metrics only).
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::util::locks::{Condvar, IdleThreads, Mutex, MutexGuard};
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::fence;

use crate::metrics::RuntimeMetrics;

use super::Shared;
use super::inject::Inject;
use super::queue::Local;
use super::worker::Core;
use crate::runtime::task::Task;

mod sample;
mod spare;
mod stall;
mod watch;

pub use stall::StallInfo;

#[cfg(all(test, loom))]
pub(crate) use sample::mark_stalled;
pub(crate) use sample::run_monitor;
#[cfg(all(test, loom))]
pub(crate) use spare::run_spawner;
pub(crate) use watch::PollWatch;

/// Longest sampling period while workers are busy and nothing looks stuck.
const MAX_PERIOD: Duration = Duration::from_millis(10);
/// Longest sleep while every worker is parked. A backstop only: a worker
/// woken for new work wakes the monitor, and work that queues up behind a
/// poll stuck after a timer's wake wakes a sleeping worker (rule 1 of
/// `idle.rs`), which wakes the monitor. (Measured against 1 s in the
/// timers lane: [dense timers](../../../../docs/experiments.md#dense-timers).)
const IDLE_RECHECK: Duration = Duration::from_secs(10);
/// Samples in a row in which work waited and no thread of normal priority
/// moved (none began or ended a poll) before the demoted threads are asked
/// to step aside (`sys::ask_to_step_aside`): two sample periods, 0.5 ms at
/// the default threshold (one asked too often, three was no better:
/// [stepping aside](../../../../docs/experiments.md#stepping-aside)).
const STEP_ASIDE_AFTER: u32 = 2;

/// Starts a thread that runs `body` with the runtime as its context and
/// the runtime's thread hooks (provided by `runtime/`, which owns thread
/// naming and the exit latch shutdown waits on). Named `name` if given,
/// else by the program's `thread_name` hook, which is user code: only
/// without a runtime lock held.
pub(crate) type SpawnThread =
    Box<dyn Fn(Arc<Shared>, fn(&Arc<Shared>), Option<String>) -> std::io::Result<()> + Send + Sync>;

#[cfg(all(test, loom))]
mod loom_tests;

/// The hook `Builder::on_stall` installs.
pub(crate) type StallHook = std::sync::Arc<dyn Fn(&StallInfo) + Send + Sync + 'static>;

/// The monitor's settings.
pub(crate) struct MonitorConfig {
    pub(crate) enabled: bool,
    pub(crate) stall_threshold: Duration,
    pub(crate) slow_poll_threshold: Duration,
    pub(crate) spare_idle_timeout: Duration,
    pub(crate) on_stall: Option<StallHook>,
    pub(crate) spawn_thread: SpawnThread,
    /// The spawner thread's name, asked of the program's `thread_name`
    /// hook when the runtime is built: the spawner is started under the
    /// monitor's lock, where no user code may run.
    pub(crate) spawner_name: String,
    /// Whether a thread holding up waiting work in a stalled poll is
    /// demoted (`demote_slow_tasks`).
    pub(crate) demote_threads: bool,
}

/// The monitor's state, in `Shared`.
pub(crate) struct Monitor {
    config: MonitorConfig,
    state: Mutex<State>,
    /// Wakes the monitor thread (a worker left its park; shutdown).
    wake_monitor: Condvar,
    /// Wakes the spawner (spares to start; shutdown).
    wake_spawner: Condvar,
    /// The monitor sleeps until a worker wakes.
    sleeping: crate::util::loom::sync::atomic::AtomicBool,
    stalls: AtomicU64,
    handoffs: AtomicU64,
    spares_started: AtomicU64,
    spares_woken: AtomicU64,
    spares_retired: AtomicU64,
    threads_demoted: AtomicU64,
    step_asides: AtomicU64,
    /// Tasks woken by readiness the monitor delivered (`Sampler::deliver_io`).
    io_deliveries: AtomicU64,
    /// Tasks woken by timers the monitor fired (`Sampler::fire_timers`).
    timer_fires: AtomicU64,
    /// Demoted threads given their priority back after their poll.
    threads_restored: AtomicU64,
    /// A demoted thread got its priority back once: this process may raise
    /// priorities, so a demoted thread does not hand anything back after
    /// its poll, and the monitor may rest beside it (`Sampler::act`).
    restores_work: std::sync::atomic::AtomicBool,
    /// Spare threads alive (counted down without the lock: a demoted
    /// thread ends without taking it). loom's under `cfg(loom)`: the
    /// monitor's count-in under the lock races those count-outs.
    spare_threads: crate::util::loom::sync::atomic::AtomicUsize,
    /// What demoted threads give back, without the monitor's lock (a
    /// thread that runs at a low priority must not hold a lock others
    /// wait for: it may not get a core again for a long time). The monitor
    /// takes it at its next sample. (The inject queue's type: crossbeam's
    /// lock-free queue, a mutex-guarded one under loom.)
    handed_back: Inject<HandBack>,
    /// Set at shutdown, before `handed_back` is drained for the last time
    /// (the handshake with `hand_back`: the model
    /// `loom_tests::a_core_handed_back_as_shutdown_begins_is_closed_once`
    /// checks the protocol; under loom the queue's mutex orders push and
    /// drain by itself, so the fences are not judged there).
    closed: crate::util::loom::sync::atomic::AtomicBool,
}

/// Given back by a demoted thread.
// A hand-back happens once per demotion and is moved once into a queue:
// boxing the core would add an allocation there and save nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum HandBack {
    /// A worker core, for a spare thread of normal priority to run.
    Worker(Core),
    /// A lent spare slot (its ring is empty).
    Slot(usize, Local<Task>),
}

struct State {
    /// Worker cores whose demoted thread gave them up after its poll,
    /// waiting for a thread of normal priority.
    orphans: Vec<Core>,
    shutdown: bool,
    /// Spare slots not lent: their index and the owner side of their ring.
    free: Vec<(usize, Local<Task>)>,
    /// Slots lent and not yet picked up by a spare thread.
    lent: Vec<(usize, Local<Task>)>,
    /// Spare slots held by a spare thread (indexed from `num_workers`).
    held: Vec<bool>,
    /// Idle spare threads not yet woken (a slot to run wakes the one idle
    /// the shortest time).
    idle_spares: IdleThreads,
    /// Spares taken out of `idle_spares` and woken that have not yet taken
    /// the lock again: each will look for a slot or an orphan.
    woken_spares: usize,
    /// Spare threads asked of the spawner that have not yet taken the
    /// lock in `run_spare` (counted in `spare_threads` already).
    starting: usize,
    /// Spare threads the spawner has still to start.
    to_start: usize,
    /// Whether the spawner thread runs (started at the first request).
    spawner: bool,
}

impl Monitor {
    pub(crate) fn new(config: MonitorConfig, spare_slots: usize) -> Monitor {
        Monitor {
            config,
            state: Mutex::new(State {
                orphans: Vec::new(),
                shutdown: false,
                free: Vec::new(),
                lent: Vec::new(),
                held: vec![false; spare_slots],
                idle_spares: IdleThreads::default(),
                woken_spares: 0,
                starting: 0,
                to_start: 0,
                spawner: false,
            }),
            wake_monitor: Condvar::new(),
            wake_spawner: Condvar::new(),
            sleeping: crate::util::loom::sync::atomic::AtomicBool::new(false),
            stalls: AtomicU64::new(0),
            handoffs: AtomicU64::new(0),
            spares_started: AtomicU64::new(0),
            spares_woken: AtomicU64::new(0),
            spares_retired: AtomicU64::new(0),
            threads_demoted: AtomicU64::new(0),
            step_asides: AtomicU64::new(0),
            io_deliveries: AtomicU64::new(0),
            timer_fires: AtomicU64::new(0),
            threads_restored: AtomicU64::new(0),
            restores_work: std::sync::atomic::AtomicBool::new(false),
            spare_threads: crate::util::loom::sync::atomic::AtomicUsize::new(0),
            handed_back: Inject::new(),
            closed: crate::util::loom::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A demoted thread gives back a worker core or a lent slot: lock-free
    /// (see `handed_back`); the monitor gives a worker core to a spare
    /// thread of normal priority (an idle one, or a new one: a thread
    /// started by the demoted one would inherit its priority).
    pub(crate) fn hand_back(&self, item: HandBack) {
        self.handed_back.push(item);
        // Pairs with the fence in `begin_shutdown`: either its drain sees
        // the item, or this load sees `closed` and drains it here. Fences,
        // not a read-modify-write: the two sides write different words
        // (the queue, the flag), and loom models `SeqCst` fences exactly.
        fence(Ordering::SeqCst);
        if self.closed.load(Ordering::Relaxed) {
            self.drain_handed_back_at_shutdown();
        }
    }

    /// Closes the worker cores handed back too late for the monitor. (The
    /// tasks in such a core would still be dropped through the registry
    /// at shutdown, so only the loom model named at `closed`, which checks
    /// before that, and `scripts/valgrind.sh`, which sees the core leak
    /// with the runtime's shared state it holds, notice a core left here.)
    fn drain_handed_back_at_shutdown(&self) {
        while let Some(item) = self.handed_back.pop() {
            if let HandBack::Worker(core) = item {
                core.close();
            }
        }
    }

    /// Takes what demoted threads gave back (the caller holds the lock).
    fn take_handed_back(&self, shared: &Shared, state: &mut State) {
        while let Some(item) = self.handed_back.pop() {
            match item {
                HandBack::Worker(core) => state.orphans.push(core),
                HandBack::Slot(index, local) => {
                    state.held[index - shared.config.num_workers] = false;
                    state.free.push((index, local));
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A demoted thread got its priority back after its poll.
    pub(crate) fn thread_restored(&self) {
        self.threads_restored.fetch_add(1, Ordering::Relaxed);
        if !self.restores_work.load(Ordering::Relaxed) {
            self.restores_work.store(true, Ordering::Relaxed);
        }
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.config.enabled
    }

    /// Gives the monitor the owner sides of the spare slots' rings
    /// (`Shared::new` made them with the workers').
    pub(crate) fn add_spare_slots(&self, first: usize, locals: Vec<Local<Task>>) {
        let mut state = self.lock();
        state.free.extend(
            locals
                .into_iter()
                .enumerate()
                .map(|(i, local)| (first + i, local)),
        );
    }

    /// A worker left its park: if the monitor sleeps because every worker
    /// was parked, it starts sampling again.
    pub(crate) fn worker_woke(&self) {
        if !self.config.enabled {
            return;
        }
        // Pairs with the fence in `sleep_until_a_worker_wakes`: either this
        // load sees `sleeping`, or the monitor's re-check of the idle counts
        // sees this worker awake (the idle state word was written before
        // this fence). Fences, not a read-modify-write: the two sides touch
        // different words, and loom models `SeqCst` fences exactly
        // (`loom_tests::a_worker_woken_as_the_monitor_goes_to_sleep_wakes_it`).
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            let _state = self.lock();
            self.sleeping.store(false, Ordering::Relaxed);
            self.wake_monitor.notify_one();
        }
    }

    pub(crate) fn begin_shutdown(&self) {
        if !self.config.enabled {
            // No monitor thread, so no spare and nothing handed back.
            return;
        }
        self.closed.store(true, Ordering::Relaxed);
        // Pairs with the fence in `hand_back`.
        fence(Ordering::SeqCst);
        self.drain_handed_back_at_shutdown();
        let mut state = self.lock();
        state.shutdown = true;
        // The free slots' rings are empty; dropping them here frees them
        // early (the lent ones go with their spare thread).
        state.free.clear();
        state.lent.clear();
        let orphans = std::mem::take(&mut state.orphans);
        self.wake_monitor.notify_all();
        state.idle_spares.wake_all();
        self.wake_spawner.notify_all();
        drop(state);
        // Outside the lock: dropping tasks runs their destructors.
        for core in orphans {
            core.close();
        }
    }

    pub(crate) fn fill_metrics(&self, metrics: &mut RuntimeMetrics) {
        metrics.stalls = self.stalls.load(Ordering::Relaxed);
        metrics.handoffs = self.handoffs.load(Ordering::Relaxed);
        metrics.spares_started = self.spares_started.load(Ordering::Relaxed);
        metrics.spares_woken = self.spares_woken.load(Ordering::Relaxed);
        metrics.spares_retired = self.spares_retired.load(Ordering::Relaxed);
        metrics.threads_demoted = self.threads_demoted.load(Ordering::Relaxed);
        metrics.step_asides = self.step_asides.load(Ordering::Relaxed);
        metrics.monitor_io_wakes = self.io_deliveries.load(Ordering::Relaxed);
        metrics.monitor_timer_wakes = self.timer_fires.load(Ordering::Relaxed);
        metrics.threads_restored = self.threads_restored.load(Ordering::Relaxed);
        metrics.spare_threads = self.spare_threads.load(Ordering::Relaxed);
    }
}

impl Monitor {
    /// With every worker parked: sleeps until a worker wakes for new work
    /// (`worker_woke`), or [`IDLE_RECHECK`] passes.
    fn sleep_until_a_worker_wakes<'a>(
        &'a self,
        shared: &Shared,
        state: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        self.rest_until_a_worker_wakes(shared, state, 0, IDLE_RECHECK)
    }

    /// Sleeps until a worker wakes for new work (`worker_woke`), or
    /// `timeout` passes, unless more than `unparked` workers are awake by
    /// the time the monitor is registered asleep (the handshake of
    /// `worker_woke`; modelled with `unparked == 0`, the same protocol).
    fn rest_until_a_worker_wakes<'a>(
        &'a self,
        shared: &Shared,
        state: MutexGuard<'a, State>,
        unparked: usize,
        timeout: Duration,
    ) -> MutexGuard<'a, State> {
        let mut state = state;
        self.sleeping.store(true, Ordering::Relaxed);
        // Pairs with the fence in `worker_woke` (see there).
        fence(Ordering::SeqCst);
        if shared.idle.counts().unparked <= unparked {
            state = self
                .wake_monitor
                .wait_timeout(state, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        self.sleeping.store(false, Ordering::Relaxed);
        state
    }
}
