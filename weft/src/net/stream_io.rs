//! The byte-stream traits on weft's streams and their halves: the
//! runtime-agnostic `futures_io` ones always, tokio's with `tokio-io`.
//! `close`/`shutdown` shut the write side down (the peer reads end of
//! stream); `flush` has nothing to do (no user-space buffer).

/// `impl_read!(Type, |this| expr)`: `AsyncRead` for `Type`, whose
/// `PollEvented` is `expr` (`this: &Type`).
macro_rules! impl_read {
    ($ty:ty, |$this:ident| $io:expr) => {
        impl futures_io::AsyncRead for $ty {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $this = &*self;
                ($io).poll_read(cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncRead for $ty {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $this = &*self;
                let unfilled = buf.initialize_unfilled();
                let n = std::task::ready!(($io).poll_read(cx, unfilled))?;
                buf.advance(n);
                std::task::Poll::Ready(Ok(()))
            }
        }
    };
}

/// `impl_write!(Type, |this| expr, |this| shutdown_expr)`: `AsyncWrite`
/// for `Type`; `shutdown_expr` shuts the write side down.
macro_rules! impl_write {
    ($ty:ty, |$this:ident| $io:expr, |$closer:ident| $close:expr) => {
        impl futures_io::AsyncWrite for $ty {
            $crate::net::stream_io::write_methods!(|$this| $io, poll_close, |$closer| $close);
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncWrite for $ty {
            $crate::net::stream_io::write_methods!(|$this| $io, poll_shutdown, |$closer| $close);

            fn is_write_vectored(&self) -> bool {
                true
            }
        }
    };
}

/// The methods both `AsyncWrite` traits share, alike but for the name of
/// the one that shuts the write side down (`$close_fn`).
macro_rules! write_methods {
    (|$this:ident| $io:expr, $close_fn:ident, |$closer:ident| $close:expr) => {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let $this = &*self;
            ($io).poll_write(cx, buf)
        }

        fn poll_write_vectored(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            bufs: &[std::io::IoSlice<'_>],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let $this = &*self;
            ($io).poll_write_vectored(cx, bufs)
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn $close_fn(
            self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let $closer = &*self;
            std::task::Poll::Ready($close)
        }
    };
}

/// Both traits for a whole stream.
macro_rules! impl_stream_io {
    ($ty:ty, |$this:ident| $io:expr) => {
        $crate::net::stream_io::impl_read!($ty, |$this| $io);
        $crate::net::stream_io::impl_write!($ty, |$this| $io, |closer| closer
            .io
            .get_ref()
            .shutdown(std::net::Shutdown::Write));
    };
}

pub(crate) use {impl_read, impl_stream_io, impl_write, write_methods};
