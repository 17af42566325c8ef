//! Tasks: the cell, spawning, joining, yielding.
//!
//! # The task cell
//!
//! A task is an `async_task` allocation: header (state word, reference
//! count, awaiter), our `TaskMeta`, the schedule function, and the future
//! (later its output). One allocation per task. The handles:
//!
//! - `Runnable` (`Task` here) — the right to poll. Exactly one exists while
//!   the task is scheduled; it lives in a queue or LIFO slot, or is being
//!   run. Dropping it without running cancels the task (drops the future).
//! - `Waker` — may schedule the task; waking a completed or cancelled task
//!   does nothing. The registry (`registry.rs`) holds one per task that has
//!   returned `Pending` at least once and is not finished.
//! - `async_task::Task` — inside [`JoinHandle`]: the right to the output.
//!   Dropping a `JoinHandle` *detaches* (tokio semantics); `abort` cancels.
//!
//! # The future wrapper
//!
//! The spawned future is wrapped in `TaskFuture`, which (1) catches a panic
//! in `poll` and turns it into the task's output (`Err(panic)`), so a panic
//! never unwinds through a worker, (2) registers the task in the registry at
//! its first `Pending` and removes the entry when the future is dropped,
//! whether it completed or was cancelled, and (3) counts finished tasks for
//! the `live_tasks` metric.
//!
//! # Scheduling
//!
//! The schedule function is a zero-sized fn item (`schedule`), so async-task
//! does not clone a waker around each call; it finds the runtime through the
//! task's metadata. On a worker of the same runtime a wake goes to that
//! worker's LIFO slot (or the back of its ring for a yield, i.e. a task
//! woken while it was running); anywhere else it goes to the inject queue.

pub(crate) mod join;
pub(crate) mod label;
pub(crate) mod lane;
pub(crate) mod registry;

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::task::{Context, Poll, Waker};

use async_task::{Runnable, ScheduleInfo, WithInfo};

use crate::runtime::context;
use crate::runtime::scheduler::Shared;
use crate::util::loom::sync::Arc;

pub use join::{AbortHandle, JoinError, JoinHandle};
use label::Label;
pub use lane::Lane;
use lane::LaneAndLabel;
pub(crate) use lane::lane_of;
use registry::{Closed, Entry};
pub(crate) use registry::{EntrySnapshot, PollEnd, Registry};

/// A scheduled task: the right to poll it once.
pub(crate) type Task = Runnable<TaskMeta>;

/// What a task's panic carries.
pub(crate) type Panic = Box<dyn std::any::Any + Send + 'static>;

/// Per-task data stored in the task header: the runtime the task belongs
/// to (its schedule function finds the runtime here), its lane, what names
/// it in a stall report and a dump, and its registry entry.
///
/// Three words outside loom: its size is part of every task's allocation
/// (`label.rs` says why that matters). The entry pointer is here rather
/// than in the future's wrapper because the schedule function marks the
/// entry of a woken task; the wrapper is smaller by as much.
pub(crate) struct TaskMeta {
    shared: Arc<Shared>,
    lane_and_label: LaneAndLabel,
    /// The task's registry entry once it has returned `Pending` (null
    /// before, and again once the future is dropped). Written only by the
    /// task's own wrapper; the schedule function reads it (Relaxed: a wake
    /// comes after the registering poll through the task's state word,
    /// whose read-modify-writes order it).
    entry: AtomicPtr<Entry>,
    #[cfg(loom)]
    published: Published,
}

/// Under loom only: a cell the spawning thread creates with the task and
/// every poll reads, so that loom checks each handoff of the task.
///
/// A task's memory is async-task's, written with `std` atomics and plain
/// stores that loom does not see: without this, an ordering weakened on a
/// path that hands a task to another thread (a ring slot, the LIFO slot,
/// an inject queue) leaves the poller reading the task before it was
/// published, and no model notices (the orderings survey found the LIFO
/// slot's swap surviving both halves of its `AcqRel`). loom counts a
/// cell's creation as a write, so a read with no happens-before path from
/// the spawn is a "causality violation": the model fails.
#[cfg(loom)]
struct Published(crate::util::loom::cell::UnsafeCell<()>);

// SAFETY: the cell is never written after its creation (only `with`, a
// read, is called); loom checks each of those reads against the creation.
#[cfg(loom)]
unsafe impl Sync for Published {}

/// How a task is spawned: `task::Builder`'s settings and the caller.
#[derive(Clone, Copy)]
pub(crate) struct SpawnOptions {
    pub(crate) lane: Lane,
    pub(crate) label: Label,
}

impl SpawnOptions {
    /// A plain spawn (`weft::spawn`, `Handle::spawn`) from `spawned_at`.
    pub(crate) fn plain(spawned_at: &'static Location<'static>) -> SpawnOptions {
        SpawnOptions {
            lane: Lane::Default,
            label: Label::unnamed(spawned_at),
        }
    }
}

