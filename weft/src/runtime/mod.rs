//! The runtime: worker threads, the thread-local context, `block_on`,
//! shutdown.
//!
//! # Shutdown order
//!
//! 1. Set the shutdown flag and unpark every worker (`Shared::begin_shutdown`).
//!    From here on a wake from outside drops the task instead of queueing
//!    it, and a spawn is refused (its `JoinHandle` reports cancellation).
//!    (A task's panic under `UnhandledPanic::ShutdownRuntime` sets the flag
//!    from a worker; the steps below still run when the runtime is shut
//!    down or dropped.)
//! 2. Each worker notices the flag at its next tick or wake-up, leaves its
//!    loop and drops the tasks in its LIFO slot and ring.
//! 3. The runtime waits for the workers (bounded by `shutdown_timeout`).
//! 4. `Shared::shutdown_drain` drops what is left in the inject queue, then
//!    closes the task registry and wakes every task still registered; each
//!    wake reaches the shut-down scheduler, which drops the task. Every
//!    pending future is dropped exactly once: a `Runnable` exists at most
//!    once per task and is dropped (or run) by whoever holds it, and a
//!    task's registry waker is taken out exactly once.
//! 5. The blocking pool's threads are waited for (same deadline).
//! 6. With `tokio_compat`, the tokio runtime is stopped last, once no weft
//!    thread polls a tokio socket or timer any more (`runtime/tokio_compat.rs`).
//!
//! Step 3 must not run on one of the runtime's own workers (it would wait
//! for itself): dropping a runtime inside one of its tasks panics.
//!
//! A current-thread runtime follows the same order with its core in place
//! of the workers: step 3 waits for the core (a `block_on` driving on
//! another thread puts it back at its next tick), and the drain runs with
//! the runtime's context entered (`runtime/current_thread.rs`).
//! Dropped inside its own `block_on`, it drains without waiting; the
//! driver drops what its queue still holds when it leaves.

mod block_on;
pub(crate) mod blocking;
mod builder;
pub(crate) mod context;
#[cfg(not(loom))]
pub(crate) mod current_thread;
mod dump;
mod handle;
pub(crate) mod io;
#[cfg(not(loom))]
mod local_runtime;
#[cfg(all(test, loom))]
pub(crate) mod loom_support;
pub(crate) mod scheduler;
pub(crate) mod sys;
pub(crate) mod task;
pub(crate) mod time;
pub(crate) mod tokio_compat;

// The engine's surface for the public modules (`task`, `time`, `io`,
// `net`, `fs`, `hyper`, the crate root): besides `context` and the public
// face (`Builder`, `Runtime`, `Handle`), the only engine items they may
// name. `scripts/check_layers.sh` (CI) fails on any other path into the
// engine from outside `runtime/`.
pub(crate) use blocking::spawn_blocking_on;
#[cfg(all(feature = "hyper", not(loom)))]
pub(crate) use io::poll_evented::zeroed;
#[cfg(not(loom))]
pub(crate) use io::poll_evented::{PollEvented, current_runtime};
#[cfg(all(test, feature = "hyper", not(loom)))]
pub(crate) use io::scheduled_io::shutdown_error;
#[cfg(not(loom))]
pub(crate) use io::scheduled_io::shutdown_error_saying;
#[cfg(not(loom))]
pub(crate) use io::scheduled_io::{Direction, ReadyEvent, Wants};
/// The reactor's readiness bits, which `io::Ready` holds as they are.
#[cfg(not(loom))]
pub(crate) mod ready_bits {
    pub(crate) use super::io::scheduled_io::{
        ERROR, PRIORITY, READ_CLOSED, READABLE, WRITABLE, WRITE_CLOSED,
    };
}
pub(crate) use scheduler::Shared;
pub(crate) use scheduler::block_in_place::block_in_place;
#[cfg(all(feature = "hyper", not(loom)))]
pub(crate) use sys::{AcceptFailure, accept_failure};
pub(crate) use task::SpawnOptions;
pub(crate) use task::id::current as current_task_id;
pub(crate) use task::label::Label;
#[cfg(feature = "test-util")]
pub(crate) use time::driver::Poke;
pub(crate) use time::driver::{Closed as TimerClosed, TimerRef};

