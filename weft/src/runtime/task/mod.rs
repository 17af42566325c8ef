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
//! whether it completed or was cancelled, (3) counts finished tasks for
//! the `live_tasks` metric, and (4) moves a `Default` task whose poll ran
//! slow to the `Batch` lane. It decides these itself; what it needs of the
//! runtime for them (the registry, the poll's end stamp, the shutdown
//! flag, the panic policy, whether the poll was slow and slow tasks are
//! demoted, the finished count) it asks of its scheduler, one
//! [`Schedule`] method each.
//!
//! # Scheduling: who decides what
//!
//! The cell decides *when* a task is scheduled (async-task's state word:
//! a wake of an idle task, an abort of an idle task) and marks the task's
//! registry entry scheduled; its scheduler decides *where* it goes,
//! through the [`Schedule`] trait (`schedule.rs`, which also says why the
//! scheduler is held as a `dyn` and called through generics). The cell
//! names no scheduler type: `spawn_on` and `new_task` take any
//! `Arc<S: Schedule>`. The multi-thread scheduler's answer (the LIFO slot,
//! the back of the ring for a yield, the inject queue from outside, the
//! lanes' queues) is in `runtime/scheduler/schedule.rs`; the loom models of
//! the join cell use a test scheduler (`schedule::TestScheduler`).
//!
//! The schedule function is a zero-sized fn item (`schedule::<S>`), so
//! async-task does not clone a waker around each call; it finds the
//! scheduler through the task's metadata.

pub(crate) mod id;
pub(crate) mod join;
pub(crate) mod label;
pub(crate) mod lane;
pub(crate) mod local;
pub(crate) mod registry;
pub(crate) mod schedule;

use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::task::{Context, Poll, Waker};

use async_task::{Runnable, ScheduleInfo, WithInfo};

use crate::util::loom::sync::Arc;

pub use id::Id;
pub use join::{AbortHandle, JoinError, JoinHandle};
use label::Label;
pub use lane::Lane;
use lane::LaneAndLabel;
pub(crate) use lane::lane_of;
use registry::{Closed, Entry};
pub(crate) use registry::{EntrySnapshot, PollEnd, Registry};
pub(crate) use schedule::Schedule;
use schedule::SchedulerRef;

/// A scheduled task: the right to poll it once.
pub(crate) type Task = Runnable<TaskMeta>;

/// What a task's panic carries.
pub(crate) type Panic = Box<dyn std::any::Any + Send + 'static>;

/// Per-task data stored in the task header: the scheduler the task belongs
/// to (its schedule function finds it here), its lane, what names it in a
/// stall report and a dump, its registry entry, and its id.
///
/// Five words outside loom: the scheduler reference is two (a `dyn
/// Schedule`'s data and vtable, `schedule.rs` says why), the lane and
/// label one, the entry one, the id one. The vtable word is the seam's
/// price: one word per task more than a pointer to one known scheduler
/// type; the id is tokio's `task::Id`, read by `JoinHandle::id` and
/// `task::id`. Its size is part of every task's allocation
/// (`label.rs` says why that matters). The entry pointer is here rather
/// than in the future's wrapper because the schedule function marks the
/// entry of a woken task; the wrapper is smaller by as much.
pub(crate) struct TaskMeta {
    scheduler: SchedulerRef,
    lane_and_label: LaneAndLabel,
    /// The task's registry entry once it has returned `Pending` (null
    /// before, and again once the future is dropped). Written only by the
    /// task's own wrapper; the schedule function reads it (Relaxed: a wake
    /// comes after the registering poll through the task's state word,
    /// whose read-modify-writes order it).
    entry: AtomicPtr<Entry>,
    /// The task's id (`id.rs`).
    id: Id,
    #[cfg(loom)]
    published: Published,
}

