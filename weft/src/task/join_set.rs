//! `JoinSet`: a set of tasks whose results are taken in completion order.
//!
//! # How completion order is kept
//!
//! Each member is a slot holding the task's [`JoinHandle`] and a waker of
//! its own (`ready::Member`). When a task is added, its handle is polled
//! once with that waker, which makes it the task's awaiter: from then on
//! the task's completion, or the end of its cancellation, wakes the member,
//! and the wake appends it to the set's ready list (`ready.rs`). `join_next`
//! takes members from the front of that list and polls only them: the
//! members are returned in the order their tasks finished, and a call costs
//! the members woken, not the set's size. A task that had already finished
//! when it was added is on the list at once, with its result.
//!
//! # Invariants
//!
//! - A slot's member is its task's only awaiter: the set is the handle's
//!   only poller (`join_next`, `try_join_next`, the insertion poll), and
//!   an [`AbortHandle`]'s polls use the waker the set last polled with
//!   (`join/cell.rs`).
//! - A popped member is checked against its slot by identity, not only by
//!   index: a slot emptied and reused, or a set detached, leaves old
//!   members that may still be woken (their tasks keep them as awaiters);
//!   `detach_all` gives the set a new ready list, and the old one is freed
//!   (members point to their list weakly, `ready.rs`), so their wakes
//!   land nowhere.
//! - No lock is held while user code can run. The set's slots are reached
//!   through `&mut self` and take no lock; the ready list's lock is never
//!   held across a wake, a poll or a drop (`ready.rs`); `abort_all` and the
//!   set's drop call into the tasks' handles, whose own locks are never
//!   held across a call into async-task (`join/cell.rs`). So a member's
//!   future whose destructor spawns, aborts another member or reads the
//!   runtime's metrics, run by an abort or a shutdown, cannot deadlock
//!   (`tests/joinset.rs`).
//!
//! The loom models in `join_set/loom_tests.rs` race `join_next` against a
//! completion, an abort through an `AbortHandle`, `abort_all` and the
//! set's drop.

mod ready;

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::{AbortHandle, Id, JoinError, JoinHandle};
use crate::runtime::Handle;
use crate::runtime::SpawnOptions;
use crate::runtime::context;
use crate::task::coop;
use ready::{Member, ReadyList};

/// Pending members `poll_join_next` polls in one call before it yields.
const POLLS_BEFORE_YIELD: usize = 32;

/// A collection of tasks spawned on a weft runtime, whose results are
/// taken in the order the tasks finish (tokio's `JoinSet`).
///
/// Every task is aborted when the set is dropped; [`detach_all`] lets
/// them run on instead. [`join_next`] gives the next result as soon as
/// any member finishes, and `None` once the set is empty.
///
/// ```
/// use std::time::Duration;
/// use weft::task::JoinSet;
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let mut set = JoinSet::new();
///     for delay in [30u64, 10, 20] {
///         set.spawn(async move {
///             weft::time::sleep(Duration::from_millis(delay)).await;
///             delay
///         });
///     }
///     let mut order = Vec::new();
///     while let Some(result) = set.join_next().await {
///         order.push(result.unwrap());
///     }
///     assert_eq!(order, [10, 20, 30]);
/// });
/// ```
///
/// [`detach_all`]: Self::detach_all
/// [`join_next`]: Self::join_next
pub struct JoinSet<T> {
    slots: Vec<Option<Slot<T>>>,
    /// Empty slots, for reuse.
    free: Vec<usize>,
    len: usize,
    ready: Arc<ReadyList>,
}

// A set is never pinned structurally (its results move out by value), so
// it is `Unpin` whatever `T` is, as tokio's is: a stream or future holding
// one stays `Unpin`.
impl<T> Unpin for JoinSet<T> {}

// Sound: a shared `&JoinSet` reaches no `T`: the methods that take
// `&self` (`len`, `is_empty`, `Debug`) read counts only; every access to
// a result (`early`, the handles' outputs) takes `&mut self`. So sharing a
// set between threads shares no `T`, and only `T: Send` (the results
// move to whoever owns the set) is needed, as for tokio's `JoinSet`.
// SAFETY: `&JoinSet` gives access to no `T` (above).
unsafe impl<T: Send> Sync for JoinSet<T> {}

struct Slot<T> {
    handle: JoinHandle<T>,
    member: Arc<Member>,
    /// `member` as a `Waker`, made once.
    waker: Waker,
    /// The result, if the task had finished when it was added.
    early: Option<Result<T, JoinError>>,
}

