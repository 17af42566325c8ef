//! [`SocketAddr`], the address of a Unix-domain socket (tokio's
//! `net::unix::SocketAddr`, a wrapper of `std`'s), and the one place a path
//! given to `bind`, `connect` or `send_to` becomes an address: on Linux a
//! path whose first byte is NUL (`"\0name"`) names `name` in the abstract
//! namespace (no file; gone when the last socket bound to it closes), as
//! in tokio and the C API.

use std::fmt;
use std::io;
use std::path::Path;

/// The address of a Unix-domain socket: a path, a name in Linux's
/// abstract namespace, or unnamed (an unbound socket, or a peer of
/// `socketpair`).
#[derive(Clone)]
pub struct SocketAddr(std::os::unix::net::SocketAddr);

impl SocketAddr {
    /// Whether the address is unnamed.
    pub fn is_unnamed(&self) -> bool {
        self.0.is_unnamed()
    }

    /// The path, if the address is one.
    pub fn as_pathname(&self) -> Option<&Path> {
        self.0.as_pathname()
    }

    /// The name in the abstract namespace (without its leading NUL), if
    /// the address is one (Linux).
    #[cfg(target_os = "linux")]
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        std::os::linux::net::SocketAddrExt::as_abstract_name(&self.0)
    }
}

impl fmt::Debug for SocketAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<std::os::unix::net::SocketAddr> for SocketAddr {
    fn from(addr: std::os::unix::net::SocketAddr) -> SocketAddr {
        SocketAddr(addr)
    }
}

impl From<SocketAddr> for std::os::unix::net::SocketAddr {
    fn from(addr: SocketAddr) -> std::os::unix::net::SocketAddr {
        addr.0
    }
}

impl SocketAddr {
    /// `std`'s address, for `mio`'s and `std`'s `*_addr` calls.
    pub(super) fn as_std(&self) -> &std::os::unix::net::SocketAddr {
        &self.0
    }
}

/// The address `path` names: abstract if its first byte is NUL (Linux),
/// otherwise a path (`InvalidInput` if too long or NUL inside).
pub(super) fn from_path(path: &Path) -> io::Result<SocketAddr> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Some((0, name)) = path.as_os_str().as_bytes().split_first() {
            return <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(name)
                .map(SocketAddr);
        }
    }
    std::os::unix::net::SocketAddr::from_pathname(path).map(SocketAddr)
}
