//! The current-thread runtime (`Builder::new_current_thread`): tasks run on
//! the thread inside `block_on` and only while one runs; wakes from other
//! threads, timers and I/O reach it; spawns from outside wait for a
//! `block_on`; shutdown drops every pending future once, with the runtime
//! entered; a task's panic does not take the runtime down.

use std::future::{Future, poll_fn};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Poll, Waker};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

fn rt() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime builds")
}

/// A one-shot signal another thread can fire: its future completes once
/// `fire` ran, and wakes whoever polled it.
#[derive(Clone, Default)]
struct Signal(Arc<Mutex<(bool, Option<Waker>)>>);

impl Signal {
    fn fire(&self) {
        let waker = {
            let mut state = self.0.lock().unwrap();
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let this = self.clone();
        poll_fn(move |cx| {
            let mut state = this.0.lock().unwrap();
            if state.0 {
                Poll::Ready(())
            } else {
                state.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

/// Counts its drops, and whether the runtime was entered at each.
struct DropCount {
    drops: Arc<AtomicUsize>,
    entered: Arc<AtomicUsize>,
}

impl Drop for DropCount {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if Handle::try_current().is_ok() {
            self.entered.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn the_flavor_is_current_thread_and_metrics_report_one_worker() {
    let rt = rt();
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
    assert_eq!(rt.metrics().num_workers, 1);
    assert_eq!(rt.handle().num_workers(), 1);
    let inside = rt.block_on(async { Handle::current().runtime_flavor() });
    assert_eq!(inside, RuntimeFlavor::CurrentThread);
    // Settings of the multi-thread scheduler are accepted and ignored.
    let rt = Builder::new_current_thread()
        .worker_threads(8)
        .io_shards(3)
        .build()
        .expect("ignored settings do not fail the build");
    assert_eq!(rt.block_on(async { 5 }), 5);
}

#[test]
fn tasks_run_on_the_block_on_thread() {
    let rt = rt();
    let here = thread::current().id();
    let from_outside = rt.spawn(async { thread::current().id() });
    let ids: Vec<ThreadId> = rt.block_on(async {
        let mut handles = vec![from_outside];
        for _ in 0..10 {
            handles.push(weft::spawn(async {
                weft::task::yield_now().await;
                thread::current().id()
            }));
        }
        let mut ids = Vec::new();
        for handle in handles {
            ids.push(handle.await.unwrap());
        }
        ids
    });
    assert_eq!(ids.len(), 11);
    assert!(ids.iter().all(|id| *id == here), "{ids:?} vs {here:?}");
}

#[test]
fn spawned_tasks_run_only_while_block_on_runs() {
    let rt = rt();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let handle = rt.spawn(async move {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    thread::sleep(Duration::from_millis(50));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "ran with no block_on");
    rt.block_on(handle).unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn wakes_from_another_thread_reach_the_future_and_the_tasks() {
    let rt = rt();
    let (for_task, for_future) = (Signal::default(), Signal::default());
    let task = rt.spawn(for_task.wait());
    let waker = {
        let (for_task, for_future) = (for_task.clone(), for_future.clone());
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            for_task.fire();
            thread::sleep(Duration::from_millis(30));
            for_future.fire();
        })
    };
    let start = Instant::now();
    rt.block_on(async {
        task.await.unwrap();
        for_future.wait().await;
    });
    assert!(start.elapsed() >= Duration::from_millis(60));
    assert!(start.elapsed() < Duration::from_secs(5));
    waker.join().unwrap();
}

#[test]
fn timers_fire_in_block_on_and_in_tasks() {
    let rt = rt();
    let start = Instant::now();
    let fired = rt.block_on(async {
        let tasks: Vec<_> = (1..=5u64)
            .map(|i| {
                weft::spawn(async move {
                    weft::time::sleep(Duration::from_millis(10 * i)).await;
                    i
                })
            })
            .collect();
        weft::time::sleep(Duration::from_millis(20)).await;
        let mut fired = Vec::new();
        for task in tasks {
            fired.push(task.await.unwrap());
        }
        fired
    });
    assert_eq!(fired, vec![1, 2, 3, 4, 5]);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(50), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A timeout around a future that never completes.
    let timed_out = rt.block_on(async {
        weft::time::timeout(Duration::from_millis(10), std::future::pending::<()>()).await
    });
    assert!(timed_out.is_err());
}

#[test]
fn tcp_echo_runs_on_the_one_thread() {
    let rt = rt();
    let here = thread::current().id();
    rt.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = weft::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 5];
            stream.read_exact(&mut buf).await.unwrap();
            stream.write_all(&buf).await.unwrap();
            thread::current().id()
        });
        let mut client = TcpStream::connect(addr).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        let mut back = [0u8; 5];
        client.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"hello");
        assert_eq!(server.await.unwrap(), here);
    });
}

#[test]
fn a_spawn_from_outside_runs_on_the_thread_inside_block_on() {
    let rt = Arc::new(rt());
    let stop = Signal::default();
    let (driver_tx, driver_rx) = mpsc::channel();
    let driver = {
        let (rt, stop) = (rt.clone(), stop.clone());
        thread::spawn(move || {
            driver_tx.send(thread::current().id()).unwrap();
            rt.block_on(stop.wait());
        })
    };
    let driver_id = driver_rx.recv().unwrap();
    let (ran_tx, ran_rx) = mpsc::channel();
    drop(rt.handle().spawn(async move {
        ran_tx.send(thread::current().id()).unwrap();
    }));
    let ran_on = ran_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the spawned task ran while block_on runs elsewhere");
    assert_eq!(ran_on, driver_id);
    // A second `block_on` from outside: its future completes through a
    // task the driving thread runs.
    let task = rt.spawn(async {
        weft::time::sleep(Duration::from_millis(10)).await;
        thread::current().id()
    });
    assert_eq!(rt.block_on(task).unwrap(), driver_id);
    stop.fire();
    driver.join().unwrap();
}

#[test]
fn a_second_block_on_takes_over_when_the_driver_returns() {
    let rt = Arc::new(rt());
    let stop = Signal::default();
    let first = {
        let (rt, stop) = (rt.clone(), stop.clone());
        thread::spawn(move || rt.block_on(stop.wait()))
    };
    thread::sleep(Duration::from_millis(20));
    let here = thread::current().id();
    let task = rt.spawn(async {
        weft::time::sleep(Duration::from_millis(100)).await;
        thread::current().id()
    });
    let stopper = {
        let stop = stop.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            stop.fire();
        })
    };
    // The first thread drives until it returns; the timer fires after, on
    // this thread, which took the core over.
    assert_eq!(rt.block_on(task).unwrap(), here);
    first.join().unwrap();
    stopper.join().unwrap();
}

