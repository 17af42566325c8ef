//! The TCP API of each runtime behind one trait, [`NetRuntime`], so that
//! a server (the echo and HTTP suites') or a client task (the stall
//! suite's round trips) is written once: its listener ([`Accept`]), its
//! build with an I/O driver, and an echo of one connection.
//!
//! Every listener binds 127.0.0.1 (a port the OS picks, [`LOOPBACK`]);
//! each accepted connection gets `TCP_NODELAY`. The echo reads up to
//! [`BUFFER_BYTES`] and writes them all back, until EOF.
//!
//! * **weft**: `weft::net::TcpListener`, `TcpStream` (`futures_io`
//!   traits), on weft's runtime.
//! * **tokio**: `tokio::net::TcpListener`, `TcpStream` (tokio's I/O
//!   traits, `io-util`), on a multi-thread runtime built with
//!   `enable_io()` and no timer driver (the echo needs none).
//! * **smol**: `async_io::Async<TcpListener>`, `Async<TcpStream>`
//!   (`futures_io` traits), on smol's runtime: an
//!   `async_executor::Executor` run by N threads in
//!   `futures_lite::future::block_on`, as smol's documentation builds a
//!   thread pool. Those threads do not drive async-io's reactor; its own
//!   thread (`async-io`, started at the first registration and kept for
//!   the life of the process) does, so every readiness event passes
//!   through that thread. Its CPU is this process's.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdTcpListener, TcpStream as StdTcpStream};

use async_io::Async;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::runtimes::{BenchRuntime, Smol, Tokio, Tuning, Weft};

/// The most a connection task reads at once (a 4 KiB message fits).
pub const BUFFER_BYTES: usize = 8 * 1024;

/// The address every server binds: loopback, any free port.
pub const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// A listener the servers accept on (weft's, tokio's, async-io's).
pub trait Accept: Send + Sync + 'static {
    /// An accepted connection.
    type Stream: Send + 'static;

    /// The next connection, with `TCP_NODELAY` set.
    fn next(&self) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

/// The connection a runtime's listener accepts.
pub type StreamOf<R> = <<R as NetRuntime>::Listener as Accept>::Stream;

/// A runtime with TCP: its listener, its build with an I/O driver, an
/// echo of one connection.
pub trait NetRuntime: BenchRuntime + 'static {
    /// The names of the runtime's threads that serve every server of the
    /// process rather than one (async-io's reactor thread for smol): a
    /// server's counters count them too.
    const SHARED_THREADS: &'static [&'static str] = &[];

    /// Its listener.
    type Listener: Accept;

    /// Starts the runtime with `workers` worker threads and its I/O driver.
    fn build_with_io(workers: usize) -> io::Result<Self>;

    /// Binds a listener on loopback ([`LOOPBACK`]).
    fn bind(&self) -> io::Result<(SocketAddr, Self::Listener)>;

    /// Echoes one connection until EOF (a reset by the peer ends it too).
    fn echo(stream: StreamOf<Self>) -> impl Future<Output = ()> + Send + 'static;
}

/// Echoes `$stream` until EOF or an error: reads up to [`BUFFER_BYTES`]
/// and writes them all back, through whichever `read`/`write_all`
/// extension traits are in scope (futures-lite's or tokio's).
macro_rules! echo_until_eof {
    ($stream:ident) => {{
        let mut buffer = vec![0u8; BUFFER_BYTES];
        while let Ok(read @ 1..) = $stream.read(&mut buffer).await {
            if $stream.write_all(&buffer[..read]).await.is_err() {
                return;
            }
        }
    }};
}

/// Echoes a `futures_io` stream (weft's, async-io's).
async fn echo<S>(mut stream: S)
where
    S: futures_lite::AsyncRead + futures_lite::AsyncWrite + Unpin,
{
    echo_until_eof!(stream)
}

/// Echoes a tokio stream.
async fn echo_tokio(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    echo_until_eof!(stream)
}

/// [`Accept`] for a listener whose `accept` gives `(stream, address)`
/// and whose stream has `set_nodelay` (weft's and tokio's).
macro_rules! accept_nodelay {
    ($($listener:ty => $stream:ty),*) => {$(
        impl Accept for $listener {
            type Stream = $stream;

            async fn next(&self) -> io::Result<Self::Stream> {
                let (stream, _) = self.accept().await?;
                stream.set_nodelay(true)?;
                Ok(stream)
            }
        }
    )*};
}

accept_nodelay!(
    weft::net::TcpListener => weft::net::TcpStream,
    tokio::net::TcpListener => tokio::net::TcpStream
);

impl Accept for Async<StdTcpListener> {
    type Stream = Async<StdTcpStream>;

    async fn next(&self) -> io::Result<Self::Stream> {
        let (stream, _) = self.accept().await?;
        stream.get_ref().set_nodelay(true)?;
        Ok(stream)
    }
}

impl NetRuntime for Weft {
    type Listener = weft::net::TcpListener;

    fn build_with_io(workers: usize) -> io::Result<Self> {
        Weft::build(workers, Tuning::default())
    }

    fn bind(&self) -> io::Result<(SocketAddr, Self::Listener)> {
        // `bind` looks for the runtime when it is called, not when its
        // future is first polled (tokio's is an `async fn`): call it inside.
        let listener = self.block_on(async { weft::net::TcpListener::bind(LOOPBACK).await })?;
        Ok((listener.local_addr()?, listener))
    }

    fn echo(stream: StreamOf<Self>) -> impl Future<Output = ()> + Send + 'static {
        echo(stream)
    }
}

impl NetRuntime for Tokio {
    type Listener = tokio::net::TcpListener;

    fn build_with_io(workers: usize) -> io::Result<Self> {
        Tokio::with_driver(workers, tokio::runtime::Builder::enable_io)
    }

    fn bind(&self) -> io::Result<(SocketAddr, Self::Listener)> {
        let listener = self.block_on(tokio::net::TcpListener::bind(LOOPBACK))?;
        Ok((listener.local_addr()?, listener))
    }

    fn echo(stream: StreamOf<Self>) -> impl Future<Output = ()> + Send + 'static {
        echo_tokio(stream)
    }
}

impl NetRuntime for Smol {
    const SHARED_THREADS: &'static [&'static str] = &["async-io"];

    type Listener = Async<StdTcpListener>;

    fn build_with_io(workers: usize) -> io::Result<Self> {
        Smol::build(workers, Tuning::default())
    }

    fn bind(&self) -> io::Result<(SocketAddr, Self::Listener)> {
        let listener = Async::<StdTcpListener>::bind(LOOPBACK)?;
        Ok((listener.get_ref().local_addr()?, listener))
    }

    fn echo(stream: StreamOf<Self>) -> impl Future<Output = ()> + Send + 'static {
        echo(stream)
    }
}
