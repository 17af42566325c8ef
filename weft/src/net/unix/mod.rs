//! Unix-domain sockets: the halves of a [`UnixStream`] at tokio's path
//! (`tokio::net::unix`), a Unix socket's [`SocketAddr`], and a peer's
//! credentials, [`UCred`]. The socket types themselves,
//! [`UnixListener`](crate::net::UnixListener), [`UnixStream`] and
//! [`UnixDatagram`](crate::net::UnixDatagram), are in [`crate::net`];
//! pipes and FIFOs in [`pipe`].
//!
//! Paths are bound and connected synchronously in the kernel (no lookup),
//! so only waiting for a peer is async. On Linux a path whose first byte
//! is NUL (`"\0name"`) is a name in the abstract namespace (`addr.rs`).

mod addr;
pub(super) mod datagram;
pub(super) mod listener;
pub mod pipe;
pub(super) mod socket;
pub(super) mod stream;
mod ucred;

pub use addr::SocketAddr;
pub use ucred::UCred;

/// A user id (`uid_t`).
#[allow(non_camel_case_types)]
pub type uid_t = u32;

/// A group id (`gid_t`).
#[allow(non_camel_case_types)]
pub type gid_t = u32;

/// A process id (`pid_t`).
#[allow(non_camel_case_types)]
pub type pid_t = i32;

super::split::halves!(UnixStream, SocketAddr);
