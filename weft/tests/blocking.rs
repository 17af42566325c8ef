//! `spawn_blocking`: results and panics, the thread cap, closures that
//! block on each other, idle threads retiring, the runtime context inside a
//! closure, abort, and every way a runtime with blocking work shuts down.
//!
//! Tests that could hang if the pool were wrong wait on channels with a
//! generous timeout and fail with a message instead.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};

use common::DropCounter;
use weft::runtime::{Builder, Handle, Runtime};

/// Far longer than any step here takes; only a broken pool reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

fn runtime(max_blocking_threads: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(max_blocking_threads)
        .build()
        .expect("runtime builds")
}

/// Waits until `condition` holds, failing with `what` after `PATIENCE`.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Occupies one pool thread with a closure that blocks until the returned
/// sender sends or is dropped; returns once the closure is running.
fn occupy_a_thread(rt: &Runtime) -> mpsc::Sender<()> {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel();
    drop(rt.spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv();
    }));
    started_rx
        .recv_timeout(PATIENCE)
        .expect("the blocker started");
    release_tx
}

#[test]
fn results_arrive_from_inside_and_outside_the_runtime() {
    let rt = runtime(4);
    let outside = rt.handle().spawn_blocking(|| 6 * 7);
    assert_eq!(rt.block_on(outside).unwrap(), 42);
    let inside = rt.block_on(async {
        let handles: Vec<_> = (0..50u64)
            .map(|i| weft::task::spawn_blocking(move || i * 2))
            .collect();
        let mut sum = 0;
        for handle in handles {
            sum += handle.await.unwrap();
        }
        sum
    });
    assert_eq!(inside, 2 * (0..50).sum::<u64>());
    let from_a_task = rt
        .block_on(rt.spawn(async { weft::task::spawn_blocking(|| "from a task").await.unwrap() }));
    assert_eq!(from_a_task.unwrap(), "from a task");
    let metrics = rt.handle().metrics();
    assert_eq!(metrics.blocking_tasks_spawned, 52);
    assert!(
        metrics.blocking_threads <= 4,
        "{}",
        metrics.blocking_threads
    );
}

#[test]
fn a_panicking_closure_gives_a_panic_error_and_the_pool_keeps_serving() {
    let rt = runtime(1);
    let err = rt
        .block_on(rt.spawn_blocking(|| -> u32 { panic!("blocking boom") }))
        .expect_err("the closure panicked");
    assert!(err.is_panic(), "{err:?}");
    assert_eq!(
        common::panic_text(&*err.into_panic()),
        "blocking boom",
        "the panic payload is handed back"
    );
    // The pool's only thread survived the panic.
    assert_eq!(rt.block_on(rt.spawn_blocking(|| 5)).unwrap(), 5);
    common::assert_serves(&rt);
}

#[test]
fn no_more_threads_than_the_cap_and_every_closure_runs() {
    let rt = runtime(2);
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..40)
        .map(|_| {
            let (running, most) = (running.clone(), most.clone());
            rt.spawn_blocking(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    let queued = rt.handle().metrics().blocking_queue_depth;
    for handle in handles {
        rt.block_on(handle).unwrap();
    }
    assert_eq!(most.load(Ordering::SeqCst), 2, "two threads ran at once");
    assert!(queued > 0, "40 closures on 2 threads must queue");
    let metrics = rt.handle().metrics();
    assert!(
        metrics.blocking_threads <= 2,
        "{}",
        metrics.blocking_threads
    );
    assert_eq!(metrics.blocking_queue_depth, 0);
}

/// Each closure waits until all of them have started: this completes only
/// if every closure got its own thread, none queued behind a blocked one
/// (the pool must not promise one idle thread to two closures).
#[test]
fn closures_that_wait_for_each_other_each_get_a_thread() {
    // Not dropped if the test fails: dropping would wait for the closures
    // stuck at the barrier, and the failure would become a hang.
    let rt = std::mem::ManuallyDrop::new(runtime(8));
    for round in 0..20 {
        let parties = 2 + round % 7;
        let barrier = Arc::new(Barrier::new(parties));
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..parties {
            let (barrier, done_tx) = (barrier.clone(), done_tx.clone());
            drop(rt.spawn_blocking(move || {
                barrier.wait();
                done_tx.send(()).unwrap();
            }));
        }
        for _ in 0..parties {
            done_rx
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("round {round}: {parties} closures deadlocked"));
        }
    }
    drop(std::mem::ManuallyDrop::into_inner(rt));
}

#[test]
fn idle_threads_retire_after_the_keep_alive() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .thread_keep_alive(Duration::from_millis(20))
        .build()
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| rt.spawn_blocking(|| std::thread::sleep(Duration::from_millis(5))))
        .collect();
    for handle in handles {
        rt.block_on(handle).unwrap();
    }
    // Started, and (a loaded machine may have retired them already) gone
    // once idle for the keep-alive.
    let started = rt.handle().metrics().threads_started_by_kind.blocking;
    assert!(started >= 1);
    eventually("the idle blocking threads exited", || {
        let metrics = rt.handle().metrics();
        metrics.blocking_threads == 0 && metrics.threads_ended_by_kind.blocking == started
    });
    // A new closure starts a new thread.
    assert_eq!(rt.block_on(rt.spawn_blocking(|| 9)).unwrap(), 9);
}

