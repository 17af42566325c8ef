//! The socket wrappers' own methods, forwarding to weft's: every method a
//! tokio socket has as an inherent method must be inherent here too. A
//! method reached only through `Deref` loses to a trait method of the same
//! name in the caller's scope (sqlx implements its own `Socket::try_write`
//! for `tokio::net::TcpStream` by calling `(*self).try_write(buf)`, which
//! would then call itself).

use std::io::{self, IoSlice, IoSliceMut};
use std::task::{Context, Poll};

use super::net::unix::pipe;
use super::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};

/// `forward!(Type { fn name(&self, arg: T) -> R; async fn ... })`: inherent
/// methods calling weft's of the same name on `self.inner`.
macro_rules! forward {
    ($ty:ty { $($(#[$doc:meta])* $kind:ident fn $name:ident(&self $(, $arg:ident: $argty:ty)*) -> $ret:ty;)* }) => {
        impl $ty {
            $(forward!(@one $(#[$doc])* $kind $name ($($arg: $argty),*) $ret);)*
        }
    };
    (@one $(#[$doc:meta])* sync $name:ident ($($arg:ident: $argty:ty),*) $ret:ty) => {
        $(#[$doc])*
        pub fn $name(&self $(, $arg: $argty)*) -> $ret {
            self.inner.$name($($arg),*)
        }
    };
    (@one $(#[$doc:meta])* async $name:ident ($($arg:ident: $argty:ty),*) $ret:ty) => {
        $(#[$doc])*
        pub async fn $name(&self $(, $arg: $argty)*) -> $ret {
            self.inner.$name($($arg),*).await
        }
    };
}

/// The readiness and non-waiting I/O methods of a byte stream.
macro_rules! stream_methods {
    ($ty:ty, $addr:ty) => {
        forward!($ty {
            /// Waits until the stream may be ready for any of `interest`.
            async fn ready(&self, interest: weft::io::Interest) -> io::Result<weft::io::Ready>;
            /// Waits until the stream may be readable.
            async fn readable(&self) -> io::Result<()>;
            /// Waits until the stream may be writable.
            async fn writable(&self) -> io::Result<()>;
            /// `readable` in `poll` form.
            sync fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
            /// `writable` in `poll` form.
            sync fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
            /// Reads what is there without waiting (`WouldBlock` if nothing).
            sync fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
            /// `try_read` into several buffers.
            sync fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize>;
            /// Writes what fits without waiting (`WouldBlock` if nothing).
            sync fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
            /// `try_write` from several buffers.
            sync fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
            /// The local address.
            sync fn local_addr(&self) -> io::Result<$addr>;
            /// The peer's address.
            sync fn peer_addr(&self) -> io::Result<$addr>;
            /// The socket's pending error, cleared.
            sync fn take_error(&self) -> io::Result<Option<io::Error>>;
        });

        impl $ty {
            /// `try_read` into a `BufMut`'s spare capacity.
            pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                self.inner.try_read_buf(buf)
            }
        }
    };
}

stream_methods!(TcpStream, std::net::SocketAddr);
stream_methods!(UnixStream, weft::net::unix::SocketAddr);

forward!(TcpStream {
    /// Reads without taking the bytes from the stream.
    async fn peek(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Whether Nagle's algorithm is off.
    sync fn nodelay(&self) -> io::Result<bool>;
    /// Turns Nagle's algorithm off (`true`) or on.
    sync fn set_nodelay(&self, nodelay: bool) -> io::Result<()>;
    /// `SO_LINGER`.
    sync fn linger(&self) -> io::Result<Option<std::time::Duration>>;
    /// Sets `SO_LINGER`.
    #[deprecated = "`SO_LINGER` makes dropping the socket block the thread; use `set_zero_linger` or `TcpSocket::set_linger`"]
    #[allow(deprecated)]
    sync fn set_linger(&self, dur: Option<std::time::Duration>) -> io::Result<()>;
    /// The IP time-to-live.
    sync fn ttl(&self) -> io::Result<u32>;
    /// Sets the IP time-to-live.
    sync fn set_ttl(&self, ttl: u32) -> io::Result<()>;
});

forward!(UnixStream {
    /// The peer process's credentials.
    sync fn peer_cred(&self) -> io::Result<weft::net::unix::UCred>;
});

forward!(TcpListener {
    /// The local address.
    sync fn local_addr(&self) -> io::Result<std::net::SocketAddr>;
    /// The IP time-to-live.
    sync fn ttl(&self) -> io::Result<u32>;
    /// Sets the IP time-to-live.
    sync fn set_ttl(&self, ttl: u32) -> io::Result<()>;
});

forward!(UnixListener {
    /// The local address.
    sync fn local_addr(&self) -> io::Result<weft::net::unix::SocketAddr>;
    /// The socket's pending error, cleared.
    sync fn take_error(&self) -> io::Result<Option<io::Error>>;
});

/// The methods of a datagram socket whose address type is `$addr`.
macro_rules! datagram_methods {
    ($ty:ty, $addr:ty) => {
        forward!($ty {
            /// Waits until the socket may be ready for any of `interest`.
            async fn ready(&self, interest: weft::io::Interest) -> io::Result<weft::io::Ready>;
            /// Waits until the socket may be readable.
            async fn readable(&self) -> io::Result<()>;
            /// Waits until the socket may be writable.
            async fn writable(&self) -> io::Result<()>;
            /// `readable` in `poll` form.
            sync fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
            /// `writable` in `poll` form.
            sync fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
            /// Sends to the connected peer.
            async fn send(&self, buf: &[u8]) -> io::Result<usize>;
            /// Receives from the connected peer.
            async fn recv(&self, buf: &mut [u8]) -> io::Result<usize>;
            /// Sends without waiting.
            sync fn try_send(&self, buf: &[u8]) -> io::Result<usize>;
            /// Receives without waiting.
            sync fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize>;
            /// Receives, with the sender's address.
            async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, $addr)>;
            /// Receives without waiting, with the sender's address.
            sync fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, $addr)>;
            /// The local address.
            sync fn local_addr(&self) -> io::Result<$addr>;
            /// The connected peer's address.
            sync fn peer_addr(&self) -> io::Result<$addr>;
            /// The socket's pending error, cleared.
            sync fn take_error(&self) -> io::Result<Option<io::Error>>;
        });

        impl $ty {
            /// Receives into a `BufMut`'s spare capacity.
            pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                self.inner.recv_buf(buf).await
            }

            /// `recv_buf` without waiting.
            pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                self.inner.try_recv_buf(buf)
            }
        }
    };
}

datagram_methods!(UdpSocket, std::net::SocketAddr);
datagram_methods!(UnixDatagram, weft::net::unix::SocketAddr);

impl UdpSocket {
    /// Connects to the first address of `addr` that works.
    pub async fn connect(&self, addr: impl weft::net::ToSocketAddrs) -> io::Result<()> {
        self.inner.connect(addr).await
    }

    /// Sends to the first address of `target`.
    pub async fn send_to(
        &self,
        buf: &[u8],
        target: impl weft::net::ToSocketAddrs,
    ) -> io::Result<usize> {
        self.inner.send_to(buf, target).await
    }
}

forward!(UdpSocket {
    /// Sends to `target` without waiting.
    sync fn try_send_to(&self, buf: &[u8], target: std::net::SocketAddr) -> io::Result<usize>;
    /// Reads without taking the datagram.
    async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, std::net::SocketAddr)>;
    /// Whether broadcast is on.
    sync fn broadcast(&self) -> io::Result<bool>;
    /// Turns broadcast on or off.
    sync fn set_broadcast(&self, on: bool) -> io::Result<()>;
    /// The IP time-to-live.
    sync fn ttl(&self) -> io::Result<u32>;
    /// Sets the IP time-to-live.
    sync fn set_ttl(&self, ttl: u32) -> io::Result<()>;
});

impl UnixDatagram {
    /// Connects to the socket at `path`.
    pub fn connect(&self, path: impl AsRef<std::path::Path>) -> io::Result<()> {
        self.inner.connect(path)
    }

    /// Sends to the socket at `target`.
    pub async fn send_to(
        &self,
        buf: &[u8],
        target: impl AsRef<std::path::Path>,
    ) -> io::Result<usize> {
        self.inner.send_to(buf, target).await
    }

    /// Sends to the socket at `target` without waiting.
    pub fn try_send_to(
        &self,
        buf: &[u8],
        target: impl AsRef<std::path::Path>,
    ) -> io::Result<usize> {
        self.inner.try_send_to(buf, target)
    }
}

forward!(pipe::Sender {
    /// Waits until the pipe may be ready for any of `interest`.
    async fn ready(&self, interest: weft::io::Interest) -> io::Result<weft::io::Ready>;
    /// Waits until the pipe may be writable.
    async fn writable(&self) -> io::Result<()>;
    /// `writable` in `poll` form.
    sync fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Writes what fits without waiting (`WouldBlock` if nothing).
    sync fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    /// `try_write` from several buffers.
    sync fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
});

forward!(pipe::Receiver {
    /// Waits until the pipe may be ready for any of `interest`.
    async fn ready(&self, interest: weft::io::Interest) -> io::Result<weft::io::Ready>;
    /// Waits until the pipe may be readable.
    async fn readable(&self) -> io::Result<()>;
    /// `readable` in `poll` form.
    sync fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Reads what is there without waiting (`WouldBlock` if nothing).
    sync fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// `try_read` into several buffers.
    sync fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize>;
});

impl pipe::Receiver {
    /// `try_read` into a `BufMut`'s spare capacity.
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.inner.try_read_buf(buf)
    }
}
