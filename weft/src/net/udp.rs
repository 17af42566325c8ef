//! [`UdpSocket`].

use std::fmt;
use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use socket2::SockRef;

use super::ToSocketAddrs;
use super::addr::{resolve, try_each};
use super::evented::{Datagram, Direction, PollEvented, current_runtime};

/// A UDP socket. Every method takes `&self`: share it (`Arc`) between a
/// sending and a receiving task, or several of each; every waiting task is
/// woken when the socket becomes ready.
///
/// ```
/// use weft::net::UdpSocket;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
///     let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
///     a.send_to(b"ping", b.local_addr().unwrap()).await.unwrap();
///     let mut buf = [0; 16];
///     let (n, from) = b.recv_from(&mut buf).await.unwrap();
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr().unwrap()));
/// });
/// ```
pub struct UdpSocket {
    io: PollEvented<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds to `addr`, trying each resolved address until one succeeds.
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (looked up at the first poll).
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        let shared = current_runtime("UdpSocket::bind");
        try_each(addr, |addr| {
            let shared = shared.clone();
            async move {
                let socket = mio::net::UdpSocket::bind(addr)?;
                Ok(UdpSocket {
                    io: PollEvented::with_runtime(socket, shared)?,
                })
            }
        })
        .await
    }

    /// Sets the default peer of `send` and `recv` (and filters what `recv`
    /// receives to it): the first resolved address that connects.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let socket = self.io.get_ref();
        try_each(addr, |addr| async move { socket.connect(addr) }).await
    }

    super::evented::datagram_methods!(SocketAddr);

    /// Sends to `target` (resolved first; the first address is used).
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddrs) -> io::Result<usize> {
        let target = *resolve(target).await?.first().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to send data to")
        })?;
        self.io
            .async_io(Direction::Write, |socket| socket.send_to(buf, target))
            .await
    }

    /// `send_to` in `poll` form (only the last caller's waker is kept).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(cx, Direction::Write, |socket| socket.send_to(buf, target))
    }

    /// Sends to `target` without waiting.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .try_io(Direction::Write, |socket| socket.send_to(buf, target))
    }

    /// Receives a datagram from the connected peer without removing it
    /// from the queue.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .async_io(Direction::Read, |socket| socket.peek(buf))
            .await
    }

    /// `peek` without waiting.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_io(Direction::Read, |socket| socket.peek(buf))
    }

    /// `peek` in `poll` form, into tokio's `ReadBuf` (only the last
    /// caller's waker is kept). With the `tokio-io` feature.
    #[cfg(feature = "tokio-io")]
    pub fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        super::evented::poll_read_buf(&self.io, cx, buf, |socket, unfilled| {
            Ok((socket.peek(unfilled)?, ()))
        })
    }

    /// Receives a datagram and its sender's address without removing it
    /// from the queue.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .async_io(Direction::Read, |socket| socket.peek_from(buf))
            .await
    }

    /// `peek_from` without waiting.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .try_io(Direction::Read, |socket| socket.peek_from(buf))
    }

    /// `peek_from` in `poll` form, into tokio's `ReadBuf` (only the last
    /// caller's waker is kept). With the `tokio-io` feature.
    #[cfg(feature = "tokio-io")]
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        super::evented::poll_read_buf(&self.io, cx, buf, |socket, unfilled| {
            socket.peek_from(unfilled)
        })
    }

    /// The sender of the next datagram, which stays queued.
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        self.io.async_io(Direction::Read, peek_sender).await
    }

    /// `peek_sender` in `poll` form (only the last caller's waker is
    /// kept).
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.io.poll_io(cx, Direction::Read, peek_sender)
    }

    /// `peek_sender` without waiting.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.io.try_io(Direction::Read, peek_sender)
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The connected peer's address (`NotConnected` before `connect`).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Whether broadcast sends are allowed.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get_ref().broadcast()
    }

    /// Allows or forbids broadcast sends.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_broadcast(on)
    }

    /// The IP time-to-live.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    /// Sets the IP time-to-live.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }
}

