//! What every socket type shares, written once, and the one place `net/`
//! names the engine: the reactor's `PollEvented` (a registered `mio` source
//! and its readiness loop), its `Direction`, and the runtime of the calling
//! context. When the engine moves, only the `use`s below change.
//!
//! Written once here, expanded into each type that has them:
//!
//! - [`stream_read_methods!`] and [`stream_write_methods!`]: a byte
//!   stream's readiness and non-waiting (`try_*`) methods, for
//!   `TcpStream`, `UnixStream` and their halves.
//! - [`datagram_methods!`]: a datagram socket's connected-peer methods
//!   (`send`, `recv` and their `try_`, `poll_` and `_buf` forms, readiness),
//!   for `UdpSocket` and `UnixDatagram`.
//! - [`ready_method!`] and [`interest_methods!`]: `ready(Interest)`, and
//!   `async_io`/`try_io` (a caller's own syscall run when an `Interest` is
//!   ready), for the streams, their halves (`ready` only), the datagram
//!   sockets and the pipe ends (`ready`).
//! - [`std_conversions!`] and [`impl_fd!`]: `from_std`/`into_std` and the
//!   file-descriptor traits of every socket type.
//!
//! # Invariants
//!
//! - A `try_*` method never waits and never stores a waker: it runs its
//!   syscall only if the direction is known ready and says `WouldBlock`
//!   otherwise; a `WouldBlock` from the syscall forgets the readiness, so a
//!   later wait really waits (`PollEvented::try_io`).
//! - A `poll_*_ready` or `poll_*` method keeps the waker in the direction's
//!   one slot: only the last task to call it is woken (tokio's rule).
//!   `readable`/`writable` and the `async` methods are listed waiters: any
//!   number of tasks at once, all woken.
//! - A `*_buf` receive writes only into the buffer's spare capacity and
//!   advances the buffer by exactly the count the kernel returned
//!   ([`read_buf`]); it never hands uninitialized memory to safe code as
//!   `&mut [u8]`.

use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::task::{Context, Poll};

use bytes::BufMut;
use mio::event::Source;
use socket2::SockRef;

pub(crate) use crate::runtime::{Direction, PollEvented, current_runtime};

/// The runtime a socket is registered with (`current_runtime`'s, or the
/// one an accepting listener's socket has), carried into the async part
/// of `bind` and `connect`.
pub(crate) type RuntimeRef = crate::util::loom::sync::Arc<crate::runtime::Shared>;

/// Waits, as a listed waiter, until `direction` is ready.
pub(crate) async fn ready<S: Source>(io: &PollEvented<S>, direction: Direction) -> io::Result<()> {
    io.ready(direction).await.map(drop)
}

/// Marks a just-accepted stream readable and writable without waiting for
/// the reactor's first event (tokio's rule): its first read and write try
/// the socket. Under load that first event can queue behind every other
/// connection's; a wrong guess costs one `WouldBlock`, which clears it.
pub(crate) fn assume_accepted<S: Source>(io: &PollEvented<S>) {
    use crate::runtime::ready_bits::{READABLE, WRITABLE};
    io.assume_ready(READABLE | WRITABLE);
}

/// Marks one end of a just-made pair writable (it is: nothing was sent).
pub(crate) fn assume_writable<S: Source>(io: &PollEvented<S>) {
    io.assume_ready(crate::runtime::ready_bits::WRITABLE);
}

/// Polls `direction`'s readiness, keeping the waker in its one slot.
pub(crate) fn poll_ready<S: Source>(
    io: &PollEvented<S>,
    cx: &mut Context<'_>,
    direction: Direction,
) -> Poll<io::Result<()>> {
    io.poll_ready(cx, direction).map_ok(drop)
}

