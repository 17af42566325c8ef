//! loom models of runtime shutdown racing work that arrives from outside:
//! the real `Shared` (`Shared::new`), the real task cell (`spawn_on`,
//! `TaskFuture`, the registry), `schedule_remote`, `begin_shutdown` and
//! `shutdown_drain`, and in one model the real worker loop (`Core::run`).
//!
//! # The models
//!
//! - `outside_wake_and_spawn_race_shutdown`: an outside thread wakes an
//!   idle task, another spawns, while the runtime (its workers gone) shuts
//!   down and drains; a second idle task's waker is held by nobody.
//! - `first_pending_races_registry_close`: a task's first poll (lazy
//!   registration) races the registry's close (`shutdown_timeout` expired).
//! - `worker_loop_races_outside_spawn_and_shutdown`: the real worker loop,
//!   parked or running, while an outside thread spawns a task that yields,
//!   another wakes an idle task, and the runtime shuts down.
//! - `shutdown_handshake_with_a_lock_free_queue`: the fence-against-fence
//!   argument itself (see below).
//! - One model is ignored: the bug it found is fixed through a
//!   synchronisation loom cannot see (see its doc).
//!
//! # What is asserted
//!
//! - Every task's future is dropped exactly once (a drop probe inside it),
//!   whatever the interleaving: in the inject queue, by the registry's
//!   wake at shutdown, by the re-check in `schedule_remote`, or by the
//!   worker. A task left behind is also reported by loom itself, since it
//!   holds an `Arc<Shared>` that then leaks ("Arc leaked").
//! - Shutdown never *runs* a task: the drain only drops. A task is polled
//!   only by a worker inside its run loop: never once the worker has left
//!   its loop, and at most once after the shutdown flag became visible to
//!   it (the tick it had already started). The flag is checked once per
//!   tick, as in tokio, so "no poll at all after `begin_shutdown`" is not a
//!   property of the runtime: a worker that read the flag just before it
//!   was set runs that one task.
//! - Every `JoinHandle` is ready once shutdown is over: `Ok` if and only if
//!   the task completed, a cancelled error otherwise; nobody waits forever.
//! - After the threads settle, the inject queue, the ring and the LIFO slot
//!   are empty, a worker that left its loop is counted awake, and
//!   `unparked == workers - sleepers`, `searching <= unparked` (idle.rs).
//!
//! # Orderings relied on, and what loom can and cannot check here
//!
//! `schedule_remote` pushes, runs `fence(SeqCst)` (in `worker_to_notify`),
//! then re-reads the shutdown flag; `begin_shutdown` swaps the flag, runs
//! `fence(SeqCst)`, and the drain pops the inject queue. With crossbeam's
//! lock-free injector the fences are what make "the drain sees the task or
//! the pusher sees the flag" hold. Under loom the inject queue is a
//! `Mutex<VecDeque>` (see `inject.rs`), and the mutex alone orders a push
//! against a drain: the models on the real `Shared` check the *protocol*
//! (the re-check and self-drain in `schedule_remote`, the drain, the
//! registry's close-then-wake, lazy registration), and deleting either
//! fence does not make them fail. The fences are checked by
//! `shutdown_handshake_with_a_lock_free_queue`, which runs the real
//! `notify_parked` and `begin_shutdown` around a lock-free replica of the
//! queue: loom implements `fence(SeqCst)` (it only weakens SeqCst
//! *accesses* to AcqRel), and deleting either fence makes that model fail.
//!
//! async-task's own state word is a `std` atomic, not a loom one: loom
//! does not interleave inside async-task's transitions (each runs as one
//! step between two loom operations of weft's: the shutdown flag, the
//! queue's mutex, the registry's locks), and async-task's orderings are
//! async-task's to test.
//!
//! # Bound
//!
//! `LOOM_MAX_PREEMPTIONS=3` (CI's setting): every interleaving with up to
//! three forced preemptions; with one worker, one or two outside threads
//! and the thread shutting down, that covers every order of one wake or
//! spawn against the flag, the drain and the registry's close. The worker
//! loop model is the expensive one (about 425,000 interleavings, a minute
//! in release); the others take under a second.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p weft --lib --release --target-dir target/loom scheduler::loom_tests`

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

use loom::sync::Arc;
use loom::thread;

