//! `weft::hyper::serve`: an axum `Router` over HTTP/1 and HTTP/2,
//! `TCP_NODELAY` on the server's side, the header-read timeout (for a
//! half-sent head and for a client that never shows its protocol),
//! graceful shutdown with requests in flight, back-off when the process is
//! out of file descriptors (in a child process), and a listener whose
//! runtime has shut down.

#![cfg(all(not(loom), feature = "hyper"))]

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use bytes::Bytes;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::{http1, http2};
use hyper::{Request, StatusCode, Version};
use weft::hyper::{Executor, Io};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Runtime};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// Runs `future` on a fresh 2-worker runtime; a hang fails after 20 s.
fn run<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
    runtime().block_on(async {
        weft::time::timeout(Duration::from_secs(20), future)
            .await
            .expect("the test finished within 20 s")
    })
}

/// Requests to `/wait` report that they arrived, then wait to be released.
#[derive(Clone)]
struct Gate {
    entered: tokio::sync::mpsc::UnboundedSender<()>,
    release: Arc<tokio::sync::Semaphore>,
}

fn app(gate: Gate) -> Router {
    Router::new()
        .route(
            "/hello/{name}",
            get(|Path(name): Path<String>| async move { format!("Hello, {name}!") }),
        )
        .route(
            "/wait",
            get(|State(gate): State<Gate>| async move {
                gate.entered.send(()).unwrap();
                gate.release.acquire().await.unwrap().forget();
                "released"
            }),
        )
        .with_state(gate)
}

/// The app, its gate's receiving end and its release.
fn gated_app() -> (
    Router,
    tokio::sync::mpsc::UnboundedReceiver<()>,
    Arc<tokio::sync::Semaphore>,
) {
    let (entered, arrivals) = tokio::sync::mpsc::unbounded_channel();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let gate = Gate {
        entered,
        release: release.clone(),
    };
    (app(gate), arrivals, release)
}

/// A graceful-shutdown signal and its trigger.
fn shutdown_signal() -> (
    tokio::sync::oneshot::Sender<()>,
    impl Future<Output = ()> + Send + 'static,
) {
    let (trigger, signal) = tokio::sync::oneshot::channel::<()>();
    (trigger, async move {
        let _ = signal.await;
    })
}

/// Serves the gated app on a new listener until the returned trigger
/// fires; the header-read timeout is `header_read_timeout`.
async fn start(
    header_read_timeout: Option<Duration>,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    weft::JoinHandle<std::io::Result<()>>,
    tokio::sync::mpsc::UnboundedReceiver<()>,
    Arc<tokio::sync::Semaphore>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (app, arrivals, release) = gated_app();
    let (trigger, signal) = shutdown_signal();
    let server = weft::spawn(
        weft::hyper::serve(listener, app)
            .header_read_timeout(header_read_timeout)
            .with_graceful_shutdown(signal)
            .into_future(),
    );
    (addr, trigger, server, arrivals, release)
}

fn get_request(path: &str) -> Request<Empty<Bytes>> {
    Request::get(path)
        .header(hyper::header::HOST, "127.0.0.1")
        .body(Empty::new())
        .unwrap()
}

/// One HTTP/1.1 GET on a connection of its own.
async fn get_h1(addr: SocketAddr, path: &str) -> (StatusCode, Version, Bytes) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = http1::handshake(Io::new(stream)).await.unwrap();
    drop(weft::spawn(connection));
    let response = sender.send_request(get_request(path)).await.unwrap();
    let (status, version) = (response.status(), response.version());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, version, body)
}

/// An HTTP/2 connection with prior knowledge, and the task driving it.
async fn connect_h2(
    addr: SocketAddr,
) -> (
    http2::SendRequest<Empty<Bytes>>,
    weft::JoinHandle<hyper::Result<()>>,
) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, connection) = http2::handshake(Executor, Io::new(stream)).await.unwrap();
    (sender, weft::spawn(connection))
}

