//! The current-thread scheduler's side of the task cell's `Schedule` seam
//! (`runtime/task/schedule.rs`).
//!
//! - A task woken or spawned on the thread driving its runtime goes to the
//!   back of the core's queue (lanes are ignored: one thread runs every
//!   task, in order; a lane only names the task); one that woke itself
//!   during its poll (a yield) to the core's deferred list, queued after
//!   the driver's next look at the timers and the reactor.
//! - Anywhere else: the inject queue and an unpark of the driver
//!   (`CurrentThread::schedule_remote`).
//!
//! The rest is the runtime's `Shared`: its registry, shutdown flag and
//! panic policy. Nothing here is slow-poll aware (no stall monitor on this
//! flavor): no task is demoted.

use async_task::ScheduleInfo;

use super::{CurrentThread, SLOT};
use crate::runtime::context;
use crate::runtime::task::{PollEnd, Registry, Schedule, Task};

impl CurrentThread {
    /// Queues `task` on this thread's core if it drives this runtime (to
    /// the deferred list if it woke itself during its poll), and gives it
    /// back otherwise.
    #[inline]
    fn schedule_local(scheduler: *const CurrentThread, task: Task, yielded: bool) -> Option<Task> {
        context::with_current_thread_core(|core| match core {
            Some(core) if core.belongs_to(scheduler) => {
                if yielded {
                    core.defer(task);
                } else {
                    core.push(task);
                }
                None
            }
            _ => Some(task),
        })
    }
}

impl Schedule for CurrentThread {
    unsafe fn schedule(task: Task, info: ScheduleInfo) {
        // SAFETY: the caller's: the task's scheduler is a `CurrentThread`.
        let scheduler: *const CurrentThread =
            unsafe { task.metadata().scheduler::<CurrentThread>() };
        let Some(task) = CurrentThread::schedule_local(scheduler, task, info.woken_while_running)
        else {
            return;
        };
        // Pushed, the task may run, complete and free its metadata on the
        // driving thread: hold the scheduler through a reference of our
        // own for the rest of the call.
        // SAFETY: as above.
        let scheduler = unsafe { task.metadata().scheduler_arc::<CurrentThread>() };
        scheduler.schedule_remote(task);
    }

    fn schedule_new(&self, task: Task) {
        let Some(task) = CurrentThread::schedule_local(self, task, false) else {
            self.shared.remotes[SLOT].counters.spawned_local.incr();
            return;
        };
        self.shared.count_remote_spawn();
        self.schedule_remote(task);
    }

    #[inline]
    fn is_shutdown(&self) -> bool {
        self.shared.is_shutdown()
    }

    #[inline]
    fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    #[inline]
    fn polling_worker(&self) -> Option<usize> {
        Some(SLOT)
    }

    fn poll_end(&self) -> PollEnd {
        PollEnd {
            clock_ns: self.shared.registry.clock_ns(std::time::Instant::now()),
            timed: None,
        }
    }

    #[inline]
    fn poll_was_slow(&self) -> bool {
        false
    }

    #[inline]
    fn demotes_slow_tasks(&self) -> bool {
        false
    }

    fn task_demoted(&self) {}

    #[inline]
    fn task_finished(&self) {
        self.shared.count_task_finished();
    }

    fn task_panicked(&self, panic: &(dyn std::any::Any + Send)) {
        self.shared.task_panicked(panic);
    }
}