/// Runs `read` on `buf`'s spare capacity and advances `buf` by the count
/// `read` returns (with whatever else it returns: a sender's address).
///
/// # Safety
///
/// `read` is a receive: it writes only initialized bytes into the slice
/// it is given, and the count it returns is of bytes it wrote at the
/// slice's start (at most its length).
pub(crate) unsafe fn read_buf<B: BufMut + ?Sized, T>(
    buf: &mut B,
    read: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<(usize, T)>,
) -> io::Result<(usize, T)> {
    let spare = buf.chunk_mut();
    // SAFETY: `read` writes only initialized bytes into this memory (the
    // caller's promise), which is all `as_uninit_slice_mut` asks.
    let (n, extra) = read(unsafe { spare.as_uninit_slice_mut() })?;
    // SAFETY: `read` initialized the first `n` bytes of the spare capacity
    // it was given (the caller's promise).
    unsafe { buf.advance_mut(n) };
    Ok((n, extra))
}

/// Receives into `buf`'s spare capacity (`recv(2)` with no flags: a read,
/// for a stream) and advances it.
pub(crate) fn recv_buf<S: AsFd, B: BufMut + ?Sized>(source: &S, buf: &mut B) -> io::Result<usize> {
    // SAFETY: `socket2`'s `recv` is `recv(2)` into the slice: the kernel
    // writes the bytes received at its start and returns their count.
    unsafe { read_buf(buf, |spare| Ok((SockRef::from(source).recv(spare)?, ()))) }.map(|(n, ())| n)
}

/// `spare` zeroed, as initialized bytes, for a receive that takes only
/// those (a cost of one fill; used where no receive into uninitialized
/// memory gives what is needed: a Unix sender's address).
pub(crate) fn zeroed(spare: &mut [MaybeUninit<u8>]) -> &mut [u8] {
    for byte in spare.iter_mut() {
        byte.write(0);
    }
    // SAFETY: every element was just written; `MaybeUninit<u8>` and `u8`
    // have the same layout.
    unsafe { &mut *(std::ptr::from_mut::<[MaybeUninit<u8>]>(spare) as *mut [u8]) }
}

/// Reads what is there, without waiting.
pub(crate) fn try_read<S: Source>(io: &PollEvented<S>, buf: &mut [u8]) -> io::Result<usize>
where
    for<'a> &'a S: Read,
{
    io.try_io(Direction::Read, |mut source| source.read(buf))
}

