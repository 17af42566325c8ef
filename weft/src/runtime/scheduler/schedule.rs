//! Where the multi-thread scheduler puts a woken or spawned task, and
//! what else the task cell asks of it: its side of the seam
//! (`runtime/task/schedule.rs`).
//!
//! - A `Latency` or `Batch` task goes to its lane's runtime-wide queue
//!   (`Shared::schedule_lane`), wherever it was woken or spawned.
//! - A `Default` task woken or spawned on a worker of its own runtime goes
//!   to that worker (`Core::schedule_local`): the LIFO slot, so a task
//!   woken by the running one runs next in the same cache; the back of
//!   the ring for a task woken while it was running (a yield), which also
//!   marks the worker `yielded` so its next tick drains outside work first.
//! - Anywhere else (another thread, another runtime's worker, a closing
//!   worker: `Core::accepts_local`): the inject queue and a wake of a
//!   sleeper if `idle.rs`'s rule 1 says so (`Shared::schedule_remote`).
//!
//! A spawn takes the same roads and counts itself (on the worker, or on
//! the runtime's remote counter) for the `live_tasks` metric.

use async_task::ScheduleInfo;

use super::Shared;
use crate::runtime::context;
use crate::runtime::task::{Lane, PollEnd, Registry, Schedule, Task};

impl Schedule for Shared {
    unsafe fn schedule(task: Task, info: ScheduleInfo) {
        let lane = task.metadata().lane();
        if lane != Lane::Default {
            // The lanes' queues are runtime-wide: no local fast path. The
            // task may complete and free its metadata once pushed: hold the
            // runtime through a reference of our own for the rest of the
            // call.
            // SAFETY: the caller's: the task's scheduler is a `Shared`.
            let shared = unsafe { task.metadata().scheduler_arc::<Shared>() };
            shared.schedule_lane(task, lane);
            return;
        }
        // SAFETY: as above.
        let shared: *const Shared = unsafe { task.metadata().scheduler::<Shared>() };
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
        // As for a lane: our own reference for the rest of the call.
        // SAFETY: as above.
        let shared = unsafe { task.metadata().scheduler_arc::<Shared>() };
        shared.schedule_remote(task);
    }

    fn schedule_new(&self, task: Task) {
        let lane = task.metadata().lane();
        if lane != Lane::Default {
            self.count_remote_spawn();
            self.schedule_lane(task, lane);
            return;
        }
        let on_worker = context::with_core(|core| match core {
            Some(core) if core.accepts_local(self) => {
                core.count_spawn();
                core.schedule_local(task, false);
                None
            }
            _ => Some(task),
        });
        if let Some(task) = on_worker {
            self.count_remote_spawn();
            self.schedule_remote(task);
        }
    }

    #[inline]
    fn is_shutdown(&self) -> bool {
        Shared::is_shutdown(self)
    }

    #[inline]
    fn registry(&self) -> &Registry {
        &self.registry
    }

    #[inline]
    fn polling_worker(&self) -> Option<usize> {
        context::with_core(|core| core.map(|core| core.index))
    }

    /// No clock read unless the worker times this poll, which it would do
    /// anyway (`Core::poll_end`).
    #[inline]
    fn poll_end(&self) -> PollEnd {
        context::with_core(|core| match core {
            Some(core) if core.accepts_local(self) => core.poll_end(),
            // Polled off this runtime's workers (not done today; a worker
            // closing its core polls nothing).
            _ => PollEnd {
                clock_ns: self.registry.clock_ns(std::time::Instant::now()),
                timed: None,
            },
        })
    }

    #[inline]
    fn poll_was_slow(&self) -> bool {
        context::with_core(|core| core.is_some_and(|core| core.poll_was_slow()))
    }

    #[inline]
    fn demotes_slow_tasks(&self) -> bool {
        self.config.demote_slow_tasks
    }

    fn task_demoted(&self) {
        context::with_core(|core| {
            if let Some(core) = core {
                core.count_demotion();
            }
        });
    }

    #[inline]
    fn task_finished(&self) {
        self.count_task_finished();
    }

    fn task_panicked(&self, panic: &(dyn std::any::Any + Send)) {
        Shared::task_panicked(self, panic);
    }
}
