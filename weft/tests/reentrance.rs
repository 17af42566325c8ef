//! Re-entrance: the user code the runtime calls (destructors of futures,
//! closures and outputs, the thread hooks, `on_stall`, wakers of the
//! program's own) calling back into the runtime: `spawn`,
//! `spawn_blocking`, `Handle::metrics`, `Handle::dump`, `abort` of another task's
//! `JoinHandle` and its drop, a timer armed (`sleep` polled once). Each
//! kind of site is driven while the runtime runs, during
//! `shutdown_timeout` and during the runtime's drop, on 1, 2 and 4
//! workers.
//!
//! A runtime lock held across such a call deadlocks as soon as the code
//! takes that lock again (issue 39: a blocking closure cancelled under the
//! pool's lock whose capture called `spawn_blocking` hung the runtime's
//! drop for good). So every scenario runs on a thread of its own and fails
//! after [`LIMIT`] instead of hanging. In debug builds the lock guard
//! (`weft/src/util/locks.rs`) also ends the process at the first user code
//! reached under a runtime lock, re-entering or not.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::task::{Context, RawWaker, RawWakerVTable, Waker};
use std::thread;
use std::time::Duration;

use common::wait_until;
use weft::JoinHandle;
use weft::runtime::{Builder, Handle, Runtime};

/// How long one scenario may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(30);

const WORKERS: [usize; 3] = [1, 2, 4];

/// When the user code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// While the runtime runs (the runtime is dropped after, as usual).
    Running,
    /// During `shutdown_timeout`.
    ShutdownTimeout,
    /// During the runtime's drop.
    Drop,
}

const STAGES: [Stage; 3] = [Stage::Running, Stage::ShutdownTimeout, Stage::Drop];

/// Runs `scenario` on its own thread; fails if it has not returned within
/// [`LIMIT`] (the thread, and the runtime it holds, are then leaked: a
/// hang is what this file looks for).
fn within(what: String, scenario: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let thread = thread::Builder::new()
        .name(what.clone())
        .spawn(move || {
            scenario();
            let _ = done.send(());
        })
        .unwrap();
    match finished.recv_timeout(LIMIT) {
        Ok(()) => thread.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the scenario returned without saying so"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: not finished in {LIMIT:?}: hung"),
    }
}

/// Runs `scenario` on 1, 2 and 4 workers, at every stage.
fn on_every_shape_and_stage(name: &str, scenario: fn(usize, Stage)) {
    for workers in WORKERS {
        for stage in STAGES {
            within(format!("{name}, {workers} workers, {stage:?}"), move || {
                scenario(workers, stage)
            });
        }
    }
}

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

/// Ends the runtime as `stage` says (`Running`: the caller already made
/// the code run; the runtime is dropped).
fn end(rt: Runtime, stage: Stage) {
    match stage {
        Stage::ShutdownTimeout => rt.shutdown_timeout(LIMIT / 3),
        Stage::Running | Stage::Drop => drop(rt),
    }
}

/// Waits for `done`, failing the scenario after [`LIMIT`].
fn eventually(what: &str, done: impl FnMut() -> bool) {
    assert!(wait_until(LIMIT, done), "{what}: never happened");
}

/// What user code does to the runtime from a destructor, a hook or a
/// waker: everything the issue lists (and `is_finished`), and what a
/// scenario adds (a call that takes the very lock of the site).
#[derive(Clone)]
struct Reentry {
    handle: Handle,
    /// Tasks to abort, one per re-entry, then dropped (the last `Arc` of
    /// a handle is the `JoinHandle`'s drop).
    victims: Arc<Mutex<Vec<Arc<JoinHandle<()>>>>>,
    also: Arc<Mutex<Option<Also>>>,
    count: Arc<AtomicUsize>,
}

type Also = Arc<dyn Fn() + Send + Sync>;

impl Reentry {
    /// With `victims` pending tasks of the runtime to abort.
    fn new(handle: &Handle, victims: usize) -> Reentry {
        let victims = (0..victims)
            .map(|_| Arc::new(handle.spawn(std::future::pending::<()>())))
            .collect();
        Reentry {
            handle: handle.clone(),
            victims: Arc::new(Mutex::new(victims)),
            also: Arc::default(),
            count: Arc::default(),
        }
    }

