//! `LocalSet` and `spawn_local`: tasks that need not be `Send`, run on the
//! thread that owns their set, whenever that set is polled (tokio's).
//!
//! # Parts
//!
//! - [`LocalSet`]: the owner, `!Send`; polling it (as a future, through
//!   `run_until` or `block_on`) runs its tasks on this thread.
//! - `LocalShared`: what every thread can reach (a task's waker may be
//!   sent anywhere): the queue of scheduled tasks, the waker of whoever
//!   polls the set, the set's own registry and its live-task count. It is
//!   the scheduler of the set's tasks, the task cell's third `Schedule`
//!   implementation (a wake from any thread pushes to the queue and wakes
//!   the poller).
//! - The thread-local *current set* ([`LocalSet::enter`], and while the
//!   set is polled): what `task::spawn_local` spawns on.
//!
//! Tasks are made with async-task's `spawn_local`, which checks that every
//! poll and the drop of the future happen on the spawning thread (and
//! panics otherwise). So the rules here keep them there:
//!
//! # Invariants
//!
//! - Correctness: a task's future is polled and dropped only on the set's
//!   thread. Polls come from `tick`, which only the owner (`!Send`) calls.
//!   Drops: a cancelled task's future is dropped where its `Runnable` is
//!   dropped, and `push` never drops one (it queues it, also while the set
//!   closes); the set's drop then drains the queue on its thread until no
//!   task is alive (`live == 0`), so a `Runnable` made by a wake on another
//!   thread during the drop is dropped here too. After that no future is
//!   left, so no wake can make a `Runnable` any more, and the queue is
//!   closed for good.
//! - Correctness: no user code under the queue's lock: a waker is cloned
//!   before and woken or dropped after it, a task dropped after it.
//! - Fairness: a tick runs at most [`MAX_TASKS_PER_TICK`] tasks (tokio's
//!   61), then the set asks to be polled again, so the future polling it
//!   (and the runtime's other tasks) are not starved.
//!
//! The queue is one mutex-protected `VecDeque` for wakes from this thread
//! and from others alike (tokio keeps a lock-free local queue beside a
//! locked remote one): no lock-free protocol, at the cost of an
//! uncontended lock per push and pop. The hand-off a remote wake relies on
//! (the poller's waker is stored before the queue is looked at, and a
//! push takes it under the same lock, so a wake that lands while the set
//! looks is never lost) has a loom model: `local/loom_tests.rs`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use async_task::ScheduleInfo;

use super::{JoinHandle, PollEnd, Registry, Schedule, SpawnOptions, Task};
use crate::util::locks::Mutex;
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Tasks a tick runs before the set yields to whoever polls it.
const MAX_TASKS_PER_TICK: usize = 61;

/// A set of tasks that run on the thread that owns the set (tokio's
/// `task::LocalSet`).
///
/// Tasks spawned on it ([`spawn_local`](Self::spawn_local), or
/// [`task::spawn_local`](crate::task::spawn_local) while the set is
/// entered) need not be `Send`: they are polled only while the set is
/// polled, on its thread, by awaiting it, by [`run_until`](Self::run_until)
/// or by [`block_on`](Self::block_on). It works inside either runtime
/// flavor: on a multi-thread runtime, in `block_on` or inside one task.
///
/// Dropping the set drops every task it still holds, on its thread.
///
/// ```
/// use std::rc::Rc;
/// use weft::task::{self, LocalSet};
///
/// let rt = weft::runtime::Runtime::new()?;
/// let local = LocalSet::new();
/// let shared = Rc::new(5); // not `Send`
/// let sum = local.block_on(&rt, async move {
///     let inner = shared.clone();
///     task::spawn_local(async move { *inner + 1 }).await.unwrap()
/// });
/// assert_eq!(sum, 6);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// It is not `Send`:
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<weft::task::LocalSet>();
/// ```
pub struct LocalSet {
    shared: Arc<LocalShared>,
    /// `!Send` and `!Sync`: its tasks run on this thread.
    _not_send: PhantomData<*const ()>,
}

/// A set's state that its tasks' wakers reach from any thread.
pub(crate) struct LocalShared {
    queue: Mutex<Queue>,
    /// Tasks that can be idle, for the set's drop (`registry.rs`).
    registry: Registry,
    /// Tasks spawned whose future is not dropped yet.
    live: AtomicUsize,
    /// The set is being dropped: spawns are refused.
    closing: AtomicBool,
}

struct Queue {
    tasks: VecDeque<Task>,
    /// Whoever polled the set last: woken by a push.
    waker: Option<Waker>,
}

thread_local! {
    /// The set entered on this thread (`LocalSet::enter`, or polled).
    static CURRENT: RefCell<Option<Arc<LocalShared>>> = const { RefCell::new(None) };
}

