//! Tasks: spawning, joining, yielding, and the blocking pool's door.
//!
//! The task cell, the join handle's shared state and the registry of idle
//! tasks are the engine's (`runtime/task/`); this module is what a program
//! names: [`JoinHandle`], [`AbortHandle`], [`JoinError`], [`JoinSet`],
//! [`Builder`], [`Lane`], [`yield_now`], [`spawn_blocking`] and the
//! cooperative budget's [`consume_budget`].

mod builder;
pub mod coop;
mod join_set;
mod task_local;
mod yield_now;

pub use crate::runtime::task::local::{LocalEnterGuard, LocalSet, spawn_local};
pub use crate::runtime::task::{AbortHandle, Id, JoinError, JoinHandle, Lane};
pub use builder::Builder;
pub use coop::{consume_budget, unconstrained};
pub use join_set::JoinSet;
pub use task_local::{AccessError, LocalKey};
pub use yield_now::yield_now;

/// Task-related futures (tokio's `task::futures`).
pub mod futures {
    pub use super::task_local::TaskLocalFuture;
}

use crate::runtime::context;

/// The id of the task running this code (tokio's `task::id`).
///
/// # Panics
///
/// Outside a task: in `block_on`'s own future or off any runtime (see
/// [`try_id`]), with tokio's message.
///
/// ```
/// let rt = weft::runtime::Runtime::new()?;
/// let handle = rt.spawn(async { weft::task::id() });
/// let id = handle.id();
/// assert_eq!(rt.block_on(handle)?, id);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[track_caller]
pub fn id() -> Id {
    try_id().expect("Can't get a task id when not inside a task")
}

/// The id of the task running this code, or `None` outside a task
/// (tokio's `task::try_id`). Also set while a task's future is dropped.
///
/// ```
/// assert!(weft::task::try_id().is_none());
/// ```
pub fn try_id() -> Option<Id> {
    crate::runtime::current_task_id()
}

/// Runs `f`, which may block its thread, on the current worker after
/// handing the worker's queued tasks on to other threads, so they do not
/// wait for `f` (tokio's `block_in_place`): other workers and the stall
/// monitor's spare threads take them, and the worker's timers fire
/// elsewhere, while `f` runs. The calling task goes on after `f` on the
/// same thread, within the same poll.
///
/// Prefer [`spawn_blocking`] where the work can move to another thread;
/// `block_in_place` is for code that must stay in the task (it borrows from
/// it). Called off a worker (inside `Runtime::block_on`, on a
/// blocking-pool thread, outside any runtime) it just runs `f`.
///
/// # Panics
///
/// On a current-thread runtime (in a task or in `block_on`'s future), and
/// in a [`LocalSet`] on a worker (its tasks would wait for `f`), as tokio
/// does: "can call blocking only when running on the multi-threaded
/// runtime". Use [`spawn_blocking`] there.
///
/// ```
/// let rt = weft::runtime::Runtime::new()?;
/// let sum = rt.block_on(rt.spawn(async {
///     weft::task::block_in_place(|| (1..=10u64).sum::<u64>())
/// }))?;
/// assert_eq!(sum, 55);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    crate::runtime::block_in_place(|| {
        // The thread stops driving the runtime for `f`'s length: `f` may
        // block, even start a runtime of its own, and it runs no task, so
        // no budget applies to it.
        let _may_block = crate::runtime::context::suspend_driving();
        coop::run_unconstrained(f)
    })
}

/// Whether the calling thread may block: `false` on a thread that drives
/// a weft runtime (a worker, or inside `block_on`), where blocking stalls
/// every task queued behind it; `true` elsewhere, and inside
/// [`block_in_place`]. Blocking helpers (a `blocking_recv`, a synchronous
/// client) check it to panic with an explanation rather than stall.
pub fn blocking_allowed() -> bool {
    !crate::runtime::context::is_driving()
}

/// Runs a blocking closure on a thread of the current runtime's blocking
/// pool, so that it does not hold an async worker, and returns a handle to
/// its result.
///
/// Use it for work that blocks the thread (file I/O, a blocking client
/// library, a long computation): a task that blocks keeps every other task
/// on its worker waiting. Threads are started as needed up to
/// [`Builder::max_blocking_threads`](crate::runtime::Builder::max_blocking_threads)
/// (more closures wait in a queue) and exit after
/// [`thread_keep_alive`](crate::runtime::Builder::thread_keep_alive) idle.
///
/// Awaiting the handle gives the closure's return value, or a
/// [`JoinError`] if it panicked or was cancelled. [`JoinHandle::abort`]
/// cancels the closure only if no thread has started it; a running closure
/// always runs to the end. At shutdown, closures not yet started never run;
/// running ones keep their threads until they return (dropping the runtime
/// waits for them, `shutdown_timeout` waits until its deadline).
///
/// # Panics
///
/// Outside a runtime context, like [`crate::spawn`]; use
/// [`Handle::spawn_blocking`](crate::runtime::Handle::spawn_blocking) from
/// any thread.
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let len = rt.block_on(async {
///     let read = weft::task::spawn_blocking(|| std::fs::read_to_string("Cargo.toml"));
///     read.await.unwrap().map(|text| text.len())
/// });
/// assert!(len.unwrap() > 0);
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let spawned = context::with_current(|shared| {
        shared.map(|shared| crate::runtime::spawn_blocking_on(shared, f))
    });
    match spawned {
        Some(join) => join,
        None => crate::runtime::context::no_runtime(format_args!(
            "`weft::task::spawn_blocking` called outside of a weft runtime: call it from a task, \
             inside `Runtime::block_on`, or while a `Runtime::enter` guard is alive; or use \
             `weft::runtime::Handle::spawn_blocking` from any thread"
        )),
    }
}
