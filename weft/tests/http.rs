//! HTTP on weft, through the examples' own code (each example file is
//! included as a module): the examples' servers (`weft::hyper::serve`) and
//! hyper's client over `weft::hyper`, HTTP/1 keep-alive, HTTP/2, the axum
//! routes, the header-read timeout, and graceful shutdown with requests in
//! flight. `serve` itself is tested in `tests/serve.rs`.

#![cfg(all(not(loom), feature = "hyper"))]

#[path = "../examples/axum.rs"]
mod axum_example;
#[path = "../examples/http_client.rs"]
mod http_client;
#[path = "../examples/http_server.rs"]
mod http_server;
#[path = "../examples/reqwest_compat.rs"]
mod reqwest_compat;

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use weft::hyper::{Executor, Io};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Runtime};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// A shutdown trigger the server's `shutdown` future waits on.
#[derive(Clone, Default)]
struct Trigger(Arc<AtomicBool>);

impl Trigger {
    fn pull(&self) {
        self.0.store(true, Ordering::Release);
    }

    async fn pulled(self) {
        while !self.0.load(Ordering::Acquire) {
            weft::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

/// Starts the hello server; returns its address, its trigger and the
/// handle of its `serve`.
async fn start_hello(
    header_read_timeout: Duration,
    respond_after: Duration,
) -> (
    std::net::SocketAddr,
    Trigger,
    weft::JoinHandle<std::io::Result<()>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let trigger = Trigger::default();
    let server = weft::spawn(http_server::serve(
        listener,
        header_read_timeout,
        respond_after,
        trigger.clone().pulled(),
    ));
    (addr, trigger, server)
}

fn get(path: &str) -> Request<Empty<Bytes>> {
    Request::get(path)
        .header(hyper::header::HOST, "127.0.0.1")
        .body(Empty::new())
        .unwrap()
}

#[test]
fn http1_keep_alive_serves_many_requests_on_one_connection() {
    runtime().block_on(async {
        let (addr, trigger, server) = start_hello(Duration::from_secs(5), Duration::ZERO).await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        let driver = weft::spawn(connection);
        for _ in 0..5 {
            // The connection takes the next request once the last response
            // is done with (hyper's client contract).
            sender.ready().await.unwrap();
            let response = sender.send_request(get("/")).await.unwrap();
            assert_eq!(response.status(), 200);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"Hello, world!\n");
        }
        drop(sender);
        driver.await.unwrap().unwrap();
        trigger.pull();
        server.await.unwrap().unwrap();
    });
}

#[test]
fn http2_serves_concurrent_streams_on_one_connection() {
    runtime().block_on(async {
        let (addr, trigger, server) = start_hello(Duration::from_secs(5), Duration::ZERO).await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let (sender, connection) = hyper::client::conn::http2::handshake(Executor, Io::new(stream))
            .await
            .unwrap();
        let driver = weft::spawn(connection);
        let requests: Vec<_> = (0..16)
            .map(|_| {
                let mut sender = sender.clone();
                weft::spawn(async move {
                    let response = sender.send_request(get("/")).await.unwrap();
                    assert_eq!(response.status(), 200);
                    assert_eq!(response.version(), hyper::Version::HTTP_2);
                    response.into_body().collect().await.unwrap().to_bytes()
                })
            })
            .collect();
        for request in requests {
            assert_eq!(&request.await.unwrap()[..], b"Hello, world!\n");
        }
        drop(sender);
        driver.await.unwrap().unwrap();
        trigger.pull();
        server.await.unwrap().unwrap();
    });
}

#[test]
fn the_example_client_fetches_from_the_example_server() {
    runtime().block_on(async {
        let (addr, trigger, server) = start_hello(Duration::from_secs(5), Duration::ZERO).await;
        let (status, body) = http_client::get(&format!("http://{addr}/")).await.unwrap();
        assert_eq!(status, 200);
        assert_eq!(&body[..], b"Hello, world!\n");
        let error = http_client::get("https://example.com/").await.unwrap_err();
        assert!(error.to_string().contains("only http://"), "{error}");
        trigger.pull();
        server.await.unwrap().unwrap();
    });
}

#[test]
fn axum_routes_answer_with_path_parameters_and_json() {
    runtime().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = weft::spawn(weft::hyper::serve(listener, axum_example::app()).into_future());
        let (status, body) = http_client::get(&format!("http://{addr}/hello/ada"))
            .await
            .unwrap();
        assert_eq!(status, 200);
        assert_eq!(&body[..], b"Hello, ada!");
        let (status, body) = http_client::get(&format!("http://{addr}/status"))
            .await
            .unwrap();
        assert_eq!(status, 200);
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["runtime"], "weft");
        assert_eq!(json["workers"], 2);
        let (status, _) = http_client::get(&format!("http://{addr}/nowhere"))
            .await
            .unwrap();
        assert_eq!(status, 404);
        server.abort();
    });
}