impl TaskMeta {
    pub(crate) fn new(shared: Arc<Shared>, options: SpawnOptions) -> TaskMeta {
        TaskMeta {
            shared,
            lane_and_label: LaneAndLabel::new(options.lane, options.label),
            entry: AtomicPtr::new(std::ptr::null_mut()),
            #[cfg(loom)]
            published: Published(crate::util::loom::cell::UnsafeCell::new(())),
        }
    }

    /// Under loom: fails the model unless the task's spawn happens-before
    /// this point (see [`Published`]). Called before each poll, and before
    /// a queued task is dropped unrun (shutdown's drains).
    #[inline]
    pub(crate) fn check_published(&self) {
        #[cfg(loom)]
        self.published.0.with(|_| ());
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    #[inline]
    pub(crate) fn lane(&self) -> Lane {
        self.lane_and_label.lane()
    }

    /// The task's lane and label as one word (`lane.rs`), for the poll
    /// watch and dumps.
    #[inline]
    pub(crate) fn lane_and_label_bits(&self) -> usize {
        self.lane_and_label.bits()
    }

    /// The task's registry entry, if it has one.
    #[inline]
    fn entry(&self) -> Option<&Entry> {
        let entry = self.entry.load(Ordering::Relaxed);
        // SAFETY: a non-null `entry` came from `Registry::insert`; entries
        // live as long as the registry, which outlives the task (the task
        // holds the runtime through `shared`).
        (!entry.is_null()).then(|| unsafe { &*entry })
    }

    /// The task was woken: a dump shows it scheduled until its next poll.
    #[inline]
    fn mark_scheduled(&self) {
        if let Some(entry) = self.entry() {
            entry.mark_scheduled();
        }
    }
}

/// The spawned future: catches panics (in `poll` and in the future's
/// destructor, which async-task would otherwise turn into a process abort),
/// registers the task once it can be idle, unregisters it on drop, and
/// keeps its registry entry's counters (`registry.rs`).
struct TaskFuture<F> {
    future: ManuallyDrop<F>,
    /// The task's metadata, in the task's header. Valid for the future's
    /// whole life: async-task drops the metadata only when it frees the
    /// task, after the future is gone, and never moves the header.
    meta: *const TaskMeta,
}

// Sound: the one field that is not `Send` is `meta`, a pointer to the
// task's `TaskMeta`, which is `Sync` (an `Arc<Shared>`, atomic words and,
// under loom, `Published`): the thread the future moves to may read it
// while others do, and it stays alive as `TaskFuture::meta` says; `future`
// is `Send` when `F` is.
// SAFETY: `meta` points to `Sync` data that outlives the future.
unsafe impl<F: Send> Send for TaskFuture<F> {}

impl<F> TaskFuture<F> {
    fn meta(&self) -> &TaskMeta {
        // Sound: `meta` came from the `&TaskMeta` async-task passed to
        // `new_task`'s closure, the only place a `TaskFuture` is made, so it
        // lives in a task cell. async-task writes the metadata in the cell's
        // header before the future, never moves it, and drops it only when
        // it frees the cell, after the future (and so this `TaskFuture`,
        // `Drop` included) is gone: `spawn_unchecked`'s signature lets a
        // future borrow its metadata (`F: FnOnce(&'a M) -> Fut, Fut: 'a`).
        // SAFETY: the metadata outlives this `TaskFuture` (argued above).
        unsafe { &*self.meta }
    }

    fn shared(&self) -> &Shared {
        &self.meta().shared
    }

    /// After a poll: a `Default` task whose poll the stall monitor saw run
    /// past the slow-poll threshold moves to the `Batch` lane.
    #[inline]
    fn demote_if_slow(&self) {
        let meta = self.meta();
        if meta.lane() == Lane::Default
            && context::with_core(|core| core.is_some_and(|core| core.poll_was_slow()))
            && meta.shared.config.demote_slow_tasks
            && meta.lane_and_label.demote()
        {
            context::with_core(|core| {
                if let Some(core) = core {
                    core.count_demotion();
                }
            });
        }
    }

    /// After a poll that returned `Pending`: how it ended, for the task's
    /// registry entry (no clock read unless the worker times this poll,
    /// which it would do anyway: `Core::poll_end`). A poll that completes
    /// the task skips this: the worker then reads the clock itself.
    #[inline]
    fn poll_end(&self) -> PollEnd {
        let meta = self.meta();
        context::with_core(|core| match core {
            Some(core) if core.accepts_local(&*meta.shared) => core.poll_end(),
            // Polled off this runtime's workers (not done today; a worker
            // closing its core polls nothing).
            _ => PollEnd {
                clock_ns: meta.shared.registry.clock_ns(std::time::Instant::now()),
                timed: None,
            },
        })
    }