use super::Shared;
use super::worker::Core;
use crate::runtime::loom_support::spawn_on;
use crate::runtime::loom_support::{Count, DropProbe, realign_registry_round_robin};
use crate::runtime::task::{JoinError, JoinHandle};

const WORKERS: usize = 1;

fn runtime() -> (
    Arc<Shared>,
    Vec<super::queue::Local<crate::runtime::task::Task>>,
) {
    crate::runtime::loom_support::shared(WORKERS)
}

/// What a probe future does when polled.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Pending forever; the waker is dropped (only the registry can find
    /// the task).
    Forgotten,
    /// Pending until woken; the waker is put in the probe's slot.
    WaitForWake,
    /// Wakes itself and returns `Pending` on the first poll (a yield), then
    /// completes.
    YieldOnce,
    /// Pending at every poll, its latest waker in the probe's slot (waiting
    /// for a message that never comes).
    WaitForever,
}

/// What the test learns about one task.
#[derive(Clone, Default)]
struct Log {
    polls: Count,
    drops: Count,
    /// Polls that found the shutdown flag already set.
    polls_after_flag: Count,
    /// Polls that started after the worker had left its run loop.
    polls_after_exit: Count,
    completions: Count,
}

/// The world outside the tasks, as a task sees it.
#[derive(Clone)]
struct Observed {
    shared: Arc<Shared>,
    worker_exited: Count,
}

struct Probe {
    behaviour: Behaviour,
    log: Log,
    observed: Observed,
    slot: std::sync::Arc<StdMutex<Option<Waker>>>,
    _drop: DropProbe,
}

impl Probe {
    fn new(behaviour: Behaviour, observed: &Observed) -> (Probe, Log) {
        let log = Log::default();
        let probe = Probe {
            behaviour,
            log: log.clone(),
            observed: observed.clone(),
            slot: Default::default(),
            _drop: DropProbe(log.drops.clone()),
        };
        (probe, log)
    }
}

impl Future for Probe {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        // Assertions here would be caught by the task wrapper (a panic
        // becomes the task's output): record, and assert after the model.
        let polls_before = self.log.polls.get();
        self.log.polls.incr();
        if self.observed.shared.is_shutdown() {
            self.log.polls_after_flag.incr();
        }
        if self.observed.worker_exited.get() > 0 {
            self.log.polls_after_exit.incr();
        }
        let ready = match self.behaviour {
            Behaviour::Forgotten => false,
            Behaviour::WaitForWake => {
                if polls_before == 0 {
                    *self.slot.lock().unwrap() = Some(cx.waker().clone());
                }
                polls_before > 0
            }
            Behaviour::WaitForever => {
                *self.slot.lock().unwrap() = Some(cx.waker().clone());
                false
            }
            Behaviour::YieldOnce => {
                if polls_before == 0 {
                    cx.waker().wake_by_ref();
                }
                polls_before > 0
            }
        };
        if ready {
            self.log.completions.incr();
            self.as_mut().behaviour = Behaviour::Forgotten;
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    }
}

/// Polls a handle once, after shutdown: it must be ready.
fn result_now(handle: JoinHandle<usize>) -> Result<usize, JoinError> {
    let mut handle = pin!(handle);
    match handle
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => result,
        Poll::Pending => panic!("a JoinHandle still waits after shutdown"),
    }
}

/// The checks every model makes on every task once all threads are done.
fn assert_accounted(name: &str, log: &Log, handle: JoinHandle<usize>) {
    assert_eq!(log.drops.get(), 1, "{name}: future dropped exactly once");
    assert_eq!(
        log.polls_after_exit.get(),
        0,
        "{name}: polled after the worker left its loop"
    );
    assert!(
        log.polls_after_flag.get() <= WORKERS,
        "{name}: polled {} times after the shutdown flag was set",
        log.polls_after_flag.get()
    );
    match result_now(handle) {
        Ok(value) => {
            assert_eq!(value, 7);
            assert_eq!(log.completions.get(), 1, "{name}: Ok without completing");
        }
        Err(err) => {
            assert!(err.is_cancelled(), "{name}: {err}");
            assert_eq!(log.completions.get(), 0, "{name}: completed but cancelled");
        }
    }
}

