//! The blocking pool: threads that run `spawn_blocking` closures, so that
//! blocking work (file I/O, a C library call, a heavy computation) never
//! holds an async worker.
//!
//! # Tasks
//!
//! A blocking job is an async-task cell like any other task (same
//! `TaskMeta`, its scheduler the runtime's `Shared`, same [`JoinHandle`]):
//! its future runs the closure on its first poll and is never pending, and
//! its schedule function hands the `Runnable` to this pool instead of
//! calling the scheduler. So awaiting, detaching,
//! `abort` (effective until a thread has started the closure, as in tokio),
//! panics turned into a `JoinError`, and cancellation at shutdown all work
//! as they do for async tasks.
//!
//! # Threads
//!
//! Threads are started on demand, up to `max_blocking_threads`. A thread
//! that finds the queue empty waits up to `thread_keep_alive` for more work
//! and then exits, so an idle runtime keeps no blocking threads for long.
//! Work goes to the thread that became idle *last*: under a steady load
//! the same few threads take every closure and the ones a burst started
//! stay unused and retire after the keep-alive (woken in turn, every
//! thread would be handed work within its keep-alive and none would ever
//! retire: the pool would keep the largest burst's size for good).
//! Everything is guarded by one mutex (`PoolState`), with the invariants:
//!
//! - `threads` counts the pool threads alive (started and not exited);
//!   `idle <= threads` counts those in the idle wait;
//! - `waiting` holds the idle threads not yet promised a task, the most
//!   recently idle last (each by its own condvar): a push takes the last
//!   one out and wakes it, so two pushes never count on the same idle
//!   thread (the second would otherwise wait behind the first's closure,
//!   which may block forever); an idle thread no longer in `waiting` was
//!   promised a task and goes to the queue, even if its wait timed out;
//! - after `shutdown` is set, pushes are refused; the closures already
//!   queued are run by the pool threads, which exit once the queue is
//!   empty (a queue that is not empty has a thread alive to take it).
//!
//! The pool has no lock-free protocol (one mutex and two condvars), so it
//! has no loom model; `tests/blocking.rs` exercises it.
//!
//! The rollback when the OS refuses a thread (correctness: no closure lost
//! or counted twice) is pinned by the unit tests below, through a
//! test-only seam that refuses starts; `BlockingFuture`'s `Drop` by
//! `faults.rs`'s
//! `a_cancelled_blocking_closure_whose_capture_panics_on_drop_does_not_abort_the_process`.
//! The retire test in `work` is a cost rule.
//!
//! # Shutdown
//!
//! The runtime's shutdown refuses new blocking tasks (their handles report
//! cancellation) and waits, with the runtime's deadline, for the pool's
//! threads to run what was accepted before it: the running closures and
//! the queued ones (as tokio's pool threads run their queue: a closure
//! spawned before the shutdown is not lost). The deadline is forever when
//! the runtime is dropped, `timeout` in `shutdown_timeout`, none in
//! `shutdown_background`; threads still at work after it keep going, and
//! exit when the queue is empty.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use crate::runtime::scheduler::Shared;
use crate::runtime::task::{Contained, JoinHandle, Panic, Task, TaskMeta};
use crate::util::locks::{StdCondvar, StdIdleThreads, StdMutex, StdMutexGuard};
use crate::util::loom::sync::Arc;

/// Settings of the pool, fixed when the runtime is built.
#[derive(Clone)]
pub(crate) struct PoolConfig {
    pub(crate) max_threads: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) thread_name: StdArc<dyn Fn() -> String + Send + Sync>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) on_thread_start: Option<StdArc<dyn Fn() + Send + Sync>>,
    pub(crate) on_thread_stop: Option<StdArc<dyn Fn() + Send + Sync>>,
}

/// The pool of one runtime (lives in its `Shared`).
pub(crate) struct BlockingPool {
    state: StdMutex<PoolState>,
    /// Shutdown waits here for `threads == 0`.
    all_exited: StdCondvar,
    config: PoolConfig,
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Task>,
    threads: usize,
    idle: usize,
    /// The idle threads not yet promised a task (each waits on its own
    /// condvar for a task or for shutdown).
    waiting: StdIdleThreads,
    shutdown: bool,
    /// Blocking tasks accepted since the runtime started.
    spawned: u64,
}