/// Reads what is there into `bufs`, in order, without waiting.
pub(crate) fn try_read_vectored<S: Source>(
    io: &PollEvented<S>,
    bufs: &mut [IoSliceMut<'_>],
) -> io::Result<usize>
where
    for<'a> &'a S: Read,
{
    io.try_io(Direction::Read, |mut source| source.read_vectored(bufs))
}

/// Reads what is there into `buf`'s spare capacity, without waiting.
pub(crate) fn try_read_buf<S: Source + AsFd, B: BufMut + ?Sized>(
    io: &PollEvented<S>,
    buf: &mut B,
) -> io::Result<usize> {
    io.try_io(Direction::Read, |source| recv_buf(source, buf))
}

/// Writes what fits, without waiting.
pub(crate) fn try_write<S: Source>(io: &PollEvented<S>, buf: &[u8]) -> io::Result<usize>
where
    for<'a> &'a S: Write,
{
    io.try_io(Direction::Write, |mut source| source.write(buf))
}

/// Writes what fits from `bufs`, in order, without waiting.
pub(crate) fn try_write_vectored<S: Source>(
    io: &PollEvented<S>,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize>
where
    for<'a> &'a S: Write,
{
    io.try_io(Direction::Write, |mut source| source.write_vectored(bufs))
}

/// A datagram socket's receive and send calls, named alike for `mio`'s UDP
/// and Unix datagram sockets (`udp.rs`, `unix/datagram.rs`), so
/// [`datagram_methods!`] is written once.
///
/// # Safety
///
/// `recv_from_uninit` is a receive: it writes only initialized bytes into
/// `buf` and returns the count it wrote at `buf`'s start ([`read_buf`]
/// advances a buffer by it).
pub(crate) unsafe trait Datagram: Source + AsFd {
    /// A sender's address.
    type Addr;
    /// Sends one datagram to the connected peer.
    fn send_one(&self, buf: &[u8]) -> io::Result<usize>;
    /// Receives one datagram from the connected peer (cut to `buf`).
    fn recv_one(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Receives one datagram and its sender's address.
    fn recv_from_one(&self, buf: &mut [u8]) -> io::Result<(usize, Self::Addr)>;
    /// `recv_from_one` into memory that need not be initialized.
    fn recv_from_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, Self::Addr)>;
}

/// Sends to the connected peer once the socket is writable.
pub(crate) async fn send<S: Datagram>(io: &PollEvented<S>, buf: &[u8]) -> io::Result<usize> {
    io.async_io(Direction::Write, |socket| socket.send_one(buf))
        .await
}

/// Receives from the connected peer once a datagram is there.
pub(crate) async fn recv<S: Datagram>(io: &PollEvented<S>, buf: &mut [u8]) -> io::Result<usize> {
    io.async_io(Direction::Read, |socket| socket.recv_one(buf))
        .await
}

/// `recv` into `buf`'s spare capacity.
pub(crate) async fn recv_into<S: Datagram, B: BufMut + ?Sized>(
    io: &PollEvented<S>,
    buf: &mut B,
) -> io::Result<usize> {
    io.async_io(Direction::Read, |socket| recv_buf(socket, buf))
        .await
}

/// Receives a datagram and its sender's address once one is there.
pub(crate) async fn recv_from<S: Datagram>(
    io: &PollEvented<S>,
    buf: &mut [u8],
) -> io::Result<(usize, S::Addr)> {
    io.async_io(Direction::Read, |socket| socket.recv_from_one(buf))
        .await
}

/// `recv_from` into `buf`'s spare capacity.
pub(crate) async fn recv_buf_from<S: Datagram, B: BufMut + ?Sized>(
    io: &PollEvented<S>,
    buf: &mut B,
) -> io::Result<(usize, S::Addr)> {
    // SAFETY: `recv_from_uninit` is a receive (`Datagram`'s contract).
    io.async_io(Direction::Read, |socket| unsafe {
        read_buf(buf, |spare| socket.recv_from_uninit(spare))
    })
    .await
}

/// `recv_buf_from` without waiting.
pub(crate) fn try_recv_buf_from<S: Datagram, B: BufMut + ?Sized>(
    io: &PollEvented<S>,
    buf: &mut B,
) -> io::Result<(usize, S::Addr)> {
    // SAFETY: `recv_from_uninit` is a receive (`Datagram`'s contract).
    io.try_io(Direction::Read, |socket| unsafe {
        read_buf(buf, |spare| socket.recv_from_uninit(spare))
    })
}

/// `send` in `poll` form.
pub(crate) fn poll_send<S: Datagram>(
    io: &PollEvented<S>,
    cx: &mut Context<'_>,
    buf: &[u8],
) -> Poll<io::Result<usize>> {
    io.poll_io(cx, Direction::Write, |socket| socket.send_one(buf))
}

/// `recv` in `poll` form, into tokio's `ReadBuf` (which it advances).
#[cfg(feature = "tokio-io")]
pub(crate) fn poll_recv<S: Datagram>(
    io: &PollEvented<S>,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    poll_read_buf(io, cx, buf, |socket, unfilled| {
        Ok((socket.recv_one(unfilled)?, ()))
    })
}

/// `recv_from` in `poll` form, into tokio's `ReadBuf` (which it advances).
#[cfg(feature = "tokio-io")]
pub(crate) fn poll_recv_from<S: Datagram>(
    io: &PollEvented<S>,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<S::Addr>> {
    poll_read_buf(io, cx, buf, |socket, unfilled| {
        socket.recv_from_one(unfilled)
    })
}

/// The readiness loop of a receive into tokio's `ReadBuf`: `recv` reads
/// into the unfilled part (initialized first, once: `ReadBuf` remembers),
/// and the buffer is advanced by its count.
#[cfg(feature = "tokio-io")]
pub(crate) fn poll_read_buf<S: Source, T>(
    io: &PollEvented<S>,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
    mut recv: impl FnMut(&S, &mut [u8]) -> io::Result<(usize, T)>,
) -> Poll<io::Result<T>> {
    let (n, extra) = std::task::ready!(io.poll_io(cx, Direction::Read, |socket| {
        recv(socket, buf.initialize_unfilled())
    }))?;
    buf.advance(n);
    Poll::Ready(Ok(extra))
}

/// The readiness and non-waiting methods of a byte stream's read side,
/// for a type whose `PollEvented` is `$io` (`$this: &Self`).
macro_rules! stream_read_methods {
    (|$this:ident| $io:expr) => {
        /// Waits until the stream is readable: data, end of stream or an
        /// error waits for the next read. Any number of tasks may wait at
        /// once. It may wake with nothing to read after all: then
        /// `try_read` says `WouldBlock`, and the next wait waits.
        pub async fn readable(&self) -> std::io::Result<()> {
            let $this = self;
            $crate::net::evented::ready($io, $crate::net::evented::Direction::Read).await
        }

        /// `readable` in `poll` form: `Ready(Ok(()))` once readable,
        /// otherwise `Pending` with the context's waker kept to be woken.
        /// Only the waker of the last call is kept (tokio's rule), and
        /// the same slot serves `poll_read`.
        pub fn poll_read_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let $this = self;
            $crate::net::evented::poll_ready($io, cx, $crate::net::evented::Direction::Read)
        }

        /// Reads what is there without waiting: `Ok(0)` is end of stream
        /// (or an empty `buf`); `WouldBlock` if nothing is there yet.
        pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            let $this = self;
            $crate::net::evented::try_read($io, buf)
        }

        /// `try_read` into several buffers, filled in order.
        pub fn try_read_vectored(
            &self,
            bufs: &mut [std::io::IoSliceMut<'_>],
        ) -> std::io::Result<usize> {
            let $this = self;
            $crate::net::evented::try_read_vectored($io, bufs)
        }

        /// `try_read` into the spare capacity of `buf` (a `BytesMut`, a
        /// `Vec<u8>`), which is advanced by the bytes read; nothing is
        /// zeroed first.
        pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            let $this = self;
            $crate::net::evented::try_read_buf($io, buf)
        }
    };
}

/// The readiness and non-waiting methods of a byte stream's write side,
/// for a type whose `PollEvented` is `$io` (`$this: &Self`).
macro_rules! stream_write_methods {
    (|$this:ident| $io:expr) => {
        /// Waits until the stream is writable (room in the send buffer, or
        /// an error for the next write). Any number of tasks may wait.
        pub async fn writable(&self) -> std::io::Result<()> {
            let $this = self;
            $crate::net::evented::ready($io, $crate::net::evented::Direction::Write).await
        }

        /// `writable` in `poll` form; only the waker of the last call is
        /// kept, in the slot `poll_write` uses too.
        pub fn poll_write_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let $this = self;
            $crate::net::evented::poll_ready($io, cx, $crate::net::evented::Direction::Write)
        }

        /// Writes what fits without waiting: `WouldBlock` if nothing does.
        pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
            let $this = self;
            $crate::net::evented::try_write($io, buf)
        }

        /// `try_write` from several buffers, taken in order.
        pub fn try_write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            let $this = self;
            $crate::net::evented::try_write_vectored($io, bufs)
        }
    };
}

