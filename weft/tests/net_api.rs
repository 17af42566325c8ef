//! tokio's networking API under its names (issue 47 item 6): `TcpSocket`,
//! `lookup_host`, Unix peer credentials and socket addresses (abstract
//! names included), the `try_*`, vectored, `*_buf` and `poll_*` forms of
//! the streams and datagram sockets, and the halves at `net::tcp` and
//! `net::unix`. Each test's comment says what it pins.

#![cfg(not(loom))]

use std::future::poll_fn;
use std::io::{ErrorKind, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::time::Duration;

use bytes::BytesMut;
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{
    TcpListener, TcpSocket, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream,
};
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

/// A name in the abstract namespace no other test run uses.
fn abstract_name(what: &str) -> String {
    format!("\0weft-net-api-{what}-{}", std::process::id())
}

/// A connected TCP pair on loopback: (client, server).
async fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap());
    let (client, accepted) = futures_lite::future::zip(client, listener.accept()).await;
    (client.unwrap(), accepted.unwrap().0)
}

/// `TcpSocket` binds, listens and connects: the listener accepts the
/// socket's connection, the addresses agree on both ends, and bytes go
/// both ways. Then `SO_REUSEPORT`: a second socket that sets it binds the
/// port the first (which set it too) listens on; one that does not is
/// refused (`AddrInUse`).
#[test]
fn tcp_socket_binds_listens_and_connects() {
    runtime().block_on(async {
        let server = TcpSocket::new_v4().unwrap();
        server.set_reuseaddr(true).unwrap();
        server.set_reuseport(true).unwrap();
        server.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr().unwrap();
        assert_ne!(addr.port(), 0, "bound to a port the kernel picked");
        let listener = server.listen(16).unwrap();
        assert_eq!(listener.local_addr().unwrap(), addr);

        let client = TcpSocket::new_v4().unwrap();
        client.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let client_addr = client.local_addr().unwrap();
        let connect = client.connect(addr);
        let (stream, accepted) = within_10_s(
            "connect",
            futures_lite::future::zip(connect, listener.accept()),
        )
        .await;
        let mut stream = stream.unwrap();
        let (mut accepted, peer) = accepted.unwrap();
        assert_eq!(stream.local_addr().unwrap(), client_addr);
        assert_eq!(stream.peer_addr().unwrap(), addr);
        assert_eq!(peer, client_addr);
        stream.write_all(b"ping").await.unwrap();
        let mut buf = [0; 4];
        accepted.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        accepted.write_all(b"pong").await.unwrap();
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pong");

        let twin = TcpSocket::new_v4().unwrap();
        twin.set_reuseport(true).unwrap();
        twin.bind(addr).unwrap();
        let _twin = twin.listen(16).unwrap();
        let stranger = TcpSocket::new_v4().unwrap();
        let error = stranger.bind(addr).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::AddrInUse, "{error}");
    });
}

/// Over IPv6 too (skipped where the machine has no `::1`).
#[test]
fn tcp_socket_connects_over_ipv6() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here: skipped");
        return;
    }
    runtime().block_on(async {
        let server = TcpSocket::new_v6().unwrap();
        server.bind("[::1]:0".parse().unwrap()).unwrap();
        let listener = server.listen(4).unwrap();
        let addr = listener.local_addr().unwrap();
        let connect = TcpSocket::new_v6().unwrap().connect(addr);
        let (stream, accepted) = futures_lite::future::zip(connect, listener.accept()).await;
        assert_eq!(stream.unwrap().local_addr().unwrap(), accepted.unwrap().1);
    });
}

