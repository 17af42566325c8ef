//! The count of registered sources, and its handshake with a worker going
//! to sleep as the timekeeper.
//!
//! The keeper sleeps in the reactor's poller while any source is
//! registered, else on its condvar (cheaper to wake, finer timeouts), where
//! readiness cannot reach it. So the first registration (the count going
//! from 0) must either be seen by a keeper going to sleep, or find that
//! keeper in the time driver's keeper word and poke it into the poller.
//! `loom_tests.rs` models it through these functions and the time driver's.

use std::sync::atomic::Ordering;

use crate::util::loom::sync::atomic::{AtomicUsize, fence};

#[cfg(all(test, loom))]
mod loom_tests;

/// How many sources are registered (see the module doc).
pub(crate) struct Registrations {
    count: AtomicUsize,
}

impl Registrations {
    pub(crate) fn new() -> Registrations {
        Registrations {
            count: AtomicUsize::new(0),
        }
    }

    /// Counts a new source. Whether it is the first (the count went from
    /// 0): the caller then looks for a keeper to poke (`Registered::first`).
    pub(crate) fn add(&self) -> bool {
        let first = self.count.fetch_add(1, Ordering::Relaxed) == 0;
        if first {
            // Pairs with the fence in the keeper's `begin_keeping`: either
            // the keeper reads the new count after its fence and sleeps in
            // the poller, or the caller's look at the keeper word (after
            // this fence) finds it and pokes it. Fences, not one
            // read-modify-write: the two sides write different words (the
            // count here, the keeper word there), and loom models `SeqCst`
            // fences exactly.
            fence(Ordering::SeqCst);
        }
        first
    }

    /// A source is gone. The count going back to 0 only lets a keeper
    /// sleep on its condvar again and a busy worker skip the empty poller
    /// (`Driver::poll_ready_now` in `driver.rs`): speed, not wake-ups. With
    /// `remove` a no-op, or `count` always 1, a keeper sleeps in the poller
    /// with nothing registered, which the unpark path reaches too: so no
    /// model or test tells.
    pub(crate) fn remove(&self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}
