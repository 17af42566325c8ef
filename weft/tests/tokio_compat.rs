//! The tokio bridge (`Builder::tokio_compat`, feature `tokio-compat`):
//! tokio's timers, sockets and `tokio::spawn`, reqwest and tower-http's
//! `TimeoutLayer` work inside weft tasks unchanged, on the workers, on a
//! spare thread, in `spawn_blocking` closures and in `block_on`; the tokio
//! runtime ends with weft's, without hanging; what the bridge does not
//! cover behaves as documented.

#![cfg(all(not(loom), feature = "tokio-compat", feature = "hyper"))]

#[path = "../examples/axum.rs"]
mod axum_example;
#[path = "../examples/reqwest_tokio_compat.rs"]
mod reqwest_tokio_compat;

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use weft::net::TcpListener;
use weft::runtime::{Builder, Runtime};

fn bridged(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .tokio_compat()
        .build()
        .unwrap()
}

/// The name of the thread running this code.
fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

/// Whether the thread with this OS id still runs in this process (Linux).
fn thread_alive(tid: libc::pid_t) -> bool {
    std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

/// tokio's `sleep`, `timeout` (both outcomes) and `Instant` in one future.
async fn tokio_timers() {
    let start = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(start.elapsed() >= Duration::from_millis(5));
    let done = tokio::time::timeout(Duration::from_secs(5), async { 3 }).await;
    assert_eq!(done, Ok(3));
    let late = tokio::time::timeout(Duration::from_millis(5), std::future::pending::<()>()).await;
    assert!(late.is_err(), "a pending future times out");
}

/// A weft listener answers a `tokio::net::TcpStream` (echo of 5 bytes).
async fn tokio_connects_to_weft() {
    // weft's streams implement both trait sets (`tokio-io`): tokio's here.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = weft::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0; 5];
        stream.read_exact(&mut buf).await.unwrap();
        stream.write_all(&buf).await.unwrap();
    });
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    client.write_all(b"hello").await.unwrap();
    let mut echoed = [0; 5];
    client.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"hello");
    server.await.unwrap();
}

/// `tokio::spawn` runs on the `weft-tokio` thread (a `current_thread`
/// runtime's), and a task there may spawn on weft.
async fn tokio_spawns() {
    let flavor = tokio::runtime::Handle::current().runtime_flavor();
    assert_eq!(flavor, tokio::runtime::RuntimeFlavor::CurrentThread);
    let (ran_on, inner) = tokio::spawn(async {
        let inner = weft::spawn(async { 40 + 2 }).await.unwrap();
        (thread_name(), inner)
    })
    .await
    .unwrap();
    assert_eq!(ran_on, "weft-tokio");
    assert_eq!(inner, 42);
}

async fn everything_tokio() {
    tokio_timers().await;
    tokio_connects_to_weft().await;
    tokio_spawns().await;
}