/// Spawns a `!Send` future on the current [`LocalSet`] (tokio's
/// `task::spawn_local`).
///
/// # Panics
///
/// Outside a `LocalSet` (one being polled, or entered with
/// [`LocalSet::enter`]) and a [`LocalRuntime`](crate::runtime::LocalRuntime)
/// (its `block_on`, a task on it, or entered), with tokio's message; on a
/// thread other than the one that built the `LocalRuntime` in context.
///
/// ```
/// use std::rc::Rc;
///
/// let rt = weft::runtime::Builder::new_current_thread().build()?;
/// let local = weft::task::LocalSet::new();
/// let value = local.block_on(&rt, async {
///     let rc = Rc::new(41);
///     weft::task::spawn_local(async move { *rc + 1 }).await.unwrap()
/// });
/// assert_eq!(value, 42);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// The output need not be `Send` either; the handle is then `!Send`, so
/// the output is taken on the set's thread:
///
/// ```compile_fail
/// fn assert_send<T: Send>(_: &T) {}
/// let local = weft::task::LocalSet::new();
/// let handle = local.spawn_local(async { std::rc::Rc::new(1) });
/// assert_send(&handle);
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let options = SpawnOptions::plain(Location::caller());
    if let Some(shared) = CURRENT.with(|current| current.borrow().clone()) {
        return LocalShared::spawn(&shared, future, options);
    }
    // No `LocalRuntime` under loom (no current-thread runtime there).
    #[cfg(not(loom))]
    let on_runtime = crate::runtime::spawn_local_on_current(future, options);
    #[cfg(loom)]
    let on_runtime: Result<JoinHandle<F::Output>, F> = Err(future);
    match on_runtime {
        Ok(handle) => handle,
        Err(_) => panic!(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
        ),
    }
}

/// Whether a `LocalSet` is entered on this thread (being polled, or
/// under `LocalSet::enter`).
pub(crate) fn is_entered() -> bool {
    CURRENT
        .try_with(|current| current.borrow().is_some())
        .unwrap_or(false)
}

impl LocalSet {
    /// A new, empty set owned by this thread.
    pub fn new() -> LocalSet {
        LocalSet {
            shared: Arc::new(LocalShared {
                queue: Mutex::new(Queue {
                    tasks: VecDeque::new(),
                    waker: None,
                }),
                registry: Registry::new(1),
                live: AtomicUsize::new(0),
                closing: AtomicBool::new(false),
            }),
            _not_send: PhantomData,
        }
    }

    /// Spawns a `!Send` future on this set, from inside the set or not: it
    /// runs once the set is polled.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        LocalShared::spawn(
            &self.shared,
            future,
            SpawnOptions::plain(Location::caller()),
        )
    }

    /// Runs `future` on `rt` (`Runtime::block_on`) with this set's tasks
    /// polled beside it, until `future` completes.
    ///
    /// # Panics
    ///
    /// As [`Runtime::block_on`](crate::runtime::Runtime::block_on): inside
    /// an asynchronous context.
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &crate::runtime::Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }

    /// Runs `future` with this set's tasks polled beside it, until
    /// `future` completes (tasks still pending stay in the set).
    pub async fn run_until<F: Future>(&self, future: F) -> F::Output {
        RunUntil {
            set: self,
            future: std::pin::pin!(future),
        }
        .await
    }

    /// The state its tasks' wakers reach (for a `LocalRuntime`).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn shared(&self) -> &Arc<LocalShared> {
        &self.shared
    }

    /// Makes this set the current one until the guard drops, so that
    /// [`task::spawn_local`](crate::task::spawn_local) spawns on it.
    pub fn enter(&self) -> LocalEnterGuard {
        // During the thread's teardown (a set kept in a thread-local and
        // dropped there) the current-set slot may be gone: nothing is
        // entered then, and the drop still drops every task.
        let previous = CURRENT
            .try_with(|current| current.replace(Some(self.shared.clone())))
            .ok()
            .flatten();
        LocalEnterGuard {
            previous,
            _not_send: PhantomData,
        }
    }

    /// Runs up to [`MAX_TASKS_PER_TICK`] tasks with the set entered;
    /// returns whether more are queued.
    fn tick(&self, waker: &Waker) -> bool {
        self.shared.set_waker(waker);
        let _entered = self.enter();
        for _ in 0..MAX_TASKS_PER_TICK {
            let Some(task) = self.shared.pop() else {
                return false;
            };
            task.metadata().check_published();
            let saved = crate::task::coop::reset();
            let _ = crate::util::locks::call_user("a task's poll (LocalSet)", move || task.run());
            crate::task::coop::restore(saved);
        }
        !self.shared.queue_is_empty()
    }
}