/// `ready(Interest)`: waits, as a listed waiter, for any readiness of an
/// [`Interest`](crate::io::Interest), for a type whose `PollEvented` is
/// `$io` (`$this: &Self`).
macro_rules! ready_method {
    (|$this:ident| $io:expr) => {
        /// Waits until any readiness of `interest` is there and says which
        /// ([`Ready`](crate::io::Ready): readable, writable, closed, an
        /// error). It may say readable with nothing to read after all: then
        /// the `try_*` call says `WouldBlock` and forgets it. Any number of
        /// tasks may wait at once.
        pub async fn ready(
            &self,
            interest: $crate::io::Interest,
        ) -> std::io::Result<$crate::io::Ready> {
            let $this = self;
            let event = ($io).ready(interest.wants()).await?;
            Ok($crate::io::Ready::from_bits(event.ready()))
        }
    };
}

/// `ready(Interest)`, `async_io` and `try_io`: a caller's own syscall on
/// the socket, run when an [`Interest`](crate::io::Interest) is ready, for
/// a type whose `PollEvented` is `$io` (`$this: &Self`).
macro_rules! interest_methods {
    (|$this:ident| $io:expr) => {
        $crate::net::evented::ready_method!(|$this| $io);

        /// Runs `f` (a syscall of the caller's on this socket) once
        /// `interest` is ready, again after each `WouldBlock` (which
        /// forgets the readiness), and returns its first other result.
        /// `f` must make the syscall: a `WouldBlock` it makes up would
        /// clear a readiness the kernel still has, and wait for an edge
        /// that does not come.
        pub async fn async_io<R>(
            &self,
            interest: $crate::io::Interest,
            mut f: impl FnMut() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            let $this = self;
            ($io).async_io(interest.wants(), |_| f()).await
        }

        /// Runs `f` (a syscall of the caller's on this socket) if
        /// `interest` is known ready, without waiting: `WouldBlock`
        /// otherwise. A `WouldBlock` from `f` forgets the readiness.
        pub fn try_io<R>(
            &self,
            interest: $crate::io::Interest,
            f: impl FnOnce() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            let $this = self;
            ($io).try_io(interest.wants(), |_| f())
        }
    };
}