#[test]
fn tokio_time_net_and_spawn_work_in_weft_tasks_on_every_worker_count() {
    for workers in [1, 2, 4] {
        let rt = bridged(workers);
        rt.block_on(async {
            let tasks: Vec<_> = (0..8).map(|_| weft::spawn(everything_tokio())).collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
    }
}

#[test]
fn tokio_time_net_and_spawn_work_in_block_on() {
    let rt = bridged(2);
    rt.block_on(everything_tokio());
    // Left again after the call: this thread has no tokio context.
    assert!(tokio::runtime::Handle::try_current().is_err());
}

#[test]
fn tokio_time_net_and_spawn_work_in_spawn_blocking_closures() {
    let rt = bridged(2);
    let handle = rt.handle().clone();
    let closure = rt.spawn_blocking(move || {
        assert!(tokio::runtime::Handle::try_current().is_ok());
        // A tokio socket made here, outside any future, is registered
        // with the bridge's reactor.
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
        handle.block_on(async move {
            let addr = listener.local_addr().unwrap();
            let accept = tokio::spawn(async move { listener.accept().await.map(|_| ()) });
            tokio::net::TcpStream::connect(addr).await.unwrap();
            accept.await.unwrap().unwrap();
            everything_tokio().await;
        });
    });
    rt.block_on(closure).unwrap();
}

#[test]
fn a_runtime_entered_with_enter_has_tokio_entered_too() {
    let rt = bridged(1);
    assert!(tokio::runtime::Handle::try_current().is_err());
    {
        let _entered = rt.enter();
        assert!(tokio::runtime::Handle::try_current().is_ok());
    }
    assert!(tokio::runtime::Handle::try_current().is_err());
}

/// With one worker stuck in a 1 s poll, the monitor lends the queued tasks
/// to a spare thread: they use tokio's timers there and finish while the
/// worker is still stuck.
#[test]
fn tokio_timers_work_on_spare_threads() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .tokio_compat()
        .build()
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let stuck_for = Duration::from_secs(1);
    rt.block_on(async {
        let (started_tx, started) = std::sync::mpsc::channel();
        let blocker = weft::spawn(async move {
            started_tx.send(()).unwrap();
            std::thread::sleep(stuck_for);
        });
        started.recv().unwrap();
        let start = Instant::now();
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let done = done.clone();
                weft::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        while done.load(Ordering::SeqCst) < 20 && start.elapsed() < stuck_for {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            done.load(Ordering::SeqCst),
            20,
            "the tasks finished beside the stuck poll"
        );
        for task in tasks {
            task.await.unwrap();
        }
        blocker.await.unwrap();
    });
    assert!(rt.handle().metrics().spares_started > 0);
}

#[weft::test(tokio_compat = true, worker_threads = 2)]
async fn the_test_macro_starts_the_bridge() {
    tokio_timers().await;
    tokio_spawns().await;
}

#[weft::test(tokio_compat = false, worker_threads = 1)]
async fn tokio_compat_false_starts_no_bridge() {
    assert!(tokio::runtime::Handle::try_current().is_err());
}

/// reqwest against an axum router served on weft: one call through the
/// example's `fetch`, then 200 at once, from weft tasks.
#[test]
fn reqwest_calls_a_weft_server_from_weft_tasks() {
    let rt = bridged(2);
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(weft::spawn(
            weft::hyper::serve(listener, axum_example::app()).into_future(),
        ));
        let url = format!("http://{addr}/hello/ada");
        let (status, body) = reqwest_tokio_compat::fetch(&url).await.unwrap();
        assert_eq!((status.as_u16(), body.as_str()), (200, "Hello, ada!"));

        let client = reqwest::Client::new();
        let calls: Vec<_> = (0..200)
            .map(|i| {
                let client = client.clone();
                let url = format!("http://{addr}/hello/{i}");
                weft::spawn(async move {
                    let response = client.get(&url).send().await?;
                    response.text().await
                })
            })
            .collect();
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(call.await.unwrap().unwrap(), format!("Hello, {i}!"));
        }
    });
}

/// tower-http's `TimeoutLayer` (tokio's timer inside) on a router served
/// by weft: the slow route answers 408, the fast one 200.
#[test]
fn tower_http_timeout_layer_answers_408_for_a_slow_route() {
    let rt = bridged(2);
    rt.block_on(async {
        let app = Router::new()
            .route(
                "/slow",
                get(|| async {
                    weft::time::sleep(Duration::from_secs(5)).await;
                    "too late"
                }),
            )
            .route("/fast", get(|| async { "fast" }))
            .layer(tower_http::timeout::TimeoutLayer::with_status_code(
                axum::http::StatusCode::REQUEST_TIMEOUT,
                Duration::from_millis(100),
            ));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(weft::spawn(weft::hyper::serve(listener, app).into_future()));
        let client = reqwest::Client::new();
        let start = Instant::now();
        let slow = client
            .get(format!("http://{addr}/slow"))
            .send()
            .await
            .unwrap();
        assert_eq!(slow.status().as_u16(), 408);
        assert!(start.elapsed() < Duration::from_secs(4));
        let fast = client
            .get(format!("http://{addr}/fast"))
            .send()
            .await
            .unwrap();
        assert_eq!(fast.status().as_u16(), 200);
        assert_eq!(fast.text().await.unwrap(), "fast");
    });
}