use std::fmt;
use std::future::Future;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::metrics::ThreadKind;
use crate::runtime::blocking::{BlockingPool, PoolConfig};
use crate::runtime::scheduler::Config;
use crate::runtime::scheduler::monitor::{HandBack, Monitor, MonitorConfig, SpawnThread};
use crate::runtime::scheduler::queue::Local;
use crate::runtime::scheduler::worker::{Core, RunExit};
use crate::runtime::task::{JoinHandle, Task};
use crate::runtime::tokio_compat::TokioThread;
use crate::util::locks::{StdCondvar, StdMutex, wait_until};

pub use crate::runtime::scheduler::monitor::StallInfo;
#[cfg(not(feature = "tokio-compat"))]
#[doc(hidden)]
pub use builder::TokioCompatFeatureIsOff;
pub use builder::{
    Builder, DEFAULT_MAX_BLOCKING_THREADS, MAX_STACK_SIZE, MAX_WORKER_THREADS, MIN_STACK_SIZE,
};
pub use dump::{Dump, TaskInfo, TaskState};
pub use handle::{EnterGuard, Handle, TryCurrentError};
#[cfg(not(loom))]
pub use local_runtime::{LocalOptions, LocalRuntime};
#[cfg(not(loom))]
pub(crate) use local_runtime::{LocalRuntimeSet, spawn_on_current as spawn_local_on_current};

pub use crate::runtime::scheduler::panic_policy::UnhandledPanic;

/// The kind of scheduler a runtime runs: what
/// [`Handle::runtime_flavor`] returns (tokio's `RuntimeFlavor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// Every task on the thread that calls `block_on`
    /// ([`Builder::new_current_thread`]).
    CurrentThread,
    /// Work-stealing workers, lanes and the stall monitor
    /// ([`Builder::new_multi_thread`]).
    MultiThread,
}

/// An opaque identifier of a runtime, unique among the runtimes of this
/// process: what [`Handle::id`] returns (tokio's `runtime::Id`).
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq)]
pub struct Id(std::num::NonZeroU64);

