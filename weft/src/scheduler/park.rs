//! How a worker sleeps and is woken.
//!
//! A `Parker` is a one-token semaphore: `unpark` stores the token, `park`
//! blocks until a token is there and consumes it, so an `unpark` that lands
//! before the `park` is not lost. The mutex makes the token hand-off obviously
//! race-free (and loom-checkable); the cost is paid only on the sleep path.
//!
//! Timers stack here: the one sleeping worker that keeps time (the keeper
//! of `time/driver.rs`) parks with a timeout, the earliest deadline of every
//! wheel; the condvar's timeout is a futex wait with nanosecond resolution
//! (plus the kernel's timer slack, 50 µs by default), so deadlines under a
//! millisecond are kept. I/O will stack here too: the worker holding the
//! poller parks in it with the same timeout. The idle protocol in `idle.rs`
//! does not change with that: it decides *whom* to wake, this file only
//! *how*.

use std::time::Duration;

use crate::loom::sync::{Condvar, Mutex};

pub(crate) struct Parker {
    token: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            token: Mutex::new(false),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until a token is available, then consumes it.
    pub(crate) fn park(&self) {
        let mut token = self.token.lock().unwrap();
        while !*token {
            token = self.condvar.wait(token).unwrap();
        }
        *token = false;
    }

    /// Blocks until a token is available or `timeout` passes; consumes the
    /// token if there is one and returns whether there was.
    pub(crate) fn park_timeout(&self, timeout: Duration) -> bool {
        let mut token = self.token.lock().unwrap();
        if !*token {
            token = self.condvar.wait_timeout(token, timeout).unwrap().0;
        }
        std::mem::replace(&mut *token, false)
    }

    /// Makes a token available, waking the parked thread if there is one.
    pub(crate) fn unpark(&self) {
        *self.token.lock().unwrap() = true;
        self.condvar.notify_one();
    }
}
