//! Shutdown: every pending future dropped exactly once, no leaked threads,
//! clear panics where blocking would deadlock.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::DropCounter;

const PENDING: usize = 100_000;

#[test]
fn shutdown_drops_a_hundred_thousand_pending_tasks_exactly_once() {
    let drops = DropCounter::default();
    let rt = common::rt(4, true);
    let mut senders = Vec::new();
    let mut handles = Vec::new();
    for i in 0..PENDING {
        let tracked = drops.track();
        // Three kinds of pending: never woken (waker dropped), waker held by
        // a channel outside the runtime, and detached.
        match i % 3 {
            0 => handles.push(rt.spawn(async move {
                let _tracked = tracked;
                std::future::pending::<()>().await;
            })),
            1 => {
                let (tx, rx) = common::oneshot::<()>();
                senders.push(tx);
                handles.push(rt.spawn(async move {
                    let _tracked = tracked;
                    rx.await;
                }));
            }
            _ => drop(rt.spawn(async move {
                let _tracked = tracked;
                std::future::pending::<()>().await;
            })),
        }
    }
    // Let the workers poll (most of) them once.
    let live = rt.handle().metrics().live_tasks;
    assert_eq!(live, PENDING as u64);
    drop(rt);
    assert_eq!(
        drops.drops(),
        PENDING,
        "every pending future is dropped, once"
    );
    let other = common::rt(1, true);
    for handle in handles {
        assert!(other.block_on(handle).unwrap_err().is_cancelled());
    }
    drop(senders);
    assert_eq!(drops.drops(), PENDING, "no second drop when the wakers go");
}

#[test]
fn shutdown_drops_tasks_that_never_got_to_run() {
    let drops = DropCounter::default();
    let rt = common::rt(1, true);
    let (started_tx, started_rx) = mpsc::channel::<()>();
    // Occupy the only worker in a long poll so everything else stays queued.
    drop(rt.spawn(async move {
        started_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }));
    started_rx.recv().unwrap();
    for _ in 0..10_000 {
        let tracked = drops.track();
        drop(rt.spawn(async move {
            let _tracked = tracked;
        }));
    }
    drop(rt);
    assert_eq!(drops.drops(), 10_000);
}

#[test]
fn spawn_after_shutdown_is_cancelled_not_lost() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    drop(rt);
    let drops = DropCounter::default();
    let tracked = drops.track();
    let join = handle.spawn(async move {
        let _tracked = tracked;
    });
    assert_eq!(drops.drops(), 1, "the refused future is dropped at once");
    let other = common::rt(1, true);
    assert!(other.block_on(join).unwrap_err().is_cancelled());
}

/// `shutdown_background` does not wait: it returns while a blocking
/// closure still runs (which only the test ends, after the return).
#[test]
fn shutdown_background_returns_while_a_blocking_closure_runs() {
    let rt = common::rt(1, true);
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    drop(rt.spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv_timeout(Duration::from_secs(60));
    }));
    started_rx.recv().unwrap();
    let (returned_tx, returned_rx) = mpsc::channel::<()>();
    let shutting_down = std::thread::spawn(move || {
        rt.shutdown_background();
        returned_tx.send(()).unwrap();
    });
    let returned = returned_rx.recv_timeout(Duration::from_secs(10));
    release_tx.send(()).unwrap();
    shutting_down.join().unwrap();
    returned.expect("shutdown_background waited for the blocking closure");
}

/// `shutdown_timeout` waits (up to its timeout) for a poll in progress:
/// when it returns, that poll has ended and the task's future is dropped.
#[test]
fn shutdown_timeout_waits_for_a_poll_that_ends_in_time() {
    let rt = common::rt(1, true);
    let drops = DropCounter::default();
    let tracked = drops.track();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    drop(rt.spawn(async move {
        let _tracked = tracked;
        started_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        std::future::pending::<()>().await;
    }));
    started_rx.recv().unwrap();
    rt.shutdown_timeout(Duration::from_secs(30));
    assert_eq!(
        drops.drops(),
        1,
        "shutdown_timeout returned before the poll ended"
    );
}

#[test]
fn shutdown_timeout_returns_on_time_with_a_stuck_task() {
    let rt = common::rt(2, true);
    let (started_tx, started_rx) = mpsc::channel::<()>();
    drop(rt.spawn(async move {
        started_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_secs(2)); // a poll that will not end soon
    }));
    started_rx.recv().unwrap();
    let start = Instant::now();
    rt.shutdown_timeout(Duration::from_millis(100));
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "shutdown_timeout took {took:?}"
    );
}

#[test]
#[should_panic(expected = "Cannot start a runtime from within a runtime")]
fn block_on_inside_a_runtime_panics_with_a_clear_message() {
    let rt = common::rt(1, true);
    rt.block_on(async {
        weft::runtime::Handle::current().block_on(async {});
    });
}

