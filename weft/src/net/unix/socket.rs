//! [`UnixSocket`]: a Unix-domain socket not yet listening, connected or
//! made a datagram socket, to bind first (tokio's `UnixSocket`).
//!
//! Invariant: the socket is non-blocking from its creation (`new_*` and
//! `from_raw_fd` set it), so `connect` never blocks the thread; its kind
//! (stream or datagram) is the kernel's, read back when a method needs it.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::Path;

use socket2::{Domain, SockAddr, Socket, Type};

use super::datagram::UnixDatagram;
use super::listener::UnixListener;
use super::stream::UnixStream;

/// A Unix-domain socket before it listens, connects or becomes a
/// datagram socket: made with [`new_stream`](UnixSocket::new_stream) or
/// [`new_datagram`](UnixSocket::new_datagram), bound with
/// [`bind`](UnixSocket::bind), then turned into a [`UnixListener`],
/// [`UnixStream`] or [`UnixDatagram`]. Calling a stream's method on a
/// datagram socket (or the reverse) is an error saying so.
///
/// ```
/// use weft::net::UnixSocket;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let path = std::env::temp_dir().join(format!("weft-doc-socket-{}.sock", std::process::id()));
///     let _ = std::fs::remove_file(&path);
///     let socket = UnixSocket::new_stream().unwrap();
///     socket.bind(&path).unwrap();
///     let listener = socket.listen(16).unwrap();
///     let client = UnixSocket::new_stream().unwrap().connect(&path).await.unwrap();
///     let (server, _) = listener.accept().await.unwrap();
///     client.try_write(b"hi").unwrap();
///     server.readable().await.unwrap();
///     let mut buf = [0; 2];
///     assert_eq!(server.try_read(&mut buf).unwrap(), 2);
///     std::fs::remove_file(&path).unwrap();
/// });
/// ```
pub struct UnixSocket {
    inner: Socket,
}

impl UnixSocket {
    /// A new datagram socket (`SOCK_DGRAM`).
    pub fn new_datagram() -> io::Result<UnixSocket> {
        UnixSocket::new(Type::DGRAM)
    }

    /// A new stream socket (`SOCK_STREAM`).
    pub fn new_stream() -> io::Result<UnixSocket> {
        UnixSocket::new(Type::STREAM)
    }

    /// `socket2` sets close-on-exec on the descriptor.
    fn new(kind: Type) -> io::Result<UnixSocket> {
        let inner = Socket::new(Domain::UNIX, kind, None)?;
        inner.set_nonblocking(true)?;
        Ok(UnixSocket { inner })
    }

    /// Binds to `path` (on Linux `"\0name"` is `name` in the abstract
    /// namespace).
    pub fn bind(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.inner.bind(&SockAddr::unix(path)?)
    }

    /// Listens, with a queue of `backlog` connections not yet accepted;
    /// an error on a datagram socket.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        self.refuse(Type::DGRAM, "listen cannot be called on a datagram socket")?;
        self.inner
            .listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
        UnixListener::from_std(OwnedFd::from(self.inner).into())
    }

    /// Connects to the socket at `path`; an error on a datagram socket
    /// (use [`datagram`](UnixSocket::datagram), then its `connect`).
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context.
    pub async fn connect(self, path: impl AsRef<Path>) -> io::Result<UnixStream> {
        self.refuse(Type::DGRAM, "connect cannot be called on a datagram socket")?;
        match self.inner.connect(&SockAddr::unix(path)?) {
            Ok(()) => {}
            Err(error) if error.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(error) => return Err(error),
        }
        let stream = mio::net::UnixStream::from_std(OwnedFd::from(self.inner).into());
        UnixStream::finish_connect(stream, "UnixSocket::connect").await
    }

    /// The datagram socket; an error on a stream socket.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        self.refuse(Type::STREAM, "datagram cannot be called on a stream socket")?;
        UnixDatagram::from_std(OwnedFd::from(self.inner).into())
    }

    /// An error saying `message` if the socket is of kind `kind`.
    fn refuse(&self, kind: Type, message: &'static str) -> io::Result<()> {
        if self.inner.r#type()? == kind {
            return Err(io::Error::other(message));
        }
        Ok(())
    }
}

impl AsRawFd for UnixSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl AsFd for UnixSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

impl FromRawFd for UnixSocket {
    /// Takes `fd` (made non-blocking here, as `new_*` makes theirs).
    ///
    /// # Safety
    ///
    /// `fd` is an open Unix-domain socket the caller owns and gives away.
    unsafe fn from_raw_fd(fd: RawFd) -> UnixSocket {
        // SAFETY: the caller's promise, passed on unchanged.
        let inner = unsafe { Socket::from_raw_fd(fd) };
        // A socket descriptor takes `O_NONBLOCK`; were it refused, every
        // method would still work, only `connect` could block.
        let _ = inner.set_nonblocking(true);
        UnixSocket { inner }
    }
}

impl IntoRawFd for UnixSocket {
    fn into_raw_fd(self) -> RawFd {
        self.inner.into_raw_fd()
    }
}

impl fmt::Debug for UnixSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixSocket")
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}