/// What the metrics snapshot shows of the pool.
pub(crate) struct PoolMetrics {
    pub(crate) threads: usize,
    pub(crate) idle_threads: usize,
    pub(crate) queue_depth: usize,
    pub(crate) spawned: u64,
}

impl BlockingPool {
    pub(crate) fn new(config: PoolConfig) -> BlockingPool {
        BlockingPool {
            state: StdMutex::new(PoolState::default()),
            all_exited: StdCondvar::new(),
            config,
        }
    }

    fn lock(&self) -> StdMutexGuard<'_, PoolState> {
        // Every critical section leaves the state consistent before any
        // call that could panic, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `task` and makes sure a thread will run it: an idle one not
    /// yet promised to another task, else a new one if the cap allows, else
    /// the next thread to finish its closure.
    fn push(&self, shared: &Arc<Shared>, task: Task) {
        let mut state = self.lock();
        if state.shutdown {
            drop(state);
            // Cancels it (the runtime is shutting down): after the lock.
            crate::runtime::scheduler::drop_task(task);
            return;
        }
        state.spawned += 1;
        state.queue.push_back(task);
        if state.waiting.wake_last() {
            return;
        }
        if state.threads >= self.config.max_threads {
            return; // a busy thread takes it when its closure returns
        }
        state.threads += 1;
        drop(state);
        // A thread the OS refuses has no caller to report to: the queued
        // task waits for another pool thread, or is cancelled (its handle
        // says so) if none is left to run it.
        if self.start_thread(shared).is_err() {
            let mut state = self.lock();
            state.threads -= 1;
            if state.threads == 0 {
                let queued: Vec<Task> = state.queue.drain(..).collect();
                self.all_exited.notify_all();
                drop(state);
                for task in queued {
                    crate::runtime::scheduler::drop_task(task);
                }
            }
        }
    }

    fn start_thread(&self, shared: &Arc<Shared>) -> std::io::Result<()> {
        #[cfg(all(test, not(loom)))]
        if tests::REFUSED_STARTS.with(|left| left.replace(left.get().saturating_sub(1)) > 0) {
            return Err(std::io::Error::other("thread start refused by a test"));
        }
        let name = crate::util::locks::call_user("the thread_name hook (blocking pool)", || {
            (self.config.thread_name)()
        })
        .unwrap_or_else(|_| "weft-blocking".to_owned());
        let mut builder = thread::Builder::new().name(name.replace('\0', ""));
        if let Some(size) = self.config.stack_size {
            builder = builder.stack_size(size);
        }
        let shared = shared.clone();
        builder.spawn(move || run_thread(&shared)).map(drop)
    }

