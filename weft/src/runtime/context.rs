//! The thread-local runtime context: the engine's, so `task/`, `time/`,
//! `io/` and `runtime/blocking/` find the current runtime's shared state here, and
//! `runtime/` (the public face: `Handle`, `Runtime`) wraps it.
//!
//! Three independent pieces, each set by an RAII guard that restores the
//! previous value on drop (also when unwinding):
//!
//! - the current runtime's [`Shared`] state (`Handle::current`,
//!   `weft::spawn`): set on worker threads, inside `block_on`, and by
//!   `Runtime::enter`;
//! - the worker's `Core` (a raw pointer valid while the worker's run loop is
//!   on the stack): the local fast path for wakes and spawns;
//! - whether this thread is *driving* a runtime (a worker, or inside
//!   `block_on`): blocking on another future here would stall that runtime,
//!   so a nested `block_on` panics;
//! - the current-thread scheduler's run queue (`runtime/current_thread.rs`)
//!   while this thread drives that runtime (a raw pointer valid while the
//!   driving `block_on` is on the stack): where its wakes and spawns on
//!   this thread go.

use std::cell::{Cell, RefCell};

use super::Shared;
#[cfg(not(loom))]
use super::current_thread;
use super::scheduler::worker::Core;
use crate::util::loom::sync::Arc;

struct Context {
    current: RefCell<Option<Arc<Shared>>>,
    /// How many `CurrentGuard`s are alive: guards must drop innermost first.
    current_depth: Cell<usize>,
    core: Cell<*const Core>,
    driving: Cell<Driving>,
    #[cfg(not(loom))]
    current_thread: Cell<*const current_thread::Core>,
}

/// What, if anything, this thread is driving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driving {
    Nothing,
    Worker,
    BlockOn,
}

#[cfg(not(loom))]
thread_local! {
    static CONTEXT: Context = const { Context::empty() };
}

// Under loom every modelled thread runs on one OS thread, so a `std`
// thread-local would be shared by all of them: loom's is per modelled
// thread, which lets a model's worker threads take the local paths (LIFO
// slot, own ring, their wake rules) as real workers do.
#[cfg(loom)]
loom::thread_local! {
    static CONTEXT: Context = Context::empty();
}

impl Context {
    const fn empty() -> Context {
        Context {
            current: RefCell::new(None),
            current_depth: Cell::new(0),
            core: Cell::new(std::ptr::null()),
            driving: Cell::new(Driving::Nothing),
            #[cfg(not(loom))]
            current_thread: Cell::new(std::ptr::null()),
        }
    }
}

/// Calls `f` with this thread's worker core, if it is a worker in its run
/// loop. (`None` also during thread-local destruction.)
#[inline]
pub(crate) fn with_core<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    let core = CONTEXT
        .try_with(|cx| cx.core.get())
        .unwrap_or(std::ptr::null());
    // Sound: a non-null pointer was stored by `set_core` from a `&'a Core`,
    // and the `CoreGuard<'a>` it returned (which keeps that `Core` borrowed,
    // so it cannot move or drop meanwhile) stores null when it drops. Every
    // caller (the worker and spare run loops) holds the guard in a local
    // around its run loop and never leaks it (`mem::forget` would leave the
    // pointer dangling); unwinding drops it too. A nested guard's drop
    // nulls it early: safe, `None` from then on. `f` gets the reference for
    // this call only, on this thread only (the pointer is thread-local).
    // SAFETY: a non-null pointer names a live, borrowed `Core` (argued above).
    f(unsafe { core.as_ref() })
}

/// Calls `f` with the current runtime, if any.
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Arc<Shared>>) -> R) -> R {
    let mut f = Some(f);
    CONTEXT
        .try_with(|cx| (f.take().unwrap())(cx.current.borrow().as_ref()))
        .unwrap_or_else(|_| (f.take().unwrap())(None))
}

/// The current runtime, if any.
pub(crate) fn current() -> Option<Arc<Shared>> {
    with_current(|shared| shared.cloned())
}

/// Restores the previous current runtime on drop.
pub(crate) struct CurrentGuard {
    previous: Option<Arc<Shared>>,
    depth: usize,
}

/// Makes `shared` the current runtime until the guard drops.
/// During the thread's own teardown (a runtime dropped by a thread-local's
/// destructor) the context is gone: nothing is made current, and the guard
/// (depth 0) restores nothing.
pub(crate) fn set_current(shared: Arc<Shared>) -> CurrentGuard {
    CONTEXT
        .try_with(|cx| {
            let previous = cx.current.replace(Some(shared));
            let depth = cx.current_depth.get() + 1;
            cx.current_depth.set(depth);
            CurrentGuard { previous, depth }
        })
        .unwrap_or(CurrentGuard {
            previous: None,
            depth: 0,
        })
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        if self.depth == 0 {
            return; // made during the thread's teardown: set nothing
        }
        let previous = self.previous.take();
        let in_order = CONTEXT
            .try_with(|cx| {
                if cx.current_depth.get() == self.depth {
                    cx.current.replace(previous);
                    cx.current_depth.set(self.depth - 1);
                    true
                } else {
                    // Out of order: no previous value is right any more, so
                    // leave no runtime current rather than a stale one.
                    cx.current.replace(None);
                    cx.current_depth.set(0);
                    false
                }
            })
            .unwrap_or(true);
        if !in_order && !std::thread::panicking() {
            panic!(
                "`EnterGuard` values dropped out of order: guards returned by `Runtime::enter` \
                 and `Handle::enter` must be dropped in the reverse order they were created"
            );
        }
    }
}

/// Clears the core pointer on drop.
pub(crate) struct CoreGuard<'a> {
    _core: std::marker::PhantomData<&'a Core>,
}

