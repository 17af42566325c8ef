//! [`UnixDatagram`].
//!
//! Sending to an address `mio` cannot name (Linux's abstract namespace)
//! goes through a `std` view of the socket, which `mio` does not lend:
//! [`with_std`] makes one that never closes the descriptor.

use std::fmt;
use std::io;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;
use std::task::{Context, Poll};

use super::SocketAddr;
use super::addr::from_path;
use crate::net::evented::{Datagram, Direction, PollEvented, current_runtime, zeroed};

/// A Unix-domain datagram socket.
///
/// ```
/// use weft::net::UnixDatagram;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let (a, b) = UnixDatagram::pair().unwrap();
///     a.send(b"ping").await.unwrap();
///     let mut buf = [0; 8];
///     let n = b.recv(&mut buf).await.unwrap();
///     assert_eq!(&buf[..n], b"ping");
/// });
/// ```
pub struct UnixDatagram {
    io: PollEvented<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    /// Binds to `path` (on Linux `"\0name"` is `name` in the abstract
    /// namespace).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let addr = from_path(path.as_ref())?;
        let socket = mio::net::UnixDatagram::bind_addr(addr.as_std())?;
        UnixDatagram::register(socket, "UnixDatagram::bind")
    }

    /// A socket bound to no address.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn unbound() -> io::Result<UnixDatagram> {
        UnixDatagram::register(mio::net::UnixDatagram::unbound()?, "UnixDatagram::unbound")
    }

    /// A connected pair of sockets.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        let (a, b) = (
            UnixDatagram::register(a, "UnixDatagram::pair")?,
            UnixDatagram::register(b, "UnixDatagram::pair")?,
        );
        crate::net::evented::assume_writable(&a.io);
        crate::net::evented::assume_writable(&b.io);
        Ok((a, b))
    }

    /// Registers `socket` with the current runtime.
    #[track_caller]
    fn register(socket: mio::net::UnixDatagram, what: &str) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: PollEvented::with_runtime(socket, current_runtime(what))?,
        })
    }

    /// Sets the default peer of `send` and `recv`, and receives only from
    /// it (on Linux `"\0name"` is `name` in the abstract namespace).
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let addr = from_path(path.as_ref())?;
        with_std(self.io.get_ref(), |socket| {
            socket.connect_addr(addr.as_std())
        })
    }

    crate::net::evented::datagram_methods!(SocketAddr);

    /// Sends to the socket at `target` (on Linux `"\0name"` is `name` in
    /// the abstract namespace).
    pub async fn send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = from_path(target.as_ref())?;
        self.io
            .async_io(Direction::Write, |socket| send_to(socket, buf, &target))
            .await
    }

    /// `send_to` without waiting: `WouldBlock` if the socket is not
    /// writable.
    pub fn try_send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = from_path(target.as_ref())?;
        self.io
            .try_io(Direction::Write, |socket| send_to(socket, buf, &target))
    }

    /// `send_to` in `poll` form (only the last caller's waker is kept).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: impl AsRef<Path>,
    ) -> Poll<io::Result<usize>> {
        let target = from_path(target.as_ref())?;
        self.io
            .poll_io(cx, Direction::Write, |socket| send_to(socket, buf, &target))
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr().map(SocketAddr::from)
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr().map(SocketAddr::from)
    }

    /// Shuts down the read side, the write side, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }
}

crate::net::evented::std_conversions!(
    UnixDatagram,
    std::os::unix::net::UnixDatagram,
    mio::net::UnixDatagram
);
crate::net::evented::impl_fd!(UnixDatagram);

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

// SAFETY: `recv_from_uninit` zeroes `buf`, then receives into it with
// `recvfrom(2)`, which writes the datagram at its start and returns the
// count.
unsafe impl Datagram for mio::net::UnixDatagram {
    type Addr = SocketAddr;

    fn send_one(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }

    fn recv_one(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf)
    }

    fn recv_from_one(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = self.recv_from(buf)?;
        Ok((n, from.into()))
    }

    /// Zeroes `buf` first: the receives into uninitialized memory at hand
    /// (`socket2`'s) give the sender as an address `std` cannot hold when
    /// it is unnamed, the common case (an unbound client).
    fn recv_from_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, SocketAddr)> {
        self.recv_from_one(zeroed(buf))
    }
}

/// Sends `buf` from `socket` to `target`.
fn send_to(socket: &mio::net::UnixDatagram, buf: &[u8], target: &SocketAddr) -> io::Result<usize> {
    with_std(socket, |socket| socket.send_to_addr(buf, target.as_std()))
}

/// `f` on a `std` view of `socket`, for `std`'s calls that take a
/// `SocketAddr` (an abstract name), which `mio` lacks.
fn with_std<R>(
    socket: &mio::net::UnixDatagram,
    f: impl FnOnce(&std::os::unix::net::UnixDatagram) -> R,
) -> R {
    // The descriptor is open and owned by `socket`, borrowed for this whole
    // call. The `std` value made from it is never dropped (`ManuallyDrop`),
    // so it never closes the descriptor, and `f` only borrows it, so it
    // cannot outlive `socket`.
    // SAFETY: an open descriptor, borrowed and never closed (above).
    let view = ManuallyDrop::new(unsafe {
        std::os::unix::net::UnixDatagram::from_raw_fd(socket.as_raw_fd())
    });
    f(&view)
}
