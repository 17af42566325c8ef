//! `Handle`: a cloneable reference to a running runtime.

use std::fmt;
use std::future::Future;

use crate::metrics::RuntimeMetrics;
use crate::runtime::context::{self, Driving};
use crate::runtime::scheduler::Shared;
use crate::runtime::task::{self, JoinHandle};
use crate::util::loom::sync::Arc;

/// A handle to a runtime: spawn onto it and block on futures from any
/// thread. Cheap to clone; it does not keep the worker threads running
/// (dropping the [`Runtime`](super::Runtime) shuts them down).
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

/// Returned by [`Handle::try_current`] outside a runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryCurrentError(());

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let explanation = "no weft runtime is running on this thread: call this from a task \
                           spawned on a runtime, inside `Runtime::block_on`, or while a \
                           `Runtime::enter` guard is alive";
        if cfg!(feature = "tokio-messages") {
            write!(
                f,
                "{} ({explanation})",
                super::context::TOKIO_CONTEXT_MISSING
            )
        } else {
            f.write_str(explanation)
        }
    }
}

impl std::error::Error for TryCurrentError {}

impl Handle {
    /// The handle of the runtime this thread is running in.
    ///
    /// # Panics
    ///
    /// Outside a runtime context (see [`try_current`](Self::try_current)).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let handle = weft::runtime::Handle::current();
    ///     assert_eq!(handle.spawn(async { 3 }).await.unwrap(), 3);
    /// });
    /// ```
    #[track_caller]
    pub fn current() -> Handle {
        match Handle::try_current() {
            Ok(handle) => handle,
            Err(err) => panic!("`Handle::current()` failed: {err}"),
        }
    }

    /// The handle of the current runtime, or an error outside one.
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        context::current()
            .map(|shared| Handle { shared })
            .ok_or(TryCurrentError(()))
    }

    /// Spawns a task on this runtime. See [`crate::spawn`].
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let options = task::SpawnOptions::plain(std::panic::Location::caller());
        super::spawn_on(&self.shared, future, options)
    }

    /// Runs a blocking closure on this runtime's blocking pool. See
    /// [`crate::task::spawn_blocking`]; this works from any thread.
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        crate::runtime::blocking::spawn_blocking_on(&self.shared, f)
    }

    /// Runs `future` to completion on the current thread, with this runtime
    /// as the current context (so `weft::spawn` works inside), and its tokio
    /// runtime too if it was built with `tokio_compat`.
    ///
    /// On a current-thread runtime this thread also runs the runtime's
    /// tasks, timers and I/O while no other `block_on` does (tokio's
    /// semantics: another thread's `block_on` drives, and this one takes
    /// over when that one returns).
    ///
    /// # Panics
    ///
    /// When called on a thread already driving a runtime: a worker thread
    /// (from inside a task) or inside another `block_on`.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let _driving = context::enter_driving(Driving::BlockOn);
        let _current = context::set_current(self.shared.clone());
        let _tokio = self.shared.tokio.enter();
        #[cfg(not(loom))]
        if let Some(Some(scheduler)) = super::current_thread::CurrentThread::of(&self.shared) {
            return scheduler.block_on(future);
        }
        super::block_on::run(&self.shared, future)
    }

    /// Makes this runtime the current context until the guard is dropped,
    /// so that `weft::spawn` and `Handle::current` work on this thread (and
    /// `tokio::runtime::Handle::current`, with `tokio_compat`).
    pub fn enter(&self) -> EnterGuard<'_> {
        let guard = context::set_current(self.shared.clone());
        EnterGuard {
            _tokio: self.shared.tokio.enter(),
            _guard: guard,
            _handle: std::marker::PhantomData,
        }
    }

    /// The kind of scheduler this runtime runs (tokio's).
    ///
    /// ```
    /// use weft::runtime::{Builder, RuntimeFlavor};
    ///
    /// let rt = Builder::new_current_thread().build()?;
    /// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn runtime_flavor(&self) -> super::RuntimeFlavor {
        if self.shared.is_current_thread() {
            super::RuntimeFlavor::CurrentThread
        } else {
            super::RuntimeFlavor::MultiThread
        }
    }

    /// This runtime's identifier, unique among the runtimes of this
    /// process (tokio's `Handle::id`).
    pub fn id(&self) -> super::Id {
        self.shared.id
    }

    /// The runtime's name, if [`Builder::name`](super::Builder::name) gave
    /// it one (tokio's `Handle::name`).
    pub fn name(&self) -> Option<&str> {
        self.shared.config.name.as_deref()
    }

    /// A snapshot of the runtime's counters (see [`RuntimeMetrics`]).
    pub fn metrics(&self) -> RuntimeMetrics {
        self.shared.metrics()
    }

    /// A snapshot of the runtime's live tasks: each one's id, name, lane,
    /// spawn location, state (running and for how long, scheduled, or idle
    /// and for how long), polls and busy time. See [`Dump`](super::Dump)
    /// for what it lists and how exact its times are; `Display` prints it
    /// as a table.
    ///
    /// Callable from any thread, inside a task or a task's destructor too,
    /// and during or after shutdown (it then lists what is left). It holds
    /// each of the registry's shard locks only while copying that shard.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let dump = rt.handle().dump();
    /// assert_eq!(dump.tasks().count(), 0);
    /// println!("{dump}");
    /// ```
    pub fn dump(&self) -> super::Dump {
        super::Dump::capture(&self.shared)
    }

    /// Number of worker threads (1 on a current-thread runtime: the thread
    /// in its `block_on`).
    pub fn num_workers(&self) -> usize {
        self.shared.config.num_workers
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("num_workers", &self.num_workers())
            .finish_non_exhaustive()
    }
}

/// Returned by [`Handle::enter`] and [`Runtime::enter`](super::Runtime::enter).
///
/// It restores the calling thread's previous context when dropped, so it
/// cannot be sent to another thread:
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<weft::runtime::EnterGuard<'static>>();
/// ```
#[must_use = "the runtime context is left as soon as the guard is dropped"]
pub struct EnterGuard<'a> {
    /// Declared first: dropped first, as it was entered last.
    _tokio: crate::runtime::tokio_compat::TokioGuard<'a>,
    _guard: context::CurrentGuard,
    /// Borrows the handle, and is `!Send` (it restores *this* thread's
    /// context) but `Sync` (a shared guard does nothing), as tokio's.
    _handle: std::marker::PhantomData<(&'a Handle, std::sync::MutexGuard<'static, ()>)>,
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}
