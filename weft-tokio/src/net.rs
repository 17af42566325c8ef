//! `tokio::net` on weft: TCP, UDP and Unix sockets on weft's reactor.
//!
//! Each type wraps weft's type of the same name (which has tokio's
//! methods: readiness, `try_*`, `poll_*`, socket options) and dereferences
//! to it; what the wrapper adds is tokio's `AsyncRead`/`AsyncWrite` on the
//! streams and their halves, and the methods whose signatures name tokio's
//! types (constructors, the halves, `ReadBuf`).

use std::io;
use std::task::{ready, Context, Poll};

use tokio_upstream::io::ReadBuf;

use crate::io_adapt::{impl_async_read, impl_async_write, impl_fd, wrapper};

pub use weft::net::{lookup_host, ToSocketAddrs};

/// Reads with `recv` into the unfilled part of `buf` once the socket is
/// readable, waiting (`ready`) while it reports `WouldBlock`.
fn poll_recv_into<T>(
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
    mut ready_fn: impl FnMut(&mut Context<'_>) -> Poll<io::Result<()>>,
    mut recv: impl FnMut(&mut [u8]) -> io::Result<(usize, T)>,
) -> Poll<io::Result<T>> {
    loop {
        ready!(ready_fn(cx))?;
        match recv(buf.initialize_unfilled()) {
            Ok((n, extra)) => {
                buf.advance(n);
                return Poll::Ready(Ok(extra));
            }
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Poll::Ready(Err(error)),
        }
    }
}

/// Dereferences a wrapper to weft's type.
macro_rules! deref {
    ($ty:ty, $inner:ty) => {
        impl std::ops::Deref for $ty {
            type Target = $inner;

            fn deref(&self) -> &$inner {
                &self.inner
            }
        }
    };
}

/// A stream family (TCP or Unix): the stream, its borrowed and owned
/// halves, `ReuniteError`, in module `$halves`.
macro_rules! stream_family {
    ($stream:ident, $weft:ident, $halves:ident, $weft_halves:ident) => {
        wrapper!(
            #[doc = concat!("A ", stringify!($stream), ": weft's, with tokio's I/O traits.")]
            $stream,
            weft::net::$weft
        );
        deref!($stream, weft::net::$weft);
        impl_async_read!($stream, inner);
        impl_async_write!($stream, inner);
        impl_fd!($stream);

        impl $stream {
            /// Borrowed halves, usable from two futures of one task.
            pub fn split(&mut self) -> ($halves::ReadHalf<'_>, $halves::WriteHalf<'_>) {
                let (read, write) = self.inner.split();
                ($halves::ReadHalf { inner: read }, $halves::WriteHalf { inner: write })
            }

            /// Owned halves, movable to two tasks.
            pub fn into_split(self) -> ($halves::OwnedReadHalf, $halves::OwnedWriteHalf) {
                let (read, write) = self.inner.into_split();
                (
                    $halves::OwnedReadHalf { inner: read },
                    $halves::OwnedWriteHalf { inner: write },
                )
            }

            /// `peek` in `poll` form, into tokio's `ReadBuf`.
            pub fn poll_peek(
                &self,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<usize>> {
                let fd = std::os::unix::io::AsRawFd::as_raw_fd(&self.inner);
                poll_recv_into(cx, buf, |cx| self.inner.poll_read_ready(cx), |unfilled| {
                    let n = peek_fd(fd, unfilled)?;
                    Ok((n, n))
                })
            }
        }

        /// The halves of a stream.
        pub mod $halves {
            use super::*;

            /// The read half of `split`.
            #[derive(Debug)]
            pub struct ReadHalf<'a> {
                pub(crate) inner: weft::net::$weft_halves::ReadHalf<'a>,
            }

            /// The write half of `split`.
            #[derive(Debug)]
            pub struct WriteHalf<'a> {
                pub(crate) inner: weft::net::$weft_halves::WriteHalf<'a>,
            }

            /// The read half of `into_split`.
            #[derive(Debug)]
            pub struct OwnedReadHalf {
                pub(crate) inner: weft::net::$weft_halves::OwnedReadHalf,
            }

            /// The write half of `into_split`; dropping it shuts the
            /// stream's write side down.
            #[derive(Debug)]
            pub struct OwnedWriteHalf {
                pub(crate) inner: weft::net::$weft_halves::OwnedWriteHalf,
            }

            /// `reunite` was given the halves of two different streams.
            #[derive(Debug)]
            pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

            impl std::fmt::Display for ReuniteError {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("tried to reunite halves that are not from the same socket")
                }
            }

            impl std::error::Error for ReuniteError {}

            impl_async_read!(ReadHalf<'a>, inner, 'a);
            impl_async_write!(WriteHalf<'a>, inner, 'a);
            impl_async_read!(OwnedReadHalf, inner);
            impl_async_write!(OwnedWriteHalf, inner);

            impl<'a> std::ops::Deref for ReadHalf<'a> {
                type Target = weft::net::$weft_halves::ReadHalf<'a>;
                fn deref(&self) -> &Self::Target {
                    &self.inner
                }
            }

            impl<'a> std::ops::Deref for WriteHalf<'a> {
                type Target = weft::net::$weft_halves::WriteHalf<'a>;
                fn deref(&self) -> &Self::Target {
                    &self.inner
                }
            }

            deref!(OwnedReadHalf, weft::net::$weft_halves::OwnedReadHalf);
            deref!(OwnedWriteHalf, weft::net::$weft_halves::OwnedWriteHalf);

            impl OwnedReadHalf {
                /// Puts the halves back together.
                pub fn reunite(self, other: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                    self.inner.reunite(other.inner).map($stream::from).map_err(|error| {
                        ReuniteError(
                            OwnedReadHalf { inner: error.0 },
                            OwnedWriteHalf { inner: error.1 },
                        )
                    })
                }

            }

            impl OwnedWriteHalf {
                /// Puts the halves back together.
                pub fn reunite(self, other: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                    other.reunite(self)
                }

                /// Drops the half without shutting the write side down.
                pub fn forget(self) {
                    self.inner.forget()
                }
            }
        }
    };
}