/// Every option `TcpSocket` sets reads back (buffer sizes at least as set:
/// Linux doubles them), and the stream `connect` returns keeps
/// `TCP_NODELAY`. The deprecated names still work.
#[test]
#[allow(deprecated)]
fn tcp_socket_options_read_back() {
    let socket = TcpSocket::new_v4().unwrap();
    for on in [true, false] {
        socket.set_reuseaddr(on).unwrap();
        assert_eq!(socket.reuseaddr().unwrap(), on);
        socket.set_reuseport(on).unwrap();
        assert_eq!(socket.reuseport().unwrap(), on);
        socket.set_keepalive(on).unwrap();
        assert_eq!(socket.keepalive().unwrap(), on);
        socket.set_nodelay(on).unwrap();
        assert_eq!(socket.nodelay().unwrap(), on);
    }
    socket.set_send_buffer_size(64 * 1024).unwrap();
    assert!(socket.send_buffer_size().unwrap() >= 64 * 1024);
    socket.set_recv_buffer_size(32 * 1024).unwrap();
    assert!(socket.recv_buffer_size().unwrap() >= 32 * 1024);
    assert_eq!(socket.linger().unwrap(), None);
    socket.set_linger(Some(Duration::from_secs(3))).unwrap();
    assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
    socket.set_zero_linger().unwrap();
    assert_eq!(socket.linger().unwrap(), Some(Duration::ZERO));
    socket.set_linger(None).unwrap();
    assert_eq!(socket.linger().unwrap(), None);
    socket.set_tos_v4(0x20).unwrap();
    assert_eq!(socket.tos_v4().unwrap(), 0x20);
    socket.set_tos(0x40).unwrap();
    assert_eq!(socket.tos().unwrap(), 0x40);
    match socket.bind_device(Some(b"lo")) {
        Ok(()) => {
            assert_eq!(socket.device().unwrap().as_deref(), Some(&b"lo"[..]));
            socket.bind_device(None).unwrap();
            assert_eq!(socket.device().unwrap(), None);
        }
        Err(error) => assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}"),
    }
    assert!(socket.take_error().unwrap().is_none());
    if let Ok(v6) = TcpSocket::new_v6() {
        v6.set_tclass_v6(0x20).unwrap();
        assert_eq!(v6.tclass_v6().unwrap(), 0x20);
    }

    runtime().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_nodelay(true).unwrap();
        let stream = socket
            .connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        assert!(stream.nodelay().unwrap(), "the option reached the stream");
        assert_eq!(stream.linger().unwrap(), None);
        stream.set_zero_linger().unwrap();
        assert_eq!(stream.linger().unwrap(), Some(Duration::ZERO));
        assert!(stream.take_error().unwrap().is_none());
    });
}

/// A port nobody listens on: `TcpSocket::connect` (non-blocking connect,
/// wait for writability, `take_error`) reports `ConnectionRefused`, as
/// `TcpStream::connect`, built on it, does.
#[test]
fn connecting_a_tcp_socket_to_a_closed_port_is_refused() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    runtime().block_on(async {
        let error = within_10_s(
            "a refused connect",
            TcpSocket::new_v4().unwrap().connect(closed),
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
        let error = within_10_s("a refused connect", TcpStream::connect(closed))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
    });
}

/// `from_std_stream` takes a `std` socket that has not connected (here
/// one made by `socket2`, standing in for any option `TcpSocket` lacks),
/// and the raw-descriptor traits hand the socket out and back.
#[test]
fn tcp_socket_from_std_stream_and_raw_fds() {
    runtime().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let made =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        made.set_keepalive(true).unwrap();
        let socket = TcpSocket::from_std_stream(made.into());
        assert!(socket.keepalive().unwrap(), "the same socket");
        let fd = socket.into_raw_fd();
        // SAFETY: `fd` was just given up by `into_raw_fd`; nothing else
        // owns it.
        let socket = unsafe { TcpSocket::from_raw_fd(fd) };
        assert_eq!(socket.as_raw_fd(), fd);
        let stream = socket
            .connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        assert_eq!(stream.as_raw_fd(), fd, "connect keeps the descriptor");
    });
}

