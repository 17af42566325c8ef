//! The sockets' tokio API beyond reads and writes: `ready(Interest)`,
//! `async_io` and `try_io` on the streams and datagram sockets, the
//! readiness an accepted stream or a fresh pair starts with, UDP's socket
//! options (multicast, type of service, traffic class), `TCP_QUICKACK`,
//! and `fs::File`'s times and descriptor. Each test's comment says what
//! it pins.

#![cfg(all(not(loom), target_os = "linux"))]

use std::future::Future;
use std::io::{ErrorKind, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::time::{Duration, SystemTime};

use futures_lite::FutureExt;
use weft::io::{Interest, Ready};
use weft::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use weft::runtime::{Builder, Runtime};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// Waits at most 10 s for `future` (a test that would hang fails instead).
async fn within_10_s<T>(what: &str, future: impl Future<Output = T>) -> T {
    weft::time::timeout(Duration::from_secs(10), future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in 10 s"))
}

/// Whether `future` is ready at its first poll.
fn ready_at_once<T>(future: impl Future<Output = T>) -> bool {
    futures_lite::future::block_on(futures_lite::future::poll_once(future.boxed_local())).is_some()
}

/// `ready(READABLE | WRITABLE)` on a TCP stream says which: writable
/// alone while nothing was sent, readable too once a byte is queued;
/// `try_io` runs its closure only when ready and a `WouldBlock` from it
/// forgets the readiness; `async_io` waits and retries after one.
#[test]
fn tcp_ready_try_io_and_async_io() {
    runtime().block_on(within_10_s("tcp", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let ready = client
            .ready(Interest::READABLE | Interest::WRITABLE)
            .await
            .unwrap();
        assert_eq!(ready, Ready::WRITABLE);

        server.try_write(b"hi").unwrap();
        let ready = loop {
            let ready = client.ready(Interest::READABLE).await.unwrap();
            if ready.is_readable() {
                break ready;
            }
        };
        assert!(!ready.is_writable(), "asked for readable only: {ready:?}");
        let mut buf = [0; 8];
        let n = client
            .try_io(Interest::READABLE, || {
                socket2::SockRef::from(&client).recv(unsafe_uninit(&mut buf))
            })
            .unwrap();
        assert_eq!(&buf[..n], b"hi");
        let error = client
            .try_io(Interest::READABLE, || {
                Err::<(), _>(ErrorKind::WouldBlock.into())
            })
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::WouldBlock);
        let mut ran = false;
        let _ = client.try_io(Interest::READABLE, || {
            ran = true;
            Ok(())
        });
        assert!(!ran, "the WouldBlock forgot the readiness");

        let mut calls = 0;
        let reader = client.async_io(Interest::READABLE, || {
            calls += 1;
            socket2::SockRef::from(&client).recv(unsafe_uninit(&mut buf))
        });
        let writer = async {
            weft::time::sleep(Duration::from_millis(20)).await;
            server.try_write(b"yo").unwrap();
        };
        let (n, ()) = futures_lite::future::zip(reader, writer).await;
        assert_eq!(n.unwrap(), 2);
        assert!(calls >= 1);
    }));
}

/// `buf` as the uninitialized bytes `recv` wants (it only writes them).
fn unsafe_uninit(buf: &mut [u8]) -> &mut [std::mem::MaybeUninit<u8>] {
    // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and `recv` writes only
    // initialized bytes, so `buf` stays initialized.
    unsafe { &mut *(std::ptr::from_mut::<[u8]>(buf) as *mut [std::mem::MaybeUninit<u8>]) }
}

/// An accepted stream is ready to read and write at once, before any
/// event (tokio's rule): its first `readable` and `writable` return at
/// their first poll, even with no data; a `try_read` that finds nothing
/// forgets it, and then `readable` waits. Both ends of a fresh Unix pair
/// (stream or datagram) are writable at once.
#[test]
fn accepted_streams_and_pairs_start_ready() {
    let rt = runtime();
    let (server, _client) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().await.unwrap().0, client)
    });
    assert!(ready_at_once(server.readable()), "assumed readable");
    assert!(ready_at_once(server.writable()), "assumed writable");
    assert_eq!(
        server.try_read(&mut [0; 4]).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    assert!(
        !ready_at_once(server.readable()),
        "the WouldBlock cleared it"
    );

    let path = std::env::temp_dir().join(format!("weft-readiness-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let _context = rt.enter();
    let listener = UnixListener::bind(&path).unwrap();
    let _peer = std::os::unix::net::UnixStream::connect(&path).unwrap();
    let (accepted, _) = rt.block_on(listener.accept()).unwrap();
    assert!(ready_at_once(accepted.readable()));
    std::fs::remove_file(&path).unwrap();

    let (a, b) = UnixStream::pair().unwrap();
    assert!(ready_at_once(a.writable()) && ready_at_once(b.writable()));
    let (a, b) = UnixDatagram::pair().unwrap();
    assert!(ready_at_once(a.writable()) && ready_at_once(b.writable()));
}

/// A readiness seen before the runtime shut down still serves a `try_*`
/// call (the data is there); once it is forgotten, the call and any wait
/// fail with the shutdown error rather than hang.
#[test]
fn cached_readiness_outlives_shutdown_then_the_error_comes() {
    let rt = runtime();
    let (server, mut client) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().await.unwrap().0, client)
    });
    client.write_all(b"hello").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    drop(rt);
    let mut buf = [0; 5];
    assert_eq!(server.try_read(&mut buf).unwrap(), 5);
    let _ = server.try_read(&mut buf);
    let error = server.try_read(&mut buf).unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&error), "{error}");
    let waited = futures_lite::future::block_on(server.readable()).unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&waited), "{waited}");
}

