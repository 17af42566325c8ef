//! Two `JoinHandle` orderings the loom models cannot see, because the
//! runner's poll-or-drop decision sits in async-task's own (std, not loom)
//! atomics. Each is forced here with real threads and a handshake, so the
//! ordering happens on every run rather than by luck.
//!
//! - An `abort` requested while the task is inside its poll: the poll
//!   finishes, the cancellation takes effect right after it, and the task is
//!   never polled again (even though it woke itself during that poll).
//! - An aborted task's handle resolves as cancelled only once the task's
//!   future has been dropped: checked at the moment the handle resolves.
//!
//! Each was shown to fail with its bug put in on purpose: `abort` storing
//! the cancel future without polling it (the cancellation then waits for
//! someone to await the handle), and an aborting handle answering
//! "cancelled" without awaiting the cancel future.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll};
use std::time::Duration;

use common::on_every_shape;

/// Pending forever; its first poll meets the test at `inside` and waits at
/// `aborted` until the test has called `abort`, then wakes itself.
struct AbortedWhilePolled {
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
    inside: Arc<Barrier>,
    aborted: Arc<Barrier>,
}

impl Future for AbortedWhilePolled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polls.fetch_add(1, Ordering::SeqCst) == 0 {
            self.inside.wait();
            self.aborted.wait();
            // A wake during the poll reschedules the task: only the
            // cancellation may keep it from being polled again.
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

impl Drop for AbortedWhilePolled {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

#[test]
fn abort_during_a_poll_takes_effect_after_it_and_the_task_is_never_polled_again() {
    on_every_shape(|rt| {
        for _ in 0..20 {
            let polls = Arc::new(AtomicUsize::new(0));
            let dropped = Arc::new(AtomicBool::new(false));
            let inside = Arc::new(Barrier::new(2));
            let aborted = Arc::new(Barrier::new(2));
            let handle = rt.spawn(AbortedWhilePolled {
                polls: polls.clone(),
                dropped: dropped.clone(),
                inside: inside.clone(),
                aborted: aborted.clone(),
            });
            inside.wait();
            // The task is inside its first poll right now.
            handle.abort();
            assert!(
                !dropped.load(Ordering::SeqCst),
                "dropped while being polled"
            );
            aborted.wait();
            // Nobody awaits the handle yet: the cancellation must still take
            // effect as soon as the poll is over (the future is dropped).
            let start = std::time::Instant::now();
            while !dropped.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_micros(100));
            }
            assert!(
                dropped.load(Ordering::SeqCst),
                "the aborted task was not cancelled after its poll"
            );
            let err = rt.block_on(handle).unwrap_err();
            assert!(err.is_cancelled(), "an aborted task reports cancellation");
            // Give a wrongly rescheduled task every chance to run again.
            rt.block_on(async {
                for _ in 0..10 {
                    weft::task::yield_now().await;
                }
            });
            std::thread::sleep(Duration::from_millis(2));
            assert_eq!(polls.load(Ordering::SeqCst), 1, "polled again after abort");
        }
    });
}

/// A future whose destructor takes a while, then records that it ran.
struct SlowDrop {
    dropped: Arc<AtomicBool>,
}

impl Future for SlowDrop {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for SlowDrop {
    fn drop(&mut self) {
        // Long enough that a handle resolving early would be seen doing so.
        std::thread::sleep(Duration::from_millis(20));
        self.dropped.store(true, Ordering::SeqCst);
    }
}

#[test]
fn an_aborted_handle_resolves_only_after_the_future_is_dropped() {
    on_every_shape(|rt| {
        for _ in 0..5 {
            let dropped = Arc::new(AtomicBool::new(false));
            let handle = rt.spawn(SlowDrop {
                dropped: dropped.clone(),
            });
            // Let it be polled once and go idle, so the drop happens when
            // the abort reschedules it onto a worker.
            std::thread::sleep(Duration::from_millis(2));
            handle.abort();
            let dropped_when_resolved = rt.block_on(async {
                let outcome = handle.await;
                // The very moment the handle resolved:
                let dropped_now = dropped.load(Ordering::SeqCst);
                assert!(outcome.unwrap_err().is_cancelled());
                dropped_now
            });
            assert!(
                dropped_when_resolved,
                "the handle resolved as cancelled before the future was dropped"
            );
        }
    });
}
