//! The three runtimes under test behind one small interface, so that every
//! workload (and every micro benchmark) is written once and run on each.
//!
//! * [`BenchRuntime`] is what the harness needs from a runtime: build it with
//!   a worker count, `block_on` a future on the calling thread, hand out a
//!   [`Spawner`], and (weft only) read scheduler counters.
//! * [`Spawner`] is what a task needs: spawn (joinable or detached) and
//!   yield. It is a cheap clone that tasks carry along.
//!
//! Spawning always goes through the runtime's handle. For tokio and weft that
//! is exactly what the ambient `tokio::spawn` / `weft::spawn` do: both
//! handles check whether the calling thread is one of their workers and then
//! push to its local queue, otherwise to the global inject queue. smol has no
//! ambient executor, so its spawner is the `Arc<Executor>` itself.
//!
//! tokio is built as its own benches build it, with no driver enabled:
//! their `enable_all` enables nothing without tokio's I/O and time
//! features, and this crate's `time` feature (for the timers suite, which
//! builds its tokio with `enable_time` in `timers::runtime`) is left off
//! here, so idle workers park on a condvar: none of the three runtimes has
//! a reactor or a timer driver in these workloads.
//!
//! smol is set up the way its documentation builds a thread pool: one
//! `Executor`, N threads each running `block_on(executor.run(shutdown))`,
//! where `shutdown` is an `async_channel` receiver whose sender is dropped
//! when the runtime is dropped. Dropping a smol `Task` cancels it, so
//! [`Spawner::spawn_detached`] calls `Task::detach` where tokio's workloads
//! drop a `JoinHandle`.

pub mod net;
pub mod timer;

use std::fmt::Debug;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::thread;

use async_executor::Executor;
use clap::ValueEnum;

/// A runtime the suite can measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum RuntimeKind {
    /// weft, the runtime under test.
    Weft,
    /// tokio's multi-thread runtime.
    Tokio,
    /// smol's `async-executor`, run by N threads.
    Smol,
}

impl RuntimeKind {
    /// Every runtime, in the order blocks alternate.
    pub const ALL: [RuntimeKind; 3] = [RuntimeKind::Weft, RuntimeKind::Tokio, RuntimeKind::Smol];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Weft => "weft",
            RuntimeKind::Tokio => "tokio",
            RuntimeKind::Smol => "smol",
        }
    }
}

/// Scheduler settings that only weft understands (hidden CLI flags, for
/// measuring policies). The defaults leave weft's own defaults alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// `Builder::inject_batch_cap`, if set.
    pub inject_batch_cap: Option<usize>,
    /// `Builder::lifo_slot`.
    pub lifo_slot: bool,
    /// `Builder::stall_monitor` (the mixed suite turns it off in a variant).
    pub stall_monitor: bool,
    /// `Builder::demote_slow_tasks` (likewise).
    pub demote_slow_tasks: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            inject_batch_cap: None,
            lifo_slot: true,
            stall_monitor: true,
            demote_slow_tasks: true,
        }
    }
}