// The size `TaskMeta`'s doc states (outside loom, whose `Published` and
// atomics are larger).
#[cfg(not(loom))]
const _: () = assert!(
    std::mem::size_of::<TaskMeta>() == 5 * std::mem::size_of::<usize>(),
    "TaskMeta is five words: update its doc (and label.rs's reasoning) if this changes"
);

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
    pub(crate) fn new<S: Schedule>(scheduler: Arc<S>, options: SpawnOptions) -> TaskMeta {
        TaskMeta {
            scheduler: SchedulerRef::new(scheduler),
            lane_and_label: LaneAndLabel::new(options.lane, options.label),
            entry: AtomicPtr::new(std::ptr::null_mut()),
            id: Id::next(),
            #[cfg(loom)]
            published: Published(crate::util::loom::cell::UnsafeCell::new(())),
        }
    }

    /// The task's id.
    #[inline]
    pub(crate) fn id(&self) -> Id {
        self.id
    }

    /// Under loom: fails the model unless the task's spawn happens-before
    /// this point (see [`Published`]). Called before each poll, and before
    /// a queued task is dropped unrun (shutdown's drains).
    #[inline]
    pub(crate) fn check_published(&self) {
        #[cfg(loom)]
        self.published.0.with(|_| ());
    }

    /// The task's scheduler.
    ///
    /// # Safety
    ///
    /// `S` is the scheduler type the task was made with (`new_task`'s, or
    /// `spawn_blocking_on`'s).
    #[inline]
    pub(crate) unsafe fn scheduler<S: Schedule>(&self) -> &S {
        // SAFETY: the caller's.
        unsafe { self.scheduler.get::<S>() }
    }

    /// A reference of its own to the task's scheduler, for a caller that
    /// still needs it once the task is handed over (and may be freed).
    ///
    /// # Safety
    ///
    /// As [`scheduler`](Self::scheduler).
    #[inline]
    pub(crate) unsafe fn scheduler_arc<S: Schedule>(&self) -> Arc<S> {
        // SAFETY: the caller's.
        unsafe { self.scheduler.arc::<S>() }
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
        // A non-null `entry` came from `Registry::insert`; entries live as
        // long as the registry, which outlives the task (the task holds its
        // scheduler, which owns the registry, through `scheduler`).
        // SAFETY: a non-null entry is live (argued above).
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
struct TaskFuture<F, S: Schedule> {
    future: ManuallyDrop<F>,
    /// The task's metadata, in the task's header. Valid for the future's
    /// whole life: async-task drops the metadata only when it frees the
    /// task, after the future is gone, and never moves the header. Its
    /// lowest bit (free: `TaskMeta` is word-aligned) is set once `future`
    /// was dropped while its poll's panic unwound (`FUTURE_DROPPED`); read
    /// it through `meta_ptr`.
    meta: *const TaskMeta,
    /// The type of the scheduler in the metadata (`new_task::<S>` made
    /// both), so that its methods are static calls.
    scheduler: PhantomData<fn() -> S>,
}

// Sound: the one field that is not `Send` is `meta`, a pointer to the
// task's `TaskMeta`, which is `Sync` (a `SchedulerRef`, atomic words and,
// under loom, `Published`): the thread the future moves to may read it
// while others do, and it stays alive as `TaskFuture::meta` says; `future`
// is `Send` when `F` is.
// SAFETY: `meta` points to `Sync` data that outlives the future.
unsafe impl<F: Send, S: Schedule> Send for TaskFuture<F, S> {}

impl<F, S: Schedule> TaskFuture<F, S> {
    fn meta(&self) -> &TaskMeta {
        // Sound: `meta` came from the `&TaskMeta` async-task passed to
        // `new_task`'s closure, the only place a `TaskFuture` is made, so it
        // lives in a task cell. async-task writes the metadata in the cell's
        // header before the future, never moves it, and drops it only when
        // it frees the cell, after the future (and so this `TaskFuture`,
        // `Drop` included) is gone: `spawn_unchecked`'s signature lets a
        // future borrow its metadata (`F: FnOnce(&'a M) -> Fut, Fut: 'a`).
        // SAFETY: the metadata outlives this `TaskFuture` (argued above).
        unsafe { &*self.meta_ptr() }
    }

    /// `meta` without the `FUTURE_DROPPED` bit.
    fn meta_ptr(&self) -> *const TaskMeta {
        self.meta.map_addr(|addr| addr & !FUTURE_DROPPED)
    }

    fn future_dropped(&self) -> bool {
        self.meta.addr() & FUTURE_DROPPED != 0
    }

    fn scheduler(&self) -> &S {
        // SAFETY: `new_task::<S>`, the only place a `TaskFuture<_, S>` is
        // made, made the metadata with an `Arc<S>`.
        unsafe { self.meta().scheduler::<S>() }
    }

    /// After a poll: a `Default` task whose poll the stall monitor saw run
    /// past the slow-poll threshold moves to the `Batch` lane, if its
    /// runtime demotes slow tasks.
    #[inline]
    fn demote_if_slow(&self) {
        let meta = self.meta();
        let scheduler = self.scheduler();
        if meta.lane() == Lane::Default
            && scheduler.poll_was_slow()
            && scheduler.demotes_slow_tasks()
            && meta.lane_and_label.demote()
        {
            scheduler.task_demoted();
        }
    }

    /// First `Pending`: from now on the task can be idle, so it must be
    /// findable at shutdown (and in dumps).
    #[cold]
    fn register(&mut self, waker: &Waker, first: PollEnd) {
        let scheduler = self.scheduler();
        let worker = scheduler.polling_worker();
        match scheduler
            .registry()
            .insert(worker, waker.clone(), self.meta_ptr(), first)
        {
            Ok(entry) => self.meta().entry.store(entry.as_ptr(), Ordering::Relaxed),
            // Shutting down: a wake now makes the scheduler drop the task.
            Err(Closed) => waker.wake_by_ref(),
        }
    }
}

impl<F, S: Schedule> Drop for TaskFuture<F, S> {
    fn drop(&mut self) {
        // Sound: `future` is dropped exactly once, here, in place (it is
        // pinned; dropping in place is what pinning permits): nothing else
        // drops or moves it (`poll` only pins it), and it is not touched
        // after this call, even when its destructor panics.
        // `task::id()` works in the future's destructor, as in its poll.
        let id = id::enter(self.meta().id);
        if !self.future_dropped() {
            // SAFETY: `future` is dropped once, in place, and never touched
            // after (not dropped yet: the flag is clear).
            let drop_future = || unsafe { ManuallyDrop::drop(&mut self.future) };
            // A destructor that panics leaks what it had not dropped yet;
            // the runtime and the worker carry on.
            let _ = crate::util::locks::call_user("a task's future's drop", drop_future);
        }
        drop(id);
        let scheduler = self.scheduler();
        if let Some(entry) = self.meta().entry() {
            scheduler.registry().remove(entry);
            self.meta()
                .entry
                .store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        scheduler.task_finished();
    }
}

impl<F: Future, S: Schedule> Future for TaskFuture<F, S> {
    type Output = Contained<Result<F::Output, Panic>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // `TaskFuture` (dropped in place in `Drop`), and `TaskFuture` has no
        // `Unpin` impl of its own; the other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let id = id::enter(this.meta().id);
        let polled = crate::util::locks::call_user("a task's poll", || {
            // A poll that panics drops its future while the panic unwinds,
            // as tokio does: its destructors see `thread::panicking()`.
            let unwinding = DropOnUnwind {
                future: &mut this.future,
                meta: &mut this.meta,
            };
            // SAFETY: as above: pinned in place, never moved.
            let future = unsafe { Pin::new_unchecked(&mut **unwinding.future) };
            let polled = future.poll(cx);
            std::mem::forget(unwinding);
            polled
        });
        drop(id);
        this.demote_if_slow();
        match polled {
            Ok(Poll::Pending) => {
                // How the poll ended, for the task's registry entry. A poll
                // that completes the task skips this: its worker then reads
                // the clock itself.
                let end = this.scheduler().poll_end();
                let Some(entry) = this.meta().entry() else {
                    this.register(cx.waker(), end);
                    return Poll::Pending;
                };
                entry.polled(end);
                if this.scheduler().is_shutdown() {
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
            Ok(Poll::Ready(value)) => Poll::Ready(Contained::of::<S>(Ok(value), this.meta().id)),
            Err(panic) => {
                // The runtime's panic policy; the output is the panic
                // either way.
                this.scheduler().task_panicked(&*panic);
                Poll::Ready(Contained::of::<S>(Err(panic), this.meta().id))
            }
        }
    }
}

/// `TaskFuture::meta`'s bit saying its future is gone.
const FUTURE_DROPPED: usize = 1;

/// Drops a task's future if a panic unwinds through its poll (forgotten
/// when the poll returns), and marks it dropped for `TaskFuture`'s `Drop`.
struct DropOnUnwind<'a, F> {
    future: &'a mut ManuallyDrop<F>,
    meta: &'a mut *const TaskMeta,
}

impl<F> Drop for DropOnUnwind<'_, F> {
    fn drop(&mut self) {
        *self.meta = self.meta.map_addr(|addr| addr | FUTURE_DROPPED);
        // The future is dropped in place (it is pinned) and only here: the
        // flag just set makes `TaskFuture`'s `Drop` skip it, and the task is
        // complete (its poll panicked), so it is never polled again. A
        // destructor that panics now aborts the process (a panic during a
        // panic), as it does on tokio.
        // SAFETY: dropped once, in place, never touched again (above).
        unsafe { ManuallyDrop::drop(self.future) };
    }
}

/// A task's output as async-task stores it. async-task drops an output
/// nobody collects (a detached task's) inside an abort-on-panic guard, so a
/// destructor that panics would take the whole process down; this wrapper
/// contains such a panic instead (the value's remaining fields leak).
///
/// A local task's output (a `LocalSet`'s: `Schedule::one_thread`) need not
/// be `Send`, so it is kept to its task's thread (`home`): it is taken out
/// (`into_inner`) only through its `JoinHandle`, which is `!Send` unless
/// the output is `Send` and is made on that thread; it is dropped there
/// too, except through one path: an `AbortHandle` on another thread that
/// finds the task finished moves the output into the handle's shared
/// state, and if the `JoinHandle` is gone by then, the output would be
/// dropped on that thread. It is leaked instead (never dropped off its
/// thread).
pub(crate) struct Contained<T> {
    value: ManuallyDrop<T>,
    /// The task's id: `task::id()` works in the value's destructor, as in
    /// tokio.
    id: Id,
    /// The thread of a local task's output; `None` for a task whose output
    /// is `Send`.
    home: Option<std::thread::ThreadId>,
}

// Sound: a `Contained` made by `new` holds a `Send` value (`new_task`'s
// bound on the output), which may go anywhere. One made by `new_local`
// holds a value that may not be `Send`; it may be *moved* between threads
// (between async-task and a join handle's shared state) but its value is
// only used or dropped on its `home` thread: `into_inner` is called only
// by the `JoinHandle`'s poll, which happens on that thread unless the
// output is `Send` (a `JoinHandle<T>` is `Send` only if `T` is, and a
// local task's is made on its thread); `drop` checks `home` and leaks the
// value elsewhere. A shared `&Contained` gives no access to the value.
// SAFETY: a `new` value is `Send`; a `new_local` one is used and dropped
// only on its home thread (argued above).
unsafe impl<T> Send for Contained<T> {}
// SAFETY: as for `Send`: nothing reads the value through `&Contained`.
unsafe impl<T> Sync for Contained<T> {}

impl<T> Contained<T> {
    /// The output of task `id`, whose output is `Send`.
    pub(crate) fn new(value: T, id: Id) -> Self {
        Contained {
            value: ManuallyDrop::new(value),
            id,
            home: None,
        }
    }

    /// The output of local task `id`, made on its thread.
    pub(crate) fn new_local(value: T, id: Id) -> Self {
        Contained {
            value: ManuallyDrop::new(value),
            id,
            home: Some(std::thread::current().id()),
        }
    }

    /// The output of a task of scheduler `S`.
    fn of<S: Schedule>(value: T, id: Id) -> Self {
        if S::one_thread() {
            Contained::new_local(value, id)
        } else {
            Contained::new(value, id)
        }
    }

    /// The value, which its new owner drops normally.
    pub(crate) fn into_inner(self) -> T {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (ManuallyDrop), so the value is
        // moved out exactly once and `Contained::drop` does not run on it.
        unsafe { ManuallyDrop::take(&mut this.value) }
    }
}

impl<T> Drop for Contained<T> {
    fn drop(&mut self) {
        if let Some(home) = self.home
            && home != std::thread::current().id()
        {
            // A local task's output off its thread: leaked (type doc).
            return;
        }
        let _id = id::enter(self.id);
        // SAFETY: dropped once, here; `into_inner` bypasses this `Drop`.
        let drop_value = || unsafe { ManuallyDrop::drop(&mut self.value) };
        let _ = crate::util::locks::call_user("a task's output's drop", drop_value);
    }
}

/// The schedule function of every task whose scheduler is an `S`.
fn schedule<S: Schedule>(task: Task, info: ScheduleInfo) {
    task.metadata().mark_scheduled();
    // SAFETY: `schedule::<S>` is installed only by `new_task::<S>`, whose
    // tasks' scheduler is an `S`.
    unsafe { S::schedule(task, info) }
}

/// Spawns `future` on `scheduler`; refused (the handle reports
/// cancellation) once the scheduler is shutting down.
pub(crate) fn spawn_on<S, F>(
    scheduler: &Arc<S>,
    future: F,
    options: SpawnOptions,
) -> JoinHandle<F::Output>
where
    S: Schedule,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if scheduler.is_shutdown() {
        return JoinHandle::cancelled_at_spawn(future);
    }
    let (runnable, task) = new_task(scheduler, future, options);
    scheduler.schedule_new(runnable);
    task
}

