//! A deadline on the first bytes of a connection, while `serve` finds out
//! which protocol the client speaks.
//!
//! hyper-util's `auto` connection reads up to 24 bytes to tell the HTTP/2
//! preface from anything else (HTTP/1) before it hands the stream to
//! hyper, and hyper's `header_read_timeout` starts only then: a client that
//! connects and sends nothing, or a prefix of the preface, would hold its
//! connection and task forever (hyperium/hyper#3962). [`PrefaceDeadline`]
//! wraps the stream and fails a read with `TimedOut` once the deadline
//! passes before the protocol is known; from then on (HTTP/1: hyper's own
//! timer runs; HTTP/2: an idle connection is normal) reads go straight
//! through. It mirrors hyper-util's test (the bytes read so far, compared
//! with the preface's), so it stops exactly when detection does.

use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

use crate::net::TcpStream;
use crate::time::Sleep;

/// What an HTTP/2 client sends first (RFC 9113, section 3.4).
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A stream whose reads fail with `TimedOut` if the client has not shown
/// its protocol by the deadline.
#[derive(Debug)]
pub(crate) struct PrefaceDeadline<T> {
    inner: T,
    /// Until the protocol is known.
    /// Boxed: a `Sleep` is `!Unpin`, this stream is `Unpin`.
    deadline: Option<Pin<Box<Sleep>>>,
    /// How many bytes read so far matched the preface.
    matched: usize,
}

impl<T> PrefaceDeadline<T> {
    /// `inner`, with reads failing after `deadline` (if any) until the
    /// protocol is known.
    pub(crate) fn new(inner: T, deadline: Option<Sleep>) -> PrefaceDeadline<T> {
        PrefaceDeadline {
            inner,
            deadline: deadline.map(Box::pin),
            matched: 0,
        }
    }

    /// Follows detection over the bytes just read (none: end of stream).
    fn saw(&mut self, bytes: &[u8]) {
        let expected = &H2_PREFACE[self.matched..];
        let n = bytes.len().min(expected.len());
        if bytes.is_empty() || bytes[..n] != expected[..n] {
            // End of stream, or not HTTP/2: HTTP/1, where hyper's timer
            // takes over.
            self.deadline = None;
            return;
        }
        self.matched += n;
        if self.matched == H2_PREFACE.len() {
            self.deadline = None;
        }
    }
}

impl<T> PrefaceDeadline<T> {
    /// Follows detection after a read of the inner stream: `read` is its
    /// outcome, `filled(n)` the `n` bytes it read; a pending read fails
    /// with `TimedOut` once the deadline has passed.
    fn after_read<'b>(
        &mut self,
        cx: &mut Context<'_>,
        read: Poll<io::Result<usize>>,
        filled: impl FnOnce(usize) -> &'b [u8],
    ) -> Poll<io::Result<usize>> {
        let Some(deadline) = &mut self.deadline else {
            return read;
        };
        match read {
            Poll::Ready(Ok(n)) => {
                self.saw(filled(n));
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                if deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.deadline = None;
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "weft::hyper::serve: the client sent no request within the header-read timeout",
                )))
            }
        }
    }
}

impl PrefaceDeadline<TcpStream> {
    /// `poll_read` into memory that need not be initialized (hyper's read
    /// buffer, unzeroed): returns how many bytes at the start of `buf` the
    /// read filled.
    pub(crate) fn poll_read_uninit(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        let read = self.inner.poll_read_uninit(cx, buf);
        self.after_read(cx, read, |n| {
            let n = n.min(buf.len());
            // SAFETY: the read initialized the first `n` bytes of `buf`
            // (`n` is what it returned, within `buf`: clamped above), and
            // `u8` has `MaybeUninit<u8>`'s layout.
            unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) }
        })
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for PrefaceDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        this.after_read(cx, read, |n| &buf[..n.min(buf.len())])
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PrefaceDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Detection, as hyper-util's `ReadVersion` does it, over reads split
    /// anywhere.
    #[test]
    fn the_deadline_ends_exactly_when_the_protocol_is_known() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _guard = rt.enter();
        let armed = |chunks: &[&[u8]]| {
            let mut stream = PrefaceDeadline::new((), Some(crate::time::sleep(Duration::ZERO)));
            for chunk in chunks {
                stream.saw(chunk);
            }
            stream.deadline.is_some()
        };
        assert!(armed(&[]), "nothing read yet");
        assert!(armed(&[b"PRI * HT"]), "a prefix of the preface");
        assert!(
            armed(&[b"P", b"RI * HTTP/2.0\r\n\r\nSM\r\n\r"]),
            "one byte short"
        );
        assert!(!armed(&[b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"]), "HTTP/2");
        assert!(
            !armed(&[b"PRI * HTTP/2.0\r\n", b"\r\nSM\r\n\r\n"]),
            "HTTP/2, split"
        );
        assert!(!armed(&[b"GET / HTTP/1.1\r\n"]), "HTTP/1");
        assert!(!armed(&[b"PRI * HTTP/1.1"]), "HTTP/1 after a common prefix");
        assert!(!armed(&[b"PRI", b""]), "end of stream");
    }

    /// The trait's own read, write, flush and close reach the inner stream
    /// (`serve` reads through `poll_read_uninit` and writes vectors: these
    /// are the other ways in, which any wrapped stream may be driven by).
    #[test]
    fn reads_writes_flushes_and_closes_reach_the_inner_stream() {
        use futures_lite::io::{AsyncReadExt, AsyncWriteExt, BufWriter};

        let rt = crate::runtime::Runtime::new().unwrap();
        let _guard = rt.enter();
        futures_lite::future::block_on(async {
            let head = b"GET / HTTP/1.1\r\n";
            let deadline = Some(crate::time::sleep(Duration::from_secs(60)));
            let mut stream = PrefaceDeadline::new(&head[..], deadline);
            let mut read = [0; 32];
            let n = stream.read(&mut read).await.unwrap();
            assert_eq!(&read[..n], head);
            assert!(
                stream.deadline.is_none(),
                "HTTP/1 seen: the deadline is off"
            );

            // A buffered inner stream: only its flush and close write out.
            let mut stream = PrefaceDeadline::new(BufWriter::with_capacity(64, Vec::new()), None);
            stream.write_all(b"hello").await.unwrap();
            assert!(stream.inner.get_ref().is_empty(), "buffered until flushed");
            stream.flush().await.unwrap();
            assert_eq!(stream.inner.get_ref(), b"hello");
            stream.write_all(b", world").await.unwrap();
            stream.close().await.unwrap();
            assert_eq!(stream.inner.get_ref(), b"hello, world");
        });
    }
}