/// `recv(MSG_PEEK)` on a non-blocking socket.
fn peek_fd(fd: std::os::unix::io::RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes; `fd` is the
    // caller's open socket; a non-blocking socket makes the call return.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

stream_family!(TcpStream, TcpStream, tcp, tcp);
stream_family!(UnixStream, UnixStream, unix_halves, unix);

impl tcp::OwnedReadHalf {
    /// Reads without taking the bytes from the stream.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }
}

impl tcp::ReadHalf<'_> {
    /// Reads without taking the bytes from the stream.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }
}

impl TcpStream {
    /// Connects to the first address of `addr` that accepts.
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        weft::net::TcpStream::connect(addr)
            .await
            .map(TcpStream::from)
    }

    /// A stream from a connected, non-blocking std stream.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    #[track_caller]
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        weft::net::TcpStream::from_std(stream).map(TcpStream::from)
    }

    /// The std stream (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        self.inner.into_std()
    }
}

wrapper!(
    /// A TCP listener: weft's.
    TcpListener,
    weft::net::TcpListener
);
deref!(TcpListener, weft::net::TcpListener);
impl_fd!(TcpListener);

impl TcpListener {
    /// Binds to the first address of `addr` that can be bound.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        weft::net::TcpListener::bind(addr)
            .await
            .map(TcpListener::from)
    }

    /// Waits for a connection.
    pub async fn accept(&self) -> io::Result<(TcpStream, std::net::SocketAddr)> {
        let (stream, addr) = self.inner.accept().await?;
        Ok((stream.into(), addr))
    }

    /// `accept` in `poll` form.
    pub fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(TcpStream, std::net::SocketAddr)>> {
        self.inner
            .poll_accept(cx)
            .map_ok(|(stream, addr)| (stream.into(), addr))
    }

    /// A listener from a bound, listening, non-blocking std listener.
    #[track_caller]
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        weft::net::TcpListener::from_std(listener).map(TcpListener::from)
    }

    /// The std listener (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        self.inner.into_std()
    }
}

wrapper!(
    /// A TCP socket not yet connected or listening: weft's.
    TcpSocket,
    weft::net::TcpSocket
);
deref!(TcpSocket, weft::net::TcpSocket);
impl_fd!(TcpSocket);

impl TcpSocket {
    /// A new IPv4 socket.
    pub fn new_v4() -> io::Result<TcpSocket> {
        weft::net::TcpSocket::new_v4().map(TcpSocket::from)
    }

