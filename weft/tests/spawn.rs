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