    /// Each re-entry also calls `also` (`None`: no more).
    fn also(&self, also: Option<Also>) {
        *self.also.lock().unwrap() = also;
    }

    fn reenter(&self) {
        let handle = &self.handle;
        drop(handle.spawn(async {}));
        drop(handle.spawn_blocking(|| ()));
        assert!(handle.metrics().num_workers > 0);
        // A dump takes every registry shard's lock (and formats after).
        assert!(!handle.dump().to_string().is_empty());
        let victim = self.victims.lock().unwrap().pop();
        if let Some(victim) = victim {
            let _ = victim.is_finished();
            victim.abort();
            drop(victim);
        }
        arm_a_timer(handle);
        let also = self.also.lock().unwrap().clone();
        if let Some(also) = also {
            also();
        }
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Re-enters when dropped.
    fn on_drop(&self) -> OnDrop {
        OnDrop(self.clone())
    }
}

/// A `sleep` polled once (armed, unless the runtime is shut down), then
/// dropped (disarmed).
fn arm_a_timer(handle: &Handle) {
    let _enter = handle.enter();
    let mut sleep = std::pin::pin!(weft::time::sleep(Duration::from_secs(3600)));
    let _ = sleep.as_mut().poll(&mut Context::from_waker(Waker::noop()));
}

/// Re-enters the runtime when dropped.
struct OnDrop(Reentry);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.reenter();
    }
}

