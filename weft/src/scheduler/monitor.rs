//! The stall monitor and its spare threads: short work keeps moving while
//! every worker is stuck inside a long poll.
//!
//! # What it watches
//!
//! Every worker slot publishes the poll it is in ([`PollWatch`]): a
//! sequence number, odd while the slot's thread is inside a poll and bumped
//! at each poll's start and end (two relaxed stores per poll, on the slot's
//! own line; no clock read, no read-modify-write), and the polled task's
//! name and spawn location (`'static`, `task/label.rs` says why). The
//! monitor thread samples the sequence numbers: a slot showing the same odd
//! number as at its last sample has been inside one poll since then.
//!
//! - Past `slow_poll_threshold`, the monitor marks that poll slow; when it
//!   returns, the task's own wrapper sees the mark and moves a `Default`
//!   task to the `Batch` lane (`task/lane.rs`).
//! - Past `stall_threshold`, the poll is a stall: counted once, reported
//!   once to the `on_stall` hook with the task's name and location.
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
//! Tried and dropped (mixed lane, 2 workers, quiet machine): `SCHED_IDLE`
//! instead of nice 10 (short p99 open loop 33 ms against 4.4: a thread
//! that gets no CPU at all turns every lock it holds into a priority
//! inversion); normal threads sleeping `batch_share` of their time while
//! demoted threads run, to give long polls their share (long throughput
//! at 32+2 18.7 → 21-27/s, but short p99 15 → 26-33 ms closed and 4.4 →
//! 14.5 ms open). Also tried (four quick runs each): demoting only a
//! stalled thread whose CPU clock ran at least half the wall time (so a
//! short poll merely slowed by the others is not lowered): the open-loop
//! p99 tails vanished (4.9-6.0 ms) but closed-loop long throughput fell to
//! 7-13 req/s (20-35% of tokio's), as the short work's threads, no longer
//! lowered by mistake, took the cores; adding a sleep-based share for a
//! demoted poll whose CPU share fell below `batch_share` brought long
//! throughput back to 14-19 req/s at the cost of open-loop p99
//! 7.7-14.5 ms. Neither beat the rule here (p99 4.6-6.5 ms open, long
//! throughput 46-67% of tokio's closed) on both.
//!
//! What the open loop's remaining tail is made of (2026-11-24, `perf sched
//! record -k mono` beside per-request timestamps; 2 cores, HZ 250): the p99
//! comes from a few episodes per second in which no short request starts
//! for 4-9 ms, each a thread of the runtime left runnable behind a thread
//! inside a long poll until that core's next tick: a spare woken onto the
//! core of a long poll just begun at normal priority or demoted *while
//! running* (cross-core wakes onto such a core waited p90 3.9-4.4 ms, onto
//! one demoted before it was switched in p99 0.05 ms), or the monitor
//! itself, preempted by the thread it woke (which then began a long poll at
//! normal priority). Tried against that, none beyond the spread (open-loop
//! p99, alternated full runs): a warm reserve, one spare started per
//! demoted thread so no handoff waits for a new thread (6 pairs, mean 4.79
//! vs 4.88 ms; the new threads' age in the episodes went from 4-9 ms to
//! 17-200 ms, the episodes stayed); demoting every stalled poll, not only
//! one that holds up waiting work (3 pairs, 4.8-5.3 vs 4.3-4.7); `SIGURG`
//! to the demoted thread with a handler calling `sched_yield` (one traced
//! run: the episodes stayed: under EEVDF a yield only moves the yielding
//! thread's deadline, and a woken thread that is not eligible still waits);
//! task-running threads one nice step below the monitor (5 pairs, 4.3-6.7
//! vs 4.4-5.9). What did move it (2026-11-25): the same signal with a
//! handler that *blocks* for 30 µs (stepping aside, above). 6 alternated
//! pairs of `weft-bench mixed --runtimes weft --only open_2000`: short p99
//! 4.3-15.1 ms (mean 8.1) -> 3.4-5.6 (one run 15.2; mean 6.0), lower in
//! 5 of 6; p90 1.2-2.7 -> 0.85-0.96 ms (one 1.65); p99 from submission
//! 3.6-8.4 -> 2.1-3.0 ms (one 6.2); long throughput 28.0-30.0 -> 28.7-30.0
//! per s. Closed loop, 32 + 2 (3 pairs): long throughput 14.7-16.7 ->
//! 18.0-19.3 per s, short p99 7.2-7.6 -> 7.1-9.0 ms; 128 + 8 (7 pairs):
//! p99 25.9-34.2 (mean 31.1) -> 27.7-50.0 ms (mean 35.7), long 13.3-16.0
//! -> 11.3-16.0 per s, within the spread of either. Tried beside it and
//! dropped (open loop, alternated pairs): a 0.5 ms `stall_threshold` (4
//! pairs: p99 3.6-11.2 against 3.6-31.2 ms, long throughput 2-4% lower);
//! a demoted thread also asked to step aside at once when it is demoted,
//! not only after two samples without progress (5 pairs: p99 4.3-4.5
//! against 2.8-4.3 ms, one 13.2). After the longer slices (2026-11-25):
//! handing waiting work off once it has waited two samples with no thread
//! of normal priority moving, even while their polls are younger than
//! `stall_threshold` (8 pairs: short p99 from submission mean 2.45 against
//! 2.41 ms). What remains of the open loop's p99 in a traced run: a long
//! poll begun on a thread of normal priority while the other core runs a
//! demoted one (the short requests behind it wait out the stall threshold,
//! 1.2-2 ms), and the machine itself: a vCPU the host did not run for
//! 9 ms (no tick on that CPU meanwhile), the kernel's `kdamond` thread
//! holding a core for 4 ms, a timer of an idle vCPU firing 2.9 ms late
//! (a demoted thread's 30 us step-aside and the generator's wake-up, both
//! on that CPU). The monitor itself waited over 1 ms for a core 10 times
//! in one traced run: 4 behind `kdamond`, 6 behind a long poll just begun
//! at normal priority (both with the shortest slice, so the woken monitor
//! does not always come first). Tried against the latter: workers and
//! spares at a 0.7 ms slice, the monitor and spawner kept at 0.1 ms (8
//! pairs: short p99 mean 3.4 -> 4.1 ms, higher in 7; the generator's
//! lateness up too): dropped.
//!
//! Tried again on 2026-11-26, now that a demoted thread takes no lock of
//! the runtime's after its poll (one binary switched by an environment
//! variable running the lane's generator, open loop, 6 s windows, 6
//! alternated pairs): `SCHED_IDLE` instead of nice 10
//! (and `normal_threads_wanted` at its weight, 3/1024, else the long
//! polls got nothing at 128 + 8). The first three quick pairs looked
//! better (p99 1.5-2.0 against 3.6-5.3 ms); the 6 s pairs did not: p99.9
//! 39-44 ms in 4 of 6 (nice 10: 4.7-6.7 ms), one p99 of 19.6 ms with the
//! generator 12.6 ms late: a thread that gets no CPU while normal ones
//! run still holds what others wait for (here, most likely the
//! completion channel's lock shared with the generator), so the
//! inversion is the application's, not only the runtime's. Closed loop
//! (3 pairs each): 32 + 2 long throughput 15-17 against 18-19 per s,
//! maxima of 46 and 84 ms. A 0.5 ms `stall_threshold` again (6 pairs,
//! 6 s): short p99 from submission mean 2.0 against 2.2 ms, from arrival
//! 3.06 against 3.03 ms, long throughput 6% lower: dropped again. The
//! lane's oracle row (a scheduler told each request's kind) measured p99
//! from submission 0.5-1.4 ms in the same runs: what remains of weft's
//! ~2 ms is the detection itself (a long poll begun on the thread of
//! normal priority holds the short work behind it for `stall_threshold`
//! plus a sample, and a woken thread can then wait for the core's tick).
//! A `perf sched` trace of one open-loop run (2026-11-26) shows the worst
//! episodes' shape: a demoted thread ends, the monitor wakes a spare and
//! the spawner, each wakee preempts the monitor, the spawner's new thread
//! (placed with no lag, so picked first) takes the next long request and
//! runs it at normal priority, and the monitor, runnable all the while,
//! gets its core back only at the next tick, 3.8 ms later: nothing else
//! happens on that core to make the kernel pick again. A helper that
//! makes something happen (a process per CPU, pinned, sleeping 0.5 ms in
//! a loop, run beside the lane: 5 alternated pairs, 6 s) moved the p99
//! from submission 2.09 -> 1.88 ms (mean) and from arrival 2.90 -> 2.45
//! ms, for ~5% of the long throughput (a Python loop; the p99.9 did not
//! move): not built into the runtime.
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

