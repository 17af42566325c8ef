//! `tokio::runtime` on weft: [`Builder`] maps tokio's settings onto
//! `weft::runtime::Builder`; [`Runtime`], [`Handle`] and the rest are
//! weft's own types, which carry tokio's methods under tokio's names.

use std::io;
use std::time::Duration;

pub use weft::runtime::{
    is_rt_shutdown_err, worker_index, EnterGuard, Handle, Id, LocalOptions, LocalRuntime, Runtime,
    RuntimeFlavor, TryCurrentError, UnhandledPanic,
};

/// Whether the calling thread is inside a weft runtime: what a program
/// built on this crate asserts at start to know the `[patch]` took effect
/// (real tokio has no such function, so the check does not compile there;
/// `scripts/weft-tokio.sh check` says the same before the build).
///
/// ```
/// #[tokio::main]
/// async fn main() {
///     assert!(tokio::runtime::is_weft(), "tokio is not weft here");
/// }
/// ```
pub fn is_weft() -> bool {
    weft::runtime::Handle::try_current().is_ok()
}

/// The runtime's metrics (weft's snapshot, with tokio's method names).
pub type RuntimeMetrics = weft::metrics::RuntimeMetrics;

/// Builds a [`Runtime`] with tokio's settings.
///
/// Settings weft has no counterpart for (`event_interval`,
/// `max_io_events_per_tick`) are accepted and change nothing, as tokio
/// accepts settings a flavor does not use. weft's own settings (the stall
/// monitor, lanes, time slices) are on `weft::runtime::Builder`.
pub struct Builder {
    inner: weft::runtime::Builder,
    flavor: RuntimeFlavor,
    start_paused: bool,
}

impl Builder {
    /// A runtime that runs every task on the thread inside
    /// [`Runtime::block_on`].
    pub fn new_current_thread() -> Builder {
        Builder {
            inner: with_tokio_drivers(weft::runtime::Builder::new_current_thread()),
            flavor: RuntimeFlavor::CurrentThread,
            start_paused: false,
        }
    }

    /// A runtime with a worker per core (weft's multi-thread scheduler).
    pub fn new_multi_thread() -> Builder {
        Builder {
            inner: with_tokio_drivers(weft::runtime::Builder::new_multi_thread()),
            flavor: RuntimeFlavor::MultiThread,
            start_paused: false,
        }
    }

    /// Turns on the I/O and time drivers.
    pub fn enable_all(&mut self) -> &mut Self {
        self.inner.enable_all();
        self
    }

    /// Turns on the I/O driver.
    pub fn enable_io(&mut self) -> &mut Self {
        self.inner.enable_io();
        self
    }

    /// Turns on the time driver.
    pub fn enable_time(&mut self) -> &mut Self {
        self.inner.enable_time();
        self
    }

    /// The number of worker threads (multi-thread runtime; ignored by the
    /// current-thread one, as tokio ignores it).
    ///
    /// # Panics
    ///
    /// If `val` is 0, as tokio does.
    #[track_caller]
    pub fn worker_threads(&mut self, val: usize) -> &mut Self {
        assert!(val > 0, "Worker threads cannot be set to 0");
        if self.flavor == RuntimeFlavor::MultiThread {
            self.inner.worker_threads(val);
        }
        self
    }

