//! [`UnixListener`].

use std::fmt;
use std::io;
use std::path::Path;
use std::task::{Context, Poll, ready};

use super::addr::from_path;
use super::{SocketAddr, UnixStream};
use crate::net::evented::{Direction, PollEvented};

/// A Unix-domain socket listening for connections.
///
/// ```
/// use weft::net::{UnixListener, UnixStream};
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let path = std::env::temp_dir().join(format!("weft-doc-{}.sock", std::process::id()));
///     let _ = std::fs::remove_file(&path);
///     let listener = UnixListener::bind(&path).unwrap();
///     let client = weft::spawn({
///         let path = path.clone();
///         async move { UnixStream::connect(path).await }
///     });
///     let (_stream, _addr) = listener.accept().await.unwrap();
///     client.await.unwrap().unwrap();
///     std::fs::remove_file(&path).unwrap();
/// });
/// ```
pub struct UnixListener {
    io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds to `path` (which must not exist; on Linux `"\0name"` is
    /// `name` in the abstract namespace) and listens. Not async: the
    /// kernel does it at once (as tokio's).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        UnixListener::bind_addr(&from_path(path.as_ref())?)
    }

    /// Binds to `addr` and listens.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn bind_addr(addr: &SocketAddr) -> io::Result<UnixListener> {
        let listener = mio::net::UnixListener::bind_addr(addr.as_std())?;
        Ok(UnixListener {
            io: PollEvented::new(listener, "UnixListener::bind")?,
        })
    }

    /// Waits for a connection; returns it and the peer's address (unnamed
    /// unless the peer bound its socket).
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .async_io(Direction::Read, |listener| listener.accept())
            .await?;
        self.adopt(stream, addr)
    }

    /// `accept` in `poll` form (only the last task to call it is woken).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        let (stream, addr) = ready!(self.io.poll_io(cx, Direction::Read, |l| l.accept()))?;
        Poll::Ready(self.adopt(stream, addr))
    }

    /// An accepted connection, registered with this listener's runtime.
    fn adopt(
        &self,
        stream: mio::net::UnixStream,
        addr: std::os::unix::net::SocketAddr,
    ) -> io::Result<(UnixStream, SocketAddr)> {
        let stream = UnixStream::from_mio(stream, self.io.runtime().clone())?;
        crate::net::evented::assume_accepted(&stream.io);
        Ok((stream, addr.into()))
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr().map(SocketAddr::from)
    }

    /// The pending socket error (`SO_ERROR`), cleared by reading it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }
}

crate::net::evented::std_conversions!(
    UnixListener,
    std::os::unix::net::UnixListener,
    mio::net::UnixListener
);
crate::net::evented::impl_fd!(UnixListener);

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}
