//! loom model of `block_on`'s wake flag (`ThreadWaker::notified`), which
//! has a writer per waker and the `block_on` thread: two wakers each
//! publish an event and wake the thread (the real `wake_by_ref`), while the
//! thread runs `run`'s loop (look at the events as a poll would, lower the
//! flag with `woken`, sleep in the real `wait`) until it has seen both. A
//! lost wake leaves it parked for good, which loom reports as a deadlock.
//!
//! Fails with the waker's swap split into a load and a store (a waker that
//! finds the flag up from the other waker skips the unpark, and its event
//! is not published to the thread by the swap that lowers the flag), with
//! `woken`'s swap split so (a raise between the two is erased), and with
//! `woken`'s swap made `Relaxed` (the thread polls without the events the
//! raise published).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Wake;

use loom::sync::atomic::AtomicBool;
use loom::thread;

use super::ThreadWaker;

/// A `ThreadWaker` of the calling thread.
fn thread_waker() -> Arc<ThreadWaker> {
    Arc::new(ThreadWaker {
        notified: AtomicBool::new(false),
        thread: thread::current(),
        #[cfg(feature = "test-util")]
        waiting_on: crate::util::locks::StdMutex::new(None),
    })
}

#[test]
fn two_wakers_racing_the_block_on_thread_going_to_sleep_wake_it() {
    loom::model(|| {
        let waker = thread_waker();
        let events = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        for i in 0..2 {
            let (waker, events) = (waker.clone(), events.clone());
            // Not joined: loom cannot unpark a thread blocked in a join
            // (loom issue 249), and the model ends when every thread has.
            drop(thread::spawn(move || {
                events[i].store(true, Ordering::Relaxed);
                waker.wake_by_ref();
            }));
        }
        // `run`'s loop, the poll being a look at both events.
        loop {
            if events.iter().all(|event| event.load(Ordering::Relaxed)) {
                break;
            }
            if waker.woken() {
                continue;
            }
            waker.wait();
        }
    });
}