/// Counts drops of the futures left on the tokio runtime.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Dropping the runtime stops the `weft-tokio` thread and drops the tasks
/// still on it, even with a tokio blocking closure that runs for 30 s
/// (left behind after the 1 s grace) and a tokio task that never ends.
#[test]
fn dropping_the_runtime_ends_the_tokio_runtime_without_hanging() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let rt = bridged(2);
    let (blocking_started, started) = std::sync::mpsc::channel();
    let tokio_thread = rt.block_on({
        let dropped = dropped.clone();
        async move {
            let forever = Dropped(dropped.clone());
            drop(tokio::spawn(async move {
                let _forever = forever;
                std::future::pending::<()>().await;
            }));
            drop(tokio::task::spawn_blocking(move || {
                blocking_started.send(()).unwrap();
                std::thread::sleep(Duration::from_secs(30));
            }));
            // A weft task that holds a tokio timer at shutdown.
            let timer = Dropped(dropped);
            drop(weft::spawn(async move {
                let _timer = timer;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }));
            // SAFETY: `gettid` has no preconditions.
            tokio::spawn(async { unsafe { libc::gettid() } })
                .await
                .unwrap()
        }
    });
    started.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(thread_alive(tokio_thread));
    let start = Instant::now();
    drop(rt);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "drop took {took:?}");
    assert_eq!(dropped.load(Ordering::SeqCst), 2, "both futures dropped");
    assert!(!thread_alive(tokio_thread), "the tokio thread ended");
}

#[test]
fn shutdown_timeout_bounds_the_tokio_shutdown_too() {
    let rt = bridged(1);
    rt.block_on(async {
        drop(tokio::task::spawn_blocking(|| {
            std::thread::sleep(Duration::from_secs(30))
        }));
    });
    let start = Instant::now();
    rt.shutdown_timeout(Duration::from_millis(100));
    assert!(start.elapsed() < Duration::from_secs(2));
}

/// Runs its closure when dropped: a tokio task's destructor that takes time.
struct OnDrop<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// Dropped (no deadline), the runtime waits for the `weft-tokio` thread to
/// finish dropping its tasks, even a destructor that takes 300 ms.
#[test]
fn dropping_the_runtime_waits_for_the_tokio_tasks_destructors() {
    let finished = Arc::new(AtomicUsize::new(0));
    let rt = bridged(1);
    rt.block_on({
        let finished = finished.clone();
        async move {
            let slow = OnDrop(move || {
                std::thread::sleep(Duration::from_millis(300));
                finished.fetch_add(1, Ordering::SeqCst);
            });
            drop(tokio::spawn(async move {
                let _slow = slow;
                std::future::pending::<()>().await;
            }));
        }
    });
    drop(rt);
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the destructor finished before the drop returned"
    );
}

/// `shutdown_timeout` does not wait past its deadline for a tokio task's
/// destructor that blocks: the `weft-tokio` thread is left to finish it.
#[test]
fn shutdown_timeout_leaves_a_blocked_tokio_destructor_behind() {
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let rt = bridged(1);
    rt.block_on(async move {
        let blocking = OnDrop(move || {
            let _ = blocked.recv_timeout(Duration::from_secs(10));
        });
        drop(tokio::spawn(async move {
            let _blocking = blocking;
            std::future::pending::<()>().await;
        }));
    });
    let start = Instant::now();
    rt.shutdown_timeout(Duration::from_millis(100));
    let took = start.elapsed();
    drop(release);
    assert!(
        took < Duration::from_secs(5),
        "shutdown_timeout took {took:?}"
    );
}

/// Without the bridge, tokio's timer in a weft task panics with tokio's
/// message (what `tokio_compat` is for); the panic is the task's.
#[test]
fn without_the_bridge_tokio_timers_panic_in_the_task() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let error = rt
        .block_on(rt.spawn(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }))
        .unwrap_err();
    assert!(error.is_panic());
    let message = format!("{:?}", error.into_panic().downcast_ref::<String>());
    assert!(message.contains("no reactor running"), "{message}");
}

/// What the bridge does not cover, pinned as it behaves: tokio's
/// `block_in_place` and `Handle::block_on` inside a weft task run where
/// they are called, holding the weft worker for the whole call (tokio sees
/// no scheduler of its own to hand the worker's work to). Both return the
/// right value; the guide says to use `weft::task::spawn_blocking` and
/// `.await` instead.
#[test]
fn block_in_place_and_tokio_block_on_hold_the_weft_worker() {
    let rt = bridged(1);
    let (ran_on, slept_on) = rt
        .block_on(rt.spawn(async {
            let ran_on = tokio::task::block_in_place(thread_name);
            let slept_on = tokio::runtime::Handle::current().block_on(async {
                tokio::time::sleep(Duration::from_millis(5)).await;
                thread_name()
            });
            (ran_on, slept_on)
        }))
        .unwrap();
    assert_eq!(ran_on, "weft-worker");
    assert_eq!(slept_on, "weft-worker");
}
