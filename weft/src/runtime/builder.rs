//! `Builder`: configure and start a runtime.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{Runtime, UnhandledPanic};

type Callback = Arc<dyn Fn() + Send + Sync + 'static>;
type NameFn = Arc<dyn Fn() -> String + Send + Sync + 'static>;

/// The largest `worker_threads` accepted. Far above any machine weft runs
/// on; a bigger number is a bug in the caller, not a configuration.
pub const MAX_WORKER_THREADS: usize = 4096;
/// The smallest `thread_stack_size` accepted (a worker needs room to poll).
pub const MIN_STACK_SIZE: usize = 64 * 1024;
/// The largest `thread_stack_size` accepted.
pub const MAX_STACK_SIZE: usize = 1 << 30;

/// Configures a runtime. Settings are checked by [`build`](Self::build),
/// which names the offending setting in its error.
///
/// # Examples
///
/// ```
/// use weft::runtime::Builder;
///
/// let rt = Builder::new_multi_thread()
///     .worker_threads(2)
///     .thread_name("my-worker")
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(rt.spawn(async { 1 + 1 })).unwrap(), 2);
///
/// let err = Builder::new_multi_thread().worker_threads(0).build().unwrap_err();
/// assert!(err.to_string().contains("worker_threads"));
/// ```
#[derive(Clone)]
pub struct Builder {
    pub(super) flavor: super::RuntimeFlavor,
    pub(super) worker_threads: Option<usize>,
    pub(super) thread_name: NameFn,
    pub(super) thread_stack_size: Option<usize>,
    pub(super) name: Option<String>,
    pub(super) on_thread_start: Option<Callback>,
    pub(super) on_thread_stop: Option<Callback>,
    pub(super) on_thread_park: Option<Callback>,
    pub(super) on_thread_unpark: Option<Callback>,
    pub(super) inject_batch_cap: usize,
    pub(super) lifo_slot: bool,
    pub(super) global_check_target: Duration,
    pub(super) global_queue_interval: Option<u32>,
    pub(super) poll_time_sample_every: u32,
    pub(super) max_blocking_threads: usize,
    pub(super) thread_keep_alive: Duration,
    pub(super) stall_monitor: bool,
    pub(super) stall_threshold: Duration,
    pub(super) slow_poll_threshold: Duration,
    pub(super) demote_slow_tasks: bool,
    pub(super) batch_share: f64,
    pub(super) max_threads: Option<usize>,
    pub(super) io_shards: Option<usize>,
    pub(super) spare_idle_timeout: Duration,
    pub(super) on_stall: Option<StallHook>,
    pub(super) time_slices: bool,
    pub(super) fine_timer_slack: bool,
    pub(super) unhandled_panic: UnhandledPanic,
    pub(super) tokio_compat: bool,
    /// `drivers_opt_in`, and the `enable_*` calls it then requires.
    pub(super) drivers_opt_in: bool,
    pub(super) io_enabled: bool,
    pub(super) time_enabled: bool,
}

use crate::runtime::scheduler::monitor::StallHook;

/// Implemented by nothing: the bound of `Builder::tokio_compat` without the
/// `tokio-compat` feature, whose message is the compile error.
#[cfg(not(feature = "tokio-compat"))]
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`Builder::tokio_compat` needs weft's `tokio-compat` feature",
    label = "needs weft's `tokio-compat` feature",
    note = "add `features = [\"tokio-compat\"]` to the `weft` line in Cargo.toml"
)]
pub trait TokioCompatFeatureIsOff {}

/// Spare slots beyond twice the workers in the default of
/// [`Builder::max_threads`].
const DEFAULT_SPARE_HEADROOM: usize = 8;

/// The default of [`Builder::max_blocking_threads`] (tokio's).
pub const DEFAULT_MAX_BLOCKING_THREADS: usize = 512;