/// Spawns `behaviour` from this thread and runs its first poll here (as a
/// worker would), so the task is idle and registered when threads start.
fn spawn_and_poll_once(
    shared: &Arc<Shared>,
    observed: &Observed,
    behaviour: Behaviour,
) -> (
    JoinHandle<usize>,
    Log,
    std::sync::Arc<StdMutex<Option<Waker>>>,
) {
    let (probe, log) = Probe::new(behaviour, observed);
    let slot = probe.slot.clone();
    let handle = spawn_on(shared, probe);
    let task = shared.inject.pop().expect("spawned from outside: queued");
    task.run();
    assert!(shared.inject.is_empty());
    (handle, log, slot)
}

/// The end of `Runtime::shutdown` once the workers are gone (or not
/// waited for), and the checks on the queues.
fn assert_drained(shared: &Shared) {
    assert!(
        shared.inject.is_empty(),
        "a task was left in the inject queue"
    );
}

/// A task's waker, held by an outside thread, is woken while the runtime
/// shuts down (no worker is running: they have exited, as in step 4 of the
/// shutdown order); meanwhile another outside thread spawns. A second idle
/// task's waker is held by nobody: only the registry can cancel it.
#[test]
fn outside_wake_and_spawn_race_shutdown() {
    loom::model(|| {
        let (shared, _locals) = runtime();
        let observed = Observed {
            shared: shared.clone(),
            worker_exited: Count::default(),
        };
        let (woken, woken_log, slot) =
            spawn_and_poll_once(&shared, &observed, Behaviour::WaitForWake);
        let (forgotten, forgotten_log, _) =
            spawn_and_poll_once(&shared, &observed, Behaviour::Forgotten);
        let waker = slot.lock().unwrap().take().expect("first poll stored it");
        let waking = thread::spawn(move || waker.wake());
        let spawning = {
            let (shared, observed) = (shared.clone(), observed.clone());
            thread::spawn(move || {
                let (probe, log) = Probe::new(Behaviour::Forgotten, &observed);
                (spawn_on(&shared, probe), log)
            })
        };
        shared.begin_shutdown();
        shared.shutdown_drain();
        waking.join().unwrap();
        let (spawned, spawned_log) = spawning.join().unwrap();
        assert_drained(&shared);
        assert_accounted("woken", &woken_log, woken);
        assert_accounted("forgotten", &forgotten_log, forgotten);
        assert_accounted("spawned", &spawned_log, spawned);
        assert_eq!(woken_log.polls.get(), 1, "shutdown never runs a task");
        assert_eq!(forgotten_log.polls.get(), 1, "shutdown never runs a task");
        assert_eq!(spawned_log.polls.get(), 0, "shutdown never runs a task");
        drop((observed, shared));
        realign_registry_round_robin(WORKERS);
    });
}

/// A worker polls a task for the first time (so it registers lazily, at
/// its first `Pending`) while the runtime shuts down without waiting for
/// the worker (`shutdown_timeout` expired, `shutdown_background`): the
/// registry may be closed before the task registers, and then the task
/// must cancel itself.
#[test]
fn first_pending_races_registry_close() {
    loom::model(|| {
        let (shared, _locals) = runtime();
        let observed = Observed {
            shared: shared.clone(),
            worker_exited: Count::default(),
        };
        let (probe, log) = Probe::new(Behaviour::Forgotten, &observed);
        let handle = spawn_on(&shared, probe);
        let task = shared.inject.pop().expect("spawned from outside: queued");
        let worker = thread::spawn(move || task.run());
        shared.begin_shutdown();
        shared.shutdown_drain();
        worker.join().unwrap();
        assert_drained(&shared);
        assert_accounted("first poll", &log, handle);
        drop((observed, shared));
        realign_registry_round_robin(WORKERS);
    });
}

/// The real worker loop (`Core::run`, parking on the real `Parker`) runs
/// while an outside thread spawns a task that yields once (its wake, made
/// while it runs, takes the remote path: no worker context is installed
/// under loom) and the runtime shuts down, waits for the worker, and
/// drains.
#[test]
fn worker_loop_races_outside_spawn_and_shutdown() {
    loom::model(|| worker_loop_scenario(false));
}

