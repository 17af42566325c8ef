//! hyper's hello world on weft, served by `weft::hyper::serve`: HTTP/1.1
//! with keep-alive and HTTP/2 (over clear text, prior knowledge) on one
//! port, told apart per connection; a 5 s header-read timeout; graceful
//! shutdown on Ctrl-C (requests in flight finish first).
//!
//! `cargo run -p weft --example http_server --features hyper -- [PORT]`
//! (default: a free port), then `curl http://127.0.0.1:PORT/` or
//! `curl --http2-prior-knowledge http://127.0.0.1:PORT/`. Prints the
//! address it listens on.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
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

/// Serves hello world on `listener` until `shutdown` completes, then lets
/// the requests in flight finish. `respond_after` pauses before each
/// response (zero here; the tests use it to have requests in flight at
/// shutdown).
pub async fn serve(
    listener: TcpListener,
    header_read_timeout: Duration,
    respond_after: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // A hyper handler as the tower service `serve` takes.
    let service = tower::service_fn(move |request| hello(request, respond_after));
    weft::hyper::serve(listener, service)
        .header_read_timeout(header_read_timeout)
        .with_graceful_shutdown(shutdown)
        .await
}

#[allow(dead_code)] // the tests include this file for `serve`
#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(Ok(0), |p| p.parse())
        .map_err(|error| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("PORT: {error}"))
        })?;
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}", listener.local_addr()?);
    let ctrl_c = async {
        let _ = weft::signal::ctrl_c().await;
        eprintln!("Ctrl-C: finishing the requests in flight");
    };
    serve(listener, HEADER_READ_TIMEOUT, Duration::ZERO, ctrl_c).await?;
    eprintln!("every connection closed");
    Ok(())
}
