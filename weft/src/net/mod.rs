//! TCP, UDP and Unix-domain sockets on the runtime's reactor, with tokio's
//! names: [`TcpListener`], [`TcpStream`], [`UdpSocket`], [`UnixListener`],
//! [`UnixStream`], [`UnixDatagram`].
//!
//! Every socket is non-blocking, registered once with the reactor of the
//! runtime it was created in (`runtime/io/driver.rs`), and fails with an error once
//! that runtime has shut down. Errors are the OS's (`ConnectionRefused`,
//! `AddrInUse`, `ConnectionReset`, `BrokenPipe`); end of stream is
//! `Ok(0)`. Streams implement [`futures_io::AsyncRead`] and
//! [`futures_io::AsyncWrite`] (and tokio's traits with the `tokio-io`
//! feature).
//!
//! ```
//! use futures_io::{AsyncRead, AsyncWrite};
//! use weft::net::{TcpListener, TcpStream};
//! # use std::future::poll_fn;
//! # use std::pin::Pin;
//!
//! weft::runtime::Runtime::new().unwrap().block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//!     let addr = listener.local_addr().unwrap();
//!     let client = weft::spawn(async move {
//!         let mut stream = TcpStream::connect(addr).await.unwrap();
//!         poll_fn(|cx| Pin::new(&mut stream).poll_write(cx, b"hi")).await.unwrap();
//!     });
//!     let (mut stream, _peer) = listener.accept().await.unwrap();
//!     let mut buf = [0; 2];
//!     let n = poll_fn(|cx| Pin::new(&mut stream).poll_read(cx, &mut buf)).await.unwrap();
//!     assert_eq!(&buf[..n], b"hi");
//!     client.await.unwrap();
//! });
//! ```

mod addr;
mod split;
mod stream_io;
mod tcp;
mod udp;
mod unix;

pub use addr::ToSocketAddrs;
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};

/// The halves of a [`TcpStream`] (tokio's `tokio::net::tcp`).
pub mod tcp_split {
    super::split::halves!(TcpStream, std::net::SocketAddr);

    impl OwnedReadHalf {
        /// Reads without removing the data from the socket's queue.
        pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.stream().peek(buf).await
        }
    }
}

/// The halves of a [`UnixStream`] (tokio's `tokio::net::unix`).
pub mod unix_split {
    super::split::halves!(UnixStream, std::os::unix::net::SocketAddr);
}
