//! JoinHandle semantics: panics, abort before / during / after completion.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::{DropCounter, on_every_shape};

#[test]
fn a_panic_becomes_a_join_error_with_its_message() {
    on_every_shape(|rt| {
        let handle = rt.spawn(async { panic!("task exploded") });
        let id = handle.id();
        let err = rt.block_on(handle).unwrap_err();
        assert!(err.is_panic());
        assert!(!err.is_cancelled());
        assert_eq!(err.id(), id);
        assert_eq!(
            err.to_string(),
            format!("task {id} panicked with message \"task exploded\"")
        );
        let payload = err.into_panic();
        assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "task exploded");
    });
}

/// What `{:?}` shows (what a failed `unwrap` prints): the handle's type,
/// and the error's kind with a panic's message.
#[test]
fn handles_and_join_errors_debug_print_what_they_are() {
    on_every_shape(|rt| {
        let handle = rt.spawn(std::future::pending::<()>());
        let id = handle.id();
        assert_eq!(
            format!("{handle:?}"),
            format!("JoinHandle {{ id: {id:?}, .. }}")
        );
        handle.abort();
        let cancelled = rt.block_on(handle).unwrap_err();
        assert_eq!(
            format!("{cancelled:?}"),
            format!("JoinError::Cancelled({id:?})")
        );
        let handle = rt.spawn(async { panic!("task exploded") });
        let id = handle.id();
        let panicked = rt.block_on(handle).unwrap_err();
        assert_eq!(
            format!("{panicked:?}"),
            format!("JoinError::Panic({id:?}, \"task exploded\", ...)")
        );
    });
}

#[test]
fn panicking_tasks_never_take_a_worker_down() {
    on_every_shape(|rt| {
        let panics: Vec<_> = (0..200)
            .map(|i| rt.spawn(async move { panic!("panic number {i}") }))
            .collect();
        for handle in panics {
            assert!(rt.block_on(handle).unwrap_err().is_panic());
        }
        // Every worker is still there and serving.
        let ok: Vec<_> = (0..1_000).map(|i| rt.spawn(async move { i })).collect();
        let sum: usize = rt.block_on(async {
            let mut sum = 0;
            for handle in ok {
                sum += handle.await.unwrap();
            }
            sum
        });
        assert_eq!(sum, 999 * 1_000 / 2);
    });
}

#[test]
fn a_panic_in_a_cancelled_futures_drop_is_contained() {
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("drop exploded");
        }
    }
    on_every_shape(|rt| {
        let guard = PanicOnDrop;
        let handle = rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        handle.abort();
        assert!(rt.block_on(handle).unwrap_err().is_cancelled());
        assert_eq!(rt.block_on(rt.spawn(async { 5 })).unwrap(), 5);
    });
}

#[test]
fn abort_before_the_task_first_runs() {
    // One worker, held busy until the abort has happened.
    let rt = common::rt(1, true);
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let blocker = rt.spawn(async move { release_rx.recv().unwrap() });
    let drops = DropCounter::default();
    let polled = Arc::new(AtomicBool::new(false));
    let victim = {
        let tracked = drops.track();
        let polled = polled.clone();
        rt.spawn(async move {
            let _tracked = tracked;
            polled.store(true, Ordering::SeqCst);
        })
    };
    victim.abort();
    release_tx.send(()).unwrap();
    let id = victim.id();
    let err = rt.block_on(victim).unwrap_err();
    assert!(err.is_cancelled());
    assert_eq!(err.to_string(), format!("task {id} was cancelled"));
    assert!(
        !polled.load(Ordering::SeqCst),
        "an aborted task must never be polled"
    );
    assert_eq!(drops.drops(), 1, "its future is dropped exactly once");
    rt.block_on(blocker).unwrap();
}

#[test]
fn abort_while_the_task_waits() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let (_tx, rx) = common::oneshot::<()>();
        let tracked = drops.track();
        let started = Arc::new(AtomicBool::new(false));
        let handle = {
            let started = started.clone();
            rt.spawn(async move {
                let _tracked = tracked;
                started.store(true, Ordering::SeqCst);
                rx.await;
            })
        };
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        assert!(!handle.is_finished());
        handle.abort();
        let err = rt.block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(drops.drops(), 1);
    });
}

