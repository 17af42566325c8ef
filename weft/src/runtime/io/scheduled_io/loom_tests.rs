//! loom models of the readiness protocol, through `ScheduledIo`'s and
//! `ReleaseQueue`'s own functions:
//!
//! - readiness delivered while a task stores its waker is never lost (the
//!   task sees it on its re-read under the waiter lock, or is woken);
//! - a delivery that lands between a task's `WouldBlock` and its clear is
//!   not erased by the clear (the tick check);
//! - a source deregistered while an event naming it is in flight is not
//!   freed before the poller's holder has dispatched that event;
//! - a `try_*` call beside a task waiting in the direction's slot does not
//!   take its wake.
//!
//! Each fails when the protocol is broken on purpose: drop the re-read in
//! `poll_ready_with`, make `clear_readiness` ignore the tick, or release a
//! deregistered source at once instead of deferring it.

use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use super::{Direction, READABLE, ReleaseQueue, ScheduledIo};

/// A waker that counts its wakes.
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: StdArc<Self>) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

fn counting_waker() -> (StdArc<CountingWaker>, Waker) {
    let counter = StdArc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(counter.clone());
    (counter, waker)
}

/// The reactor's side: deliver, then wake what it took.
fn deliver(io: &ScheduledIo, ready: u64) {
    let mut wakers = Vec::new();
    io.set_readiness(ready, &mut wakers);
    for waker in wakers {
        waker.wake();
    }
}

#[test]
fn readiness_delivered_while_a_task_stores_its_waker_is_not_lost() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let reactor = {
            let io = io.clone();
            thread::spawn(move || deliver(&io, READABLE))
        };
        let (counter, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let polled = io.poll_ready(&mut cx, Direction::Read);
        reactor.join().unwrap();
        assert!(
            polled.is_ready() || counter.0.load(Ordering::Acquire) == 1,
            "the task waits with its waker stored and nobody wakes it"
        );
    });
}

#[test]
fn a_delivery_between_would_block_and_clear_is_not_erased() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        // An earlier delivery: the task finds the socket readable.
        deliver(&io, READABLE);
        let reactor = {
            let io = io.clone();
            // A new edge: more data arrived.
            thread::spawn(move || deliver(&io, READABLE))
        };
        let (counter, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let Poll::Ready(Ok(event)) = io.poll_ready(&mut cx, Direction::Read) else {
            panic!("readable since the first delivery");
        };
        // The read returned `WouldBlock` (it ran before the new data).
        io.clear_readiness(event, Direction::Read);
        let polled = io.poll_ready(&mut cx, Direction::Read);
        reactor.join().unwrap();
        assert!(
            polled.is_ready() || counter.0.load(Ordering::Acquire) == 1,
            "the new edge was erased by the clear: the task waits for data that is there"
        );
    });
}

/// A registered source, as far as the release protocol sees it: dropping
/// the last reference frees it.
struct Source {
    alive: StdArc<AtomicBool>,
}

impl Drop for Source {
    fn drop(&mut self) {
        self.alive.store(false, Ordering::Release);
    }
}

#[test]
fn a_source_deregistered_while_its_event_is_in_flight_outlives_the_dispatch() {
    loom::model(|| {
        let alive = StdArc::new(AtomicBool::new(true));
        let source = Arc::new(Source {
            alive: alive.clone(),
        });
        // The poller's lock, and the kernel's interest list (what a wait
        // can return): `Some` while registered.
        let poller = Arc::new(Mutex::new(()));
        let in_kernel = Arc::new(Mutex::new(Some(source.clone())));
        let release = Arc::new(ReleaseQueue::new());
        let owner = {
            let (in_kernel, release) = (in_kernel.clone(), release.clone());
            thread::spawn(move || {
                // Deregistration: `epoll_ctl(DEL)`, then defer the set's
                // reference; the owner's own reference goes too.
                let registered = in_kernel.lock().unwrap().take();
                if let Some(registered) = registered {
                    release.defer(registered);
                }
                drop(source);
            })
        };
        {
            let _held = poller.lock().unwrap();
            // A wait returns an event naming the source (if still in the
            // interest list): the event carries its address, not a
            // reference.
            let event = in_kernel
                .lock()
                .unwrap()
                .as_ref()
                .map(|source| Arc::as_ptr(source) as usize);
            thread::yield_now();
            if event.is_some() {
                assert!(
                    alive.load(Ordering::Acquire),
                    "the event's source was freed before its dispatch"
                );
            }
            release.release();
        }
        owner.join().unwrap();
        let _held = poller.lock().unwrap();
        release.release();
        assert!(!alive.load(Ordering::Acquire), "released in the end");
    });
}

/// The direction's waker slot has a writer per task that polls it; a
/// `try_*` call (`PollEvented::try_io`, through `ready_now`) is not one of
/// them. A task waits in the slot (`poll_read`) while another thread tries
/// the same direction and the reactor delivers: the waiting task sees the
/// readiness or is woken, whatever the order.
///
/// Fails with `ready_now` made a `poll_ready` with a no-op waker (what
/// `try_io` did): the no-op waker takes the slot and the delivery wakes it
/// instead of the task.
#[test]
fn a_try_beside_a_waiting_task_does_not_take_its_wake() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let (counter, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        let polled = io.poll_ready(&mut cx, Direction::Read);
        let trier = {
            let io = io.clone();
            thread::spawn(move || io.ready_now(Direction::Read).is_some())
        };
        let reactor = {
            let io = io.clone();
            thread::spawn(move || deliver(&io, READABLE))
        };
        let _ = trier.join().unwrap();
        reactor.join().unwrap();
        assert!(
            polled.is_ready() || counter.0.load(Ordering::Acquire) == 1,
            "the waiting task is never woken"
        );
    });
}
