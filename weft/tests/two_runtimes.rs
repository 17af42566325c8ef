//! Two runtimes in one process: a task belongs to the runtime it was
//! spawned on, and runs on that runtime's workers even when it is spawned
//! or woken from a worker of the other one (the local fast path is for the
//! worker's own runtime only: `Core::accepts_local`).

use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use weft::runtime::{Builder, Runtime};

fn one_worker_named(name: &str) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(name)
        .build()
        .unwrap()
}

fn this_thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

#[test]
fn a_task_spawned_from_the_other_runtimes_worker_runs_on_its_own() {
    let (a, b) = (one_worker_named("rt-a"), one_worker_named("rt-b"));
    let on_b = b.handle().clone();
    let ran_on = a
        .block_on(a.spawn(async move {
            assert_eq!(this_thread_name(), "rt-a");
            on_b.spawn(async { this_thread_name() }).await.unwrap()
        }))
        .unwrap();
    assert_eq!(ran_on, "rt-b");
}

#[test]
fn a_task_woken_from_the_other_runtimes_worker_runs_on_its_own() {
    let (a, b) = (one_worker_named("rt-a"), one_worker_named("rt-b"));
    // B's task waits for a wake-up, then says where it was polled.
    let slot: Arc<Mutex<(bool, Option<Waker>)>> = Arc::default();
    let waiting = {
        let slot = slot.clone();
        b.spawn(poll_fn(move |cx| {
            let mut slot = slot.lock().unwrap();
            if slot.0 {
                Poll::Ready(this_thread_name())
            } else {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }))
    };
    let start = Instant::now();
    while slot.lock().unwrap().1.is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "B never polled");
        std::thread::sleep(Duration::from_millis(1));
    }
    // A's task, on A's worker, makes the wake.
    a.block_on(a.spawn(async move {
        let waker = {
            let mut slot = slot.lock().unwrap();
            slot.0 = true;
            slot.1.take().unwrap()
        };
        waker.wake();
    }))
    .unwrap();
    assert_eq!(b.block_on(waiting).unwrap(), "rt-b");
}

#[test]
fn a_sleep_of_one_runtime_polled_on_the_others_workers_fires() {
    // A sleep arms on its own runtime's timer wheels: a worker of another
    // runtime polling it uses A's outside wheel, not a wheel numbered by
    // its own index (B has more workers than A has wheels; arming on "my
    // own" wheel there indexed past A's).
    let a = one_worker_named("rt-a");
    let b = Builder::new_multi_thread()
        .worker_threads(8)
        .build()
        .unwrap();
    let sleeps: Vec<_> = {
        let _in_a = a.enter();
        (0..32)
            .map(|_| weft::time::sleep(Duration::from_millis(2)))
            .collect()
    };
    let tasks: Vec<_> = sleeps
        .into_iter()
        .map(|nap| {
            b.spawn(async move {
                // Long enough that the batch spreads over B's workers.
                std::thread::sleep(Duration::from_millis(1));
                nap.await;
            })
        })
        .collect();
    b.block_on(async {
        for task in tasks {
            task.await.expect("a sleep of A polled on B's worker");
        }
    });
}