/// Socket options beyond the common ones: multicast, IP type of service
/// and traffic class, the bound device. Each is one `setsockopt` or
/// `getsockopt`; the OS's error is returned as it is.
impl UdpSocket {
    fn sock(&self) -> SockRef<'_> {
        SockRef::from(self.io.get_ref())
    }

    /// Whether multicast datagrams sent on IPv4 loop back to this host.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.sock().multicast_loop_v4()
    }

    /// Sets whether IPv4 multicast datagrams loop back.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.sock().set_multicast_loop_v4(on)
    }

    /// The time-to-live of IPv4 multicast datagrams.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.sock().multicast_ttl_v4()
    }

    /// Sets the time-to-live of IPv4 multicast datagrams.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.sock().set_multicast_ttl_v4(ttl)
    }

    /// Whether multicast datagrams sent on IPv6 loop back to this host.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.sock().multicast_loop_v6()
    }

    /// Sets whether IPv6 multicast datagrams loop back.
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.sock().set_multicast_loop_v6(on)
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface whose
    /// address is `interface` (`UNSPECIFIED`: the OS picks).
    pub fn join_multicast_v4(
        &self,
        multiaddr: std::net::Ipv4Addr,
        interface: std::net::Ipv4Addr,
    ) -> io::Result<()> {
        self.sock().join_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on interface index
    /// `interface` (0: the OS picks).
    pub fn join_multicast_v6(
        &self,
        multiaddr: &std::net::Ipv6Addr,
        interface: u32,
    ) -> io::Result<()> {
        self.sock().join_multicast_v6(multiaddr, interface)
    }

    /// Leaves an IPv4 multicast group joined with `join_multicast_v4`.
    pub fn leave_multicast_v4(
        &self,
        multiaddr: std::net::Ipv4Addr,
        interface: std::net::Ipv4Addr,
    ) -> io::Result<()> {
        self.sock().leave_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves an IPv6 multicast group joined with `join_multicast_v6`.
    pub fn leave_multicast_v6(
        &self,
        multiaddr: &std::net::Ipv6Addr,
        interface: u32,
    ) -> io::Result<()> {
        self.sock().leave_multicast_v6(multiaddr, interface)
    }

    /// The IPv4 type-of-service byte of the datagrams sent (`IP_TOS`).
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.sock().tos_v4()
    }

    /// Sets the IPv4 type-of-service byte (`IP_TOS`).
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.sock().set_tos_v4(tos)
    }

    /// tokio's older name of [`tos_v4`](UdpSocket::tos_v4).
    #[deprecated(note = "use `tos_v4`")]
    pub fn tos(&self) -> io::Result<u32> {
        self.tos_v4()
    }

    /// tokio's older name of [`set_tos_v4`](UdpSocket::set_tos_v4).
    #[deprecated(note = "use `set_tos_v4`")]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        self.set_tos_v4(tos)
    }

    /// The IPv6 traffic class of the datagrams sent (`IPV6_TCLASS`).
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.sock().tclass_v6()
    }

    /// Sets the IPv6 traffic class (`IPV6_TCLASS`).
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.sock().set_tclass_v6(tclass)
    }

    /// The network device the socket is bound to (`SO_BINDTODEVICE`), if
    /// any.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        self.sock().device()
    }

    /// Binds the socket to a network device by name (`None`: unbinds);
    /// needs `CAP_NET_RAW`.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.sock().bind_device(interface)
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

super::evented::std_conversions!(UdpSocket, std::net::UdpSocket, mio::net::UdpSocket);
super::evented::impl_fd!(UdpSocket);

// SAFETY: `recv_from_uninit` is `socket2`'s `recv_from`, `recvfrom(2)`
// into `buf`: the kernel writes the datagram at its start and returns the
// count.
unsafe impl Datagram for mio::net::UdpSocket {
    type Addr = SocketAddr;

    fn send_one(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }

    fn recv_one(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf)
    }

    fn recv_from_one(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.recv_from(buf)
    }

    fn recv_from_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = SockRef::from(self).recv_from(buf)?;
        Ok((n, inet(&from)?))
    }
}

/// The sender of the datagram at the head of `socket`'s queue.
fn peek_sender(socket: &mio::net::UdpSocket) -> io::Result<SocketAddr> {
    inet(&SockRef::from(socket).peek_sender()?)
}

/// A UDP sender's address as an IP one (never anything else on an IP
/// socket).
fn inet(addr: &socket2::SockAddr) -> io::Result<SocketAddr> {
    addr.as_socket()
        .ok_or_else(|| io::Error::other("a UDP socket received from a non-IP address"))
}