/// As above, and also: the worker, once out of its loop, is not counted as
/// searching. It fails when a spawner's notify picks the parked worker
/// (counting it awake *and searching*) and the worker then sees the
/// shutdown flag before it notices it was picked: `park` ignores
/// `unpark_worker_by_id`'s `false` ("a notifier already took me off, and
/// counted me searching"), so `close` does not undo the searching count.
/// The bug it describes is fixed: the model passes (bound 3, debug
/// assertions on, through `scripts/loom.sh`, ~35 s) and runs in CI.
#[test]
fn worker_loop_leaves_no_searcher_counted_after_shutdown() {
    loom::model(|| worker_loop_scenario(true));
}

fn worker_loop_scenario(strict_searching: bool) {
    let (shared, mut locals) = runtime();
    let observed = Observed {
        shared: shared.clone(),
        worker_exited: Count::default(),
    };
    // A task idle before the worker starts, its waker held outside.
    let (woken, woken_log, slot) = spawn_and_poll_once(&shared, &observed, Behaviour::WaitForWake);
    let waker = slot.lock().unwrap().take().expect("first poll stored it");
    let worker = {
        let core = Core::new(0, shared.clone(), locals.pop().unwrap());
        let exited = observed.worker_exited.clone();
        thread::spawn(move || {
            assert_eq!(
                core.run(),
                crate::runtime::scheduler::worker::RunExit::Shutdown
            );
            core.close();
            exited.incr();
        })
    };
    let spawning = {
        let (shared, observed) = (shared.clone(), observed.clone());
        thread::spawn(move || {
            let (probe, log) = Probe::new(Behaviour::YieldOnce, &observed);
            (spawn_on(&shared, probe), log)
        })
    };
    let waking = thread::spawn(move || waker.wake());
    shared.begin_shutdown();
    worker.join().unwrap();
    shared.shutdown_drain();
    waking.join().unwrap();
    // Spawns are not waited for by shutdown: this one may still be in
    // `schedule_remote` during the drain.
    let (spawned, spawned_log) = spawning.join().unwrap();
    assert_drained(&shared);
    let counts = shared.idle.counts();
    assert_eq!(
        counts.unparked,
        WORKERS - shared.idle.num_sleepers(),
        "unparked count drifted"
    );
    assert_eq!(
        counts.unparked, WORKERS,
        "a worker out of its loop is awake"
    );
    assert!(
        counts.searching <= counts.unparked,
        "more searchers than awake workers"
    );
    if strict_searching {
        assert_eq!(
            counts.searching, 0,
            "a worker out of its loop is not searching"
        );
    }
    assert!(!shared.remotes[0].has_lifo(), "a task left in a LIFO slot");
    assert!(shared.remotes[0].steal.is_empty(), "a task left in a ring");
    assert_accounted("spawned", &spawned_log, spawned);
    assert_accounted("woken", &woken_log, woken);
    drop((observed, shared));
    realign_registry_round_robin(WORKERS);
}

/// A replica of what matters in crossbeam's injector for the shutdown
/// handshake: a push is a read-modify-write of the tail, and a drain
/// *loads* the tail to decide whether anything is there (a load that can
/// be stale without a fence). Taking a task is a CAS on a separate counter,
/// so two drains cannot both take one.
struct Replica {
    tail: loom::sync::atomic::AtomicUsize,
    taken: loom::sync::atomic::AtomicUsize,
}

