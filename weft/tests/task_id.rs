//! Task ids (tokio's `task::Id`): unique, the same from the handle, the
//! abort handle, the join error, a `JoinSet` and from inside the task (its
//! polls, its future's drop and its output's drop), on both flavors, for
//! local and blocking tasks too; `task::id` panics outside a task with
//! tokio's message.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use weft::runtime::{Builder, Runtime};
use weft::task::{self, Id, JoinSet, LocalSet};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        (
            "current_thread",
            Builder::new_current_thread().build().unwrap(),
        ),
        (
            "multi_thread",
            Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap(),
        ),
    ]
}

#[test]
fn ids_are_unique_and_the_same_from_the_handle_and_inside_the_task() {
    for (name, rt) in runtimes() {
        let handles: Vec<_> = (0..200)
            .map(|_| {
                rt.spawn(async {
                    let first = task::id();
                    task::yield_now().await;
                    assert_eq!(task::id(), first, "the id changed between polls");
                    first
                })
            })
            .collect();
        let expected: Vec<Id> = handles.iter().map(|handle| handle.id()).collect();
        let aborts: Vec<Id> = handles.iter().map(|h| h.abort_handle().id()).collect();
        assert_eq!(aborts, expected, "{name}");
        let inside: Vec<Id> = rt.block_on(async {
            let mut ids = Vec::new();
            for handle in handles {
                ids.push(handle.await.unwrap());
            }
            ids
        });
        assert_eq!(inside, expected, "{name}");
        let unique: HashSet<Id> = inside.iter().copied().collect();
        assert_eq!(unique.len(), 200, "{name}: an id given twice");
    }
}

#[test]
fn ids_are_unique_across_spawning_threads() {
    let rt = Arc::new(
        Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap(),
    );
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let rt = rt.clone();
            std::thread::spawn(move || {
                (0..3000)
                    .map(|_| rt.spawn(async {}).id())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for thread in threads {
        for id in thread.join().unwrap() {
            assert!(seen.insert(id), "{id} given twice");
        }
    }
    assert_eq!(seen.len(), 12_000);
}

#[test]
fn id_panics_outside_a_task_and_try_id_says_none() {
    assert_eq!(task::try_id(), None);
    let outside = std::panic::catch_unwind(task::id).unwrap_err();
    let message = outside
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| outside.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap();
    assert_eq!(message, "Can't get a task id when not inside a task");
    for (name, rt) in runtimes() {
        // `block_on`'s own future is not a task.
        assert_eq!(rt.block_on(async { task::try_id() }), None, "{name}");
        let in_block_on = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { task::id() })
        }));
        assert!(in_block_on.is_err(), "{name}");
    }
}

#[test]
fn join_errors_carry_the_failed_tasks_id() {
    for (name, rt) in runtimes() {
        let panicking = rt.spawn(async { panic!("boom") });
        let id = panicking.id();
        assert_eq!(rt.block_on(panicking).unwrap_err().id(), id, "{name}");
        let pending = rt.spawn(std::future::pending::<()>());
        let id = pending.id();
        pending.abort();
        let error = rt.block_on(pending).unwrap_err();
        assert!(error.is_cancelled());
        assert_eq!(error.id(), id, "{name}");
        assert_eq!(error.to_string(), format!("task {id} was cancelled"));
    }
}

#[test]
fn join_set_gives_each_result_with_its_tasks_id() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let mut set = JoinSet::new();
            let ok = set.spawn(async { task::id() }).id();
            let failed = set.spawn(async { panic!("boom") }).id();
            let mut seen = Vec::new();
            while let Some(result) = set.join_next_with_id().await {
                match result {
                    Ok((id, inside)) => {
                        assert_eq!(id, inside);
                        seen.push(id);
                    }
                    Err(error) => seen.push(error.id()),
                }
            }
            seen.sort();
            let mut expected = vec![ok, failed];
            expected.sort();
            assert_eq!(seen, expected, "{name}");
        });
        let mut set = JoinSet::new();
        let abort = set.spawn_on(async { 5 }, rt.handle());
        let id = abort.id();
        // A current-thread runtime runs it only inside `block_on`.
        rt.block_on(async {
            while !abort.is_finished() {
                task::yield_now().await;
            }
        });
        let (got, value) = loop {
            if let Some(result) = set.try_join_next_with_id() {
                break result.unwrap();
            }
            std::thread::yield_now();
        };
        assert_eq!((got, value), (id, 5), "{name}");
    }
}

#[test]
fn the_id_is_set_while_a_tasks_future_is_dropped() {
    struct RecordId(Arc<Mutex<Option<Option<Id>>>>);
    impl Drop for RecordId {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(task::try_id());
        }
    }
    for (name, rt) in runtimes() {
        let seen = Arc::new(Mutex::new(None));
        let record = RecordId(seen.clone());
        let handle = rt.spawn(async move {
            let _record = record;
            std::future::pending::<()>().await;
        });
        let id = handle.id();
        rt.block_on(async { task::yield_now().await });
        handle.abort();
        let _ = rt.block_on(handle);
        assert_eq!(*seen.lock().unwrap(), Some(Some(id)), "{name}");
    }
}

#[test]
fn local_and_blocking_tasks_have_ids_too() {
    let rt = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let (local_ids, blocking_ids) = local.block_on(&rt, async {
        let handle = task::spawn_local(async { task::id() });
        let expected = handle.id();
        let local_ids = (expected, handle.await.unwrap());
        let handle = task::spawn_blocking(task::id);
        let expected = handle.id();
        (local_ids, (expected, handle.await.unwrap()))
    });
    assert_eq!(local_ids.0, local_ids.1);
    assert_eq!(blocking_ids.0, blocking_ids.1);
    assert_ne!(local_ids.0, blocking_ids.0);
}

#[test]
fn ids_print_as_numbers_and_order() {
    let rt = Builder::new_current_thread().build().unwrap();
    let (a, b) = (rt.spawn(async {}).id(), rt.spawn(async {}).id());
    assert_ne!(a, b);
    let shown = a.to_string();
    assert!(shown.parse::<u64>().is_ok(), "{shown}");
    assert!(format!("{a:?}").contains(&shown));
    // Spawned one after the other on one thread: in order.
    assert!(a < b);
}

/// The task's id is current while its output is dropped: by the handle's
/// drop after completion, and at completion when the handle was dropped
/// before (as tokio's).
#[test]
fn the_id_is_current_in_the_outputs_drop() {
    struct Output(Arc<Mutex<Vec<Option<Id>>>>);
    impl Drop for Output {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(task::try_id());
        }
    }
    for (flavor, rt) in runtimes() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let expected = rt.block_on(async {
            // Dropped after completion.
            let out = seen.clone();
            let first = weft::spawn(async move { Output(out) });
            while !first.is_finished() {
                task::yield_now().await;
            }
            let first_id = first.id();
            drop(first);
            // Dropped before completion: the output is dropped where the
            // task completes.
            let out = seen.clone();
            let second = weft::spawn(async move {
                task::yield_now().await;
                let output = Output(out);
                done_tx.send(()).unwrap();
                output
            });
            let second_id = second.id();
            drop(second);
            while done_rx.try_recv().is_err() {
                task::yield_now().await;
            }
            vec![Some(first_id), Some(second_id)]
        });
        drop(rt);
        assert_eq!(*seen.lock().unwrap(), expected, "{flavor}");
    }
}
