//! hyper 1.x on weft (feature `hyper`).
//!
//! - [`serve`] runs an HTTP/1 and HTTP/2 server for a tower service (an
//!   axum `Router`): the accept loop, one task per connection, a
//!   header-read timeout, back-off on `EMFILE`, graceful shutdown (axum's
//!   `serve`, on weft).
//! - [`Io`], [`Executor`] and [`Timer`] are what hyper asks of a runtime,
//!   for serving or calling by hand with hyper's own connection builders:
//!   the roles of hyper-util's `TokioIo`, `TokioExecutor` and `TokioTimer`.
//!
//! ```
//! use axum::Router;
//! use axum::routing::get;
//! use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
//! use weft::net::{TcpListener, TcpStream};
//!
//! # weft::runtime::Runtime::new().unwrap().block_on(async {
//! let app = Router::new().route("/", get(|| async { "Hello, world!" }));
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! let client = weft::spawn(async move {
//!     let mut stream = TcpStream::connect(addr).await?;
//!     stream.write_all(b"GET / HTTP/1.1\r\nHost: weft\r\nConnection: close\r\n\r\n").await?;
//!     let mut response = String::new();
//!     stream.read_to_string(&mut response).await?;
//!     Ok::<_, std::io::Error>(response)
//! });
//! // Serve until the client has its answer, then shut down gracefully.
//! let (tx, rx) = std::sync::mpsc::channel();
//! weft::hyper::serve(listener, app)
//!     .with_graceful_shutdown(async move {
//!         tx.send(client.await).unwrap();
//!     })
//!     .await?;
//! let response = rx.recv().unwrap().unwrap()?;
//! assert!(response.starts_with("HTTP/1.1 200 OK"));
//! assert!(response.ends_with("Hello, world!"));
//! # Ok::<(), std::io::Error>(())
//! # }).unwrap();
//! ```
//!
//! Serving by hand, with hyper's HTTP/1 builder:
//!
//! ```no_run
//! use std::convert::Infallible;
//!
//! use hyper::server::conn::http1;
//! use hyper::service::service_fn;
//! use hyper::{Request, Response};
//! use weft::hyper::{Io, Timer};
//! use weft::net::TcpListener;
//!
//! async fn hello(_: Request<hyper::body::Incoming>) -> Result<Response<String>, Infallible> {
//!     Ok(Response::new("hello".to_owned()))
//! }
//!
//! weft::runtime::Runtime::new().unwrap().block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:3000").await.unwrap();
//!     loop {
//!         let (stream, _) = listener.accept().await.unwrap();
//!         weft::spawn(async move {
//!             let _ = http1::Builder::new()
//!                 .timer(Timer::new())
//!                 .serve_connection(Io::new(stream), service_fn(hello))
//!                 .await;
//!         });
//!     }
//! });
//! ```
//!
//! # How `serve` is built
//!
//! One task runs the accept loop (`serve.rs`): it waits for the shutdown
//! signal, a connection or an accept error, the signal first. An accepted
//! stream gets `TCP_NODELAY` and a `drain.rs` watch, and is served in a
//! task of its own (`connection.rs`, named `weft::hyper::serve`) by
//! hyper-util's `auto` builder, which reads the first bytes to pick HTTP/1
//! or HTTP/2. The header-read timeout covers those first bytes too
//! (`preface.rs`; hyper's own timer starts only after them), and then
//! hyper's HTTP/1 `header_read_timeout` on weft's [`Timer`]. A failed
//! accept is retried, paused or returned (`accept.rs`).
//!
//! Shutdown: the signal ends the loop, the listener is dropped (new
//! connections are refused), the drain (`drain.rs`) tells every connection task to call
//! hyper's `graceful_shutdown` and counts them down, and `serve` returns
//! when none is left. The listener's errors end `serve` without a drain.
//! No lock of weft's is held while user code (a service, a waker) runs.

mod accept;
mod bounds;
mod connection;
use crate::util::drain;
mod preface;
mod rt;
mod serve;

pub use bounds::{BoxError, HttpBody, HttpService};
pub use rt::{Executor, Io, Timer};
pub use serve::{Serve, ServeFuture, serve};