/// A datagram socket's methods that do not name a destination (its field
/// `io`; `$addr`, a sender's address): `send`, `recv`, `recv_from` and
/// their forms, readiness, `take_error`.
macro_rules! datagram_methods {
    ($addr:ty) => {
        $crate::net::evented::interest_methods!(|this| &this.io);

        /// Waits until a datagram can be received (or an error is there).
        /// Any number of tasks may wait at once.
        pub async fn readable(&self) -> std::io::Result<()> {
            $crate::net::evented::ready(&self.io, $crate::net::evented::Direction::Read).await
        }

        /// Waits until a datagram can be sent.
        pub async fn writable(&self) -> std::io::Result<()> {
            // Made `Ok(())` (the mutation run), every test passes: a Linux
            // UDP socket on loopback is writable at once (a datagram that
            // finds the receiver full is dropped, the sender never waits),
            // so no test can make it wait.
            $crate::net::evented::ready(&self.io, $crate::net::evented::Direction::Write).await
        }

        /// `readable` in `poll` form; only the waker of the last call is
        /// kept, in the slot the `poll_recv*` methods use too.
        pub fn poll_recv_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            $crate::net::evented::poll_ready(&self.io, cx, $crate::net::evented::Direction::Read)
        }

        /// `writable` in `poll` form; only the waker of the last call is
        /// kept, in the slot the `poll_send*` methods use too.
        pub fn poll_send_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            $crate::net::evented::poll_ready(&self.io, cx, $crate::net::evented::Direction::Write)
        }

        /// Sends to the connected peer; returns the bytes sent.
        pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
            $crate::net::evented::send(&self.io, buf).await
        }

        /// Receives a datagram from the connected peer (one longer than
        /// `buf` is cut).
        pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            $crate::net::evented::recv(&self.io, buf).await
        }

        /// `recv` into the spare capacity of `buf`, which is advanced by
        /// the bytes received (a datagram longer than the spare capacity
        /// is cut).
        pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            $crate::net::evented::recv_into(&self.io, buf).await
        }

        /// Sends without waiting: `WouldBlock` if the socket is not
        /// writable.
        pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
            self.io
                .try_io($crate::net::evented::Direction::Write, |socket| {
                    $crate::net::evented::Datagram::send_one(socket, buf)
                })
        }

        /// Receives without waiting: `WouldBlock` if nothing is queued.
        pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.io
                .try_io($crate::net::evented::Direction::Read, |socket| {
                    $crate::net::evented::Datagram::recv_one(socket, buf)
                })
        }

        /// `try_recv` into the spare capacity of `buf`, which is advanced
        /// by the bytes received.
        pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            $crate::net::evented::try_read_buf(&self.io, buf)
        }

        /// `send` in `poll` form (only the last caller's waker is kept).
        pub fn poll_send(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            $crate::net::evented::poll_send(&self.io, cx, buf)
        }

        /// `recv` in `poll` form, into tokio's `ReadBuf`, which is advanced
        /// by the bytes received (only the last caller's waker is kept).
        /// With the `tokio-io` feature.
        #[cfg(feature = "tokio-io")]
        pub fn poll_recv(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            $crate::net::evented::poll_recv(&self.io, cx, buf)
        }

        /// Receives a datagram and its sender's address (a datagram longer
        /// than `buf` is cut).
        pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            $crate::net::evented::recv_from(&self.io, buf).await
        }

        /// `recv_from` without waiting: `WouldBlock` if nothing is queued.
        pub fn try_recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            self.io
                .try_io($crate::net::evented::Direction::Read, |socket| {
                    $crate::net::evented::Datagram::recv_from_one(socket, buf)
                })
        }

        /// `recv_from` into the spare capacity of `buf`, which is advanced
        /// by the bytes received.
        pub async fn recv_buf_from<B: bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> std::io::Result<(usize, $addr)> {
            $crate::net::evented::recv_buf_from(&self.io, buf).await
        }

        /// `recv_buf_from` without waiting.
        pub fn try_recv_buf_from<B: bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> std::io::Result<(usize, $addr)> {
            $crate::net::evented::try_recv_buf_from(&self.io, buf)
        }

        /// `recv_from` in `poll` form, into tokio's `ReadBuf`, which is
        /// advanced by the bytes received (only the last caller's waker is
        /// kept). With the `tokio-io` feature.
        #[cfg(feature = "tokio-io")]
        pub fn poll_recv_from(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<$addr>> {
            $crate::net::evented::poll_recv_from(&self.io, cx, buf)
        }

        /// The pending socket error, cleared by reading it.
        pub fn take_error(&self) -> std::io::Result<Option<std::io::Error>> {
            self.io.get_ref().take_error()
        }
    };
}

