//! tokio's `AsyncRead`/`AsyncWrite`/`AsyncSeek` for wrappers of weft's
//! streams, through the `futures-io` traits weft implements.
//!
//! A read goes into the unfilled part of tokio's `ReadBuf`, initialized
//! first (`ReadBuf` remembers what it initialized, so a buffer is zeroed
//! once, not at every read); a write, a flush and a shutdown (futures-io's
//! `close`: weft's streams shut their write side down) map one to one.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio_upstream::io::ReadBuf;

/// `AsyncRead::poll_read` of a type whose `inner` reads as futures-io does.
pub(crate) fn poll_read<R: futures_io::AsyncRead + Unpin + ?Sized>(
    inner: &mut R,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = ready!(Pin::new(inner).poll_read(cx, buf.initialize_unfilled()))?;
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// Implements tokio's `AsyncRead` for `$ty` (a wrapper whose field
/// `$field` implements `futures_io::AsyncRead + Unpin`).
macro_rules! impl_async_read {
    ($ty:ty, $field:ident $(, $lt:lifetime)?) => {
        impl$(<$lt>)? tokio_upstream::io::AsyncRead for $ty {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio_upstream::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                crate::io_adapt::poll_read(&mut self.get_mut().$field, cx, buf)
            }
        }
    };
}

/// Implements tokio's `AsyncWrite` for `$ty` (a wrapper whose field
/// `$field` implements `futures_io::AsyncWrite + Unpin`).
macro_rules! impl_async_write {
    ($ty:ty, $field:ident $(, $lt:lifetime)?) => {
        impl$(<$lt>)? tokio_upstream::io::AsyncWrite for $ty {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                futures_io::AsyncWrite::poll_write(std::pin::Pin::new(&mut self.get_mut().$field), cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                futures_io::AsyncWrite::poll_write_vectored(
                    std::pin::Pin::new(&mut self.get_mut().$field),
                    cx,
                    bufs,
                )
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                futures_io::AsyncWrite::poll_flush(std::pin::Pin::new(&mut self.get_mut().$field), cx)
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                futures_io::AsyncWrite::poll_close(std::pin::Pin::new(&mut self.get_mut().$field), cx)
            }
        }
    };
}

pub(crate) use {impl_async_read, impl_async_write};

/// Wraps a weft type in the crate's type of the same role: `$wrapper {
/// inner }`, with `From` both ways, `Debug` and the raw descriptor.
macro_rules! wrapper {
    ($(#[$doc:meta])* $wrapper:ident, $inner:ty) => {
        $(#[$doc])*
        pub struct $wrapper {
            pub(crate) inner: $inner,
        }

        impl From<$inner> for $wrapper {
            fn from(inner: $inner) -> Self {
                Self { inner }
            }
        }

        impl From<$wrapper> for $inner {
            fn from(outer: $wrapper) -> Self {
                outer.inner
            }
        }

        impl std::fmt::Debug for $wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.inner.fmt(f)
            }
        }
    };
}

pub(crate) use wrapper;

/// `AsRawFd`/`AsFd` for a wrapper whose `inner` has them.
macro_rules! impl_fd {
    ($ty:ty) => {
        impl std::os::unix::io::AsRawFd for $ty {
            fn as_raw_fd(&self) -> std::os::unix::io::RawFd {
                self.inner.as_raw_fd()
            }
        }

        impl std::os::unix::io::AsFd for $ty {
            fn as_fd(&self) -> std::os::unix::io::BorrowedFd<'_> {
                self.inner.as_fd()
            }
        }
    };
}

pub(crate) use impl_fd;
