//! [`UdpSocket`].

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use super::ToSocketAddrs;
use super::addr::{resolve, try_each};
use crate::runtime::{Direction, PollEvented};

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
        let shared = crate::runtime::current_runtime("UdpSocket::bind");
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

    /// Registers a `std` socket with the current runtime (it is made
    /// non-blocking).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: PollEvented::new(mio::net::UdpSocket::from_std(socket), "UdpSocket::from_std")?,
        })
    }

    /// Deregisters the socket and returns it as a `std` socket (still
    /// non-blocking).
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        let socket = self.io.into_inner();
        Ok(std::net::UdpSocket::from(std::os::fd::OwnedFd::from(
            socket,
        )))
    }

    /// Sets the default peer of `send` and `recv` (and filters what `recv`
    /// receives to it): the first resolved address that connects.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let socket = self.io.get_ref();
        try_each(addr, |addr| async move { socket.connect(addr) }).await
    }

    /// Sends to the connected peer; returns the bytes sent.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .async_io(Direction::Write, |socket| socket.send(buf))
            .await
    }

    /// Receives from the connected peer (a datagram longer than `buf` is
    /// cut).
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .async_io(Direction::Read, |socket| socket.recv(buf))
            .await
    }

    /// Sends to `target` (resolved first; the first address is used).
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddrs) -> io::Result<usize> {
        let target = *resolve(target).await?.first().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no addresses to send data to")
        })?;
        self.io
            .async_io(Direction::Write, |socket| socket.send_to(buf, target))
            .await
    }

    /// Receives a datagram and its sender's address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .async_io(Direction::Read, |socket| socket.recv_from(buf))
            .await
    }

    /// Receives a datagram without removing it from the queue.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .async_io(Direction::Read, |socket| socket.peek_from(buf))
            .await
    }

    /// Sends without waiting: `WouldBlock` if the socket is not writable.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_io(Direction::Write, |socket| socket.send(buf))
    }

    /// Receives without waiting: `WouldBlock` if nothing is queued.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_io(Direction::Read, |socket| socket.recv(buf))
    }

    /// Sends to `target` without waiting.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .try_io(Direction::Write, |socket| socket.send_to(buf, target))
    }

    /// Receives a datagram and its sender without waiting.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .try_io(Direction::Read, |socket| socket.recv_from(buf))
    }

    /// Waits until a datagram can be received.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.ready(Direction::Read).await.map(drop)
    }

    /// Waits until a datagram can be sent.
    pub async fn writable(&self) -> io::Result<()> {
        // Made `Ok(())` (the mutation run), every test passes: a Linux UDP
        // socket on loopback is writable at once (a datagram that finds
        // the receiver full is dropped, the sender never waits), so no
        // test can make it wait.
        self.io.ready(Direction::Write).await.map(drop)
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

    /// The pending socket error, cleared by reading it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.get_ref().as_raw_fd()
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}
