//! Unix pipes and FIFOs on the reactor, tokio's `tokio::net::unix::pipe`:
//! [`pipe`] makes an anonymous one, [`OpenOptions`] opens a FIFO's end,
//! [`Sender::from_file`]/[`Receiver::from_file`] take an open one.
//!
//! # Invariants
//!
//! - An end is non-blocking while registered: `pipe` and `OpenOptions`
//!   open it so, `from_file`/`from_owned_fd` set `O_NONBLOCK` (the
//!   `_unchecked` forms trust the caller). `into_blocking_fd` clears it
//!   after deregistering.
//! - The checked constructors refuse what is not a pipe or FIFO, and an
//!   end whose access mode cannot do its job (`InvalidInput`), before
//!   registering anything.
//! - Readiness rules are the sockets' (`evented.rs`): the `try_*` forms
//!   never wait, the `poll_*` forms keep one waker per direction.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use mio::unix::pipe as mio_pipe;

use crate::net::evented::{Direction, PollEvented};

/// An anonymous pipe: its write end (writable at once) and its read end,
/// registered with the current runtime.
///
/// # Panics
///
/// Outside a runtime context.
#[track_caller]
pub fn pipe() -> io::Result<(Sender, Receiver)> {
    let (tx, rx) = mio_pipe::new()?;
    let tx = Sender {
        io: PollEvented::new(tx, "pipe::pipe")?,
    };
    // Empty, so writable: no wait for the reactor's first event.
    crate::net::evented::assume_writable(&tx.io);
    let rx = Receiver {
        io: PollEvented::new(rx, "pipe::pipe")?,
    };
    Ok((tx, rx))
}

/// How to open a FIFO's end ([`open_receiver`](OpenOptions::open_receiver),
/// [`open_sender`](OpenOptions::open_sender)).
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    read_write: bool,
    unchecked: bool,
}

impl OpenOptions {
    /// Read-only receivers, write-only senders, a FIFO check.
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Opens the FIFO for reading and writing (Linux): a sender opens with
    /// no reader there, a receiver never sees end of stream.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn read_write(&mut self, value: bool) -> &mut OpenOptions {
        self.read_write = value;
        self
    }

    /// Skips the check that the path is a FIFO (a character device that
    /// acts as one, say).
    pub fn unchecked(&mut self, value: bool) -> &mut OpenOptions {
        self.unchecked = value;
        self
    }

    /// Opens the FIFO at `path` for reading. Without a writer, reads say
    /// end of stream (`Ok(0)`) until one opens.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn open_receiver(&self, path: impl AsRef<Path>) -> io::Result<Receiver> {
        Receiver::from_owned_fd_unchecked(self.open(path.as_ref(), false)?.into())
    }

    /// Opens the FIFO at `path` for writing; fails (`ENXIO`) while nobody
    /// has it open for reading, unless [`read_write`](Self::read_write).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn open_sender(&self, path: impl AsRef<Path>) -> io::Result<Sender> {
        Sender::from_owned_fd_unchecked(self.open(path.as_ref(), true)?.into())
    }

    fn open(&self, path: &Path, write: bool) -> io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        options
            .read(!write)
            .write(write)
            .custom_flags(libc::O_NONBLOCK);
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.read_write {
            options.read(true).write(true);
        }
        let file = options.open(path)?;
        if !self.unchecked && !is_pipe(file.as_fd())? {
            return Err(not_a_pipe());
        }
        Ok(file)
    }
}

/// The write end of a pipe or FIFO.
pub struct Sender {
    io: PollEvented<mio_pipe::Sender>,
}

/// The read end of a pipe or FIFO.
pub struct Receiver {
    io: PollEvented<mio_pipe::Receiver>,
}

