//! [`TcpSocket`]: a TCP socket not yet connected or listening, to set
//! options on before `connect` or `listen` (tokio's `TcpSocket`).
//!
//! The socket is a `socket2::Socket`, made non-blocking before `connect`
//! and `listen` (so one from [`TcpSocket::from_std_stream`] is too) and
//! registered with the reactor only by them: a `TcpSocket` itself needs no
//! runtime. `TcpStream::connect` and `TcpListener::bind` are built on it,
//! so there is one connect and one listen path.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use super::{TcpListener, TcpStream};
use crate::net::evented::{RuntimeRef, current_runtime};

/// A TCP socket before it connects or listens: set options on it, `bind`
/// it, then [`connect`](TcpSocket::connect) or
/// [`listen`](TcpSocket::listen).
///
/// ```
/// use weft::net::TcpSocket;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let server = TcpSocket::new_v4().unwrap();
///     server.set_reuseaddr(true).unwrap();
///     server.bind("127.0.0.1:0".parse().unwrap()).unwrap();
///     let listener = server.listen(128).unwrap();
///
///     let client = TcpSocket::new_v4().unwrap();
///     client.set_nodelay(true).unwrap();
///     let stream = client.connect(listener.local_addr().unwrap()).await.unwrap();
///     assert!(stream.nodelay().unwrap());
/// });
/// ```
pub struct TcpSocket {
    inner: Socket,
}

impl TcpSocket {
    /// A new IPv4 TCP socket (`AF_INET`).
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV4)
    }

    /// A new IPv6 TCP socket (`AF_INET6`).
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV6)
    }

    /// A new socket of `addr`'s family.
    pub(super) fn new_for_addr(addr: SocketAddr) -> io::Result<TcpSocket> {
        match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4(),
            SocketAddr::V6(_) => TcpSocket::new_v6(),
        }
    }

    /// `socket2` sets close-on-exec on the descriptor.
    fn new(domain: Domain) -> io::Result<TcpSocket> {
        Ok(TcpSocket {
            inner: Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?,
        })
    }

    /// Sets `SO_KEEPALIVE`: probes an idle connection.
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.inner.set_keepalive(keepalive)
    }

    /// Whether `SO_KEEPALIVE` is set.
    pub fn keepalive(&self) -> io::Result<bool> {
        self.inner.keepalive()
    }

    /// Sets `SO_REUSEADDR`: bind to an address whose earlier connections
    /// linger in `TIME_WAIT` (`TcpListener::bind` sets it).
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.inner.set_reuse_address(reuseaddr)
    }

    /// Whether `SO_REUSEADDR` is set.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.inner.reuse_address()
    }

    /// Sets `SO_REUSEPORT`: several sockets may bind one address and
    /// port (Linux spreads connections between their listeners).
    #[cfg(not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin")))]
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.inner.set_reuse_port(reuseport)
    }

    /// Whether `SO_REUSEPORT` is set.
    #[cfg(not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin")))]
    pub fn reuseport(&self) -> io::Result<bool> {
        self.inner.reuse_port()
    }

    /// Sets `SO_SNDBUF`. The kernel may round it (Linux doubles it, for
    /// its own bookkeeping): read it back with `send_buffer_size`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_send_buffer_size(widen(size))
    }

    /// `SO_SNDBUF`, as the kernel keeps it.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.inner.send_buffer_size().map(narrow)
    }

    /// Sets `SO_RCVBUF` (rounded by the kernel, as `SO_SNDBUF`).
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_recv_buffer_size(widen(size))
    }

    /// `SO_RCVBUF`, as the kernel keeps it.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.inner.recv_buffer_size().map(narrow)
    }

    /// Sets `SO_LINGER`. Deprecated as in tokio: a non-zero linger makes
    /// dropping the stream block the thread (a worker) until the data is
    /// sent or the time is up; `TcpStream::set_zero_linger` is the use
    /// that does not block.
    #[deprecated = "`SO_LINGER` makes dropping the socket block the thread"]
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        self.inner.set_linger(dur)
    }

    /// Sets a zero `SO_LINGER`: closing drops unsent data and resets the
    /// connection, without blocking.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.inner.set_linger(Some(Duration::ZERO))
    }

    /// `SO_LINGER` (`None`: not set).
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        self.inner.linger()
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes); the stream
    /// `connect` returns keeps it.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_tcp_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.tcp_nodelay()
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an IP socket address"))
    }

    /// The pending socket error (`SO_ERROR`), cleared by reading it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Binds to `addr` (port 0: one the kernel picks).
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.inner.bind(&addr.into())
    }

    /// Connects to `addr` without blocking a worker: starts the connect,
    /// waits until the socket is writable, then reports the connect's
    /// error (`take_error`: a refused connection is
    /// `ErrorKind::ConnectionRefused`).
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (looked up at the first poll).
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        let shared = current_runtime("TcpSocket::connect");
        self.connect_in(addr, shared).await
    }

    /// `connect`, registering the stream with `shared`.
    pub(super) async fn connect_in(
        self,
        addr: SocketAddr,
        shared: RuntimeRef,
    ) -> io::Result<TcpStream> {
        self.inner.set_nonblocking(true)?;
        match self.inner.connect(&addr.into()) {
            Ok(()) => {}
            Err(error) if error.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(error) => return Err(error),
        }
        let stream = mio::net::TcpStream::from_std(self.inner.into());
        let stream = TcpStream::from_mio(stream, shared)?;
        stream.finish_connect().await?;
        Ok(stream)
    }

    /// Listens with a queue of `backlog` connections not yet accepted (the
    /// kernel caps it at `net.core.somaxconn`).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        let shared = current_runtime("TcpSocket::listen");
        self.listen_in(backlog, shared)
    }

    /// `listen`, registering the listener with `shared`.
    pub(super) fn listen_in(self, backlog: u32, shared: RuntimeRef) -> io::Result<TcpListener> {
        self.inner.set_nonblocking(true)?;
        self.inner
            .listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
        TcpListener::with_runtime(self.inner.into(), shared)
    }

    /// A socket from a `std` stream that has not connected (made, say,
    /// with `socket2` to set an option this type lacks).
    pub fn from_std_stream(std_stream: std::net::TcpStream) -> TcpSocket {
        TcpSocket {
            inner: Socket::from(OwnedFd::from(std_stream)),
        }
    }
}