/// UDP's `ready`, `try_io` and the socket options tokio has: each set
/// value reads back.
#[test]
fn udp_ready_and_options() {
    runtime().block_on(within_10_s("udp", async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        assert!(a.ready(Interest::WRITABLE).await.unwrap().is_writable());
        a.send_to(b"x", b.local_addr().unwrap()).await.unwrap();
        assert!(b.ready(Interest::READABLE).await.unwrap().is_readable());
        let mut buf = [0; 4];
        let (n, from) = b
            .try_io(Interest::READABLE, || {
                let (n, from) = socket2::SockRef::from(&b).recv_from(unsafe_uninit(&mut buf))?;
                Ok((n, from.as_socket().unwrap()))
            })
            .unwrap();
        assert_eq!((n, from), (1, a.local_addr().unwrap()));

        a.set_multicast_loop_v4(false).unwrap();
        assert!(!a.multicast_loop_v4().unwrap());
        a.set_multicast_ttl_v4(7).unwrap();
        assert_eq!(a.multicast_ttl_v4().unwrap(), 7);
        a.set_tos_v4(0x10).unwrap();
        assert_eq!(a.tos_v4().unwrap(), 0x10);
        a.set_broadcast(true).unwrap();
        assert!(a.broadcast().unwrap());
        let group = Ipv4Addr::new(239, 255, 0, 77);
        a.join_multicast_v4(group, Ipv4Addr::LOCALHOST).unwrap();
        a.leave_multicast_v4(group, Ipv4Addr::LOCALHOST).unwrap();

        let v6 = UdpSocket::bind("[::1]:0").await;
        if let Ok(v6) = v6 {
            v6.set_multicast_loop_v6(false).unwrap();
            assert!(!v6.multicast_loop_v6().unwrap());
            v6.set_tclass_v6(0x20).unwrap();
            assert_eq!(v6.tclass_v6().unwrap(), 0x20);
        }
    }));
}

/// `TCP_QUICKACK` reads back what was set; a Unix datagram socket has
/// `ready` and `async_io` too.
#[test]
fn quickack_and_unix_datagram_async_io() {
    runtime().block_on(within_10_s("quickack", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        stream.set_quickack(true).unwrap();
        assert!(stream.quickack().unwrap());
        stream.set_quickack(false).unwrap();
        assert!(!stream.quickack().unwrap());

        let (a, b) = UnixDatagram::pair().unwrap();
        assert!(a.ready(Interest::WRITABLE).await.unwrap().is_writable());
        a.send(b"dgram").await.unwrap();
        let mut buf = [0; 8];
        let n = b
            .async_io(Interest::READABLE, || {
                socket2::SockRef::from(&b).recv(unsafe_uninit(&mut buf))
            })
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"dgram");
    }));
}

/// `fs::File::set_modified` and `set_times` change what `metadata`
/// reads; the descriptor goes out (`as_raw_fd`) and back in
/// (`from_raw_fd`) to the same file.
#[test]
fn file_times_and_raw_fd() {
    runtime().block_on(within_10_s("file", async {
        let path = std::env::temp_dir().join(format!("weft-file-times-{}", std::process::id()));
        let file = weft::fs::File::create(&path).await.unwrap();
        let then = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        file.set_modified(then).await.unwrap();
        assert_eq!(file.metadata().await.unwrap().modified().unwrap(), then);
        let later = then + Duration::from_secs(60);
        let times = weft::fs::FileTimes::new()
            .set_modified(later)
            .set_accessed(later);
        file.set_times(times).await.unwrap();
        let metadata = file.metadata().await.unwrap();
        assert_eq!(
            (metadata.modified().unwrap(), metadata.accessed().unwrap()),
            (later, later)
        );

        let std = file.into_std().await;
        let fd = std.into_raw_fd();
        // SAFETY: `fd` is the open file `into_raw_fd` just gave up.
        let file = unsafe { weft::fs::File::from_raw_fd(fd) };
        assert_eq!(file.as_raw_fd(), fd);
        assert_eq!(file.metadata().await.unwrap().modified().unwrap(), later);
        std::fs::remove_file(&path).unwrap();
    }));
}
