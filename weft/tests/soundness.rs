//! Safe code that once reached undefined behaviour in the runtime, kept as
//! tests. Several only show their fault under valgrind (`scripts/valgrind.sh`
//! runs them): natively a write into freed memory may go unnoticed. Each
//! also checks what it can without valgrind.
//!
//! The fd-number tests close and reuse descriptor numbers, so they run one
//! at a time (`FDS`): another test opening a file in between would take the
//! number they expect.

#![cfg(target_os = "linux")]

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::Duration;

use weft::io::unix::AsyncFd;
use weft::runtime::{Builder, Runtime};

/// One fd-number test at a time (see the module doc).
static FDS: Mutex<()> = Mutex::new(());

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

fn nonblocking_pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    (a, b)
}

/// Lets the runtime's workers poll the reactor a few times (a stale
/// registration's event would be delivered then). A source stays
/// registered meanwhile: with none, no worker looks at the poller.
fn let_the_reactor_turn(rt: &Runtime) {
    rt.block_on(async {
        let _registered = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        for _ in 0..5 {
            weft::time::sleep(Duration::from_millis(2)).await;
        }
    });
}

/// The audit's case: an `AsyncFd` of a plain number, the number closed
/// while a duplicate keeps the file open, the `AsyncFd` dropped, then the
/// file made readable. The reactor registered its own duplicate, so its
/// deregistration succeeds and no event names the freed source.
/// (Registering the user's number, the DEL failed with `EBADF`, the
/// source was freed anyway, and valgrind saw `ScheduledIo::set_readiness`
/// read freed memory.)
#[test]
fn an_async_fd_whose_number_closed_first_leaves_nothing_behind() {
    let _fds = FDS.lock().unwrap_or_else(|e| e.into_inner());
    let rt = runtime();
    let (a, mut b) = nonblocking_pair();
    let duplicate = a.try_clone().unwrap();
    let (fd, _registered) = {
        let _context = rt.enter();
        let fd = AsyncFd::new(a.as_raw_fd()).unwrap();
        // Keeps the reactor polled after `fd` is gone (see above).
        let other = AsyncFd::new(nonblocking_pair().0).unwrap();
        (fd, other)
    };
    drop(a);
    drop(fd);
    // A turn first, so the reactor's deferred release of the source has
    // happened before the stale registration fires (else the event and the
    // release fall in one turn, and the read of freed memory is rare).
    let_the_reactor_turn(&rt);
    b.write_all(b"x").unwrap();
    let_the_reactor_turn(&rt);
    // Safe code allocating where the source was, and the runtime still
    // serving readiness for the same file afterwards.
    let filler: Vec<Box<[u64; 12]>> = (0..64).map(|_| Box::new([7; 12])).collect();
    rt.block_on(async {
        let again = AsyncFd::new(duplicate).unwrap();
        weft::time::timeout(Duration::from_secs(5), again.readable())
            .await
            .expect("the duplicate's readiness arrives")
            .unwrap();
    });
    assert!(
        filler
            .iter()
            .all(|block| block.iter().all(|&word| word == 7))
    );
}

/// The same through `get_mut`: the wrapped stream replaced (its number
/// closed) while a duplicate of it stays open.
#[test]
fn an_async_fd_whose_stream_was_replaced_leaves_nothing_behind() {
    let _fds = FDS.lock().unwrap_or_else(|e| e.into_inner());
    let rt = runtime();
    let (a, mut b) = nonblocking_pair();
    let duplicate = a.try_clone().unwrap();
    let (other, _other_peer) = nonblocking_pair();
    let (mut fd, _registered) = {
        let _context = rt.enter();
        let fd = AsyncFd::new(a).unwrap();
        let other = AsyncFd::new(nonblocking_pair().0).unwrap();
        (fd, other)
    };
    *fd.get_mut() = other;
    drop(fd);
    let_the_reactor_turn(&rt);
    b.write_all(b"x").unwrap();
    let_the_reactor_turn(&rt);
    drop(duplicate);
    let_the_reactor_turn(&rt);
}

/// The number of an `AsyncFd`'s closed fd taken by a new listener: the
/// `AsyncFd`'s drop must not delete the listener's registration, and the
/// listener goes on accepting. (Registering the user's number, the DEL
/// by number removed the listener's registration: its `accept` never
/// woke again.)
#[test]
fn a_listener_that_reuses_an_async_fds_number_keeps_accepting() {
    let _fds = FDS.lock().unwrap_or_else(|e| e.into_inner());
    let rt = runtime();
    rt.block_on(async {
        let (a, mut b) = nonblocking_pair();
        let duplicate = a.try_clone().unwrap();
        let number = a.as_raw_fd();
        let fd = AsyncFd::new(number).unwrap();
        drop(a);
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        assert_eq!(
            listener.as_raw_fd(),
            number,
            "the listener should take the lowest free number, the closed one"
        );
        drop(fd);
        let address = listener.local_addr().unwrap();
        let connect = std::thread::spawn(move || std::net::TcpStream::connect(address).unwrap());
        let accepted = weft::time::timeout(Duration::from_secs(5), listener.accept()).await;
        assert!(
            accepted.is_ok(),
            "the listener never woke: its registration was deleted"
        );
        accepted.unwrap().unwrap();
        connect.join().unwrap();
        b.write_all(b"x").unwrap();
        drop(duplicate);
    });
    let_the_reactor_turn(&rt);
}

/// A reader that claims more bytes than it was given, through hyper's
/// `Read` adapter: an `InvalidData` error naming the reader, never an
/// `advance` past the buffer.
#[cfg(feature = "hyper")]
#[test]
fn a_reader_that_claims_too_many_bytes_is_an_error_through_hyper_io() {
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    struct Liar;
    impl futures_io::AsyncRead for Liar {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Ready(Ok(buf.len() + 100))
        }
    }

    let mut storage = [std::mem::MaybeUninit::<u8>::uninit(); 16];
    let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
    let mut io = weft::hyper::Io::new(Liar);
    let mut cx = Context::from_waker(Waker::noop());
    let read = hyper::rt::Read::poll_read(Pin::new(&mut io), &mut cx, buf.unfilled());
    let Poll::Ready(Err(error)) = read else {
        panic!("a reader's impossible count was accepted: {read:?}");
    };
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    assert!(error.to_string().contains("Liar"), "{error}");
    assert!(
        buf.filled().is_empty(),
        "bytes marked filled: {:?}",
        buf.filled()
    );
}