use std::panic::Location;
// The poll watches and the counters are `std` atomics: the monitor reads
// them by sampling, which is timing, not a protocol, and as loom atomics
// they would add states to every worker model (each poll writes them).
// The monitor's sleep handshake (`sleeping`, its fences, the state lock
// and `wake_monitor`) and the hand-back handshake (`handed_back`, `closed`
// and their fences) are protocols: those are loom's under `cfg(loom)`, and
// `loom_tests.rs` models them.
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::loom::sync::atomic::fence;
use crate::loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::metrics::RuntimeMetrics;
use crate::runtime::StallInfo;
use crate::task::TaskMeta;
use crate::task::label::Label;

use super::Shared;
use super::inject::Inject;
use super::queue::Local;
use super::worker::{Core, RunExit};
use crate::task::Task;

/// Longest sampling period while workers are busy and nothing looks stuck.
const MAX_PERIOD: Duration = Duration::from_millis(10);
/// Longest sleep while every worker is parked. A backstop only: a worker
/// woken for new work wakes the monitor, and work that queues up behind a
/// poll stuck after a timer's wake wakes a sleeping worker (rule 1 of
/// `idle.rs`), which wakes the monitor. (1 s cost an idle runtime with
/// 10,000 timers ~0.05 ms of CPU per second in the timers lane, about as
/// much as the whole runtime otherwise.)
const IDLE_RECHECK: Duration = Duration::from_secs(10);
/// Samples in a row in which work waited and no thread of normal priority
/// moved (none began or ended a poll) before the demoted threads are asked
/// to step aside (`sys::ask_to_step_aside`): two sample periods, 0.5 ms at
/// the default threshold. Mixed lane, open loop, alternated pairs
/// (2026-11-25): asking after one such sample cut the short p99 as much
/// but asked ~1,300 times a second and cost the long polls 7% of their
/// throughput; after two, ~250 times a second and no measurable long
/// throughput; after three, ~100 and a p99 no lower than after two.
const STEP_ASIDE_AFTER: u32 = 2;