#[test]
fn abort_while_the_task_is_being_polled_cancels_after_the_poll() {
    let rt = common::rt(2, true);
    let (in_poll_tx, in_poll_rx) = mpsc::channel::<()>();
    let (continue_tx, continue_rx) = mpsc::channel::<()>();
    let after_poll = Arc::new(AtomicUsize::new(0));
    let handle = {
        let after_poll = after_poll.clone();
        rt.spawn(async move {
            in_poll_tx.send(()).unwrap();
            continue_rx.recv().unwrap(); // the abort happens during this poll
            weft::task::yield_now().await;
            after_poll.fetch_add(1, Ordering::SeqCst);
        })
    };
    in_poll_rx.recv().unwrap();
    handle.abort();
    continue_tx.send(()).unwrap();
    assert!(rt.block_on(handle).unwrap_err().is_cancelled());
    assert_eq!(
        after_poll.load(Ordering::SeqCst),
        0,
        "not polled again after the abort"
    );
}

#[test]
fn abort_after_completion_keeps_the_output() {
    on_every_shape(|rt| {
        let handle = rt.spawn(async { 99 });
        while !handle.is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        handle.abort();
        handle.abort(); // twice is harmless
        assert_eq!(rt.block_on(handle).unwrap(), 99);
    });
}

/// A task whose `JoinHandle` was dropped while an `AbortHandle` lives: its
/// output is dropped as soon as it completes (tokio's behaviour; the
/// `AbortHandle` has no right to it), and the `AbortHandle` still says it
/// finished. The output completes on a worker after the drop.
#[test]
fn an_abort_handle_does_not_keep_the_output_of_a_task_completing_after_its_join_handle_drop() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let output = drops.track();
        let (release, released) = common::oneshot::<()>();
        let handle = rt.spawn(async move {
            released.await;
            output
        });
        let abort = handle.abort_handle();
        drop(handle);
        release.send(());
        assert!(
            common::wait_until(Duration::from_secs(10), || drops.drops() == 1),
            "the output of a completed task outlived its JoinHandle (an AbortHandle is alive)"
        );
        assert!(abort.is_finished());
        abort.abort(); // harmless once finished
        assert!(abort.is_finished());
        drop(abort);
        assert_eq!(drops.drops(), 1, "the output dropped exactly once");
    });
}

/// The `JoinHandle` of a completed task dropped while an `AbortHandle`
/// lives: the output is dropped by that drop, at once.
#[test]
fn an_abort_handle_does_not_keep_the_output_of_a_completed_task_when_its_join_handle_drops() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let output = drops.track();
        let handle = rt.spawn(async move { output });
        let abort = handle.abort_handle();
        assert!(common::wait_until(Duration::from_secs(10), || {
            abort.is_finished()
        }));
        assert_eq!(drops.drops(), 0, "the JoinHandle still holds the output");
        drop(handle);
        assert_eq!(
            drops.drops(),
            1,
            "the JoinHandle's drop kept the output (an AbortHandle is alive)"
        );
        assert!(abort.is_finished());
        drop(abort);
        assert_eq!(drops.drops(), 1);
    });
}

#[test]
fn join_handles_are_send_and_sync_and_errors_are_errors() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_error<T: std::error::Error + Send + Sync + 'static>() {}
    assert_send_sync::<weft::JoinHandle<u32>>();
    assert_send_sync::<weft::runtime::Handle>();
    assert_send_sync::<weft::runtime::Runtime>();
    assert_error::<weft::JoinError>();
    // Unpin whatever the output, like tokio's, so it can be polled via &mut.
    fn assert_unpin<T: Unpin>() {}
    assert_unpin::<weft::JoinHandle<std::marker::PhantomPinned>>();
    assert_error::<weft::runtime::TryCurrentError>();
}

/// Generic code written against tokio's handle (`JoinHandle<T>` is a
/// `Future` for every `T`, with no `Send` or `'static` bound) compiles and
/// runs with weft's.
#[test]
fn a_join_handle_is_a_future_for_every_output_type() {
    use std::future::Future;
    use weft::{JoinError, JoinHandle};

    fn output_of<T>(handle: JoinHandle<T>) -> impl Future<Output = Result<T, JoinError>> {
        handle
    }
    on_every_shape(|rt| {
        let handle = rt.spawn(async { "generic" });
        assert_eq!(rt.block_on(output_of(handle)).unwrap(), "generic");
    });
}
