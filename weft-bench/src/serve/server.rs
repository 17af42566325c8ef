//! A runtime's server: one accept loop on a [`NetRuntime`]'s listener
//! that hands each connection to a task of its own (an echo by default,
//! hyper's HTTP/1 connection in the HTTP suite), until [`Server::stop`].
//! The accept loop ends when the server's stop channel closes ([`stop`]
//! waits for it), so no task of the server outlives the run: smol's
//! accept loop holds its executor, and one left in it would keep the
//! executor, and the listener's socket, alive after the runtime is
//! dropped. The connection tasks end when the load generator closes its
//! connections. [`Serving`] is what the suites run under their generator:
//! a runtime's server or the floor.
//!
//! [`stop`]: Server::stop

use std::io;
use std::net::SocketAddr;

use futures_lite::future;

use crate::common::runtimes::Spawner;
use crate::common::runtimes::net::{Accept, NetRuntime, StreamOf};

/// A server the suites run under their generator: a runtime's [`Server`]
/// or the floor ([`crate::serve::floor::Floor`]).
pub trait Serving {
    /// The names of the process's threads that serve it beside those its
    /// start created ([`NetRuntime::SHARED_THREADS`]).
    const SHARED_THREADS: &'static [&'static str] = &[];

    /// Where it listens.
    fn address(&self) -> SocketAddr;

    /// Stops it; the error it ended on, if any.
    fn stop(self) -> io::Result<()>;
}

impl<R: NetRuntime> Serving for Server<R> {
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
pub struct Server<R: NetRuntime> {
    runtime: R,
    address: SocketAddr,
    /// Dropped to end the accept loop.
    stop: Option<async_channel::Sender<()>>,
    accept_loop: Option<<R::Spawner as Spawner>::Task<io::Result<()>>>,
}

impl<R: NetRuntime> Server<R> {
    /// Builds the runtime, binds the listener and spawns the accept loop,
    /// which spawns an echo task for each connection.
    pub fn start(workers: usize) -> io::Result<Server<R>> {
        Server::start_with(workers, |spawner: R::Spawner| {
            move |stream| spawner.spawn_detached(R::echo(stream))
        })
    }

    /// The same with another way to serve a connection than echo's (the
    /// HTTP suite's): `serve` is given the runtime's spawner and returns
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
