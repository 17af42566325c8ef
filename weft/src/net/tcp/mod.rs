//! TCP: the halves of a [`TcpStream`] at tokio's path (`tokio::net::tcp`).
//! The socket types themselves, [`TcpListener`], [`TcpStream`] and
//! [`TcpSocket`], are in [`crate::net`].

pub(super) mod listener;
pub(super) mod socket;
pub(super) mod stream;

use listener::TcpListener;
use socket::TcpSocket;

super::split::halves!(TcpStream, std::net::SocketAddr);

/// `peek` and `poll_peek` for a read half (through its `stream()`).
macro_rules! peek_methods {
    () => {
        /// Reads without removing the data from the socket's queue; waits
        /// until some is there. `Ok(0)`: end of stream.
        pub async fn peek(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.stream().peek(buf).await
        }

        /// `peek` in `poll` form (see [`TcpStream::poll_peek`]). With the
        /// `tokio-io` feature.
        #[cfg(feature = "tokio-io")]
        pub fn poll_peek(
            &mut self,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.stream().poll_peek(cx, buf)
        }
    };
}

impl ReadHalf<'_> {
    peek_methods!();
}

impl OwnedReadHalf {
    peek_methods!();
}
