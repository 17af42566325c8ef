//! Running a future to completion on the calling thread.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Wake, Waker};

// loom's flag and thread handle under `cfg(loom)`: the flag has a writer
// per waker and the `block_on` thread (`loom_tests`).
#[cfg(loom)]
use loom::thread::{self, Thread};
#[cfg(not(loom))]
use std::thread::{self, Thread};

use crate::util::loom::sync::atomic::AtomicBool;

use crate::runtime::scheduler::Shared;

/// Wakes a thread blocked in `block_on`. The flag makes a wake that lands
/// before the thread parks count (std's park token would too, but the flag
/// also absorbs the spurious returns `thread::park` is allowed).
///
/// Every change of the flag is a swap: any number of wakers raise it (and
/// unpark only if it was down), and the `block_on` thread lowers it after
/// each poll and before each sleep (and polls again if it was up). A waker
/// that finds it up needs no unpark: the swap that lowers it comes after
/// the raise in the flag's order and reads it, so the thread polls again
/// and sees what the waker published. `loom_tests.rs` checks it with two
/// wakers.
struct ThreadWaker {
    notified: AtomicBool,
    thread: Thread,
    /// The runtime whose `block_on` waits on this thread, while it waits
    /// (`test-util`): a wake counts the `block_on` as polling again at
    /// once, before the thread gets a core back, so a paused clock cannot
    /// jump in between (all workers parked, the woken `block_on` not yet
    /// running): its future is about to run and may arm the next timer.
    #[cfg(feature = "test-util")]
    waiting_on: crate::util::locks::StdMutex<Option<crate::util::loom::sync::Arc<Shared>>>,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        #[cfg(feature = "test-util")]
        if let Some(shared) = self.take_waiting_on() {
            shared.block_on_polling(true);
        }
        if !self.notified.swap(true, Ordering::AcqRel) {
            self.thread.unpark();
        }
    }
}

thread_local! {
    static THREAD_WAKER: Arc<ThreadWaker> = Arc::new(ThreadWaker {
        notified: AtomicBool::new(false),
        thread: thread::current(),
        #[cfg(feature = "test-util")]
        waiting_on: crate::util::locks::StdMutex::new(None),
    });
}

/// Polls `future` on this thread until it completes, sleeping while it is
/// pending. The caller has set up the runtime context.
#[track_caller]
pub(crate) fn run<F: Future>(
    shared: &crate::util::loom::sync::Arc<Shared>,
    future: F,
) -> F::Output {
    let thread_waker = THREAD_WAKER.with(Arc::clone);
    let waker = Waker::from(thread_waker.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    let _polling = Polling::start(shared);
    // Under `UnhandledPanic::ShutdownRuntime`: a task's panic wakes this
    // thread, and the checks below panic with it, also when the future
    // completed meanwhile (awaiting the panicked task's handle, say).
    let _watching = shared.panic_policy.watch(&waker);
    loop {
        shared.panic_policy.check();
        // The future gets a cooperative budget per poll, as a task does
        // (`runtime/coop.rs`); the caller's is put back after.
        let saved = crate::task::coop::reset();
        crate::util::locks::user_code("block_on's poll of its future");
        let polled = future.as_mut().poll(&mut cx);
        crate::task::coop::restore(saved);
        if let Poll::Ready(output) = polled {
            shared.panic_policy.check();
            return output;
        }
        #[cfg(feature = "test-util")]
        thread_waker.set_waiting_on(Some(shared.clone()));
        if thread_waker.woken() {
            // Woken during the poll (a `yield_now`, say): poll again at
            // once, still counted as polling. Uncounting for that instant
            // let a paused clock jump past every timer while this thread
            // was busy (`advance_fires_what_is_due_and_no_more` hung or
            // failed ~1 run in 10).
            // A wake between `set_waiting_on` and here counted this
            // `block_on` once more: give that back.
            #[cfg(feature = "test-util")]
            if thread_waker.take_waiting_on().is_none() {
                shared.block_on_polling(false);
            }
            continue;
        }
        shared.block_on_polling(false);
        thread_waker.wait();
        // Counted as polling by the wake already, unless the flag was set
        // before this wait began (a wake while polling).
        #[cfg(feature = "test-util")]
        let counted = thread_waker.take_waiting_on().is_none();
        #[cfg(not(feature = "test-util"))]
        let counted = false;
        if !counted {
            shared.block_on_polling(true);
        }
    }
}

/// Tells the runtime this `block_on` polls, until dropped (also when the
/// future panics): a paused test clock must not jump meanwhile.
struct Polling<'a>(&'a Shared);

impl Polling<'_> {
    fn start(shared: &Shared) -> Polling<'_> {
        shared.block_on_polling(true);
        Polling(shared)
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        self.0.block_on_polling(false);
    }
}

/// Times `block_on` yields its core, re-checking for a wake, before it
/// sleeps: a wake that comes within a few microseconds then costs no
/// futex round trip and no context switch back.
const YIELDS_BEFORE_PARK: u32 = 3;

impl ThreadWaker {
    #[cfg(feature = "test-util")]
    fn set_waiting_on(&self, shared: Option<crate::util::loom::sync::Arc<Shared>>) {
        *self.waiting_on.lock().unwrap_or_else(|e| e.into_inner()) = shared;
    }

    #[cfg(feature = "test-util")]
    fn take_waiting_on(&self) -> Option<crate::util::loom::sync::Arc<Shared>> {
        self.waiting_on
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Whether a wake came since the last look (and lowers the flag).
    fn woken(&self) -> bool {
        self.notified.swap(false, Ordering::AcqRel)
    }

    fn wait(&self) {
        for _ in 0..YIELDS_BEFORE_PARK {
            if self.woken() {
                return;
            }
            thread::yield_now();
        }
        while !self.woken() {
            thread::park();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