impl<T> JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set = weft::task::JoinSet::<u32>::new();
    /// assert!(set.is_empty());
    /// ```
    pub fn new() -> JoinSet<T> {
        JoinSet {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            ready: ReadyList::new(),
        }
    }

    /// The number of tasks in the set: spawned and not yet returned by
    /// [`join_next`](Self::join_next) or
    /// [`try_join_next`](Self::try_join_next), finished or not.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_on(async { 1 }, rt.handle());
    /// set.spawn_on(async { 2 }, rt.handle());
    /// assert_eq!(set.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set has no task.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_on(async {}, rt.handle());
    /// assert!(!set.is_empty());
    /// rt.block_on(set.join_next());
    /// assert!(set.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Aborts every task in the set, as [`JoinHandle::abort`] does. The
    /// tasks stay in the set: [`join_next`](Self::join_next) returns each
    /// one, as a cancelled [`JoinError`] (or its output, if it had
    /// completed first).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// for _ in 0..3 {
    ///     set.spawn_on(std::future::pending::<()>(), rt.handle());
    /// }
    /// set.abort_all();
    /// rt.block_on(async {
    ///     while let Some(result) = set.join_next().await {
    ///         assert!(result.unwrap_err().is_cancelled());
    ///     }
    /// });
    /// ```
    pub fn abort_all(&mut self) {
        // An abort drops an idle task's future, and wakes its awaiter.
        crate::util::locks::user_code("a JoinSet's abort (a task's future's drop)");
        for slot in self.slots.iter().flatten() {
            slot.handle.abort();
        }
    }

    /// Removes every task from the set without aborting it: each runs on
    /// as if its `JoinHandle` had been dropped.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    ///
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let done = Arc::new(AtomicBool::new(false));
    /// let mut set = weft::task::JoinSet::new();
    /// let flag = done.clone();
    /// set.spawn_on(async move { flag.store(true, Ordering::SeqCst) }, rt.handle());
    /// set.detach_all();
    /// assert!(set.is_empty());
    /// while !done.load(Ordering::SeqCst) {
    ///     std::thread::yield_now();
    /// }
    /// ```
    pub fn detach_all(&mut self) {
        self.empty();
        // The old members may still be woken by their tasks: the old list
        // goes, and their wakes with it.
        self.ready = ReadyList::new();
    }

    /// Drops every member's handle (detaching its task) and empties the
    /// ready list.
    fn empty(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        self.free.clear();
        self.len = 0;
        let (woken, waiter) = self.ready.clear();
        // Dropped here, with no lock held: dropping a handle can drop a
        // completed task's output, and the waiter is the user's waker.
        crate::util::locks::user_code("a JoinSet's drop of its members (outputs, a waker)");
        drop(slots);
        drop(woken);
        drop(waiter);
    }

    /// Waits for the next task to finish and returns its result: `Ok` with
    /// its output, or a [`JoinError`] if it panicked or was cancelled.
    /// `None` if the set is empty. Results come in the order the tasks
    /// finished.
    ///
    /// Cancel safety: dropping the future before it completes loses no
    /// result; the next call finds it.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     set.spawn(async { "ok" });
    ///     set.spawn(async { panic!("boom") });
    ///     let mut panics = 0;
    ///     while let Some(result) = set.join_next().await {
    ///         match result {
    ///             Ok(text) => assert_eq!(text, "ok"),
    ///             Err(error) => panics += usize::from(error.is_panic()),
    ///         }
    ///     }
    ///     assert_eq!(panics, 1);
    /// });
    /// ```
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// As [`join_next`](Self::join_next), with the finished task's id
    /// (tokio's `join_next_with_id`; a failed task's id is its
    /// [`JoinError::id`]).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     let id = set.spawn(async { 1 }).id();
    ///     assert_eq!(set.join_next_with_id().await.unwrap().unwrap(), (id, 1));
    /// });
    /// ```
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// The poll behind [`join_next`](Self::join_next), for hand-written
    /// futures: `Ready(None)` if the set is empty, `Ready(Some(result))`
    /// for a finished task, otherwise `Pending` with `cx`'s waker woken
    /// when a task finishes.
    ///
    /// ```
    /// use std::task::Poll;
    ///
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     set.spawn(async { 5 });
    ///     let five = std::future::poll_fn(|cx| match set.poll_join_next(cx) {
    ///         Poll::Ready(result) => Poll::Ready(result.unwrap().unwrap()),
    ///         Poll::Pending => Poll::Pending,
    ///     })
    ///     .await;
    ///     assert_eq!(five, 5);
    /// });
    /// ```
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|next| next.map(|result| result.map(|(_, value)| value)))
    }

    /// The poll behind [`join_next_with_id`](Self::join_next_with_id), as
    /// [`poll_join_next`](Self::poll_join_next).
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        // Each member's poll spends from the same budget; checked here so
        // that a spent budget yields once instead of re-queueing members.
        if coop::poll_budget(cx).is_pending() {
            return Poll::Pending;
        }
        for _ in 0..POLLS_BEFORE_YIELD {
            let Some(member) = self.ready.pop_or_wait(cx.waker()) else {
                return Poll::Pending;
            };
            if let Poll::Ready((id, result)) = self.poll_member(&member) {
                return Poll::Ready(Some(result.map(|value| (id, value))));
            }
        }
        // Many members woke without finishing (their cancellation still in
        // progress): let other tasks run before polling more.
        crate::util::locks::user_code("a waker's wake (a JoinSet yielding)");
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Returns the result of a task that has finished, if any, without
    /// waiting; `None` if no task has finished (or the set is empty).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_on(async { 3 }, rt.handle());
    /// let three = loop {
    ///     if let Some(result) = set.try_join_next() {
    ///         break result.unwrap();
    ///     }
    ///     std::thread::yield_now();
    /// };
    /// assert_eq!(three, 3);
    /// assert!(set.try_join_next().is_none());
    /// ```
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id()
            .map(|result| result.map(|(_, value)| value))
    }

    /// As [`try_join_next`](Self::try_join_next), with the finished
    /// task's id (tokio's `try_join_next_with_id`).
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        loop {
            let member = self.ready.pop()?;
            // Not a task's own progress: neither refused nor counted by
            // the cooperative budget.
            if let Poll::Ready((id, result)) = coop::run_unconstrained(|| self.poll_member(&member))
            {
                return Some(result.map(|value| (id, value)));
            }
        }
    }

    /// Aborts every task and waits until each one's future has been
    /// dropped (or it completed); the set is then empty. The results are
    /// dropped.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// struct CountDrop(Arc<AtomicUsize>);
    /// impl Drop for CountDrop {
    ///     fn drop(&mut self) {
    ///         self.0.fetch_add(1, Ordering::SeqCst);
    ///     }
    /// }
    ///
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let drops = Arc::new(AtomicUsize::new(0));
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     for _ in 0..10 {
    ///         let guard = CountDrop(drops.clone());
    ///         set.spawn(async move {
    ///             let _guard = guard;
    ///             std::future::pending::<()>().await
    ///         });
    ///     }
    ///     set.shutdown().await;
    ///     assert!(set.is_empty());
    /// });
    /// assert_eq!(drops.load(Ordering::SeqCst), 10);
    /// ```
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and returns their outputs, in the order the
    /// tasks finished.
    ///
    /// # Panics
    ///
    /// If a task panicked, with that task's panic (the other tasks are
    /// aborted as the set is dropped); if a task was cancelled, with its
    /// [`JoinError`].
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut sum = rt.block_on(async {
    ///     let set: weft::task::JoinSet<u64> = (1..=4u64).map(|n| async move { n * n }).collect();
    ///     set.join_all().await
    /// });
    /// sum.sort();
    /// assert_eq!(sum, [1, 4, 9, 16]);
    /// ```
    pub async fn join_all(mut self) -> Vec<T> {
        let mut outputs = Vec::with_capacity(self.len);
        while let Some(result) = self.join_next().await {
            match result {
                Ok(output) => outputs.push(output),
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(error) => panic!("a task of the JoinSet given to `join_all` failed: {error}"),
            }
        }
        outputs
    }

    /// Polls the member just taken from the ready list, if it is still
    /// the one in its slot; on `Ready`, its slot is emptied.
    fn poll_member(&mut self, member: &Arc<Member>) -> Poll<(Id, Result<T, JoinError>)> {
        let index = member.index;
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return Poll::Pending; // emptied since the wake
        };
        if !Arc::ptr_eq(&slot.member, member) {
            return Poll::Pending; // emptied and reused since the wake
        }
        member.unqueue();
        let id = slot.handle.id();
        let result = match slot.early.take() {
            Some(result) => result,
            None => match Pin::new(&mut slot.handle).poll(&mut Context::from_waker(&slot.waker)) {
                Poll::Ready(result) => result,
                Poll::Pending => return Poll::Pending,
            },
        };
        let slot = self.slots[index].take();
        self.free.push(index);
        self.len -= 1;
        crate::util::locks::user_code("a JoinSet member's drop (its handle)");
        drop(slot);
        Poll::Ready((id, result))
    }
}

impl<T: 'static> JoinSet<T> {
    /// Spawns `task` on the current runtime and adds it to the set;
    /// returns a handle that can abort it.
    ///
    /// # Panics
    ///
    /// Outside a runtime context, like [`crate::spawn`]: call it from a
    /// task, inside `Runtime::block_on`, or under a `Runtime::enter` guard;
    /// from any other thread, use [`spawn_on`](Self::spawn_on) with a
    /// [`Handle`].
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     let abort = set.spawn(std::future::pending::<()>());
    ///     abort.abort();
    ///     assert!(set.join_next().await.unwrap().unwrap_err().is_cancelled());
    /// });
    /// ```
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let options = SpawnOptions::plain(Location::caller());
        let spawned = context::with_current(|shared| {
            shared.map(|shared| crate::runtime::spawn_on(shared, task, options))
        });
        match spawned {
            Some(join) => self.insert(join),
            None => crate::runtime::context::no_runtime(format_args!(
                "`weft::task::JoinSet::spawn` called outside of a weft runtime: call it from a \
                 task, inside `Runtime::block_on`, or while a `Runtime::enter` guard is alive; or \
                 use `JoinSet::spawn_on` with a `weft::runtime::Handle` from any thread"
            )),
        }
    }

    /// Spawns `task` on the runtime behind `handle` and adds it to the
    /// set; works from any thread.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_on(async { 2 }, rt.handle());
    /// assert_eq!(rt.block_on(set.join_next()).unwrap().unwrap(), 2);
    /// ```
    #[track_caller]
    pub fn spawn_on<F>(&mut self, task: F, handle: &Handle) -> AbortHandle
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let options = SpawnOptions::plain(Location::caller());
        self.insert(crate::runtime::spawn_on(&handle.shared, task, options))
    }

    /// Runs `f` on the current runtime's blocking pool (see
    /// [`spawn_blocking`](crate::task::spawn_blocking)) and adds it to the
    /// set. Aborting it cancels the closure only if no thread has started
    /// it.
    ///
    /// # Panics
    ///
    /// Outside a runtime context, as [`spawn`](Self::spawn); use
    /// [`spawn_blocking_on`](Self::spawn_blocking_on) from any thread.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {
    ///     let mut set = weft::task::JoinSet::new();
    ///     set.spawn_blocking(|| std::fs::metadata("Cargo.toml").is_ok());
    ///     assert!(set.join_next().await.unwrap().unwrap());
    /// });
    /// ```
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        T: Send,
        F: FnOnce() -> T + Send + 'static,
    {
        let spawned = context::with_current(|shared| {
            shared.map(|shared| crate::runtime::spawn_blocking_on(shared, f))
        });
        match spawned {
            Some(join) => self.insert(join),
            None => crate::runtime::context::no_runtime(format_args!(
                "`weft::task::JoinSet::spawn_blocking` called outside of a weft runtime: call it \
                 from a task, inside `Runtime::block_on`, or while a `Runtime::enter` guard is \
                 alive; or use `JoinSet::spawn_blocking_on` with a `weft::runtime::Handle` from \
                 any thread"
            )),
        }
    }

    /// Runs `f` on the blocking pool of the runtime behind `handle` and
    /// adds it to the set; works from any thread.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_blocking_on(|| 4, rt.handle());
    /// assert_eq!(rt.block_on(set.join_next()).unwrap().unwrap(), 4);
    /// ```
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        T: Send,
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(crate::runtime::spawn_blocking_on(&handle.shared, f))
    }

    /// Spawns `task` (which need not be `Send`) on the current
    /// [`LocalSet`](crate::task::LocalSet) or
    /// [`LocalRuntime`](crate::runtime::LocalRuntime) and adds it to the
    /// set (tokio's `JoinSet::spawn_local`).
    ///
    /// # Panics
    ///
    /// Outside both, as [`task::spawn_local`](crate::task::spawn_local).
    ///
    /// ```
    /// let rt = weft::runtime::LocalRuntime::new()?;
    /// let mut set = weft::task::JoinSet::new();
    /// let rc = std::rc::Rc::new(3); // not `Send`
    /// rt.block_on(async move {
    ///     set.spawn_local(async move { *rc });
    ///     assert_eq!(set.join_next().await.unwrap().unwrap(), 3);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(crate::task::spawn_local(task))
    }

    /// Spawns `task` on `local_set` (its tasks run when it is polled) and
    /// adds it to the set (tokio's `JoinSet::spawn_local_on`).
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_current_thread().build()?;
    /// let local = weft::task::LocalSet::new();
    /// let mut set = weft::task::JoinSet::new();
    /// set.spawn_local_on(async { 5 }, &local);
    /// let five = local.block_on(&rt, async { set.join_next().await.unwrap().unwrap() });
    /// assert_eq!(five, 5);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn spawn_local_on<F>(&mut self, task: F, local_set: &crate::task::LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(local_set.spawn_local(task))
    }

    /// Adds a spawned task to the set. Its handle is polled once with the
    /// member's waker, so that the task wakes the member when it finishes
    /// (module documentation).
    pub(crate) fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let index = self.free.pop().unwrap_or(self.slots.len());
        let member = Member::new(&self.ready, index);
        let waker = Waker::from(member.clone());
        let mut slot = Slot {
            handle,
            member,
            waker,
            early: None,
        };
        let polled = coop::run_unconstrained(|| {
            Pin::new(&mut slot.handle).poll(&mut Context::from_waker(&slot.waker))
        });
        if let Poll::Ready(result) = polled {
            slot.early = Some(result);
            slot.waker.wake_by_ref();
        }
        if index == self.slots.len() {
            self.slots.push(Some(slot));
        } else {
            self.slots[index] = Some(slot);
        }
        self.len += 1;
        abort
    }
}