/// `lookup_host` resolves a name on the blocking pool (`localhost`, to
/// loopback addresses with the port given) and takes an address at once,
/// as each argument type tokio accepts.
#[test]
fn lookup_host_resolves_names_and_addresses() {
    runtime().block_on(async {
        let addrs: Vec<SocketAddr> = weft::net::lookup_host("localhost:80")
            .await
            .unwrap()
            .collect();
        assert!(!addrs.is_empty());
        assert!(
            addrs
                .iter()
                .all(|addr| addr.ip().is_loopback() && addr.port() == 80),
            "{addrs:?}"
        );
        let named: Vec<_> = weft::net::lookup_host(("localhost", 8080))
            .await
            .unwrap()
            .collect();
        assert!(named.iter().all(|addr| addr.port() == 8080), "{named:?}");
        let ip: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let direct: Vec<_> = weft::net::lookup_host(ip).await.unwrap().collect();
        assert_eq!(direct, [ip]);
        let owned: Vec<_> = weft::net::lookup_host(String::from("[::1]:7"))
            .await
            .unwrap()
            .collect();
        assert_eq!(owned, ["[::1]:7".parse::<SocketAddr>().unwrap()]);
        let error = weft::net::lookup_host("no-port-here").await.err().unwrap();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    });
}

/// `peer_cred` on both ends of a Unix stream gives this process's user,
/// group and process ids (the kernel's record of the peer).
#[test]
fn unix_peer_credentials_are_ours() {
    runtime().block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        for stream in [&a, &b] {
            let cred: weft::net::unix::UCred = stream.peer_cred().unwrap();
            // SAFETY: `getuid` and `getgid` only read the process's ids.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            assert_eq!(cred.uid(), uid);
            assert_eq!(cred.gid(), gid);
            assert_eq!(cred.pid(), Some(std::process::id() as i32));
        }
    });
}

/// A leading NUL names a socket in Linux's abstract namespace (no file):
/// a listener binds one, a stream connects to it, and the addresses say
/// so (`as_abstract_name`, not a path); a datagram socket binds one and
/// another sends to it by name and connects to it. A pair's addresses
/// are unnamed.
#[test]
fn abstract_unix_names_round_trip() {
    runtime().block_on(async {
        let name = abstract_name("stream");
        let listener = UnixListener::bind(&name).unwrap();
        let local: weft::net::unix::SocketAddr = listener.local_addr().unwrap();
        assert_eq!(local.as_abstract_name(), Some(&name.as_bytes()[1..]));
        assert_eq!(local.as_pathname(), None);
        assert!(!local.is_unnamed());
        let connect = UnixStream::connect(&name);
        let (client, accepted) = futures_lite::future::zip(connect, listener.accept()).await;
        let mut client = client.unwrap();
        let (mut server, peer) = accepted.unwrap();
        assert!(peer.is_unnamed(), "the client did not bind: {peer:?}");
        assert_eq!(
            client.peer_addr().unwrap().as_abstract_name(),
            Some(&name.as_bytes()[1..])
        );
        client.write_all(b"abstract").await.unwrap();
        let mut buf = [0; 8];
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"abstract");

        let dgram_name = abstract_name("dgram");
        let server = UnixDatagram::bind(&dgram_name).unwrap();
        let client_name = abstract_name("dgram-client");
        let client = UnixDatagram::bind(&client_name).unwrap();
        client.send_to(b"by name", &dgram_name).await.unwrap();
        let mut buf = [0; 16];
        let (n, from) = within_10_s("a datagram", server.recv_from(&mut buf))
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"by name");
        assert_eq!(from.as_abstract_name(), Some(&client_name.as_bytes()[1..]));
        client.connect(&dgram_name).unwrap();
        client.send(b"connected").await.unwrap();
        let n = within_10_s("a datagram", server.recv(&mut buf))
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"connected");
        assert_eq!(
            client.peer_addr().unwrap().as_abstract_name(),
            Some(&dgram_name.as_bytes()[1..])
        );

        let (a, _b) = UnixStream::pair().unwrap();
        assert!(a.local_addr().unwrap().is_unnamed());
        let std_addr: std::os::unix::net::SocketAddr = a.peer_addr().unwrap().into();
        assert!(std_addr.is_unnamed());
    });
}

/// `try_read_buf` reads into a buffer's spare capacity (a `BytesMut`
/// that grows, a `Vec` with room) and advances it by exactly the bytes
/// read; `try_read_vectored`/`try_write_vectored` fill and take slices in
/// order; with nothing there each says `WouldBlock`. On TCP and Unix
/// streams alike (one code for both).
#[test]
fn try_buf_and_vectored_forms_on_tcp_and_unix_streams() {
    runtime().block_on(async {
        let (tcp_a, tcp_b) = tcp_pair().await;
        buf_and_vectored(&tcp_a, &tcp_b).await;
        let (unix_a, unix_b) = UnixStream::pair().unwrap();
        buf_and_vectored(&unix_a, &unix_b).await;
    });
}