    /// The loop of one pool thread; returns when it retires.
    fn work(&self) {
        let wake_me = StdArc::new(StdCondvar::new());
        let mut state = self.lock();
        loop {
            if let Some(task) = state.queue.pop_front() {
                drop(state);
                // A panic in the closure is caught by the task's future;
                // this catches one from dropping a cancelled closure.
                let _ = crate::util::locks::call_user("a blocking task's run", move || task.run());
                state = self.lock();
                continue;
            }
            if state.shutdown {
                break;
            }
            state.idle += 1;
            state.waiting.push(&wake_me);
            let deadline = Instant::now() + self.config.keep_alive;
            let retire = loop {
                let now = Instant::now();
                if !state.waiting.contains(&wake_me) {
                    break false; // promised a task by a push
                }
                if state.shutdown || now >= deadline {
                    state.waiting.remove(&wake_me);
                    break true;
                }
                state = wake_me
                    .wait_timeout(state, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            };
            state.idle -= 1;
            // `&&` made `||` (the mutation run, every test passes) also
            // retires a woken thread that found its task taken by a thread
            // back from its closure: a thread started again later, never a
            // task left (a push wakes or starts a thread for each task).
            if retire && state.queue.is_empty() {
                break;
            }
        }
        state.threads -= 1;
        if state.threads == 0 {
            self.all_exited.notify_all();
        }
    }

    /// Refuses new tasks, and lets the idle threads exit once the queue
    /// is empty (the queued tasks still run). Idempotent.
    pub(crate) fn begin_shutdown(&self) {
        let mut state = self.lock();
        state.shutdown = true;
        state.waiting.wake_all();
    }

    /// Waits until every pool thread has exited or `deadline` passes;
    /// returns whether they all exited.
    pub(crate) fn wait_for_threads(&self, deadline: Option<Instant>) -> bool {
        crate::util::locks::wait_until(&self.all_exited, self.lock(), deadline, |state| {
            state.threads == 0
        })
    }

    /// Whether a closure is queued or running: a paused test clock does
    /// not jump meanwhile (tokio's rule), since the closure's result may be
    /// what the timers wait for.
    #[cfg(feature = "test-util")]
    pub(crate) fn has_work_in_flight(&self) -> bool {
        let state = self.lock();
        !state.queue.is_empty() || state.threads > state.idle
    }

    pub(crate) fn metrics(&self) -> PoolMetrics {
        let state = self.lock();
        PoolMetrics {
            threads: state.threads,
            idle_threads: state.idle,
            queue_depth: state.queue.len(),
            spawned: state.spawned,
        }
    }
}

thread_local! {
    /// The runtime whose pool this thread belongs to (null elsewhere).
    static POOL_OF: std::cell::Cell<*const Shared> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// Whether the calling thread is one of `shared`'s blocking-pool threads.
pub(crate) fn is_pool_thread_of(shared: &Shared) -> bool {
    POOL_OF.with(|pool_of| std::ptr::eq(pool_of.get(), shared))
}

/// Body of a pool thread: the runtime is the thread's current context (so
/// `Handle::current`, `weft::spawn` and `Handle::block_on` work inside the
/// closure), and so is its tokio runtime with `tokio_compat`; the runtime's
/// thread hooks run around it.
fn run_thread(shared: &Arc<Shared>) {
    let _counted = shared.threads.count(crate::metrics::ThreadKind::Blocking);
    let pool = &shared.blocking;
    POOL_OF.with(|pool_of| pool_of.set(&**shared));
    let _context = crate::runtime::context::set_current(shared.clone());
    let _tokio = shared.tokio.enter();
    let hook = |hook: &Option<StdArc<dyn Fn() + Send + Sync>>| {
        if let Some(hook) = hook {
            let _ = crate::util::locks::call_user("a thread hook (blocking pool)", || hook());
        }
    };
    hook(&pool.config.on_thread_start);
    pool.work();
    hook(&pool.config.on_thread_stop);
}

/// The future of a blocking task: runs the closure once, on its first poll.
struct BlockingFuture<F>(Option<F>, crate::runtime::task::Id);

// The closure is never pinned: it is moved out before it runs.
impl<F> Unpin for BlockingFuture<F> {}

impl<F> Drop for BlockingFuture<F> {
    fn drop(&mut self) {
        // A closure dropped unrun (cancelled) whose captures panic in their
        // destructor: async-task would abort the process on that panic.
        if let Some(f) = self.0.take() {
            let _ = crate::util::locks::call_user("a blocking closure's drop", move || drop(f));
        }
    }
}

impl<F, R> Future for BlockingFuture<F>
where
    F: FnOnce() -> R,
{
    type Output = Contained<Result<R, Panic>>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let f = self
            .0
            .take()
            .expect("a blocking task is polled once: it never returns Pending");
        // `task::id()` works in a blocking closure too, as in tokio.
        let _id = crate::runtime::task::id::enter(self.1);
        Poll::Ready(Contained::new(
            crate::util::locks::call_user("a blocking closure", f),
            self.1,
        ))
    }
}

/// Where async-task sends a blocking task to be run: its runtime's pool.
fn schedule_blocking(task: Task) {
    // SAFETY: a blocking task's scheduler is its runtime's `Shared`
    // (`spawn_blocking_on`, the only place this function is installed).
    let shared = unsafe { task.metadata().scheduler_arc::<Shared>() };
    shared.blocking.push(&shared, task);
}

/// Spawns `f` on the blocking pool of the runtime behind `shared`.
#[track_caller]
pub(crate) fn spawn_blocking_on<F, R>(shared: &Arc<Shared>, f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    if shared.blocking.lock().shutdown {
        return JoinHandle::cancelled_at_spawn(f);
    }
    let (runnable, task) = async_task::Builder::new()
        .metadata(TaskMeta::new(
            shared.clone(),
            crate::runtime::task::SpawnOptions::plain(std::panic::Location::caller()),
        ))
        .spawn(
            move |meta| BlockingFuture(Some(f), meta.id()),
            schedule_blocking,
        );
    runnable.schedule();
    JoinHandle::new(task)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::cell::Cell;
    use std::sync::mpsc;
    use std::time::Duration;

    use crate::runtime::task::{JoinError, JoinHandle};

    thread_local! {
        /// How many thread starts of pushes made on this thread are
        /// refused, as the OS may refuse them (a thread-local, so the other
        /// tests of the binary are not touched).
        pub(super) static REFUSED_STARTS: Cell<usize> = const { Cell::new(0) };
    }

    /// Awaits `handle` for up to 10 s; on failure leaks the runtime (its
    /// drop would wait for pool threads the broken count says exist).
    fn within_10_s<T>(
        rt: crate::runtime::Runtime,
        what: &str,
        handle: JoinHandle<T>,
    ) -> (crate::runtime::Runtime, Result<T, JoinError>) {
        match rt.block_on(async { crate::time::timeout(Duration::from_secs(10), handle).await }) {
            Ok(result) => (rt, result),
            Err(_) => {
                std::mem::forget(rt);
                panic!("{what} never resolved");
            }
        }
    }

    fn runtime() -> crate::runtime::Runtime {
        crate::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(2)
            .build()
            .unwrap()
    }

    /// A closure whose thread the OS refuses, with no other pool thread
    /// to run it, is cancelled: its handle says so at once instead of
    /// waiting for ever, and the pool still starts threads afterwards.
    #[test]
    fn a_closure_whose_thread_cannot_start_is_cancelled_not_lost() {
        let rt = runtime();
        REFUSED_STARTS.with(|left| left.set(1));
        let refused = rt.handle().spawn_blocking(|| 1);
        let (rt, resolved) = within_10_s(rt, "the handle of a closure no thread can run", refused);
        let error = resolved.expect_err("no thread could run it");
        assert!(error.is_cancelled(), "{error}");
        assert_eq!(rt.block_on(rt.handle().spawn_blocking(|| 2)).unwrap(), 2);
    }

    /// Refused beside a running pool thread, the closure waits for that
    /// thread and runs after its closure; the count of threads stays
    /// right, so a later closure gets a thread of its own.
    #[test]
    fn a_closure_whose_thread_cannot_start_waits_for_a_running_one() {
        let rt = runtime();
        let (release, released) = mpsc::channel::<()>();
        let (started, running) = mpsc::channel();
        let busy = rt.handle().spawn_blocking(move || {
            started.send(()).unwrap();
            released.recv().unwrap();
        });
        running.recv_timeout(Duration::from_secs(10)).unwrap();
        REFUSED_STARTS.with(|left| left.set(1));
        let queued = rt.handle().spawn_blocking(|| 3);
        let threads = rt.handle().metrics().blocking_threads;
        if threads != 1 {
            // Dropping the runtime would wait for threads that do not exist.
            std::mem::forget(rt);
            panic!("{threads} pool threads counted, 1 runs");
        }
        release.send(()).unwrap();
        rt.block_on(busy).unwrap();
        let (_rt, resolved) = within_10_s(rt, "the queued closure", queued);
        assert_eq!(resolved.unwrap(), 3);
    }

    /// Issue 39's bug put back by hand: a queued closure cancelled while
    /// the pool's lock is held. No destructor here re-enters the runtime,
    /// yet the lock guard (`crate::util::locks`) ends the process at once,
    /// naming the drop.
    #[test]
    #[cfg(debug_assertions)]
    fn a_closure_cancelled_under_the_pool_lock_is_caught_by_the_guard() {
        use crate::util::locks::tests::{expect_abort_in_child, in_child};
        if !in_child() {
            return expect_abort_in_child(
                "runtime::blocking::tests::a_closure_cancelled_under_the_pool_lock_is_caught_by_the_guard",
                "weft calls user code (a blocking closure's drop) while this thread holds 1",
            );
        }
        let rt = crate::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (started, running) = mpsc::channel();
        let _busy = rt.handle().spawn_blocking(move || {
            started.send(()).unwrap();
            std::thread::park();
        });
        running.recv_timeout(Duration::from_secs(10)).unwrap();
        let _queued = rt.handle().spawn_blocking(|| ());
        let pool = &rt.handle().shared.blocking;
        let mut state = pool.lock();
        let queued = state
            .queue
            .pop_front()
            .expect("queued behind the busy closure");
        drop(queued);
        unreachable!("the guard aborts the process");
    }
}