    /// A new IPv6 socket.
    pub fn new_v6() -> io::Result<TcpSocket> {
        weft::net::TcpSocket::new_v6().map(TcpSocket::from)
    }

    /// Connects to `addr`.
    pub async fn connect(self, addr: std::net::SocketAddr) -> io::Result<TcpStream> {
        self.inner.connect(addr).await.map(TcpStream::from)
    }

    /// Listens with a backlog of `backlog`.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        self.inner.listen(backlog).map(TcpListener::from)
    }

    /// A socket from a std stream.
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        weft::net::TcpSocket::from_std_stream(stream).into()
    }
}

impl std::os::unix::io::FromRawFd for TcpSocket {
    unsafe fn from_raw_fd(fd: std::os::unix::io::RawFd) -> TcpSocket {
        // SAFETY: the caller's promise (an open socket it owns) is passed on.
        unsafe { weft::net::TcpSocket::from_raw_fd(fd) }.into()
    }
}

wrapper!(
    /// A UDP socket: weft's, with the `poll_*` forms into tokio's `ReadBuf`.
    UdpSocket,
    weft::net::UdpSocket
);
deref!(UdpSocket, weft::net::UdpSocket);
impl_fd!(UdpSocket);

impl UdpSocket {
    /// Binds to the first address of `addr` that can be bound.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        weft::net::UdpSocket::bind(addr).await.map(UdpSocket::from)
    }

    /// A socket from a bound, non-blocking std socket.
    #[track_caller]
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        weft::net::UdpSocket::from_std(socket).map(UdpSocket::from)
    }

    /// The std socket (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        self.inner.into_std()
    }

    /// `recv` in `poll` form, into tokio's `ReadBuf`.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| Ok((self.inner.try_recv(unfilled)?, ())),
        )
    }

    /// `recv_from` in `poll` form, into tokio's `ReadBuf`.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<std::net::SocketAddr>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| self.inner.try_recv_from(unfilled),
        )
    }

    /// `peek` in `poll` form, into tokio's `ReadBuf`: the datagram stays
    /// queued.
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| Ok((self.inner.try_peek(unfilled)?, ())),
        )
    }

    /// `peek_from` in `poll` form, into tokio's `ReadBuf`: the datagram
    /// stays queued.
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<std::net::SocketAddr>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| self.inner.try_peek_from(unfilled),
        )
    }
}

wrapper!(
    /// A Unix listener: weft's.
    UnixListener,
    weft::net::UnixListener
);
deref!(UnixListener, weft::net::UnixListener);
impl_fd!(UnixListener);

impl UnixListener {
    /// Binds to `path`.
    #[track_caller]
    pub fn bind(path: impl AsRef<std::path::Path>) -> io::Result<UnixListener> {
        weft::net::UnixListener::bind(path).map(UnixListener::from)
    }

    /// Binds to `addr` (a path, or a name in Linux's abstract namespace).
    #[track_caller]
    pub fn bind_addr(addr: &std::os::unix::net::SocketAddr) -> io::Result<UnixListener> {
        weft::net::UnixListener::bind_addr(&addr.clone().into()).map(UnixListener::from)
    }

    /// Waits for a connection.
    pub async fn accept(&self) -> io::Result<(UnixStream, unix::SocketAddr)> {
        let (stream, addr) = self.inner.accept().await?;
        Ok((stream.into(), addr))
    }

    /// `accept` in `poll` form.
    pub fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(UnixStream, unix::SocketAddr)>> {
        self.inner
            .poll_accept(cx)
            .map_ok(|(stream, addr)| (stream.into(), addr))
    }

    /// A listener from a bound, non-blocking std listener.
    #[track_caller]
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        weft::net::UnixListener::from_std(listener).map(UnixListener::from)
    }

    /// The std listener (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        self.inner.into_std()
    }
}

impl UnixStream {
    /// Connects to the socket at `path`.
    pub async fn connect(path: impl AsRef<std::path::Path>) -> io::Result<UnixStream> {
        weft::net::UnixStream::connect(path)
            .await
            .map(UnixStream::from)
    }

    /// Connects to the socket at `addr` (a path, or a name in Linux's
    /// abstract namespace).
    pub async fn connect_addr(addr: &std::os::unix::net::SocketAddr) -> io::Result<UnixStream> {
        weft::net::UnixStream::connect_addr(&addr.clone().into())
            .await
            .map(UnixStream::from)
    }

