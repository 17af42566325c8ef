//! The halves of a stream: borrowed (`ReadHalf`, `WriteHalf`, no
//! allocation) and owned (`OwnedReadHalf`, `OwnedWriteHalf`, one `Arc`),
//! for [`TcpStream`](super::TcpStream) (`weft::net::tcp_split`) and
//! [`UnixStream`](super::UnixStream) (`weft::net::unix_split`). Reading and
//! writing a socket at once needs no lock: the reactor keeps a waker per
//! direction (`runtime/io/scheduled_io.rs`).

/// The half types of one stream type, in the module it is invoked in:
/// `halves!(Stream, Address)`.
macro_rules! halves {
    ($stream:ident, $addr:ty) => {
        use std::error::Error;
        use std::fmt;
        use std::io;
        use std::net::Shutdown;
        use std::sync::Arc;

        use super::$stream;
        use super::stream_io::{impl_read, impl_write};

        #[doc = concat!("The read half of [`", stringify!($stream), "::split`].")]
        #[derive(Debug)]
        pub struct ReadHalf<'a>(&'a $stream);

        #[doc = concat!("The write half of [`", stringify!($stream), "::split`]. `close` (`shutdown` in tokio's trait) shuts the stream's write side down.")]
        #[derive(Debug)]
        pub struct WriteHalf<'a>(&'a $stream);

        #[doc = concat!("The read half of [`", stringify!($stream), "::into_split`].")]
        #[derive(Debug)]
        pub struct OwnedReadHalf {
            inner: Arc<$stream>,
        }

        #[doc = concat!("The write half of [`", stringify!($stream), "::into_split`]. Dropping it shuts the write side down (the peer reads end of stream), as tokio's does.")]
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            inner: Arc<$stream>,
            shutdown_on_drop: bool,
        }

        /// [`OwnedReadHalf::reunite`] was given halves of two different
        /// streams.
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tried to reunite halves that are not from the same socket")
            }
        }

        impl Error for ReuniteError {}

        pub(in crate::net) fn split(stream: &mut $stream) -> (ReadHalf<'_>, WriteHalf<'_>) {
            (ReadHalf(stream), WriteHalf(stream))
        }

        pub(in crate::net) fn into_split(stream: $stream) -> (OwnedReadHalf, OwnedWriteHalf) {
            let inner = Arc::new(stream);
            (
                OwnedReadHalf {
                    inner: inner.clone(),
                },
                OwnedWriteHalf {
                    inner,
                    shutdown_on_drop: true,
                },
            )
        }

        impl ReadHalf<'_> {
            /// The peer's address.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.0.peer_addr()
            }

            /// This end's address.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.0.local_addr()
            }
        }

        impl WriteHalf<'_> {
            /// The peer's address.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.0.peer_addr()
            }

            /// This end's address.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.0.local_addr()
            }
        }

        impl OwnedReadHalf {
            /// Puts the stream back together; fails if `write` is another
            /// stream's half.
            pub fn reunite(self, write: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                if !Arc::ptr_eq(&self.inner, &write.inner) {
                    return Err(ReuniteError(self, write));
                }
                let mut write = write;
                write.shutdown_on_drop = false;
                let inner = write.inner.clone();
                drop(write);
                drop(self);
                Ok(Arc::into_inner(inner).expect("both halves were just dropped"))
            }

            /// The peer's address.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.inner.peer_addr()
            }

            /// This end's address.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.inner.local_addr()
            }

            /// The whole stream, for what the halves do not offer (TCP's
            /// `peek`; unused for Unix streams).
            #[allow(dead_code)]
            fn stream(&self) -> &$stream {
                &self.inner
            }
        }

        impl OwnedWriteHalf {
            /// Puts the stream back together (see [`OwnedReadHalf::reunite`]).
            pub fn reunite(self, read: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                read.reunite(self)
            }

            /// Drops the half without shutting the write side down.
            pub fn forget(mut self) {
                self.shutdown_on_drop = false;
            }

            /// The peer's address.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.inner.peer_addr()
            }

            /// This end's address.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.inner.local_addr()
            }
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    let _ = self.inner.shutdown(Shutdown::Write);
                }
            }
        }

        impl_read!(ReadHalf<'_>, |this| &this.0.io);
        impl_write!(WriteHalf<'_>, |this| &this.0.io, |closer| closer
            .0
            .shutdown(Shutdown::Write));
        impl_read!(OwnedReadHalf, |this| &this.inner.io);
        impl_write!(OwnedWriteHalf, |this| &this.inner.io, |closer| closer
            .inner
            .shutdown(Shutdown::Write));
    };
}

pub(super) use halves;
