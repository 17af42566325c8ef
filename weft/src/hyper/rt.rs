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

/// How many bytes of hyper's read buffer a `futures_io` read is first
/// offered (and so zeroed): a request head fits, a read that fills it
/// doubles it (see `Io::zero_window`).
const FIRST_ZERO_WINDOW: usize = 1024;

/// A `futures_io` stream as hyper's `rt::Read` + `rt::Write`.
#[derive(Debug)]
pub struct Io<T> {
    inner: T,
    /// `serve`'s streams read into hyper's buffer as it is; any other
    /// stream's `futures_io` read needs it zeroed first.
    read_uninit: Option<ReadUninit<T>>,
    /// How much of hyper's unfilled buffer (8 KiB and more) a zeroing read
    /// offers: zeroing all of it cost a memset per read, cold cache lines
    /// and page faults on fresh buffers, for requests of a few hundred
    /// bytes (docs/experiments.md#server-cost-per-request). Doubles each
    /// time a read fills it, so a large body costs a few more reads once
    /// per connection; never shrinks.
    zero_window: usize,
}

impl<T> Io<T> {
    /// Wraps `inner` (a `weft::net::TcpStream`, a `UnixStream`, any
    /// `AsyncRead + AsyncWrite + Unpin`).
    pub fn new(inner: T) -> Io<T> {
        Io {
            inner,
            read_uninit: None,
            zero_window: FIRST_ZERO_WINDOW,
        }
    }

    /// Wraps `inner`, whose reads go through `read_uninit`, which must
    /// return how many bytes at the start of the buffer it filled.
    pub(crate) fn with_uninit_reads(inner: T, read_uninit: ReadUninit<T>) -> Io<T> {
        Io {
            inner,
            read_uninit: Some(read_uninit),
            zero_window: FIRST_ZERO_WINDOW,
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
        // `offered`: the bytes the read was given, all initialized by it
        // (`read_uninit`) or zeroed before it.
        let (n, offered) = match self.read_uninit {
            Some(read_uninit) => {
                let offered = unfilled.len();
                (ready!(read_uninit(&mut self.inner, cx, unfilled))?, offered)
            }
            None => {
                // `futures_io` reads into initialized memory: zero the
                // window's share of hyper's buffer (no copy of the data).
                let capacity = unfilled.len();
                let offered = capacity.min(self.zero_window);
                let unfilled = crate::io::poll_evented::zeroed(&mut unfilled[..offered]);
                let n = ready!(Pin::new(&mut self.inner).poll_read(cx, unfilled))?;
                if n == offered && offered < capacity {
                    self.zero_window = offered.saturating_mul(2);
                }
                (n, offered)
            }
        };
        // Any `AsyncRead` may be wrapped, and its `n` is only a promise:
        // past the slice it would mark bytes filled that are not hyper's,
        // or not initialized.
        if n > offered {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} read {n} bytes into a buffer of {offered}",
                    std::any::type_name::<T>()
                ),
            )));
        }
        // SAFETY: `n` is within the offered part of the slice (checked
        // above), whose bytes are initialized (zeroed then read into, or
        // filled by `read_uninit`).
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

    /// A stream with `left` bytes of 7s, or one that claims `buf.len() +
    /// lie` bytes read.
    struct Sevens {
        left: usize,
        lie: usize,
    }

    impl AsyncRead for Sevens {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<std::io::Result<usize>> {
            assert!(buf.iter().all(|&byte| byte == 0), "offered unzeroed bytes");
            if self.lie > 0 {
                return Poll::Ready(Ok(buf.len() + self.lie));
            }
            let n = buf.len().min(self.left);
            buf[..n].fill(7);
            self.left -= n;
            Poll::Ready(Ok(n))
        }
    }

    /// A `futures_io` read is offered (and zeroes) only the window of
    /// hyper's buffer, which doubles when a read fills it; a count past the
    /// window, though inside hyper's buffer, is an error (those bytes were
    /// never initialized).
    #[test]
    fn zeroing_reads_offer_a_window_that_doubles_when_filled() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Io::new(Sevens { left: 5000, lie: 0 });
        let mut reads = Vec::new();
        loop {
            let mut storage = [MaybeUninit::<u8>::uninit(); 8192];
            let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
            let read = hyper::rt::Read::poll_read(Pin::new(&mut io), &mut cx, buf.unfilled());
            assert!(matches!(read, Poll::Ready(Ok(()))), "{read:?}");
            assert!(buf.filled().iter().all(|&byte| byte == 7));
            if buf.filled().is_empty() {
                break;
            }
            reads.push(buf.filled().len());
        }
        assert_eq!(reads, [1024, 2048, 1928]);
        assert_eq!(io.zero_window, 4096, "a short read leaves the window");

        let mut io = Io::new(Sevens { left: 0, lie: 1 });
        let mut storage = [MaybeUninit::<u8>::uninit(); 8192];
        let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
        let read = hyper::rt::Read::poll_read(Pin::new(&mut io), &mut cx, buf.unfilled());
        let Poll::Ready(Err(error)) = read else {
            panic!("a count past the zeroed window was accepted: {read:?}");
        };
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(buf.filled().is_empty());
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
