//! The echo servers: one accept loop and one per-connection echo, written
//! once per I/O API and run on weft, tokio and smol behind
//! [`EchoRuntime`].
//!
//! Every server listens on 127.0.0.1 (a port the OS picks). Its accept
//! loop is one task; each accepted connection gets `TCP_NODELAY` and a task
//! of its own that reads up to [`BUFFER_BYTES`] and writes them all back,
//! until EOF. The accept loop ends when the server's stop channel closes
//! ([`Server::stop`] waits for it), so no task of the server outlives the
//! run: smol's accept loop holds its executor, and one left in it would
//! keep the executor, and the listener's socket, alive after the runtime
//! is dropped. The connection tasks end when the load generator closes its
//! connections.
//!
//! * **weft**: `weft::net::TcpListener`, `TcpStream` (`futures_io`
//!   traits), on the lane's weft runtime.
//! * **tokio**: `tokio::net::TcpListener`, `TcpStream` (tokio's I/O
//!   traits, `io-util`), on a multi-thread runtime built with
//!   `enable_io()` and no timer driver (the echo needs none).
//! * **smol**: `async_io::Async<TcpListener>`, `Async<TcpStream>`
//!   (`futures_io` traits), on the lane's smol runtime: an
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

use futures_lite::future;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::runtimes::{BenchRuntime, Smol, Spawner, Tokio, Tuning, Weft};

/// The most a connection task reads at once (a 4 KiB message fits).
pub const BUFFER_BYTES: usize = 8 * 1024;

/// The address every server binds: loopback, any free port.
pub(crate) const LOOPBACK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// A listener the servers accept on (weft's, tokio's, async-io's).
pub trait Accept: Send + Sync + 'static {
    /// An accepted connection.
    type Stream: Send + 'static;

    /// The next connection, with `TCP_NODELAY` set.
    fn next(&self) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

/// The connection a runtime's listener accepts.
pub type StreamOf<R> = <<R as EchoRuntime>::Listener as Accept>::Stream;

/// A runtime that can serve echo.
pub trait EchoRuntime: BenchRuntime + 'static {
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

/// A server the lanes run under their generator: a runtime's [`Server`]
/// or the floor ([`crate::serve::floor::Floor`]).
pub trait Serving {
    /// The names of the process's threads that serve it beside those its
    /// start created ([`EchoRuntime::SHARED_THREADS`]).
    const SHARED_THREADS: &'static [&'static str] = &[];

    /// Where it listens.
    fn address(&self) -> SocketAddr;

    /// Stops it; the error it ended on, if any.
    fn stop(self) -> io::Result<()>;
}

impl<R: EchoRuntime> Serving for Server<R> {
    const SHARED_THREADS: &'static [&'static str] = R::SHARED_THREADS;

    fn address(&self) -> SocketAddr {
        Server::address(self)
    }

    fn stop(self) -> io::Result<()> {
        Server::stop(self)
    }
}

impl Serving for crate::serve::floor::Floor {
    fn address(&self) -> SocketAddr {
        crate::serve::floor::Floor::address(self)
    }

    fn stop(self) -> io::Result<()> {
        crate::serve::floor::Floor::stop(self)
    }
}

/// A runtime serving echo on a listener until [`Server::stop`].
pub struct Server<R: EchoRuntime> {
    runtime: R,
    address: SocketAddr,
    /// Dropped to end the accept loop.
    stop: Option<async_channel::Sender<()>>,
    accept_loop: Option<<R::Spawner as Spawner>::Task<io::Result<()>>>,
}

impl<R: EchoRuntime> Server<R> {
    /// Builds the runtime, binds the listener and spawns the accept loop,
    /// which spawns an echo task for each connection.
    pub fn start(workers: usize) -> io::Result<Server<R>> {
        Server::start_with(workers, |spawner: R::Spawner| {
            move |stream| spawner.spawn_detached(R::echo(stream))
        })
    }

    /// The same with another way to serve a connection than echo's (the
    /// HTTP lane's): `serve` is given the runtime's spawner and returns
    /// what the accept loop calls with each connection.
    pub fn start_with<S>(
        workers: usize,
        serve: impl FnOnce(R::Spawner) -> S,
    ) -> io::Result<Server<R>>
    where
        S: FnMut(StreamOf<R>) + Send + 'static,
    {
        let runtime = R::build_with_io(workers)?;
        let (stop, stopped) = async_channel::bounded(1);
        let spawner = runtime.spawner();
        let (address, listener) = runtime.bind()?;
        let accept_loop = spawner.spawn(accept_loop(listener, stopped, serve(spawner.clone())));
        Ok(Server {
            runtime,
            address,
            stop: Some(stop),
            accept_loop: Some(accept_loop),
        })
    }

    /// Where the server listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Ends the accept loop, waits for it and drops the runtime (which
    /// cancels any connection task still running); the accept loop's
    /// error, if it ended on one.
    pub fn stop(mut self) -> io::Result<()> {
        drop(self.stop.take());
        match self.accept_loop.take() {
            Some(accept_loop) => self.runtime.block_on(accept_loop),
            None => Ok(()),
        }
    }
}

/// Accepts connections and hands each to `serve` until `stop` closes (an
/// accept error ends it early, with that error).
async fn accept_loop<L: Accept>(
    listener: L,
    stop: async_channel::Receiver<()>,
    mut serve: impl FnMut(L::Stream) + Send,
) -> io::Result<()> {
    // `recv` fails once every sender is gone: that is the signal.
    let stopped = async {
        let _ = stop.recv().await;
        None
    };
    let mut stopped = std::pin::pin!(stopped);
    loop {
        let accepted = future::or(async { Some(listener.next().await) }, stopped.as_mut()).await;
        match accepted {
            Some(stream) => serve(stream?),
            None => return Ok(()),
        }
    }
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

impl EchoRuntime for Weft {
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

impl EchoRuntime for Tokio {
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

impl EchoRuntime for Smol {
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