/// What `try_buf_and_vectored_forms_on_tcp_and_unix_streams` checks, on
/// one connected pair.
async fn buf_and_vectored<S: StreamApi>(a: &S, b: &S) {
    let mut bytes = BytesMut::new();
    assert_eq!(
        a.try_read_buf(&mut bytes).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    assert!(bytes.is_empty());
    // A `try_*` call acts only on readiness the reactor delivered: wait
    // for it.
    within_10_s("writable", b.writable()).await.unwrap();
    let written = b
        .try_write_vectored(&[IoSlice::new(b"hello "), IoSlice::new(b"world")])
        .unwrap();
    assert_eq!(written, 11);
    read_until(a, |a| a.try_read_buf(&mut bytes), 11).await;
    assert_eq!(&bytes[..], b"hello world");

    let mut vec = Vec::with_capacity(64);
    vec.extend_from_slice(b"kept:");
    b.try_write(b"more").unwrap();
    read_until(a, |a| a.try_read_buf(&mut vec), 4).await;
    assert_eq!(vec, b"kept:more", "appended after what was there");

    b.try_write(b"0123456789").unwrap();
    let (mut first, mut second) = ([0u8; 4], [0u8; 6]);
    read_until(
        a,
        |a| a.try_read_vectored(&mut [IoSliceMut::new(&mut first), IoSliceMut::new(&mut second)]),
        10,
    )
    .await;
    assert_eq!((&first, &second), (b"0123", b"456789"));
}

/// Retries `read` (waiting for readability) until `total` bytes came.
async fn read_until<S: StreamApi>(
    stream: &S,
    mut read: impl FnMut(&S) -> std::io::Result<usize>,
    total: usize,
) {
    let mut got = 0;
    while got < total {
        within_10_s("readable", stream.readable()).await.unwrap();
        match read(stream) {
            Ok(n) => got += n,
            Err(error) => assert_eq!(error.kind(), ErrorKind::WouldBlock),
        }
    }
    assert_eq!(got, total);
}

/// The stream methods the test above uses, for both stream types.
trait StreamApi {
    async fn readable(&self) -> std::io::Result<()>;
    async fn writable(&self) -> std::io::Result<()>;
    fn try_write(&self, buf: &[u8]) -> std::io::Result<usize>;
    fn try_read_buf(&self, buf: &mut impl bytes::BufMut) -> std::io::Result<usize>;
    fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> std::io::Result<usize>;
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize>;
}

macro_rules! stream_api {
    ($ty:ty) => {
        impl StreamApi for $ty {
            async fn readable(&self) -> std::io::Result<()> {
                <$ty>::readable(self).await
            }
            async fn writable(&self) -> std::io::Result<()> {
                <$ty>::writable(self).await
            }
            fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
                <$ty>::try_write(self, buf)
            }
            fn try_read_buf(&self, buf: &mut impl bytes::BufMut) -> std::io::Result<usize> {
                <$ty>::try_read_buf(self, buf)
            }
            fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> std::io::Result<usize> {
                <$ty>::try_read_vectored(self, bufs)
            }
            fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
                <$ty>::try_write_vectored(self, bufs)
            }
        }
    };
}

stream_api!(TcpStream);
stream_api!(UnixStream);

/// `poll_read_ready`/`poll_write_ready` on a stream: pending with nothing
/// to read (the waker is kept and woken by data), ready once data came;
/// writable at once.
#[test]
fn stream_poll_readiness() {
    runtime().block_on(async {
        let (a, b) = tcp_pair().await;
        within_10_s("writable", b.writable()).await.unwrap();
        let mut polls = 0;
        within_10_s(
            "poll_read_ready",
            poll_fn(|cx| {
                polls += 1;
                if polls == 1 {
                    assert!(a.poll_read_ready(cx).is_pending(), "nothing sent yet");
                    b.try_write(b"x").unwrap();
                }
                a.poll_read_ready(cx)
            }),
        )
        .await
        .unwrap();
        within_10_s("poll_write_ready", poll_fn(|cx| b.poll_write_ready(cx)))
            .await
            .unwrap();
    });
}