pub(crate) fn set_core(core: &Core) -> CoreGuard<'_> {
    CONTEXT.with(|cx| cx.core.set(core));
    CoreGuard {
        _core: std::marker::PhantomData,
    }
}

impl Drop for CoreGuard<'_> {
    // Correctness (soundness) no test can pin: made a no-op, every test
    // passes. The pointer outlives its `Core` only on a thread that handed
    // its core back (demoted) or closed it, and such a thread reads the
    // context again only in its `on_thread_stop` hook. A hook that spawned
    // would read a moved-from `Core` (its bytes still on that thread's
    // stack, so it would likely even work): undefined behaviour.
    fn drop(&mut self) {
        let _ = CONTEXT.try_with(|cx| cx.core.set(std::ptr::null()));
    }
}

/// Panics because something that needs a runtime was used outside one,
/// with weft's `explanation` of what to do. With the `tokio-messages`
/// feature (weft-tokio, the crate named `tokio`, turns it on) the message
/// starts with tokio's words for the same panic, which tokio code and
/// tokio's tests look for.
#[cold]
#[track_caller]
pub(crate) fn no_runtime(explanation: std::fmt::Arguments<'_>) -> ! {
    if cfg!(feature = "tokio-messages") {
        panic!("{TOKIO_CONTEXT_MISSING} ({explanation})")
    }
    panic!("{explanation}")
}

/// tokio's message for a runtime function called outside a runtime.
pub(crate) const TOKIO_CONTEXT_MISSING: &str =
    "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

/// Whether the calling thread drives a runtime: a worker, or a thread
/// inside `block_on`. Blocking there stalls every task behind it.
pub(crate) fn is_driving() -> bool {
    CONTEXT
        .try_with(|cx| cx.driving.get() != Driving::Nothing)
        .unwrap_or(false)
}

/// Lets the thread block (and start a runtime of its own) until dropped:
/// `block_in_place` hands the thread's tasks to others first.
pub(crate) fn suspend_driving() -> DrivingGuard {
    DrivingGuard {
        previous: CONTEXT.with(|cx| cx.driving.replace(Driving::Nothing)),
    }
}

/// Calls `f` with the current-thread scheduler's core this thread drives,
/// if it drives one. (`None` also during thread-local destruction.)
#[cfg(not(loom))]
#[inline]
pub(crate) fn with_current_thread_core<R>(f: impl FnOnce(Option<&current_thread::Core>) -> R) -> R {
    let core = CONTEXT
        .try_with(|cx| cx.current_thread.get())
        .unwrap_or(std::ptr::null());
    // Sound as `with_core`: a non-null pointer was stored by
    // `set_current_thread_core` from a `&'a current_thread::Core`, and the
    // `CurrentThreadCoreGuard<'a>` it returned (which keeps that core
    // borrowed, so it cannot move or drop meanwhile) restores the previous
    // pointer when it drops; the driving `block_on` holds the guard in a
    // local and never leaks it. `f` gets the reference for this call only,
    // on this thread only.
    // SAFETY: a non-null pointer names a live, borrowed core (argued above).
    f(unsafe { core.as_ref() })
}

/// Restores the previous current-thread core pointer on drop.
#[cfg(not(loom))]
pub(crate) struct CurrentThreadCoreGuard<'a> {
    previous: *const current_thread::Core,
    _core: std::marker::PhantomData<&'a current_thread::Core>,
}

/// Makes `core` the current-thread core this thread drives until the guard
/// drops.
#[cfg(not(loom))]
pub(crate) fn set_current_thread_core(core: &current_thread::Core) -> CurrentThreadCoreGuard<'_> {
    let previous = CONTEXT.with(|cx| cx.current_thread.replace(core));
    CurrentThreadCoreGuard {
        previous,
        _core: std::marker::PhantomData,
    }
}

#[cfg(not(loom))]
impl Drop for CurrentThreadCoreGuard<'_> {
    fn drop(&mut self) {
        let previous = self.previous;
        let _ = CONTEXT.try_with(|cx| cx.current_thread.set(previous));
    }
}

/// What this thread drives right now.
pub(crate) fn driving() -> Driving {
    CONTEXT
        .try_with(|cx| cx.driving.get())
        .unwrap_or(Driving::Nothing)
}

/// Marks the thread as driving a runtime until dropped.
pub(crate) struct DrivingGuard {
    previous: Driving,
}

/// Marks this thread as driving; panics with an explanation if it already
/// is (blocking here would stall the runtime being driven).
#[track_caller]
pub(crate) fn enter_driving(what: Driving) -> DrivingGuard {
    let previous = CONTEXT.with(|cx| cx.driving.replace(what));
    if previous != Driving::Nothing {
        CONTEXT.with(|cx| cx.driving.set(previous));
        if cfg!(feature = "tokio-messages") {
            panic!(
                "Cannot start a runtime from within a runtime. This happens because a function \
                 (like `block_on`) attempted to block the current thread while the thread is \
                 being used to drive asynchronous tasks. If you are in an async function, use \
                 `.await` on the future instead of blocking on it."
            );
        }
        panic!(
            "Cannot start a runtime from within a runtime: `block_on` was called on a thread that \
             is already driving a weft runtime (a worker thread, or inside another `block_on`). \
             Blocking here would stall every task of that runtime. Inside async code, `.await` \
             the future instead, or spawn it with `weft::spawn` and await its `JoinHandle`."
        );
    }
    DrivingGuard { previous }
}

impl Drop for DrivingGuard {
    fn drop(&mut self) {
        let previous = self.previous;
        let _ = CONTEXT.try_with(|cx| cx.driving.set(previous));
    }
}