/// The poll a worker slot is in, published for the monitor.
#[derive(Default)]
pub(crate) struct PollWatch {
    /// Odd while the slot's thread is inside a poll.
    seq: AtomicU64,
    /// The polled task's `Label` bits.
    label: AtomicUsize,
    /// The `seq` of a poll the monitor saw run past `slow_poll_threshold`.
    slow_seq: AtomicU64,
    /// The monitor found this slot stalled at its last sample: other
    /// threads take its queued tasks before their own inject work.
    stalled: AtomicBool,
    /// The kernel id of the thread running this slot (0: none). A lock, not
    /// an atomic, because the monitor acts on that id with system calls
    /// (`setpriority`, `sched_setattr`, `tgkill`): it holds this lock across
    /// each call, and a thread clears its id under it before it can end
    /// ([`ThreadOnSlot`]), so an id the monitor acts on always names the
    /// live thread running this slot, never one that reused the number.
    thread_id: std::sync::Mutex<i32>,
    /// The monitor lowered the priority of the thread running this slot:
    /// after its poll it hands the slot to a thread of normal priority.
    thread_demoted: AtomicBool,
}

/// A thread's hold on a slot's [`PollWatch`]: dropping it clears the
/// thread's id there (under the watch's lock, so after the drop no system
/// call of the monitor can name this thread).
pub(crate) struct ThreadOnSlot<'a> {
    watch: &'a PollWatch,
    tid: i32,
}

impl Drop for ThreadOnSlot<'_> {
    fn drop(&mut self) {
        let mut tid = self.watch.lock_thread_id();
        // Another thread may run the slot already (it attached after a
        // hand-back): its id stays.
        if *tid == self.tid {
            *tid = 0;
        }
    }
}

impl PollWatch {
    /// A poll of `meta`'s task starts; `seq` is odd.
    #[inline]
    pub(crate) fn begin(&self, seq: u64, meta: &TaskMeta) {
        // The seqlock's writer side: a monitor that reads this label has,
        // after its Acquire fence, the previous poll's `end` store in view,
        // so its re-read of `seq` sees the poll it sampled is over (without
        // this fence the new label could pair with the old number; a
        // compiler barrier on x86).
        std::sync::atomic::fence(Ordering::Release);
        self.label.store(meta.label().bits(), Ordering::Relaxed);
        // Release: a monitor that reads this `seq` reads the label above
        // (or a later one, which its second read of `seq` detects).
        self.seq.store(seq, Ordering::Release);
    }

    /// The poll started with `seq - 1` has returned.
    #[inline]
    pub(crate) fn end(&self, seq: u64) {
        self.seq.store(seq, Ordering::Release);
    }

    /// Whether the monitor marked the poll `seq` as slow.
    #[inline]
    pub(crate) fn is_slow(&self, seq: u64) -> bool {
        self.slow_seq.load(Ordering::Relaxed) == seq
    }

    fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// The slot's last published number, for the next `Core` of the slot
    /// to continue from (read by the thread about to run the slot).
    pub(crate) fn current_seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The calling thread now runs this slot, until the returned guard
    /// drops (before the thread can end, even by unwinding).
    #[must_use = "the thread runs the slot while the guard lives"]
    pub(crate) fn attach_thread(&self) -> ThreadOnSlot<'_> {
        let tid = crate::sys::current_thread_id();
        *self.lock_thread_id() = tid;
        self.thread_demoted.store(false, Ordering::Relaxed);
        ThreadOnSlot { watch: self, tid }
    }

    fn lock_thread_id(&self) -> std::sync::MutexGuard<'_, i32> {
        // Nothing panics under this lock but the system calls' callers;
        // the id is valid either way.
        self.thread_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `act` on the kernel id of the thread running this slot, if one
    /// is attached, while that thread cannot end (see `thread_id`).
    fn with_thread<R>(&self, act: impl FnOnce(i32) -> R) -> Option<R> {
        let tid = self.lock_thread_id();
        (*tid != 0).then(|| act(*tid))
    }

    /// Whether the thread running this slot was demoted (checked after each
    /// poll: one load of a line the slot's thread writes anyway).
    #[inline]
    pub(crate) fn is_thread_demoted(&self) -> bool {
        self.thread_demoted.load(Ordering::Relaxed)
    }

    /// Whether the monitor last saw this slot stalled. (Made `true`, every
    /// thread was lowered at the first stall, a healthy worker's in the
    /// middle of 200 us polls, and ran on lowered: `lanes.rs`'s
    /// `only_the_stalled_polls_thread_is_lowered`.)
    #[inline]
    pub(crate) fn is_stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }

    pub(crate) fn set_stalled(&self, stalled: bool) {
        if self.stalled.load(Ordering::Relaxed) != stalled {
            self.stalled.store(stalled, Ordering::Relaxed);
        }
    }

    /// The label of poll `seq`, if it is still the current one (a seqlock
    /// read, paired with the fence in `begin`: every field is atomic and
    /// the label `'static`, so a torn read is only detected, never
    /// undefined). Not modelled by loom (`std` atomics, see the imports).
    fn label(&self, seq: u64) -> Option<(Option<&'static str>, &'static Location<'static>)> {
        let bits = self.label.load(Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != seq {
            return None;
        }
        let label = Label::from_bits(bits)?;
        Some((label.name(), label.spawned_at()))
    }
}