/// `from_std` and `into_std` for `$ty` (its field `io`), a `$mio` source
/// made from and turned back into a `$std` socket.
macro_rules! std_conversions {
    ($ty:ident, $std:ty, $mio:ty) => {
        impl $ty {
            /// Registers a `std` socket with the current runtime (it is
            /// made non-blocking).
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_std(socket: $std) -> std::io::Result<$ty> {
                socket.set_nonblocking(true)?;
                Ok($ty {
                    io: $crate::net::evented::PollEvented::new(
                        <$mio>::from_std(socket),
                        concat!(stringify!($ty), "::from_std"),
                    )?,
                })
            }

            /// Deregisters the socket and returns it as a `std` one (still
            /// non-blocking: set it back with `set_nonblocking(false)` if
            /// needed).
            pub fn into_std(self) -> std::io::Result<$std> {
                Ok(<$std>::from(std::os::fd::OwnedFd::from(
                    self.io.into_inner(),
                )))
            }
        }
    };
}

/// `AsRawFd` and `AsFd` for socket types (their field `io`).
macro_rules! impl_fd {
    ($($ty:ty),*) => {$(
        impl std::os::fd::AsRawFd for $ty {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }

        impl std::os::fd::AsFd for $ty {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self.io.get_ref().as_fd()
            }
        }
    )*};
}

pub(crate) use {
    datagram_methods, impl_fd, interest_methods, ready_method, std_conversions,
    stream_read_methods, stream_write_methods,
};