/// The UDP `poll_*` forms (tokio's `ReadBuf`, feature `tokio-io`):
/// `poll_send_to` and `poll_recv_from`, `poll_peek_from` (which leaves the
/// datagram queued), connected `poll_send`/`poll_recv`, `poll_peek`,
/// `poll_peek_sender`, and the readiness polls.
#[test]
fn udp_poll_forms_send_receive_and_peek() {
    runtime().block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        within_10_s("poll_send_ready", poll_fn(|cx| a.poll_send_ready(cx)))
            .await
            .unwrap();
        let sent = poll_fn(|cx| a.poll_send_to(cx, b"first", b_addr))
            .await
            .unwrap();
        assert_eq!(sent, 5);
        within_10_s("poll_recv_ready", poll_fn(|cx| b.poll_recv_ready(cx)))
            .await
            .unwrap();
        let mut storage = [0u8; 32];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        let from = within_10_s(
            "poll_peek_from",
            poll_fn(|cx| b.poll_peek_from(cx, &mut buf)),
        )
        .await
        .unwrap();
        assert_eq!((buf.filled(), from), (&b"first"[..], a_addr));
        let sender = poll_fn(|cx| b.poll_peek_sender(cx)).await.unwrap();
        assert_eq!(sender, a_addr);
        let mut storage = [0u8; 32];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        let from = poll_fn(|cx| b.poll_recv_from(cx, &mut buf)).await.unwrap();
        assert_eq!(
            (buf.filled(), from),
            (&b"first"[..], a_addr),
            "peek left it"
        );

        a.connect(b_addr).await.unwrap();
        b.connect(a_addr).await.unwrap();
        poll_fn(|cx| a.poll_send(cx, b"second")).await.unwrap();
        let mut storage = [0u8; 32];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        within_10_s("poll_peek", poll_fn(|cx| b.poll_peek(cx, &mut buf)))
            .await
            .unwrap();
        assert_eq!(buf.filled(), b"second");
        let mut storage = [0u8; 32];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        poll_fn(|cx| b.poll_recv(cx, &mut buf)).await.unwrap();
        assert_eq!(buf.filled(), b"second");
    });
}

/// The UDP `*_buf` and `try_*` forms: `try_recv_buf_from`, `try_peek_from`
/// and `try_peek_sender` say `WouldBlock` on an empty queue and take a
/// datagram once one is there; `recv_buf_from` and `recv_buf` wait;
/// each `*_buf` advances its buffer by the datagram's length.
#[test]
fn udp_buf_and_try_forms() {
    runtime().block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut bytes = BytesMut::with_capacity(64);
        let would_block = |kind: ErrorKind| assert_eq!(kind, ErrorKind::WouldBlock);
        would_block(b.try_recv_buf_from(&mut bytes).unwrap_err().kind());
        would_block(b.try_peek_from(&mut [0; 8]).unwrap_err().kind());
        would_block(b.try_peek_sender().unwrap_err().kind());
        assert!(bytes.is_empty());

        within_10_s("writable", a.writable()).await.unwrap();
        a.try_send_to(b"one", b_addr).unwrap();
        within_10_s("readable", b.readable()).await.unwrap();
        let mut peeked = [0; 8];
        let (n, from) = b.try_peek_from(&mut peeked).unwrap();
        assert_eq!((&peeked[..n], from), (&b"one"[..], a_addr));
        assert_eq!(b.try_peek_sender().unwrap(), a_addr);
        let (n, from) = b.try_recv_buf_from(&mut bytes).unwrap();
        assert_eq!((n, &bytes[..], from), (3, &b"one"[..], a_addr));

        a.send_to(b"two", b_addr).await.unwrap();
        let (n, from) = within_10_s("recv_buf_from", b.recv_buf_from(&mut bytes))
            .await
            .unwrap();
        assert_eq!((n, &bytes[..], from), (3, &b"onetwo"[..], a_addr));
        assert_eq!(
            within_10_s("peek_sender", async {
                a.send_to(b"three", b_addr).await.unwrap();
                b.peek_sender().await
            })
            .await
            .unwrap(),
            a_addr
        );
        let mut vec = Vec::with_capacity(16);
        b.connect(a_addr).await.unwrap();
        let n = within_10_s("recv_buf", b.recv_buf(&mut vec)).await.unwrap();
        assert_eq!((n, &vec[..]), (5, &b"three"[..]));
        a.send_to(b"four", b_addr).await.unwrap();
        within_10_s("readable", b.readable()).await.unwrap();
        let n = b.try_recv_buf(&mut vec).unwrap();
        assert_eq!((n, &vec[..]), (4, &b"threefour"[..]));
        assert!(b.try_peek(&mut [0; 4]).is_err(), "the queue is empty again");
    });
}

