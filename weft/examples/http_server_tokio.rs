//! The peer of `http_server` on tokio, for comparing the two servers' cost
//! per request (`scripts/server_cost.sh`): the same response
//! (`Hello, world!\n`), on `#[tokio::main]`'s multi-thread runtime.
//!
//! `cargo run --release -p weft --example http_server_tokio --features hyper -- [PORT] [--auto]`
//! (default: a free port). Without `--auto` it is hyper's own hello server
//! (`http1::Builder`, keep-alive, no timer); with `--auto` it is built as
//! `weft::hyper::serve` builds its connections: hyper-util's HTTP/1-or-2
//! `auto` builder with a 5 s header-read timeout on tokio's timer. Prints
//! the address it listens on; stops on Ctrl-C.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

/// As `http_server`'s: how long a client may take to send a request's
/// headers (with `--auto`).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

async fn hello(_: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(
        b"Hello, world!\n",
    ))))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut port = 0;
    let mut like_serve = false;
    for arg in std::env::args().skip(1) {
        if arg == "--auto" {
            like_serve = true;
        } else {
            port = arg.parse().map_err(|error| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("PORT: {error}"))
            })?;
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}", listener.local_addr()?);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        stream.set_nodelay(true)?;
        let io = TokioIo::new(stream);
        if like_serve {
            let builder = builder.clone();
            tokio::spawn(async move {
                let _ = builder.serve_connection(io, service_fn(hello)).await;
            });
        } else {
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(io, service_fn(hello))
                    .await;
            });
        }
    }
}
