//! `io::{Interest, Ready}` and `AsyncFd`'s tokio API: the sets and their
//! operators, waiting for a set of readiness kinds and seeing which came,
//! clearing part of it, the `_mut` forms, `async_io`/`try_io`, error and
//! priority readiness, and the constructors that give the value back.
//! Each test's comment says what it pins.

#![cfg(all(not(loom), target_os = "linux"))]
// A guard is dropped to end its borrow of the `AsyncFd` and to show that
// dropping keeps the readiness: the drop is the point, not a no-op.
#![allow(clippy::drop_non_drop)]

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use weft::io::unix::{AsyncFd, AsyncFdRegisterError};
use weft::io::{Interest, Ready};
use weft::runtime::{Builder, Runtime};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

fn nonblocking_pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

/// Waits at most 10 s for `future` (a test that would hang fails instead).
async fn within_10_s<T>(what: &str, future: impl Future<Output = T>) -> T {
    weft::time::timeout(Duration::from_secs(10), future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in 10 s"))
}

/// Whether `future` is still pending after 50 ms.
async fn still_pending<T>(future: impl Future<Output = T>) -> bool {
    weft::time::timeout(Duration::from_millis(50), future)
        .await
        .is_err()
}

/// The operators: `|` and `add` join, `remove` takes away and says `None`
/// when nothing is left, the `is_*` tests; `Ready`'s `|`, `&`, `-`, `ALL`
/// holding every kind and `EMPTY` none; `Debug` names the kinds.
#[test]
fn interest_and_ready_sets() {
    let both = Interest::READABLE | Interest::WRITABLE;
    assert!(both.is_readable() && both.is_writable() && !both.is_error());
    assert_eq!(Interest::READABLE.add(Interest::WRITABLE), both);
    assert_eq!(both.remove(Interest::WRITABLE), Some(Interest::READABLE));
    assert_eq!(Interest::READABLE.remove(Interest::READABLE), None);
    let mut interest = Interest::ERROR;
    interest |= Interest::PRIORITY;
    assert!(interest.is_error() && interest.is_priority() && !interest.is_readable());
    assert_eq!(format!("{both:?}"), "READABLE | WRITABLE");

    let ready = Ready::READABLE | Ready::READ_CLOSED;
    assert!(ready.is_readable() && ready.is_read_closed() && !ready.is_writable());
    assert_eq!(ready - Ready::READABLE, Ready::READ_CLOSED);
    assert_eq!(ready & Ready::READ_CLOSED, Ready::READ_CLOSED);
    assert!(Ready::EMPTY.is_empty() && !ready.is_empty());
    let all = Ready::ALL;
    assert!(all.is_readable() && all.is_writable() && all.is_read_closed());
    assert!(all.is_write_closed() && all.is_error() && all.is_priority());
    assert!(format!("{ready:?}").contains("is_read_closed: true"));
}

/// `ready(READABLE | WRITABLE)` says which came: a fresh pair is writable
/// only; with a byte queued, both. `clear_ready_matching(READABLE)` takes
/// readable out of the guard and the cache: the next `ready(READABLE)`
/// waits (pending) until a new byte comes, while writable stays.
#[test]
fn ready_reports_the_kinds_and_clear_ready_matching_clears_only_those() {
    runtime().block_on(within_10_s("ready", async {
        let (a, mut b) = nonblocking_pair();
        let fd = AsyncFd::new(a).unwrap();
        let guard = fd
            .ready(Interest::READABLE | Interest::WRITABLE)
            .await
            .unwrap();
        assert_eq!(guard.ready(), Ready::WRITABLE);
        drop(guard);

        b.write_all(b"x").unwrap();
        let mut guard = loop {
            let guard = fd.ready(Interest::READABLE).await.unwrap();
            if guard.ready().is_readable() {
                break guard;
            }
        };
        let mut byte = [0; 1];
        assert_eq!(fd.get_ref().read(&mut byte).unwrap(), 1);
        guard.clear_ready_matching(Ready::READABLE);
        assert_eq!(guard.ready(), Ready::EMPTY);
        drop(guard);

        assert!(
            still_pending(fd.ready(Interest::READABLE)).await,
            "readable was cleared"
        );
        let guard = fd.writable().await.unwrap();
        assert!(guard.ready().is_writable(), "writable was not cleared");
        drop(guard);
        b.write_all(b"y").unwrap();
        let guard = fd.readable().await.unwrap();
        assert!(guard.ready().is_readable());
    }));
}

/// Readiness is cached until cleared: a guard dropped (or `retain_ready`)
/// leaves it, so the next wait returns at once; `clear_ready` forgets it.
/// A closed peer makes the fd read-closed, which no clear removes: it
/// stays ready.
#[test]
fn readiness_is_cached_until_cleared_and_read_closed_stays() {
    runtime().block_on(within_10_s("cache", async {
        let (a, mut b) = nonblocking_pair();
        let fd = AsyncFd::new(a).unwrap();
        b.write_all(b"x").unwrap();
        let mut guard = fd.readable().await.unwrap();
        guard.retain_ready();
        drop(guard);
        let mut guard = fd.readable().await.unwrap();
        guard.clear_ready();
        assert_eq!(guard.ready(), Ready::EMPTY);
        drop(guard);
        assert!(
            still_pending(fd.readable()).await,
            "clear_ready forgot readable"
        );

        drop(b);
        for _ in 0..3 {
            let mut guard = fd.readable().await.unwrap();
            assert!(guard.ready().is_read_closed(), "{:?}", guard.ready());
            guard.clear_ready();
        }
    }));
}

/// The `_mut` forms lend the value mutably: `readable_mut`'s guard reads
/// through `get_inner_mut`, its `try_io` clears on `WouldBlock` (then the
/// next `poll_read_ready_mut` is pending), and `writable_mut` and
/// `async_io_mut` run.
#[test]
fn mut_forms_lend_the_value_mutably() {
    runtime().block_on(within_10_s("mut forms", async {
        let (a, mut b) = nonblocking_pair();
        let mut fd = AsyncFd::new(a).unwrap();
        b.write_all(b"ab").unwrap();
        let mut buf = [0; 8];
        let mut guard = fd.readable_mut().await.unwrap();
        let n = guard.get_inner_mut().read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ab");
        let again = guard.try_io(|fd| fd.get_mut().read(&mut buf));
        assert!(again.is_err(), "WouldBlock is a TryIoError");
        drop(guard);
        let pending = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(fd.poll_read_ready_mut(cx).is_pending())
        })
        .await;
        assert!(pending, "try_io cleared the readiness");

        let guard = fd.writable_mut().await.unwrap();
        assert!(guard.ready().is_writable());
        drop(guard);
        b.write_all(b"c").unwrap();
        let n = fd
            .async_io_mut(Interest::READABLE, |inner| inner.read(&mut buf))
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"c");
    }));
}