impl Id {
    /// The next identifier of this process.
    pub(crate) fn next() -> Id {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Id(std::num::NonZeroU64::new(id).expect("runtime ids do not wrap around"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

// A panic caught around a runtime or its handle leaves nothing half-done
// that a later call could observe: their state is in atomics and in locks
// that ignore poisoning, and every callback the runtime runs is already
// run under its own `catch_unwind`. tokio's are unwind-safe too; code that
// holds one across `catch_unwind` must compile on weft.
impl std::panic::UnwindSafe for Runtime {}
impl std::panic::RefUnwindSafe for Runtime {}
impl std::panic::UnwindSafe for Handle {}
impl std::panic::RefUnwindSafe for Handle {}

/// Whether `error` is the one an I/O operation returns because the runtime
/// its source was registered with has shut down (tokio's
/// `runtime::is_rt_shutdown_err`).
pub fn is_rt_shutdown_err(error: &std::io::Error) -> bool {
    #[cfg(not(loom))]
    {
        error
            .get_ref()
            .is_some_and(|inner| inner.is::<io::scheduled_io::RuntimeShutDown>())
    }
    #[cfg(loom)]
    {
        let _ = error;
        false
    }
}

/// The index of the worker thread this is called on (tokio's
/// `runtime::worker_index`): `0..num_workers` on a multi-thread runtime's
/// worker, `Some(0)` on the thread driving a current-thread runtime (in its
/// `block_on`), `None` anywhere else (the blocking pool, a `block_on`
/// waiting for another's driver, a thread outside any runtime). A spare
/// thread the stall monitor lent in place of a stuck worker gives `None`
/// too: its slot is not one of the `num_workers` a table indexed by this
/// value would have.
///
/// It may change across an `.await`: a task may move between workers.
///
/// ```
/// let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).build()?;
/// let index = rt.block_on(async { weft::spawn(async { weft::runtime::worker_index() }).await })?;
/// assert!(index.is_some_and(|i| i < 2));
/// assert_eq!(weft::runtime::worker_index(), None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn worker_index() -> Option<usize> {
    let worker = context::with_core(|core| core.and_then(|core| core.worker_index()));
    #[cfg(not(loom))]
    if worker.is_none() && context::with_current_thread_core(|core| core.is_some()) {
        return Some(0);
    }
    worker
}

/// An async runtime: multi-thread and work-stealing
/// ([`Builder::new_multi_thread`], [`Runtime::new`]), or current-thread
/// ([`Builder::new_current_thread`]: every task on the thread inside
/// `block_on`).
///
/// # Examples
///
/// ```
/// use weft::runtime::Runtime;
///
/// let rt = Runtime::new().unwrap();
/// let sum = rt.block_on(async {
///     let tasks: Vec<_> = (0..10u64).map(|i| weft::spawn(async move { i * i })).collect();
///     let mut sum = 0;
///     for task in tasks {
///         sum += task.await.unwrap();
///     }
///     sum
/// });
/// assert_eq!(sum, 285);
/// ```
pub struct Runtime {
    handle: Handle,
    workers: Vec<thread::JoinHandle<()>>,
    exited: Arc<ExitLatch>,
    /// The shutdown sequence has run (`shutdown_timeout`, then the drop).
    /// Not the runtime's shutdown flag: a task's panic under
    /// `UnhandledPanic::ShutdownRuntime` sets that one from a worker, and
    /// the sequence (waiting for the workers, the drain) still has to run.
    shut_down: bool,
    /// The `weft-tokio` thread (`Builder::tokio_compat`): stopped last.
    tokio: Option<TokioThread>,
    /// The current-thread scheduler, on that flavor (its owner: `Shared`
    /// holds it weakly).
    #[cfg(not(loom))]
    current_thread: Option<Arc<current_thread::CurrentThread>>,
}

/// How long a shutdown waits for the workers to leave their loops before
/// it cancels the idle tasks under the ones still in (`Runtime::shutdown`).
const WORKER_EXIT_GRACE: Duration = Duration::from_millis(100);

/// Counts workers that have left their loop, so shutdown can wait with a
/// deadline (std's `JoinHandle::join` has none).
struct ExitLatch {
    running: StdMutex<usize>,
    all_exited: StdCondvar,
    /// The helper threads (stall monitor, spares): joined at shutdown once
    /// the latch says they left, so none outlives the runtime's drop (a
    /// thread past its exit guard is still alive for a moment).
    helpers: StdMutex<Vec<thread::JoinHandle<()>>>,
}

impl ExitLatch {
    fn worker_exited(&self) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *running -= 1;
        if *running == 0 {
            self.all_exited.notify_all();
        }
    }

    /// Waits until every worker exited or the deadline passes.
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        wait_until(&self.all_exited, running, deadline, |running| *running == 0)
    }

    /// Joins `workers` and the helper threads once all have left their
    /// loops, if they do by `deadline` (step 3 of the shutdown).
    fn join(&self, workers: Vec<thread::JoinHandle<()>>, deadline: Option<Instant>) {
        if !self.wait(deadline) {
            return;
        }
        for worker in workers {
            let _ = worker.join();
        }
        let helpers = std::mem::take(&mut *self.helpers.lock().unwrap_or_else(|e| e.into_inner()));
        for helper in helpers {
            let _ = helper.join();
        }
    }
}

impl Runtime {
    /// A runtime with default settings: one worker per available core.
    pub fn new() -> std::io::Result<Runtime> {
        Builder::new_multi_thread().build()
    }

