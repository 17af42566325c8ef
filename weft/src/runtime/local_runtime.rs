//! `LocalRuntime`: a current-thread runtime whose thread also runs `!Send`
//! tasks, with no `LocalSet` to set up (tokio's `runtime::LocalRuntime`).
//!
//! # Parts
//!
//! A [`LocalRuntime`] is a current-thread [`Runtime`] and a [`LocalSet`]
//! the runtime's scheduler knows of (`CurrentThread::local`, with the
//! thread that built it). [`task::spawn_local`](crate::task::spawn_local)
//! finds that set through the runtime in context when no `LocalSet` is
//! entered, so it works anywhere on the owning thread: in `block_on`, in a
//! task spawned with `weft::spawn`, under [`LocalRuntime::enter`].
//! [`block_on`](LocalRuntime::block_on) runs its future inside the set's
//! `run_until`, so the set's tasks run whenever the runtime drives.
//!
//! # Invariants
//!
//! - Correctness: a local task is polled and dropped only on the owning
//!   thread. The set is `!Send` and the runtime holds it; a spawn through
//!   the runtime from another thread (its `Handle` entered there) panics
//!   (tokio's message) instead of queueing a task there.
//! - Nothing is lost at the drop: the set is dropped first, with the
//!   runtime's context entered (a local task's destructor may spawn or
//!   reach the reactor), then the runtime shuts down as any other.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::thread::ThreadId;
use std::time::Duration;

use super::task::local::LocalShared;
use super::task::{JoinHandle, SpawnOptions};
use super::{Builder, EnterGuard, Handle, Runtime};
use crate::task::LocalSet;
use crate::util::loom::sync::Arc;

/// Settings of a [`LocalRuntime`] beyond its [`Builder`]'s (tokio's
/// `runtime::LocalOptions`; none yet).
#[derive(Default, Debug)]
#[non_exhaustive]
pub struct LocalOptions {
    /// `!Send` and `!Sync`, as tokio's.
    _not_send: PhantomData<*mut u8>,
}

/// A current-thread runtime on which [`task::spawn_local`] works without
/// a `LocalSet`: every task, `Send` or not, runs on the thread that built
/// it (tokio's `runtime::LocalRuntime`).
///
/// Built by [`LocalRuntime::new`] or by [`Builder::build_local`] on a
/// current-thread builder. It is `!Send`: it stays on its thread. Its
/// [`Handle`] is `Send`, and spawns `Send` tasks from anywhere; a
/// `spawn_local` through it on another thread panics.
///
/// ```
/// use std::rc::Rc;
///
/// let rt = weft::runtime::LocalRuntime::new()?;
/// let shared = Rc::new(20); // not `Send`
/// let sum = rt.block_on(async move {
///     let inner = shared.clone();
///     weft::task::spawn_local(async move { *inner + 1 }).await.unwrap() + *shared
/// });
/// assert_eq!(sum, 41);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// [`task::spawn_local`]: crate::task::spawn_local
pub struct LocalRuntime {
    /// Dropped first, in the runtime's context (module doc).
    local: Option<LocalSet>,
    runtime: Option<Runtime>,
}

/// The local set of a `LocalRuntime`, as its scheduler keeps it.
pub(crate) struct LocalRuntimeSet {
    pub(crate) shared: Arc<LocalShared>,
    pub(crate) owner: ThreadId,
}

impl LocalRuntime {
    /// A local runtime with the I/O and time drivers (tokio's
    /// `LocalRuntime::new`).
    pub fn new() -> std::io::Result<LocalRuntime> {
        Builder::new_current_thread()
            .enable_all()
            .build_local(LocalOptions::default())
    }

    /// Wraps a current-thread runtime just built on this thread.
    pub(crate) fn from_runtime(runtime: Runtime) -> LocalRuntime {
        let local = LocalSet::new();
        let scheduler = runtime
            .current_thread_scheduler()
            .expect("build_local builds a current-thread runtime");
        scheduler.set_local(LocalRuntimeSet {
            shared: local.shared().clone(),
            owner: std::thread::current().id(),
        });
        LocalRuntime {
            local: Some(local),
            runtime: Some(runtime),
        }
    }

    fn runtime(&self) -> &Runtime {
        self.runtime.as_ref().expect("present until the drop")
    }

    fn local(&self) -> &LocalSet {
        self.local.as_ref().expect("present until the drop")
    }

    /// The runtime's handle: `Send`, it spawns `Send` tasks from any
    /// thread.
    pub fn handle(&self) -> &Handle {
        self.runtime().handle()
    }

    /// Spawns a future that need not be `Send` on this runtime; it runs
    /// when the runtime drives (in [`block_on`](Self::block_on)).
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.local().spawn_local(future)
    }

    /// Runs `f` on the blocking pool (as
    /// [`Runtime::spawn_blocking`](Runtime::spawn_blocking)).
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.runtime().spawn_blocking(f)
    }

    /// Runs `future` to completion on this thread, driving the runtime:
    /// its tasks, local or not, its timers and its I/O.
    ///
    /// # Panics
    ///
    /// As [`Runtime::block_on`]: inside an asynchronous context.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime().block_on(self.local().run_until(future))
    }

    /// Makes this runtime the current context until the guard drops, so
    /// that `weft::spawn` and `task::spawn_local` spawn on it.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.runtime().enter()
    }

    /// The runtime's metrics (as [`Runtime::metrics`]).
    pub fn metrics(&self) -> crate::metrics::RuntimeMetrics {
        self.runtime().metrics()
    }

    /// Shuts down, waiting at most `duration` for the blocking threads
    /// (as [`Runtime::shutdown_timeout`]); the local tasks are dropped
    /// first, on this thread.
    pub fn shutdown_timeout(mut self, duration: Duration) {
        self.drop_local();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(duration);
        }
    }

    /// Shuts down without waiting for the blocking threads (as
    /// [`Runtime::shutdown_background`]).
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Drops the local set (every local task still in it) with the
    /// runtime's context entered.
    fn drop_local(&mut self) {
        if let Some(local) = self.local.take() {
            let _context = self.runtime.as_ref().map(Runtime::enter);
            drop(local);
        }
    }
}

impl Drop for LocalRuntime {
    fn drop(&mut self) {
        self.drop_local();
    }
}

impl fmt::Debug for LocalRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalRuntime")
            .field("handle", &self.runtime.as_ref().map(Runtime::handle))
            .finish_non_exhaustive()
    }
}

// As tokio's: a panic caught around the runtime leaves it usable.
impl std::panic::UnwindSafe for LocalRuntime {}
impl std::panic::RefUnwindSafe for LocalRuntime {}

/// Spawns `future` on the local runtime in context, if there is one.
/// `None`: the runtime in context (if any) is not a local runtime.
///
/// # Panics
///
/// If it is one, but this thread is not the one that built it (tokio's
/// message).
pub(crate) fn spawn_on_current<F>(
    future: F,
    options: SpawnOptions,
) -> Result<JoinHandle<F::Output>, F>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let shared = crate::runtime::context::with_current(|shared| {
        let scheduler = super::current_thread::CurrentThread::of(shared?)??;
        scheduler.local().map(|set| (set.shared.clone(), set.owner))
    });
    let Some((shared, owner)) = shared else {
        return Err(future);
    };
    if owner != std::thread::current().id() {
        panic!(
            "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was \
             created on"
        );
    }
    Ok(LocalShared::spawn(&shared, future, options))
}