/// `try_io` runs its closure only when the interest is known ready, and a
/// `WouldBlock` from it forgets the readiness (the next `try_io` does not
/// run it); `async_io` waits for the next edge and returns the read.
#[test]
fn try_io_and_async_io_follow_the_cached_readiness() {
    runtime().block_on(within_10_s("try_io", async {
        let (a, mut b) = nonblocking_pair();
        let fd = AsyncFd::new(a).unwrap();
        let ran = fd.try_io(Interest::READABLE, |_| Ok(()));
        assert_eq!(
            ran.unwrap_err().kind(),
            ErrorKind::WouldBlock,
            "not readable yet"
        );

        b.write_all(b"x").unwrap();
        drop(fd.readable().await.unwrap());
        let mut calls = 0;
        let result = fd.try_io(Interest::READABLE, |_| {
            calls += 1;
            Err::<(), _>(ErrorKind::WouldBlock.into())
        });
        assert_eq!(result.unwrap_err().kind(), ErrorKind::WouldBlock);
        let _ = fd.try_io(Interest::READABLE, |_| {
            calls += 1;
            Ok(())
        });
        assert_eq!(calls, 1, "the WouldBlock cleared the readiness");

        // The made-up WouldBlock forgot a readiness the kernel still has:
        // only a new edge (a new byte) wakes `async_io`.
        let mut buf = [0; 4];
        let waiting = fd.async_io(Interest::READABLE, |inner| (&*inner).read(&mut buf));
        let writing = async {
            weft::time::sleep(Duration::from_millis(20)).await;
            b.write_all(b"y").unwrap();
        };
        let (n, ()) = futures_lite::future::zip(waiting, writing).await;
        assert_eq!(&buf[..n.unwrap()], b"xy");
    }));
}

