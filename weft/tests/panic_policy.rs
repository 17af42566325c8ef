//! The panic policy (`Builder::unhandled_panic`): with `ShutdownRuntime` a
//! spawned task's panic ends every `block_on` with a panic naming the
//! policy and the task's message, within seconds, whether the task's
//! `JoinHandle` is held, dropped or awaited; with `Ignore` (the default)
//! nothing changes. Each body runs on a thread of its own with a bounded
//! wait, so a `block_on` that never ends fails instead of hanging.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::DropCounter;
use weft::runtime::{Builder, Runtime, UnhandledPanic};

fn rt(workers: usize, policy: UnhandledPanic) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .unhandled_panic(policy)
        .build()
        .expect("runtime builds")
}

/// Runs `body` on its own thread; its result, or the text of its panic.
/// Fails if it has not ended within `seconds`.
fn outcome<T: Send + 'static>(
    seconds: u64,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        let _ = tx.send(ended.map_err(|panic| common::panic_text(&*panic)));
    });
    rx.recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("still running after {seconds} s"))
}

/// The panic names the policy, the setting and the task's message.
fn assert_policy_panic(ended: Result<(), String>, task_message: &str) {
    let message = ended.expect_err("block_on returned instead of panicking");
    assert!(
        message.contains("UnhandledPanic::ShutdownRuntime"),
        "{message}"
    );
    assert!(message.contains("Builder::unhandled_panic"), "{message}");
    assert!(message.contains(task_message), "{message}");
}

#[test]
fn a_task_panic_ends_block_on_while_its_handle_is_held() {
    for workers in [1, 2, 4] {
        let start = Instant::now();
        let ended = outcome(10, move || {
            let rt = rt(workers, UnhandledPanic::ShutdownRuntime);
            rt.block_on(async {
                let _held = weft::spawn(async { panic!("held handle's task") });
                weft::time::sleep(Duration::from_secs(60)).await;
            });
        });
        assert_policy_panic(ended, "\"held handle's task\"");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}

#[test]
fn a_task_panic_ends_block_on_when_its_handle_was_dropped() {
    for workers in [1, 2, 4] {
        let ended = outcome(10, move || {
            let rt = rt(workers, UnhandledPanic::ShutdownRuntime);
            rt.block_on(async {
                drop(weft::spawn(async {
                    weft::task::yield_now().await;
                    panic!("detached task")
                }));
                std::future::pending::<()>().await;
            });
        });
        assert_policy_panic(ended, "\"detached task\"");
    }
}

/// `block_on` awaiting the panicked task's own handle panics too, rather
/// than returning the `JoinError`.
#[test]
fn a_block_on_awaiting_the_panicked_task_panics() {
    let ended = outcome(10, || {
        let rt = rt(2, UnhandledPanic::ShutdownRuntime);
        let _ = rt.block_on(rt.spawn(async { panic!("awaited task") }));
    });
    assert_policy_panic(ended, "\"awaited task\"");
}

/// A task spawned from outside panics while two other threads are in
/// `block_on`: both panic; a later `block_on` panics at once; spawns are
/// refused; the runtime's drop cancels what was left.
#[test]
fn every_block_on_panics_and_the_runtime_stays_shut_down() {
    let ended = outcome(20, || {
        let rt = std::sync::Arc::new(rt(2, UnhandledPanic::ShutdownRuntime));
        let drops = DropCounter::default();
        for _ in 0..10 {
            let tracked = drops.track();
            drop(rt.spawn(async move {
                let _tracked = tracked;
                std::future::pending::<()>().await
            }));
        }
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let rt = rt.clone();
                std::thread::spawn(move || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        rt.block_on(std::future::pending::<()>())
                    }))
                    .map_err(|panic| common::panic_text(&*panic))
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        drop(rt.spawn(async { panic!("from outside") }));
        for thread in waiting {
            assert_policy_panic(thread.join().unwrap(), "\"from outside\"");
        }
        let again =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(async { 1 })))
                .map(drop)
                .map_err(|panic| common::panic_text(&*panic));
        assert_policy_panic(again, "\"from outside\"");
        let refused = rt.spawn(async { 2 });
        drop(std::sync::Arc::into_inner(rt).expect("the only reference"));
        assert_eq!(drops.drops(), 10, "the drop cancelled every task");
        let other = common::rt(1, true);
        assert!(other.block_on(refused).unwrap_err().is_cancelled());
    });
    ended.expect("the checks on the shut-down runtime");
}

#[test]
fn a_payload_that_is_not_a_string_is_named_as_such() {
    let ended = outcome(10, || {
        let rt = rt(1, UnhandledPanic::ShutdownRuntime);
        rt.block_on(async {
            drop(weft::spawn(async { std::panic::panic_any(42u32) }));
            std::future::pending::<()>().await;
        });
    });
    let message = ended.unwrap_err();
    assert!(message.contains("not a string"), "{message}");
    assert!(message.contains("ShutdownRuntime"), "{message}");
}

/// A `JoinSet` member is a spawned task like any other.
#[test]
fn a_join_set_members_panic_shuts_the_runtime_down() {
    let ended = outcome(10, || {
        let rt = rt(2, UnhandledPanic::ShutdownRuntime);
        rt.block_on(async {
            let mut set = weft::task::JoinSet::new();
            set.spawn(async { panic!("set member") });
            set.spawn(std::future::pending::<()>());
            while set.join_next().await.is_some() {}
        });
    });
    assert_policy_panic(ended, "\"set member\"");
}

/// The policy covers async tasks: a `spawn_blocking` closure's panic goes
/// to its handle only.
#[test]
fn a_blocking_closures_panic_does_not_shut_the_runtime_down() {
    let ended = outcome(10, || {
        let rt = rt(2, UnhandledPanic::ShutdownRuntime);
        let error = rt
            .block_on(rt.spawn_blocking(|| panic!("blocking closure")))
            .unwrap_err();
        assert!(error.is_panic());
        common::assert_serves(&rt);
    });
    ended.expect("the runtime kept serving");
}

#[test]
fn ignore_is_the_default_and_changes_nothing() {
    let ended = outcome(20, || {
        for rt in [rt(2, UnhandledPanic::Ignore), common::rt(2, true)] {
            let held = rt.spawn(async { panic!("ignored") });
            drop(rt.spawn(async { panic!("ignored, detached") }));
            let error = rt.block_on(held).unwrap_err();
            assert!(error.is_panic());
            common::assert_serves(&rt);
            let value = rt.block_on(async {
                weft::time::sleep(Duration::from_millis(20)).await;
                3
            });
            assert_eq!(value, 3);
        }
    });
    ended.expect("Ignore changed something");
    let debug = format!("{:?}", Builder::new_multi_thread());
    assert!(debug.contains("unhandled_panic: Ignore"), "{debug}");
}
