//! `JoinHandle`, `AbortHandle` and `JoinError`.
//!
//! A handle's state (`cell.rs`) is a small machine behind a mutex:
//! `abort` takes `&self` (as tokio's does), so a handle shared between
//! threads may be aborted from several at once, and an [`AbortHandle`]
//! shares the state of the handle it came from. The mutex is never held
//! while async-task is called, since that can run the user's code
//! (`cell.rs` says which and how). Awaiting a handle borrows it exclusively,
//! so a handle that never gave out an `AbortHandle` is polled without
//! taking the lock.

mod cell;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use super::{Id, Panic, TaskMeta};
use cell::{Cell, Output};

/// An owned permission to await a spawned task's output.
///
/// Awaiting it gives `Ok(output)`, or a [`JoinError`] if the task panicked
/// or was cancelled (by [`abort`](Self::abort), an [`AbortHandle`], or
/// runtime shutdown). Dropping a `JoinHandle` *detaches* the task: it keeps
/// running, and its output is dropped when it finishes.
///
/// # Examples
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let handle = rt.spawn(async { 6 * 7 });
/// assert_eq!(rt.block_on(handle).unwrap(), 42);
/// ```
// Not `#[must_use]`, as tokio's is not: spawning a task and dropping its
// handle (detaching it) is the common case, and tokio code moved onto weft
// must not gain warnings.
pub struct JoinHandle<T> {
    cell: Cell<T>,
    id: Id,
    /// `Send` and `Sync` only if `T` is `Send`, as tokio's: the output is
    /// taken on the handle's thread (the cell itself is `Send` whatever
    /// `T` is: a local task's output, which need not be, is kept to its
    /// thread by `Contained`).
    _output: std::marker::PhantomData<Mutex<T>>,
    /// [`abort_handle`](Self::abort_handle) for this `T`, made where
    /// `T: 'static` is known (every handle's is: a task's output is
    /// `'static`), so that `abort_handle` itself has no bound, as tokio's.
    share: fn(&JoinHandle<T>) -> AbortHandle,
}

impl<T> JoinHandle<T> {
    /// Whether the task has finished: completed, panicked or been cancelled.
    ///
    /// After [`abort`](Self::abort), `true` once the task's future has been
    /// dropped (a task that is running finishes its current poll first).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let handle = rt.spawn(async { 1 });
    /// while !handle.is_finished() {
    ///     std::thread::yield_now();
    /// }
    /// assert_eq!(rt.block_on(handle).unwrap(), 1);
    /// ```
    pub fn is_finished(&self) -> bool {
        self.cell.is_finished()
    }

    /// Cancels the task.
    ///
    /// If the task has not completed, its future is dropped (at once if it
    /// is idle; after its current poll if it is running) and awaiting this
    /// handle gives a cancelled [`JoinError`]. If it already completed, the
    /// output stays available. Aborting twice is harmless.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let handle = rt.spawn(std::future::pending::<()>());
    /// handle.abort();
    /// assert!(rt.block_on(handle).unwrap_err().is_cancelled());
    /// ```
    pub fn abort(&self) {
        self.cell.abort();
    }

    /// The task's id (tokio's `JoinHandle::id`): what
    /// [`task::id`](crate::task::id) returns inside it.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new()?;
    /// let (a, b) = (rt.spawn(async {}), rt.spawn(async {}));
    /// assert_ne!(a.id(), b.id());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// A handle that can abort the task (and tell whether it finished)
    /// without the right to its output; any number of them may exist, on
    /// any thread, and they outlive this handle.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let handle = rt.spawn(std::future::pending::<()>());
    /// let abort = handle.abort_handle();
    /// std::thread::spawn(move || abort.abort()).join().unwrap();
    /// assert!(rt.block_on(handle).unwrap_err().is_cancelled());
    /// ```
    pub fn abort_handle(&self) -> AbortHandle {
        (self.share)(self)
    }
}

impl<T: 'static> JoinHandle<T> {
    pub(crate) fn new(task: async_task::Task<Output<T>, TaskMeta>) -> Self {
        let id = task.metadata().id();
        JoinHandle {
            cell: Cell::new(task),
            id,
            _output: std::marker::PhantomData,
            share: share::<T>,
        }
    }

    /// A handle for a task refused because the runtime is shut down; the
    /// future is dropped here, never polled.
    pub(crate) fn cancelled_at_spawn<F>(future: F) -> Self {
        drop(future);
        JoinHandle {
            cell: Cell::cancelled(),
            id: Id::next(),
            _output: std::marker::PhantomData,
            share: share::<T>,
        }
    }
}

/// `JoinHandle::abort_handle` for a `T` known to be `'static`.
fn share<T: 'static>(handle: &JoinHandle<T>) -> AbortHandle {
    AbortHandle {
        cell: handle.cell.share(),
        id: handle.id,
    }
}

// The output is stored inline but never pinned: `poll` only moves it out.
// So the handle can be `Unpin` whatever `T` is (as tokio's is), and users
// can poll it through `&mut`.
impl<T> Unpin for JoinHandle<T> {}