/// Starts a thread that runs `body` with the runtime as its context and
/// the runtime's thread hooks (provided by `runtime/`, which owns thread
/// naming and the exit latch shutdown waits on).
pub(crate) type SpawnThread =
    Box<dyn Fn(Arc<Shared>, fn(&Arc<Shared>)) -> std::io::Result<()> + Send + Sync>;

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
    /// Wakes idle spares (a slot to run; shutdown).
    wake_spares: Condvar,
    /// Wakes the spawner (spares to start; shutdown).
    wake_spawner: Condvar,
    /// The monitor sleeps until a worker wakes.
    sleeping: crate::loom::sync::atomic::AtomicBool,
    stalls: AtomicU64,
    handoffs: AtomicU64,
    spares_started: AtomicU64,
    spares_woken: AtomicU64,
    spares_retired: AtomicU64,
    threads_demoted: AtomicU64,
    step_asides: AtomicU64,
    /// Spare threads alive (counted down without the lock: a demoted
    /// thread ends without taking it).
    spare_threads: AtomicUsize,
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
    closed: crate::loom::sync::atomic::AtomicBool,
}

/// Given back by a demoted thread.
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
    idle_spares: usize,
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
                idle_spares: 0,
                starting: 0,
                to_start: 0,
                spawner: false,
            }),
            wake_monitor: Condvar::new(),
            wake_spares: Condvar::new(),
            wake_spawner: Condvar::new(),
            sleeping: crate::loom::sync::atomic::AtomicBool::new(false),
            stalls: AtomicU64::new(0),
            handoffs: AtomicU64::new(0),
            spares_started: AtomicU64::new(0),
            spares_woken: AtomicU64::new(0),
            spares_retired: AtomicU64::new(0),
            threads_demoted: AtomicU64::new(0),
            step_asides: AtomicU64::new(0),
            spare_threads: AtomicUsize::new(0),
            handed_back: Inject::new(),
            closed: crate::loom::sync::atomic::AtomicBool::new(false),
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
        self.wake_spares.notify_all();
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
        metrics.spare_threads = self.spare_threads.load(Ordering::Relaxed);
    }

    /// Finds threads for what waits for one (lent slots, orphaned worker
    /// cores): idle spares first, then threads already on their way, then
    /// new ones, asked of the spawner.
    fn find_threads(&self, shared: &Arc<Shared>, state: &mut MutexGuard<'_, State>) {
        let waiting = state.lent.len() + state.orphans.len();
        let woken = waiting.min(state.idle_spares);
        for _ in 0..woken {
            self.spares_woken.fetch_add(1, Ordering::Relaxed);
            self.wake_spares.notify_one();
        }
        // Threads on their way count as found. (`idle - starting` here
        // passes every model: lanes.rs's
        // `a_spare_slow_to_start_is_waited_for_not_started_again` catches
        // it, a core given back while its spare starts.)
        let missing = waiting.saturating_sub(state.idle_spares + state.starting);
        self.start_spares(shared, state, missing);
    }

    /// Asks the spawner thread for `count` more spare threads, as far as
    /// `max_threads` allows; returns how many it will start.
    ///
    /// Never on the monitor thread itself: creating a thread takes locks
    /// of the C library (its stack cache, a malloc arena) that a thread
    /// ending at a lowered priority may hold while it waits for a core, and
    /// the monitor stopped for that long stops every handoff. Measured
    /// (mixed lane, open loop, event trace): the monitor stuck 17-23 ms in
    /// `pthread_create` while the demoted thread of the long poll before
    /// ended, every short request queued meanwhile.
    fn start_spares(
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
        // (`<` made `<=` passes every model and test, 2026-11-25: the
        // count reaches the limit with a thread still wanted only between
        // a demoted spare's hand-back and its leaving the count
        // (`run_spare`), so one thread more starts for that moment, beside
        // one that is ending.)
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
            if (self.config.spawn_thread)(shared.clone(), run_spawner).is_err() {
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

    /// Lends a free spare slot to a spare thread: a warm one if one waits,
    /// else a new one. Whether a slot was lent.
    fn hand_off(&self, shared: &Arc<Shared>, state: &mut MutexGuard<'_, State>) -> bool {
        let Some(slot) = state.free.pop() else {
            return false; // every spare slot is in use: max_threads reached
        };
        let first_spare = shared.config.num_workers;
        state.held[slot.0 - first_spare] = true;
        state.lent.push(slot);
        self.handoffs.fetch_add(1, Ordering::Relaxed);
        // A spare thread per held slot at most, so the count of spare
        // threads never passes the count of spare slots. (The orphans made
        // `lent - orphans` passes every model and test, 2026-11-25: with a
        // core waiting, `find_threads` asks for the missing thread at the
        // next sample, one sample period late. Threads on their way made
        // `idle * starting` passes too: it asks for one thread more than
        // waits when some are idle and some starting, within the limit;
        // made `idle - starting` it fails lanes.rs's
        // `a_slot_lent_while_a_core_waits_for_its_thread_gets_another_thread`.
        // `start_spares(..) > 0` made `< 0`, never true, passes as well: the
        // slot goes back although its thread comes, and the next sample
        // lends it to that thread, one sample period late.)
        let waiting = state.lent.len() + state.orphans.len();
        if state.idle_spares >= waiting {
            self.spares_woken.fetch_add(1, Ordering::Relaxed);
            self.wake_spares.notify_one();
            return true;
        }
        if state.idle_spares + state.starting >= waiting || self.start_spares(shared, state, 1) > 0
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

impl Monitor {
    /// Demotes the thread inside a stalled poll (`sys::demote_thread`), so
    /// the threads running the work it holds up get the cores first; the
    /// flag goes up first, so the thread, checking it after its poll,
    /// always learns it was (or is about to be) demoted and gives its slot
    /// to a normal thread.
    fn demote_thread(&self, watch: &PollWatch) {
        let demoted = watch.with_thread(|tid| {
            !watch.thread_demoted.swap(true, Ordering::Relaxed)
                && crate::sys::demote_thread(tid).is_ok()
        });
        if demoted == Some(true) {
            self.threads_demoted.fetch_add(1, Ordering::Relaxed);
        }
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
        let mut state = state;
        self.sleeping.store(true, Ordering::Relaxed);
        // Pairs with the fence in `worker_woke` (see there).
        fence(Ordering::SeqCst);
        if shared.idle.counts().unparked == 0 {
            state = self
                .wake_monitor
                .wait_timeout(state, IDLE_RECHECK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        self.sleeping.store(false, Ordering::Relaxed);
        state
    }
}

/// What the monitor remembers of a slot between two samples.
#[derive(Clone, Copy, Default)]
struct Seen {
    seq: u64,
    /// When the monitor first saw `seq`.
    since: Option<Instant>,
    slow_marked: bool,
    stall_reported: bool,
    /// Whether the monitor asked for a longer slice for this poll's thread
    /// (asked once: a kernel that refuses refuses every time).
    slice_asked: bool,
    /// The thread whose slice the monitor lengthened for this poll (0:
    /// none), given the short one back when the poll is over.
    lengthened: i32,
}

/// What the monitor does when it finds `slot` stalled, as far as the
/// threads that take its work see it: the slot's flag and the runtime-wide
/// hint. (The loom model of the handoff drives this directly. Made a no-op
/// it passes every model, 2026-11-25: the flag only orders a spare's picks,
/// `Core::rescue_stalled`, and `steal_work` reaches the same tasks.)
#[cfg(all(test, loom))]
pub(crate) fn mark_stalled(shared: &Shared, slot: usize) {
    shared.remotes[slot].watch.set_stalled(true);
    shared.any_stalled.store(true, Ordering::Relaxed);
}

/// The monitor thread's loop; returns at shutdown.
pub(crate) fn run_monitor(shared: &Arc<Shared>) {
    let monitor = &shared.monitor;
    let num_workers = shared.config.num_workers;
    // The policy mutants of this loop (2026-11-25, 77 with
    // `normal_threads_wanted`): those that pass every test are timing or
    // thread-count rules, each said where it is. Here: `/ 4` made `* 4`
    // samples 16 times as far apart, so a stall is seen after 4-5 ms
    // rather than 1.25 (only the mixed lane's latencies show it).
    let base_period = (monitor.config.stall_threshold / 4).max(Duration::from_micros(50));
    let mut period = base_period;
    let mut seen = vec![Seen::default(); shared.remotes.len()];
    let step_aside = monitor.config.demote_threads && crate::sys::install_step_aside();
    // Samples in a row in which work waited and no normal thread moved.
    let mut no_progress = 0u32;
    let mut state = monitor.lock();
    loop {
        if state.shutdown {
            return;
        }
        monitor.take_handed_back(shared, &mut state);
        if !state.orphans.is_empty() {
            monitor.find_threads(shared, &mut state);
        }
        // (The held-slot test's `!` deleted passes every test: the monitor
        // then sleeps only while a slot is held, and samples an idle
        // runtime every `MAX_PERIOD`, 100 wake-ups a second that
        // `idle_cpu.rs`'s CPU bound cannot see.)
        let nobody_busy = shared.idle.counts().unparked == 0 && !state.held.contains(&true);
        if nobody_busy {
            state = monitor.sleep_until_a_worker_wakes(shared, state);
            period = base_period;
            continue;
        }
        state = monitor
            .wake_monitor
            .wait_timeout(state, period)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        if state.shutdown {
            return;
        }
        let now = Instant::now();
        let mut suspicious = false;
        let mut stalled = None;
        // Threads of normal priority that move waiting work (not stalled,
        // not demoted), and demoted threads still inside their poll.
        let mut free_threads = 0usize;
        let mut demoted_threads = 0usize;
        let mut stalled_slots = 0;
        // Whether a thread of normal priority began or ended a poll since
        // the last sample.
        let mut progressed = false;
        for (slot, remote) in shared.remotes.iter().enumerate() {
            let watch = &remote.watch;
            // A demoted thread runs no task after its current poll (it
            // gives its slot back), so it is never the free thread that
            // will run what waits, even between polls. Counted as free, it
            // held up a handoff until its hand-back (itself slow: the
            // thread runs at a lowered priority). Mixed lane, weft only, 6
            // alternated quick runs each (2026-11-24): closed 128 + 8
            // short p99 46-57 -> 38-47 ms (lower in 5 of 6 pairs), long
            // throughput 21-23 -> 20-21/s; the open loop (5 alternated
            // full runs: p99 4.9-5.5 -> 4.4-5.4 ms, lower in each pair)
            // and 32 + 2 by less than their spread.
            let awake = !watch.is_thread_demoted()
                && if slot < num_workers {
                    // An orphaned core is awake to the idle protocol but has
                    // no thread: it moves nothing. (Performance only: counted
                    // as free, it only delays a handoff until its thread
                    // arrives and runs what waits; no test can tell the two
                    // apart without timing them. The `is_parked` test turned
                    // around or its `&&` made `||` pass every test too: a
                    // parked worker counted free only stops the backstop
                    // below, and the wake rules have woken it already.)
                    !shared.idle.is_parked(slot)
                        && !state.orphans.iter().any(|core| core.index == slot)
                } else {
                    state.held[slot - num_workers]
                };
            let seq = watch.seq();
            // Inside its poll: a slot given back keeps its flag until its
            // next thread attaches, with no thread of its own. (This
            // count's five mutants pass every test: it only raises
            // `normal_threads_wanted` above one, from 7 demoted threads on
            // 2 workers, which no test reaches and the mixed lane's
            // 128 + 8 load does, measured there.)
            demoted_threads += usize::from(watch.is_thread_demoted() && seq % 2 == 1);
            let last = &mut seen[slot];
            if seq != last.seq || last.since.is_none() {
                // Only a thread still running this slot, and not demoted
                // (a demoted thread runs no task again and ends), is given
                // its short slice back here: it is alive, so its id still
                // names it. A spare that gave the slot back restores its
                // own (`run_spare`). (Either guard deleted passes every
                // test: it matters only once the thread has ended, when
                // the call fails, or names a thread that reused the id.)
                if last.lengthened != 0 {
                    watch.with_thread(|tid| {
                        if tid == last.lengthened && !watch.is_thread_demoted() {
                            crate::sys::restore_short_slice(tid);
                        }
                    });
                }
                *last = Seen {
                    seq,
                    since: Some(now),
                    ..Seen::default()
                };
                watch.set_stalled(false);
                free_threads += usize::from(awake);
                progressed |= awake;
                continue;
            }
            if seq % 2 == 0 {
                // Not inside a poll (searching, parked, or between polls).
                // (Not counted, `+=` made `*=`, it passes every test: a
                // poll preempted past the stall threshold on a worker while
                // the others sit between polls makes the monitor lend a
                // spare, which then runs tasks: one thread more, no task
                // lost. `metrics.rs`'s snapshot failed on it 1 run in 3,
                // 2026-11-25, only because it summed the workers' polls
                // without the spare slots'; it counts both since.)
                watch.set_stalled(false);
                free_threads += usize::from(awake);
                continue;
            }
            suspicious = true;
            if !last.slice_asked {
                // In one poll for a sample period: a thread woken on its
                // core should go first (`sys::lengthen_slice` says why).
                // (Not marked, it passes every test: the monitor then asks
                // again at every sample of the poll, two system calls each.)
                last.slice_asked = true;
                if let Some(Some(tid)) =
                    watch.with_thread(|tid| crate::sys::lengthen_slice(tid).then_some(tid))
                {
                    last.lengthened = tid;
                }
            }
            let stuck_for = now - last.since.unwrap_or(now);
            if stuck_for >= monitor.config.slow_poll_threshold && !last.slow_marked {
                last.slow_marked = true;
                watch.slow_seq.store(seq, Ordering::Relaxed);
            }
            // (`<` made `<=`: equivalent, two readings of the clock one
            // sample apart are never equal to the nanosecond.)
            if stuck_for < monitor.config.stall_threshold {
                free_threads += 1; // a short poll: that thread is moving
                continue;
            }
            stalled = Some(slot);
            stalled_slots += 1;
            watch.set_stalled(true);
            if !last.stall_reported {
                last.stall_reported = true;
                monitor.stalls.fetch_add(1, Ordering::Relaxed);
                if let Some(hook) = &monitor.config.on_stall {
                    if let Some((task_name, spawned_at)) = watch.label(seq) {
                        let info = StallInfo {
                            worker: slot,
                            task_name,
                            spawned_at,
                            stuck_for,
                        };
                        drop(state);
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            hook(&info);
                        }));
                        state = monitor.lock();
                    }
                }
            }
        }
        let waiting = stalled.is_some() && shared.has_waiting_work();
        if waiting && monitor.config.demote_threads {
            // Each stalled thread holds up waiting work: it runs on, at a
            // priority that lets the threads running that work go first.
            for remote in shared.remotes.iter() {
                if remote.watch.is_stalled() {
                    monitor.demote_thread(&remote.watch);
                }
            }
        }
        no_progress = if waiting && !progressed {
            no_progress.saturating_add(1)
        } else {
            0
        };
        if step_aside && no_progress >= STEP_ASIDE_AFTER {
            // Work waits and the threads meant to run it have not run:
            // they wait for a core behind a long poll (`sys::install_step_aside`
            // says why lowering that poll's thread is not enough).
            // (Performance rules, each passing every test, 2026-11-25:
            // `progressed |= awake` made `&=` (never progress), or the
            // stalled-and-demoted test made `||`, asks for more
            // step-asides, each 30 us of a long poll; the `!` before
            // `progressed` deleted asks only while normal threads *do*
            // move, so a core lost behind a long poll is not won back
            // sooner. Only the mixed lane's long throughput or short p99
            // can tell; lanes.rs's two step-aside tests catch the rule
            // never or always applied.)
            for remote in shared.remotes.iter() {
                let watch = &remote.watch;
                if watch.is_stalled()
                    && watch.is_thread_demoted()
                    && watch.with_thread(crate::sys::ask_to_step_aside) == Some(true)
                {
                    monitor.step_asides.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let any_stalled = stalled_slots > 0;
        if shared.any_stalled.load(Ordering::Relaxed) != any_stalled {
            shared.any_stalled.store(any_stalled, Ordering::Relaxed);
        }
        let wanted = normal_threads_wanted(num_workers, demoted_threads, shared.config.batch_share);
        if waiting && free_threads < wanted {
            if shared.idle.counts().unparked < num_workers {
                // A worker sleeps while work waits behind a stuck one: the
                // wake rules should have woken it; wake it now (backstop;
                // `<` made `>`, never, passes every test: a spare is lent
                // instead, and the wake rules wake the worker anyway).
                shared.notify_parked(None);
            } else {
                monitor.hand_off(shared, &mut state);
            }
        }
        // The back-off is timing only (its three mutants pass every test,
        // 2026-11-25): `||` made `&&` or the orphans test turned around
        // back off while a poll may be stalling, so a stall is seen up to
        // `MAX_PERIOD` late; `* 2` made `/ 2` shrinks the period to nothing
        // while workers run without stalls, a monitor spinning on a core:
        // the cost the scheduler lanes' CPU column would show.
        period = if suspicious || !state.orphans.is_empty() {
            base_period
        } else {
            (period * 2).min(MAX_PERIOD.max(base_period))
        };
    }
}

/// How many threads of normal priority should run the work that waits
/// while `demoted` threads sit in long polls: one at least, and more, up to
/// one per worker (a core each), while the demoted threads' kernel weight
/// still gives them `batch_share` of the CPU beside those threads.
///
/// One normal thread lets the demoted ones take every other core whole: at
/// the mixed lane's 128 short + 8 long clients on 2 workers the short work
/// got 0.83 of a core and the long polls 1.03 (`perf sched`, 2026-11-24),
/// short p99 33-44 ms, set by that throughput (p50 = clients / rate, 23 ms).
/// A second normal thread beside 8 demoted ones still leaves them 30% of
/// the CPU by weight; beside 2 (32 + 2 clients, the open loop) it would
/// leave them 10%, under the default share of 25%, so it stays at one.
fn normal_threads_wanted(workers: usize, demoted: usize, batch_share: f64) -> usize {
    // The kernel's weights of nice 10 and nice 0 (`sched_prio_to_weight`).
    const DEMOTED_WEIGHT: f64 = 110.0 / 1024.0;
    // demoted·w / (n + demoted·w) >= share  <=>  n <= demoted·w·(1 - share) / share
    let fits = demoted as f64 * DEMOTED_WEIGHT * (1.0 - batch_share) / batch_share;
    (fits as usize).clamp(1, workers.max(1))
}

/// The spawner thread's loop: starts the spare threads the monitor asks
/// for (`Monitor::start_spares` says why not the monitor itself), until
/// shutdown.
fn run_spawner(shared: &Arc<Shared>) {
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
        let started = (monitor.config.spawn_thread)(shared.clone(), run_spare);
        state = monitor.lock();
        // (A started thread counts itself, in `run_spare`.)
        if started.is_err() {
            state.starting -= 1;
            monitor.spare_threads.fetch_sub(1, Ordering::Relaxed);
        }
    }
    // Asked for and not started: no longer coming.
    state.starting -= state.to_start;
    monitor
        .spare_threads
        .fetch_sub(state.to_start, Ordering::Relaxed);
    state.to_start = 0;
}

/// A spare thread's loop: run lent slots and orphaned worker cores until
/// none comes for `spare_idle_timeout`, the runtime shuts down, or the
/// monitor demotes this thread (which then gives back what it holds and
/// ends, without taking the monitor's lock).
fn run_spare(shared: &Arc<Shared>) {
    let monitor = &shared.monitor;
    // Counted here, before the thread takes any work, not by the spawner
    // once the thread is created: a task this spare runs is then never seen
    // with the spare uncounted (the spawner, preempted after creating it,
    // counted it after the task had run and its result had been read:
    // `lanes.rs`'s `every_spare_thread_is_joined_by_the_runtimes_drop`
    // failed so, 1 run in 60 beside two CPU hogs).
    monitor.spares_started.fetch_add(1, Ordering::Relaxed);
    let mut state = monitor.lock();
    state.starting -= 1;
    let retired = loop {
        if state.shutdown {
            break false;
        }
        if let Some(core) = state.orphans.pop() {
            drop(state);
            // This thread is now that worker, until shutdown or its own
            // demotion.
            let exit = {
                let _on_slot = core.remote_watch().attach_thread();
                let _core = crate::runtime::context::set_core(&core);
                core.run()
            };
            match exit {
                RunExit::Shutdown => core.close(),
                RunExit::Demoted => {
                    monitor.hand_back(HandBack::Worker(core));
                    monitor.spare_threads.fetch_sub(1, Ordering::Relaxed);
                    return;
                }
            }
            state = monitor.lock();
            continue;
        }
        if let Some((index, local)) = state.lent.pop() {
            drop(state);
            let core = Core::new(index, shared.clone(), local);
            {
                let _on_slot = core.remote_watch().attach_thread();
                let _core = crate::runtime::context::set_core(&core);
                core.run_spare();
            }
            let demoted = core.remote_watch().is_thread_demoted();
            let local = core.into_local();
            if !demoted {
                // Its last poll may have been a long one, its slice
                // lengthened, and the slot taken by another thread before
                // the monitor's next sample (which then leaves it alone).
                // (No test forces that order: without this the spare would
                // keep the 3 ms slice, and its wake-ups would preempt a
                // long poll less readily; only the mixed lane could tell.)
                crate::sys::request_short_slice();
            }
            if demoted {
                monitor.hand_back(HandBack::Slot(index, local));
                monitor.spare_threads.fetch_sub(1, Ordering::Relaxed);
                return;
            }
            state = monitor.lock();
            state.held[index - shared.config.num_workers] = false;
            if !state.shutdown {
                state.free.push((index, local));
            }
            continue;
        }
        state.idle_spares += 1;
        let (guard, wait) = monitor
            .wake_spares
            .wait_timeout(state, monitor.config.spare_idle_timeout)
            .unwrap_or_else(|e| e.into_inner());
        state = guard;
        state.idle_spares -= 1;
        // (The first `&&` made `||` passes every test, 2026-11-25: a spare
        // woken with nothing to take -- a spurious wake, or another spare
        // took the slot first -- would then retire rather than wait again,
        // and a later stall start a new thread: a cost, not a lost task.)
        if wait.timed_out() && state.lent.is_empty() && state.orphans.is_empty() {
            break true;
        }
    };
    monitor.spare_threads.fetch_sub(1, Ordering::Relaxed);
    drop(state);
    if retired {
        monitor.spares_retired.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::normal_threads_wanted;

    #[test]
    fn a_second_normal_thread_only_where_the_demoted_keep_their_share() {
        // 8 demoted threads beside 2 normal ones keep 880 / 2928 = 30% of
        // the CPU by weight: over the default share of 25%.
        assert_eq!(normal_threads_wanted(2, 8, 0.25), 2);
        // 6 would keep 24%: one normal thread only.
        assert_eq!(normal_threads_wanted(2, 6, 0.25), 1);
        assert_eq!(normal_threads_wanted(2, 2, 0.25), 1);
        // Always one, even with nothing demoted, and never more than the
        // workers (cores) however many are demoted.
        assert_eq!(normal_threads_wanted(2, 0, 0.25), 1);
        assert_eq!(normal_threads_wanted(4, 100, 0.25), 4);
        // A smaller share lets more normal threads in sooner.
        assert_eq!(normal_threads_wanted(2, 2, 0.05), 2);
        assert_eq!(normal_threads_wanted(4, 2, 0.05), 4);
    }
}