    pub(crate) fn start(builder: &Builder) -> std::io::Result<Runtime> {
        #[cfg(not(loom))]
        if builder.flavor == RuntimeFlavor::CurrentThread {
            return Runtime::start_current_thread(builder);
        }
        let num_workers = builder.resolved_worker_threads();
        let spare_slots = if builder.stall_monitor {
            builder.resolved_max_threads() - num_workers
        } else {
            0
        };
        let exited = Arc::new(ExitLatch {
            // Counted up per thread actually started, so that a start-up
            // that fails half-way waits only for the threads that exist.
            running: StdMutex::new(0),
            all_exited: StdCondvar::new(),
            helpers: StdMutex::new(Vec::new()),
        });
        let (mut tokio, tokio_context) = crate::runtime::tokio_compat::start(builder.tokio_compat)?;
        let (shared, mut locals) = Shared::new(
            scheduler_config(builder, num_workers, spare_slots),
            blocking_pool(builder),
            monitor(builder, builder.stall_monitor, exited.clone(), spare_slots),
            tokio_context,
        )?;
        if let Some(tokio) = &mut tokio {
            tokio.set_weft(shared.clone());
        }
        shared
            .monitor
            .add_spare_slots(num_workers, locals.split_off(num_workers));
        let mut runtime = Runtime {
            handle: Handle { shared },
            workers: Vec::with_capacity(num_workers),
            exited,
            shut_down: false,
            tokio,
            #[cfg(not(loom))]
            current_thread: None,
        };
        runtime.start_workers(builder, locals)?;
        let shared = &runtime.handle.shared;
        if shared.monitor.is_enabled() {
            // The monitor runs no task: the thread hooks (for threads that
            // run the user's code) are not run on it.
            let spawn = helper_thread_spawner(builder, runtime.exited.clone(), false);
            // Named here, with no lock held.
            let name = Some(helper_thread_name(builder));
            spawn(
                shared.clone(),
                crate::runtime::scheduler::monitor::run_monitor,
                name,
            )?;
        }
        Ok(runtime)
    }

    /// A current-thread runtime (`runtime/current_thread.rs`): the engine's
    /// parts in a `Shared` of one slot, without the stall monitor, and the
    /// scheduler that runs tasks on the `block_on` thread. No thread is
    /// started (the blocking pool starts its own on demand).
    #[cfg(not(loom))]
    fn start_current_thread(builder: &Builder) -> std::io::Result<Runtime> {
        let exited = Arc::new(ExitLatch {
            running: StdMutex::new(0),
            all_exited: StdCondvar::new(),
            helpers: StdMutex::new(Vec::new()),
        });
        let (mut tokio, tokio_context) = crate::runtime::tokio_compat::start(builder.tokio_compat)?;
        let mut config = scheduler_config(builder, 1, 0);
        config.io_shards = 1;
        config.demote_slow_tasks = false;
        let (shared, _unused_ring) = Shared::new(
            config,
            blocking_pool(builder),
            monitor(builder, false, exited.clone(), 0),
            tokio_context,
        )?;
        if let Some(tokio) = &mut tokio {
            tokio.set_weft(shared.clone());
        }
        let scheduler = current_thread::CurrentThread::new(shared.clone());
        Ok(Runtime {
            handle: Handle { shared },
            workers: Vec::new(),
            exited,
            shut_down: false,
            tokio,
            current_thread: Some(scheduler),
        })
    }

