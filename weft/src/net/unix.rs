//! [`UnixListener`], [`UnixStream`] and [`UnixDatagram`]: Unix-domain
//! sockets. Paths are bound and connected synchronously in the kernel (no
//! lookup), so only waiting for a peer is async.

use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::runtime::{Direction, PollEvented};

/// A Unix-domain socket listening for connections.
///
/// ```
/// use weft::net::{UnixListener, UnixStream};
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let path = std::env::temp_dir().join(format!("weft-doc-{}.sock", std::process::id()));
///     let _ = std::fs::remove_file(&path);
///     let listener = UnixListener::bind(&path).unwrap();
///     let client = weft::spawn({
///         let path = path.clone();
///         async move { UnixStream::connect(path).await }
///     });
///     let (_stream, _addr) = listener.accept().await.unwrap();
///     client.await.unwrap().unwrap();
///     std::fs::remove_file(&path).unwrap();
/// });
/// ```
pub struct UnixListener {
    io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds to `path` (which must not exist) and listens. Not async: the
    /// kernel does it at once (as tokio's).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        let listener = mio::net::UnixListener::bind(path)?;
        Ok(UnixListener {
            io: PollEvented::new(listener, "UnixListener::bind")?,
        })
    }

    /// Waits for a connection.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .async_io(Direction::Read, |listener| listener.accept())
            .await?;
        let stream = UnixStream {
            io: PollEvented::with_runtime(stream, self.io.runtime().clone())?,
        };
        Ok((stream, addr))
    }

    /// Registers a `std` listener with the current runtime (made
    /// non-blocking).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            io: PollEvented::new(
                mio::net::UnixListener::from_std(listener),
                "UnixListener::from_std",
            )?,
        })
    }

    /// Deregisters the listener and returns it as a `std` one (still
    /// non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        let listener = self.io.into_inner();
        Ok(std::os::unix::net::UnixListener::from(
            std::os::fd::OwnedFd::from(listener),
        ))
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
}

/// A Unix-domain stream socket; reads and writes through the
/// `futures_io` traits (and tokio's with `tokio-io`).
pub struct UnixStream {
    pub(super) io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    /// Connects to the socket at `path`.
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (looked up at the first poll).
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let shared = crate::runtime::current_runtime("UnixStream::connect");
        let stream = UnixStream {
            io: PollEvented::with_runtime(mio::net::UnixStream::connect(path)?, shared)?,
        };
        stream.io.ready(Direction::Write).await?;
        if let Some(error) = stream.io.get_ref().take_error()? {
            return Err(error);
        }
        Ok(stream)
    }

    /// A connected pair of streams.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((
            UnixStream {
                io: PollEvented::new(a, "UnixStream::pair")?,
            },
            UnixStream {
                io: PollEvented::new(b, "UnixStream::pair")?,
            },
        ))
    }

    /// Registers a `std` stream with the current runtime (made
    /// non-blocking).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        Ok(UnixStream {
            io: PollEvented::new(
                mio::net::UnixStream::from_std(stream),
                "UnixStream::from_std",
            )?,
        })
    }

    /// Deregisters the stream and returns it as a `std` one (still
    /// non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        let stream = self.io.into_inner();
        Ok(std::os::unix::net::UnixStream::from(
            std::os::fd::OwnedFd::from(stream),
        ))
    }

    /// This end's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Shuts down the read side, the write side, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// Borrowed read and write halves, usable from two futures of one task
    /// at once; no allocation.
    pub fn split(
        &mut self,
    ) -> (
        super::unix_split::ReadHalf<'_>,
        super::unix_split::WriteHalf<'_>,
    ) {
        super::unix_split::split(self)
    }

    /// Owned halves, movable to two tasks;
    /// [`OwnedReadHalf::reunite`](super::unix_split::OwnedReadHalf::reunite)
    /// puts them back together.
    pub fn into_split(
        self,
    ) -> (
        super::unix_split::OwnedReadHalf,
        super::unix_split::OwnedWriteHalf,
    ) {
        super::unix_split::into_split(self)
    }

    /// Waits until the stream is readable.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.ready(Direction::Read).await.map(drop)
    }

    /// Waits until the stream is writable.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.ready(Direction::Write).await.map(drop)
    }

    /// Reads what is there without waiting.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::Read;
        self.io
            .try_io(Direction::Read, |stream| (&*stream).read(buf))
    }

    /// Writes what fits without waiting.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        use std::io::Write;
        self.io
            .try_io(Direction::Write, |stream| (&*stream).write(buf))
    }
}

/// A Unix-domain datagram socket.
pub struct UnixDatagram {
    io: PollEvented<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    /// Binds to `path`.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let socket = mio::net::UnixDatagram::bind(path)?;
        Ok(UnixDatagram {
            io: PollEvented::new(socket, "UnixDatagram::bind")?,
        })
    }

    /// A socket bound to no address.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn unbound() -> io::Result<UnixDatagram> {
        let socket = mio::net::UnixDatagram::unbound()?;
        Ok(UnixDatagram {
            io: PollEvented::new(socket, "UnixDatagram::unbound")?,
        })
    }

    /// A connected pair of sockets.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((
            UnixDatagram {
                io: PollEvented::new(a, "UnixDatagram::pair")?,
            },
            UnixDatagram {
                io: PollEvented::new(b, "UnixDatagram::pair")?,
            },
        ))
    }

    /// Registers a `std` socket with the current runtime (made
    /// non-blocking).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        Ok(UnixDatagram {
            io: PollEvented::new(
                mio::net::UnixDatagram::from_std(socket),
                "UnixDatagram::from_std",
            )?,
        })
    }

    /// Sets the default peer of `send` and `recv`.
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.io.get_ref().connect(path)
    }

    /// Sends to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .async_io(Direction::Write, |socket| socket.send(buf))
            .await
    }

    /// Receives from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .async_io(Direction::Read, |socket| socket.recv(buf))
            .await
    }

    /// Sends to the socket at `path`.
    pub async fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.io
            .async_io(Direction::Write, |socket| socket.send_to(buf, path))
            .await
    }

    /// Receives a datagram and its sender's address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .async_io(Direction::Read, |socket| socket.recv_from(buf))
            .await
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }
}

macro_rules! fd_and_debug {
    ($($ty:ident),*) => {$(
        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.io.get_ref().as_fd()
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("fd", &self.as_raw_fd())
                    .finish()
            }
        }
    )*};
}

fd_and_debug!(UnixListener, UnixStream, UnixDatagram);

super::stream_io::impl_stream_io!(UnixStream, |this| &this.io);
