//! The process's standard streams as async streams, as tokio's
//! `tokio::io::{stdin, stdout, stderr}`: [`Stdin`], [`Stdout`],
//! [`Stderr`].
//!
//! ```
//! use futures_lite::io::AsyncWriteExt;
//!
//! weft::runtime::Runtime::new()?.block_on(async {
//!     let mut out = weft::io::stdout();
//!     out.write_all(b"hello from weft\n").await?;
//!     out.flush().await?;                      // the bytes have reached std's stdout
//!     Ok::<(), std::io::Error>(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The standard streams may be terminals or files, which have no
//! readiness that epoll would report (or would block the reactor's
//! thread), so every read and write runs `std`'s `io::stdin()`,
//! `io::stdout()` or `io::stderr()` on the runtime's blocking pool
//! ([`spawn_blocking`](crate::task::spawn_blocking)), and shares `std`'s
//! buffers and locks with `println!` and the rest of the program.
//!
//! # Invariants
//!
//! - **One operation at a time per handle, in order.** A handle holds at
//!   most one pool job. A write copies up to [`MAX_BUF`] bytes into the
//!   handle's buffer, starts the job and returns `Ok(n)` at once (the
//!   bytes are *handed over*); the next write, and `flush`, wait for it.
//!   So one handle's writes land in the order they were made, and `flush`
//!   returns once they and `std`'s own flush are done. Two handles (say,
//!   two `stdout()`s in two tasks) are not ordered against each other.
//! - **A write's error is not lost while the handle lives:** a job's error
//!   is returned by the next write or `flush` on the handle.
//! - **A read returns what one pool job read** (at most
//!   `min(buffer, MAX_BUF)` bytes); bytes read for a caller that went away
//!   are kept and returned first by the next read.
//! - A job a thread has started runs to its end even if the handle is
//!   dropped. A blocked read of stdin (a terminal nobody types in) holds a
//!   pool thread until input comes, and runtime shutdown waits for it up
//!   to its deadline, as with tokio: for interactive input, read stdin on
//!   a thread of your own.
//! - Outside a runtime, a read or write panics at its first poll, saying
//!   where to call it from.

use std::future::Future;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use crate::task::{JoinError, JoinHandle};

/// The most bytes one pool job reads or writes (tokio's `MAX_BUF`, as
/// `fs::File`'s default): larger writes are split, and memory per handle
/// stays bounded.
const MAX_BUF: usize = 2 * 1024 * 1024;

/// A buffer on its way to a pool job and back.
#[derive(Default)]
struct Buf {
    bytes: Vec<u8>,
    /// For reads: where the bytes not yet returned start.
    pos: usize,
}

impl Buf {
    fn unread(&self) -> &[u8] {
        &self.bytes[self.pos..]
    }

    /// Copies up to `max` unread bytes out through `put`; returns how many.
    fn take(&mut self, max: usize, put: impl FnOnce(&[u8])) -> usize {
        let n = self.unread().len().min(max);
        put(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        n
    }
}

/// Where a handle's pool job is.
enum State {
    Idle(Buf),
    /// A job in flight; `read`: it reads (its count matters: 0 is the end
    /// of input).
    Busy {
        job: JoinHandle<(io::Result<usize>, Buf)>,
        read: bool,
    },
}

/// Which standard stream a job reads or writes.
#[derive(Clone, Copy, Debug)]
enum Stream {
    In,
    Out,
    Err,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::In => "Stdin",
            Stream::Out => "Stdout",
            Stream::Err => "Stderr",
        }
    }

    /// Fills `buf` from stdin once (retrying an interrupted read); keeps
    /// the bytes read.
    fn read(buf: &mut Vec<u8>) -> io::Result<usize> {
        let result = loop {
            match io::stdin().read(buf) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        buf.truncate(*result.as_ref().unwrap_or(&0));
        result
    }

    fn write_all(self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Out => io::stdout().write_all(bytes),
            _ => io::stderr().write_all(bytes),
        }
    }

    fn flush(self) -> io::Result<()> {
        match self {
            Stream::Out => io::stdout().flush(),
            _ => io::stderr().flush(),
        }
    }
}

