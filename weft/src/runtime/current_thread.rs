//! The current-thread scheduler: every task of the runtime runs on the
//! thread inside its `block_on` (tokio's `current_thread` flavor).
//!
//! # Parts
//!
//! - [`CurrentThread`]: what every thread can reach (the runtime's
//!   [`Shared`], the inject queue, the slot of the [`Core`]). It is the
//!   scheduler type of the runtime's tasks: `schedule.rs` is its side of
//!   the task cell's `Schedule` seam.
//! - [`Core`]: the run queue, a `VecDeque` only its holder touches. One
//!   `block_on` at a time holds it (taken from `CurrentThread::core`, put
//!   back when that `block_on` returns or unwinds); that thread *drives*
//!   the runtime: it runs the tasks, fires the timers and waits in the
//!   reactor (`driver.rs`). Another thread's `block_on` meanwhile polls
//!   only its own future, and takes the core when it is put back.
//! - The engine parts are the multi-thread runtime's, reached through
//!   `Shared` (built with one worker slot and no stall monitor): the time
//!   driver and the reactor, the blocking pool, the task registry, the
//!   panic policy, the counters, the tokio bridge. The driving thread is
//!   slot 0 to them: it sleeps on slot 0's parker (in the poller while a
//!   source is registered), keeps time as keeper 0, and counts its polls
//!   in slot 0's counters. So a timer armed from another thread pokes it
//!   and the first registered socket moves it into the poller by the same
//!   handshakes as on the multi-thread runtime (`runtime/time/driver.rs`,
//!   `runtime/io/registrations.rs`); the rest of `Shared` (the inject and
//!   lane queues, the idle state, the ring of slot 0) stays unused.
//!
//! # Where a task goes
//!
//! Woken or spawned on the driving thread: the back of the core's queue
//! (no lock). Anywhere else (another thread, or this thread while it does
//! not drive, a `block_on` waiting for the core): the inject queue, under
//! its mutex, then an unpark of slot 0's parker, which wakes the driver
//! wherever it sleeps. The parker's token is taken under its own mutex, so
//! a push that lands after the driver last looked at the queue is seen:
//! the token makes the driver's next sleep return at once. No lock-free
//! protocol is added here; both locks are held only to move tasks, never
//! around user code (a task is dropped after its lock is released).
//!
//! # Invariants
//!
//! - Correctness: at most one thread drives at a time (the core is in the
//!   mutex or owned by exactly one `block_on`); tasks run only on the
//!   driving thread, and only while a `block_on` drives
//!   (`tests/current_thread.rs`).
//! - Correctness: once `close` has run, nothing is queued any more: the
//!   inject queue's `closed` flag is read and the push done under one lock,
//!   so a wake after shutdown drops its task (on the waking thread)
//!   instead of leaving it where nobody drains it.
//! - Fairness: the driver takes from the inject queue first every
//!   [`GLOBAL_QUEUE_INTERVAL`] tasks, polls its own future whenever it was
//!   woken, and looks at the timers and the reactor every
//!   [`EVENT_INTERVAL`] tasks (tokio's 31 and 61), so neither queue nor
//!   the `block_on` future starves the others.
//!
//! # Shutdown
//!
//! `Runtime::shutdown` sets the flag (`Shared::begin_shutdown`, which also
//! unparks slot 0), waits for the core (a `block_on` driving on another
//! thread gives it back at its next tick and goes on polling only its own
//! future), and then, with the runtime's context entered: closes the
//! inject queue and drops every queued task, then runs
//! `Shared::shutdown_drain` (the reactor shut, timers' wakers dropped,
//! every registered task woken, which `schedule` drops since the queue is
//! closed). Each pending future is dropped exactly once: a `Runnable` is
//! in exactly one queue or being run, and the registry hands each waker
//! out once.

mod driver;
mod schedule;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Weak;
use std::task::Waker;
use std::time::Instant;

use crate::runtime::scheduler::{Shared, drop_task};
use crate::runtime::task::Task;
use crate::util::locks::{StdCondvar, StdMutex};
use crate::util::loom::sync::Arc;

/// Tasks the driver runs between two looks at the timers and the reactor
/// (tokio's `event_interval`).
pub(crate) const EVENT_INTERVAL: u32 = 61;

/// Every this many tasks the driver takes from the inject queue before its
/// own queue (tokio's `global_queue_interval` for this flavor).
pub(crate) const GLOBAL_QUEUE_INTERVAL: u32 = 31;

/// The slot of `Shared` the driving thread stands in for.
pub(crate) const SLOT: usize = 0;

