//! The runtime pieces hyper 1.x asks for: [`Io`] (hyper's `rt::Read` and
//! `rt::Write` over a `futures_io` stream), [`Executor`] (spawns on the
//! current runtime) and [`Timer`] (weft's timers). They play the roles of
//! hyper-util's `TokioIo`, `TokioExecutor` and `TokioTimer`.

use std::future::Future;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use futures_io::{AsyncRead, AsyncWrite};

/// A `futures_io` stream as hyper's `rt::Read` + `rt::Write`.
#[derive(Debug)]
pub struct Io<T> {
    inner: T,
}

impl<T> Io<T> {
    /// Wraps `inner` (a `weft::net::TcpStream`, a `UnixStream`, any
    /// `AsyncRead + AsyncWrite + Unpin`).
    pub fn new(inner: T) -> Io<T> {
        Io { inner }
    }

    /// The wrapped stream.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for Io<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        // SAFETY: the slice is only written with initialized bytes (zeroed
        // first, below); nothing is de-initialized through it.
        let unfilled: &mut [MaybeUninit<u8>] = unsafe { buf.as_mut() };
        // `futures_io` reads into initialized memory: zero it (a memset of
        // hyper's read buffer, no copy of the data itself; `serve`'s own
        // connections read into it as it is: `connection.rs`).
        let unfilled = crate::io::poll_evented::zeroed(unfilled);
        let capacity = unfilled.len();
        let n = ready!(Pin::new(&mut self.inner).poll_read(cx, unfilled))?;
        // Any `AsyncRead` may be wrapped, and its `n` is only a promise:
        // past the slice it would mark bytes filled that are not hyper's.
        if n > capacity {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} read {n} bytes into a buffer of {capacity}",
                    std::any::type_name::<T>()
                ),
            )));
        }
        // SAFETY: `n` is within the slice (checked above), and all of the
        // slice is initialized (zeroed, then written by the read).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for Io<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }

    // weft's streams write vectors with one `writev`; for any other stream,
    // `futures_io`'s default writes the first buffer, a short write hyper
    // handles. (Made `false`, every test passes: hyper then copies its
    // headers and body into one buffer before writing, a cost only.)
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
}

/// Spawns hyper's tasks on the current weft runtime (`weft::spawn`).
///
/// # Panics
///
/// `execute` panics outside a runtime context, as `weft::spawn` does.
#[derive(Debug, Clone, Copy, Default)]
pub struct Executor;

impl Executor {
    /// The executor (it holds nothing: the runtime is found at each spawn).
    pub fn new() -> Executor {
        Executor
    }
}

impl<F> hyper::rt::Executor<F> for Executor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        drop(crate::spawn(future));
    }
}

/// weft's timers for hyper (`header_read_timeout`, keep-alive).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer;

impl Timer {
    /// The timer (it holds nothing: sleeps use the current runtime).
    pub fn new() -> Timer {
        Timer
    }
}

/// A `weft::time::Sleep` as hyper's `rt::Sleep`.
struct HyperSleep(crate::time::Sleep);

impl Future for HyperSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl hyper::rt::Sleep for HyperSleep {}

impl hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HyperSleep(crate::time::sleep(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HyperSleep(crate::time::sleep_until(
            crate::time::Instant::from_std(deadline),
        )))
    }

    // hyper reads the time here to set deadlines (`header_read_timeout`):
    // weft's clock, so that they follow the paused test clock too.
    fn now(&self) -> Instant {
        crate::time::Instant::now().into_std()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A writer that records which calls reached it.
    #[derive(Default)]
    struct Recorder {
        flushes: usize,
        closes: usize,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            self.flushes += 1;
            Poll::Ready(Ok(()))
        }

        fn poll_close(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            self.closes += 1;
            Poll::Ready(Ok(()))
        }
    }

    /// hyper's flush and shutdown reach the stream (a TLS stream, say,
    /// writes its buffered records and its close notification there).
    #[test]
    fn flush_and_shutdown_reach_the_stream() {
        use hyper::rt::Write;
        let mut io = Io::new(Recorder::default());
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!((io.inner().flushes, io.inner().closes), (1, 0));
        assert!(Pin::new(&mut io).poll_shutdown(&mut cx).is_ready());
        assert_eq!((io.inner().flushes, io.inner().closes), (1, 1));
    }
}
