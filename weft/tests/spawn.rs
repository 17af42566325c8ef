//! Spawning and joining, from inside and outside, on every runtime shape.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::on_every_shape;

const MILLION: usize = 1_000_000;

#[test]
fn a_million_tiny_tasks_spawned_from_outside_all_complete() {
    let rt = common::rt(4, true);
    let ran = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..MILLION)
        .map(|_| {
            let ran = ran.clone();
            rt.spawn(async move {
                ran.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    rt.block_on(async {
        for handle in handles {
            handle.await.unwrap();
        }
    });
    assert_eq!(ran.load(Ordering::SeqCst), MILLION);
}

#[test]
fn a_million_tiny_tasks_spawned_from_inside_all_complete() {
    let rt = common::rt(4, true);
    let ran = Arc::new(AtomicUsize::new(0));
    let total = rt.block_on({
        let ran = ran.clone();
        async move {
            // Spawned by a task running on a worker, so the local path is used.
            weft::spawn(async move {
                let handles: Vec<_> = (0..MILLION)
                    .map(|i| {
                        let ran = ran.clone();
                        weft::spawn(async move {
                            ran.fetch_add(1, Ordering::Relaxed);
                            i as u64
                        })
                    })
                    .collect();
                let mut total = 0u64;
                for handle in handles {
                    total += handle.await.unwrap();
                }
                total
            })
            .await
            .unwrap()
        }
    });
    assert_eq!(ran.load(Ordering::SeqCst), MILLION);
    assert_eq!(total, (MILLION as u64 - 1) * MILLION as u64 / 2);
}

#[test]
fn nested_spawns_form_a_tree_and_all_values_come_back() {
    fn tree(depth: u32) -> weft::JoinHandle<u64> {
        weft::spawn(async move {
            if depth == 0 {
                return 1;
            }
            let left = tree(depth - 1);
            let right = tree(depth - 1);
            left.await.unwrap() + right.await.unwrap()
        })
    }
    on_every_shape(|rt| {
        let leaves = rt.block_on(async { tree(12).await.unwrap() });
        assert_eq!(leaves, 4096);
    });
}

#[test]
fn join_values_of_different_types() {
    on_every_shape(|rt| {
        let s = rt.spawn(async { String::from("text") });
        let v = rt.spawn(async { vec![1u8, 2, 3] });
        let unit = rt.spawn(async {});
        rt.block_on(async {
            assert_eq!(s.await.unwrap(), "text");
            assert_eq!(v.await.unwrap(), vec![1, 2, 3]);
            unit.await.unwrap();
        });
    });
}

#[test]
fn dropped_join_handle_detaches_the_task() {
    on_every_shape(|rt| {
        let (tx, rx) = std::sync::mpsc::channel();
        drop(rt.spawn(async move {
            weft::task::yield_now().await;
            tx.send(42).unwrap();
        }));
        assert_eq!(
            rx.recv().unwrap(),
            42,
            "a detached task still runs to completion"
        );
    });
}

#[test]
fn tasks_waking_each_other_ping_pong() {
    on_every_shape(|rt| {
        rt.block_on(async {
            for _ in 0..200 {
                let (tx1, rx1) = common::oneshot();
                let (tx2, rx2) = common::oneshot();
                let a = weft::spawn(async move {
                    tx1.send(1u32);
                    rx2.await + 1
                });
                let b = weft::spawn(async move { rx1.await + 10 });
                let b_value = b.await.unwrap();
                tx2.send(b_value);
                assert_eq!(a.await.unwrap(), 12);
            }
        });
    });
}

#[test]
fn yielding_tasks_interleave_and_finish() {
    on_every_shape(|rt| {
        let counter = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..50)
            .map(|_| {
                let counter = counter.clone();
                rt.spawn(async move {
                    for _ in 0..100 {
                        counter.fetch_add(1, Ordering::Relaxed);
                        weft::task::yield_now().await;
                    }
                })
            })
            .collect();
        rt.block_on(async {
            for handle in handles {
                handle.await.unwrap();
            }
        });
        assert_eq!(counter.load(Ordering::SeqCst), 5_000);
    });
}

#[test]
fn handle_spawns_from_many_outside_threads_at_once() {
    let rt = common::rt(2, true);
    let ran = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for _ in 0..8 {
            let handle = rt.handle().clone();
            let ran = ran.clone();
            scope.spawn(move || {
                let joins: Vec<_> = (0..2_000)
                    .map(|_| {
                        let ran = ran.clone();
                        handle.spawn(async move {
                            ran.fetch_add(1, Ordering::Relaxed);
                        })
                    })
                    .collect();
                handle.block_on(async {
                    for join in joins {
                        join.await.unwrap();
                    }
                });
            });
        }
    });
    assert_eq!(ran.load(Ordering::SeqCst), 16_000);
}

