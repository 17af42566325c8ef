//! Tasks: the cell, spawning, joining, yielding.
//!
//! # The task cell
//!
//! A task is an `async_task` allocation: header (state word, reference
//! count, awaiter), our [`TaskMeta`], the schedule function, and the future
//! (later its output). One allocation per task. The handles:
//!
//! - `Runnable` ([`Task`] here) — the right to poll. Exactly one exists while
//!   the task is scheduled; it lives in a queue or LIFO slot, or is being
//!   run. Dropping it without running cancels the task (drops the future).
//! - `Waker` — may schedule the task; waking a completed or cancelled task
//!   does nothing. The registry (`registry.rs`) holds one per live task.
//! - `async_task::Task` — inside [`JoinHandle`]: the right to the output.
//!   Dropping a `JoinHandle` *detaches* (tokio semantics); `abort` cancels.
//!
//! # The future wrapper
//!
//! The spawned future is wrapped in [`TaskFuture`], which (1) catches a panic
//! in `poll` and turns it into the task's output (`Err(panic)`), so a panic
//! never unwinds through a worker, and (2) removes the task's registry entry
//! when the future is dropped, whether it completed or was cancelled.
//!
//! # Scheduling
//!
//! The schedule function is a zero-sized fn item (`schedule`), so async-task
//! does not clone a waker around each call; it finds the runtime through the
//! task's metadata. On a worker of the same runtime a wake goes to that
//! worker's LIFO slot (or the back of its ring for a yield, i.e. a task
//! woken while it was running); anywhere else it goes to the inject queue.

mod join;
mod registry;
mod yield_now;

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_task::{Runnable, ScheduleInfo, WithInfo};

use crate::loom::sync::Arc;
use crate::runtime::context;
use crate::scheduler::Shared;

pub use join::{JoinError, JoinHandle};
pub(crate) use registry::{EntryKey, Registry, Spawner};
pub use yield_now::yield_now;

/// A scheduled task: the right to poll it once.
pub(crate) type Task = Runnable<TaskMeta>;

/// What a task's panic carries.
pub(crate) type Panic = Box<dyn std::any::Any + Send + 'static>;

/// Per-task data stored in the task header.
pub(crate) struct TaskMeta {
    shared: Arc<Shared>,
}

/// The spawned future: catches panics (in `poll` and in the future's
/// destructor, which async-task would otherwise turn into a process abort),
/// and unregisters the task on drop.
struct TaskFuture<F> {
    future: ManuallyDrop<F>,
    /// Declared after `future`, so it is dropped after it, even when the
    /// future's destructor panics.
    _entry: RegistryEntry,
}

struct RegistryEntry {
    registry: *const Registry,
    key: EntryKey,
}

// SAFETY: the pointer is only used to call `Registry::remove`, which is
// thread-safe; see `Drop` for why it is valid.
unsafe impl Send for RegistryEntry {}

impl Drop for RegistryEntry {
    fn drop(&mut self) {
        // SAFETY: the registry lives in `Shared`, which this task's metadata
        // keeps alive (an `Arc`); async-task drops the metadata only when it
        // frees the task, after the future (which owns this entry) is gone.
        unsafe { (*self.registry).remove(self.key) };
    }
}

impl<F> Drop for TaskFuture<F> {
    fn drop(&mut self) {
        // SAFETY: `future` is dropped exactly once, here, in place (it is
        // pinned; dropping in place is what pinning permits).
        let drop_future = || unsafe { ManuallyDrop::drop(&mut self.future) };
        // A destructor that panics leaks what it had not dropped yet; the
        // runtime and the worker carry on.
        let _ = catch_unwind(AssertUnwindSafe(drop_future));
    }
}

impl<F: Future> Future for TaskFuture<F> {
    type Output = Result<F::Output, Panic>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // `TaskFuture`, and `TaskFuture` has no `Unpin` impl of its own.
        let future = unsafe { self.map_unchecked_mut(|this| &mut *this.future) };
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// The schedule function of every weft task.
fn schedule(task: Task, info: ScheduleInfo) {
    let shared: *const Shared = &*task.metadata().shared;
    let is_yield = info.woken_while_running;
    // Fast path: woken by a task running on a worker of this runtime.
    let task = match context::with_core(|core| match core {
        Some(core) if core.accepts_local(shared) => {
            core.schedule_local(task, is_yield);
            None
        }
        _ => Some(task),
    }) {
        None => return,
        Some(task) => task,
    };
    // The task may complete and free the metadata once pushed: hold the
    // runtime through our own reference for the rest of the call.
    let shared = task.metadata().shared.clone();
    shared.schedule_remote(task);
}

/// Spawns `future` on the runtime behind `shared`.
pub(crate) fn spawn_on<F>(shared: &Arc<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let core_index = context::with_core(|core| match core {
        Some(core) if core.accepts_local(&**shared) => Some(core.index),
        _ => None,
    });
    let spawner = core_index.map_or(Spawner::Remote, Spawner::Worker);
    let registry: *const Registry = &shared.registry;
    let meta = TaskMeta {
        shared: shared.clone(),
    };
    let mut future = Some(future);
    let inserted = shared.registry.insert(spawner, |key| {
        let wrapped = TaskFuture {
            future: ManuallyDrop::new(future.take().expect("spawn closure runs once")),
            _entry: RegistryEntry { registry, key },
        };
        let (runnable, task) = async_task::Builder::new()
            .metadata(meta)
            .spawn(move |_| wrapped, WithInfo(schedule));
        let waker = runnable.waker();
        ((runnable, task), waker)
    });
    let Some((runnable, task)) = inserted else {
        // The runtime is shut down: the task is cancelled before it starts.
        return JoinHandle::cancelled_at_spawn(future.take().expect("not spawned"));
    };
    match core_index {
        Some(index) => context::with_core(|core| {
            let core = core.expect("spawned on a worker");
            shared.remotes[index].counters.spawned_local.incr();
            core.schedule_local(runnable, false);
        }),
        None => shared.schedule_remote(runnable),
    }
    JoinHandle::new(task)
}
