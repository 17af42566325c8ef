//! The loom models' scheduler for the task cell (`cfg(all(test, loom))`):
//! one FIFO queue behind a loom mutex, which the model's threads pop and
//! run themselves, and a registry. No worker, no slot, no ring, no
//! shutdown, no monitor: the models of the join cell and of `JoinSet`
//! check the cell and its handles, and build no runtime.

use std::collections::VecDeque;

use async_task::ScheduleInfo;

use super::Schedule;
use crate::runtime::task::{PollEnd, Registry, Task};
use crate::util::locks::Mutex;
use crate::util::loom::sync::Arc;

/// A queue of scheduled tasks and a registry (see the module doc).
pub(crate) struct TestScheduler {
    queue: Mutex<VecDeque<Task>>,
    registry: Registry,
}

impl TestScheduler {
    /// A scheduler whose registry has the shards of a runtime with
    /// `num_workers` workers (`loom_support::realign_registry_round_robin`
    /// takes the same number).
    pub(crate) fn new(num_workers: usize) -> Arc<TestScheduler> {
        Arc::new(TestScheduler {
            queue: Mutex::new(VecDeque::new()),
            registry: Registry::new(num_workers),
        })
    }

    /// Takes the task at the front of the queue, to run it.
    pub(crate) fn pop(&self) -> Option<Task> {
        self.queue.lock().unwrap().pop_front()
    }

    /// Whether no task is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    fn push(&self, task: Task) {
        self.queue.lock().unwrap().push_back(task);
    }
}

impl Schedule for TestScheduler {
    unsafe fn schedule(task: Task, _info: ScheduleInfo) {
        // Our own reference: once pushed, the task may run and be freed on
        // another thread before the queue's lock is released.
        // SAFETY: the caller's: the task's scheduler is a `TestScheduler`.
        let this = unsafe { task.metadata().scheduler_arc::<TestScheduler>() };
        this.push(task);
    }

    fn schedule_new(&self, task: Task) {
        self.push(task);
    }

    fn is_shutdown(&self) -> bool {
        false
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn polling_worker(&self) -> Option<usize> {
        None
    }

    fn poll_end(&self) -> PollEnd {
        PollEnd {
            clock_ns: self.registry.clock_ns(std::time::Instant::now()),
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

    fn task_panicked(&self, _panic: &(dyn std::any::Any + Send)) {}
}
