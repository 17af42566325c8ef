//! How a worker sleeps and is woken.
//!
//! A `Parker` is a one-token semaphore: `unpark` stores the token, `park`
//! blocks until a token is there and consumes it, so an `unpark` that lands
//! before the `park` is not lost. The mutex makes the token hand-off obviously
//! race-free (and loom-checkable); the cost is paid only on the sleep path.
//!
//! Timers and I/O will stack here: a worker holding the driver parks *on the
//! driver* (epoll/timer wait with the next deadline) instead of the condvar,
//! and `unpark` will also poke the driver's waker. The idle protocol in
//! `idle.rs` does not change with that: it decides *whom* to wake, this file
//! only *how*.

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

    /// Makes a token available, waking the parked thread if there is one.
    pub(crate) fn unpark(&self) {
        *self.token.lock().unwrap() = true;
        self.condvar.notify_one();
    }
}
