//! Graceful shutdown's bookkeeping for `serve`: a signal every connection
//! task watches, and a count of live connections the server waits on.
//!
//! # The protocol
//!
//! [`Drain`] holds a `draining` flag and, under one mutex, the wakers of
//! the connection tasks waiting for the signal (one slot per [`Watch`]),
//! the number of live watches and the waker of the server waiting for none
//! to be left.
//!
//! 1. The accept loop makes a `Watch` (counted at once, under the lock)
//!    before it spawns the connection's task, so a connection accepted
//!    before the signal is waited for even if its task has not run yet.
//! 2. [`Drain::start`] sets `draining` under the lock, takes every waker
//!    in the table and wakes them once the lock is released.
//! 3. [`Watch::poll_signal`] reads `draining`. If it is clear and this
//!    watch's waker is in the table already (a task's waker `will_wake`
//!    itself from poll to poll), it returns `Pending` without locking: the
//!    waker went into the table under the lock, so before `start` took the
//!    lock (had `start` come first, the registration would have seen the
//!    flag, read under the same lock), and `start` takes and wakes it.
//!    Otherwise it locks, reads the flag again and stores its waker.
//! 4. Dropping a `Watch` empties its slot and counts it out; the last one
//!    takes the server's waker, woken once the lock is released.
//! 5. [`Drain::poll_idle`] is `Ready` once the count is zero, else it
//!    stores the server's waker, under the lock 4 takes: no wake-up is lost.
//!
//! The flag is written only under the lock and publishes nothing but
//! itself; its unlocked read in 3 is a shortcut whose `false` is always
//! safe (the wake of 2 follows). No waker is cloned, woken or dropped
//! under the lock: a waker is any executor's code. The loom models at the end check 2 against 3 and
//! 4 against 5.

use std::task::{Context, Poll, Waker};

use crate::util::locks::{Mutex, MutexGuard};
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::{AtomicBool, Ordering};

/// The graceful-shutdown signal and the count of connections it waits for.
#[derive(Debug, Default)]
pub(crate) struct Drain {
    /// Set once, by `start`, under `state`'s lock.
    draining: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// One slot per live watch: its task's waker once it has polled.
    wakers: Vec<Option<Waker>>,
    /// Slots of dropped watches, for the next ones.
    free: Vec<usize>,
    live: usize,
    /// The server waiting in `poll_idle`.
    idle: Option<Waker>,
}

