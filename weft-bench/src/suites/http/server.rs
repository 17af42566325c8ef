//! The hello servers: hyper 1.x's HTTP/1 server connection
//! (`hyper::server::conn::http1::Builder`, keep-alive, no timer, so no
//! header-read timeout, on all three alike) answering every request with
//! `200 OK` and the static body [`BODY`], on weft, tokio and smol behind
//! [`HttpRuntime`].
//!
//! Each server is the echo suite's [`Server`] (a runtime, an accept loop on
//! 127.0.0.1 that ends when its stop channel closes) with another accept
//! loop: every accepted connection gets `TCP_NODELAY` and is handed, as
//! hyper's connection future, to the runtime's *hyper executor*
//! (`hyper::rt::Executor::execute`), which spawns it:
//!
//! * **weft**: `weft::net::TcpListener`, [`weft::hyper::Io`] around the
//!   stream, [`weft::hyper::Executor`].
//! * **tokio**: `tokio::net::TcpListener`, hyper-util's `TokioIo` and
//!   `TokioExecutor`, on the echo suite's tokio runtime (`enable_io()`).
//! * **smol**: `async_io::Async<TcpListener>`, and the two adapters below
//!   ([`SmolIo`]: `hyper::rt::Read`/`Write` for `Async<TcpStream>`;
//!   [`SmolExecutor`]: spawns on the suite's `async_executor::Executor`,
//!   detached), on the echo suite's smol runtime (N threads running the
//!   executor; async-io's own thread drives the reactor).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::net::TcpStream as StdTcpStream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use async_executor::Executor as SmolRuntimeExecutor;
use async_io::Async;
use bytes::Bytes;
use futures_lite::{AsyncRead, AsyncWrite};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::rt::Executor as _;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};

use crate::common::runtimes::net::{NetRuntime, StreamOf};
use crate::common::runtimes::{Smol, Tokio, Weft};
use crate::serve::server::Server;

/// The body of every response.
pub const BODY: &[u8] = b"Hello, World!";

/// The service: `200 OK` and [`BODY`], whatever the request.
async fn hello(_: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(BODY))))
}

/// Serves one connection until the client closes it (errors, a reset by
/// the client at the end of the run, end it too).
async fn serve<I>(io: I)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
{
    let _ = http1::Builder::new()
        .serve_connection(io, service_fn(hello))
        .await;
}

/// A runtime that can serve the hello server.
pub trait HttpRuntime: NetRuntime {
    /// What the accept loop calls with each connection: hands it, as
    /// hyper's connection future, to the runtime's hyper executor.
    fn serve_http(spawner: Self::Spawner) -> impl FnMut(StreamOf<Self>) + Send + 'static;
}

/// Starts the hello server on `R` with `workers` worker threads.
pub fn start<R: HttpRuntime>(workers: usize) -> io::Result<Server<R>> {
    Server::start_with(workers, R::serve_http)
}

impl HttpRuntime for Weft {
    fn serve_http(_: Self::Spawner) -> impl FnMut(StreamOf<Self>) + Send + 'static {
        let executor = weft::hyper::Executor::new();
        move |stream| executor.execute(serve(weft::hyper::Io::new(stream)))
    }
}

impl HttpRuntime for Tokio {
    fn serve_http(_: Self::Spawner) -> impl FnMut(StreamOf<Self>) + Send + 'static {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        let executor = TokioExecutor::new();
        move |stream| executor.execute(serve(TokioIo::new(stream)))
    }
}

impl HttpRuntime for Smol {
    fn serve_http(spawner: Self::Spawner) -> impl FnMut(StreamOf<Self>) + Send + 'static {
        let executor = SmolExecutor(spawner);
        move |stream| executor.execute(serve(SmolIo(stream)))
    }
}

/// hyper's executor on smol: spawns on the suite's `async_executor`,
/// detached (dropping smol's `Task` would cancel it).
#[derive(Clone)]
pub struct SmolExecutor(pub Arc<SmolRuntimeExecutor<'static>>);

impl<F> hyper::rt::Executor<F> for SmolExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        self.0.spawn(future).detach();
    }
}

/// An async-io socket as hyper's `rt::Read` + `rt::Write`, through its
/// `futures_io` traits (as `weft::hyper::Io` does for weft's).
pub struct SmolIo(pub Async<StdTcpStream>);

impl hyper::rt::Read for SmolIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the slice is zeroed before it is read into, and `advance`
        // is given the number of bytes the read filled.
        let unfilled: &mut [MaybeUninit<u8>] = unsafe { buf.as_mut() };
        // `futures_io` reads into initialized memory: zero it first.
        for byte in unfilled.iter_mut() {
            byte.write(0);
        }
        // SAFETY: every element was just initialized; `MaybeUninit<u8>` and
        // `u8` have the same layout.
        let unfilled: &mut [u8] =
            unsafe { &mut *(std::ptr::from_mut::<[MaybeUninit<u8>]>(unfilled) as *mut [u8]) };
        let read = ready!(Pin::new(&mut self.0).poll_read(cx, unfilled))?;
        // SAFETY: the read filled (initialized) `read` bytes of the cursor.
        unsafe { buf.advance(read) };
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for SmolIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_close(cx)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
}