/// `Interest::ERROR` alone waits for an error and nothing else: a UDP
/// socket with `IP_RECVERR` that sends to a closed port gets the refusal
/// in its error queue, and `ready(ERROR)` says `Ready::ERROR`; before the
/// send it is pending though the socket is writable.
#[test]
fn error_interest_waits_for_an_error_alone() {
    runtime().block_on(within_10_s("error readiness", async {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let on: libc::c_int = 1;
        // SAFETY: `on` outlives the call and its size is passed; the fd is
        // the open socket `socket` owns.
        let set = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_IP,
                libc::IP_RECVERR,
                (&on as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
        let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let closed_addr = closed.local_addr().unwrap();
        drop(closed);
        let fd = AsyncFd::new(socket).unwrap();
        assert!(
            still_pending(fd.ready(Interest::ERROR)).await,
            "no error yet"
        );
        fd.get_ref().send_to(b"x", closed_addr).unwrap();
        let guard = fd.ready(Interest::ERROR).await.unwrap();
        assert_eq!(guard.ready(), Ready::ERROR);
    }));
}

/// `PRIORITY` is seen only when asked for at registration: TCP urgent
/// data makes an `AsyncFd` registered `with_interest(PRIORITY)` ready for
/// it, and the guard says `Ready::PRIORITY`.
#[test]
fn priority_interest_sees_urgent_data() {
    runtime().block_on(within_10_s("priority", async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.set_nonblocking(true).unwrap();
        let (server, _) = listener.accept().unwrap();
        let fd = AsyncFd::with_interest(client, Interest::PRIORITY).unwrap();
        // SAFETY: the buffer is valid for its length; the fd is the open
        // socket `server` owns.
        let sent =
            unsafe { libc::send(server.as_raw_fd(), b"!".as_ptr().cast(), 1, libc::MSG_OOB) };
        assert_eq!(sent, 1);
        let guard = fd.ready(Interest::PRIORITY).await.unwrap();
        assert!(guard.ready().is_priority(), "{:?}", guard.ready());
    }));
}

#[derive(Debug)]
struct Invalid;

impl AsRawFd for Invalid {
    fn as_raw_fd(&self) -> RawFd {
        -1
    }
}

/// A failed registration gives the value back with the OS's error
/// (`try_new`, `try_with_interest`, `register`); `new` returns the error.
#[test]
fn failed_registrations_give_the_value_back() {
    let rt = runtime();
    let _context = rt.enter();
    let original = Arc::new(Invalid);
    let check = |error: AsyncFdRegisterError<Arc<Invalid>>| {
        let (back, cause) = error.into_parts();
        assert!(Arc::ptr_eq(&back, &original));
        assert_eq!(cause.raw_os_error(), Some(libc::EBADF));
    };
    check(AsyncFd::try_new(original.clone()).unwrap_err());
    check(AsyncFd::try_with_interest(original.clone(), Interest::READABLE).unwrap_err());
    // SAFETY: the registration fails before anything relies on the fd.
    check(unsafe { AsyncFd::register(original.clone()) }.unwrap_err());
    let error = AsyncFd::new(Invalid).unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::EBADF));
}

/// The guards' `Debug` shows the value and the readiness.
#[test]
fn guards_are_debug() {
    runtime().block_on(within_10_s("debug", async {
        let (a, _b) = nonblocking_pair();
        let mut fd = AsyncFd::new(a).unwrap();
        let text = format!("{:?}", fd.writable().await.unwrap());
        assert!(
            text.contains("AsyncFdReadyGuard") && text.contains("is_writable: true"),
            "{text}"
        );
        let text = format!("{:?}", fd.writable_mut().await.unwrap());
        assert!(text.contains("AsyncFdReadyMutGuard"), "{text}");
    }));
}