    /// First `Pending`: from now on the task can be idle, so it must be
    /// findable at shutdown (and in dumps).
    #[cold]
    fn register(&mut self, waker: &Waker, first: PollEnd) {
        let worker = context::with_core(|core| core.map(|core| core.index));
        let meta = self.meta;
        match self
            .shared()
            .registry
            .insert(worker, waker.clone(), meta, first)
        {
            Ok(entry) => self.meta().entry.store(entry.as_ptr(), Ordering::Relaxed),
            // Shutting down: a wake now makes the scheduler drop the task.
            Err(Closed) => waker.wake_by_ref(),
        }
    }
}

impl<F> Drop for TaskFuture<F> {
    fn drop(&mut self) {
        // Sound: `future` is dropped exactly once, here, in place (it is
        // pinned; dropping in place is what pinning permits): nothing else
        // drops or moves it (`poll` only pins it), and it is not touched
        // after this call, even when its destructor panics.
        // SAFETY: `future` is dropped once, in place, and never touched after.
        let drop_future = || unsafe { ManuallyDrop::drop(&mut self.future) };
        // A destructor that panics leaks what it had not dropped yet; the
        // runtime and the worker carry on.
        let _ = crate::util::locks::call_user("a task's future's drop", drop_future);
        let shared = self.shared();
        if let Some(entry) = self.meta().entry() {
            shared.registry.remove(entry);
            self.meta()
                .entry
                .store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        shared.count_task_finished();
    }
}

impl<F: Future> Future for TaskFuture<F> {
    type Output = Contained<Result<F::Output, Panic>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // `TaskFuture` (dropped in place in `Drop`), and `TaskFuture` has no
        // `Unpin` impl of its own; the other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        let future = unsafe { Pin::new_unchecked(&mut *this.future) };
        let polled = crate::util::locks::call_user("a task's poll", || future.poll(cx));
        this.demote_if_slow();
        match polled {
            Ok(Poll::Pending) => {
                let end = this.poll_end();
                let Some(entry) = this.meta().entry() else {
                    this.register(cx.waker(), end);
                    return Poll::Pending;
                };
                entry.polled(end);
                if this.shared().is_shutdown() {
                    // Polled once more during shutdown (a worker finishing
                    // its last ticks): the registry may already be closed
                    // and will not find this task again, so a wake makes the
                    // shut-down scheduler drop it. The flag is visible here
                    // whenever it matters: the registry's close wakes this
                    // task (an RMW on its state word) after setting the
                    // flag, and this run began with an RMW on the same word.
                    cx.waker().wake_by_ref();
                }
                Poll::Pending
            }
            Ok(Poll::Ready(value)) => Poll::Ready(Contained::new(Ok(value))),
            Err(panic) => {
                // The panic policy (`runtime/scheduler/panic_policy.rs`); the
                // output is the panic either way.
                this.shared().task_panicked(&*panic);
                Poll::Ready(Contained::new(Err(panic)))
            }
        }
    }
}

/// A task's output as async-task stores it. async-task drops an output
/// nobody collects (a detached task's) inside an abort-on-panic guard, so a
/// destructor that panics would take the whole process down; this wrapper
/// contains such a panic instead (the value's remaining fields leak).
pub(crate) struct Contained<T>(ManuallyDrop<T>);

impl<T> Contained<T> {
    pub(crate) fn new(value: T) -> Self {
        Contained(ManuallyDrop::new(value))
    }

    /// The value, which its new owner drops normally.
    pub(crate) fn into_inner(self) -> T {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (ManuallyDrop), so the value is
        // moved out exactly once and `Contained::drop` does not run on it.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl<T> Drop for Contained<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; `into_inner` bypasses this `Drop`.
        let drop_value = || unsafe { ManuallyDrop::drop(&mut self.0) };
        let _ = crate::util::locks::call_user("a task's output's drop", drop_value);
    }
}

/// The schedule function of every weft task.
fn schedule(task: Task, info: ScheduleInfo) {
    task.metadata().mark_scheduled();
    let lane = task.metadata().lane();
    if lane != Lane::Default {
        // The lanes' queues are runtime-wide: no local fast path.
        let shared = task.metadata().shared.clone();
        shared.schedule_lane(task, lane);
        return;
    }
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
pub(crate) fn spawn_on<F>(
    shared: &Arc<Shared>,
    future: F,
    options: SpawnOptions,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if shared.is_shutdown() {
        return JoinHandle::cancelled_at_spawn(future);
    }
    let (runnable, task) = new_task(shared, future, options);
    if options.lane != Lane::Default {
        shared.count_remote_spawn();
        shared.schedule_lane(runnable, options.lane);
        return task;
    }
    let on_worker = context::with_core(|core| match core {
        Some(core) if core.accepts_local(&**shared) => {
            core.count_spawn();
            core.schedule_local(runnable, false);
            None
        }
        _ => Some(runnable),
    });
    if let Some(runnable) = on_worker {
        shared.count_remote_spawn();
        shared.schedule_remote(runnable);
    }
    task
}

/// Makes the task cell for `future`, not yet scheduled: the right to poll
/// it and its join handle.
pub(crate) fn new_task<F>(
    shared: &Arc<Shared>,
    future: F,
    options: SpawnOptions,
) -> (Task, JoinHandle<F::Output>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (runnable, task) = async_task::Builder::new()
        .metadata(TaskMeta::new(shared.clone(), options))
        .spawn(
            move |meta| TaskFuture {
                future: ManuallyDrop::new(future),
                meta,
            },
            WithInfo(schedule),
        );
    (runnable, JoinHandle::new(task))
}

#[cfg(all(test, loom))]
mod loom_tests;