/// The scheduler every thread can reach.
pub(crate) struct CurrentThread {
    /// The runtime's engine parts (module doc).
    pub(crate) shared: Arc<Shared>,
    /// Tasks woken or spawned off the driving thread.
    inject: StdMutex<Inject>,
    /// The core, while no `block_on` drives.
    core: StdMutex<Option<Box<Core>>>,
    /// Signalled when the core is put back (for `shutdown`'s wait).
    core_back: StdCondvar,
    /// `block_on` calls on other threads waiting for the core.
    core_waiters: StdMutex<Vec<Waker>>,
    /// The local set, on a `LocalRuntime` (`runtime/local_runtime.rs`).
    local: std::sync::OnceLock<crate::runtime::LocalRuntimeSet>,
}

struct Inject {
    tasks: VecDeque<Task>,
    /// Shutdown has drained the queue: a push is refused.
    closed: bool,
}

/// The run queue: only the thread holding the core touches it.
pub(crate) struct Core {
    /// The scheduler this core belongs to (compared, never dereferenced).
    owner: *const CurrentThread,
    queue: std::cell::RefCell<VecDeque<Task>>,
    /// Tasks that woke themselves during their poll (a `yield_now`, an
    /// exhausted budget): queued again only after the timers and the
    /// reactor were looked at (`driver.rs`), as tokio defers them, so a
    /// task that yields in a loop runs once per turn of the loop.
    deferred: std::cell::RefCell<Vec<Task>>,
    /// Tasks run since the core was made, for the fairness intervals.
    tick: std::cell::Cell<u32>,
}

// Sound: `owner` is only compared (an identity), never dereferenced, and
// the other fields are `Send` (`Task` is); the core moves between the
// threads that take it from the mutex, one at a time.
// SAFETY: as above.
unsafe impl Send for Core {}

impl CurrentThread {
    /// The scheduler over `shared` (built with one slot and no monitor),
    /// recorded in `shared` so that spawns through it come here.
    pub(crate) fn new(shared: Arc<Shared>) -> Arc<CurrentThread> {
        let scheduler = Arc::new(CurrentThread {
            shared,
            inject: StdMutex::new(Inject {
                tasks: VecDeque::new(),
                closed: false,
            }),
            core: StdMutex::new(None),
            core_back: StdCondvar::new(),
            core_waiters: StdMutex::new(Vec::new()),
            local: std::sync::OnceLock::new(),
        });
        let core = Core {
            owner: Arc::as_ptr(&scheduler),
            queue: std::cell::RefCell::new(VecDeque::new()),
            deferred: std::cell::RefCell::new(Vec::new()),
            tick: std::cell::Cell::new(0),
        };
        *scheduler.core.lock().unwrap() = Some(Box::new(core));
        scheduler
            .shared
            .set_current_thread(Arc::downgrade(&scheduler));
        scheduler
    }

    /// Makes this the scheduler of a `LocalRuntime` (once, at its build).
    pub(crate) fn set_local(&self, set: crate::runtime::LocalRuntimeSet) {
        if self.local.set(set).is_err() {
            unreachable!("a runtime is made a LocalRuntime once, at its build");
        }
    }

    /// The local set, on a `LocalRuntime`.
    pub(crate) fn local(&self) -> Option<&crate::runtime::LocalRuntimeSet> {
        self.local.get()
    }

    /// The scheduler of `shared`'s runtime: `None` on a multi-thread
    /// runtime; `Some(None)` on a current-thread runtime already dropped;
    /// `Some(Some(scheduler))` otherwise.
    pub(crate) fn of(shared: &Shared) -> Option<Option<Arc<CurrentThread>>> {
        shared.current_thread().map(Weak::upgrade)
    }

    /// Queues `task` from off the driving thread and wakes the driver;
    /// after shutdown drops it instead (here, with no lock held).
    fn schedule_remote(&self, task: Task) {
        let refused = {
            let mut inject = self.inject.lock().unwrap_or_else(|e| e.into_inner());
            if inject.closed {
                Some(task)
            } else {
                inject.tasks.push_back(task);
                None
            }
        };
        match refused {
            Some(task) => drop_task(task),
            None => self.shared.unpark_slot(SLOT),
        }
    }

    fn pop_inject(&self) -> Option<Task> {
        self.inject
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .tasks
            .pop_front()
    }

    fn inject_is_empty(&self) -> bool {
        self.inject
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .tasks
            .is_empty()
    }