impl<T> Drop for JoinSet<T> {
    /// Aborts every task; their futures are dropped by the runtime (at
    /// once for an idle task, after its current poll for a running one).
    fn drop(&mut self) {
        self.abort_all();
        self.empty();
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> JoinSet<T> {
        JoinSet::new()
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Spawns each future on the current runtime (see [`JoinSet::spawn`],
/// which panics outside a runtime context).
///
/// ```
/// use weft::task::JoinSet;
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let mut set: JoinSet<u32> = (0..3).map(|n| async move { n }).collect();
///     set.extend([async { 10 }]);
///     assert_eq!(set.len(), 4);
///     let mut total = 0;
///     while let Some(result) = set.join_next().await {
///         total += result.unwrap();
///     }
///     assert_eq!(total, 13);
/// });
/// ```
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> JoinSet<T> {
        let mut set = JoinSet::new();
        set.extend(iter);
        set
    }
}

/// Spawns each future on the current runtime and adds it to the set (see
/// [`JoinSet::spawn`], which panics outside a runtime context).
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for task in iter {
            self.spawn(task);
        }
    }
}

/// A set is `Send` and `Sync` when its output is `Send`. Never called: a
/// compile-time check (emptying its body, a mutant, changes no behaviour).
#[allow(dead_code)]
fn _assert_send_sync() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<JoinSet<u32>>();
    send_sync::<AbortHandle>();
    send_sync::<JoinHandle<u32>>();
}

