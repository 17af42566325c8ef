//! I/O: [`unix::AsyncFd`] for any file descriptor, [`Interest`] and
//! [`Ready`] (what a task waits for, what the reactor saw), and the I/O
//! traits.
//! The reactor that tells tasks when their sources are ready is the
//! engine's (`runtime/io/`); the socket types are in [`crate::net`].
//!
//! weft's streams implement the runtime-agnostic [`futures_io::AsyncRead`]
//! and [`futures_io::AsyncWrite`]; with the `tokio-io` feature also tokio's
//! `AsyncRead`/`AsyncWrite`, so tokio-util codecs and TLS crates work on
//! them.

#[cfg(not(loom))]
mod ready;
#[cfg(not(loom))]
mod stdio;
#[cfg(not(loom))]
pub mod unix;

pub use futures_io::{AsyncRead, AsyncWrite};
#[cfg(not(loom))]
pub use ready::{Interest, Ready};
#[cfg(not(loom))]
pub use stdio::{Stderr, Stdin, Stdout, stderr, stdin, stdout};
