//! `tokio::io`: tokio's traits and utilities (from tokio's release), the
//! standard streams on weft's blocking pool, and [`unix::AsyncFd`] on
//! weft's reactor.

pub use tokio_upstream::io::{
    copy, copy_bidirectional, copy_bidirectional_with_sizes, copy_buf, duplex, empty, join, repeat,
    simplex, sink, split, AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeek,
    AsyncSeekExt, AsyncWrite, AsyncWriteExt, BufReader, BufStream, BufWriter, Chain, DuplexStream,
    Empty, Error, ErrorKind, Join, Lines, ReadBuf, ReadHalf, Repeat, Result, SeekFrom,
    SimplexStream, Sink, Split, Take, WriteHalf,
};

/// What a task waits for and what the reactor saw: weft's (`ready`,
/// `try_io`, `async_io` of the sockets and of [`unix::AsyncFd`] take and
/// return them).
pub use weft::io::{Interest, Ready};

use crate::io_adapt::{impl_async_read, impl_async_write, impl_fd, wrapper};

wrapper!(
    /// The process's standard input, read on the blocking pool.
    Stdin,
    weft::io::Stdin
);
wrapper!(
    /// The process's standard output, written on the blocking pool.
    Stdout,
    weft::io::Stdout
);
wrapper!(
    /// The process's standard error, written on the blocking pool.
    Stderr,
    weft::io::Stderr
);
impl_async_read!(Stdin, inner);
impl_async_write!(Stdout, inner);
impl_async_write!(Stderr, inner);
impl_fd!(Stdin);
impl_fd!(Stdout);
impl_fd!(Stderr);

/// The process's standard input.
pub fn stdin() -> Stdin {
    weft::io::stdin().into()
}

/// The process's standard output.
pub fn stdout() -> Stdout {
    weft::io::stdout().into()
}

/// The process's standard error.
pub fn stderr() -> Stderr {
    weft::io::stderr().into()
}

/// Readiness of any file descriptor on weft's reactor.
pub mod unix {
    pub use weft::io::unix::{
        AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, AsyncFdRegisterError, AsyncFdTryNewError,
        TryIoError,
    };
}