impl Default for LocalSet {
    fn default() -> LocalSet {
        LocalSet::new()
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet")
            .field("live_tasks", &self.shared.live.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Completes once every task of the set has finished (tokio's).
impl Future for LocalSet {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.tick(cx.waker()) {
            cx.waker().wake_by_ref();
            Poll::Pending
        } else if self.shared.live.load(Ordering::Acquire) == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for LocalSet {
    /// Drops every task still in the set, on this thread (module doc).
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.closing.store(true, Ordering::Release);
        let _entered = self.enter();
        // Each registered task is woken into the queue, drained below.
        for waker in shared.registry.close() {
            let _ = crate::util::locks::call_user("a task's wake (LocalSet drop)", move || {
                waker.wake()
            });
        }
        loop {
            let tasks = std::mem::take(&mut shared.lock().tasks);
            let drained = !tasks.is_empty();
            for task in tasks {
                crate::runtime::scheduler::drop_task(task);
            }
            if shared.live.load(Ordering::Acquire) == 0 {
                break;
            }
            if !drained {
                // A wake on another thread is between making its task's
                // `Runnable` and pushing it.
                std::thread::yield_now();
            }
        }
        let waker = shared.lock().waker.take();
        drop(waker);
    }
}

/// Returned by [`LocalSet::enter`]: the previous current set comes back
/// when it drops.
#[must_use = "the set is left as soon as the guard is dropped"]
pub struct LocalEnterGuard {
    previous: Option<Arc<LocalShared>>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for LocalEnterGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let _ = CURRENT.try_with(|current| current.replace(previous));
    }
}

impl fmt::Debug for LocalEnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEnterGuard").finish_non_exhaustive()
    }
}

/// `LocalSet::run_until`'s future: the caller's future first, then a tick.
struct RunUntil<'a, F> {
    set: &'a LocalSet,
    future: Pin<&'a mut F>,
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        {
            let _entered = self.set.enter();
            if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
                return Poll::Ready(output);
            }
        }
        if self.set.tick(cx.waker()) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

impl LocalShared {
    fn lock(&self) -> crate::util::locks::MutexGuard<'_, Queue> {
        // A push or a pop: never left half done.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn spawn<F>(
        this: &Arc<LocalShared>,
        future: F,
        options: SpawnOptions,
    ) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        if this.closing.load(Ordering::Acquire) {
            return JoinHandle::cancelled_at_spawn(future);
        }
        let (runnable, handle) = super::new_local_task(this, future, options);
        this.live.fetch_add(1, Ordering::AcqRel);
        this.push(runnable);
        handle
    }

    /// Queues `task` and wakes whoever polls the set (outside the lock).
    fn push(&self, task: Task) {
        let waker = {
            let mut queue = self.lock();
            queue.tasks.push_back(task);
            queue.waker.take()
        };
        if let Some(waker) = waker {
            let _ =
                crate::util::locks::call_user("a waker's wake (LocalSet)", move || waker.wake());
        }
    }

    fn pop(&self) -> Option<Task> {
        self.lock().tasks.pop_front()
    }

    fn queue_is_empty(&self) -> bool {
        self.lock().tasks.is_empty()
    }

    /// Keeps `waker` to wake at the next push (cloned and the old one
    /// dropped outside the lock).
    fn set_waker(&self, waker: &Waker) {
        crate::util::locks::user_code("a waker's clone (LocalSet)");
        let waker = waker.clone();
        let old = self.lock().waker.replace(waker);
        drop(old);
    }
}

impl Schedule for LocalShared {
    fn one_thread() -> bool {
        true
    }

    unsafe fn schedule(task: Task, _info: ScheduleInfo) {
        // Our own reference: once pushed, the task may run and free its
        // metadata on the set's thread.
        // SAFETY: the caller's: the task's scheduler is a `LocalShared`.
        let shared = unsafe { task.metadata().scheduler_arc::<LocalShared>() };
        shared.push(task);
    }

    fn schedule_new(&self, task: Task) {
        self.push(task);
    }

    #[inline]
    fn is_shutdown(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    #[inline]
    fn registry(&self) -> &Registry {
        &self.registry
    }

    #[inline]
    fn polling_worker(&self) -> Option<usize> {
        None
    }

    fn poll_end(&self) -> PollEnd {
        PollEnd {
            clock_ns: self.registry.clock_ns(std::time::Instant::now()),
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
        self.live.fetch_sub(1, Ordering::AcqRel);
    }

    /// The panic is the task's output; a set has no panic policy.
    fn task_panicked(&self, _panic: &(dyn std::any::Any + Send)) {}
}

#[cfg(all(test, loom))]
mod loom_tests;