impl Replica {
    fn new() -> Replica {
        Replica {
            tail: loom::sync::atomic::AtomicUsize::new(0),
            taken: loom::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn push(&self) {
        self.tail.fetch_add(1, loom::sync::atomic::Ordering::AcqRel);
    }

    /// Takes every task the drain can see (as `Shared::drain_inject`
    /// pops until the queue looks empty); returns how many.
    fn drain(&self) -> usize {
        use loom::sync::atomic::Ordering;
        let mut drained = 0;
        loop {
            let taken = self.taken.load(Ordering::Acquire);
            if taken == self.tail.load(Ordering::Acquire) {
                return drained;
            }
            if self
                .taken
                .compare_exchange(taken, taken + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                drained += 1;
            }
        }
    }
}

/// `pushers` threads each push one task in `schedule_remote`'s order (push,
/// the real `Shared::notify_parked`, whose `Idle::worker_to_notify` runs
/// the `fence(SeqCst)`, re-read the flag, drain if set) while this thread
/// runs the real `begin_shutdown` (swap, `fence(SeqCst)`) and drains. Every
/// task must be drained exactly once.
fn shutdown_handshake(pushers: usize) {
    let (shared, _locals) = runtime();
    let queue = Arc::new(Replica::new());
    let pushers: Vec<_> = (0..pushers)
        .map(|_| {
            let (shared, queue) = (shared.clone(), queue.clone());
            thread::spawn(move || {
                queue.push();
                shared.notify_parked(None);
                if shared.is_shutdown() {
                    queue.drain()
                } else {
                    0
                }
            })
        })
        .collect();
    shared.begin_shutdown();
    let mut drained = queue.drain();
    let pushed = pushers.len();
    for pusher in pushers {
        drained += pusher.join().unwrap();
    }
    assert_eq!(
        drained, pushed,
        "every task pushed during shutdown must be drained exactly once"
    );
}

/// The fence-against-fence handshake between `schedule_remote` and
/// shutdown, with a lock-free queue ([`Replica`]) in place of loom's mutex
/// inject queue, one pusher. Removing either fence lets both sides miss
/// the task (store buffering), which loom finds: it implements SeqCst
/// fences, while the queue and flag accesses themselves are AcqRel at most.
#[test]
fn shutdown_handshake_with_a_lock_free_queue() {
    loom::model(|| shutdown_handshake(1));
}

/// The same with two pushers, as in production, where any thread spawns
/// or wakes from outside while shutdown begins. Fails with either fence
/// removed, and with a drain that takes one task per call (the replica's
/// loop cut to one pass, as `drain_inject`'s `while let` made `if let`):
/// both tasks are in when shutdown drains and neither pusher saw the flag,
/// which one pusher cannot show.
#[test]
fn two_pushers_race_the_shutdown_handshake() {
    loom::model(|| shutdown_handshake(2));
}

/// `shutdown_timeout` that expires (or `shutdown_background`) drains while
/// a worker is still in its last tick: the worker has already taken a
/// task that was registered earlier and then woken (so the registry's
/// close-and-wake finds it scheduled, and its wake does nothing), and polls
/// it after the registry is closed. The task returns `Pending` again, with
/// its waker held by something that will never fire: nobody will ever drop
/// its future, and its `JoinHandle` never resolves. (Its first `Pending`
/// is covered: `register` finds the registry closed and wakes the task;
/// a later `Pending` does not look.)
///
/// Fixed: `TaskFuture::poll` now wakes a registered task that returns
/// `Pending` once the shutdown flag is set. That fix is sound through the
/// task's async-task state word: the registry's wake of the queued task and
/// the worker's start of its run are read-modify-writes of that one word,
/// so the worker's run starts after the wake and sees the flag the closer
/// set before it. loom cannot see that word (async-task uses std atomics),
/// so this model still reports the old failure. A `fence(SeqCst)` before
/// the flag check makes it pass, at the price of a fence on every `Pending`
/// of a registered task (every `yield_now`), which the benchmark lane's
/// yield_many would pay; so the model stays, ignored with this reason.
#[test]
#[ignore = "model limit, not a bug: the fix synchronises through async-task's state word, which loom cannot see (see the doc comment)"]
fn background_shutdown_races_the_poll_of_a_queued_task() {
    loom::model(|| {
        let (shared, _locals) = runtime();
        let observed = Observed {
            shared: shared.clone(),
            worker_exited: Count::default(),
        };
        let (handle, log, slot) = spawn_and_poll_once(&shared, &observed, Behaviour::WaitForever);
        // Its message arrives: the task is queued again, and a worker takes
        // it (between its check of the shutdown flag and the poll).
        slot.lock()
            .unwrap()
            .take()
            .expect("first poll stored it")
            .wake();
        let task = shared.inject.pop().expect("woken from outside: queued");
        let worker = thread::spawn(move || task.run());
        // shutdown_timeout expired: drain without waiting for the worker.
        shared.begin_shutdown();
        shared.shutdown_drain();
        worker.join().unwrap();
        assert_drained(&shared);
        // The slot still holds the waker of the second poll, if any: the
        // future must have been dropped all the same.
        assert_accounted("queued at shutdown", &log, handle);
        drop(slot.lock().unwrap().take());
        drop((observed, shared));
        realign_registry_round_robin(WORKERS);
    });
}