/// One handle's state machine: its stream and its job.
struct Blocking {
    stream: Stream,
    state: State,
    /// Bytes were handed to `std` since the last flush job (writes).
    need_flush: bool,
    /// The last read job read nothing: the end of input, which the next
    /// `poll_read` returns (reads).
    at_end: bool,
}

impl Blocking {
    fn new(stream: Stream) -> Blocking {
        Blocking {
            stream,
            state: State::Idle(Buf::default()),
            need_flush: false,
            at_end: false,
        }
    }

    /// Starts `job` on the blocking pool of the current runtime, with the
    /// buffer. Once the runtime is shutting down, the job is refused: the
    /// shutdown error (`is_rt_shutdown_err`), and the buffer kept.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    fn start(
        &mut self,
        mut buf: Buf,
        read: bool,
        job: impl FnOnce(&mut Buf) -> io::Result<usize> + Send + 'static,
    ) -> io::Result<()> {
        let Ok(handle) = crate::runtime::Handle::try_current() else {
            crate::runtime::context::no_runtime(format_args!(
                "`weft::io::{}` polled outside of a weft runtime: use it in a task, inside \
                 `Runtime::block_on`, or while a `Runtime::enter` guard is alive",
                self.stream.name()
            ))
        };
        if handle.shared.is_shutdown() {
            self.state = State::Idle(buf);
            return Err(shut_down());
        }
        let job = handle.spawn_blocking(move || {
            let result = job(&mut buf);
            (result, buf)
        });
        self.state = State::Busy { job, read };
        Ok(())
    }

    /// Waits for the job in flight, and puts its buffer back (`Idle`).
    /// Returns the job's error, if any: a write's error is reported by the
    /// next operation.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let State::Busy { job, read } = &mut self.state else {
            return Poll::Ready(Ok(()));
        };
        let read = *read;
        let (result, buf) = match ready!(Pin::new(job).poll(cx)) {
            Ok(done) => done,
            Err(error) => (Err(not_run(error, self.stream)), Buf::default()),
        };
        self.state = State::Idle(buf);
        let n = result?;
        if read && n == 0 {
            self.at_end = true;
        }
        Poll::Ready(Ok(()))
    }

    fn idle_buf(&mut self) -> &mut Buf {
        match &mut self.state {
            State::Idle(buf) => buf,
            State::Busy { .. } => unreachable!("called after poll_idle"),
        }
    }

    /// Reads up to `want` bytes through `put`: bytes a job read before,
    /// else the end of input a job found, else a new job's bytes.
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        want: usize,
        put: impl FnOnce(&[u8]),
    ) -> Poll<io::Result<usize>> {
        if want == 0 {
            return Poll::Ready(Ok(0));
        }
        loop {
            ready!(self.poll_idle(cx))?;
            if !self.idle_buf().unread().is_empty() {
                return Poll::Ready(Ok(self.idle_buf().take(want, put)));
            }
            if std::mem::take(&mut self.at_end) {
                return Poll::Ready(Ok(0));
            }
            let mut buf = std::mem::take(self.idle_buf());
            buf.bytes.resize(want.min(MAX_BUF), 0);
            buf.pos = 0;
            if let Err(error) = self.start(buf, true, |buf| Stream::read(&mut buf.bytes)) {
                return Poll::Ready(Err(error));
            }
        }
    }

    /// Waits for the job in flight (returning its error), then hands up to
    /// `MAX_BUF` bytes to a write job and returns at once.
    fn poll_write(&mut self, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_idle(cx))?;
        if bytes.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = bytes.len().min(MAX_BUF);
        let mut buf = std::mem::take(self.idle_buf());
        buf.bytes.clear();
        buf.bytes.extend_from_slice(&bytes[..n]);
        let stream = self.stream;
        if let Err(error) = self.start(buf, false, move |buf| {
            stream.write_all(&buf.bytes).map(|()| 0)
        }) {
            return Poll::Ready(Err(error));
        }
        self.need_flush = true;
        Poll::Ready(Ok(n))
    }

    /// Waits for the write in flight (returning its error), then has `std`
    /// flush its buffer on the pool, and waits for that.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_idle(cx))?;
            if !std::mem::take(&mut self.need_flush) {
                return Poll::Ready(Ok(()));
            }
            let buf = std::mem::take(self.idle_buf());
            let stream = self.stream;
            if let Err(error) = self.start(buf, false, move |_| stream.flush().map(|()| 0)) {
                return Poll::Ready(Err(error));
            }
        }
    }
}