/// Counter values read from a runtime, as `(name, value)` pairs in a fixed
/// order.
pub type Counters = Vec<(&'static str, u64)>;

/// What the harness needs from a runtime.
pub trait BenchRuntime: Sized {
    /// Which runtime this is.
    const KIND: RuntimeKind;
    /// The spawner its tasks carry.
    type Spawner: Spawner;

    /// Starts a runtime with `workers` worker threads.
    fn build(workers: usize, tuning: Tuning) -> io::Result<Self>;
    /// Runs `future` to completion on the calling thread.
    fn block_on<F: Future>(&self, future: F) -> F::Output;
    /// A spawner for this runtime, usable from any thread.
    fn spawner(&self) -> Self::Spawner;
    /// Number of worker threads.
    fn workers(&self) -> usize;
    /// The runtime's own scheduler counters, if it exposes them.
    fn counters(&self) -> Option<Counters> {
        None
    }
    /// The stall monitor's counters since the runtime started (weft only).
    fn monitor_counters(&self) -> Option<Counters> {
        None
    }
    /// Threads the runtime started since it was built, if it tells: weft's
    /// `RuntimeMetrics::threads_started`, tokio's `on_thread_start` hook
    /// (workers and blocking-pool threads); smol has no such hook.
    fn threads_started(&self) -> Option<u64> {
        None
    }
}

/// What a task needs from its runtime.
pub trait Spawner: Clone + Send + Sync + 'static {
    /// A joinable task: awaiting it gives the task's output.
    type Task<T: Send + 'static>: Future<Output = T> + Send + 'static;

    /// Spawns `future` and returns a handle to await its output.
    fn spawn<F>(&self, future: F) -> Self::Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// Spawns `future` and lets it run on its own: by default, drops its
    /// handle, which detaches a weft or tokio task (a smol `Task` is
    /// cancelled when dropped, so smol detaches it instead).
    fn spawn_detached<F>(&self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.spawn(future));
    }
    /// Yields to the scheduler once, the runtime's own way.
    fn yield_now() -> impl Future<Output = ()> + Send;
}

/// A join handle whose `Result` is unwrapped: a benchmark task that panics
/// or is cancelled is a broken benchmark, and the harness reports the panic.
pub struct Joined<H>(H);

impl<H, T, E> Future for Joined<H>
where
    H: Future<Output = Result<T, E>> + Unpin,
    E: Debug,
{
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        // Every runtime's join handle is `Unpin` (tokio's, smol's, weft's).
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|result| result.expect("a benchmark task failed"))
    }
}

/// weft's multi-thread runtime.
pub struct Weft(weft::runtime::Runtime);

impl BenchRuntime for Weft {
    const KIND: RuntimeKind = RuntimeKind::Weft;
    type Spawner = weft::runtime::Handle;

    fn build(workers: usize, tuning: Tuning) -> io::Result<Self> {
        let mut builder = weft::runtime::Builder::new_multi_thread();
        builder
            .worker_threads(workers)
            .lifo_slot(tuning.lifo_slot)
            .stall_monitor(tuning.stall_monitor)
            .demote_slow_tasks(tuning.demote_slow_tasks);
        if let Some(cap) = tuning.inject_batch_cap {
            builder.inject_batch_cap(cap);
        }
        builder.build().map(Weft)
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawner(&self) -> Self::Spawner {
        self.0.handle().clone()
    }

    fn workers(&self) -> usize {
        self.0.handle().num_workers()
    }

    fn counters(&self) -> Option<Counters> {
        let metrics = self.0.handle().metrics();
        let mut counters = metrics.total.fields();
        counters.push(("spawned_remote", metrics.spawned_remote));
        counters.push(("remote_wake_requests", metrics.remote_wake_requests));
        Some(counters)
    }

    fn monitor_counters(&self) -> Option<Counters> {
        let metrics = self.0.handle().metrics();
        Some(vec![
            ("stalls", metrics.stalls),
            ("handoffs", metrics.handoffs),
            ("spares_started", metrics.spares_started),
            ("spares_woken", metrics.spares_woken),
            ("threads_demoted", metrics.threads_demoted),
            ("step_asides", metrics.step_asides),
            ("monitor_io_wakes", metrics.monitor_io_wakes),
            ("monitor_timer_wakes", metrics.monitor_timer_wakes),
            ("threads_restored", metrics.threads_restored),
            ("task_demotions", metrics.total.demotions),
        ])
    }

    fn threads_started(&self) -> Option<u64> {
        Some(self.0.handle().metrics().threads_started())
    }
}

impl Spawner for weft::runtime::Handle {
    type Task<T: Send + 'static> = Joined<weft::JoinHandle<T>>;

    fn spawn<F>(&self, future: F) -> Self::Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Joined(weft::runtime::Handle::spawn(self, future))
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        weft::task::yield_now()
    }
}

