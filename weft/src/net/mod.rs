//! TCP, UDP and Unix-domain sockets on the runtime's reactor, with tokio's
//! names: [`TcpListener`], [`TcpStream`], [`TcpSocket`], [`UdpSocket`],
//! [`UnixListener`], [`UnixStream`], [`UnixDatagram`], [`UnixSocket`],
//! [`lookup_host`], Unix [`pipe`](unix::pipe)s;
//! the halves of a stream in [`tcp`] and [`unix`].
//!
//! Every socket is non-blocking, registered once with the reactor of the
//! runtime it was created in (`runtime/io/driver.rs`), and fails with an error once
//! that runtime has shut down. Errors are the OS's (`ConnectionRefused`,
//! `AddrInUse`, `ConnectionReset`, `BrokenPipe`); end of stream is
//! `Ok(0)`. Streams implement [`futures_io::AsyncRead`] and
//! [`futures_io::AsyncWrite`] (and tokio's traits with the `tokio-io`
//! feature).
//!
//! Layout: `evented.rs` is the one place `net/` names the engine (the
//! reactor's `PollEvented`) and holds what the socket types share, written
//! once (a stream's readiness and `try_*` methods, a datagram socket's
//! `send`/`recv` family, `from_std`/`into_std`); `split.rs` the halves;
//! `addr.rs` address resolution; `tcp/`, `udp.rs` and `unix/` the types.
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
mod evented;
mod split;
mod stream_io;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{ToSocketAddrs, lookup_host};
pub use tcp::listener::TcpListener;
pub use tcp::socket::TcpSocket;
pub use tcp::stream::TcpStream;
pub use udp::UdpSocket;
pub use unix::datagram::UnixDatagram;
pub use unix::listener::UnixListener;
pub use unix::socket::UnixSocket;
pub use unix::stream::UnixStream;

/// The halves of a [`TcpStream`], now at tokio's path, [`tcp`]: the old
/// names, kept as deprecated aliases.
pub mod tcp_split {
    super::split::deprecated_aliases!(tcp);
}

/// The halves of a [`UnixStream`], now at tokio's path, [`unix`]: the old
/// names, kept as deprecated aliases.
pub mod unix_split {
    super::split::deprecated_aliases!(unix);
}