    /// A connected pair.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = weft::net::UnixStream::pair()?;
        Ok((a.into(), b.into()))
    }

    /// A stream from a connected, non-blocking std stream.
    #[track_caller]
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        weft::net::UnixStream::from_std(stream).map(UnixStream::from)
    }

    /// The std stream (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        self.inner.into_std()
    }
}

wrapper!(
    /// A Unix datagram socket: weft's, with the `poll_*` forms into
    /// tokio's `ReadBuf`.
    UnixDatagram,
    weft::net::UnixDatagram
);
deref!(UnixDatagram, weft::net::UnixDatagram);
impl_fd!(UnixDatagram);

impl UnixDatagram {
    /// Binds to `path`.
    #[track_caller]
    pub fn bind(path: impl AsRef<std::path::Path>) -> io::Result<UnixDatagram> {
        weft::net::UnixDatagram::bind(path).map(UnixDatagram::from)
    }

    /// An unbound socket.
    pub fn unbound() -> io::Result<UnixDatagram> {
        weft::net::UnixDatagram::unbound().map(UnixDatagram::from)
    }

    /// A connected pair.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = weft::net::UnixDatagram::pair()?;
        Ok((a.into(), b.into()))
    }

    /// A socket from a non-blocking std socket.
    #[track_caller]
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        weft::net::UnixDatagram::from_std(socket).map(UnixDatagram::from)
    }

    /// The std socket (non-blocking), leaving the reactor.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        self.inner.into_std()
    }

    /// `recv` in `poll` form, into tokio's `ReadBuf`.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| Ok((self.inner.try_recv(unfilled)?, ())),
        )
    }

    /// `recv_from` in `poll` form, into tokio's `ReadBuf`.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<unix::SocketAddr>> {
        poll_recv_into(
            cx,
            buf,
            |cx| self.inner.poll_recv_ready(cx),
            |unfilled| self.inner.try_recv_from(unfilled),
        )
    }
}

wrapper!(
    /// A Unix socket not yet listening, connected or a datagram socket:
    /// weft's.
    UnixSocket,
    weft::net::UnixSocket
);
deref!(UnixSocket, weft::net::UnixSocket);
impl_fd!(UnixSocket);

impl UnixSocket {
    /// A new datagram socket.
    pub fn new_datagram() -> io::Result<UnixSocket> {
        weft::net::UnixSocket::new_datagram().map(UnixSocket::from)
    }

    /// A new stream socket.
    pub fn new_stream() -> io::Result<UnixSocket> {
        weft::net::UnixSocket::new_stream().map(UnixSocket::from)
    }

    /// Listens (a stream socket).
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        self.inner.listen(backlog).map(UnixListener::from)
    }

    /// Connects to `path` (a stream socket).
    pub async fn connect(self, path: impl AsRef<std::path::Path>) -> io::Result<UnixStream> {
        self.inner.connect(path).await.map(UnixStream::from)
    }

    /// The datagram socket (a datagram socket).
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        self.inner.datagram().map(UnixDatagram::from)
    }
}

impl std::os::unix::io::FromRawFd for UnixSocket {
    unsafe fn from_raw_fd(fd: std::os::unix::io::RawFd) -> UnixSocket {
        // SAFETY: the caller's promise (an open socket it owns) is passed on.
        unsafe { weft::net::UnixSocket::from_raw_fd(fd) }.into()
    }
}

impl std::os::unix::io::IntoRawFd for UnixSocket {
    fn into_raw_fd(self) -> std::os::unix::io::RawFd {
        self.inner.into_raw_fd()
    }
}

/// Unix-domain socket types and their halves, at tokio's paths.
pub mod unix {
    pub use super::unix_halves::{
        OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf,
    };
    pub use weft::net::unix::{SocketAddr, UCred};

    /// Unix pipes and FIFOs: weft's ends, with tokio's I/O traits.
    pub mod pipe {
        use std::io;
        use std::os::fd::OwnedFd;
        use std::path::Path;

        use crate::io_adapt::{impl_async_read, impl_async_write, impl_fd, wrapper};