#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::JoinSet;

    /// Waits up to 10 s for `done`. (Test code: its mutants only change how
    /// a failing test fails, or let it pass unchecked.)
    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// A set's ready list is freed once the set is gone, even though its
    /// tasks, aborted or detached, wake their members after that (members
    /// must not keep their list alive: the list holds woken members).
    #[test]
    fn the_ready_list_is_freed_after_drop_and_detach_all() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let mut set = JoinSet::new();
        let aborts: Vec<_> = (0..10)
            .map(|_| set.spawn_on(std::future::pending::<()>(), rt.handle()))
            .collect();
        let list = Arc::downgrade(&set.ready);
        drop(set);
        assert!(eventually(|| aborts
            .iter()
            .all(|abort| abort.is_finished())));
        assert!(
            eventually(|| list.upgrade().is_none()),
            "the dropped set's list leaked"
        );

        let mut set = JoinSet::new();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let aborts: Vec<_> = (0..10)
            .map(|_| {
                let rx = rx.clone();
                set.spawn_blocking_on(
                    move || {
                        let _ = rx.lock().unwrap().recv();
                    },
                    rt.handle(),
                )
            })
            .collect();
        let list = Arc::downgrade(&set.ready);
        set.detach_all();
        drop(tx);
        assert!(eventually(|| aborts
            .iter()
            .all(|abort| abort.is_finished())));
        drop(aborts);
        assert!(
            eventually(|| list.upgrade().is_none()),
            "the detached list leaked"
        );
    }
}