impl Drain {
    pub(crate) fn new() -> Arc<Drain> {
        Arc::new(Drain::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A watch for one connection, counted until it is dropped. (Not a
    /// method: loom's `Arc` cannot be a receiver.)
    pub(crate) fn watch(drain: &Arc<Drain>) -> Watch {
        let mut state = drain.lock();
        state.live += 1;
        let slot = match state.free.pop() {
            Some(slot) => slot,
            None => {
                state.wakers.push(None);
                state.wakers.len() - 1
            }
        };
        drop(state);
        Watch {
            drain: Arc::clone(drain),
            slot,
            registered: None,
        }
    }

    /// Signals every watch, once.
    pub(crate) fn start(&self) {
        let mut state = self.lock();
        self.draining.store(true, Ordering::Relaxed);
        let wakers: Vec<Waker> = state.wakers.iter_mut().filter_map(Option::take).collect();
        drop(state);
        for waker in wakers {
            waker.wake();
        }
    }

    /// `Ready` once every watch has been dropped.
    pub(crate) fn poll_idle(&self, cx: &mut Context<'_>) -> Poll<()> {
        // Cloned, and the waker it replaces dropped, outside the lock.
        let waker = cx.waker().clone();
        let mut state = self.lock();
        if state.live == 0 {
            return Poll::Ready(());
        }
        let replaced = state.idle.replace(waker);
        drop(state);
        drop(replaced);
        Poll::Pending
    }
}

/// One connection's view of the [`Drain`].
#[derive(Debug)]
pub(crate) struct Watch {
    drain: Arc<Drain>,
    slot: usize,
    /// The waker stored in the slot, if any (rule 3's shortcut).
    registered: Option<Waker>,
}

impl Watch {
    /// `Ready` once the drain has started.
    pub(crate) fn poll_signal(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.drain.draining.load(Ordering::Relaxed) {
            return Poll::Ready(());
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|registered| registered.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        // Cloned, and the waker it replaces dropped, outside the lock.
        let waker = cx.waker().clone();
        let mut state = self.drain.lock();
        if self.drain.draining.load(Ordering::Relaxed) {
            return Poll::Ready(());
        }
        let replaced = state.wakers[self.slot].replace(waker);
        drop(state);
        drop(replaced);
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut state = self.drain.lock();
        let waker = state.wakers[self.slot].take();
        state.free.push(self.slot);
        state.live -= 1;
        let idle = if state.live == 0 {
            state.idle.take()
        } else {
            None
        };
        drop(state);
        drop(waker);
        if let Some(idle) = idle {
            idle.wake();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    use super::*;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counting() -> (std::sync::Arc<Count>, Waker) {
        let count = std::sync::Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn start_wakes_each_registered_watch_once_and_idle_waits_for_every_watch() {
        let drain = Drain::new();
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let mut first = Drain::watch(&drain);
        let mut second = Drain::watch(&drain);
        let never_polled = Drain::watch(&drain);
        assert!(first.poll_signal(&mut cx).is_pending());
        // The shortcut: the same waker again takes no lock and stores nothing new.
        assert!(first.poll_signal(&mut cx).is_pending());
        assert!(second.poll_signal(&mut cx).is_pending());
        assert!(drain.poll_idle(&mut cx).is_pending());
        drain.start();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
        assert!(first.poll_signal(&mut cx).is_ready());
        drop((first, second));
        assert!(drain.poll_idle(&mut cx).is_pending(), "one watch is left");
        drop(never_polled);
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            3,
            "the last drop wakes the server"
        );
        assert!(drain.poll_idle(&mut cx).is_ready());
    }

    #[test]
    fn a_dropped_watchs_slot_is_reused_and_a_new_waker_replaces_the_old() {
        let drain = Drain::new();
        let (old_count, old) = counting();
        let (new_count, new) = counting();
        let first = Drain::watch(&drain);
        let slot = first.slot;
        drop(first);
        let mut again = Drain::watch(&drain);
        assert_eq!(again.slot, slot);
        assert!(
            again
                .poll_signal(&mut Context::from_waker(&old))
                .is_pending()
        );
        assert!(
            again
                .poll_signal(&mut Context::from_waker(&new))
                .is_pending()
        );
        drain.start();
        assert_eq!(old_count.0.load(Ordering::Relaxed), 0);
        assert_eq!(new_count.0.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn with_no_watch_the_drain_is_idle_at_once() {
        let drain = Drain::new();
        drain.start();
        assert!(
            drain
                .poll_idle(&mut Context::from_waker(Waker::noop()))
                .is_ready()
        );
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use std::task::Wake;

    use loom::sync::atomic::AtomicUsize;

    use super::*;

    /// A waker that counts its wakes (a loom atomic: the wake is part of
    /// the handshake being modelled). Its `wake` emptied (a mutant) survives
    /// the tests, which do not compile this module; both models fail with
    /// it (`scripts/loom.sh hyper_drain`).
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, Ordering::Release);
        }
    }

    /// Rule 3 against rule 2: a connection task that polls while the drain
    /// starts either sees the signal or is woken, and woken, sees it.
    #[test]
    fn a_watch_polled_while_the_drain_starts_sees_the_signal_or_is_woken() {
        loom::model(|| {
            let drain = Drain::new();
            let mut watch = Drain::watch(&drain);
            let starter = {
                let drain = drain.clone();
                loom::thread::spawn(move || drain.start())
            };
            let count = std::sync::Arc::new(Count::default());
            let waker = Waker::from(count.clone());
            let mut cx = Context::from_waker(&waker);
            // Two polls: the second takes the shortcut if the first registered.
            let seen =
                watch.poll_signal(&mut cx).is_ready() || watch.poll_signal(&mut cx).is_ready();
            starter.join().unwrap();
            if !seen {
                assert_eq!(
                    count.0.load(Ordering::Acquire),
                    1,
                    "a pending watch is woken"
                );
                assert!(
                    watch.poll_signal(&mut cx).is_ready(),
                    "and then sees the signal"
                );
            }
        });
    }

    /// Rule 4 against rule 5: the server waiting for the last connection
    /// to end is woken when it does.
    #[test]
    fn the_last_watch_dropped_while_the_server_waits_wakes_it() {
        loom::model(|| {
            let drain = Drain::new();
            let watch = Drain::watch(&drain);
            let closer = loom::thread::spawn(move || drop(watch));
            let count = std::sync::Arc::new(Count::default());
            let waker = Waker::from(count.clone());
            let idle = drain.poll_idle(&mut Context::from_waker(&waker)).is_ready();
            closer.join().unwrap();
            if !idle {
                assert_eq!(count.0.load(Ordering::Acquire), 1, "the server is woken");
                assert!(drain.poll_idle(&mut Context::from_waker(&waker)).is_ready());
            }
        });
    }
}
