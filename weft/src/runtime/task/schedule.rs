//! The seam between the task cell and the scheduler that runs it.
//!
//! The cell (`runtime/task/mod.rs`) knows nothing of slots, rings or
//! inject queues: everything it needs of its runtime is a method of
//! [`Schedule`], which the multi-thread scheduler implements
//! (`runtime/scheduler/schedule.rs`: the LIFO slot, the ring, the inject
//! and lane queues, the worker's counters and poll watch), as do the
//! current-thread scheduler (`runtime/current_thread/schedule.rs`: the
//! driving thread's queue, or a locked inject queue), a `LocalSet`
//! (`runtime/task/local.rs`) and a test scheduler under loom ([`TestScheduler`], a queue the model's
//! threads pop and run), so the join cell's models build no runtime.
//!
//! # Dynamic or generic
//!
//! Each task's metadata (`TaskMeta`) holds its scheduler as a
//! [`SchedulerRef`]: one strong reference to an `Arc<S>` with `S` erased
//! to `dyn Schedule` (two words). `TaskMeta` is not generic because its
//! type is named everywhere a task goes: `Task` (a `Runnable<TaskMeta>`)
//! in every queue and slot, `JoinHandle<T>` (public, no room for a second
//! parameter), the registry's entries and the poll watch; `TaskMeta<S>`
//! would make each of them generic over the scheduler. Only the code that
//! *calls* the scheduler is generic: `new_task::<S>` installs
//! `schedule::<S>` (a zero-sized fn item) as async-task's schedule
//! function and wraps the future in `TaskFuture<F, S>`; both get `&S`
//! back from the erased pointer, so a wake and every call of a poll are
//! static calls, as before the seam (no dynamic call on any path: the
//! `dyn` is only what frees the scheduler with the cell). The cost is the
//! vtable word: `TaskMeta` is five words (the id is the fifth), one more than a pointer to one
//! known scheduler type would make it (`label.rs` says why the header's
//! size matters: a task's future may be one word smaller before the cell
//! leaves glibc's fast bins).
//!
//! The reference is stored raw (`Arc::into_raw`) rather than as an
//! `Arc<dyn Schedule>` because loom's `Arc` cannot be coerced to a trait
//! object; the fat pointer is the one that coercion would give.

use std::ptr::NonNull;

use async_task::ScheduleInfo;

use super::{PollEnd, Registry, Task};
use crate::util::loom::sync::Arc;

/// What a task cell needs of the runtime it runs on.
///
/// Called from the task's schedule function (`schedule`), from its
/// spawn (`schedule_new`), and from its future's wrapper around each poll
/// and at its end (the rest).
pub(crate) trait Schedule: Send + Sync + 'static {
    /// Its tasks are polled and dropped on one thread only (a `LocalSet`'s):
    /// their outputs need not be `Send`, and are kept to that thread
    /// (`Contained`). `Sized`-only, so that the trait stays `dyn`.
    fn one_thread() -> bool
    where
        Self: Sized,
    {
        false
    }

    /// A task was woken (or aborted while idle, so that its future gets
    /// dropped): put it where it will be run. `info.woken_while_running`
    /// says it woke itself during its poll (a yield).
    ///
    /// No `&self`: the task is what keeps its scheduler alive (through its
    /// metadata), and once it is handed to a queue it may run, complete
    /// and be freed on another thread. An implementation reaches itself
    /// through `TaskMeta::scheduler` (a borrow of `task`, so it ends
    /// before `task` moves) and takes its own reference
    /// (`TaskMeta::scheduler_arc`) if it still needs itself after the
    /// hand-off.
    ///
    /// # Safety
    ///
    /// `task`'s scheduler is a `Self` (it was made by `new_task` with an
    /// `Arc<Self>`).
    unsafe fn schedule(task: Task, info: ScheduleInfo)
    where
        Self: Sized;

    /// A task just spawned on this scheduler (its first schedule; the
    /// spawner holds the scheduler).
    fn schedule_new(&self, task: Task);

    /// Whether shutdown has begun: a spawn is refused, and a task polled
    /// once more wakes itself so that the shut-down scheduler drops it.
    fn is_shutdown(&self) -> bool;

    /// The registry of tasks that can be idle (`registry.rs`): a task
    /// registers at its first `Pending` and leaves it when its future is
    /// dropped.
    fn registry(&self) -> &Registry;

    /// The worker slot polling a task on this thread, if any: the
    /// registry's hint for the shard of a new entry.
    fn polling_worker(&self) -> Option<usize>;

    /// How the poll that just returned `Pending` ended, for the task's
    /// registry entry (its clock reading, and its length if timed).
    fn poll_end(&self) -> PollEnd;

    /// Whether the poll that just returned ran past the slow-poll
    /// threshold (the stall monitor marked it).
    fn poll_was_slow(&self) -> bool;

    /// Whether a slow `Default` task moves to the `Batch` lane.
    fn demotes_slow_tasks(&self) -> bool;

    /// A task's lane was lowered after a slow poll (for the counters).
    fn task_demoted(&self);

    /// A task's future was dropped (completed or cancelled).
    fn task_finished(&self);

    /// A task's poll panicked; the panic becomes its output either way
    /// (this applies the runtime's panic policy).
    fn task_panicked(&self, panic: &(dyn std::any::Any + Send));
}