/// A waker of the program's own (its own vtable, not `std::task::Wake`),
/// whose clone, wake and drop each re-enter the runtime.
fn foreign_waker(reentry: &Reentry) -> Waker {
    let data = Arc::into_raw(Arc::new(reentry.clone())).cast::<()>();
    // `VTABLE`'s functions: a clone adds a count, `wake` and `drop` give
    // theirs back, `wake_by_ref` borrows. SAFETY: `data` is an `Arc<Reentry>`'s
    // pointer whose count this waker owns, and `VTABLE` treats it as exactly
    // that; `Reentry` is `Send + Sync`, so any thread may use it.
    unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` is a live `Arc<Reentry>` pointer (see `foreign_waker`):
    // the new waker gets a count of its own.
    unsafe { Arc::increment_strong_count(data.cast::<Reentry>()) };
    // SAFETY: as above; borrowed for this call.
    unsafe { &*data.cast::<Reentry>() }.reenter();
    RawWaker::new(data, &VTABLE)
}

unsafe fn wake(data: *const ()) {
    // SAFETY: this waker's own count, given back here.
    let reentry = unsafe { Arc::from_raw(data.cast::<Reentry>()) };
    reentry.reenter();
}

unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: a live `Arc<Reentry>` pointer, borrowed for this call.
    unsafe { &*data.cast::<Reentry>() }.reenter();
}

unsafe fn drop_waker(data: *const ()) {
    // SAFETY: this waker's own count, given back here.
    let reentry = unsafe { Arc::from_raw(data.cast::<Reentry>()) };
    reentry.reenter();
}

/// Tasks whose futures re-enter when dropped: pending ones cancelled by
/// `abort` while running, or by shutdown (from the registry, the queues or
/// a closing worker, whichever holds each).
#[test]
fn a_cancelled_tasks_future_reenters() {
    on_every_shape_and_stage("a cancelled task's future", |workers, stage| {
        let rt = runtime(workers);
        let reentry = Reentry::new(rt.handle(), 16);
        let (polled, was_polled) = mpsc::channel();
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let on_drop = reentry.on_drop();
                let polled = polled.clone();
                rt.spawn(async move {
                    let _on_drop = on_drop;
                    polled.send(()).unwrap();
                    std::future::pending::<()>().await
                })
            })
            .collect();
        for _ in 0..tasks.len() {
            was_polled.recv_timeout(LIMIT).unwrap();
        }
        if stage == Stage::Running {
            for task in &tasks {
                task.abort();
            }
            eventually("every aborted future dropped", || reentry.count() == 8);
            common::assert_serves(&rt);
        }
        end(rt, stage);
        assert_eq!(reentry.count(), 8);
    });
}

/// A task's future whose destructor takes a dump: while the runtime runs
/// (an aborted task; the dump lists the other, named, pending task), during
/// `shutdown_timeout` and during the drop (the registry is being closed:
/// what is left, perhaps nothing, is listed, and nothing hangs).
#[test]
fn a_destructor_dumps() {
    on_every_shape_and_stage("a destructor's dump", |workers, stage| {
        let rt = runtime(workers);
        let (dumped, dumps) = mpsc::channel::<String>();
        let (polled, was_polled) = mpsc::channel();
        struct DumpOnDrop(Handle, mpsc::Sender<String>);
        impl Drop for DumpOnDrop {
            fn drop(&mut self) {
                let _ = self.1.send(self.0.dump().to_string());
            }
        }
        let bystander = weft::task::Builder::new()
            .name("bystander")
            .spawn_on(std::future::pending::<()>(), rt.handle())
            .unwrap();
        let on_drop = DumpOnDrop(rt.handle().clone(), dumped);
        let task = rt.spawn(async move {
            let _on_drop = on_drop;
            polled.send(()).unwrap();
            std::future::pending::<()>().await
        });
        was_polled.recv_timeout(LIMIT).unwrap();
        if stage == Stage::Running {
            // The bystander is listed once its first poll has returned.
            eventually("the bystander listed", || {
                rt.handle().dump().to_string().contains("bystander")
            });
            task.abort();
            let text = dumps.recv_timeout(LIMIT).unwrap();
            assert!(text.contains("bystander"), "{text}");
            bystander.abort();
        }
        end(rt, stage);
        if stage != Stage::Running {
            let text = dumps.recv_timeout(LIMIT).expect("the destructor dumped");
            assert!(text.contains("tasks listed"), "{text}");
        }
    });
}

/// A task's output that re-enters when dropped: a detached task's, and
/// one whose `JoinHandle` another task holds until that task is cancelled
/// (so the handle's drop drops the output).
#[test]
fn a_tasks_output_and_a_dropped_join_handle_reenter() {
    on_every_shape_and_stage("a task's output", |workers, stage| {
        let rt = runtime(workers);
        let reentry = Reentry::new(rt.handle(), 8);
        let output = reentry.on_drop();
        let finished = rt.spawn(async move { output });
        eventually("the task finished", || finished.is_finished());
        let holder = rt.spawn(async move {
            let _finished = finished;
            std::future::pending::<()>().await
        });
        let output = reentry.on_drop();
        drop(rt.spawn(async move { output }));
        eventually("the detached task's output dropped", || {
            reentry.count() == 1
        });
        if stage == Stage::Running {
            holder.abort();
            eventually("the held output dropped", || reentry.count() == 2);
        }
        end(rt, stage);
        assert_eq!(reentry.count(), 2);
    });
}

/// A task's output that re-enters when dropped, whose `JoinHandle` is
/// dropped while an `AbortHandle` lives: dropped by the handle's drop if
/// the task had completed; else when it completes (on the worker that
/// completes it, from async-task's wake of the handle's reaper). And a
/// task that never completes, so ended by its abort or the runtime's end.
#[test]
fn an_output_whose_join_handle_dropped_before_its_abort_handle_reenters() {
    on_every_shape_and_stage("an output with an abort handle", |workers, stage| {
        let rt = runtime(workers);
        let reentry = Reentry::new(rt.handle(), 8);
        let output = reentry.on_drop();
        let handle = rt.spawn(async move { output });
        let completed = handle.abort_handle();
        eventually("the task finished", || completed.is_finished());
        drop(handle);
        assert_eq!(reentry.count(), 1, "the JoinHandle's drop kept the output");

        let (release, released) = common::oneshot::<()>();
        let output = reentry.on_drop();
        let handle = rt.spawn(async move {
            released.await;
            output
        });
        let later = handle.abort_handle();
        drop(handle);
        release.send(());
        eventually("the output dropped at completion", || reentry.count() == 2);

        let on_drop = reentry.on_drop();
        let handle = rt.spawn(async move {
            let _on_drop = on_drop;
            std::future::pending::<()>().await
        });
        let never = handle.abort_handle();
        drop(handle);
        if stage == Stage::Running {
            never.abort();
            eventually("the aborted future dropped", || reentry.count() == 3);
        }
        end(rt, stage);
        assert_eq!(reentry.count(), 3);
        assert!(completed.is_finished() && later.is_finished() && never.is_finished());
        drop((completed, later, never));
        assert_eq!(reentry.count(), 3);
    });
}

/// Issue 39's case: one blocking thread held busy, a second closure
/// queued whose capture's `Drop` calls `spawn_blocking` (and the rest),
/// then the closure cancelled by `abort`, by `shutdown_timeout`, or by the
/// runtime's drop, which must return. And a closure's output that
/// re-enters when its detached handle lets it go.
#[test]
fn a_cancelled_blocking_closure_reenters() {
    on_every_shape_and_stage("a cancelled blocking closure", |workers, stage| {
        let rt = Builder::new_multi_thread()
            .worker_threads(workers)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let reentry = Reentry::new(rt.handle(), 8);
        let (started, running) = mpsc::channel();
        let busy = rt.spawn_blocking(move || {
            started.send(()).unwrap();
            thread::sleep(Duration::from_millis(100));
        });
        running.recv_timeout(LIMIT).unwrap();
        let capture = reentry.on_drop();
        let queued = rt.spawn_blocking(move || drop(capture));
        if stage == Stage::Running {
            queued.abort();
            eventually("the cancelled closure dropped", || reentry.count() == 1);
            let output = reentry.on_drop();
            drop(rt.spawn_blocking(move || output));
            eventually("the closure's output dropped", || reentry.count() == 2);
            rt.block_on(busy).unwrap();
            end(rt, stage);
            assert_eq!(reentry.count(), 2);
        } else {
            end(rt, stage);
            assert_eq!(reentry.count(), 1);
        }
    });
}

/// Every hook re-enters: `thread_name` (for blocking and spare threads,
/// and at build time before the runtime exists, when it only names),
/// `on_thread_start` and `on_thread_stop` (workers, blocking threads,
/// spares; the stops at shutdown or drop), and `on_stall`.
#[test]
fn hooks_reenter() {
    on_every_shape_and_stage("hooks", |workers, stage| {
        let reentry: Arc<OnceLock<Reentry>> = Arc::default();
        let counts: Arc<[AtomicUsize; 4]> = Arc::default();
        let hook = |which: usize| {
            let (reentry, counts) = (reentry.clone(), counts.clone());
            move || {
                if let Some(reentry) = reentry.get() {
                    reentry.reenter();
                    counts[which].fetch_add(1, Ordering::SeqCst);
                }
            }
        };
        let (name, start, stop, stall) = (hook(0), hook(1), hook(2), hook(3));
        let rt = Builder::new_multi_thread()
            .worker_threads(workers)
            .max_blocking_threads(2)
            .stall_threshold(Duration::from_millis(2))
            .thread_name_fn(move || {
                name();
                "reentrant".to_owned()
            })
            .on_thread_start(start)
            .on_thread_stop(stop)
            .on_stall(move |_| stall())
            .build()
            .unwrap();
        let _ = reentry.set(Reentry::new(rt.handle(), 64));
        let reentry = reentry.get().unwrap().clone();
        // Blocking threads start (named, then their start hook), and a
        // poll stalls (the stall hook; perhaps a spare thread).
        for _ in 0..4 {
            drop(rt.spawn_blocking(|| thread::sleep(Duration::from_millis(5))));
        }
        let count = |which: usize| counts[which].load(Ordering::SeqCst);
        // A 30 ms poll, again until the monitor has seen one stall (on a
        // loaded machine it may not run during the first).
        eventually("thread_name, on_thread_start, on_stall", || {
            if count(3) == 0 {
                rt.block_on(rt.spawn(async { thread::sleep(Duration::from_millis(30)) }))
                    .unwrap();
            }
            count(0) > 0 && count(1) > 0 && count(3) > 0
        });
        end(rt, stage);
        eventually("on_thread_stop", || count(2) >= workers);
        assert!(reentry.count() > 0);
    });
}

/// A `Sleep` polled by hand with foreign wakers: armed (the first waker
/// cloned), polled with another (that one cloned, the first's clone
/// dropped), then fired (woken) while running, or dropped by
/// `shutdown_timeout` or the runtime's drop.
#[test]
fn a_foreign_waker_in_a_sleep_reenters() {
    on_every_shape_and_stage("a foreign waker in a sleep", |workers, stage| {
        let rt = runtime(workers);
        let reentry = Reentry::new(rt.handle(), 64);
        let (first, second) = (foreign_waker(&reentry), foreign_waker(&reentry));
        let after = match stage {
            Stage::Running => Duration::from_millis(5),
            _ => Duration::from_secs(3600),
        };
        let mut sleep = {
            let _enter = rt.enter();
            Box::pin(weft::time::sleep(after))
        };
        let mut poll_with = |waker: &Waker| sleep.as_mut().poll(&mut Context::from_waker(waker));
        assert!(poll_with(&first).is_pending());
        assert_eq!(reentry.count(), 1, "arming clones the waker once");
        assert!(poll_with(&second).is_pending());
        assert_eq!(
            reentry.count(),
            3,
            "the new waker cloned, the old one dropped"
        );
        if stage == Stage::Running {
            eventually("the timer fired", || reentry.count() == 4);
            assert!(poll_with(&second).is_ready());
        }
        end(rt, stage);
        assert_eq!(reentry.count(), 4);
        drop((sleep, first, second));
    });
}

/// A socket's readiness polled by hand with foreign wakers (an
/// `AsyncFd` over a Unix socket): `poll_read_ready` (the direction's slot)
/// and a `readable` future (the list, polled with a second waker, then
/// the first), whose every clone, wake and drop also polls the same
/// socket (its waiter lock); woken by a delivery while running, or by
/// `shutdown_timeout` or the runtime's drop.
#[test]
fn a_foreign_waker_waiting_on_a_socket_reenters() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use weft::io::unix::AsyncFd;

    on_every_shape_and_stage("a foreign waker on a socket", |workers, stage| {
        let rt = runtime(workers);
        let (socket, mut peer) = UnixStream::pair().unwrap();
        socket.set_nonblocking(true).unwrap();
        let fd = {
            let _enter = rt.enter();
            Arc::new(AsyncFd::new(socket).unwrap())
        };
        let reentry = Reentry::new(rt.handle(), 64);
        let same_socket = fd.clone();
        reentry.also(Some(Arc::new(move || {
            // Listed and taken off the list again: the slot is left alone.
            let mut readable = std::pin::pin!(same_socket.readable());
            let _ = readable
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()));
        })));
        let (first, second) = (foreign_waker(&reentry), foreign_waker(&reentry));
        let slot = fd.poll_read_ready(&mut Context::from_waker(&first));
        assert!(slot.is_pending());
        assert_eq!(reentry.count(), 1, "the slot's waker cloned");
        let mut readable = Box::pin(fd.readable());
        let mut poll_with = |waker: &Waker| {
            readable
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .map(drop)
        };
        assert!(poll_with(&second).is_pending());
        assert!(poll_with(&first).is_pending());
        assert_eq!(reentry.count(), 4, "listed, then listed with a new waker");
        if stage == Stage::Running {
            peer.write_all(b"x").unwrap();
            eventually("both waiters woken", || reentry.count() >= 6);
            assert!(poll_with(&first).is_ready());
        }
        end(rt, stage);
        eventually("both waiters woken", || reentry.count() >= 6);
        reentry.also(None);
        drop((readable, first, second));
    });
}

/// A `JoinHandle` polled by hand with a foreign waker, which is then woken
/// by the task's end, or by the handle's own `abort` (whose waker aborts
/// and asks the very handle being aborted), or by shutdown.
#[test]
fn a_foreign_waker_awaiting_a_join_handle_reenters() {
    on_every_shape_and_stage("a foreign waker awaiting a task", |workers, stage| {
        let rt = runtime(workers);
        let reentry = Reentry::new(rt.handle(), 0);
        let waker = foreign_waker(&reentry);
        let (release, released) = common::oneshot::<()>();
        let mut ends = rt.spawn(released);
        let (polled, was_polled) = mpsc::channel();
        let mut aborted = rt.spawn(async move {
            polled.send(()).unwrap();
            std::future::pending::<()>().await
        });
        // Idle once polled (a moment after it says so): `abort` then
        // schedules it and wakes its awaiter itself, on this thread.
        was_polled.recv_timeout(LIMIT).unwrap();
        thread::sleep(Duration::from_millis(20));
        let poll_with =
            |task: &mut JoinHandle<()>| Pin::new(task).poll(&mut Context::from_waker(&waker));
        assert!(poll_with(&mut ends).is_pending());
        assert!(poll_with(&mut aborted).is_pending());
        assert_eq!(reentry.count(), 2, "each awaiter cloned once");
        let aborted = Arc::new(aborted);
        if stage == Stage::Running {
            release.send(());
            eventually("the end woke its awaiter", || reentry.count() >= 3);
            // The waker's re-entry asks and aborts `aborted` through its
            // own handle, on this thread, while that handle's `abort`
            // wakes it.
            reentry.victims.lock().unwrap().push(aborted.clone());
            aborted.abort();
            eventually("the abort woke its awaiter", || reentry.count() >= 4);
            assert!(reentry.victims.lock().unwrap().is_empty());
        }
        end(rt, stage);
        eventually("both awaiters woken", || reentry.count() >= 4);
        drop((ends, aborted, waker));
    });
}

/// A task aborted after shutdown began (from `on_thread_stop`, which
/// runs before the registry is drained) is dropped by the schedule
/// function, inside `abort`; its future's destructor asks and aborts the
/// task through that same `JoinHandle`. While running, the same abort
/// from outside.
#[test]
fn an_abort_during_shutdown_drops_the_future_outside_the_handles_lock() {
    on_every_shape_and_stage("an abort during shutdown", |workers, stage| {
        let target: Arc<OnceLock<Arc<JoinHandle<()>>>> = Arc::default();
        let abort_target = target.clone();
        let rt = Builder::new_multi_thread()
            .worker_threads(workers)
            .on_thread_stop(move || {
                if let Some(task) = abort_target.get() {
                    task.abort();
                }
            })
            .build()
            .unwrap();
        let reentry = Reentry::new(rt.handle(), 0);
        let (polled, was_polled) = mpsc::channel();
        let on_drop = reentry.on_drop();
        let task = Arc::new(rt.spawn(async move {
            let _on_drop = on_drop;
            polled.send(()).unwrap();
            std::future::pending::<()>().await
        }));
        was_polled.recv_timeout(LIMIT).unwrap();
        reentry.victims.lock().unwrap().push(task.clone());
        let _ = target.set(task.clone());
        if stage == Stage::Running {
            task.abort();
            eventually("the aborted future dropped", || reentry.count() == 1);
        }
        end(rt, stage);
        assert_eq!(reentry.count(), 1);
    });
}

/// A signal listener polled by hand with a foreign waker whose every
/// clone, wake and drop also polls another listener of the same signal
/// (the signal's waiter lock); woken by the signal.
#[test]
fn a_foreign_waker_waiting_for_a_signal_reenters() {
    use weft::signal::unix::{SignalKind, signal};

    for workers in WORKERS {
        within(
            format!("a foreign waker for a signal, {workers} workers"),
            move || {
                let rt = runtime(workers);
                let _enter = rt.enter();
                let reentry = Reentry::new(rt.handle(), 16);
                let mut listener = signal(SignalKind::user_defined2()).unwrap();
                let other = Arc::new(Mutex::new(signal(SignalKind::user_defined2()).unwrap()));
                reentry.also(Some(Arc::new(move || {
                    let noop = &mut Context::from_waker(Waker::noop());
                    let _ = other.lock().unwrap().poll_recv(noop);
                })));
                let waker = foreign_waker(&reentry);
                assert!(
                    listener
                        .poll_recv(&mut Context::from_waker(&waker))
                        .is_pending()
                );
                assert_eq!(reentry.count(), 1, "the listener's waker cloned");
                // SAFETY: `kill` with this process's id and a signal whose
                // handler `signal` installed: it only queues a delivery.
                assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGUSR2) }, 0);
                eventually("the listener woken", || reentry.count() >= 2);
                assert!(
                    listener
                        .poll_recv(&mut Context::from_waker(&waker))
                        .is_ready()
                );
                reentry.also(None);
            },
        );
    }
}

/// How a `JoinSet`'s tasks are ended.
#[derive(Debug, Clone, Copy)]
enum SetEnd {
    /// `abort_all`, then every result joined.
    AbortAll,
    /// `shutdown().await` (from `block_on`).
    Shutdown,
    /// The set dropped while the runtime runs.
    SetDrop,
    /// The runtime dropped while the set holds its tasks; the set after.
    RuntimeDrop,
}

/// A `JoinSet`'s tasks whose futures (four pending ones) and output (one
/// finished task's) re-enter the runtime when dropped, and a waker of the
/// program's own waiting in `join_next` (cloned, woken and dropped by the
/// set's ready list) that re-enters too: ended by `abort_all`, by
/// `shutdown().await`, by the set's drop and by the runtime's drop, on 1,
/// 2 and 4 workers. Each must finish within [`LIMIT`], every future and
/// the output dropped once.
#[test]
fn a_join_sets_tasks_reenter_when_the_set_ends_them() {
    for workers in WORKERS {
        for how in [
            SetEnd::AbortAll,
            SetEnd::Shutdown,
            SetEnd::SetDrop,
            SetEnd::RuntimeDrop,
        ] {
            within(
                format!("a JoinSet's tasks, {workers} workers, {how:?}"),
                move || join_set_reenters(workers, how),
            );
        }
    }
}

fn join_set_reenters(workers: usize, how: SetEnd) {
    let rt = runtime(workers);
    let drops = Reentry::new(rt.handle(), 8);
    let waker_calls = Reentry::new(rt.handle(), 32);
    let mut set = weft::task::JoinSet::new();
    let (polled, was_polled) = mpsc::channel();
    for _ in 0..4 {
        let on_drop = drops.on_drop();
        let polled = polled.clone();
        set.spawn_on(
            async move {
                let _on_drop = on_drop;
                polled.send(()).unwrap();
                std::future::pending::<Option<OnDrop>>().await
            },
            rt.handle(),
        );
    }
    for _ in 0..4 {
        was_polled.recv_timeout(LIMIT).unwrap();
    }
    // A waker of the program's own waits in `join_next`; a task finishing
    // wakes it (from a worker), and leaves an output that re-enters.
    let waker = foreign_waker(&waker_calls);
    assert!(
        set.poll_join_next(&mut Context::from_waker(&waker))
            .is_pending()
    );
    drop(waker);
    let output = drops.on_drop();
    let finished = set.spawn_on(async move { Some(output) }, rt.handle());
    eventually("the finished task woke the set", || {
        finished.is_finished() && waker_calls.count() >= 3
    });
    // `finished`, an `AbortHandle`, stays alive: it must not keep the
    // output once the set is gone.
    match how {
        SetEnd::AbortAll => {
            set.abort_all();
            eventually("every aborted future dropped", || drops.count() == 4);
            let results = rt.block_on(async {
                let mut results = Vec::new();
                while let Some(result) = set.join_next().await {
                    results.push(result.map(drop).is_ok());
                }
                results
            });
            assert_eq!(results.iter().filter(|ok| **ok).count(), 1, "{results:?}");
            assert_eq!(results.len(), 5);
            common::assert_serves(&rt);
            drop(rt);
        }
        SetEnd::Shutdown => {
            rt.block_on(set.shutdown());
            assert!(set.is_empty());
            assert_eq!(drops.count(), 5, "shutdown waits for every task");
            common::assert_serves(&rt);
            drop(rt);
        }
        SetEnd::SetDrop => {
            drop(set);
            eventually("every future and the output dropped", || drops.count() == 5);
            common::assert_serves(&rt);
            drop(rt);
        }
        SetEnd::RuntimeDrop => {
            drop(rt);
            assert_eq!(drops.count(), 4, "the runtime's drop drops every future");
            drop(set);
        }
    }
    assert_eq!(drops.count(), 5);
    drop(finished);
}
