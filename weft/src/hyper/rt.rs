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

/// A read into memory that need not be initialized: how many bytes at the
/// start of the buffer it filled.
type ReadUninit<T> =
    fn(&mut T, &mut Context<'_>, &mut [MaybeUninit<u8>]) -> Poll<std::io::Result<usize>>;

/// A `futures_io` stream as hyper's `rt::Read` + `rt::Write`.
#[derive(Debug)]
pub struct Io<T> {
    inner: T,
    /// `serve`'s streams read into hyper's buffer as it is; any other
    /// stream's `futures_io` read needs it zeroed first (a memset of the
    /// whole unfilled buffer per read, even one that finds nothing).
    read_uninit: Option<ReadUninit<T>>,
}

impl<T> Io<T> {
    /// Wraps `inner` (a `weft::net::TcpStream`, a `UnixStream`, any
    /// `AsyncRead + AsyncWrite + Unpin`).
    pub fn new(inner: T) -> Io<T> {
        Io {
            inner,
            read_uninit: None,
        }
    }

    /// Wraps `inner`, whose reads go through `read_uninit`, which must
    /// return how many bytes at the start of the buffer it filled.
    pub(crate) fn with_uninit_reads(inner: T, read_uninit: ReadUninit<T>) -> Io<T> {
        Io {
            inner,
            read_uninit: Some(read_uninit),
        }
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
        // SAFETY: the slice is only written with initialized bytes (zeroed,
        // or the ones a read fills); nothing is de-initialized through it.
        let unfilled: &mut [MaybeUninit<u8>] = unsafe { buf.as_mut() };
        let capacity = unfilled.len();
        let n = match self.read_uninit {
            Some(read_uninit) => ready!(read_uninit(&mut self.inner, cx, unfilled))?,
            None => {
                // `futures_io` reads into initialized memory: zero it (a
                // memset of hyper's read buffer, no copy of the data).
                let unfilled = crate::runtime::zeroed(unfilled);
                ready!(Pin::new(&mut self.inner).poll_read(cx, unfilled))?
            }
        };
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
        // SAFETY: `n` is within the slice (checked above), and its first
        // `n` bytes are initialized (zeroed then read into, or filled by
        // `read_uninit`).
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

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: the `Sleep` is structurally pinned: `HyperSleep` never
        // moves it out, and has no `Drop` of its own.
        unsafe { self.map_unchecked_mut(|this| &mut this.0) }.poll(cx)
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

    /// A stream read through `read_uninit` hands hyper the bytes it
    /// filled, and an impossible count is an error that marks nothing
    /// filled (as for any `AsyncRead`: `tests/soundness.rs`).
    #[test]
    fn uninit_reads_fill_hypers_buffer_and_impossible_counts_fail() {
        use hyper::rt::Read;
        /// A stream whose reads claim this count.
        struct Claim(usize);
        impl AsyncRead for Claim {
            fn poll_read(
                self: Pin<&mut Self>,
                _: &mut Context<'_>,
                _: &mut [u8],
            ) -> Poll<std::io::Result<usize>> {
                unreachable!("reads go through `read_uninit`")
            }
        }
        fn fill(
            claim: &mut Claim,
            _: &mut Context<'_>,
            buf: &mut [MaybeUninit<u8>],
        ) -> Poll<std::io::Result<usize>> {
            for (byte, value) in buf.iter_mut().zip(b"hey") {
                byte.write(*value);
            }
            Poll::Ready(Ok(claim.0))
        }
        let mut cx = Context::from_waker(std::task::Waker::noop());
        for (claim, expected) in [(3, Some(&b"hey"[..])), (2, Some(b"he")), (17, None)] {
            let mut storage = [MaybeUninit::<u8>::uninit(); 16];
            let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
            let mut io = Io::with_uninit_reads(Claim(claim), fill);
            let read = Pin::new(&mut io).poll_read(&mut cx, buf.unfilled());
            match expected {
                Some(bytes) => {
                    assert!(matches!(read, Poll::Ready(Ok(()))), "{read:?}");
                    assert_eq!(buf.filled(), bytes);
                }
                None => {
                    let Poll::Ready(Err(error)) = read else {
                        panic!("a count past the buffer was accepted: {read:?}");
                    };
                    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
                    assert!(buf.filled().is_empty());
                }
            }
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
