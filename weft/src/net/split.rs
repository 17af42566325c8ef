//! The halves of a stream: borrowed (`ReadHalf`, `WriteHalf`, no
//! allocation) and owned (`OwnedReadHalf`, `OwnedWriteHalf`, one `Arc`),
//! for [`TcpStream`](super::TcpStream) (`weft::net::tcp`) and
//! [`UnixStream`](super::UnixStream) (`weft::net::unix`), tokio's paths.
//! Reading and writing a socket at once needs no lock: the reactor keeps a
//! waker per direction (`io/scheduled_io.rs`). A read half has the
//! stream's read-side methods (`readable`, `try_read`, ...), a write half
//! its write-side ones, the same code as the stream's
//! (`evented.rs`).

/// The half types of one stream type, in the module it is invoked in
/// (`halves!(Stream, Address)`), and the stream's own methods the halves
/// share: its readiness and `try_*` methods, `split`, `into_split`.
macro_rules! halves {
    ($stream:ident, $addr:ty) => {
        use std::error::Error;
        use std::fmt;
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

        impl $stream {
            $crate::net::evented::stream_read_methods!(|this| &this.io);
            $crate::net::evented::stream_write_methods!(|this| &this.io);
            $crate::net::evented::interest_methods!(|this| &this.io);

            /// Borrowed read and write halves, usable from two futures of
            /// one task at once (`select`/`join`); no allocation.
            pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
                (ReadHalf(self), WriteHalf(self))
            }

            /// Owned halves, movable to two tasks;
            /// [`OwnedReadHalf::reunite`] puts them back together.
            pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
                let inner = Arc::new(self);
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
        }

        impl ReadHalf<'_> {
            fn stream(&self) -> &$stream {
                self.0
            }

            $crate::net::split::addresses!($addr);
            $crate::net::evented::stream_read_methods!(|this| &this.stream().io);
            $crate::net::evented::ready_method!(|this| &this.stream().io);
        }

        impl WriteHalf<'_> {
            fn stream(&self) -> &$stream {
                self.0
            }

            $crate::net::split::addresses!($addr);
            $crate::net::evented::stream_write_methods!(|this| &this.stream().io);
            $crate::net::evented::ready_method!(|this| &this.stream().io);
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

            fn stream(&self) -> &$stream {
                &self.inner
            }

            $crate::net::split::addresses!($addr);
            $crate::net::evented::stream_read_methods!(|this| &this.stream().io);
            $crate::net::evented::ready_method!(|this| &this.stream().io);
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

            fn stream(&self) -> &$stream {
                &self.inner
            }

            $crate::net::split::addresses!($addr);
            $crate::net::evented::stream_write_methods!(|this| &this.stream().io);
            $crate::net::evented::ready_method!(|this| &this.stream().io);
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    let _ = self.inner.shutdown(Shutdown::Write);
                }
            }
        }

        impl_read!(ReadHalf<'_>, |this| &this.stream().io);
        impl_write!(WriteHalf<'_>, |this| &this.stream().io, |closer| closer
            .stream()
            .shutdown(Shutdown::Write));
        impl_read!(OwnedReadHalf, |this| &this.stream().io);
        impl_write!(OwnedWriteHalf, |this| &this.stream().io, |closer| closer
            .stream()
            .shutdown(Shutdown::Write));
    };
}

/// A half's `peer_addr` and `local_addr`: its stream's (`self.stream()`).
macro_rules! addresses {
    ($addr:ty) => {
        /// The peer's address.
        pub fn peer_addr(&self) -> std::io::Result<$addr> {
            self.stream().peer_addr()
        }

        /// This end's address.
        pub fn local_addr(&self) -> std::io::Result<$addr> {
            self.stream().local_addr()
        }
    };
}

/// The half types of `net::$module` under their old path (`tcp_split`,
/// `unix_split`), deprecated: a type alias carries the warning to every
/// use, which a deprecated module or re-export does not.
macro_rules! deprecated_aliases {
    ($module:ident) => {
        #[doc = concat!("`net::", stringify!($module), "::ReadHalf`.")]
        #[deprecated(
            note = "moved to tokio\'s path: `weft::net::tcp` (`weft::net::unix` for Unix streams)"
        )]
        pub type ReadHalf<'a> = crate::net::$module::ReadHalf<'a>;
        #[doc = concat!("`net::", stringify!($module), "::WriteHalf`.")]
        #[deprecated(
            note = "moved to tokio\'s path: `weft::net::tcp` (`weft::net::unix` for Unix streams)"
        )]
        pub type WriteHalf<'a> = crate::net::$module::WriteHalf<'a>;
        #[doc = concat!("`net::", stringify!($module), "::OwnedReadHalf`.")]
        #[deprecated(
            note = "moved to tokio\'s path: `weft::net::tcp` (`weft::net::unix` for Unix streams)"
        )]
        pub type OwnedReadHalf = crate::net::$module::OwnedReadHalf;
        #[doc = concat!("`net::", stringify!($module), "::OwnedWriteHalf`.")]
        #[deprecated(
            note = "moved to tokio\'s path: `weft::net::tcp` (`weft::net::unix` for Unix streams)"
        )]
        pub type OwnedWriteHalf = crate::net::$module::OwnedWriteHalf;
        #[doc = concat!("`net::", stringify!($module), "::ReuniteError`.")]
        #[deprecated(
            note = "moved to tokio\'s path: `weft::net::tcp` (`weft::net::unix` for Unix streams)"
        )]
        pub type ReuniteError = crate::net::$module::ReuniteError;
    };
}

pub(super) use {addresses, deprecated_aliases, halves};