        wrapper!(
            /// The write end of a pipe or FIFO: weft's.
            Sender,
            weft::net::unix::pipe::Sender
        );
        wrapper!(
            /// The read end of a pipe or FIFO: weft's.
            Receiver,
            weft::net::unix::pipe::Receiver
        );
        impl_async_write!(Sender, inner);
        impl_async_read!(Receiver, inner);
        impl_fd!(Sender);
        impl_fd!(Receiver);

        impl std::ops::Deref for Sender {
            type Target = weft::net::unix::pipe::Sender;
            fn deref(&self) -> &Self::Target {
                &self.inner
            }
        }

        impl std::ops::Deref for Receiver {
            type Target = weft::net::unix::pipe::Receiver;
            fn deref(&self) -> &Self::Target {
                &self.inner
            }
        }

        /// The constructors and conversions of an end.
        macro_rules! end {
            ($end:ident) => {
                impl $end {
                    /// Takes an open pipe or FIFO end (checked, made non-blocking).
                    pub fn from_file(file: std::fs::File) -> io::Result<$end> {
                        weft::net::unix::pipe::$end::from_file(file).map($end::from)
                    }

                    /// `from_file` for an `OwnedFd`.
                    pub fn from_owned_fd(fd: OwnedFd) -> io::Result<$end> {
                        weft::net::unix::pipe::$end::from_owned_fd(fd).map($end::from)
                    }

                    /// `from_file` without the checks.
                    pub fn from_file_unchecked(file: std::fs::File) -> io::Result<$end> {
                        weft::net::unix::pipe::$end::from_file_unchecked(file).map($end::from)
                    }

                    /// `from_owned_fd` without the checks.
                    pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<$end> {
                        weft::net::unix::pipe::$end::from_owned_fd_unchecked(fd).map($end::from)
                    }

                    /// The descriptor, deregistered and blocking again.
                    pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
                        self.inner.into_blocking_fd()
                    }

                    /// The descriptor, deregistered, still non-blocking.
                    pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
                        self.inner.into_nonblocking_fd()
                    }
                }
            };
        }

        end!(Sender);
        end!(Receiver);

        /// An anonymous pipe: (write end, read end).
        pub fn pipe() -> io::Result<(Sender, Receiver)> {
            let (tx, rx) = weft::net::unix::pipe::pipe()?;
            Ok((tx.into(), rx.into()))
        }

        /// How to open a FIFO's end.
        #[derive(Clone, Debug, Default)]
        pub struct OpenOptions {
            inner: weft::net::unix::pipe::OpenOptions,
        }

        impl OpenOptions {
            /// Read-only receivers, write-only senders, a FIFO check.
            pub fn new() -> OpenOptions {
                OpenOptions::default()
            }

            /// Opens the FIFO for reading and writing (Linux).
            pub fn read_write(&mut self, value: bool) -> &mut OpenOptions {
                self.inner.read_write(value);
                self
            }

            /// Skips the FIFO check.
            pub fn unchecked(&mut self, value: bool) -> &mut OpenOptions {
                self.inner.unchecked(value);
                self
            }

            /// Opens the FIFO at `path` for reading.
            pub fn open_receiver(&self, path: impl AsRef<Path>) -> io::Result<Receiver> {
                self.inner.open_receiver(path).map(Receiver::from)
            }

            /// Opens the FIFO at `path` for writing.
            pub fn open_sender(&self, path: impl AsRef<Path>) -> io::Result<Sender> {
                self.inner.open_sender(path).map(Sender::from)
            }
        }
    }
}

/// `TryFrom<std type>` for a wrapper: its `from_std` (tokio has these).
macro_rules! try_from_std {
    ($($ty:ident: $std:ty),* $(,)?) => {$(
        impl TryFrom<$std> for $ty {
            type Error = io::Error;

            /// `from_std`: registers the socket with the current runtime.
            ///
            /// # Panics
            ///
            /// Outside a runtime.
            #[track_caller]
            fn try_from(socket: $std) -> io::Result<$ty> {
                $ty::from_std(socket)
            }
        }
    )*};
}

try_from_std!(
    TcpListener: std::net::TcpListener,
    TcpStream: std::net::TcpStream,
    UdpSocket: std::net::UdpSocket,
    UnixListener: std::os::unix::net::UnixListener,
    UnixStream: std::os::unix::net::UnixStream,
    UnixDatagram: std::os::unix::net::UnixDatagram,
);