/// tokio's multi-thread runtime, and the threads it started (counted by
/// its `on_thread_start` hook when built by [`BenchRuntime::build`]).
pub struct Tokio(
    pub(crate) tokio::runtime::Runtime,
    pub(crate) Option<Arc<AtomicU64>>,
);

impl Tokio {
    /// A runtime with `workers` worker threads and the driver `enable`
    /// turns on (`Builder::enable_io` for the echo suite, `enable_time` for
    /// the timers suite), its threads not counted.
    pub fn with_driver(
        workers: usize,
        enable: fn(&mut tokio::runtime::Builder) -> &mut tokio::runtime::Builder,
    ) -> io::Result<Tokio> {
        enable(tokio::runtime::Builder::new_multi_thread().worker_threads(workers))
            .build()
            .map(|runtime| Tokio(runtime, None))
    }
}

impl BenchRuntime for Tokio {
    const KIND: RuntimeKind = RuntimeKind::Tokio;
    type Spawner = tokio::runtime::Handle;

    fn build(workers: usize, _tuning: Tuning) -> io::Result<Self> {
        // No `enable_all`: with the `time` feature on (for the timers
        // suite) it would start the timer driver, which these workloads
        // never had.
        let started = Arc::new(AtomicU64::new(0));
        let count = started.clone();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .on_thread_start(move || {
                count.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .map(|runtime| Tokio(runtime, Some(started)))
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawner(&self) -> Self::Spawner {
        self.0.handle().clone()
    }

    fn workers(&self) -> usize {
        self.0.metrics().num_workers()
    }

    fn threads_started(&self) -> Option<u64> {
        Some(self.1.as_ref()?.load(Ordering::Relaxed))
    }
}

impl Spawner for tokio::runtime::Handle {
    type Task<T: Send + 'static> = Joined<tokio::task::JoinHandle<T>>;

    fn spawn<F>(&self, future: F) -> Self::Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Joined(tokio::runtime::Handle::spawn(self, future))
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }
}

/// smol's executor run by a pool of threads; dropping it stops the threads.
pub struct Smol {
    executor: Arc<Executor<'static>>,
    shutdown: Option<async_channel::Sender<()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl BenchRuntime for Smol {
    const KIND: RuntimeKind = RuntimeKind::Smol;
    type Spawner = Arc<Executor<'static>>;

    fn build(workers: usize, _tuning: Tuning) -> io::Result<Self> {
        let (shutdown, signal) = async_channel::unbounded::<()>();
        // Built before the threads so that `Drop` stops those already
        // started if a later one fails to start.
        let mut smol = Smol {
            executor: Arc::new(Executor::new()),
            shutdown: Some(shutdown),
            threads: Vec::with_capacity(workers),
        };
        for index in 0..workers {
            let executor = smol.executor.clone();
            let signal = signal.clone();
            let thread = thread::Builder::new()
                .name(format!("smol-{index}"))
                .spawn(move || {
                    // `recv` fails once the sender is dropped: that is the
                    // shutdown signal, not an error.
                    let _ = futures_lite::future::block_on(executor.run(signal.recv()));
                })?;
            smol.threads.push(thread);
        }
        Ok(smol)
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        futures_lite::future::block_on(future)
    }

    fn spawner(&self) -> Self::Spawner {
        self.executor.clone()
    }

    fn workers(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for Smol {
    fn drop(&mut self) {
        drop(self.shutdown.take());
        for thread in self.threads.drain(..) {
            // A panicking executor thread was already reported by the panic
            // hook; shutting the rest down matters more here.
            let _ = thread.join();
        }
    }
}

impl Spawner for Arc<Executor<'static>> {
    type Task<T: Send + 'static> = async_executor::Task<T>;

    fn spawn<F>(&self, future: F) -> Self::Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Executor::spawn(self, future)
    }

    fn spawn_detached<F>(&self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        Executor::spawn(self, future).detach();
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        futures_lite::future::yield_now()
    }
}