/// Makes the task cell for `future` on `scheduler`, not yet scheduled: the
/// right to poll it and its join handle.
pub(crate) fn new_task<S, F>(
    scheduler: &Arc<S>,
    future: F,
    options: SpawnOptions,
) -> (Task, JoinHandle<F::Output>)
where
    S: Schedule,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (runnable, task) = async_task::Builder::new()
        .metadata(TaskMeta::new(scheduler.clone(), options))
        .spawn(
            move |meta| TaskFuture::<F, S> {
                future: ManuallyDrop::new(future),
                meta,
                scheduler: PhantomData,
            },
            WithInfo(schedule::<S>),
        );
    (runnable, JoinHandle::new(task))
}

/// Makes the task cell for a future that need not be `Send` (a
/// `LocalSet`'s, `local.rs`), not yet scheduled. async-task's
/// `spawn_local` checks at each poll and at the future's drop that they
/// happen on this thread; `local.rs` keeps them there.
pub(crate) fn new_local_task<S, F>(
    scheduler: &Arc<S>,
    future: F,
    options: SpawnOptions,
) -> (Task, JoinHandle<F::Output>)
where
    S: Schedule,
    F: Future + 'static,
    F::Output: 'static,
{
    debug_assert!(
        S::one_thread(),
        "a local task's scheduler keeps it to one thread"
    );
    let (runnable, task) = async_task::Builder::new()
        .metadata(TaskMeta::new(scheduler.clone(), options))
        .spawn_local(
            move |meta| TaskFuture::<F, S> {
                future: ManuallyDrop::new(future),
                meta,
                scheduler: PhantomData,
            },
            WithInfo(schedule::<S>),
        );
    (runnable, JoinHandle::new(task))
}

#[cfg(all(test, loom))]
mod loom_tests;