impl Builder {
    /// A builder for the current-thread runtime: every task runs on the
    /// thread that calls [`Runtime::block_on`], and only while one does
    /// (tokio's `new_current_thread`).
    ///
    /// The settings of the multi-thread scheduler are accepted and ignored
    /// (`worker_threads`, `max_threads`, `io_shards`, the lanes' and the
    /// stall monitor's, `inject_batch_cap`, `lifo_slot`, the global-check
    /// settings), as tokio ignores `worker_threads` here. The others apply:
    /// the blocking pool's, the thread hooks (`on_thread_start` and
    /// `on_thread_stop` run on the blocking pool's threads, the park hooks
    /// on the driving thread), `unhandled_panic`, `tokio_compat`.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let here = std::thread::current().id();
    /// let ran_on = rt.block_on(async {
    ///     weft::spawn(async { std::thread::current().id() }).await.unwrap()
    /// });
    /// assert_eq!(ran_on, here);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new_current_thread() -> Builder {
        Builder {
            flavor: super::RuntimeFlavor::CurrentThread,
            ..Builder::new_multi_thread()
        }
    }

    /// A builder for the multi-thread, work-stealing runtime.
    pub fn new_multi_thread() -> Builder {
        Builder {
            flavor: super::RuntimeFlavor::MultiThread,
            worker_threads: None,
            thread_name: Arc::new(|| "weft-worker".to_owned()),
            thread_stack_size: None,
            name: None,
            on_thread_start: None,
            on_thread_stop: None,
            on_thread_park: None,
            on_thread_unpark: None,
            inject_batch_cap: 32,
            lifo_slot: true,
            global_check_target: Duration::from_micros(200),
            global_queue_interval: None,
            poll_time_sample_every: 16,
            max_blocking_threads: DEFAULT_MAX_BLOCKING_THREADS,
            thread_keep_alive: Duration::from_secs(10),
            stall_monitor: true,
            stall_threshold: Duration::from_millis(1),
            slow_poll_threshold: Duration::from_millis(10),
            demote_slow_tasks: true,
            batch_share: 0.25,
            max_threads: None,
            io_shards: None,
            spare_idle_timeout: Duration::from_secs(10),
            on_stall: None,
            time_slices: true,
            fine_timer_slack: true,
            unhandled_panic: UnhandledPanic::Ignore,
            tokio_compat: false,
            drivers_opt_in: false,
            io_enabled: false,
            time_enabled: false,
        }
    }

    /// Accepted for tokio parity and does nothing: weft's timers and I/O
    /// driver are always on (a runtime that uses neither pays only their
    /// set-up, an epoll instance per I/O shard, and its idle workers sleep
    /// on their condvars until a socket is registered), so
    /// `Builder::new_multi_thread().enable_all().build()`, written for
    /// tokio, builds the same runtime here.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .enable_all()
    ///     .build()?;
    /// rt.block_on(async { weft::time::sleep(std::time::Duration::from_millis(1)).await });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn enable_all(&mut self) -> &mut Self {
        self.enable_io().enable_time()
    }

    /// Accepted for tokio parity: timers are always on (see
    /// [`enable_all`](Builder::enable_all)), unless
    /// [`drivers_opt_in`](Builder::drivers_opt_in) makes this call needed.
    pub fn enable_time(&mut self) -> &mut Self {
        self.time_enabled = true;
        self
    }

    /// Accepted for tokio parity: the I/O driver is always on (see
    /// [`enable_all`](Builder::enable_all)), unless
    /// [`drivers_opt_in`](Builder::drivers_opt_in) makes this call needed.
    pub fn enable_io(&mut self) -> &mut Self {
        self.io_enabled = true;
        self
    }

    /// With `true`, the I/O driver and the timers are there only if
    /// [`enable_io`](Builder::enable_io) and
    /// [`enable_time`](Builder::enable_time) (or
    /// [`enable_all`](Builder::enable_all)) were called, as on tokio: a
    /// socket, an `AsyncFd`, a signal listener or a timer made on a
    /// runtime without them panics, at the caller's line, saying which
    /// call is missing. The `tokio` crate on weft (`weft-tokio`) turns it
    /// on, so that a tokio program that forgot `enable_time` fails as it
    /// does on tokio. Default `false`: both are always there.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_current_thread()
    ///     .drivers_opt_in(true)
    ///     .enable_time()
    ///     .build()?;
    /// rt.block_on(async { weft::time::sleep(std::time::Duration::from_millis(1)).await });
    /// let no_io = std::panic::catch_unwind(|| {
    ///     rt.block_on(async { weft::net::UdpSocket::bind("127.0.0.1:0").await })
    /// });
    /// assert!(no_io.is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn drivers_opt_in(&mut self, opt_in: bool) -> &mut Self {
        self.drivers_opt_in = opt_in;
        self
    }

    /// Starts a tokio runtime beside this one, so that crates written for
    /// tokio's reactor and timers work inside weft tasks unchanged:
    /// `tokio::time`, `tokio::net`, `tokio::spawn`, reqwest, tonic, sqlx,
    /// redis, tower-http's timeouts (feature `tokio-compat`).
    ///
    /// The tokio runtime is a `current_thread` one with I/O and time
    /// enabled, driven by a thread of its own (`weft-tokio`); every weft
    /// thread that runs tasks (the workers, the spare threads, the blocking
    /// pool's threads) enters its handle for its whole life, and a
    /// `block_on` caller for the call. tokio's sockets and timers are then
    /// driven on that one thread, which wakes the weft task; a task started
    /// with `tokio::spawn` runs there too. It is shut down with this
    /// runtime, after the workers: its tasks are dropped and its own
    /// blocking threads get at most a second.
    ///
    /// Not needed for `tokio::sync`, `tokio::select!`, `tokio::task_local!`,
    /// tokio-util codecs or TLS crates over weft's streams (see the
    /// `tokio-io` feature).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .tokio_compat()
    ///     .build()?;
    /// rt.block_on(async {
    ///     let task = weft::spawn(async {
    ///         // tokio's timer, inside a weft task.
    ///         tokio::time::sleep(Duration::from_millis(1)).await;
    ///         tokio::spawn(async { 7 }).await.unwrap()
    ///     });
    ///     assert_eq!(task.await.unwrap(), 7);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// The same from the macros: `#[weft::main(tokio_compat = true)]`,
    /// `#[weft::test(tokio_compat = true)]`.
    #[cfg(feature = "tokio-compat")]
    pub fn tokio_compat(&mut self) -> &mut Self {
        self.tokio_compat = true;
        self
    }

    /// Without the `tokio-compat` feature: a compile error naming it (the
    /// bound below never holds; it is checked where the method is called,
    /// and the trait's message is the error).
    #[cfg(not(feature = "tokio-compat"))]
    #[doc(hidden)]
    pub fn tokio_compat(&mut self) -> &mut Self
    where
        for<'a> &'a (): TokioCompatFeatureIsOff,
    {
        self
    }

    /// Number of worker threads. Default: the machine's available
    /// parallelism. Must be in `1..=4096`.
    pub fn worker_threads(&mut self, n: usize) -> &mut Self {
        self.worker_threads = Some(n);
        self
    }

    /// The runtime's name, which [`Handle::name`](super::Handle::name)
    /// returns (tokio's `Builder::name`).
    ///
    /// # Panics
    ///
    /// If `name` is empty or only whitespace, as tokio does.
    #[track_caller]
    pub fn name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        assert!(!name.trim().is_empty(), "runtime name shouldn't be empty");
        self.name = Some(name);
        self
    }

    /// Name given to every worker thread. Default: `weft-worker`.
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        self.thread_name = Arc::new(move || name.clone());
        self
    }

    /// A function producing each worker thread's name.
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.thread_name = Arc::new(f);
        self
    }

    /// Stack size of each worker thread, in bytes. Must be between 64 KiB and
    /// 1 GiB. Default: std's (2 MiB).
    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.thread_stack_size = Some(bytes);
        self
    }

    /// Runs `f` on each worker thread when it starts, before it polls any
    /// task. If `f` panics, [`build`](Self::build) returns an error.
    pub fn on_thread_start<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_start = Some(Arc::new(f));
        self
    }

    /// Runs `f` on each worker thread just before it exits.
    pub fn on_thread_stop<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_stop = Some(Arc::new(f));
        self
    }

    /// Runs `f` on a worker thread each time it is about to sleep for want
    /// of work (tokio's `on_thread_park`). A spare thread of the stall
    /// monitor does not sleep this way and does not call it.
    pub fn on_thread_park<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_park = Some(Arc::new(f));
        self
    }

    /// Runs `f` on a worker thread each time it wakes from the sleep
    /// [`on_thread_park`](Self::on_thread_park) announced (tokio's
    /// `on_thread_unpark`).
    pub fn on_thread_unpark<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_unpark = Some(Arc::new(f));
        self
    }

    /// Largest batch a worker takes from the global inject queue while
    /// local work is waiting (`min(len / workers + 1, cap, free local
    /// slots)`, at the periodic check): it bounds how many outside tasks can
    /// run ahead of older local work per check. A worker with nothing of its
    /// own to run (or whose task just yielded) overtakes nobody and takes up
    /// to half its local queue (128), or `cap` if that is larger. Default
    /// 32; must be at least 1.
    pub fn inject_batch_cap(&mut self, cap: usize) -> &mut Self {
        self.inject_batch_cap = cap;
        self
    }

    /// Whether a task woken by a running task runs next on the same worker
    /// (the LIFO slot). Default: on.
    pub fn lifo_slot(&mut self, enabled: bool) -> &mut Self {
        self.lifo_slot = enabled;
        self
    }

    /// Target time between two periodic checks of the global queue; the
    /// check interval in ticks adapts to the measured poll time. Default
    /// 200 µs; must be between 1 µs and 1 s.
    pub fn global_check_target(&mut self, target: Duration) -> &mut Self {
        self.global_check_target = target;
        self
    }

    /// Fixes the periodic check at every `ticks` scheduling decisions
    /// (tokio's `global_queue_interval`), in place of the interval that
    /// adapts to [`global_check_target`](Self::global_check_target). A
    /// worker still takes outside work whenever its own queue runs dry.
    ///
    /// # Panics
    ///
    /// If `ticks` is 0 (tokio's message).
    #[track_caller]
    pub fn global_queue_interval(&mut self, ticks: u32) -> &mut Self {
        assert!(ticks > 0, "global_queue_interval must be greater than 0");
        self.global_queue_interval = Some(ticks);
        self
    }

    /// Most threads the blocking pool runs at once (see
    /// [`crate::task::spawn_blocking`]); more `spawn_blocking` closures wait
    /// in its queue. Default 512; must be at least 1.
    pub fn max_blocking_threads(&mut self, n: usize) -> &mut Self {
        self.max_blocking_threads = n;
        self
    }

    /// How long an idle blocking-pool thread waits for work before it
    /// exits. Default 10 s; must be between 1 ms and 1 hour. New work goes
    /// to the thread that became idle last, so under a steady load the
    /// threads a burst started stay unused and exit after this long.
    pub fn thread_keep_alive(&mut self, keep_alive: Duration) -> &mut Self {
        self.thread_keep_alive = keep_alive;
        self
    }

    /// Times one task poll in every `n` for the poll-time histogram of
    /// [`Handle::metrics`](super::Handle::metrics). Timing costs two clock
    /// reads; `1` times every poll. Default 16; must be at least 1.
    pub fn poll_time_sample_every(&mut self, n: u32) -> &mut Self {
        self.poll_time_sample_every = n;
        self
    }

    /// Whether the stall monitor runs (`runtime/scheduler/monitor.rs`): one thread
    /// that notices a worker stuck inside one poll while work waits and
    /// lets a spare thread run that work. Default: on. Off, a long poll
    /// holds up everything queued behind it, as in tokio.
    pub fn stall_monitor(&mut self, enabled: bool) -> &mut Self {
        self.stall_monitor = enabled;
        self
    }

    /// How long a worker may stay inside one poll, while runnable work
    /// waits and no worker is free, before the monitor brings in a spare
    /// thread for that work. Default 1 ms; must be between 100 µs and 10 s.
    pub fn stall_threshold(&mut self, threshold: Duration) -> &mut Self {
        self.stall_threshold = threshold;
        self
    }

    /// A poll longer than this makes its task slow: a `Default`-lane task
    /// is then demoted to the `Batch` lane (see
    /// [`task::Lane`](crate::runtime::task::Lane)). Default 10 ms; must be between
    /// 100 µs and 10 s.
    pub fn slow_poll_threshold(&mut self, threshold: Duration) -> &mut Self {
        self.slow_poll_threshold = threshold;
        self
    }

    /// Whether `Default`-lane tasks with a slow poll move to the `Batch`
    /// lane, and whether a thread stalled in a poll while work waits behind
    /// it is lowered in priority (nice 10, for good: it hands its worker to
    /// a thread of normal priority after that poll) and, while the work it
    /// holds up makes no progress, asked to step aside for 30 µs (a
    /// `SIGURG` whose handler sleeps; a non-restartable system call inside
    /// that poll may then return `EINTR`, and a `SIGURG` listener of the
    /// program sees these signals too). Default: on.
    pub fn demote_slow_tasks(&mut self, enabled: bool) -> &mut Self {
        self.demote_slow_tasks = enabled;
        self
    }

    /// The fraction of a worker's time the `Batch` lane keeps while other
    /// lanes have work: batch tasks never starve, however much latency
    /// work arrives. Default 0.25; must be in `(0, 1)`.
    pub fn batch_share(&mut self, share: f64) -> &mut Self {
        self.batch_share = share;
        self
    }

    /// Most threads that run tasks at once: the workers plus the spare
    /// threads the stall monitor brings in. Default: `2 × worker_threads +
    /// 8`, so that up to `worker_threads + 8` polls can be stuck at once
    /// with threads left for the work behind them (measured in the mixed
    /// lane: docs/experiments.md#demotion). Must be at least
    /// `worker_threads`. (The blocking pool is bounded
    /// separately by [`max_blocking_threads`](Self::max_blocking_threads);
    /// the stall monitor's own thread and the one that starts spare threads
    /// for it run no tasks and are not counted.)
    pub fn max_threads(&mut self, n: usize) -> &mut Self {
        self.max_threads = Some(n);
        self
    }

    /// Whether the runtime's threads ask the kernel for time slices (Linux
    /// 6.12 and later; `sched_setattr`, no privilege needed): every thread
    /// that runs tasks or the monitor asks for the shortest slice, 0.1 ms,
    /// so a thread woken on a busy core runs soon; and the monitor gives a
    /// thread seen inside one poll for a sample period a 3 ms slice until
    /// that poll returns, so threads woken behind it run first. The
    /// thread's policy and nice value are kept; a thread moved to another
    /// policy than `SCHED_OTHER`/`SCHED_BATCH` (in `on_thread_start`, say)
    /// is left alone. Default: on. Off, the kernel's default slices apply
    /// (short requests behind long polls wait longer: the mixed lane).
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .time_slices(false)
    ///     .fine_timer_slack(false)
    ///     .build()
    ///     .unwrap();
    /// # drop(rt);
    /// ```
    pub fn time_slices(&mut self, enabled: bool) -> &mut Self {
        self.time_slices = enabled;
        self
    }

    /// Whether the runtime's threads ask for a timer slack of 1 µs
    /// (`prctl(PR_SET_TIMERSLACK)`, Linux) instead of the kernel's 50 µs,
    /// so a timed wait (the worker keeping time) ends on time. Default:
    /// on. Off, timers may fire up to the slack late.
    pub fn fine_timer_slack(&mut self, enabled: bool) -> &mut Self {
        self.fine_timer_slack = enabled;
        self
    }

    /// How long an idle spare thread waits to be needed again before it
    /// exits. Default 10 s; must be between 1 ms and 1 hour. A stall's
    /// work wakes the spare that went idle last, so under a steady need
    /// the spares a burst of stalls started stay unused and exit after
    /// this long.
    pub fn spare_idle_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.spare_idle_timeout = timeout;
        self
    }

    /// Calls `f` from the monitor thread each time it finds a worker stuck
    /// in one poll for longer than the stall threshold, with the worker,
    /// the task (name and spawn location) and how long it has been inside
    /// that poll so far. Called once per stuck poll. Keep it short: the
    /// monitor does nothing else meanwhile.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .worker_threads(1)
    ///     .on_stall(|info| eprintln!("{info}"))
    ///     .build()
    ///     .unwrap();
    /// # drop(rt);
    /// ```
    pub fn on_stall<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn(&crate::runtime::StallInfo) + Send + Sync + 'static,
    {
        self.on_stall = Some(Arc::new(f));
        self
    }

    /// What a panic in a spawned task does to the runtime (tokio's
    /// setting). Default: [`UnhandledPanic::Ignore`], the panic goes to
    /// the task's `JoinHandle` and nothing else changes. With
    /// [`UnhandledPanic::ShutdownRuntime`] the first panic shuts the
    /// runtime down at once and every `block_on` on it panics, naming the
    /// policy and the task's panic message, whether or not the task's
    /// `JoinHandle` is held: for services that would rather stop than run
    /// on without a task that failed.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use weft::runtime::{Builder, UnhandledPanic};
    ///
    /// let rt = Builder::new_multi_thread()
    ///     .unhandled_panic(UnhandledPanic::ShutdownRuntime)
    ///     .build()
    ///     .unwrap();
    /// let start = Instant::now();
    /// let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    ///     rt.block_on(async {
    ///         drop(weft::spawn(async { panic!("lost the database") }));
    ///         weft::time::sleep(Duration::from_secs(60)).await;
    ///     })
    /// }));
    /// let message = ended.unwrap_err().downcast::<String>().unwrap();
    /// assert!(message.contains("lost the database"), "{message}");
    /// assert!(start.elapsed() < Duration::from_secs(60));
    /// ```
    pub fn unhandled_panic(&mut self, behavior: UnhandledPanic) -> &mut Self {
        self.unhandled_panic = behavior;
        self
    }

    /// Epoll instances of the reactor (`runtime/io/driver.rs`, "At 64 cores"):
    /// sources are spread over them so registrations and waits of many
    /// workers do not queue on one instance's kernel lock. Default: one per
    /// 8 workers, rounded up. Must be at least 1 and at most
    /// `worker_threads`.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .worker_threads(16)
    ///     .io_shards(4)
    ///     .build()
    ///     .unwrap();
    /// # drop(rt);
    /// ```
    pub fn io_shards(&mut self, n: usize) -> &mut Self {
        self.io_shards = Some(n);
        self
    }

    pub(super) fn resolved_io_shards(&self, workers: usize) -> usize {
        self.io_shards
            .unwrap_or_else(|| workers.div_ceil(crate::runtime::io::WORKERS_PER_SHARD))
    }

    pub(super) fn resolved_max_threads(&self) -> usize {
        self.max_threads.unwrap_or_else(|| {
            self.resolved_worker_threads()
                .saturating_mul(2)
                .saturating_add(DEFAULT_SPARE_HEADROOM)
        })
    }

    pub(super) fn resolved_worker_threads(&self) -> usize {
        self.worker_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn validate(&self) -> io::Result<()> {
        if self.flavor == super::RuntimeFlavor::CurrentThread {
            // The worker settings are ignored on this flavor (`new_current_thread`).
            return self.validate_pool();
        }
        let workers = self.resolved_worker_threads();
        self.validate_threads(workers)?;
        self.validate_pool()?;
        self.validate_scheduling()
    }

    /// The settings that say how many threads of each kind, and how big.
    fn validate_threads(&self, workers: usize) -> io::Result<()> {
        if workers == 0 {
            return Err(invalid("worker_threads", "must be at least 1, got 0"));
        }
        if workers > MAX_WORKER_THREADS {
            return Err(invalid(
                "worker_threads",
                &format!("must be at most {MAX_WORKER_THREADS}, got {workers}"),
            ));
        }
        let shards = self.resolved_io_shards(workers);
        if shards == 0 || shards > workers {
            return Err(invalid(
                "io_shards",
                &format!("must be between 1 and worker_threads ({workers}), got {shards}"),
            ));
        }
        let max_threads = self.resolved_max_threads();
        if max_threads < workers {
            return Err(invalid(
                "max_threads",
                &format!("must be at least worker_threads ({workers}), got {max_threads}"),
            ));
        }
        within(
            "spare_idle_timeout",
            self.spare_idle_timeout,
            Duration::from_millis(1),
            Duration::from_secs(3600),
        )
    }

    /// The settings of every flavor's threads: the stack size and the
    /// blocking pool.
    fn validate_pool(&self) -> io::Result<()> {
        if let Some(size) = self.thread_stack_size {
            if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&size) {
                return Err(invalid(
                    "thread_stack_size",
                    &format!(
                        "must be between {MIN_STACK_SIZE} and {MAX_STACK_SIZE} bytes, got {size}"
                    ),
                ));
            }
        }
        if self.max_blocking_threads == 0 {
            return Err(invalid("max_blocking_threads", "must be at least 1, got 0"));
        }
        within(
            "thread_keep_alive",
            self.thread_keep_alive,
            Duration::from_millis(1),
            Duration::from_secs(3600),
        )
    }

    /// The settings of the scheduler's policies.
    fn validate_scheduling(&self) -> io::Result<()> {
        if self.inject_batch_cap == 0 {
            return Err(invalid("inject_batch_cap", "must be at least 1, got 0"));
        }
        if self.poll_time_sample_every == 0 {
            return Err(invalid(
                "poll_time_sample_every",
                "must be at least 1, got 0",
            ));
        }
        let (low, high) = (Duration::from_micros(100), Duration::from_secs(10));
        within("stall_threshold", self.stall_threshold, low, high)?;
        within("slow_poll_threshold", self.slow_poll_threshold, low, high)?;
        let share = self.batch_share;
        if !(share > 0.0 && share < 1.0) {
            return Err(invalid(
                "batch_share",
                &format!("must be greater than 0 and less than 1, got {share}"),
            ));
        }
        within(
            "global_check_target",
            self.global_check_target,
            Duration::from_micros(1),
            Duration::from_secs(1),
        )
    }

    /// Validates the settings and starts the worker threads.
    ///
    /// # Errors
    ///
    /// `InvalidInput` naming the setting when one is out of range; the OS
    /// error if a thread cannot be spawned; `Other` if `on_thread_start`
    /// panicked.
    pub fn build(&mut self) -> io::Result<Runtime> {
        self.validate()?;
        Runtime::start(self)
    }

    /// Builds a [`LocalRuntime`](super::LocalRuntime) on this thread: a
    /// current-thread runtime on which `task::spawn_local` works without a
    /// `LocalSet` (tokio's `Builder::build_local`).
    ///
    /// # Panics
    ///
    /// On a multi-thread builder (tokio's message): a local runtime runs
    /// on one thread.
    ///
    /// ```
    /// use weft::runtime::{Builder, LocalOptions};
    ///
    /// let rt = Builder::new_current_thread().enable_all().build_local(LocalOptions::default())?;
    /// let rc = std::rc::Rc::new(1); // not `Send`
    /// assert_eq!(rt.block_on(rt.spawn_local(async move { *rc })).unwrap(), 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[cfg(not(loom))]
    pub fn build_local(&mut self, options: super::LocalOptions) -> io::Result<super::LocalRuntime> {
        let _ = options;
        if self.flavor != super::RuntimeFlavor::CurrentThread {
            panic!("multi_thread is not supported for LocalRuntime");
        }
        Ok(super::LocalRuntime::from_runtime(self.build()?))
    }
}

