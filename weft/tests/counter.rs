//! `weft::metrics::Counter` loses nothing, whoever adds and however often a
//! sampler takes.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use weft::metrics::Counter;

#[test]
fn takes_add_up_to_every_add_under_a_one_millisecond_sampler() {
    const TASKS: u64 = 100;
    const ADDS_PER_TASK: u64 = 2_000;
    const OUTSIDE_ADDS: u64 = 50_000;
    let rt = common::rt(4, true);
    let counter = Arc::new(Counter::new());
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (counter, stop) = (counter.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut taken = 0u64;
            let mut previous = counter.sample();
            while !stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
                taken += counter.take();
                let now = counter.sample();
                assert!(now.count >= previous.count, "the sum went backwards");
                previous = now;
            }
            taken
        })
    };
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let counter = counter.clone();
            rt.spawn(async move {
                for i in 0..ADDS_PER_TASK {
                    counter.add(1);
                    if i % 100 == 0 {
                        weft::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for _ in 0..OUTSIDE_ADDS {
        counter.add(1); // a thread with no worker slot: the shared line
    }
    rt.block_on(async move {
        for task in tasks {
            task.await.unwrap();
        }
    });
    stop.store(true, Ordering::Release);
    let taken = sampler.join().unwrap() + counter.take();
    let expected = TASKS * ADDS_PER_TASK + OUTSIDE_ADDS;
    assert_eq!(taken, expected, "every add is taken exactly once");
    assert_eq!(counter.sum(), expected);
}

#[test]
fn rates_use_measured_time() {
    let counter = Counter::new();
    let first = counter.sample();
    counter.add(500);
    std::thread::sleep(Duration::from_millis(20));
    let second = counter.sample();
    let rate = second.rate_since(&first).unwrap();
    let elapsed = second.at.duration_since(first.at).as_secs_f64();
    assert!(
        (rate - 500.0 / elapsed).abs() < 1e-6,
        "rate {rate} for 500 in {elapsed} s"
    );
    assert_eq!(
        first.rate_since(&second),
        None,
        "time does not run backwards"
    );
    let same_instant = weft::metrics::Sample {
        count: first.count + 7,
        at: first.at,
    };
    assert_eq!(
        same_instant.rate_since(&first),
        None,
        "no time passed: no rate (not infinity)"
    );
}

#[test]
fn counters_are_shared_across_runtimes_without_losing_adds() {
    let counter = Arc::new(Counter::new());
    let runtimes: Vec<_> = (0..3).map(|_| common::rt(2, true)).collect();
    let joins: Vec<_> = runtimes
        .iter()
        .flat_map(|rt| {
            (0..50).map(|_| {
                let counter = counter.clone();
                rt.spawn(async move {
                    for _ in 0..1_000 {
                        counter.add(2);
                    }
                })
            })
        })
        .collect();
    let waiter = common::rt(1, true);
    for join in joins {
        waiter.block_on(join).unwrap();
    }
    assert_eq!(counter.sum(), 3 * 50 * 1_000 * 2);
}
