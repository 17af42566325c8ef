//! How a worker sleeps and is woken.
//!
//! A `Parker` is a one-token semaphore: `unpark` stores the token, a park
//! blocks until a token is there and consumes it, so an `unpark` that lands
//! before the park is not lost. The mutex makes the token hand-off obviously
//! race-free (and loom-checkable); the cost is paid only on the sleep path.
//!
//! Timers and I/O stack here: the one sleeping worker that keeps time (the
//! keeper of `runtime/time/driver.rs`) sleeps with a timeout, the earliest deadline
//! of every wheel, and it sleeps in the reactor's OS poller
//! (`runtime/io/driver.rs`) rather than on the condvar, so readiness wakes it too
//! (`park_in_poller`). The condvar's timeout is a futex wait with
//! nanosecond resolution, epoll's is in milliseconds (rounded up: never
//! early), so a keeper whose deadline is under a millisecond away and has
//! no source to watch uses the condvar. `unpark` knows which way the
//! thread sleeps (`in_poller`, under the same mutex as the token) and
//! tells the caller to wake the poller when that is where it sleeps. The
//! idle protocol in `idle.rs` does not change: it decides *whom* to wake,
//! this file only *how*.

use std::time::Duration;

use crate::util::locks::{Condvar, Mutex};

struct State {
    token: bool,
    /// The thread sleeps in the OS poller, not on the condvar.
    in_poller: bool,
}

pub(crate) struct Parker {
    state: Mutex<State>,
    condvar: Condvar,
}

/// How `unpark` reached the thread.
#[must_use = "a thread sleeping in the poller needs the poller woken"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unparked {
    /// Through the condvar (or it was not asleep): nothing more to do.
    Done,
    /// It sleeps in the OS poller: the caller wakes the poller.
    WakePoller,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            state: Mutex::new(State {
                token: false,
                in_poller: false,
            }),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until a token is available, then consumes it.
    pub(crate) fn park(&self) {
        let mut state = self.state.lock().unwrap();
        while !state.token {
            state = self.condvar.wait(state).unwrap();
        }
        state.token = false;
    }

    /// Blocks until a token is available or `timeout` passes; consumes the
    /// token if there is one and returns whether there was.
    pub(crate) fn park_timeout(&self, timeout: Duration) -> bool {
        let mut state = self.state.lock().unwrap();
        if !state.token {
            state = self.condvar.wait_timeout(state, timeout).unwrap().0;
        }
        std::mem::replace(&mut state.token, false)
    }

    /// Sleeps in `wait` (the OS poller) unless a token is already there;
    /// an `unpark` meanwhile answers `WakePoller`, so its caller ends the
    /// wait. Consumes the token; returns whether there was one.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn park_in_poller(&self, wait: impl FnOnce()) -> bool {
        {
            let mut state = self.state.lock().unwrap();
            if std::mem::replace(&mut state.token, false) {
                return true;
            }
            state.in_poller = true;
        }
        wait();
        let mut state = self.state.lock().unwrap();
        state.in_poller = false;
        std::mem::replace(&mut state.token, false)
    }

    /// Whether an `unpark` is waiting to be consumed. The poller's waiter
    /// asks under the poller's lock, right before it blocks: a busy worker
    /// looking at the poller may have consumed the wake-up event meant for
    /// it, but not before the token was stored (`unpark` stores it first).
    ///
    /// Only the I/O path calls it (loom builds no reactor). Mutation
    /// testing: `true` makes an idle keeper spin in the poller, which
    /// `tests/idle_cpu.rs` catches; `false` survives the tests: it matters
    /// only when a busy worker's look at the poller consumes the wake-up
    /// event between the `unpark` and this wait, a window no test can
    /// aim at (the keeper then sleeps until its timeout or the next event).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn has_token(&self) -> bool {
        self.state.lock().unwrap().token
    }

    /// Makes a token available and wakes the parked thread if there is one
    /// (or says that its poller must be woken).
    pub(crate) fn unpark(&self) -> Unparked {
        let mut state = self.state.lock().unwrap();
        state.token = true;
        if state.in_poller {
            return Unparked::WakePoller;
        }
        drop(state);
        self.condvar.notify_one();
        Unparked::Done
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