/// The error of a job that did not run to its end: cancelled by the
/// runtime's shutdown (a panic in `std`'s I/O, a bug, is resumed).
fn not_run(error: JoinError, _stream: Stream) -> io::Error {
    if error.is_panic() {
        std::panic::resume_unwind(error.into_panic());
    }
    shut_down()
}

/// The runtime shut down before an operation on a standard stream could
/// run (`runtime::is_rt_shutdown_err` says so).
fn shut_down() -> io::Error {
    crate::runtime::shutdown_error_saying(
        "an operation on a `weft::io` standard stream did not run: its runtime has shut down",
    )
}

/// The process's standard input: futures-io's `AsyncRead` (tokio's with
/// the `tokio-io` feature). Each read runs one `std::io::stdin().read` on
/// the blocking pool (at most 2 MiB); bytes it read beyond what the caller
/// took are returned first by the next read. A read blocked on a terminal
/// nobody types in holds a pool thread, and runtime shutdown waits for it
/// up to its deadline (as with tokio): for interactive input, read stdin on
/// a thread of your own.
pub struct Stdin {
    std: io::Stdin,
    inner: Blocking,
}

/// The process's standard output: futures-io's `AsyncWrite` (tokio's with
/// the `tokio-io` feature), through `std::io::stdout()` (its buffer and
/// lock are shared with `println!`).
///
/// A write copies up to 2 MiB, starts a job on the blocking pool and
/// returns at once: the bytes are handed over, not yet written. The next
/// write, and `flush`, wait for that job, so one handle's writes land in
/// order, and a job's error is returned by the next write or `flush`.
/// **Flush** (or `close`/`shutdown`, which flush) to know the bytes were
/// written. Two handles are not ordered against each other.
pub struct Stdout {
    std: io::Stdout,
    inner: Blocking,
}

/// The process's standard error, through `std::io::stderr()`; writes are
/// handed over and ordered as [`Stdout`]'s.
pub struct Stderr {
    std: io::Stderr,
    inner: Blocking,
}

/// A handle to the process's standard input.
pub fn stdin() -> Stdin {
    Stdin {
        std: io::stdin(),
        inner: Blocking::new(Stream::In),
    }
}

/// A handle to the process's standard output.
pub fn stdout() -> Stdout {
    Stdout {
        std: io::stdout(),
        inner: Blocking::new(Stream::Out),
    }
}

/// A handle to the process's standard error.
pub fn stderr() -> Stderr {
    Stderr {
        std: io::stderr(),
        inner: Blocking::new(Stream::Err),
    }
}

impl futures_io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let want = buf.len();
        self.get_mut()
            .inner
            .poll_read(cx, want, |bytes| buf[..bytes.len()].copy_from_slice(bytes))
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let want = buf.remaining();
        ready!(
            self.get_mut()
                .inner
                .poll_read(cx, want, |bytes| buf.put_slice(bytes))
        )?;
        Poll::Ready(Ok(()))
    }
}

/// Both `AsyncWrite` traits for an output stream. `close`/`shutdown`
/// flush; the stream stays open.
macro_rules! impl_write {
    ($ty:ty) => {
        impl futures_io::AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().inner.poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().inner.poll_flush(cx)
            }

            fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().inner.poll_flush(cx)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().inner.poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().inner.poll_flush(cx)
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().inner.poll_flush(cx)
            }
        }
    };
}

impl_write!(Stdout);
impl_write!(Stderr);

/// `AsRawFd`, `AsFd` and `Debug` for each handle (the descriptor is
/// `std`'s: 0, 1 or 2).
macro_rules! impl_fd {
    ($ty:ident) => {
        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.std.as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.std.as_fd()
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }
    };
}

impl_fd!(Stdin);
impl_fd!(Stdout);
impl_fd!(Stderr);

/// Never called: a compile-time check.
#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync + Unpin>() {}
    is::<Stdin>();
    is::<Stdout>();
    is::<Stderr>();
}
