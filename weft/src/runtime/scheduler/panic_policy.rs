//! The panic policy: what a spawned task's panic does to its runtime
//! ([`Builder::unhandled_panic`](crate::runtime::Builder::unhandled_panic)).
//!
//! # Protocol
//!
//! With `ShutdownRuntime`, the task wrapper (`runtime/task/mod.rs`) reports a
//! panic caught in `poll`; the first report records the panic's message,
//! begins the runtime's shutdown (the workers leave at their next tick,
//! spawns are refused) and wakes every `block_on` of the runtime, each of
//! which then panics with the message. A `block_on` registers its waker
//! here for its whole call and checks the message before every poll of its
//! future. The registration and the report both take `waiters`' lock after
//! (report) or before (`block_on`) touching the message, so either the
//! report finds the `block_on` registered and wakes it, or the `block_on`
//! sees the message at its next check.
//!
//! With `Ignore` nothing is registered and a panic costs nothing here.
//! Wakers are woken after the lock is released; no user code runs under it.

use std::sync::OnceLock;

use crate::util::locks::{StdMutex as Mutex, StdMutexGuard};
use std::task::Waker;

/// How a runtime responds to a panic in one of its spawned tasks
/// (tokio's `UnhandledPanic`).
///
/// ```
/// use weft::runtime::{Builder, UnhandledPanic};
///
/// let rt = Builder::new_multi_thread()
///     .unhandled_panic(UnhandledPanic::Ignore) // the default
///     .build()
///     .unwrap();
/// let failed = rt.spawn(async { panic!("boom") });
/// assert!(rt.block_on(failed).unwrap_err().is_panic());
/// assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1); // still serving
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnhandledPanic {
    /// The panic becomes the task's [`JoinError`](crate::runtime::task::JoinError)
    /// and every other task runs on.
    #[default]
    Ignore,
    /// The runtime shuts down as soon as a spawned task panics, whether or
    /// not the task's `JoinHandle` is still held: its workers stop at once,
    /// new spawns are refused, and every `block_on` on it panics with a
    /// message naming this policy and the task's panic message. Dropping
    /// the [`Runtime`](crate::runtime::Runtime) (as unwinding from that panic does)
    /// then cancels every remaining task, as any shutdown does.
    ///
    /// It applies to async tasks (`spawn`, `task::Builder`, `JoinSet`); a
    /// panic in a `spawn_blocking` closure still goes only to its
    /// `JoinHandle`.
    ///
    /// ```
    /// use weft::runtime::{Builder, UnhandledPanic};
    ///
    /// let rt = Builder::new_multi_thread()
    ///     .unhandled_panic(UnhandledPanic::ShutdownRuntime)
    ///     .build()
    ///     .unwrap();
    /// let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    ///     rt.block_on(async {
    ///         let _held = weft::spawn(async { panic!("boom") });
    ///         std::future::pending::<()>().await
    ///     })
    /// }));
    /// let message = outcome.unwrap_err().downcast::<String>().unwrap();
    /// assert!(message.contains("ShutdownRuntime") && message.contains("boom"));
    /// ```
    ShutdownRuntime,
}

/// One runtime's policy and what it needs to act on it (lives in the
/// runtime's `Shared`).
pub(crate) struct PanicPolicy {
    policy: UnhandledPanic,
    /// Set by the first panic that shut the runtime down: what `block_on`
    /// panics with.
    message: OnceLock<String>,
    waiters: Mutex<Waiters>,
}

#[derive(Default)]
struct Waiters {
    next_id: u64,
    block_ons: Vec<(u64, Waker)>,
}

/// Keeps a `block_on`'s waker registered until dropped.
pub(crate) struct Watching<'a> {
    policy: &'a PanicPolicy,
    id: u64,
}

impl PanicPolicy {
    pub(crate) fn new(policy: UnhandledPanic) -> PanicPolicy {
        PanicPolicy {
            policy,
            message: OnceLock::new(),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    fn lock(&self) -> StdMutexGuard<'_, Waiters> {
        // A push, a removal or a clone of the list: never left half done.
        self.waiters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A task's poll panicked. Under `ShutdownRuntime`, records the
    /// message and returns whether this is the first such panic (the
    /// caller then shuts the runtime down and calls
    /// [`wake_block_ons`](Self::wake_block_ons)).
    #[cold]
    pub(crate) fn task_panicked(&self, panic: &(dyn std::any::Any + Send)) -> bool {
        if self.policy != UnhandledPanic::ShutdownRuntime {
            return false;
        }
        let text = match panic_text(panic) {
            Some(text) => format!("panicked with message {text:?}"),
            None => "panicked (with a payload that is not a string)".to_owned(),
        };
        let message = format!(
            "a task spawned on this weft runtime {text}, and the runtime's panic policy is \
             `UnhandledPanic::ShutdownRuntime` (set by `Builder::unhandled_panic`): the runtime \
             has shut down"
        );
        self.message.set(message).is_ok()
    }

    /// Wakes every `block_on` registered, outside the lock. (The clones
    /// made under it are of `block_on`'s own waker: weft's code.)
    pub(crate) fn wake_block_ons(&self) {
        let wakers: Vec<Waker> = {
            let waiters = self.lock();
            waiters
                .block_ons
                .iter()
                .map(|(_, waker)| waker.clone())
                .collect()
        };
        for waker in wakers {
            waker.wake();
        }
    }

    /// Registers a `block_on`'s waker for the length of its call (only
    /// under `ShutdownRuntime`). The waker is `block_on`'s own, whose clone
    /// and drop are weft's code.
    pub(crate) fn watch(&self, waker: &Waker) -> Option<Watching<'_>> {
        if self.policy != UnhandledPanic::ShutdownRuntime {
            return None;
        }
        let waker = waker.clone();
        let mut waiters = self.lock();
        let id = waiters.next_id;
        waiters.next_id += 1;
        waiters.block_ons.push((id, waker));
        Some(Watching { policy: self, id })
    }

    /// Panics with the recorded message if a task's panic shut the
    /// runtime down (called by `block_on` before each poll).
    #[inline]
    #[track_caller]
    pub(crate) fn check(&self) {
        if let Some(message) = self.message.get() {
            panic!("{message}");
        }
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        let removed = {
            let mut waiters = self.policy.lock();
            let index = waiters.block_ons.iter().position(|(id, _)| *id == self.id);
            index.map(|index| waiters.block_ons.swap_remove(index))
        };
        drop(removed);
    }
}

/// The text of a panic payload, if it is a string.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}