#[test]
fn a_burst_of_threads_retires_under_a_steady_trickle() {
    // Eight threads started by a burst, then one closure at a time, each
    // well within the keep-alive of the last: the most recently idle
    // thread takes each one, so the other seven stay unused and retire.
    // (Handed out in turn, each would be used every eighth closure, every
    // 8 × 5 ms, inside its keep-alive, and none would retire.)
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .thread_keep_alive(Duration::from_millis(200))
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let burst: Vec<_> = (0..8)
        .map(|_| {
            let barrier = barrier.clone();
            rt.spawn_blocking(move || {
                barrier.wait();
            })
        })
        .collect();
    for handle in burst {
        rt.block_on(handle).unwrap();
    }
    assert_eq!(rt.handle().metrics().blocking_threads, 8);
    let deadline = Instant::now() + PATIENCE;
    loop {
        rt.block_on(rt.spawn_blocking(|| ())).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        if rt.handle().metrics().blocking_threads <= 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still {} blocking threads under a trickle of one closure every 5 ms",
            rt.handle().metrics().blocking_threads
        );
    }
}

#[test]
fn the_runtime_is_the_context_inside_a_closure() {
    let rt = runtime(2);
    let result = rt.block_on(rt.spawn_blocking(|| {
        let handle = Handle::current();
        let spawned = weft::spawn(async { 20 });
        let blocked_on = handle.block_on(async { 1 });
        handle.block_on(spawned).unwrap() + blocked_on + handle.num_workers()
    }));
    assert_eq!(result.unwrap(), 23);
}

#[test]
fn abort_before_a_thread_starts_the_closure_cancels_it() {
    let rt = runtime(1);
    let release = occupy_a_thread(&rt);
    let ran = Arc::new(AtomicUsize::new(0));
    let drops = DropCounter::default();
    let queued = {
        let (ran, tracked) = (ran.clone(), drops.track());
        rt.spawn_blocking(move || {
            let _tracked = tracked;
            ran.fetch_add(1, Ordering::SeqCst);
        })
    };
    queued.abort();
    release.send(()).unwrap();
    let err = rt.block_on(queued).expect_err("aborted before it started");
    assert!(err.is_cancelled(), "{err:?}");
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "the aborted closure never ran"
    );
    eventually("the aborted closure was dropped", || drops.drops() == 1);
}

/// The fault test of issue 6: a closure blocked forever does not hold
/// `shutdown_timeout` past its deadline (its thread is left behind).
#[test]
fn shutdown_timeout_returns_on_time_with_a_closure_blocked_forever() {
    let rt = runtime(2);
    // Never sent: the closure stays blocked past the shutdown.
    let _release = occupy_a_thread(&rt);
    let timeout = Duration::from_millis(200);
    let start = Instant::now();
    rt.shutdown_timeout(timeout);
    let took = start.elapsed();
    assert!(took >= timeout, "returned before its deadline: {took:?}");
    assert!(
        took < timeout + Duration::from_secs(5),
        "shutdown_timeout waited far past its deadline: {took:?}"
    );
}

/// Closures queued before the shutdown still run (as on tokio, whose pool
/// threads run their queue), after the shutdown's deadline if need be;
/// each is dropped once; a closure spawned after the shutdown is refused.
#[test]
fn shutdown_runs_queued_closures_and_refuses_new_ones() {
    let rt = runtime(1);
    let release = occupy_a_thread(&rt);
    let ran = Arc::new(AtomicUsize::new(0));
    let drops = DropCounter::default();
    let queued: Vec<_> = (0..10)
        .map(|i| {
            let (ran, tracked) = (ran.clone(), drops.track());
            rt.spawn_blocking(move || {
                let _tracked = tracked;
                ran.fetch_add(1, Ordering::SeqCst);
                i
            })
        })
        .collect();
    let handle = rt.handle().clone();
    rt.shutdown_timeout(Duration::from_millis(50));
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "queued behind the busy closure"
    );
    release.send(()).unwrap();
    for (i, join) in queued.into_iter().enumerate() {
        assert_eq!(
            handle.block_on(join).expect("queued before the shutdown"),
            i
        );
    }
    assert_eq!(ran.load(Ordering::SeqCst), 10);
    assert_eq!(drops.drops(), 10, "every queued closure dropped once");
    // After shutdown a new closure is refused, never run, and dropped.
    let late = DropCounter::default();
    let tracked = late.track();
    let err = handle
        .block_on(handle.spawn_blocking(move || drop(tracked)))
        .expect_err("refused after shutdown");
    assert!(err.is_cancelled(), "{err:?}");
    assert_eq!(late.drops(), 1);
}

