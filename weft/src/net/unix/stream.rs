//! [`UnixStream`]. Its readiness and `try_*` methods, `split` and
//! `into_split` are written once for both streams and their halves
//! (`split.rs`, `evented.rs`).

use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::path::Path;

use super::addr::from_path;
use super::{SocketAddr, UCred};
use crate::net::evented::{Direction, PollEvented, RuntimeRef, current_runtime};

/// A Unix-domain stream socket; reads and writes through the
/// `futures_io` traits (and tokio's with `tokio-io`).
pub struct UnixStream {
    pub(in crate::net) io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    /// Connects to the socket at `path` (on Linux `"\0name"` is `name` in
    /// the abstract namespace).
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (looked up at the first poll).
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let addr = from_path(path.as_ref());
        UnixStream::connect_addr(&addr?).await
    }

    /// Connects to the socket at `addr`.
    ///
    /// # Panics
    ///
    /// When polled outside a runtime context (looked up at the first poll).
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        let stream = mio::net::UnixStream::connect_addr(addr.as_std())?;
        UnixStream::finish_connect(stream, "UnixStream::connect").await
    }

    /// Registers a socket whose connect has begun with the current runtime
    /// (`what` names the caller in the panic outside one), waits until it
    /// is writable and reports the connect's error.
    pub(super) async fn finish_connect(
        stream: mio::net::UnixStream,
        what: &str,
    ) -> io::Result<UnixStream> {
        let stream = UnixStream::from_mio(stream, current_runtime(what))?;
        stream.io.ready(Direction::Write).await?;
        if let Some(error) = stream.io.get_ref().take_error()? {
            return Err(error);
        }
        Ok(stream)
    }

    /// Registers `stream` with `shared`'s reactor.
    pub(super) fn from_mio(
        stream: mio::net::UnixStream,
        shared: RuntimeRef,
    ) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollEvented::with_runtime(stream, shared)?,
        })
    }

    /// A connected pair of streams.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let shared = current_runtime("UnixStream::pair");
        let (a, b) = mio::net::UnixStream::pair()?;
        let (a, b) = (
            UnixStream::from_mio(a, shared.clone())?,
            UnixStream::from_mio(b, shared)?,
        );
        crate::net::evented::assume_writable(&a.io);
        crate::net::evented::assume_writable(&b.io);
        Ok((a, b))
    }

    /// This end's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr().map(SocketAddr::from)
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr().map(SocketAddr::from)
    }

    /// The credentials of the peer process, as the kernel recorded them
    /// when the connection was made (`SO_PEERCRED`; Linux).
    pub fn peer_cred(&self) -> io::Result<UCred> {
        super::ucred::peer_cred(self.io.get_ref().as_fd())
    }

    /// The pending socket error (`SO_ERROR`), cleared by reading it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Shuts down the read side, the write side, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }
}

crate::net::evented::std_conversions!(
    UnixStream,
    std::os::unix::net::UnixStream,
    mio::net::UnixStream
);
crate::net::evented::impl_fd!(UnixStream);
crate::net::stream_io::impl_stream_io!(UnixStream, |this| &this.io);

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}