/// The constructors both ends share: `$write` is whether the end writes.
macro_rules! constructors {
    ($end:ident, $mio:ty, $write:expr, $mode:literal) => {
        impl $end {
            /// Takes an open pipe or FIFO end (made non-blocking here);
            /// `InvalidInput` if it is not a pipe or cannot go this way.
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_file(file: File) -> io::Result<$end> {
                $end::from_owned_fd(file.into())
            }

            /// `from_file` for an `OwnedFd`.
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_owned_fd(fd: OwnedFd) -> io::Result<$end> {
                if !is_pipe(fd.as_fd())? {
                    return Err(not_a_pipe());
                }
                let flags = file_flags(fd.as_fd())?;
                if !can_go(flags, $write) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        concat!("not in ", $mode, " or O_RDWR access mode"),
                    ));
                }
                set_flags(fd.as_fd(), flags | libc::O_NONBLOCK)?;
                $end::from_owned_fd_unchecked(fd)
            }

            /// `from_file` without the checks: the caller vouches that it
            /// is a non-blocking end of the right kind.
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_file_unchecked(file: File) -> io::Result<$end> {
                $end::from_owned_fd_unchecked(file.into())
            }

            /// `from_owned_fd` without the checks.
            ///
            /// # Panics
            ///
            /// Outside a runtime context.
            #[track_caller]
            pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<$end> {
                Ok($end {
                    io: PollEvented::new(<$mio>::from(fd), concat!("pipe::", stringify!($end)))?,
                })
            }

            /// Deregisters the end and gives its descriptor back, blocking
            /// again.
            pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
                let fd = self.into_nonblocking_fd()?;
                let flags = file_flags(fd.as_fd())?;
                set_flags(fd.as_fd(), flags & !libc::O_NONBLOCK)?;
                Ok(fd)
            }

            /// Deregisters the end and gives its descriptor back, still
            /// non-blocking.
            pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
                Ok(OwnedFd::from(self.io.into_inner()))
            }

            $crate::net::evented::ready_method!(|this| &this.io);
        }

        impl std::fmt::Debug for $end {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($end))
                    .field("fd", &self.as_raw_fd())
                    .finish()
            }
        }

        impl AsRawFd for $end {
            fn as_raw_fd(&self) -> RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }

        impl AsFd for $end {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.io.get_ref().as_fd()
            }
        }
    };
}

constructors!(Sender, mio_pipe::Sender, true, "O_WRONLY");
constructors!(Receiver, mio_pipe::Receiver, false, "O_RDONLY");

impl Sender {
    crate::net::evented::stream_write_methods!(|this| &this.io);

    /// Runs `f` (a write of the caller's on this pipe) if it is known
    /// writable, without waiting: `WouldBlock` otherwise, and a
    /// `WouldBlock` from `f` forgets the readiness.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.try_io(Direction::Write, |_| f())
    }
}

impl Receiver {
    crate::net::evented::stream_read_methods!(|this| &this.io);

    /// Runs `f` (a read of the caller's on this pipe) if it is known
    /// readable, without waiting: `WouldBlock` otherwise, and a
    /// `WouldBlock` from `f` forgets the readiness.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.try_io(Direction::Read, |_| f())
    }
}

impl futures_io::AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(cx, Direction::Write, |mut tx| tx.write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(cx, Direction::Write, |mut tx| tx.write_vectored(bufs))
    }

    /// Nothing is buffered here.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// A pipe has no write side to shut down apart from closing it (drop
    /// the `Sender`): nothing to do.
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl futures_io::AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_io(cx, Direction::Read, |mut rx| rx.read(buf))
    }
}

fn not_a_pipe() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a pipe")
}

/// Whether `fd` is a pipe or FIFO.
fn is_pipe(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `fstat` writes a whole `stat` into the memory given, which
    // is sized for one; `fd` is open for the borrow.
    if unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fstat` succeeded, so it initialized `stat`.
    let stat = unsafe { stat.assume_init() };
    Ok(stat.st_mode & libc::S_IFMT == libc::S_IFIFO)
}

/// `fd`'s file status flags (`F_GETFL`).
fn file_flags(fd: BorrowedFd<'_>) -> io::Result<libc::c_int> {
    // SAFETY: `F_GETFL` reads no memory of ours; `fd` is open.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(flags)
}

/// Sets `fd`'s file status flags (`F_SETFL`).
fn set_flags(fd: BorrowedFd<'_>, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: `F_SETFL` reads no memory of ours; `fd` is open.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether access mode `flags` allows writing (`write`) or reading.
fn can_go(flags: libc::c_int, write: bool) -> bool {
    let mode = flags & libc::O_ACCMODE;
    mode == libc::O_RDWR
        || mode
            == if write {
                libc::O_WRONLY
            } else {
                libc::O_RDONLY
            }
}
