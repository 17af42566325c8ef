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
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdTcpListener};

use futures_lite::future;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};

use crate::runtimes::{BenchRuntime, Smol, Spawner, Tokio, Tuning, Weft};

/// The most a connection task reads at once (a 4 KiB message fits).
pub const BUFFER_BYTES: usize = 8 * 1024;

/// The address every server binds: loopback, any free port.
pub(crate) const LOOPBACK: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// A runtime that can serve echo.
pub trait EchoRuntime: BenchRuntime + 'static {
    /// The names of the runtime's threads that serve every server of the
    /// process rather than one (async-io's reactor thread for smol): a
    /// server's counters count them too.
    const SHARED_THREADS: &'static [&'static str] = &[];

    /// Starts the runtime with `workers` worker threads and its I/O driver.
    fn build_with_io(workers: usize) -> io::Result<Self>;

    /// Binds a listener on loopback and returns its address and the accept
    /// loop to spawn: it accepts connections, spawns an echo task for each
    /// through `spawner`, and returns when `stop` is closed (an accept
    /// error ends it early, with that error).
    fn listen(
        &self,
        spawner: Self::Spawner,
        stop: async_channel::Receiver<()>,
    ) -> io::Result<(
        SocketAddr,
        impl Future<Output = io::Result<()>> + Send + 'static + use<Self>,
    )>;
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
    /// Builds the runtime, binds the listener and spawns the accept loop.
    pub fn start(workers: usize) -> io::Result<Server<R>> {
        Server::start_with(workers, R::listen)
    }

    /// The same with another accept loop than echo's (the HTTP lane's):
    /// `listen` is called as [`EchoRuntime::listen`] is.
    pub fn start_with<L, F>(workers: usize, listen: L) -> io::Result<Server<R>>
    where
        L: FnOnce(&R, R::Spawner, async_channel::Receiver<()>) -> io::Result<(SocketAddr, F)>,
        F: Future<Output = io::Result<()>> + Send + 'static,
    {
        let runtime = R::build_with_io(workers)?;
        let (stop, stopped) = async_channel::bounded(1);
        let spawner = runtime.spawner();
        let (address, accept_loop) = listen(&runtime, spawner.clone(), stopped)?;
        let accept_loop = spawner.spawn(accept_loop);
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

/// The accept loop's next step: a connection, or the stop signal.
pub(crate) async fn accept_or_stop<T>(
    accept: impl Future<Output = io::Result<T>>,
    stop: &async_channel::Receiver<()>,
) -> Option<io::Result<T>> {
    // `recv` fails once every sender is gone: that is the signal.
    future::or(async { Some(accept.await) }, async {
        let _ = stop.recv().await;
        None
    })
    .await
}

/// Echoes a `futures_io` stream (weft's, async-io's) until EOF; a reset by
/// the peer ends it too.
async fn echo<S>(mut stream: S)
where
    S: futures_lite::AsyncRead + futures_lite::AsyncWrite + Unpin,
{
    let mut buffer = vec![0u8; BUFFER_BYTES];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                if stream.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The same for a tokio stream.
async fn echo_tokio(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut buffer = vec![0u8; BUFFER_BYTES];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                if stream.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        }
    }
}

impl EchoRuntime for Weft {
    fn build_with_io(workers: usize) -> io::Result<Self> {
        Weft::build(workers, Tuning::default())
    }

    fn listen(
        &self,
        spawner: Self::Spawner,
        stop: async_channel::Receiver<()>,
    ) -> io::Result<(
        SocketAddr,
        impl Future<Output = io::Result<()>> + Send + 'static + use<>,
    )> {
        // `bind` looks for the runtime when it is called, not when its
        // future is first polled (tokio's is an `async fn`): call it inside.
        let listener = self.block_on(async { weft::net::TcpListener::bind(LOOPBACK).await })?;
        let address = listener.local_addr()?;
        let accept_loop = async move {
            while let Some(accepted) = accept_or_stop(listener.accept(), &stop).await {
                let (stream, _) = accepted?;
                stream.set_nodelay(true)?;
                spawner.spawn_detached(echo(stream));
            }
            Ok(())
        };
        Ok((address, accept_loop))
    }
}

impl EchoRuntime for Tokio {
    fn build_with_io(workers: usize) -> io::Result<Self> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_io()
            .build()
            .map(Tokio)
    }

    fn listen(
        &self,
        spawner: Self::Spawner,
        stop: async_channel::Receiver<()>,
    ) -> io::Result<(
        SocketAddr,
        impl Future<Output = io::Result<()>> + Send + 'static + use<>,
    )> {
        let listener = self.block_on(tokio::net::TcpListener::bind(LOOPBACK))?;
        let address = listener.local_addr()?;
        let accept_loop = async move {
            while let Some(accepted) = accept_or_stop(listener.accept(), &stop).await {
                let (stream, _) = accepted?;
                stream.set_nodelay(true)?;
                spawner.spawn_detached(echo_tokio(stream));
            }
            Ok(())
        };
        Ok((address, accept_loop))
    }
}

impl EchoRuntime for Smol {
    const SHARED_THREADS: &'static [&'static str] = &["async-io"];

    fn build_with_io(workers: usize) -> io::Result<Self> {
        Smol::build(workers, Tuning::default())
    }

    fn listen(
        &self,
        spawner: Self::Spawner,
        stop: async_channel::Receiver<()>,
    ) -> io::Result<(
        SocketAddr,
        impl Future<Output = io::Result<()>> + Send + 'static + use<>,
    )> {
        let listener = async_io::Async::<StdTcpListener>::bind(LOOPBACK)?;
        let address = listener.get_ref().local_addr()?;
        let accept_loop = async move {
            while let Some(accepted) = accept_or_stop(listener.accept(), &stop).await {
                let (stream, _) = accepted?;
                stream.get_ref().set_nodelay(true)?;
                spawner.spawn_detached(echo(stream));
            }
            Ok(())
        };
        Ok((address, accept_loop))
    }
}