#[test]
fn shutdown_drops_each_pending_future_once_with_the_runtime_entered() {
    for how in ["drop", "shutdown_timeout", "shutdown_background"] {
        let drops = Arc::new(AtomicUsize::new(0));
        let entered = Arc::new(AtomicUsize::new(0));
        let count = || DropCount {
            drops: drops.clone(),
            entered: entered.clone(),
        };
        let rt = rt();
        // Never polled: queued from outside.
        for _ in 0..3 {
            let guard = count();
            drop(rt.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }));
        }
        rt.block_on(async {
            // Idle, waiting on nothing anyone holds.
            for _ in 0..3 {
                let guard = count();
                drop(weft::spawn(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                }));
            }
            // Waiting on a timer.
            for _ in 0..3 {
                let guard = count();
                drop(weft::spawn(async move {
                    let _guard = guard;
                    weft::time::sleep(Duration::from_secs(3600)).await;
                }));
            }
            weft::task::yield_now().await;
            // Queued, never run.
            for _ in 0..3 {
                let guard = count();
                drop(weft::spawn(async move {
                    let _guard = guard;
                }));
            }
        });
        assert_eq!(drops.load(Ordering::SeqCst), 0, "{how}: dropped early");
        match how {
            "drop" => drop(rt),
            "shutdown_timeout" => rt.shutdown_timeout(Duration::from_secs(1)),
            _ => rt.shutdown_background(),
        }
        assert_eq!(drops.load(Ordering::SeqCst), 12, "{how}");
        assert_eq!(
            entered.load(Ordering::SeqCst),
            12,
            "{how}: runtime not entered"
        );
    }
}

#[test]
fn a_spawn_after_shutdown_is_refused() {
    let rt = rt();
    let handle = rt.handle().clone();
    drop(rt);
    let refused = handle.spawn(async { 1 });
    let result = futures_lite::future::block_on(refused);
    assert!(result.unwrap_err().is_cancelled());
}

#[test]
fn a_panicking_task_does_not_take_the_runtime_down() {
    let rt = rt();
    let result = rt.block_on(async {
        let panicked = weft::spawn(async { panic!("boom") }).await;
        assert!(panicked.unwrap_err().is_panic());
        weft::spawn(async { 7 }).await.unwrap()
    });
    assert_eq!(result, 7);
    assert_eq!(rt.block_on(async { 8 }), 8);
}

