//! hyper's hello world on weft: HTTP/1.1 with keep-alive, or HTTP/2 (over
//! clear text, prior knowledge) with `--h2`; a 5 s header-read timeout;
//! graceful shutdown on Ctrl-C (requests in flight finish first).
//!
//! `cargo run -p weft --example http_server --features hyper -- [--h2] [PORT]`
//! (default: a free port), then `curl http://127.0.0.1:PORT/` (with `--h2`:
//! `curl --http2-prior-knowledge ...`). Prints the address it listens on.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::server::graceful::GracefulShutdown;
use weft::hyper::{Executor, Io, Timer};
use weft::net::TcpListener;

/// How long a client may take to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

async fn hello(
    _: Request<Incoming>,
    respond_after: Duration,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if !respond_after.is_zero() {
        weft::time::sleep(respond_after).await;
    }
    Ok(Response::new(Full::new(Bytes::from_static(
        b"Hello, world!\n",
    ))))
}

/// Serves hello world on `listener` until `shutdown` completes, then waits
/// for the connections' requests in flight; returns how many connections
/// it served. `respond_after` pauses before each response (zero here; the
/// tests use it to have requests in flight at shutdown).
pub async fn serve(
    listener: TcpListener,
    h2: bool,
    header_read_timeout: Duration,
    respond_after: Duration,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<usize> {
    let service = service_fn(move |request| hello(request, respond_after));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let mut served = 0;
    loop {
        let accepted = futures_lite::future::or(async { Some(listener.accept().await) }, async {
            shutdown.as_mut().await;
            None
        })
        .await;
        let Some(accepted) = accepted else { break };
        let (stream, _) = accepted?;
        stream.set_nodelay(true)?;
        served += 1;
        let io = Io::new(stream);
        if h2 {
            let connection = hyper::server::conn::http2::Builder::new(Executor)
                .timer(Timer::new())
                .serve_connection(io, service);
            let connection = graceful.watch(connection);
            drop(weft::spawn(async move {
                let _ = connection.await;
            }));
        } else {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(Timer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(io, service);
            let connection = graceful.watch(connection);
            drop(weft::spawn(async move {
                let _ = connection.await;
            }));
        }
    }
    graceful.shutdown().await;
    Ok(served)
}

#[allow(dead_code)] // the tests include this file for `serve`
#[weft::main]
async fn main() -> std::io::Result<()> {
    let mut h2 = false;
    let mut port = 0u16;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--h2" => h2 = true,
            _ => {
                port = arg.parse().map_err(|error| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("expected `--h2` or a PORT, got {arg:?}: {error}"),
                    )
                })?
            }
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}", listener.local_addr()?);
    let ctrl_c = async {
        let _ = weft::signal::ctrl_c().await;
        eprintln!("Ctrl-C: finishing the requests in flight");
    };
    let served = serve(listener, h2, HEADER_READ_TIMEOUT, Duration::ZERO, ctrl_c).await?;
    eprintln!("served {served} connections");
    Ok(())
}