#[test]
fn dropping_the_runtime_waits_for_running_closures() {
    let rt = runtime(2);
    let finished = Arc::new(AtomicUsize::new(0));
    let (started_tx, started_rx) = mpsc::channel();
    for _ in 0..2 {
        let (finished, started_tx) = (finished.clone(), started_tx.clone());
        drop(rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            finished.fetch_add(1, Ordering::SeqCst);
        }));
    }
    for _ in 0..2 {
        started_rx.recv_timeout(PATIENCE).expect("closure started");
    }
    drop(rt);
    assert_eq!(finished.load(Ordering::SeqCst), 2, "drop waited for both");
}

#[test]
fn a_closure_may_drop_its_own_runtime() {
    let rt = runtime(1);
    let handle = rt.handle().clone();
    let (done_tx, done_rx) = mpsc::channel();
    drop(handle.spawn_blocking(move || {
        drop(rt);
        done_tx.send(()).unwrap();
    }));
    done_rx
        .recv_timeout(PATIENCE)
        .expect("dropping the runtime on its own blocking thread must not deadlock");
}

/// `block_in_place` hands the worker's queued tasks on before its closure
/// runs: a task spawned into this worker's LIFO slot runs on the other,
/// busy worker while the closure blocks (the stall monitor is off, so only
/// `block_in_place`'s own hand-off can move it). Fails with
/// `block_in_place` just calling the closure (the task waits for the
/// closure, here 3 s).
#[test]
fn block_in_place_hands_the_workers_queued_tasks_on() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .stall_monitor(false)
        .build()
        .unwrap();
    for _ in 0..3 {
        let done = Arc::new(AtomicBool::new(false));
        let busy = rt.spawn({
            let done = done.clone();
            async move {
                let start = Instant::now();
                while !done.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(10) {
                    weft::task::yield_now().await;
                }
            }
        });
        let blocker = rt.spawn(async {
            let ran = Arc::new(AtomicBool::new(false));
            // Spawned on this worker: its LIFO slot.
            let queued = weft::spawn({
                let ran = ran.clone();
                async move { ran.store(true, Ordering::SeqCst) }
            });
            let ran_meanwhile = weft::task::block_in_place(|| {
                let start = Instant::now();
                while !ran.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(3) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                ran.load(Ordering::SeqCst)
            });
            queued.await.unwrap();
            ran_meanwhile
        });
        let ran_meanwhile = rt.block_on(blocker).unwrap();
        done.store(true, Ordering::SeqCst);
        rt.block_on(busy).unwrap();
        assert!(
            ran_meanwhile,
            "the queued task waited for the blocking closure"
        );
    }
}

/// Off a worker `block_in_place` just runs its closure: outside any
/// runtime, and in `block_on`'s own future.
#[test]
fn block_in_place_off_a_worker_runs_the_closure() {
    assert_eq!(weft::task::block_in_place(|| 1 + 1), 2);
    let rt = weft::runtime::Runtime::new().unwrap();
    assert_eq!(rt.block_on(async { weft::task::block_in_place(|| 3) }), 3);
}

/// Inside `block_in_place` the thread may block, even drive a runtime of
/// its own, and no budget applies; outside, on a worker, it may not.
/// Fails with `block_in_place` leaving the thread marked as driving (the
/// inner `block_on` panics "Cannot start a runtime from within a runtime").
#[test]
fn block_in_place_lets_the_thread_block_and_drive_another_runtime() {
    let rt = runtime(2);
    assert!(weft::task::blocking_allowed(), "a plain thread may block");
    let (on_worker, inside, from_inner) = rt
        .block_on(rt.spawn(async {
            let on_worker = weft::task::blocking_allowed();
            let (inside, from_inner) = weft::task::block_in_place(|| {
                let inner = Runtime::new().unwrap();
                (weft::task::blocking_allowed(), inner.block_on(async { 7 }))
            });
            (on_worker, inside, from_inner)
        }))
        .unwrap();
    assert!(!on_worker, "a worker drives the runtime");
    assert!(inside, "block_in_place lets the thread block");
    assert_eq!(from_inner, 7);
}
