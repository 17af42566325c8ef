//! A child's pipes as async streams: [`ChildStdin`] (write),
//! [`ChildStdout`] and [`ChildStderr`] (read), each this process's end of
//! a pipe, set non-blocking and registered with the reactor through
//! [`AsyncFd`].
//!
//! Only this process's end changes mode: a pipe's two ends are separate
//! open files, so the child's end stays blocking. `into_owned_fd` (and
//! the conversion into `Stdio`, to give the pipe to another child) takes
//! the end off the reactor and makes it blocking again, since a program
//! that inherits it expects a blocking descriptor. Closing: dropping the
//! handle closes the pipe (the child then reads end of input, or gets
//! `SIGPIPE`/`EPIPE` on a write); `close`/`shutdown` on [`ChildStdin`] only
//! report success, as tokio's, and `flush` has nothing to do (no user-space
//! buffer).

use std::fs::File;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll, ready};

use crate::io::unix::AsyncFd;

/// This process's end of one pipe, on the reactor. Held as a `File` for
/// its `Read`/`Write` on `&File` (plain `read(2)`/`write(2)`).
struct Pipe {
    fd: AsyncFd<File>,
}

impl Pipe {
    /// Sets `fd` non-blocking and registers it with the current runtime's
    /// reactor (so this panics outside a runtime).
    #[track_caller]
    fn new(fd: OwnedFd) -> io::Result<Pipe> {
        set_nonblocking(fd.as_fd(), true)?;
        Ok(Pipe {
            fd: AsyncFd::new(File::from(fd))?,
        })
    }

    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().read(buf)) {
                return Poll::Ready(result);
            }
        }
    }

    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().write(buf)) {
                return Poll::Ready(result);
            }
        }
    }

    fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().write_vectored(bufs)) {
                return Poll::Ready(result);
            }
        }
    }

    /// Off the reactor, blocking again.
    fn into_owned_fd(self) -> io::Result<OwnedFd> {
        let fd = OwnedFd::from(self.fd.into_inner());
        set_nonblocking(fd.as_fd(), false)?;
        Ok(fd)
    }

    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.get_ref().as_fd()
    }
}

/// Sets or clears `O_NONBLOCK` on `fd`'s open file.
fn set_nonblocking(fd: BorrowedFd<'_>, nonblocking: bool) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: `F_GETFL` reads no memory of ours; `fd` is open (borrowed).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let wanted = if nonblocking {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    if wanted == flags {
        return Ok(());
    }
    // SAFETY: `F_SETFL` with an int argument reads no memory of ours; `fd`
    // is open (borrowed).
    if unsafe { libc::fcntl(fd, libc::F_SETFL, wanted) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The write end of a child's stdin: futures-io's `AsyncWrite` (and
/// tokio's with the `tokio-io` feature). Drop it to close the child's
/// input ([`Child::wait`](super::Child::wait) does it for you).
pub struct ChildStdin {
    pipe: Pipe,
}

/// The read end of a child's stdout: futures-io's `AsyncRead` (and
/// tokio's with the `tokio-io` feature). End of stream (`Ok(0)`) once the
/// child, and every process it gave its stdout to, has closed it.
pub struct ChildStdout {
    pipe: Pipe,
}

/// The read end of a child's stderr, as [`ChildStdout`].
pub struct ChildStderr {
    pipe: Pipe,
}

/// The methods and conversions each of the three has (tokio's).
macro_rules! pipe_end {
    ($ty:ident, $std:ty) => {
        impl $ty {
            /// Wraps a `std` pipe end: sets it non-blocking and registers
            /// it with the current runtime's reactor.
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_std(inner: $std) -> io::Result<$ty> {
                Ok($ty {
                    pipe: Pipe::new(OwnedFd::from(inner))?,
                })
            }

            /// The pipe end, off the reactor and back in blocking mode.
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                self.pipe.into_owned_fd()
            }
        }

        /// The pipe end, blocking again, for another child:
        /// `Command::new("wc").stdin(stdout.try_into()?)`.
        impl TryFrom<$ty> for Stdio {
            type Error = io::Error;

            fn try_from(end: $ty) -> io::Result<Stdio> {
                end.into_owned_fd().map(Stdio::from)
            }
        }

        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.pipe.as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.pipe.as_fd()
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("fd", &self.pipe.as_raw_fd())
                    .finish()
            }
        }
    };
}

pipe_end!(ChildStdin, std::process::ChildStdin);
pipe_end!(ChildStdout, std::process::ChildStdout);
pipe_end!(ChildStderr, std::process::ChildStderr);

impl ChildStdout {
    /// `poll_read` without a `Pin` (for `wait_with_output`).
    pub(super) fn poll_read_bytes(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_read(cx, buf)
    }
}

impl ChildStderr {
    /// `poll_read` without a `Pin` (for `wait_with_output`).
    pub(super) fn poll_read_bytes(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_read(cx, buf)
    }
}

/// Both `AsyncRead` traits for a read end.
macro_rules! impl_read {
    ($ty:ty) => {
        impl futures_io::AsyncRead for $ty {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.pipe.poll_read(cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncRead for $ty {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let n = ready!(self.pipe.poll_read(cx, buf.initialize_unfilled()))?;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
        }
    };
}

impl_read!(ChildStdout);
impl_read!(ChildStderr);

impl futures_io::AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Reports success and leaves the pipe open: drop the `ChildStdin` to
    /// close it.
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Reports success and leaves the pipe open: drop the `ChildStdin` to
    /// close it.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