/// `UnixDatagram` has the readiness methods (`readable`, `writable`,
/// `poll_recv_ready`, `poll_send_ready`), the `poll_*` forms and the
/// `*_buf` forms; `try_recv_buf_from` says `WouldBlock` on an empty queue
/// and gives an unbound sender's address as unnamed.
#[test]
fn unix_datagram_readiness_poll_and_buf_forms() {
    runtime().block_on(async {
        let (a, b) = UnixDatagram::pair().unwrap();
        within_10_s("writable", a.writable()).await.unwrap();
        within_10_s("poll_send_ready", poll_fn(|cx| a.poll_send_ready(cx)))
            .await
            .unwrap();
        let mut polls = 0;
        poll_fn(|cx| {
            polls += 1;
            if polls == 1 {
                assert!(b.poll_recv_ready(cx).is_pending(), "nothing sent yet");
                a.try_send(b"one").unwrap();
            }
            b.poll_recv_ready(cx)
        })
        .await
        .unwrap();
        let mut bytes = BytesMut::with_capacity(32);
        let (n, from) = b.try_recv_buf_from(&mut bytes).unwrap();
        assert_eq!((n, &bytes[..]), (3, &b"one"[..]));
        assert!(from.is_unnamed());
        assert_eq!(
            b.try_recv_buf_from(&mut bytes).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        poll_fn(|cx| a.poll_send(cx, b"two")).await.unwrap();
        let mut storage = [0u8; 16];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        within_10_s("poll_recv", poll_fn(|cx| b.poll_recv(cx, &mut buf)))
            .await
            .unwrap();
        assert_eq!(buf.filled(), b"two");
        a.send(b"three").await.unwrap();
        let n = within_10_s("recv_buf", b.recv_buf(&mut bytes))
            .await
            .unwrap();
        assert_eq!((n, &bytes[..]), (5, &b"onethree"[..]));
        a.send(b"four").await.unwrap();
        within_10_s("readable", b.readable()).await.unwrap();
        let n = b.try_recv_buf(&mut bytes).unwrap();
        assert_eq!((n, &bytes[..]), (4, &b"onethreefour"[..]));

        let name = abstract_name("poll-dgram");
        let server = UnixDatagram::bind(&name).unwrap();
        let client = UnixDatagram::unbound().unwrap();
        poll_fn(|cx| client.poll_send_to(cx, b"five", &name))
            .await
            .unwrap();
        let mut storage = [0u8; 16];
        let mut buf = tokio::io::ReadBuf::new(&mut storage);
        let from = within_10_s(
            "poll_recv_from",
            poll_fn(|cx| server.poll_recv_from(cx, &mut buf)),
        )
        .await
        .unwrap();
        assert_eq!(buf.filled(), b"five");
        assert!(from.is_unnamed());
        client.try_send_to(b"six", &name).unwrap();
        let (n, _) = within_10_s("recv_buf_from", server.recv_buf_from(&mut bytes))
            .await
            .unwrap();
        assert_eq!((n, &bytes[..]), (3, &b"onethreefoursix"[..]));
        assert!(server.take_error().unwrap().is_none());
    });
}

/// `UnixListener::poll_accept` is pending with no client (the waker kept)
/// and gives the connection once one connects.
#[test]
fn unix_listener_poll_accept() {
    runtime().block_on(async {
        let name = abstract_name("poll-accept");
        let listener = UnixListener::bind(&name).unwrap();
        let mut polls = 0;
        let mut client = None;
        let (mut accepted, _) = within_10_s(
            "poll_accept",
            poll_fn(|cx| {
                polls += 1;
                if polls == 1 {
                    assert!(listener.poll_accept(cx).is_pending(), "nobody connected");
                    let std_client = std::os::unix::net::UnixStream::connect_addr(
                        &<std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(&name.as_bytes()[1..]).unwrap(),
                    );
                    client = Some(std_client.unwrap());
                }
                listener.poll_accept(cx)
            }),
        )
        .await
        .unwrap();
        std::io::Write::write_all(client.as_mut().unwrap(), b"hi").unwrap();
        let mut buf = [0; 2];
        accepted.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"hi");
        assert!(listener.take_error().unwrap().is_none());
    });
}

