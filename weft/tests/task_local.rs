//! `task_local!`: a scope's value is seen by every poll of its future on
//! whichever worker polls it, scopes nest, values never leak into another
//! task's polls, and access outside a scope fails as tokio's does.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::rt;
use weft::task::{AccessError, yield_now};

weft::task_local! {
    static NUMBER: u32;
    pub static NAME: String;
}

/// A value set by `scope` is there at every poll, across yields, sleeps
/// and moves between the workers, and gone after the scope.
#[test]
fn a_scope_value_is_seen_at_every_poll_on_any_worker() {
    let rt = rt(4, true);
    let tasks: Vec<_> = (0..64u32)
        .map(|i| {
            rt.spawn(NUMBER.scope(i, async move {
                for round in 0..20 {
                    assert_eq!(NUMBER.get(), i, "round {round}");
                    if round % 2 == 0 {
                        yield_now().await;
                    } else {
                        weft::time::sleep(Duration::from_micros(200)).await;
                    }
                }
                NUMBER.get()
            }))
        })
        .collect();
    rt.block_on(async {
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), i as u32);
        }
        assert!(NUMBER.try_with(|n| *n).is_err(), "a value left behind");
    });
}

/// Nested scopes: the inner value inside, the outer one again after it.
#[test]
fn scopes_nest() {
    rt(2, true).block_on(NUMBER.scope(1, async {
        assert_eq!(NUMBER.get(), 1);
        NUMBER
            .scope(2, async {
                assert_eq!(NUMBER.get(), 2);
                yield_now().await;
                assert_eq!(NUMBER.get(), 2);
            })
            .await;
        assert_eq!(NUMBER.get(), 1);
        assert_eq!(NUMBER.sync_scope(3, || NUMBER.get()), 3);
        assert_eq!(NUMBER.get(), 1);
    }));
}

/// Outside a scope: `try_with` gives `AccessError`, `with` and `get`
/// panic with tokio's message.
#[test]
fn access_outside_a_scope_is_an_error() {
    let error: AccessError = NAME.try_with(|name| name.len()).unwrap_err();
    assert_eq!(error.to_string(), "task-local value not set");
    let panic = std::panic::catch_unwind(|| NAME.with(|name| name.len())).unwrap_err();
    let message = panic.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(
        message.contains("cannot access a task-local storage value without setting it first"),
        "{message}"
    );
    assert!(std::panic::catch_unwind(|| NUMBER.get()).is_err());
    assert!(NUMBER.try_get().is_err(), "try_get outside a scope");
    assert_eq!(NUMBER.sync_scope(4, || NUMBER.try_get()), Ok(4));
    assert_eq!(format!("{NUMBER:?}"), "LocalKey { .. }");
}

/// A panic inside a scope's poll does not leave the value in the worker's
/// slot for the next task polled there.
#[test]
fn a_panicking_poll_leaves_no_value_behind() {
    let rt = rt(1, true);
    let failed = rt.spawn(NUMBER.scope(9, async { panic!("inside the scope") }));
    assert!(rt.block_on(failed).unwrap_err().is_panic());
    let after = rt.spawn(async { NUMBER.try_with(|n| *n).is_err() });
    assert!(
        rt.block_on(after).unwrap(),
        "the panicked scope's value leaked"
    );
}

/// The scope's future is dropped inside its scope (its drop sees the
/// value), and `take_value` gives the value back before completion.
#[test]
fn the_inner_future_is_dropped_inside_the_scope_and_the_value_can_be_taken() {
    struct SeesValueOnDrop(Arc<AtomicBool>);
    impl Drop for SeesValueOnDrop {
        fn drop(&mut self) {
            self.0.store(
                NAME.try_with(|name| name == "kept").unwrap_or(false),
                Ordering::SeqCst,
            );
        }
    }
    let saw = Arc::new(AtomicBool::new(false));
    let probe = SeesValueOnDrop(saw.clone());
    let scoped = NAME.scope("kept".to_owned(), async move {
        let _probe = probe;
        std::future::pending::<()>().await;
    });
    drop(scoped);
    assert!(
        saw.load(Ordering::SeqCst),
        "the inner future's drop did not see the value"
    );

    let mut scoped = Box::pin(NAME.scope("given back".to_owned(), async {}));
    assert_eq!(scoped.as_mut().take_value().as_deref(), Some("given back"));
    assert_eq!(scoped.as_mut().take_value(), None);
}

/// `sync_scope` inside `with` of the same key panics (the borrow would see
/// its value change), as tokio's does.
#[test]
fn entering_a_scope_inside_with_of_the_same_key_panics() {
    let entered = std::panic::catch_unwind(|| {
        NUMBER.sync_scope(1, || NUMBER.with(|_| NUMBER.sync_scope(2, || ())))
    });
    assert!(entered.is_err());
}