/// `IP_TOS` (the systems `socket2` has it on).
#[cfg(not(any(
    target_os = "fuchsia",
    target_os = "redox",
    target_os = "solaris",
    target_os = "haiku"
)))]
impl TcpSocket {
    /// `IP_TOS`, the type-of-service byte of IPv4 packets sent.
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.inner.tos_v4()
    }

    /// Sets `IP_TOS` (IPv4 sockets).
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.inner.set_tos_v4(tos)
    }

    /// `IP_TOS`: the old name of [`tos_v4`](Self::tos_v4), deprecated as
    /// in tokio.
    #[deprecated(note = "`IP_TOS` is IPv4's: use `tos_v4`")]
    pub fn tos(&self) -> io::Result<u32> {
        self.tos_v4()
    }

    /// Sets `IP_TOS`: the old name of [`set_tos_v4`](Self::set_tos_v4),
    /// deprecated as in tokio.
    #[deprecated(note = "`IP_TOS` is IPv4's: use `set_tos_v4`")]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        self.set_tos_v4(tos)
    }
}

/// `IPV6_TCLASS` (the systems `socket2` has it on).
#[cfg(any(
    target_os = "android",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "fuchsia",
    target_os = "linux",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "illumos"
))]
impl TcpSocket {
    /// `IPV6_TCLASS`, the traffic class of IPv6 packets sent.
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.inner.tclass_v6()
    }

    /// Sets `IPV6_TCLASS` (IPv6 sockets).
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.inner.set_tclass_v6(tclass)
    }
}

/// `SO_BINDTODEVICE` (the systems that have it).
#[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
impl TcpSocket {
    /// The interface `SO_BINDTODEVICE` binds the socket to (`None`: any).
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        self.inner.device()
    }

    /// Sets `SO_BINDTODEVICE`: only packets of this interface (a name such
    /// as `b"lo"`; `None` removes the binding). Needs `CAP_NET_RAW` on
    /// older kernels.
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.inner.bind_device(interface)
    }
}

/// A `u32` buffer size as `socket2`'s `usize`.
fn widen(size: u32) -> usize {
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// The kernel's `usize` buffer size as tokio's `u32` (saturating).
fn narrow(size: usize) -> u32 {
    u32::try_from(size).unwrap_or(u32::MAX)
}

impl fmt::Debug for TcpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpSocket")
            .field("fd", &self.inner.as_raw_fd())
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

impl AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl AsFd for TcpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

impl FromRawFd for TcpSocket {
    /// Takes ownership of `fd`, a TCP socket.
    ///
    /// # Safety
    ///
    /// `fd` is an open socket descriptor that nothing else owns (it is
    /// closed when the `TcpSocket` is dropped).
    unsafe fn from_raw_fd(fd: RawFd) -> TcpSocket {
        TcpSocket {
            // SAFETY: the caller's promise, passed on: `fd` is an open
            // socket that nothing else owns.
            inner: unsafe { Socket::from_raw_fd(fd) },
        }
    }
}

impl IntoRawFd for TcpSocket {
    fn into_raw_fd(self) -> RawFd {
        self.inner.into_raw_fd()
    }
}