#[test]
fn a_slow_client_trips_the_header_read_timeout() {
    runtime().block_on(async {
        let (addr, trigger, server) = start_hello(Duration::from_millis(200), Duration::ZERO).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        // Half a request, then nothing.
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let mut rest = Vec::new();
        // The read ends (end of stream, or a reset) only when the server
        // closes the connection; it must not have answered with a 200.
        let _closed = weft::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
            .await
            .expect("the server closes the connection of a client that stalls");
        assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "not before the timeout"
        );
        trigger.pull();
        server.await.unwrap().unwrap();
    });
}

#[test]
fn graceful_shutdown_finishes_every_request_in_flight() {
    runtime().block_on(async {
        let (addr, trigger, server) =
            start_hello(Duration::from_secs(5), Duration::from_millis(300)).await;
        let clients: Vec<_> = (0..8)
            .map(|_| weft::spawn(async move { http_client::get(&format!("http://{addr}/")).await }))
            .collect();
        // Every request is now in its 300 ms pause: shut down.
        weft::time::sleep(Duration::from_millis(100)).await;
        trigger.pull();
        for client in clients {
            let (status, body) = client.await.unwrap().unwrap();
            assert_eq!(status, 200);
            assert_eq!(&body[..], b"Hello, world!\n");
        }
        server.await.unwrap().unwrap();
        // And nothing is accepted any more.
        let refused = TcpStream::connect(addr).await;
        assert!(refused.is_err(), "the listener is closed after shutdown");
    });
}

#[test]
fn reqwest_fetches_from_the_example_server_through_async_compat() {
    runtime().block_on(async {
        let (addr, trigger, server) = start_hello(Duration::from_secs(5), Duration::ZERO).await;
        // From a weft task, not only from `block_on`.
        let fetched =
            weft::spawn(async move { reqwest_compat::fetch(&format!("http://{addr}/")).await });
        let (status, body) = fetched.await.unwrap().unwrap();
        assert_eq!(status, 200);
        assert_eq!(body, "Hello, world!\n");
        trigger.pull();
        server.await.unwrap().unwrap();
    });
}

/// API parity with tokio where generic code meets weft: a wrapper written
/// over a `JoinHandle<T>` for any `T` (no `Send + 'static` bound on the
/// wrapper) compiles and awaits.
#[test]
fn a_generic_wrapper_over_any_join_handle_compiles_and_awaits() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    struct Labelled<T> {
        label: &'static str,
        inner: weft::JoinHandle<T>,
    }

    impl<T> Future for Labelled<T> {
        type Output = (&'static str, Result<T, weft::JoinError>);

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let label = self.label;
            Pin::new(&mut self.inner)
                .poll(cx)
                .map(|result| (label, result))
        }
    }

    runtime().block_on(async {
        let (label, result) = Labelled {
            label: "answer",
            inner: weft::spawn(async { 42 }),
        }
        .await;
        assert_eq!((label, result.unwrap()), ("answer", 42));
    });
}
