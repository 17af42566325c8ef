//! One accepted connection, served as its own weft task.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;

use super::bounds::{HttpBody, HttpService};
use super::drain::Watch;
use super::preface::PrefaceDeadline;
use super::{Executor, Io, Timer};
use crate::net::TcpStream;

/// The name of every connection task (stall reports show it).
const TASK_NAME: &str = "weft::hyper::serve";

/// hyper-util's per-connection HTTP/1-or-2 builder, on weft's executor
/// and timers, with `header_read_timeout` for HTTP/1 (`None`: no timeout)
/// and, as axum's `serve`, HTTP/2's extended `CONNECT` (WebSockets over
/// HTTP/2, RFC 8441).
pub(crate) fn builder(header_read_timeout: Option<Duration>) -> auto::Builder<Executor> {
    let mut builder = auto::Builder::new(Executor);
    builder
        .http1()
        .timer(Timer::new())
        .header_read_timeout(header_read_timeout);
    builder
        .http2()
        .timer(Timer::new())
        .enable_connect_protocol();
    builder
}

/// Spawns the task that serves `stream` with `service` until the client
/// closes, an error ends it, or, once `watch` signals, hyper's graceful
/// shutdown has finished the requests in flight.
///
/// # Panics
///
/// Outside a weft runtime.
pub(crate) fn spawn<S, B>(
    stream: TcpStream,
    service: S,
    builder: Arc<auto::Builder<Executor>>,
    header_read_timeout: Option<Duration>,
    watch: Watch,
) where
    S: HttpService<B>,
    B: HttpBody,
{
    // From the accept: the client's time to show its protocol.
    let deadline = header_read_timeout.map(crate::time::sleep);
    // Reads go straight into hyper's buffer: `Io` would zero it first.
    let io = Io::with_uninit_reads(
        PrefaceDeadline::new(stream, deadline),
        PrefaceDeadline::poll_read_uninit,
    );
    let served = serve(io, TowerToHyperService::new(service), builder, watch);
    // The `io::Result` is tokio's signature; `spawn` fails in no other way.
    let spawned = crate::task::Builder::new().name(TASK_NAME).spawn(served);
    // Detached: the drain counts the task through its watch.
    drop(spawned);
}

async fn serve<S, B>(
    io: Io<PrefaceDeadline<TcpStream>>,
    service: TowerToHyperService<S>,
    builder: Arc<auto::Builder<Executor>>,
    mut watch: Watch,
) where
    S: HttpService<B>,
    B: HttpBody,
{
    // With upgrades, as axum's `serve`: WebSocket routes work.
    let mut connection = pin!(builder.serve_connection_with_upgrades(io, service));
    let mut draining = false;
    // The connection's error is the client's (it went away, sent a bad
    // request, timed out): hyper has answered it where it could.
    let _ = poll_fn(|cx| {
        if !draining && watch.poll_signal(cx).is_ready() {
            draining = true;
            connection.as_mut().graceful_shutdown();
        }
        connection.as_mut().poll(cx)
    })
    .await;
}
