//! loom model of a local task woken from another thread (`local.rs`).
//!
//! The set's owner polls it (`run_until`, through a `block_on` whose park
//! is loom's): each look stores the poller's waker, then pops the
//! queue. Another thread wakes the task while that happens; its push takes
//! the stored waker under the queue's lock. A wake lost between the two
//! (the push seeing no waker, the look seeing no task) leaves `block_on`
//! parked forever: loom reports the deadlock. The task is polled on the
//! owner's thread only (async-task's `spawn_local` panics otherwise), and
//! its output comes back through its handle.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::{Arc, Mutex};

use super::LocalSet;

/// Pending until another thread opens it; keeps the waker of its last
/// poll for that thread.
struct Gate {
    state: Arc<Mutex<(bool, Option<Waker>)>>,
}

impl Future for Gate {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut state = self.state.lock().unwrap();
        if state.0 {
            return Poll::Ready(7);
        }
        state.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Unparks the thread that polls (loom's park: a lost wake is a deadlock
/// loom reports).
struct Unpark(loom::thread::Thread);

impl Wake for Unpark {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread until it completes, parking between polls.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(std::sync::Arc::new(Unpark(loom::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        loom::thread::park();
    }
}

#[test]
fn a_wake_from_another_thread_is_never_lost() {
    loom::model(|| {
        let set = LocalSet::new();
        let state = Arc::new(Mutex::new((false, None::<Waker>)));
        let task = set.spawn_local(Gate {
            state: state.clone(),
        });
        let opener = loom::thread::spawn(move || {
            loop {
                let waker = {
                    let mut state = state.lock().unwrap();
                    state.1.take().inspect(|_| state.0 = true)
                };
                if let Some(waker) = waker {
                    waker.wake();
                    return;
                }
                loom::thread::yield_now();
            }
        });
        let output = block_on(set.run_until(task));
        assert_eq!(output.unwrap(), 7);
        opener.join().unwrap();
    });
}