    /// Takes the core if no `block_on` drives and the runtime is not shut
    /// down.
    fn take_core(&self) -> Option<Box<Core>> {
        if self.shared.is_shutdown() {
            return None;
        }
        self.core.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Puts the core back and wakes the `block_on` calls waiting for it.
    /// After shutdown its queued tasks are dropped first (here, with no
    /// lock held), so a core put back late leaves nothing to run.
    fn put_core_back(&self, core: Box<Core>) {
        if self.shared.is_shutdown() {
            core.drop_tasks();
        }
        *self.core.lock().unwrap_or_else(|e| e.into_inner()) = Some(core);
        self.core_back.notify_all();
        let waiters =
            std::mem::take(&mut *self.core_waiters.lock().unwrap_or_else(|e| e.into_inner()));
        for waiter in waiters {
            let _ =
                crate::util::locks::call_user("a waker's wake (core put back)", || waiter.wake());
        }
    }

    /// Registers a `block_on` waiting for the core (woken when it is put
    /// back).
    fn wait_for_core(&self, waker: &Waker) {
        crate::util::locks::user_code("a waker's clone (waiting for the core)");
        let waker = waker.clone();
        let mut waiters = self.core_waiters.lock().unwrap_or_else(|e| e.into_inner());
        if !waiters.iter().any(|w| w.will_wake(&waker)) {
            waiters.push(waker);
        }
    }

    /// Runs `future` to completion on this thread, driving the runtime
    /// whenever no other `block_on` does. The caller has set up the
    /// runtime context.
    #[track_caller]
    pub(crate) fn block_on<F: Future>(self: &Arc<Self>, future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut core = self.take_core();
        loop {
            if let Some(taken) = core.take() {
                if let Some(output) = driver::drive(self, taken, future.as_mut()) {
                    return output;
                }
                // Shut down while driving: the core is back; only the
                // future is left to wait for.
            }
            match crate::runtime::block_on::run(
                &self.shared,
                driver::UntilCore::new(self, future.as_mut()),
            ) {
                driver::Waited::Done(output) => return output,
                driver::Waited::Core(taken) => core = Some(taken),
            }
        }
    }

    /// Shutdown, once the flag is set (module doc): waits for the core
    /// until `deadline`, then drops every queued and registered task with
    /// the runtime's context entered. On the driving thread itself (the
    /// runtime dropped inside its own `block_on`) it drains without the
    /// core, whose queue the driver drops when it puts it back.
    pub(crate) fn shut_down(&self, deadline: Option<Instant>) {
        let own_core = crate::runtime::context::with_current_thread_core(|core| {
            core.is_some_and(|core| std::ptr::eq(core.owner, self))
        });
        let core = if own_core {
            None
        } else {
            self.wait_for_core_back(deadline)
        };
        let _current = crate::runtime::context::set_current(self.shared.clone());
        let queued = {
            let mut inject = self.inject.lock().unwrap_or_else(|e| e.into_inner());
            inject.closed = true;
            std::mem::take(&mut inject.tasks)
        };
        for task in queued {
            drop_task(task);
        }
        if let Some(core) = &core {
            core.drop_tasks();
        }
        self.shared.shutdown_drain();
        if let Some(core) = core {
            *self.core.lock().unwrap_or_else(|e| e.into_inner()) = Some(core);
        }
    }

    /// Waits until the core is back (a driver on another thread leaves at
    /// its next tick once the flag is set) or `deadline` passes.
    fn wait_for_core_back(&self, deadline: Option<Instant>) -> Option<Box<Core>> {
        let mut core = self.core.lock().unwrap_or_else(|e| e.into_inner());
        while core.is_none() {
            core = match deadline {
                None => self.core_back.wait(core).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        break;
                    };
                    let waited = self.core_back.wait_timeout(core, left);
                    waited.unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
        core.take()
    }
}

impl Core {
    fn belongs_to(&self, scheduler: *const CurrentThread) -> bool {
        std::ptr::eq(self.owner, scheduler)
    }

    fn push(&self, task: Task) {
        self.queue.borrow_mut().push_back(task);
    }

    /// Keeps a task that woke itself during its poll for the next turn.
    fn defer(&self, task: Task) {
        self.deferred.borrow_mut().push(task);
    }

    /// Queues the deferred tasks; returns whether there were any.
    fn wake_deferred(&self) -> bool {
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        let any = !deferred.is_empty();
        self.queue.borrow_mut().extend(deferred);
        any
    }

    fn pop(&self) -> Option<Task> {
        self.queue.borrow_mut().pop_front()
    }

    fn is_empty(&self) -> bool {
        self.queue.borrow().is_empty()
    }

    fn has_deferred(&self) -> bool {
        !self.deferred.borrow().is_empty()
    }

    /// Drops every queued or deferred task (out of the queue first: a drop
    /// may wake another task of this core).
    fn drop_tasks(&self) {
        loop {
            self.wake_deferred();
            let tasks = std::mem::take(&mut *self.queue.borrow_mut());
            if tasks.is_empty() {
                return;
            }
            for task in tasks {
                drop_task(task);
            }
        }
    }
}