    /// The most threads the blocking pool starts.
    ///
    /// # Panics
    ///
    /// If `val` is 0, as tokio does.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, val: usize) -> &mut Self {
        assert!(val > 0, "Max blocking threads cannot be set to 0");
        self.inner.max_blocking_threads(val);
        self
    }

    /// The runtime's name ([`Handle::name`]).
    ///
    /// # Panics
    ///
    /// If `val` is empty, as tokio does.
    #[track_caller]
    pub fn name(&mut self, val: impl Into<String>) -> &mut Self {
        self.inner.name(val);
        self
    }

    /// Accepted for tokio's sake, as `max_io_events_per_tick`.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0, as tokio does.
    #[track_caller]
    pub fn max_io_events_per_busy_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(capacity > 0, "max_io_events_per_busy_tick must be non-zero");
        self
    }

    /// The name of the runtime's threads.
    pub fn thread_name(&mut self, val: impl Into<String>) -> &mut Self {
        self.inner.thread_name(val);
        self
    }

    /// A function naming each thread the runtime starts.
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.inner.thread_name_fn(f);
        self
    }

    /// The stack size of the runtime's threads.
    pub fn thread_stack_size(&mut self, val: usize) -> &mut Self {
        self.inner.thread_stack_size(val);
        self
    }

    /// Runs `f` on each thread the runtime starts, before anything else.
    pub fn on_thread_start<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.inner.on_thread_start(f);
        self
    }

    /// Runs `f` on each of the runtime's threads before it ends.
    pub fn on_thread_stop<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.inner.on_thread_stop(f);
        self
    }

    /// Runs `f` before a worker thread parks.
    pub fn on_thread_park<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.inner.on_thread_park(f);
        self
    }

    /// Runs `f` after a worker thread wakes.
    pub fn on_thread_unpark<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.inner.on_thread_unpark(f);
        self
    }

    /// How long an idle blocking-pool thread lives.
    pub fn thread_keep_alive(&mut self, duration: Duration) -> &mut Self {
        self.inner.thread_keep_alive(duration);
        self
    }

    /// Ticks between two looks at the shared queue.
    ///
    /// # Panics
    ///
    /// If `val` is 0, as tokio does.
    #[track_caller]
    pub fn global_queue_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "global_queue_interval must be greater than 0");
        self.inner.global_queue_interval(val);
        self
    }

    /// Accepted for tokio's sake: weft's workers poll the reactor when
    /// they run out of work and at their periodic check, not every N ticks.
    ///
    /// # Panics
    ///
    /// If `val` is 0, as tokio does.
    #[track_caller]
    pub fn event_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "event_interval must be greater than 0");
        self
    }

    /// Accepted for tokio's sake: weft's reactor takes what the poller
    /// returns in one call.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0, as tokio does.
    #[track_caller]
    pub fn max_io_events_per_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(capacity > 0, "max_io_events_per_tick must be non-zero");
        self
    }

    /// Starts the runtime with its clock paused (the `test-util` feature).
    ///
    /// # Panics
    ///
    /// At [`Builder::build`], on a multi-thread runtime, as tokio does.
    pub fn start_paused(&mut self, start_paused: bool) -> &mut Self {
        self.start_paused = start_paused;
        self
    }

    /// What to do when a spawned task panics.
    pub fn unhandled_panic(&mut self, behavior: UnhandledPanic) -> &mut Self {
        self.inner.unhandled_panic(behavior);
        self
    }

    /// Builds a [`LocalRuntime`] on this thread (a current-thread runtime
    /// on which `task::spawn_local` works without a `LocalSet`).
    ///
    /// # Panics
    ///
    /// On a multi-thread builder, as tokio does.
    pub fn build_local(&mut self, options: LocalOptions) -> io::Result<LocalRuntime> {
        let runtime = self.inner.build_local(options)?;
        if self.start_paused {
            let _entered = runtime.enter();
            pause_current_clock();
        }
        Ok(runtime)
    }

    /// Builds the runtime.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let runtime = self.inner.build()?;
        if self.start_paused {
            if self.flavor == RuntimeFlavor::MultiThread {
                panic!("`start_paused` is only supported on a current_thread runtime");
            }
            pause_clock(&runtime);
        }
        Ok(runtime)
    }
}

/// tokio's rule for its builders: the I/O driver and the timers are there
/// only if `enable_io` / `enable_time` (or `enable_all`) were called, and
/// using them otherwise panics with tokio's message. `Runtime::new` has
/// both.
fn with_tokio_drivers(mut builder: weft::runtime::Builder) -> weft::runtime::Builder {
    builder.drivers_opt_in(true);
    builder
}

fn pause_clock(runtime: &Runtime) {
    let _entered = runtime.enter();
    pause_current_clock();
}

/// Pauses the clock of the runtime in context.
#[cfg(feature = "test-util")]
fn pause_current_clock() {
    weft::time::pause();
}

#[cfg(not(feature = "test-util"))]
fn pause_current_clock() {
    panic!("`start_paused` needs tokio's `test-util` feature");
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("flavor", &self.flavor)
            .field("start_paused", &self.start_paused)
            .finish_non_exhaustive()
    }
}