    /// Starts a worker thread per ring in `locals` and waits until each has
    /// run `on_thread_start`.
    fn start_workers(
        &mut self,
        builder: &Builder,
        locals: Vec<Local<Task>>,
    ) -> std::io::Result<()> {
        let (started_tx, started_rx) = mpsc::channel();
        for (index, local) in locals.into_iter().enumerate() {
            let mut thread = thread::Builder::new().name(thread_name(builder)?);
            if let Some(size) = builder.thread_stack_size {
                thread = thread.stack_size(size);
            }
            let worker = WorkerThread {
                core: Core::new(index, self.handle.shared.clone(), local),
                handle: self.handle.clone(),
                on_start: builder.on_thread_start.clone(),
                on_stop: builder.on_thread_stop.clone(),
                exited: self.exited.clone(),
                started: started_tx.clone(),
            };
            *self.exited.running.lock().unwrap() += 1;
            match thread.spawn(move || worker.run()) {
                Ok(join) => self.workers.push(join),
                Err(err) => {
                    *self.exited.running.lock().unwrap() -= 1;
                    return Err(err);
                }
            }
        }
        drop(started_tx);
        for _ in 0..self.workers.len() {
            match started_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(message)) => {
                    return Err(std::io::Error::other(format!(
                        "the `on_thread_start` hook panicked on a worker thread: {message}"
                    )));
                }
                Err(_) => {
                    return Err(std::io::Error::other(
                        "a worker thread exited during start-up",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The engine's settings from the builder's.
fn scheduler_config(builder: &Builder, num_workers: usize, spare_slots: usize) -> Config {
    Config {
        name: builder.name.clone(),
        num_workers,
        inject_batch_cap: builder.inject_batch_cap,
        lifo_slot: builder.lifo_slot,
        global_check_target_ns: builder.global_check_target.as_nanos() as u64,
        poll_time_sample_every: builder.poll_time_sample_every,
        demote_slow_tasks: builder.demote_slow_tasks,
        batch_share: builder.batch_share,
        spare_slots,
        io_shards: builder.resolved_io_shards(num_workers),
        time_slices: builder.time_slices,
        fine_timer_slack: builder.fine_timer_slack,
        unhandled_panic: builder.unhandled_panic,
        global_queue_interval: builder.global_queue_interval,
        park_hooks: scheduler::ParkHooks {
            on_park: builder.on_thread_park.clone(),
            on_unpark: builder.on_thread_unpark.clone(),
        },
        io_disabled: builder.drivers_opt_in && !builder.io_enabled,
        time_disabled: builder.drivers_opt_in && !builder.time_enabled,
    }
}

/// The stall monitor, as the builder sets it up (`enabled`: the builder's
/// `stall_monitor` on the multi-thread flavor, never on the current-thread
/// one).
fn monitor(
    builder: &Builder,
    enabled: bool,
    exited: Arc<ExitLatch>,
    spare_slots: usize,
) -> Monitor {
    Monitor::new(
        MonitorConfig {
            enabled,
            stall_threshold: builder.stall_threshold,
            slow_poll_threshold: builder.slow_poll_threshold,
            spare_idle_timeout: builder.spare_idle_timeout,
            on_stall: builder.on_stall.clone(),
            spawn_thread: helper_thread_spawner(builder, exited, true),
            spawner_name: helper_thread_name(builder),
            demote_threads: builder.demote_slow_tasks,
        },
        spare_slots,
    )
}

/// The blocking pool, as the builder sets it up.
fn blocking_pool(builder: &Builder) -> BlockingPool {
    BlockingPool::new(PoolConfig {
        max_threads: builder.max_blocking_threads,
        keep_alive: builder.thread_keep_alive,
        thread_name: builder.thread_name.clone(),
        stack_size: builder.thread_stack_size,
        on_thread_start: builder.on_thread_start.clone(),
        on_thread_stop: builder.on_thread_stop.clone(),
    })
}

impl Runtime {
    /// A handle to this runtime, for spawning from other threads.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The current-thread scheduler, on that flavor.
    #[cfg(not(loom))]
    pub(crate) fn current_thread_scheduler(&self) -> Option<&current_thread::CurrentThread> {
        self.current_thread.as_deref()
    }

    /// A snapshot of the runtime's counters: [`Handle::metrics`] (tokio's
    /// `Runtime::metrics`).
    pub fn metrics(&self) -> crate::metrics::RuntimeMetrics {
        self.handle.metrics()
    }

    /// Spawns a task. Works from any thread.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let handle = rt.spawn(async { "done" });
    /// assert_eq!(rt.block_on(handle).unwrap(), "done");
    /// ```
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Runs a blocking closure on the runtime's blocking pool. See
    /// [`crate::task::spawn_blocking`].
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// Runs `future` to completion on the current thread; tasks it spawns
    /// run on the workers (on a current-thread runtime, on this thread
    /// meanwhile). See [`Handle::block_on`] for when it panics.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    /// Makes this runtime the thread's current context until the guard drops.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// Shuts down, waiting at most `timeout` for the workers and the
    /// blocking pool to stop (a task stuck in a long poll keeps its worker
    /// until the poll returns, a `spawn_blocking` closure its thread until it
    /// returns; those threads are then left to finish on their own). Every
    /// task that has not completed is cancelled and its future dropped, and
    /// queued blocking closures that no thread has started never run.
    ///
    /// Dropping the runtime shuts it down the same way but waits as long as
    /// it takes.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.spawn_blocking(|| std::thread::sleep(Duration::from_secs(5)));
    /// let start = Instant::now();
    /// rt.shutdown_timeout(Duration::from_millis(50));
    /// assert!(start.elapsed() < Duration::from_secs(5));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        // A timeout past the clock's range (`Duration::MAX`) waits as long
        // as it takes.
        self.shutdown(Instant::now().checked_add(timeout));
    }

    /// Shuts down without waiting for the workers.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    fn shutdown(&mut self, deadline: Option<Instant>) {
        #[cfg(not(loom))]
        if let Some(scheduler) = self.current_thread.clone() {
            self.shutdown_current_thread(&scheduler, deadline);
            return;
        }
        let shared = &self.handle.shared;
        let on_own_worker = crate::runtime::context::with_core(|core| {
            core.is_some_and(|core| std::ptr::eq(&*core.shared, &**shared))
        });
        if std::mem::replace(&mut self.shut_down, true) {
            return;
        }
        shared.begin_shutdown();
        shared.blocking.begin_shutdown();
        if on_own_worker {
            // Waiting would deadlock; cancel what can be cancelled and say why.
            shared.shutdown_drain();
            // Stopped without waiting: its stop sender is dropped.
            self.tokio = None;
            if !thread::panicking() {
                panic!(
                    "a weft runtime was dropped (or shut down) from inside one of its own tasks: \
                     its worker would wait for itself. Drop it from the thread that created it, \
                     or move it out of the runtime first."
                );
            }
            return;
        }
        // A worker in `block_in_place` (or stuck in a poll) may wait for
        // what only a task's drop releases (a channel whose sender an idle
        // task holds, say): workers that have not left their loops after a
        // grace period get the idle tasks cancelled under them, then the
        // rest of the deadline. A shutdown whose workers leave at once
        // (every other case) drains after they are gone.
        let grace = Instant::now() + WORKER_EXIT_GRACE;
        let first_wait = deadline.map_or(grace, |deadline| deadline.min(grace));
        if !self.exited.wait(Some(first_wait)) {
            shared.shutdown_drain();
        }
        self.exited
            .join(std::mem::take(&mut self.workers), deadline);
        shared.shutdown_drain();
        if crate::runtime::blocking::is_pool_thread_of(shared) {
            // Called from one of the pool's own threads (a blocking closure
            // dropping the runtime): waiting would wait for itself. The
            // tokio runtime is stopped without waiting, as above.
            self.tokio = None;
            return;
        }
        shared.blocking.wait_for_threads(deadline);
        if let Some(tokio) = self.tokio.take() {
            tokio.stop(deadline);
        }
    }
}

impl Runtime {
    /// The current-thread flavor's shutdown: the same order, with the core
    /// in place of the workers (`runtime/current_thread.rs`'s module doc).
    #[cfg(not(loom))]
    fn shutdown_current_thread(
        &mut self,
        scheduler: &current_thread::CurrentThread,
        deadline: Option<Instant>,
    ) {
        if std::mem::replace(&mut self.shut_down, true) {
            return;
        }
        let shared = &self.handle.shared;
        shared.begin_shutdown();
        shared.blocking.begin_shutdown();
        scheduler.shut_down(deadline);
        if crate::runtime::blocking::is_pool_thread_of(shared) {
            // A blocking closure dropping its runtime: see `shutdown`.
            self.tokio = None;
            return;
        }
        shared.blocking.wait_for_threads(deadline);
        if let Some(tokio) = self.tokio.take() {
            tokio.stop(deadline);
        }
    }
}

/// Spawns `future` on the runtime behind `shared`, whichever its scheduler:
/// the door of every spawn (`weft::spawn`, `Handle::spawn`, `JoinSet`,
/// `task::Builder`). Refused (the handle reports cancellation) once the
/// runtime is shutting down or gone.
pub(crate) fn spawn_on<F>(
    shared: &crate::util::loom::sync::Arc<Shared>,
    future: F,
    options: SpawnOptions,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    #[cfg(not(loom))]
    if let Some(scheduler) = current_thread::CurrentThread::of(shared) {
        return match scheduler {
            Some(scheduler) => task::spawn_on(&scheduler, future, options),
            None => JoinHandle::cancelled_at_spawn(future),
        };
    }
    task::spawn_on(shared, future, options)
}

impl Drop for Runtime {
    /// Shuts down and waits for the runtime's threads. On a thread that
    /// drives another runtime (a task, a `block_on`), waiting would block
    /// it, as `block_on` there would: the runtime shuts down without
    /// waiting, and the drop panics saying so (tokio's rule and message).
    /// A runtime dropped in one of its own tasks panics too (`shutdown`).
    fn drop(&mut self) {
        let drives_another = crate::runtime::context::is_driving()
            && !crate::runtime::context::with_core(|core| {
                core.is_some_and(|core| std::ptr::eq(&*core.shared, &*self.handle.shared))
            });
        if drives_another && !self.shut_down && !thread::panicking() {
            self.shutdown(Some(Instant::now()));
            panic!(
                "Cannot drop a runtime in a context where blocking is not allowed. This happens \
                 when a runtime is dropped from within an asynchronous context."
            );
        }
        self.shutdown(None);
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("num_workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

/// Everything a worker thread owns.
struct WorkerThread {
    core: Core,
    handle: Handle,
    on_start: Option<Arc<dyn Fn() + Send + Sync>>,
    on_stop: Option<Arc<dyn Fn() + Send + Sync>>,
    exited: Arc<ExitLatch>,
    started: mpsc::Sender<Result<(), String>>,
}

/// Counts the worker out of the exit latch however its thread ends, so a
/// bug that unwinds a worker can never make shutdown wait forever.
struct ExitGuard(Arc<ExitLatch>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.worker_exited();
    }
}

impl WorkerThread {
    fn run(self) {
        let _exit = ExitGuard(self.exited.clone());
        let _counted = self.handle.shared.threads.count(ThreadKind::Worker);
        self.handle.shared.config.tune_this_thread();
        let _slot = crate::metrics::WorkerSlot::acquire();
        let _current = context::set_current(self.handle.shared.clone());
        let _tokio = self.handle.shared.tokio.enter();
        let _driving = context::enter_driving(context::Driving::Worker);
        let started = match &self.on_start {
            None => Ok(()),
            Some(hook) => crate::util::locks::call_user("on_thread_start (worker)", || hook())
                .map_err(|panic| panic_message(&*panic)),
        };
        let start_failed = started.is_err();
        let _ = self.started.send(started);
        let core = self.core;
        if start_failed {
            // `build` reports the error and drops the runtime, which shuts
            // this worker's siblings down; this one never runs.
            core.close();
        } else {
            let exit = {
                let _on_slot = core.remote_watch().attach_thread();
                let _core = context::set_core(&core);
                core.run()
            };
            match exit {
                RunExit::Shutdown => core.close(),
                // Lowered for a slow poll: a thread of normal priority
                // carries on as this worker; this one ends.
                RunExit::Demoted => self.handle.shared.monitor.hand_back(HandBack::Worker(core)),
            }
        }
        if let Some(hook) = &self.on_stop {
            let _ = crate::util::locks::call_user("on_thread_stop (worker)", || hook());
        }
    }
}

/// Starts the runtime's helper threads (the stall monitor and its spare
/// threads): named like the workers, with the workers' stack size, the
/// thread hooks if `hooks`, the runtime as their context, counted in the
/// exit latch so shutdown waits for them as for the workers. (Each body
/// counts itself in the runtime's thread counts, by its kind.)
fn helper_thread_spawner(builder: &Builder, exited: Arc<ExitLatch>, hooks: bool) -> SpawnThread {
    type SharedArc = crate::util::loom::sync::Arc<Shared>;
    let name_fn = builder.thread_name.clone();
    let stack_size = builder.thread_stack_size;
    let on_start = builder.on_thread_start.clone().filter(|_| hooks);
    let on_stop = builder.on_thread_stop.clone().filter(|_| hooks);
    Box::new(
        move |shared: SharedArc, body: fn(&SharedArc), name: Option<String>| {
            let name = name.unwrap_or_else(|| name_of(&*name_fn));
            let mut thread = thread::Builder::new().name(name.replace('\0', ""));
            if let Some(size) = stack_size {
                thread = thread.stack_size(size);
            }
            let on_start = on_start.clone();
            let on_stop = on_stop.clone();
            let exit = exited.clone();
            *exited.running.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            let spawned = thread.spawn(move || {
                let _exit = ExitGuard(exit);
                shared.config.tune_this_thread();
                let _slot = crate::metrics::WorkerSlot::acquire();
                let _current = context::set_current(shared.clone());
                let _tokio = shared.tokio.enter();
                let _driving = context::enter_driving(context::Driving::Worker);
                if let Some(hook) = &on_start {
                    let _ =
                        crate::util::locks::call_user("on_thread_start (helper thread)", || hook());
                }
                body(&shared);
                if let Some(hook) = &on_stop {
                    let _ =
                        crate::util::locks::call_user("on_thread_stop (helper thread)", || hook());
                }
            });
            match spawned {
                Ok(handle) => {
                    let mut helpers = exited.helpers.lock().unwrap_or_else(|e| e.into_inner());
                    // Spares come and go: forget the ones already gone.
                    helpers.retain(|helper| !helper.is_finished());
                    helpers.push(handle);
                    Ok(())
                }
                Err(err) => {
                    exited.worker_exited();
                    Err(err)
                }
            }
        },
    )
}

/// A helper thread's name from the program's `thread_name` hook (a hook
/// that panics gives `weft-spare`).
fn name_of(name_fn: &(dyn Fn() -> String + Send + Sync)) -> String {
    crate::util::locks::call_user("the thread_name hook (helper thread)", name_fn)
        .unwrap_or_else(|_| "weft-spare".to_owned())
}

fn helper_thread_name(builder: &Builder) -> String {
    name_of(&*builder.thread_name)
}

/// The next worker's name from the builder's name function, which must not
/// panic and must give a name the OS accepts (no NUL byte).
fn thread_name(builder: &Builder) -> std::io::Result<String> {
    let name =
        crate::util::locks::call_user("the thread_name hook (worker)", || (builder.thread_name)())
            .map_err(|panic| {
                std::io::Error::other(format!(
                    "the `thread_name_fn` function panicked: {}",
                    panic_message(&*panic)
                ))
            })?;
    if name.contains('\0') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("invalid weft runtime setting `thread_name`: {name:?} contains a NUL byte"),
        ));
    }
    Ok(name)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}
