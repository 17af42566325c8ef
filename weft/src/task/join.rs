//! `JoinHandle` and `JoinError`.
//!
//! # States of a handle
//!
//! `Waiting` holds async-task's handle to the output. `abort` turns it into
//! `Aborting`, a boxed `cancel()` future polled once right away (that first
//! poll marks the task closed and, if it is idle, schedules it one last time
//! so a worker drops its future). Awaiting the handle then resolves to the
//! output if the task had already completed, or to a cancelled `JoinError`.
//! The state sits behind a mutex because `abort` and `is_finished` take
//! `&self` (as tokio's do) and may be called from several threads at once;
//! `poll` and `drop` have `&mut self` and read it without locking.
//!
//! No user code runs under that mutex (`crate::sync`): `abort` takes the
//! task out under it and polls `cancel()` after releasing it, since that
//! poll may drop the task's future (after shutdown began, the schedule
//! function drops the task) and wake the awaiter's waker; `poll`, which
//! clones the caller's waker into the task and may drop the output, and
//! `drop`, which may drop the output, do not lock.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{Contained, Panic, TaskMeta};
use crate::sync::{StdMutex as Mutex, StdMutexGuard};

/// What a task produces: its output or its panic, in a wrapper whose drop
/// cannot abort the process (see `Contained`).
type Output<T> = Contained<Result<T, Panic>>;
type CancelFuture<T> = Pin<Box<dyn Future<Output = Option<Output<T>>> + Send>>;

enum State<T> {
    Waiting(async_task::FallibleTask<Output<T>, TaskMeta>),
    /// `None` while `abort` runs the first poll of the cancellation
    /// (another thread's `abort` then does nothing, its `is_finished`
    /// says `false`; `poll` cannot run meanwhile: it needs `&mut self`),
    /// and after that poll unwound.
    Aborting(Option<CancelFuture<T>>),
    /// The result is known and not yet taken (`None`: cancelled).
    Ready(Option<Output<T>>),
    /// The result was returned by a previous poll.
    Taken,
}

/// An owned permission to await a spawned task's output.
///
/// Awaiting it gives `Ok(output)`, or a [`JoinError`] if the task panicked
/// or was cancelled (by [`abort`](Self::abort) or runtime shutdown).
/// Dropping a `JoinHandle` *detaches* the task: it keeps running, and its
/// output is dropped when it finishes.
///
/// # Examples
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let handle = rt.spawn(async { 6 * 7 });
/// assert_eq!(rt.block_on(handle).unwrap(), 42);
/// ```
#[must_use = "dropping a JoinHandle detaches the task; await it to get its output"]
pub struct JoinHandle<T> {
    state: Mutex<State<T>>,
}

impl<T> JoinHandle<T> {
    /// Whether the task has finished: completed, panicked or been cancelled.
    pub fn is_finished(&self) -> bool {
        match &*self.lock() {
            State::Waiting(task) => task.is_finished(),
            State::Aborting(_) => false,
            State::Ready(_) | State::Taken => true,
        }
    }

    fn lock(&self) -> StdMutexGuard<'_, State<T>> {
        // The state is consistent even if a poll panicked mid-way (every
        // transition is a single assignment), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Send + 'static> JoinHandle<T> {
    pub(crate) fn new(task: async_task::Task<Output<T>, TaskMeta>) -> Self {
        JoinHandle {
            state: Mutex::new(State::Waiting(task.fallible())),
        }
    }

    /// A handle for a task refused because the runtime is shut down; the
    /// future is dropped here, never polled.
    pub(crate) fn cancelled_at_spawn<F>(future: F) -> Self {
        crate::sync::user_code("a future's or closure's drop (spawn refused)");
        drop(future);
        JoinHandle {
            state: Mutex::new(State::Ready(None)),
        }
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
        let task = {
            let mut state = self.lock();
            if !matches!(&*state, State::Waiting(_)) {
                return;
            }
            match std::mem::replace(&mut *state, State::Aborting(None)) {
                State::Waiting(task) => task,
                _ => unreachable!("matched above"),
            }
        };
        let mut cancel: CancelFuture<T> = Box::pin(task.cancel());
        // The first poll requests the cancellation (only the result is
        // awaited later); it may drop the task's future and wake its
        // awaiter: not under the lock.
        crate::sync::user_code("a task's drop and its awaiter's wake (abort)");
        let polled = cancel
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        *self.lock() = match polled {
            Poll::Ready(result) => State::Ready(result),
            Poll::Pending => State::Aborting(Some(cancel)),
        };
    }
}

// The output is stored inline but never pinned: `poll` only moves it out
// through the mutex. So the handle can be `Unpin` whatever `T` is (as
// tokio's is), and users can poll it through `&mut`.
impl<T> Unpin for JoinHandle<T> {}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // async-task cancels a task whose handle is dropped; weft's (and
        // tokio's) contract is to detach it instead.
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let State::Waiting(task) = std::mem::replace(state, State::Taken) {
            // Drops the output if the task has completed.
            crate::sync::user_code("a task's output's drop (JoinHandle's drop)");
            task.detach();
        }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Awaiting finished tasks in a loop spends the cooperative budget.
        if super::coop::poll_budget(cx).is_pending() {
            return Poll::Pending;
        }
        // `&mut self`: no lock. async-task clones the caller's waker into
        // the task (and drops the one it replaces), or drops the output.
        crate::sync::user_code("a waker's clone and drop (JoinHandle's poll)");
        let state = self
            .get_mut()
            .state
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        let result = match state {
            State::Waiting(task) => std::task::ready!(Pin::new(task).poll(cx)),
            State::Aborting(Some(cancel)) => std::task::ready!(cancel.as_mut().poll(cx)),
            // `abort` puts the cancellation back, unless its first poll
            // unwound (a waker that panicked): the task was cancelled.
            State::Aborting(None) => None,
            State::Ready(result) => result.take(),
            State::Taken => panic!("JoinHandle polled after it returned Ready"),
        };
        *state = State::Taken;
        super::coop::spend();
        Poll::Ready(match result.map(Contained::into_inner) {
            Some(Ok(value)) => Ok(value),
            Some(Err(panic)) => Err(JoinError::panicked(panic)),
            None => Err(JoinError::cancelled()),
        })
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// Why a task did not produce its output.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(Mutex<Panic>),
}

impl JoinError {
    fn cancelled() -> JoinError {
        JoinError {
            repr: Repr::Cancelled,
        }
    }

    fn panicked(panic: Panic) -> JoinError {
        JoinError {
            repr: Repr::Panic(Mutex::new(panic)),
        }
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
            (Repr::Cancelled, _) => f.write_str("task was cancelled"),
            (Repr::Panic(_), Some(message)) => write!(f, "task panicked with message {message:?}"),
            (Repr::Panic(_), None) => f.write_str("task panicked"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => f.write_str("JoinError::Cancelled"),
            (Repr::Panic(_), Some(message)) => write!(f, "JoinError::Panic({message:?})"),
            (Repr::Panic(_), None) => f.write_str("JoinError::Panic(..)"),
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
