//! The runtime's locks, and the guard that keeps user code out from under
//! them.
//!
//! # The rule
//!
//! The runtime never calls code it does not own while it holds one of its
//! locks. Code it does not own: a task's `poll`, the drop of a future, a
//! closure or a task's output (destructors), a waker's `wake`, `clone` and
//! `drop` (a foreign waker's vtable is the program's), the thread hooks
//! (`on_thread_start`, `on_thread_stop`, `thread_name`), `on_stall`, and the
//! drop of a panic payload. Any of those may re-enter the runtime (spawn,
//! `spawn_blocking`, read `Handle::metrics`, arm a timer, abort a task,
//! drop a `JoinHandle`) and take the same lock again on the same thread: a
//! deadlock (neither `std`'s mutex nor loom's is reentrant), or, with the
//! lock's own state half-changed, worse. It is a correctness rule.
//!
//! # The guard
//!
//! Every runtime lock is one of this module's: [`Mutex`] and [`Condvar`]
//! wrap `std`'s, or loom's under `cfg(loom)` (the locks of the modelled
//! protocols); [`StdMutex`] and [`StdCondvar`] wrap `std`'s always (locks
//! no model checks, and `static`s, which need a `const` constructor). In
//! debug builds and under loom every guard counts itself in a thread-local
//! while it is alive, and [`user_code`], called at each place the runtime
//! calls code it does not own, asserts that the count is zero, naming that
//! place. So a change that calls user code under a lock fails the first
//! test that passes there, whatever the user code does, instead of hanging
//! the day a destructor re-enters the runtime. A condvar wait keeps its
//! guard counted: the waiting thread runs nothing meanwhile, and it holds
//! the lock again when the wait returns.
//!
//! In release builds the count does not exist: a guard is the inner guard
//! beside a zero-sized field with no `Drop`, and `user_code` is empty.
//!
//! The runtime contains the panics of the code it calls (a task's poll, a
//! destructor, a hook), and a failed check is a panic too, often raised
//! inside such code (a `Sleep` dropped by a task's destructor, a waker
//! woken by a task's poll): contained, it would be lost. So every
//! containment is [`call_user`], which ends the process when what it
//! caught is the guard's failure (its message is printed first); so does
//! async-task, for a failure inside a drop it runs.
//!
//! Adding a site is one line: `crate::util::locks::call_user("what runs", || ...)`
//! where the runtime contains the code's panic, or
//! `crate::util::locks::user_code("what runs")` right before the call where it
//! does not (a waker's clone). Adding a lock: take it from here, not from
//! `std::sync` or `crate::util::loom`. Left out, as not the runtime's: the locks
//! of the tests and of the loom models' helpers. `util/locks/tests.rs` checks
//! the guard itself; `weft/tests/reentrance.rs` re-enters the runtime from
//! every kind of site.

use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
use std::time::{Duration, Instant};

#[cfg(any(debug_assertions, loom))]
use std::cell::Cell;

// Under loom every modelled thread runs on one OS thread, so a `std`
// thread-local would count the locks of every modelled thread at once:
// loom's is per modelled thread.
#[cfg(all(debug_assertions, not(loom)))]
std::thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
}
#[cfg(loom)]
loom::thread_local! {
    static HELD: Cell<usize> = Cell::new(0);
}

// Set on a thread whose check failed, until the thread ends: the panic
// unwinding from it is the guard's (`call_user`).
#[cfg(any(debug_assertions, loom))]
std::thread_local! {
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

/// Asserts (in debug builds and under loom) that the calling thread holds
/// no runtime lock: call it right before the runtime calls code it does
/// not own. `what` names that code in the failure.
#[inline(always)]
#[track_caller]
pub(crate) fn user_code(what: &'static str) {
    #[cfg(any(debug_assertions, loom))]
    {
        let held = locks_held();
        if held != 0 {
            FAILED.with(|failed| failed.set(true));
            panic!(
                "weft calls user code ({what}) while this thread holds {held} runtime lock(s): \
                 user code may re-enter the runtime and take the same lock again (`util/locks.rs`)"
            );
        }
    }
    #[cfg(not(any(debug_assertions, loom)))]
    let _ = what;
}

/// Calls `f`, code the runtime does not own, after [`user_code`]'s check,
/// and contains its panic (the caller drops or reports the payload). A
/// panic that is the guard's own failure, from anywhere inside `f`, is not
/// contained: the process aborts, its message already printed.
#[inline(always)]
#[track_caller]
pub(crate) fn call_user<R>(what: &'static str, f: impl FnOnce() -> R) -> std::thread::Result<R> {
    user_code(what);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    #[cfg(any(debug_assertions, loom))]
    if caught.is_err() && FAILED.with(Cell::get) {
        eprintln!("weft: the lock guard failed inside {what} (message above): aborting");
        std::process::abort();
    }
    caught
}

/// How many runtime locks the calling thread holds (0 during thread-local
/// destruction, when nothing is counted any more).
#[cfg(any(debug_assertions, loom))]
pub(crate) fn locks_held() -> usize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

/// Counts one held lock while alive (debug builds and loom); zero-sized.
struct Held(());

impl Held {
    #[inline(always)]
    fn new() -> Held {
        #[cfg(any(debug_assertions, loom))]
        let _ = HELD.try_with(|held| held.set(held.get() + 1));
        Held(())
    }
}

#[cfg(any(debug_assertions, loom))]
impl Drop for Held {
    fn drop(&mut self) {
        // Counted by `new` unless the thread-local was already gone then,
        // in which case it is gone now too (it never comes back).
        let _ = HELD.try_with(|held| held.set(held.get() - 1));
    }
}

/// A held runtime lock: the inner guard `G` (std's or loom's), counted
/// while alive. Derefs to the guarded value.
pub(crate) struct Guard<G> {
    inner: G,
    held: Held,
}

impl<G> Guard<G> {
    #[inline(always)]
    fn new(inner: G) -> Guard<G> {
        Guard {
            inner,
            held: Held::new(),
        }
    }
}

impl<G: std::fmt::Debug> std::fmt::Debug for Guard<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<G: std::ops::Deref> std::ops::Deref for Guard<G> {
    type Target = G::Target;

    #[inline(always)]
    fn deref(&self) -> &G::Target {
        &self.inner
    }
}

impl<G: std::ops::DerefMut> std::ops::DerefMut for Guard<G> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.inner
    }
}