/// The halves at tokio's paths, `net::tcp` and `net::unix`: they read
/// and write, have the stream's `try_*` and readiness methods on their
/// side, reunite, and halves of two streams give `ReuniteError` (its
/// message says why) with both halves back. The old paths still name the
/// same types (with a deprecation warning, allowed here).
#[test]
#[allow(deprecated)]
fn halves_at_tokios_paths_and_the_reunite_error() {
    runtime().block_on(async {
        let (client, server) = tcp_pair().await;
        let (read, write): (
            weft::net::tcp::OwnedReadHalf,
            weft::net::tcp::OwnedWriteHalf,
        ) = client.into_split();
        let (server_read, server_write) = server.into_split();
        write.writable().await.unwrap();
        assert_eq!(write.try_write(b"half").unwrap(), 4);
        let mut got = BytesMut::new();
        while got.len() < 4 {
            within_10_s("readable", server_read.readable())
                .await
                .unwrap();
            let _ = server_read.try_read_buf(&mut got);
        }
        assert_eq!(&got[..], b"half");
        assert_eq!(
            read.try_read(&mut [0; 4]).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        let error: weft::net::tcp::ReuniteError = read.reunite(server_write).unwrap_err();
        assert!(
            error.to_string().contains("not from the same socket"),
            "{error}"
        );
        let weft::net::tcp::ReuniteError(read, server_write) = error;
        let _old_path: weft::net::tcp_split::OwnedReadHalf = server_read;
        let mut stream = read.reunite(write).unwrap();
        drop(server_write);
        let (mut borrowed_read, borrowed_write): (
            weft::net::tcp::ReadHalf<'_>,
            weft::net::tcp::WriteHalf<'_>,
        ) = stream.split();
        within_10_s("writable", borrowed_write.writable())
            .await
            .unwrap();
        assert_eq!(
            borrowed_write
                .try_write_vectored(&[IoSlice::new(b"x")])
                .unwrap(),
            1
        );
        let mut rest = Vec::new();
        within_10_s("end of stream", borrowed_read.read_to_end(&mut rest))
            .await
            .unwrap();
        assert!(rest.is_empty(), "the peer's write half was dropped");

        let (a, b) = UnixStream::pair().unwrap();
        let (a_read, _a_write): (
            weft::net::unix::OwnedReadHalf,
            weft::net::unix::OwnedWriteHalf,
        ) = a.into_split();
        let (_b_read, b_write) = b.into_split();
        let error: weft::net::unix::ReuniteError = a_read.reunite(b_write).unwrap_err();
        let _old_path: weft::net::unix_split::ReuniteError = error;
        let (mut c, _d) = UnixStream::pair().unwrap();
        let (c_read, c_write): (
            weft::net::unix::ReadHalf<'_>,
            weft::net::unix::WriteHalf<'_>,
        ) = c.split();
        assert!(c_read.peer_addr().unwrap().is_unnamed());
        within_10_s("writable", c_write.writable()).await.unwrap();
        c_write.try_write(b"y").unwrap();
    });
}

/// `weft::time::Duration` is `std`'s, as `tokio::time::Duration` is.
#[test]
fn time_reexports_duration() {
    let duration: weft::time::Duration = Duration::from_millis(5);
    assert_eq!(duration, std::time::Duration::from_millis(5));
}