// As tokio's: a panic caught around a handle leaves its task's state (an
// atomic word and the cell's slots, written only under that word's
// protocol) as consistent as before.
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Awaiting finished tasks in a loop spends the cooperative budget.
        if crate::task::coop::poll_budget(cx).is_pending() {
            return Poll::Pending;
        }
        let this = self.get_mut();
        let result = std::task::ready!(this.cell.poll_owner(cx));
        crate::task::coop::spend();
        Poll::Ready(match result.map(super::Contained::into_inner) {
            Some(Ok(value)) => Ok(value),
            Some(Err(panic)) => Err(JoinError::panicked(this.id, panic)),
            None => Err(JoinError::cancelled(this.id)),
        })
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A permission to abort a task, without the right to its output: from
/// [`JoinHandle::abort_handle`] or [`JoinSet::spawn`](crate::task::JoinSet::spawn).
///
/// Dropping it does nothing to the task. It may be sent to and used from
/// any thread, and outlives the task's `JoinHandle`. It does not keep the
/// task's output: once the `JoinHandle` (or the `JoinSet` holding it) is
/// dropped, the output is dropped when the task completes, or at once if it
/// had, whether `AbortHandle`s are alive or not.
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let handle = rt.spawn(std::future::pending::<()>());
/// let abort = handle.abort_handle();
/// assert!(!abort.is_finished());
/// abort.abort();
/// assert!(rt.block_on(handle).unwrap_err().is_cancelled());
/// assert!(abort.is_finished());
/// ```
pub struct AbortHandle {
    cell: Arc<dyn Abort>,
    id: Id,
}

/// What an `AbortHandle` may do to the state it shares: a handle's cell
/// with the output's type erased.
trait Abort: Send + Sync {
    fn abort(&self);
    fn is_finished(&self) -> bool;
}

impl<T: 'static> Abort for Cell<T> {
    fn abort(&self) {
        Cell::abort(self);
    }

    fn is_finished(&self) -> bool {
        Cell::is_finished(self)
    }
}

impl AbortHandle {
    /// Cancels the task, as [`JoinHandle::abort`] does: its future is
    /// dropped (at once if it is idle, after its current poll if it is
    /// running) unless it already completed, and its `JoinHandle` (or its
    /// `JoinSet`) then reports a cancelled [`JoinError`].
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let mut set = weft::task::JoinSet::new();
    /// let abort = set.spawn_on(std::future::pending::<()>(), rt.handle());
    /// abort.abort();
    /// let result = rt.block_on(set.join_next()).unwrap();
    /// assert!(result.unwrap_err().is_cancelled());
    /// ```
    pub fn abort(&self) {
        self.cell.abort();
    }

    /// Whether the task has finished: completed, panicked, or been
    /// cancelled and its future dropped.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let handle = rt.spawn(async { 7 });
    /// let abort = handle.abort_handle();
    /// assert_eq!(rt.block_on(handle).unwrap(), 7);
    /// assert!(abort.is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.cell.is_finished()
    }

    /// The task's id, as its [`JoinHandle::id`].
    pub fn id(&self) -> Id {
        self.id
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a task did not produce its output.
pub struct JoinError {
    repr: Repr,
    id: Id,
}

enum Repr {
    Cancelled,
    Panic(Mutex<Panic>),
}

impl JoinError {
    fn cancelled(id: Id) -> JoinError {
        JoinError {
            repr: Repr::Cancelled,
            id,
        }
    }

    fn panicked(id: Id, panic: Panic) -> JoinError {
        JoinError {
            repr: Repr::Panic(Mutex::new(panic)),
            id,
        }
    }

    /// The id of the task that failed (tokio's `JoinError::id`).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new()?;
    /// let handle = rt.spawn(async { panic!("boom") });
    /// let id = handle.id();
    /// assert_eq!(rt.block_on(handle).unwrap_err().id(), id);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// The task was cancelled: aborted, or dropped by runtime shutdown.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload. Panics if the task was cancelled instead; see
    /// [`try_into_panic`](Self::try_into_panic).
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// let err = rt.block_on(rt.spawn(async { panic!("boom") })).unwrap_err();
    /// let payload = err.into_panic();
    /// assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "boom");
    /// ```
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn std::any::Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError::into_panic` called on a cancelled task's error")
    }

    /// The panic payload, or the error back if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn std::any::Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(panic) => Ok(panic.into_inner().unwrap_or_else(|e| e.into_inner())),
            Repr::Cancelled => Err(self),
        }
    }

    fn panic_message(&self) -> Option<String> {
        let Repr::Panic(panic) = &self.repr else {
            return None;
        };
        let panic = panic.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = panic.downcast_ref::<&'static str>() {
            Some((*s).to_owned())
        } else {
            panic.downcast_ref::<String>().cloned()
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "task {} was cancelled", self.id),
            (Repr::Panic(_), Some(message)) => {
                write!(f, "task {} panicked with message {message:?}", self.id)
            }
            (Repr::Panic(_), None) => write!(f, "task {} panicked", self.id),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => write!(f, "JoinError::Cancelled({:?})", self.id),
            (Repr::Panic(_), Some(message)) => {
                write!(f, "JoinError::Panic({:?}, {message:?}, ...)", self.id)
            }
            (Repr::Panic(_), None) => write!(f, "JoinError::Panic({:?}, ...)", self.id),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(err: JoinError) -> std::io::Error {
        std::io::Error::other(err)
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
