//! [`TcpListener`].

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll, ready};

use super::{TcpSocket, TcpStream};
use crate::net::ToSocketAddrs;
use crate::net::addr::try_each;
use crate::net::evented::{Direction, PollEvented, RuntimeRef, current_runtime};

/// A TCP socket listening for connections.
///
/// ```
/// use weft::net::{TcpListener, TcpStream};
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
///     let addr = listener.local_addr().unwrap();
///     let connect = weft::spawn(async move { TcpStream::connect(addr).await });
///     let (stream, peer) = listener.accept().await.unwrap();
///     let client = connect.await.unwrap().unwrap();
///     assert_eq!(peer, client.local_addr().unwrap());
///     assert_eq!(stream.peer_addr().unwrap(), peer);
/// });
/// ```
pub struct TcpListener {
    io: PollEvented<mio::net::TcpListener>,
}

/// The backlog of `TcpListener::bind` (tokio's and mio's).
const BACKLOG: u32 = 1024;

impl TcpListener {
    /// Binds to `addr` (`SO_REUSEADDR` set, as `std` and tokio do), trying
    /// each resolved address until one succeeds, and listens.
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (`rt.block_on(bind(..))`
    /// works, as with tokio: the runtime is looked up at the first poll).
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        let shared = current_runtime("TcpListener::bind");
        try_each(addr, |addr| {
            let shared = shared.clone();
            async move {
                let socket = TcpSocket::new_for_addr(addr)?;
                socket.set_reuseaddr(true)?;
                socket.bind(addr)?;
                socket.listen_in(BACKLOG, shared)
            }
        })
        .await
    }

    /// Registers a listening `std` socket with `shared`'s reactor.
    pub(super) fn with_runtime(
        listener: std::net::TcpListener,
        shared: RuntimeRef,
    ) -> io::Result<TcpListener> {
        Ok(TcpListener {
            io: PollEvented::with_runtime(mio::net::TcpListener::from_std(listener), shared)?,
        })
    }

    /// Waits for a connection; returns it and the peer's address.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, peer) = self
            .io
            .async_io(Direction::Read, |listener| listener.accept())
            .await?;
        Ok((self.adopt(stream)?, peer))
    }

    /// `accept` in `poll` form (only the last task to call it is woken).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let (stream, peer) = ready!(self.io.poll_io(cx, Direction::Read, |l| l.accept()))?;
        Poll::Ready(Ok((self.adopt(stream)?, peer)))
    }

    /// An accepted connection, registered with this listener's runtime,
    /// assumed readable and writable (`evented::assume_accepted`).
    fn adopt(&self, stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        let stream = TcpStream::from_mio(stream, self.io.runtime().clone())?;
        crate::net::evented::assume_accepted(&stream.io);
        Ok(stream)
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The IP time-to-live of accepted sockets.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    /// Sets the IP time-to-live.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }
}

crate::net::evented::std_conversions!(TcpListener, std::net::TcpListener, mio::net::TcpListener);
crate::net::evented::impl_fd!(TcpListener);

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}