/// A task's scheduler as its metadata holds it: one strong reference of
/// an `Arc<S>`, its type erased. Two words.
pub(crate) struct SchedulerRef(NonNull<dyn Schedule>);

// Sound: the pointee is `Send + Sync` (`Schedule`'s bounds) and this is a
// strong reference, as an `Arc<dyn Schedule>` is.
// SAFETY: as above.
unsafe impl Send for SchedulerRef {}
// SAFETY: as above.
unsafe impl Sync for SchedulerRef {}

impl SchedulerRef {
    pub(crate) fn new<S: Schedule>(scheduler: Arc<S>) -> SchedulerRef {
        let ptr: *const S = Arc::into_raw(scheduler);
        let ptr: *const dyn Schedule = ptr;
        // SAFETY: `into_raw` never returns null.
        SchedulerRef(unsafe { NonNull::new_unchecked(ptr.cast_mut()) })
    }

    /// The scheduler.
    ///
    /// # Safety
    ///
    /// `S` is the type this reference was made with.
    #[inline]
    pub(crate) unsafe fn get<S: Schedule>(&self) -> &S {
        // SAFETY: the data pointer is an `Arc<S>`'s (the caller's word),
        // alive while `self` is.
        unsafe { self.0.cast::<S>().as_ref() }
    }

    /// A new strong reference to the scheduler.
    ///
    /// # Safety
    ///
    /// As [`get`](Self::get).
    #[inline]
    pub(crate) unsafe fn arc<S: Schedule>(&self) -> Arc<S> {
        let ptr = self.0.cast::<S>().as_ptr().cast_const();
        // SAFETY: `ptr` came from `Arc::<S>::into_raw` (the caller's word)
        // and the strong reference `self` holds keeps it valid.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }
}

impl Drop for SchedulerRef {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Arc::into_raw` (in `new`), the fat
        // pointer the coercion to `Arc<dyn Schedule>` would have given; this
        // gives back the one reference `self` held.
        drop(unsafe { Arc::<dyn Schedule>::from_raw(self.0.as_ptr().cast_const()) });
    }
}

#[cfg(all(test, loom))]
mod test_scheduler;
#[cfg(all(test, loom))]
pub(crate) use test_scheduler::TestScheduler;

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;

    use async_task::ScheduleInfo;

    use super::{Schedule, SchedulerRef};
    use crate::runtime::task::{PollEnd, Registry, Task};

    /// A scheduler that only owns a registry (nothing is scheduled).
    struct Idle(Registry);

    impl Schedule for Idle {
        unsafe fn schedule(_: Task, _: ScheduleInfo) {
            unreachable!("nothing is scheduled here")
        }
        fn schedule_new(&self, _: Task) {
            unreachable!("nothing is scheduled here")
        }
        fn is_shutdown(&self) -> bool {
            false
        }
        fn registry(&self) -> &Registry {
            &self.0
        }
        fn polling_worker(&self) -> Option<usize> {
            None
        }
        fn poll_end(&self) -> PollEnd {
            PollEnd {
                clock_ns: 0,
                timed: None,
            }
        }
        fn poll_was_slow(&self) -> bool {
            false
        }
        fn demotes_slow_tasks(&self) -> bool {
            false
        }
        fn task_demoted(&self) {}
        fn task_finished(&self) {}
        fn task_panicked(&self, _: &(dyn std::any::Any + Send)) {}
    }

    /// A `SchedulerRef` holds exactly one strong reference: `arc` adds one
    /// the caller owns, and dropping the reference (with the task's
    /// metadata) gives its own back, through the erased type.
    #[test]
    fn a_scheduler_ref_holds_one_strong_reference() {
        let scheduler = Arc::new(Idle(Registry::new(1)));
        let erased = SchedulerRef::new(scheduler.clone());
        assert_eq!(Arc::strong_count(&scheduler), 2);
        // SAFETY: made from an `Arc<Idle>` just above.
        let own = unsafe { erased.arc::<Idle>() };
        assert!(Arc::ptr_eq(&own, &scheduler));
        // SAFETY: as above.
        assert!(std::ptr::eq(unsafe { erased.get::<Idle>() }, &*scheduler));
        assert_eq!(Arc::strong_count(&scheduler), 3);
        drop(own);
        drop(erased);
        assert_eq!(Arc::strong_count(&scheduler), 1);
    }
}