#[test]
fn a_panicking_task_shuts_the_runtime_down_under_shutdown_runtime() {
    let rt = Builder::new_current_thread()
        .unhandled_panic(weft::runtime::UnhandledPanic::ShutdownRuntime)
        .build()
        .unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            drop(weft::spawn(async { panic!("boom") }));
            std::future::pending::<()>().await;
        })
    }));
    let message = outcome.unwrap_err();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(message.contains("ShutdownRuntime"), "{message}");
}

#[test]
fn block_in_place_panics_with_tokios_message() {
    let rt = rt();
    let in_future = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async { weft::task::block_in_place(|| 1) })
    }));
    let message = in_future.unwrap_err();
    assert_eq!(
        *message.downcast_ref::<&str>().unwrap(),
        "can call blocking only when running on the multi-threaded runtime"
    );
    let in_task = rt.block_on(rt.spawn(async { weft::task::block_in_place(|| 1) }));
    assert!(in_task.unwrap_err().is_panic());
}

#[test]
fn spawn_blocking_runs_on_the_pool_and_wakes_the_driver() {
    let rt = rt();
    let here = thread::current().id();
    let (pool_thread, value) = rt.block_on(async {
        weft::task::spawn_blocking(|| {
            thread::sleep(Duration::from_millis(20));
            (thread::current().id(), 42)
        })
        .await
        .unwrap()
    });
    assert_ne!(pool_thread, here);
    assert_eq!(value, 42);
}

#[test]
fn enter_makes_spawn_work_and_block_on_runs_it() {
    let rt = rt();
    let handle = {
        let _entered = rt.enter();
        weft::spawn(async { thread::current().id() })
    };
    assert_eq!(rt.block_on(handle).unwrap(), thread::current().id());
}

#[test]
fn a_nested_block_on_panics() {
    let rt = rt();
    let handle = rt.handle().clone();
    let nested = rt.block_on(rt.spawn(async move { handle.block_on(async { 1 }) }));
    assert!(nested.unwrap_err().is_panic());
}

#[test]
fn many_tasks_waking_each_other_all_complete() {
    let rt = rt();
    let total = rt.block_on(async {
        let mut handles = Vec::new();
        for i in 0..1000u64 {
            handles.push(weft::spawn(async move {
                for _ in 0..3 {
                    weft::task::yield_now().await;
                }
                i
            }));
        }
        let mut total = 0;
        for handle in handles {
            total += handle.await.unwrap();
        }
        total
    });
    assert_eq!(total, 999 * 1000 / 2);
    assert!(rt.metrics().total.polls >= 4000);
}

#[test]
fn a_paused_clock_jumps_to_the_next_timer_when_the_thread_is_idle() {
    let rt = rt();
    let wall = Instant::now();
    let slept = rt.block_on(async {
        weft::time::pause();
        let start = weft::time::Instant::now();
        let task = weft::spawn(async {
            weft::time::sleep(Duration::from_secs(3600)).await;
        });
        weft::time::sleep(Duration::from_secs(60)).await;
        task.await.unwrap();
        start.elapsed()
    });
    assert!(slept >= Duration::from_secs(3600), "{slept:?}");
    assert!(wall.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_block_on_future_yielding_in_a_loop_does_not_starve_the_tasks() {
    let rt = rt();
    let handle = rt.spawn(async { 5 });
    let abort = handle.abort_handle();
    rt.block_on(async {
        while !abort.is_finished() {
            weft::task::yield_now().await;
        }
    });
    assert_eq!(rt.block_on(handle).unwrap(), 5);
}

/// A task that yields in a loop runs once per turn of the driver (its
/// yield is deferred until the timers and the reactor were looked at, as
/// tokio does), not a whole batch of 61 polls each time `block_on`'s
/// future yields; and a deferred task is still dropped at shutdown.
#[test]
fn a_yielding_task_runs_once_per_turn() {
    let rt = rt();
    let spins = Arc::new(AtomicUsize::new(0));
    let spinner = spins.clone();
    rt.spawn(async move {
        loop {
            spinner.fetch_add(1, Ordering::Relaxed);
            weft::task::yield_now().await;
        }
    });
    rt.block_on(async {
        for _ in 0..10 {
            weft::task::yield_now().await;
        }
    });
    let spins = spins.load(Ordering::Relaxed);
    assert!(
        (9..=12).contains(&spins),
        "the yielding task ran {spins} times"
    );
    drop(rt);
}