#[inline(always)]
fn counted<G>(locked: LockResult<G>) -> LockResult<Guard<G>> {
    match locked {
        Ok(inner) => Ok(Guard::new(inner)),
        Err(poisoned) => Err(PoisonError::new(Guard::new(poisoned.into_inner()))),
    }
}

#[inline(always)]
fn counted_try<G>(locked: TryLockResult<G>) -> TryLockResult<Guard<G>> {
    match locked {
        Ok(inner) => Ok(Guard::new(inner)),
        Err(TryLockError::Poisoned(poisoned)) => Err(TryLockError::Poisoned(PoisonError::new(
            Guard::new(poisoned.into_inner()),
        ))),
        Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
    }
}

/// A guard that waited on a condvar, with the count it kept meanwhile.
#[inline(always)]
fn rewrapped<G>(waited: LockResult<G>, held: Held) -> LockResult<Guard<G>> {
    match waited {
        Ok(inner) => Ok(Guard { inner, held }),
        Err(poisoned) => Err(PoisonError::new(Guard {
            inner: poisoned.into_inner(),
            held,
        })),
    }
}

/// One flavour of counted mutex and condvar over `$backend`'s (a path to
/// a module with `Mutex`, `MutexGuard`, `Condvar`, `WaitTimeoutResult`).
macro_rules! counted_locks {
    (
        $(#[$mutex_doc:meta])* mutex $mutex:ident, guard $guard:ident,
        $(#[$condvar_doc:meta])* condvar $condvar:ident,
        $(#[$idle_doc:meta])* idle list $idle:ident,
        backend $backend:ident, new: $($constness:ident)?
    ) => {
        $(#[$mutex_doc])*
        #[derive(Debug, Default)]
        pub(crate) struct $mutex<T>($backend::Mutex<T>);

        /// The guard of the mutex of the same flavour: counted while
        /// alive (debug builds and loom), derefs to the value.
        pub(crate) type $guard<'a, T> = Guard<$backend::MutexGuard<'a, T>>;

        impl<T> $mutex<T> {
            pub(crate) $($constness)? fn new(value: T) -> Self {
                Self($backend::Mutex::new(value))
            }

            #[inline(always)]
            #[track_caller]
            pub(crate) fn lock(&self) -> LockResult<$guard<'_, T>> {
                counted(self.0.lock())
            }

            #[allow(dead_code)] // not every flavour uses it
            #[inline(always)]
            #[track_caller]
            pub(crate) fn try_lock(&self) -> TryLockResult<$guard<'_, T>> {
                counted_try(self.0.try_lock())
            }

            /// The value without locking (`&mut self`: nobody else can
            /// hold the lock), so nothing is counted.
            #[allow(dead_code)] // not every flavour uses it
            #[inline(always)]
            pub(crate) fn get_mut(&mut self) -> LockResult<&mut T> {
                self.0.get_mut()
            }

            #[allow(dead_code)] // not every flavour uses it
            pub(crate) fn into_inner(self) -> LockResult<T> {
                self.0.into_inner()
            }
        }

        $(#[$condvar_doc])*
        #[derive(Debug, Default)]
        pub(crate) struct $condvar($backend::Condvar);

        impl $condvar {
            pub(crate) fn new() -> Self {
                Self($backend::Condvar::new())
            }

            /// Waits for a notification; the guard stays counted.
            #[track_caller]
            pub(crate) fn wait<'a, T>(&self, guard: $guard<'a, T>) -> LockResult<$guard<'a, T>> {
                let Guard { inner, held } = guard;
                rewrapped(self.0.wait(inner), held)
            }

            /// Waits for a notification or `timeout`; the guard stays
            /// counted.
            pub(crate) fn wait_timeout<'a, T>(
                &self,
                guard: $guard<'a, T>,
                timeout: Duration,
            ) -> LockResult<($guard<'a, T>, $backend::WaitTimeoutResult)> {
                let Guard { inner, held } = guard;
                match self.0.wait_timeout(inner, timeout) {
                    Ok((inner, result)) => Ok((Guard { inner, held }, result)),
                    Err(poisoned) => {
                        let (inner, result) = poisoned.into_inner();
                        Err(PoisonError::new((Guard { inner, held }, result)))
                    }
                }
            }

            #[inline]
            #[track_caller]
            pub(crate) fn notify_one(&self) {
                self.0.notify_one();
            }

            #[inline]
            #[track_caller]
            pub(crate) fn notify_all(&self) {
                self.0.notify_all();
            }
        }

        $(#[$idle_doc])*
        ///
        /// Idle threads, each waiting on a condvar of its own, the most
        /// recently idle last; kept under the pool's mutex. Work wakes the
        /// *last* one: under a steady need the same few threads take
        /// everything and the others time out (woken in turn on one
        /// condvar, every thread would be handed work within its timeout
        /// and a pool would keep its largest burst's size for good). A
        /// thread no longer listed when it wakes was woken for work.
        #[derive(Debug, Default)]
        pub(crate) struct $idle(Vec<$backend::Arc<$condvar>>);

        impl $idle {
            /// Lists `me` as the most recently idle.
            pub(crate) fn push(&mut self, me: &$backend::Arc<$condvar>) {
                self.0.push($backend::Arc::clone(me));
            }

            /// Takes the most recently idle thread out and wakes it;
            /// whether one was listed.
            pub(crate) fn wake_last(&mut self) -> bool {
                let Some(last) = self.0.pop() else {
                    return false;
                };
                last.notify_one();
                true
            }

            /// Whether `me` is still listed (not woken for work).
            #[allow(dead_code)] // not every flavour uses it
            pub(crate) fn contains(&self, me: &$backend::Arc<$condvar>) -> bool {
                self.0.iter().any(|idle| $backend::Arc::ptr_eq(idle, me))
            }

            /// Takes `me` out if still listed; whether it was.
            pub(crate) fn remove(&mut self, me: &$backend::Arc<$condvar>) -> bool {
                let listed = self.0.iter().position(|idle| $backend::Arc::ptr_eq(idle, me));
                listed.map(|at| self.0.remove(at)).is_some()
            }

            #[allow(dead_code)] // not every flavour uses it
            pub(crate) fn len(&self) -> usize {
                self.0.len()
            }

            /// Wakes every listed thread, leaving it listed (shutdown).
            pub(crate) fn wake_all(&self) {
                self.0.iter().for_each(|idle| idle.notify_one());
            }
        }
    };
}

#[cfg(loom)]
use loom::sync as modelled;
#[cfg(not(loom))]
use std::sync as modelled;
use std::sync as plain;

counted_locks! {
    /// A runtime mutex of a modelled protocol: `std`'s, loom's under
    /// `cfg(loom)`; its guard counts itself (see the module doc).
    mutex Mutex, guard MutexGuard,
    /// The condvar of a [`Mutex`].
    condvar Condvar,
    /// A list of idle threads for a [`Mutex`]'s state (the stall
    /// monitor's spares).
    idle list IdleThreads,
    backend modelled, new:
}

counted_locks! {
    /// A runtime mutex no model checks: always `std`'s (also under loom,
    /// as before), `const`-constructible for `static`s; its guard counts
    /// itself (see the module doc).
    mutex StdMutex, guard StdMutexGuard,
    /// The condvar of a [`StdMutex`].
    condvar StdCondvar,
    /// A list of idle threads for a [`StdMutex`]'s state (the blocking
    /// pool).
    idle list StdIdleThreads,
    backend plain, new: const
}

/// Waits on `condvar` until `done` holds for the guarded state or
/// `deadline` passes (`None`: no deadline); returns whether `done` held.
/// Shared by the workers' exit latch, the blocking pool's shutdown and
/// the tokio-compat thread's.
pub(crate) fn wait_until<T>(
    condvar: &StdCondvar,
    mut guard: StdMutexGuard<'_, T>,
    deadline: Option<Instant>,
    mut done: impl FnMut(&mut T) -> bool,
) -> bool {
    while !done(&mut guard) {
        guard = match deadline {
            None => condvar.wait(guard).unwrap_or_else(|e| e.into_inner()),
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return false;
                }
                condvar
                    .wait_timeout(guard, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
    }
    true
}

// The guard and its tests exist only with debug assertions (a release
// build counts nothing).
#[cfg(all(test, debug_assertions, not(loom)))]
pub(crate) mod tests;
