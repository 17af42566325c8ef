//! Task-local storage: tokio's `task_local!`, `LocalKey` and
//! `TaskLocalFuture`.
//!
//! A key names one thread-local slot per thread. `LocalKey::scope` wraps a
//! future so that, for the length of each of its polls (and of its drop),
//! the slot of the polling thread holds the scope's value: the value moves
//! into the slot before the poll and back into the future after it, so it
//! follows the task from worker to worker. Nothing here knows the runtime:
//! any executor that polls the future gets the same behaviour.
//!
//! # Invariants
//!
//! - Outside a poll of its scope the value lives in the `TaskLocalFuture`;
//!   during one it lives in the slot, and the swap back runs even when the
//!   poll panics (a guard's drop), so a panic never leaves a value behind
//!   in a worker's slot for the next task to see.
//! - Scopes nest: entering a scope saves the slot's previous value (an
//!   outer scope's) in the future's place, and leaving swaps it back.
//! - Entering a scope while the same key is borrowed (inside its `with`)
//!   panics, as tokio's does: the borrow would otherwise see the value
//!   change under it.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Declares task-local keys, as tokio's `task_local!`:
///
/// ```
/// weft::task_local! {
///     pub static REQUEST_ID: u64;
///     static USER: String;
/// }
///
/// weft::runtime::Runtime::new().unwrap().block_on(REQUEST_ID.scope(7, async {
///     assert_eq!(REQUEST_ID.get(), 7);
///     assert!(USER.try_with(|user| user.len()).is_err());
/// }));
/// ```
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_inner!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_inner!($(#[$attr])* $vis $name, $t);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __task_local_inner {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __WEFT_TASK_LOCAL: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey { inner: __WEFT_TASK_LOCAL }
        };
    };
}

/// A key for task-local data, made by [`task_local!`](crate::task_local).
///
/// Unlike `std::thread::LocalKey`, it has no initial value: a value exists
/// only inside [`scope`](Self::scope) or [`sync_scope`](Self::sync_scope).
pub struct LocalKey<T: 'static> {
    #[doc(hidden)]
    pub inner: std::thread::LocalKey<RefCell<Option<T>>>,
}

/// The error of [`LocalKey::try_with`] outside a scope of its key (or
/// while the thread is being torn down).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AccessError {
    _private: (),
}

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError").finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value not set")
    }
}

impl std::error::Error for AccessError {}

/// Why a scope could not be entered.
enum EnterError {
    /// The key is borrowed by a `with` on this thread.
    Borrowed,
    /// The thread's slot is gone (the thread is ending).
    Destroyed,
}

impl EnterError {
    #[track_caller]
    fn panic(self) -> ! {
        match self {
            EnterError::Borrowed => panic!(
                "cannot enter a task-local scope while the task-local storage is borrowed \
                 (inside `with` or `try_with` of the same key)"
            ),
            EnterError::Destroyed => panic!(
                "cannot enter a task-local scope during or after destruction of the \
                 underlying thread-local"
            ),
        }
    }
}

