//! I/O: the reactor that tells tasks when their sockets are ready, and
//! [`unix::AsyncFd`] for any other file descriptor.
//!
//! Layers: `scheduled_io.rs` (one source's readiness word and waiters: the
//! lock-free protocol, loom-checked), `driver.rs` (the OS poller, who waits
//! in it, the lifetime of sources), `poll_evented.rs` (the readiness loop
//! every socket operation runs), `registrations.rs` (the count of sources and
//! the first one's handshake with the timekeeper, loom-checked). The socket types are in [`crate::net`].
//!
//! weft's streams implement the runtime-agnostic [`futures_io::AsyncRead`]
//! and [`futures_io::AsyncWrite`]; with the `tokio-io` feature also tokio's
//! `AsyncRead`/`AsyncWrite`, so tokio-util codecs and TLS crates work on
//! them.

#[cfg(not(loom))]
pub(crate) mod driver;
#[cfg(not(loom))]
pub(crate) mod poll_evented;
// Under loom only its model uses it (the reactor needs the OS poller).
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod registrations;
// Under loom only its models use it (the reactor needs the OS poller).
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod scheduled_io;
#[cfg(not(loom))]
mod stdio;
#[cfg(not(loom))]
pub mod unix;

pub use futures_io::{AsyncRead, AsyncWrite};
#[cfg(not(loom))]
pub use stdio::{Stderr, Stdin, Stdout, stderr, stdin, stdout};

/// Workers per epoll instance by default (`Builder::io_shards`).
pub(crate) const WORKERS_PER_SHARD: usize = 8;