fn invalid(setting: &str, problem: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("invalid weft runtime setting `{setting}`: {problem}"),
    )
}

/// `InvalidInput` naming `setting` unless `low <= value <= high`.
fn within(setting: &str, value: Duration, low: Duration, high: Duration) -> io::Result<()> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(invalid(
            setting,
            &format!(
                "must be between {} and {}, got {value:?}",
                show(low),
                show(high)
            ),
        ))
    }
}

/// A bound as the error messages say it: `100 µs`, `1 ms`, `1 hour`.
fn show(bound: Duration) -> String {
    match bound.as_nanos() {
        n if n >= 3_600_000_000_000 && n % 3_600_000_000_000 == 0 => {
            let hours = n / 3_600_000_000_000;
            if hours == 1 {
                "1 hour".to_owned()
            } else {
                format!("{hours} hours")
            }
        }
        n if n >= 1_000_000_000 && n % 1_000_000_000 == 0 => format!("{} s", n / 1_000_000_000),
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n => format!("{} µs", n / 1_000),
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("flavor", &self.flavor)
            .field("worker_threads", &self.worker_threads)
            .field("thread_name", &(self.thread_name)())
            .field("thread_stack_size", &self.thread_stack_size)
            .field("inject_batch_cap", &self.inject_batch_cap)
            .field("lifo_slot", &self.lifo_slot)
            .field("global_check_target", &self.global_check_target)
            .field("global_queue_interval", &self.global_queue_interval)
            .field("poll_time_sample_every", &self.poll_time_sample_every)
            .field("max_blocking_threads", &self.max_blocking_threads)
            .field("thread_keep_alive", &self.thread_keep_alive)
            .field("stall_monitor", &self.stall_monitor)
            .field("stall_threshold", &self.stall_threshold)
            .field("slow_poll_threshold", &self.slow_poll_threshold)
            .field("demote_slow_tasks", &self.demote_slow_tasks)
            .field("batch_share", &self.batch_share)
            .field("max_threads", &self.max_threads)
            .field("io_shards", &self.io_shards)
            .field("time_slices", &self.time_slices)
            .field("fine_timer_slack", &self.fine_timer_slack)
            .field("spare_idle_timeout", &self.spare_idle_timeout)
            .field("unhandled_panic", &self.unhandled_panic)
            .field("tokio_compat", &self.tokio_compat)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The largest worker count accepted, checked without starting 4,096
    /// threads (tests/bad_input.rs builds runtimes at every other bound).
    #[test]
    fn the_documented_worker_maximum_is_accepted() {
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(4096);
        builder
            .validate()
            .expect("4096 workers are documented as accepted");
        builder.worker_threads(4097);
        let error = builder.validate().unwrap_err();
        assert!(error.to_string().contains("`worker_threads`"), "{error}");
    }
}