impl<T: 'static> LocalKey<T> {
    /// Sets `value` as this key's value for the whole of `future` (each of
    /// its polls, and its drop); the value is dropped when the returned
    /// future completes or is dropped, or given back by
    /// [`TaskLocalFuture::take_value`].
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            local: self,
            slot: Some(value),
            future: Some(future),
            _pinned: std::marker::PhantomPinned,
        }
    }

    /// Sets `value` as this key's value while `f` runs, then drops it.
    ///
    /// # Panics
    ///
    /// Inside a `with` or `try_with` of the same key.
    #[track_caller]
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut slot = Some(value);
        match self.enter(&mut slot, f) {
            Ok(output) => output,
            Err(error) => error.panic(),
        }
    }

    /// Runs `f` with a reference to this key's current value.
    ///
    /// # Panics
    ///
    /// Outside a scope of this key.
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        match self.try_with(f) {
            Ok(output) => output,
            Err(_) => panic!("cannot access a task-local storage value without setting it first"),
        }
    }

    /// Runs `f` with a reference to this key's current value, or gives an
    /// [`AccessError`] outside a scope of this key.
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        let access = AccessError { _private: () };
        self.inner
            .try_with(|slot| {
                let value = slot.borrow();
                value.as_ref().map(f).ok_or(access)
            })
            .unwrap_or(Err(access))
    }

    /// Moves `slot`'s value into this thread's slot for the length of `f`,
    /// and back afterwards, also when `f` panics.
    fn enter<F: FnOnce() -> R, R>(
        &'static self,
        slot: &mut Option<T>,
        f: F,
    ) -> Result<R, EnterError> {
        /// Swaps the value back out when the scope ends, however it ends.
        struct Leave<'a, T: 'static> {
            key: &'static LocalKey<T>,
            slot: &'a mut Option<T>,
        }

        impl<T: 'static> Drop for Leave<'_, T> {
            fn drop(&mut self) {
                // The slot was borrowed mutably only for the swap on the way
                // in, and `with` borrows end with their closure: free now.
                self.key
                    .inner
                    .with(|inner| std::mem::swap(self.slot, &mut *inner.borrow_mut()));
            }
        }

        self.inner
            .try_with(|inner| {
                inner
                    .try_borrow_mut()
                    .map(|mut current| std::mem::swap(slot, &mut *current))
                    .map_err(|_| EnterError::Borrowed)
            })
            .map_err(|_| EnterError::Destroyed)??;
        let leave = Leave { key: self, slot };
        let output = f();
        drop(leave);
        Ok(output)
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A clone of this key's current value.
    ///
    /// # Panics
    ///
    /// Outside a scope of this key.
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(T::clone)
    }

    /// A clone of this key's current value, or [`AccessError`] outside a
    /// scope of this key (tokio's `LocalKey::try_get`).
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(T::clone)
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}

/// A future with a task-local value set for each of its polls: what
/// [`LocalKey::scope`] returns.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct TaskLocalFuture<T: 'static, F> {
    local: &'static LocalKey<T>,
    /// The scope's value between polls (the slot's previous value, an outer
    /// scope's or none, during one).
    slot: Option<T>,
    /// `None` once completed or dropped.
    future: Option<F>,
    /// `!Unpin` whatever `F` is, as tokio's.
    _pinned: std::marker::PhantomPinned,
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the scope's value out, if the future still holds it: `None`
    /// once it was taken, or after the future completed (its value is
    /// dropped then).
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: only `slot`, which is never pinned, is touched.
        unsafe { self.get_unchecked_mut() }.slot.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned with `self` and never moved out while
        // pinned: it is only polled in place, or dropped in place (set to
        // `None`); `slot` and `local` are not structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let (local, slot, future) = (this.local, &mut this.slot, &mut this.future);
        let polled = local.enter(slot, || {
            let Some(inner) = future.as_mut() else {
                panic!("`TaskLocalFuture` polled after it completed");
            };
            // SAFETY: see above: the inner future stays in place while
            // pinned.
            let output = unsafe { Pin::new_unchecked(inner) }.poll(cx);
            if output.is_ready() {
                // Dropped inside the scope, as its polls ran.
                *future = None;
            }
            output
        });
        match polled {
            Ok(output) => {
                if output.is_ready() {
                    // The scope's value ends with it.
                    this.slot = None;
                }
                output
            }
            Err(error) => error.panic(),
        }
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        if self.future.is_none() {
            return;
        }
        let future = &mut self.future;
        // The inner future's drop sees the value, as its polls did. Where
        // the scope cannot be entered (the key borrowed, the thread ending)
        // it is dropped without it rather than panicking in a drop.
        if self.local.enter(&mut self.slot, || *future = None).is_err() {
            self.future = None;
        }
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.slot)
            .finish_non_exhaustive()
    }
}