async fn get_h2(
    mut sender: http2::SendRequest<Empty<Bytes>>,
    path: impl AsRef<str>,
) -> (StatusCode, Version, Bytes) {
    let response = sender
        .send_request(get_request(path.as_ref()))
        .await
        .unwrap();
    let (status, version) = (response.status(), response.version());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, version, body)
}

/// Tries to connect until the listener refuses (it is closed), for up to 5 s.
async fn until_refused(addr: SocketAddr) {
    for _ in 0..500 {
        if TcpStream::connect(addr).await.is_err() {
            return;
        }
        weft::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{addr} still accepts connections");
}

#[test]
fn an_axum_router_answers_over_http1_and_http2_on_one_listener() {
    run(async {
        let (addr, trigger, server, _arrivals, _release) =
            start(Some(Duration::from_secs(5))).await;
        let (status, version, body) = get_h1(addr, "/hello/ada").await;
        assert_eq!((status, version), (StatusCode::OK, Version::HTTP_11));
        assert_eq!(&body[..], b"Hello, ada!");
        assert_eq!(get_h1(addr, "/nowhere").await.0, StatusCode::NOT_FOUND);

        let (sender, driver) = connect_h2(addr).await;
        let streams: Vec<_> = (0..16)
            .map(|i| weft::spawn(get_h2(sender.clone(), format!("/hello/{i}"))))
            .collect();
        for (i, stream) in streams.into_iter().enumerate() {
            let (status, version, body) = stream.await.unwrap();
            assert_eq!((status, version), (StatusCode::OK, Version::HTTP_2));
            assert_eq!(body, format!("Hello, {i}!"));
        }
        drop(sender);
        driver.await.unwrap().unwrap();

        trigger.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
}

/// Graceful shutdown with 8 HTTP/1 requests in flight: the listener closes
/// at once, every request is answered, and then `serve` returns `Ok`.
#[test]
fn graceful_shutdown_answers_8_http1_requests_in_flight_then_returns() {
    run(async {
        let (addr, trigger, server, mut arrivals, release) =
            start(Some(Duration::from_secs(5))).await;
        let clients: Vec<_> = (0..8)
            .map(|_| weft::spawn(async move { get_h1(addr, "/wait").await }))
            .collect();
        for _ in 0..8 {
            arrivals.recv().await.unwrap();
        }
        trigger.send(()).unwrap();
        until_refused(addr).await;
        assert!(
            !server.is_finished(),
            "serve waits for the requests in flight"
        );
        release.add_permits(8);
        for client in clients {
            let (status, _, body) = client.await.unwrap();
            assert_eq!(status, StatusCode::OK);
            assert_eq!(&body[..], b"released");
        }
        server.await.unwrap().unwrap();
        assert!(
            TcpStream::connect(addr).await.is_err(),
            "the listener stays closed"
        );
    });
}

/// The same with 8 streams of one HTTP/2 connection: `GOAWAY`, then the
/// open streams finish.
#[test]
fn graceful_shutdown_answers_8_http2_streams_in_flight_then_returns() {
    run(async {
        let (addr, trigger, server, mut arrivals, release) =
            start(Some(Duration::from_secs(5))).await;
        let (sender, driver) = connect_h2(addr).await;
        let streams: Vec<_> = (0..8)
            .map(|_| weft::spawn(get_h2(sender.clone(), "/wait")))
            .collect();
        for _ in 0..8 {
            arrivals.recv().await.unwrap();
        }
        trigger.send(()).unwrap();
        until_refused(addr).await;
        release.add_permits(8);
        for stream in streams {
            let (status, version, body) = stream.await.unwrap();
            assert_eq!((status, version), (StatusCode::OK, Version::HTTP_2));
            assert_eq!(&body[..], b"released");
        }
        server.await.unwrap().unwrap();
        drop(sender);
        driver.await.unwrap().unwrap();
    });
}

/// Idle connections do not hold a shutdown: an HTTP/1 keep-alive one, an
/// HTTP/2 one and one that has sent nothing yet are all closed.
#[test]
fn graceful_shutdown_closes_idle_connections_at_once() {
    run(async {
        let (addr, trigger, server, _arrivals, _release) =
            start(Some(Duration::from_secs(60))).await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut h1, h1_driver) = http1::handshake(Io::new(stream)).await.unwrap();
        let h1_driver = weft::spawn(h1_driver);
        let response = h1.send_request(get_request("/hello/idle")).await.unwrap();
        response.into_body().collect().await.unwrap();
        let (h2, h2_driver) = connect_h2(addr).await;
        assert_eq!(get_h2(h2.clone(), "/hello/idle").await.0, StatusCode::OK);
        let mut silent = TcpStream::connect(addr).await.unwrap();

        let started = std::time::Instant::now();
        trigger.send(()).unwrap();
        server.await.unwrap().unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        h1_driver.await.unwrap().unwrap();
        h2_driver.await.unwrap().unwrap();
        let mut rest = Vec::new();
        // End of stream, or a reset: closed either way.
        let _ = silent.read_to_end(&mut rest).await;
        assert!(rest.is_empty());
        drop((h1, h2));
    });
}

/// Half a request head, then nothing: closed once hyper's header-read
/// timeout passes, without an answer.
#[test]
fn a_client_that_sends_half_a_header_is_closed_after_the_timeout() {
    run(async {
        let timeout = Duration::from_millis(200);
        let (addr, trigger, server, _arrivals, _release) = start(Some(timeout)).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let started = std::time::Instant::now();
        stream
            .write_all(b"GET /hello/x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        let mut rest = Vec::new();
        let _closed = stream.read_to_end(&mut rest).await;
        assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
        assert!(
            started.elapsed() >= timeout * 3 / 4,
            "not before the timeout"
        );
        trigger.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
}

/// A client that connects and sends nothing, or only the start of the
/// HTTP/2 preface, is closed after the same timeout: the protocol
/// detection before hyper's own timer is bounded too (hyperium/hyper#3962).
#[test]
fn a_client_that_never_shows_its_protocol_is_closed_after_the_timeout() {
    run(async {
        let timeout = Duration::from_millis(200);
        let (addr, trigger, server, _arrivals, _release) = start(Some(timeout)).await;
        for sent in [&b""[..], b"PRI * HTTP/2.0\r\n"] {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let started = std::time::Instant::now();
            stream.write_all(sent).await.unwrap();
            let mut rest = Vec::new();
            let _closed = stream.read_to_end(&mut rest).await;
            assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
            assert!(
                started.elapsed() >= timeout * 3 / 4,
                "not before the timeout"
            );
        }
        trigger.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
}

/// `header_read_timeout(None)`: a silent client keeps its connection.
#[test]
fn without_a_header_read_timeout_a_silent_connection_stays_open() {
    run(async {
        let (addr, trigger, server, _arrivals, _release) = start(None).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let mut byte = [0];
        let read = weft::time::timeout(Duration::from_millis(500), stream.read(&mut byte)).await;
        assert!(read.is_err(), "still open after 500 ms: {read:?}");
        trigger.send(()).unwrap();
        server.await.unwrap().unwrap();
    });
}

/// The default is 30 s, on weft's clock (the paused test clock jumps it).
#[weft::test(start_paused = true, worker_threads = 2)]
async fn the_default_header_read_timeout_is_30_s() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = weft::spawn(weft::hyper::serve(listener, gated_app().0).into_future());
    for sent in [&b""[..], b"GET / HTTP/1.1\r\n"] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let started = weft::time::Instant::now();
        stream.write_all(sent).await.unwrap();
        let mut rest = Vec::new();
        // (On the paused clock too: a connection never closed fails here.)
        let closed = weft::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut rest));
        let _closed = closed.await.expect("closed within 120 s");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(30),
            "{waited:?} after {sent:?}"
        );
        assert!(
            waited < Duration::from_secs(61),
            "{waited:?} after {sent:?}"
        );
    }
    server.abort();
}

/// `Serve` shows its listener and settings in `Debug`, its future its name.
#[test]
fn serve_and_its_future_show_themselves_in_debug() {
    run(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let serve = weft::hyper::serve(listener, gated_app().0)
            .header_read_timeout(Duration::from_secs(5))
            .tcp_nodelay(false);
        let shown = format!("{serve:?}");
        for part in [
            "Serve {".to_owned(),
            addr.to_string(),
            "header_read_timeout: Some(5s)".to_owned(),
            "tcp_nodelay: false".to_owned(),
        ] {
            assert!(shown.contains(&part), "{part:?} in {shown}");
        }
        assert_eq!(format!("{:?}", serve.into_future()), "ServeFuture { .. }");
    });
}

#[test]
fn serving_a_listener_whose_runtime_shut_down_returns_that_error() {
    let first = runtime();
    let listener = first.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    drop(first);
    let error = run(async move { weft::hyper::serve(listener, gated_app().0).await })
        .expect_err("serve fails");
    assert!(error.to_string().contains("shut down"), "{error}");
}

#[test]
#[should_panic(expected = "`weft::hyper::serve` awaited outside of a weft runtime")]
fn awaiting_serve_outside_a_runtime_panics_saying_where_to_await_it() {
    let rt = runtime();
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let serving = weft::hyper::serve(listener, gated_app().0).into_future();
    let _ = futures_lite::future::block_on(serving);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::RawFd;
    use std::process::{Command, Stdio};

    use super::*;

    /// The port of `fd`'s own address or its peer's, if it is an IPv4
    /// socket.
    fn port_of(fd: RawFd, peer: bool) -> Option<u16> {
        // SAFETY: all-zero is a valid `sockaddr_in`.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let addr_ptr = std::ptr::from_mut(&mut addr).cast::<libc::sockaddr>();
        // SAFETY: `addr` and `len` are valid for writes of `len` bytes; on a
        // descriptor that is not (or no longer) a socket the call fails.
        let rc = unsafe {
            if peer {
                libc::getpeername(fd, addr_ptr, &mut len)
            } else {
                libc::getsockname(fd, addr_ptr, &mut len)
            }
        };
        (rc == 0 && i32::from(addr.sin_family) == libc::AF_INET)
            .then(|| u16::from_be(addr.sin_port))
    }

    /// `TCP_NODELAY` on the server's side of the connection from
    /// `client` to `server`: found among this process's descriptors.
    fn server_side_nodelay(server: SocketAddr, client: SocketAddr) -> bool {
        for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
            let Ok(fd) = entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .parse::<RawFd>()
            else {
                continue;
            };
            if port_of(fd, false) != Some(server.port()) || port_of(fd, true) != Some(client.port())
            {
                continue;
            }
            let mut value: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `value` and `len` are valid for writes of `len` bytes.
            let rc = unsafe {
                libc::getsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    std::ptr::from_mut(&mut value).cast(),
                    &mut len,
                )
            };
            assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
            return value != 0;
        }
        panic!("no descriptor of this process is the server's side of {client} -> {server}");
    }

    #[test]
    fn accepted_streams_get_tcp_nodelay_unless_it_is_turned_off() {
        for nodelay in [true, false] {
            run(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let (trigger, signal) = shutdown_signal();
                let server = weft::spawn(
                    weft::hyper::serve(listener, gated_app().0)
                        .tcp_nodelay(nodelay)
                        .with_graceful_shutdown(signal)
                        .into_future(),
                );
                let stream = TcpStream::connect(addr).await.unwrap();
                let client = stream.local_addr().unwrap();
                let (mut sender, connection) = http1::handshake(Io::new(stream)).await.unwrap();
                let driver = weft::spawn(connection);
                // Answered: the server has accepted and set its options.
                let response = sender.send_request(get_request("/hello/n")).await.unwrap();
                assert_eq!(response.status(), StatusCode::OK);
                assert_eq!(server_side_nodelay(addr, client), nodelay);
                drop(sender);
                driver.await.unwrap().unwrap();
                trigger.send(()).unwrap();
                server.await.unwrap().unwrap();
            });
        }
    }

    /// Set in the child process of the `EMFILE` test.
    const CHILD: &str = "WEFT_SERVE_EMFILE_CHILD";

    /// Out of file descriptors, `serve` pauses its accepts instead of
    /// spinning or ending, and serves the waiting connection once a
    /// descriptor is free. In a child process (the body is
    /// `emfile_child_process`), whose descriptor limit is lowered and
    /// filled.
    #[test]
    fn out_of_file_descriptors_serve_backs_off_and_goes_on() {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "linux::emfile_child_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut to_child = child.stdin.take().unwrap();
        let mut from_child = BufReader::new(child.stdout.take().unwrap());
        let mut expect = |prefix: &str| -> String {
            let mut line = String::new();
            loop {
                line.clear();
                assert_ne!(
                    from_child.read_line(&mut line).unwrap(),
                    0,
                    "the child ended before `{prefix}`"
                );
                // libtest's "test linux::emfile_child_process ... " may
                // come first on the line.
                if let Some(at) = line.find(prefix) {
                    return line[at + prefix.len()..].trim_end().to_owned();
                }
            }
        };
        let addr: SocketAddr = expect("listening ").parse().unwrap();
        expect("full");
        // The connection waits in the listen queue: the child cannot accept it.
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        client
            .write_all(b"GET /hello/fd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        writeln!(to_child, "connected").unwrap();
        let cpu_ms: u64 = expect("cpu_ms ").parse().unwrap();
        // A loop retrying at once would keep a worker busy the whole 600 ms.
        assert!(
            cpu_ms < 150,
            "the child used {cpu_ms} ms of CPU in 600 ms out of descriptors"
        );
        expect("freed");
        let mut response = String::new();
        client.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        assert!(response.ends_with("Hello, fd!"), "{response}");
        writeln!(to_child, "done").unwrap();
        expect("served");
        assert!(child.wait().unwrap().success());
    }

    /// The child's side of `out_of_file_descriptors_serve_backs_off_and_goes_on`
    /// (does nothing unless run as that child).
    #[test]
    fn emfile_child_process() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        let rt = runtime();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        println!("listening {}", listener.local_addr().unwrap());
        let (trigger, signal) = shutdown_signal();
        let server = rt.spawn(
            weft::hyper::serve(listener, gated_app().0)
                .with_graceful_shutdown(signal)
                .into_future(),
        );
        let fillers = fill_descriptors();
        println!("full");
        let mut stdin = std::io::stdin().lock();
        let mut line = String::new();
        stdin.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "connected");
        let before = cpu_time();
        std::thread::sleep(Duration::from_millis(600));
        println!("cpu_ms {}", (cpu_time() - before).as_millis());
        drop(fillers);
        println!("freed");
        line.clear();
        stdin.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "done");
        trigger.send(()).unwrap();
        rt.block_on(server).unwrap().unwrap();
        println!("served");
    }

    /// Lowers the descriptor limit to 64 above those open and opens
    /// descriptors until none is left.
    fn fill_descriptors() -> Vec<std::fs::File> {
        let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
        // SAFETY: all-zero is a valid `rlimit`.
        let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: `limit` is valid for writes.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        assert_eq!(rc, 0);
        limit.rlim_cur = limit.rlim_cur.min(open + 64);
        // SAFETY: `limit` is a valid `rlimit`; this lowers this process's
        // own soft limit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
        let mut fillers = Vec::new();
        loop {
            match std::fs::File::open("/dev/null") {
                Ok(file) => fillers.push(file),
                Err(error) => {
                    assert_eq!(error.raw_os_error(), Some(libc::EMFILE), "{error}");
                    return fillers;
                }
            }
        }
    }

    /// This process's CPU time (user and system).
    fn cpu_time() -> Duration {
        // SAFETY: all-zero is a valid `rusage`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is valid for writes.
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
    }
}