#[test]
fn block_on_inside_a_task_panics_and_the_worker_survives() {
    let rt = common::rt(1, true);
    let err = rt
        .block_on(rt.spawn(async { weft::runtime::Handle::current().block_on(async { 1 }) }))
        .unwrap_err();
    let message = common::panic_text(&*err.into_panic());
    assert!(
        message.contains("Cannot start a runtime from within a runtime"),
        "{message}"
    );
    assert_eq!(rt.block_on(rt.spawn(async { 2 })).unwrap(), 2);
}

#[test]
fn dropping_the_runtime_inside_its_own_task_panics_instead_of_deadlocking() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let (tx, rx) = mpsc::channel();
    let join = handle.spawn(async move {
        drop(rt);
    });
    std::thread::spawn(move || {
        let other = common::rt(1, true);
        tx.send(other.block_on(join)).unwrap();
    });
    let result = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no deadlock");
    let err = result.unwrap_err();
    assert!(err.is_panic(), "{err}");
    assert!(
        err.to_string().contains("from inside one of its own tasks"),
        "{err}"
    );
}

#[test]
fn a_waker_used_after_its_runtime_is_gone_is_a_no_op() {
    use std::sync::{Arc, Mutex};
    use std::task::{Poll, Waker};

    let stolen: Arc<Mutex<Option<Waker>>> = Arc::default();
    let rt = common::rt(2, true);
    let drops = DropCounter::default();
    let join = {
        let stolen = stolen.clone();
        let tracked = drops.track();
        rt.spawn(std::future::poll_fn(move |cx| {
            let _keep = &tracked;
            *stolen.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }))
    };
    while stolen.lock().unwrap().is_none() {
        std::thread::yield_now();
    }
    drop(rt);
    assert_eq!(drops.drops(), 1);
    let waker = stolen.lock().unwrap().take().unwrap();
    let clone = waker.clone();
    waker.wake_by_ref();
    waker.wake();
    drop(clone);
    assert_eq!(drops.drops(), 1, "waking a cancelled task does nothing");
    assert!(
        common::rt(1, true)
            .block_on(join)
            .unwrap_err()
            .is_cancelled()
    );
}

/// Pending tasks whose destructors wake one another while holding a lock
/// the woken one's destructor takes (a connection pool's close event: the
/// notifier holds the listener list's lock, a dropped listener takes it):
/// shutdown drops each once and returns. Fails with a task woken after
/// shutdown dropped inside the waker's call (the second destructor waits
/// for the lock the first holds: "still dropping after 10 s").
#[test]
fn shutdown_survives_destructors_that_wake_tasks_under_a_lock() {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    /// Registers its task's waker in the list; on drop, locks the list and
    /// wakes every waker in it while holding the lock.
    struct Listener {
        list: Arc<Mutex<Vec<Waker>>>,
        _tracked: common::Tracked,
    }

    impl Future for Listener {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.list.lock().unwrap().push(cx.waker().clone());
            Poll::Pending
        }
    }

    impl Drop for Listener {
        fn drop(&mut self) {
            let wakers = self.list.lock().unwrap();
            for waker in wakers.iter() {
                waker.wake_by_ref();
            }
        }
    }

    let drops = DropCounter::default();
    let (done, dropped) = mpsc::channel();
    let tracker = drops.clone();
    std::thread::spawn(move || {
        let rt = weft::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let list = Arc::new(Mutex::new(Vec::new()));
        rt.block_on(async {
            for _ in 0..8 {
                let listener = Listener {
                    list: list.clone(),
                    _tracked: tracker.track(),
                };
                drop(weft::spawn(listener));
            }
            // Every listener has registered before the runtime is dropped.
            while list.lock().unwrap().len() < 8 {
                weft::time::sleep(Duration::from_millis(1)).await;
            }
        });
        drop(rt);
        done.send(()).unwrap();
    });
    dropped
        .recv_timeout(Duration::from_secs(10))
        .expect("still dropping after 10 s");
    assert_eq!(drops.drops(), 8, "each pending future dropped once");
}

/// A worker blocked in `block_in_place` on a channel whose sender an idle
/// task holds: the runtime's drop cancels the idle task (dropping the
/// sender), so the worker returns and the drop completes (tokio's
/// `hang_on_shutdown`).
#[test]
fn a_worker_in_block_in_place_waiting_on_an_idle_task_does_not_hang_the_drop() {
    let rt = common::rt(2, true);
    let (sync_tx, sync_rx) = mpsc::channel::<()>();
    rt.spawn(async move {
        weft::task::block_in_place(|| sync_rx.recv().ok());
    });
    rt.spawn(async move {
        weft::time::sleep(Duration::from_secs(3600)).await;
        drop(sync_tx);
    });
    rt.block_on(async { weft::time::sleep(Duration::from_millis(50)).await });
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        done_tx.send(()).unwrap();
    });
    done_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the drop finished");
}
