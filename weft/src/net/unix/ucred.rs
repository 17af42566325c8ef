//! [`UCred`]: the credentials of the process at the other end of a Unix
//! stream, as the kernel recorded them when the connection was made
//! (`SO_PEERCRED` on Linux): not forgeable by the peer, and not updated if
//! it later changes its ids.

use std::io;
use std::os::fd::BorrowedFd;

use super::{gid_t, pid_t, uid_t};

/// The credentials of a Unix stream's peer ([`UnixStream::peer_cred`]).
///
/// [`UnixStream::peer_cred`]: crate::net::UnixStream::peer_cred
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UCred {
    uid: uid_t,
    gid: gid_t,
    pid: Option<pid_t>,
}

impl UCred {
    /// The peer's effective user id.
    pub fn uid(&self) -> uid_t {
        self.uid
    }

    /// The peer's effective group id.
    pub fn gid(&self) -> gid_t {
        self.gid
    }

    /// The peer's process id, where the system tells it (always on Linux).
    pub fn pid(&self) -> Option<pid_t> {
        self.pid
    }
}

/// `SO_PEERCRED` of the connected Unix socket `fd`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn peer_cred(fd: BorrowedFd<'_>) -> io::Result<UCred> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // `fd` is an open descriptor for the call (borrowed); the kernel writes
    // at most `len` bytes (the size of `cred`, a plain C struct it may fill
    // in full) to `cred` and the new length to `len`.
    // SAFETY: an open fd and two live locals borrowed for the call (above).
    let result = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            std::ptr::from_mut(&mut cred).cast(),
            &mut len,
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UCred {
        uid: cred.uid,
        gid: cred.gid,
        pid: Some(cred.pid),
    })
}

/// Elsewhere `getpeereid` would give the ids (no process id); not written
/// yet, as weft is built and tested on Linux only.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn peer_cred(_fd: BorrowedFd<'_>) -> io::Result<UCred> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "peer credentials are read on Linux only",
    ))
}