/// Two tasks that wake each other take turns in the LIFO slot; after
/// `MAX_LIFO_STREAK` (3) runs from the slot in a row, the woken one queues
/// behind older work, so a task waiting in the ring runs after at most 3
/// more turns, not when the pair is done. One worker: no thief takes the
/// queued task. Counted in turns, not time; the task is queued at each
/// phase of the streak (turns 10 to 19).
#[test]
fn tasks_waking_each_other_through_the_lifo_slot_let_a_queued_task_run() {
    const MAX_LIFO_STREAK: usize = 3;
    for queue_at in 10..20 {
        let ran_at = turn_a_queued_task_runs_at(queue_at);
        assert!(
            ran_at <= queue_at + 1 + MAX_LIFO_STREAK,
            "the task queued at turn {queue_at} ran at turn {ran_at}: the pair kept the \
             LIFO slot for more than {MAX_LIFO_STREAK} turns in a row"
        );
    }
}

/// Two tasks take turns, each waking the other from the worker; at turn
/// `queue_at` the side whose turn it is spawns a task (into the LIFO slot,
/// then into the ring when its wake puts the other side in the slot).
/// Returns the turn at which that task ran.
fn turn_a_queued_task_runs_at(queue_at: usize) -> usize {
    use std::sync::Mutex;
    use std::task::{Poll, Waker};

    const TURNS: usize = 1_000;
    struct Pair {
        turns: AtomicUsize,
        wakers: Mutex<[Option<Waker>; 2]>,
        queued_ran_at: AtomicUsize,
    }
    let pair = Arc::new(Pair {
        turns: AtomicUsize::new(0),
        wakers: Mutex::new([None, None]),
        queued_ran_at: AtomicUsize::new(usize::MAX),
    });
    let wake_other = |pair: &Pair, me: usize| {
        let other = pair.wakers.lock().unwrap()[1 - me].take();
        if let Some(other) = other {
            other.wake();
        }
    };
    // Side `me` takes the turns `turn % 2 == me`.
    let side = |me: usize| {
        let pair = pair.clone();
        std::future::poll_fn(move |cx| {
            let turn = pair.turns.load(Ordering::SeqCst);
            if turn >= TURNS {
                wake_other(&pair, me);
                return Poll::Ready(());
            }
            pair.wakers.lock().unwrap()[me] = Some(cx.waker().clone());
            if turn % 2 == me {
                if turn == queue_at {
                    let pair = pair.clone();
                    let _detached = weft::spawn(async move {
                        let now = pair.turns.load(Ordering::SeqCst);
                        pair.queued_ran_at.store(now, Ordering::SeqCst);
                    });
                }
                pair.turns.store(turn + 1, Ordering::SeqCst);
                wake_other(&pair, me);
            }
            Poll::Pending
        })
    };
    let rt = common::rt(1, true);
    let (a, b) = (rt.spawn(side(0)), rt.spawn(side(1)));
    rt.block_on(async {
        a.await.unwrap();
        b.await.unwrap();
    });
    pair.queued_ran_at.load(Ordering::SeqCst)
}
