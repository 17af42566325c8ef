//! Sockets on the reactor: round trips, the OS errors the networking
//! issue names, shutdown, file descriptors, the cooperative budget, and
//! `AsyncFd`.

#![cfg(not(loom))]

use std::future::{Future, poll_fn};
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use weft::runtime::{Builder, Runtime};

const MS: Duration = Duration::from_millis(1);

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

async fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _detached = weft::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let _detached = weft::spawn(async move {
                let mut buf = vec![0; 4096];
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if stream.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn many_connections_echo_concurrently() {
    let rt = runtime(2);
    rt.block_on(async {
        let addr = echo_server().await;
        let clients: Vec<_> = (0..64)
            .map(|i| {
                weft::spawn(async move {
                    let mut stream = TcpStream::connect(addr).await.unwrap();
                    stream.set_nodelay(true).unwrap();
                    assert!(stream.nodelay().unwrap());
                    for round in 0..50u32 {
                        let message = vec![(i + round) as u8; 1 + (round as usize * 97) % 5000];
                        stream.write_all(&message).await.unwrap();
                        let mut back = vec![0; message.len()];
                        stream.read_exact(&mut back).await.unwrap();
                        assert_eq!(back, message);
                    }
                })
            })
            .collect();
        for client in clients {
            client.await.unwrap();
        }
    });
}

#[test]
fn accept_reports_the_peer_and_addresses_agree() {
    let rt = runtime(2);
    rt.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connect = weft::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (server_side, peer) = listener.accept().await.unwrap();
        let client = connect.await.unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(client.peer_addr().unwrap(), addr);
        assert_eq!(server_side.local_addr().unwrap(), addr);
    });
}

#[test]
fn a_host_name_is_resolved_off_the_workers() {
    let rt = runtime(1);
    rt.block_on(async {
        let listener = TcpListener::bind("localhost:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accept = weft::spawn(async move { listener.accept().await.map(drop) });
        TcpStream::connect(("localhost", port)).await.unwrap();
        accept.await.unwrap().unwrap();
    });
}

#[test]
fn connecting_to_a_closed_port_is_refused() {
    let rt = runtime(1);
    rt.block_on(async {
        // Bind then drop: the port is (for a moment) known to be closed.
        let addr = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap()
        };
        let error = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
    });
}

/// Runs `future` as a task and returns its output; fails the test if it
/// has not finished in 10 s. A task that retries forever inside one poll
/// cannot be timed out from within the runtime, and would hang the
/// runtime's drop: the test thread waits on a channel and leaks the
/// runtime if it gives up.
fn within_10_s<T: Send + 'static>(
    rt: Runtime,
    what: &str,
    future: impl Future<Output = T> + Send + 'static,
) -> T {
    let (sender, result) = mpsc::channel();
    drop(rt.spawn(async move { sender.send(future.await).unwrap() }));
    match result.recv_timeout(Duration::from_secs(10)) {
        Ok(output) => output,
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{what}: the task panicked (its message is above)")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            std::mem::forget(rt);
            panic!("{what} did not finish in 10 s");
        }
    }
}

/// A UDP socket connected to a plain `std` one on loopback.
async fn udp_connected_to_a_std_peer() -> (UdpSocket, std::net::UdpSocket) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(peer.local_addr().unwrap()).await.unwrap();
    (socket, peer)
}

#[test]
fn a_connected_udp_socket_reports_a_refused_datagram_then_waits_again() {
    // The port's ICMP "unreachable" comes back as an error on the socket:
    // `recv` returns it (as tokio's does) rather than taking it for a
    // spurious wake-up. The error is reported once: the next `recv` waits
    // for a datagram (the error bit is cleared with the readable bit when
    // the retried syscall says `WouldBlock`; kept, every later wait spun
    // inside one poll) and gets the next one.
    within_10_s(runtime(1), "recv after a refused datagram", async {
        let (socket, peer) = udp_connected_to_a_std_peer().await;
        let peer_addr = peer.local_addr().unwrap();
        drop(peer);
        socket.send(b"anyone?").await.unwrap();
        let mut buf = [0; 16];
        let error = socket.recv(&mut buf).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
        let quiet = weft::time::timeout(Duration::from_millis(50), socket.recv(&mut buf)).await;
        assert!(quiet.is_err(), "a second recv did not wait: {quiet:?}");
        // UDP leaves no TIME_WAIT: the port can be bound again at once.
        let peer = std::net::UdpSocket::bind(peer_addr).unwrap();
        peer.send_to(b"back", socket.local_addr().unwrap()).unwrap();
        let n = socket.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"back");
    });
}

#[test]
fn try_recv_forgets_readiness_on_would_block_and_only_then() {
    within_10_s(runtime(1), "try_recv and readable", async {
        let (socket, peer) = udp_connected_to_a_std_peer().await;
        peer.send_to(b"one", socket.local_addr().unwrap()).unwrap();
        let mut buf = [0; 16];
        assert_eq!(socket.recv(&mut buf).await.unwrap(), 3);
        // The readiness `recv` found is still recorded (it saw no
        // `WouldBlock`): `try_recv` tries the syscall, gets `WouldBlock`,
        // and forgets it, so `readable` waits.
        let error = socket.try_recv(&mut buf).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::WouldBlock);
        let early = weft::time::timeout(Duration::from_millis(50), socket.readable()).await;
        assert!(early.is_err(), "readable returned with nothing to read");
        // Another error keeps the readiness: a datagram queued behind a
        // refused one is received without a new edge.
        peer.send_to(b"two", socket.local_addr().unwrap()).unwrap();
        drop(peer);
        socket.send(b"anyone?").await.unwrap();
        // Time for the refusal and the datagram to arrive and be delivered.
        weft::time::sleep(Duration::from_millis(10)).await;
        let error = socket.try_recv(&mut buf).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
        let n = socket
            .try_recv(&mut buf)
            .expect("the datagram queued behind the refusal");
        assert_eq!(&buf[..n], b"two");
    });
}

#[test]
fn small_writes_into_a_full_send_buffer_wait_for_room() {
    // 100-byte writes on a Unix stream (one buffer per write, so a full
    // socket refuses a write whole rather than taking part of it) while
    // the peer does not read: a write finds its readiness stale and gets
    // `WouldBlock` from the kernel, which must clear the readiness and
    // wait, never reach the caller.
    const WRITES: usize = 20_000;
    let rt = runtime(2);
    rt.block_on(async {
        let (mut ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            let mut received = Vec::new();
            ours.read_to_end(&mut received).unwrap();
            received.len()
        });
        let mut stream = UnixStream::from_std(theirs).unwrap();
        let chunk = [5u8; 100];
        for _ in 0..WRITES {
            stream.write_all(&chunk).await.unwrap();
        }
        drop(stream);
        assert_eq!(reader.join().unwrap(), WRITES * chunk.len());
    });
}

#[test]
fn udp_try_send_and_take_error() {
    within_10_s(runtime(1), "UDP try_send and take_error", async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        assert!(a.as_raw_fd() > 2 && a.as_raw_fd() != b.as_raw_fd());
        let b_addr = b.local_addr().unwrap();
        let mut buf = [0; 8];
        a.writable().await.unwrap();
        assert_eq!(a.try_send_to(b"to", b_addr).unwrap(), 2);
        let (n, _) = b.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"to");
        a.connect(b_addr).await.unwrap();
        assert_eq!(a.try_send(b"one").unwrap(), 3);
        let n = b.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"one");
        // A refused datagram leaves an error on the socket for
        // `take_error`, once.
        assert!(a.take_error().unwrap().is_none());
        drop(b);
        a.send(b"anyone?").await.unwrap();
        weft::time::sleep(Duration::from_millis(10)).await;
        let error = a.take_error().unwrap().expect("the refusal");
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
        assert!(a.take_error().unwrap().is_none());
    });
}

#[test]
fn accepting_on_a_shut_down_listener_returns_the_error() {
    // shutdown(2) on a listening socket: epoll reports a hang-up and every
    // accept fails with EINVAL from then on. Taking that error for a
    // spurious wake-up would retry it forever inside one poll.
    for poll_form in [false, true] {
        let accepted = within_10_s(runtime(1), "accept on a shut-down listener", async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            // SAFETY: the listener's fd stays open for the call.
            let rc = unsafe { libc::shutdown(listener.as_raw_fd(), libc::SHUT_RDWR) };
            assert_eq!(rc, 0);
            let accepted = if poll_form {
                poll_fn(|cx| listener.poll_accept(cx)).await
            } else {
                listener.accept().await
            };
            accepted.map(drop).map_err(|error| error.kind())
        });
        assert_eq!(
            accepted,
            Err(ErrorKind::InvalidInput),
            "poll form: {poll_form}"
        );
    }
}

#[test]
fn poll_accept_after_the_connection_was_taken_is_pending_not_would_block() {
    // `accept` leaves the listener's readiness set (it did not see
    // `WouldBlock`), so the next `poll_accept` tries the syscall and gets
    // `WouldBlock`: that must clear the readiness and wait, not be
    // returned; the next connection then wakes it.
    let rt = runtime(1);
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _first = std::net::TcpStream::connect(addr).unwrap();
        listener.accept().await.unwrap();
        let mut cx = Context::from_waker(Waker::noop());
        match listener.poll_accept(&mut cx) {
            Poll::Pending => {}
            Poll::Ready(accepted) => panic!(
                "no connection waits, yet poll_accept gave {:?}",
                accepted.map(drop)
            ),
        }
        let _second = std::net::TcpStream::connect(addr).unwrap();
        let accepted = weft::time::timeout(
            Duration::from_secs(10),
            poll_fn(|cx| listener.poll_accept(cx)),
        )
        .await;
        accepted
            .expect("the second connection was not accepted")
            .unwrap();
    });
}

#[test]
fn binding_a_taken_address_says_address_in_use() {
    let rt = runtime(1);
    rt.block_on(async {
        let first = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let error = TcpListener::bind(first.local_addr().unwrap())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::AddrInUse, "{error}");
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let error = UdpSocket::bind(udp.local_addr().unwrap())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::AddrInUse, "{error}");
    });
}

#[test]
fn end_of_stream_is_ok_zero_and_close_shuts_the_write_side() {
    let rt = runtime(1);
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = weft::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"last words").await.unwrap();
            stream.close().await.unwrap();
            // The read side still works after the write side is shut.
            let mut reply = Vec::new();
            stream.read_to_end(&mut reply).await.unwrap();
            reply
        });
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"last words");
        let mut buf = [0; 8];
        assert_eq!(stream.read(&mut buf).await.unwrap(), 0, "EOF again");
        stream.write_all(b"bye").await.unwrap();
        // `shutdown` sends the FIN while the stream lives on.
        stream.shutdown(Shutdown::Write).unwrap();
        let reply = weft::time::timeout(Duration::from_secs(10), client).await;
        assert_eq!(
            reply.expect("no end of stream after shutdown").unwrap(),
            b"bye"
        );
        drop(stream);
    });
}

/// Closes `stream` with an RST (`SO_LINGER` 0) instead of a FIN.
fn reset_on_close(stream: &std::net::TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid fd and a `linger` of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0);
}

#[test]
fn a_reset_connection_and_a_broken_pipe_are_errors_of_their_kind() {
    let rt = runtime(1);
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // The peer is a plain std socket that resets the connection.
        let peer = std::thread::spawn(move || {
            let stream = std::net::TcpStream::connect(addr).unwrap();
            reset_on_close(&stream);
            drop(stream);
        });
        let (mut stream, _) = listener.accept().await.unwrap();
        peer.join().unwrap();
        let mut buf = [0; 16];
        let error = stream.read(&mut buf).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ConnectionReset, "{error}");

        // Writing to a peer that closed: first writes may succeed (the
        // peer answers with an RST), then `BrokenPipe` (or a reset).
        let peer = std::thread::spawn(move || drop(std::net::TcpStream::connect(addr).unwrap()));
        let (mut stream, _) = listener.accept().await.unwrap();
        peer.join().unwrap();
        let error = loop {
            match stream.write_all(&[7; 65536]).await {
                Ok(()) => weft::time::sleep(Duration::from_millis(1)).await,
                Err(error) => break error,
            }
        };
        assert!(
            matches!(
                error.kind(),
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset
            ),
            "{error}"
        );
    });
}

#[test]
fn owned_halves_move_to_two_tasks_and_reunite() {
    let rt = runtime(2);
    rt.block_on(async {
        let addr = echo_server().await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut read, mut write) = stream.into_split();
        let writer = weft::spawn(async move {
            for i in 0..100u8 {
                write.write_all(&[i; 100]).await.unwrap();
            }
            write
        });
        let reader = weft::spawn(async move {
            let mut got = vec![0; 100 * 100];
            read.read_exact(&mut got).await.unwrap();
            for (i, chunk) in got.chunks(100).enumerate() {
                assert!(chunk.iter().all(|&b| b == i as u8));
            }
            read
        });
        let write = writer.await.unwrap();
        let read = reader.await.unwrap();
        let stream = read.reunite(write).unwrap();
        stream.peer_addr().unwrap();

        let other = TcpStream::connect(addr).await.unwrap();
        let (read, _) = TcpStream::connect(addr).await.unwrap().into_split();
        let (_, write) = other.into_split();
        assert!(read.reunite(write).is_err(), "halves of two streams");
    });
}

#[test]
fn borrowed_halves_read_and_write_at_once() {
    let rt = runtime(1);
    rt.block_on(async {
        let addr = echo_server().await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let (mut read, mut write) = stream.split();
        let sent = vec![3u8; 1 << 20];
        let send = async {
            write.write_all(&sent).await.unwrap();
        };
        let receive = async {
            let mut back = vec![0; 1 << 20];
            read.read_exact(&mut back).await.unwrap();
            back
        };
        let ((), back) = futures_lite::future::zip(send, receive).await;
        assert_eq!(back, sent);
    });
}

#[test]
fn peek_leaves_the_data_for_the_next_read() {
    let rt = runtime(1);
    rt.block_on(async {
        let addr = echo_server().await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"peekaboo").await.unwrap();
        stream.readable().await.unwrap();
        let mut buf = [0; 8];
        let mut peeked = 0;
        while peeked < 8 {
            peeked = stream.peek(&mut buf).await.unwrap();
        }
        assert_eq!(&buf, b"peekaboo");
        let mut again = [0; 8];
        stream.read_exact(&mut again).await.unwrap();
        assert_eq!(&again, b"peekaboo");
        // The owned read half peeks too.
        stream.write_all(b"halves").await.unwrap();
        let (mut read, _write) = stream.into_split();
        let mut buf = [0; 6];
        let mut peeks = 0;
        while read.peek(&mut buf).await.unwrap() < 6 {
            peeks += 1;
            assert!(peeks < 1000, "the echo never came back whole");
            weft::time::sleep(MS).await;
        }
        assert_eq!(&buf, b"halves");
        let mut again = [0; 6];
        read.read_exact(&mut again).await.unwrap();
        assert_eq!(&again, b"halves");
    });
}

/// Options read back what was set (they reach the socket), and `Debug`
/// names the type and its addresses.
#[test]
fn socket_options_read_back_and_debug_names_the_socket() {
    let rt = runtime(1);
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_ttl(42).unwrap();
        assert_eq!(listener.ttl().unwrap(), 42);
        let printed = format!("{listener:?}");
        assert!(
            printed.starts_with("TcpListener") && printed.contains(&addr.to_string()),
            "{printed}"
        );

        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_ttl(43).unwrap();
        assert_eq!(stream.ttl().unwrap(), 43);
        for nodelay in [true, false] {
            stream.set_nodelay(nodelay).unwrap();
            assert_eq!(stream.nodelay().unwrap(), nodelay);
        }
        let printed = format!("{stream:?}");
        assert!(
            printed.starts_with("TcpStream") && printed.contains(&addr.to_string()),
            "{printed}"
        );

        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        udp.set_ttl(44).unwrap();
        assert_eq!(udp.ttl().unwrap(), 44);
        for broadcast in [true, false] {
            udp.set_broadcast(broadcast).unwrap();
            assert_eq!(udp.broadcast().unwrap(), broadcast);
        }
        assert!(udp.take_error().unwrap().is_none());
        let printed = format!("{udp:?}");
        let udp_addr = udp.local_addr().unwrap().to_string();
        assert!(
            printed.starts_with("UdpSocket") && printed.contains(&udp_addr),
            "{printed}"
        );

        let (unix, _other) = UnixStream::pair().unwrap();
        let printed = format!("{unix:?}");
        assert!(printed.starts_with("UnixStream"), "{printed}");
    });
}

/// tokio's readiness API on a connected pair: `try_read` says `WouldBlock`
/// with nothing to read and `readable` waits for data; `try_write` fills
/// the socket until `WouldBlock` and `writable` then waits for room.
macro_rules! readiness_api_on {
    ($ours:expr, $theirs:expr) => {{
        let (ours, theirs) = ($ours, $theirs);
        let mut buf = [0u8; 16];
        let kind = |result: std::io::Result<usize>| result.unwrap_err().kind();
        assert_eq!(kind(ours.try_read(&mut buf)), ErrorKind::WouldBlock);
        let early = weft::time::timeout(Duration::from_millis(50), ours.readable()).await;
        assert!(early.is_err(), "readable with nothing to read");
        theirs.writable().await.unwrap();
        assert_eq!(theirs.try_write(b"hello").unwrap(), 5);
        let n = loop {
            ours.readable().await.unwrap();
            match ours.try_read(&mut buf) {
                Ok(n) => break n,
                Err(error) => assert_eq!(error.kind(), ErrorKind::WouldBlock),
            }
        };
        assert_eq!(&buf[..n], b"hello");
        // Fill the socket, then `writable` waits until the peer reads.
        let chunk = vec![7u8; 65536];
        let mut written = 0;
        loop {
            match ours.try_write(&chunk) {
                Ok(n) => written += n,
                Err(error) => {
                    assert_eq!(error.kind(), ErrorKind::WouldBlock);
                    break;
                }
            }
        }
        let early = weft::time::timeout(Duration::from_millis(50), ours.writable()).await;
        assert!(early.is_err(), "writable with the socket full");
        let mut drained = 0;
        let mut sink = vec![0u8; 65536];
        while drained < written {
            theirs.readable().await.unwrap();
            match theirs.try_read(&mut sink) {
                Ok(n) => drained += n,
                Err(error) => assert_eq!(error.kind(), ErrorKind::WouldBlock),
            }
        }
        weft::time::timeout(Duration::from_secs(10), ours.writable())
            .await
            .expect("writable after the peer read everything")
            .unwrap();
    }};
}

#[test]
fn try_read_try_write_readable_and_writable_behave_as_tokios() {
    within_10_s(runtime(1), "the readiness API", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let std_fd = client.as_raw_fd();
        assert!(std_fd > 2 && std_fd != server.as_raw_fd());
        readiness_api_on!(&client, &server);
        let (a, b) = UnixStream::pair().unwrap();
        readiness_api_on!(&a, &b);
    });
}

#[test]
fn from_std_and_into_std_round_trip() {
    let rt = runtime(1);
    rt.block_on(async {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        let listener = TcpListener::from_std(std_listener).unwrap();
        let connect = std::thread::spawn(move || std::net::TcpStream::connect(addr).unwrap());
        let (stream, _) = listener.accept().await.unwrap();
        let mut client = connect.join().unwrap();
        let mut std_stream = stream.into_std().unwrap();
        std_stream.set_nonblocking(false).unwrap();
        client.write_all(b"x").unwrap();
        let mut byte = [0];
        std_stream.read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"x");
        let stream = TcpStream::from_std(std_stream).unwrap();
        let mut stream = stream;
        stream.write_all(b"y").await.unwrap();
        client.read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"y");
        assert_eq!(listener.into_std().unwrap().local_addr().unwrap(), addr);
    });
}

#[test]
fn udp_sends_and_receives_connected_and_not() {
    let rt = runtime(2);
    rt.block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        assert_eq!(a.peer_addr().unwrap_err().kind(), ErrorKind::NotConnected);
        a.send_to(b"one", b_addr).await.unwrap();
        let mut buf = [0; 16];
        let (n, from) = b.recv_from(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], from), (&b"one"[..], a_addr));
        a.connect(b_addr).await.unwrap();
        b.connect(a_addr).await.unwrap();
        assert_eq!(a.peer_addr().unwrap(), b_addr);
        b.send(b"two").await.unwrap();
        let n = a.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"two");
    });
}

#[test]
fn several_tasks_waiting_on_one_udp_socket_are_all_served() {
    let rt = runtime(2);
    rt.block_on(async {
        let server = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let addr = server.local_addr().unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let receivers: Vec<_> = (0..4)
            .map(|_| {
                let server = server.clone();
                let received = received.clone();
                weft::spawn(async move {
                    let mut buf = [0; 8];
                    server.recv_from(&mut buf).await.unwrap();
                    received.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        // Let every receiver start waiting before anything arrives.
        weft::time::sleep(Duration::from_millis(20)).await;
        let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        for _ in 0..4 {
            client.send_to(b"hi", addr).await.unwrap();
        }
        for receiver in receivers {
            receiver.await.unwrap();
        }
        assert_eq!(received.load(Ordering::SeqCst), 4);
    });
}

#[test]
fn unix_streams_listeners_and_datagrams() {
    let rt = runtime(2);
    let dir = std::env::temp_dir().join(format!("weft-net-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stream_path = dir.join("stream.sock");
    let _ = std::fs::remove_file(&stream_path);
    rt.block_on(async {
        let listener = UnixListener::bind(&stream_path).unwrap();
        let path = stream_path.clone();
        let client = weft::spawn(async move {
            let mut stream = UnixStream::connect(&path).await.unwrap();
            stream.write_all(b"over unix").await.unwrap();
            stream.close().await.unwrap();
        });
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"over unix");
        client.await.unwrap();

        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.write_all(b"pair").await.unwrap();
        let mut buf = [0; 4];
        b.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pair");

        // Split halves, as for TCP.
        let (c, d) = UnixStream::pair().unwrap();
        let (mut c_read, mut c_write) = c.into_split();
        let (mut d_read, mut d_write) = d.into_split();
        c_write.write_all(b"to d").await.unwrap();
        d_write.write_all(b"to c").await.unwrap();
        let mut got = [0; 4];
        d_read.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"to d");
        c_read.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"to c");
        let mut c = c_read.reunite(c_write).unwrap();
        let (mut c_read, _c_write) = c.split();
        drop(d_write); // shuts d's write side: c reads end of stream
        let mut rest = Vec::new();
        c_read.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        assert!(
            d_read
                .reunite(UnixStream::pair().unwrap().0.into_split().1)
                .is_err()
        );

        let (x, y) = UnixDatagram::pair().unwrap();
        x.send(b"dgram").await.unwrap();
        let mut buf = [0; 8];
        let n = y.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"dgram");
        // Bound to a path, sent to by path, then connected.
        let dgram_path = dir.join("dgram.sock");
        let _ = std::fs::remove_file(&dgram_path);
        let server = UnixDatagram::bind(&dgram_path).unwrap();
        let client = UnixDatagram::unbound().unwrap();
        client.send_to(b"by path", &dgram_path).await.unwrap();
        let mut buf = [0; 16];
        let received =
            weft::time::timeout(Duration::from_secs(10), server.recv_from(&mut buf)).await;
        let (n, _) = received.expect("nothing sent by path").unwrap();
        assert_eq!(&buf[..n], b"by path");
        client.connect(&dgram_path).unwrap();
        assert_eq!(
            client.peer_addr().unwrap().as_pathname(),
            Some(dgram_path.as_path())
        );
        client.send(b"connected").await.unwrap();
        let n = server.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"connected");

        let error = UnixStream::connect(dir.join("nobody-listens.sock"))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn ten_thousand_connections_leak_no_file_descriptors() {
    let rt = runtime(2);
    rt.block_on(async {
        let addr = echo_server().await;
        // Warm up whatever the first connection allocates for good.
        drop(TcpStream::connect(addr).await.unwrap());
        weft::time::sleep(Duration::from_millis(50)).await;
        let before = open_fds();
        for batch in 0..100 {
            let streams: Vec<_> = (0..100)
                .map(|_| weft::spawn(async move { TcpStream::connect(addr).await.unwrap() }))
                .collect();
            for stream in streams {
                let mut stream = stream.await.unwrap();
                if batch % 10 == 0 {
                    stream.write_all(b"ping").await.unwrap();
                    let mut back = [0; 4];
                    stream.read_exact(&mut back).await.unwrap();
                }
            }
        }
        // The server side closes on EOF: give it a moment to see every one.
        let mut after = open_fds();
        for _ in 0..200 {
            if after <= before {
                break;
            }
            weft::time::sleep(Duration::from_millis(10)).await;
            after = open_fds();
        }
        assert!(after <= before, "fds before {before}, after {after}");
    });
}

#[test]
fn a_socket_used_after_its_runtime_shut_down_returns_an_error() {
    let rt = runtime(1);
    let (listener, mut stream, udp) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connect = weft::spawn(async move { TcpStream::connect(addr).await.unwrap() });
        let (stream, _) = listener.accept().await.unwrap();
        drop(connect.await.unwrap());
        (
            listener,
            stream,
            UdpSocket::bind("127.0.0.1:0").await.unwrap(),
        )
    });
    drop(rt);
    let other = runtime(1);
    other.block_on(async {
        let mut buf = [0; 8];
        let error = stream.read(&mut buf).await.unwrap_err();
        assert!(error.to_string().contains("shut down"), "{error}");
        let error = listener.accept().await.unwrap_err();
        assert!(error.to_string().contains("shut down"), "{error}");
        let error = udp.recv(&mut buf).await.unwrap_err();
        assert!(error.to_string().contains("shut down"), "{error}");
    });
}

#[test]
fn a_task_waiting_on_a_socket_of_a_runtime_that_shuts_down_is_woken_with_an_error() {
    let rt = runtime(1);
    let udp = rt.block_on(async { UdpSocket::bind("127.0.0.1:0").await.unwrap() });
    let waiter = std::thread::spawn(move || {
        let other = runtime(1);
        other.block_on(async move {
            let mut buf = [0; 8];
            udp.recv(&mut buf).await
        })
    });
    std::thread::sleep(Duration::from_millis(50));
    drop(rt);
    let error = waiter.join().unwrap().unwrap_err();
    assert!(error.to_string().contains("shut down"), "{error}");
}

#[test]
#[should_panic(expected = "outside of a weft runtime")]
fn binding_outside_a_runtime_panics_with_what_to_do() {
    let _ = futures_lite::future::block_on(TcpListener::bind("127.0.0.1:0"));
}

/// As with tokio, the runtime is looked up when the future is first
/// polled, so `block_on(bind(..))` works.
#[test]
fn a_bind_future_made_outside_the_runtime_works_inside_block_on() {
    let rt = runtime(1);
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let udp = rt.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let stream = rt.block_on(TcpStream::connect(addr)).unwrap();
    assert_eq!(stream.peer_addr().unwrap(), addr);
    udp.local_addr().unwrap();
}

/// The networking issue's starvation case: one worker, a task reading a
/// socket that is always ready, next to a task sleeping 1 ms in a loop. The
/// sleeper must finish its loop while the reader is still reading (the
/// reader stops only when the sleeper is done, or when the writer gives up
/// after 20 s, which fails the test instead of hanging it).
#[test]
fn a_task_on_an_always_ready_socket_does_not_starve_a_sleeper() {
    // The stall monitor off: it would rescue the sleeper from the reader's
    // endless poll, and the budget (which makes the reader yield) would go
    // untested; a budget that never ran out passed with it on.
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .stall_monitor(false)
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let writer_stop = Arc::new(AtomicBool::new(false));
        let writer = std::thread::spawn({
            let stop = writer_stop.clone();
            move || {
                let mut stream = std::net::TcpStream::connect(addr).unwrap();
                let start = std::time::Instant::now();
                let chunk = [1u8; 65536];
                while !stop.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
                    if stream.write_all(&chunk).is_err() {
                        break;
                    }
                }
                let _ = stream.shutdown(Shutdown::Both);
            }
        });
        let (mut stream, _) = listener.accept().await.unwrap();
        let sleeper_done = Arc::new(AtomicBool::new(false));
        let sleeper = weft::spawn({
            let done = sleeper_done.clone();
            async move {
                for _ in 0..20 {
                    weft::time::sleep(Duration::from_millis(1)).await;
                }
                done.store(true, Ordering::Release);
            }
        });
        let reader = weft::spawn({
            let done = sleeper_done.clone();
            async move {
                let mut buf = vec![0; 64];
                let mut reads = 0u64;
                while !done.load(Ordering::Acquire) {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return (reads, false),
                        Ok(_) => reads += 1,
                    }
                }
                (reads, true)
            }
        });
        let (reads, sleeper_finished_first) = reader.await.unwrap();
        writer_stop.store(true, Ordering::Release);
        sleeper.await.unwrap();
        writer.join().unwrap();
        assert!(
            sleeper_finished_first,
            "the sleeper starved behind a reader that did {reads} reads"
        );
    });
}

#[test]
fn async_fd_waits_for_a_pipe() {
    use weft::io::unix::AsyncFd;
    let rt = runtime(1);
    rt.block_on(async {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let fd = AsyncFd::new(a).unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            b.write_all(b"late").unwrap();
            b
        });
        let mut buf = [0; 4];
        let n = loop {
            let mut guard = fd.readable().await.unwrap();
            match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
                Ok(result) => break result.unwrap(),
                Err(_would_block) => continue,
            }
        };
        assert_eq!(&buf[..n], b"late");
        let _b = writer.join().unwrap();
        let a = fd.into_inner();
        a.set_nonblocking(false).unwrap();
    });
}

#[test]
fn async_fd_clears_readiness_only_when_asked_and_gives_the_fd_back_unregistered() {
    use std::os::fd::AsRawFd;
    use weft::io::unix::AsyncFd;
    within_10_s(runtime(1), "AsyncFd's guard", async {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let raw = a.as_raw_fd();
        let fd = AsyncFd::new(a).unwrap();
        assert_eq!(fd.as_raw_fd(), raw);
        b.write_all(b"x").unwrap();
        let mut buf = [0; 4];
        {
            let mut guard = fd.readable().await.unwrap();
            // `try_io` passes on a result that is not `WouldBlock`, an
            // error too, and keeps the readiness.
            let read = guard.try_io(|inner| inner.get_ref().read(&mut buf));
            assert_eq!(read.expect("not WouldBlock").unwrap(), 1);
            let failed = guard.try_io(|_| Err::<(), _>(std::io::Error::other("not a would-block")));
            assert_eq!(
                failed.expect("not WouldBlock").unwrap_err().to_string(),
                "not a would-block"
            );
            // `WouldBlock` clears it, so the next wait sleeps.
            let drained = guard.try_io(|inner| inner.get_ref().read(&mut buf));
            assert!(drained.is_err(), "WouldBlock read as a result: {drained:?}");
        }
        let early = weft::time::timeout(Duration::from_millis(50), fd.readable()).await;
        assert!(
            early.is_err(),
            "readable returned after try_io saw WouldBlock"
        );
        // So does `clear_ready`, called by hand.
        b.write_all(b"y").unwrap();
        {
            let mut guard = fd.readable().await.unwrap();
            assert_eq!(guard.get_inner().read(&mut buf).unwrap(), 1);
            guard.clear_ready();
        }
        let early = weft::time::timeout(Duration::from_millis(50), fd.readable()).await;
        assert!(early.is_err(), "readable returned after clear_ready");
        // `into_inner` deregisters: the same fd registers again.
        let a = fd.into_inner();
        let again = AsyncFd::new(a).expect("the fd was left registered");
        drop(again);
    });
}

/// With `tokio-io`, tokio's traits work on weft's streams (what tokio-util
/// codecs and TLS crates need).
#[test]
fn tokio_io_traits_work_on_weft_streams() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rt = runtime(1);
    rt.block_on(async {
        let addr = echo_server().await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut stream, b"through tokio's traits")
            .await
            .unwrap();
        let mut back = [0; 22];
        tokio::io::AsyncReadExt::read_exact(&mut stream, &mut back)
            .await
            .unwrap();
        assert_eq!(&back, b"through tokio's traits");
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.write_u32(7).await.unwrap();
        assert_eq!(b.read_u32().await.unwrap(), 7);
        tokio::io::AsyncWriteExt::shutdown(&mut a).await.unwrap();
        let mut rest = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut b, &mut rest)
            .await
            .unwrap();
        assert!(rest.is_empty());
    });
}

/// The keeper woken by readiness hands the poller over: readiness that
/// arrives while the task it woke holds its worker in a long poll still
/// reaches its task on the other worker (without the hand-over nobody
/// waits in the poller until the long poll ends).
#[test]
fn readiness_is_not_stuck_behind_the_long_poll_of_the_task_it_woke_first() {
    let rt = runtime(2);
    rt.block_on(async {
        let (mut slow_in, mut slow_out) = UnixStream::pair().unwrap();
        let (mut fast_in, mut fast_out) = UnixStream::pair().unwrap();
        // `release` ends the long poll; `ended` says it ended (by release,
        // or by its 10 s limit, which fails the test).
        let release = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(AtomicBool::new(false));
        let slow = weft::spawn({
            let (release, ended) = (release.clone(), ended.clone());
            async move {
                let mut byte = [0];
                slow_in.read_exact(&mut byte).await.unwrap();
                let start = std::time::Instant::now();
                while !release.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(10)
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                ended.store(true, Ordering::Release);
            }
        });
        let fast = weft::spawn({
            let (release, ended) = (release.clone(), ended.clone());
            async move {
                let mut byte = [0];
                fast_in.read_exact(&mut byte).await.unwrap();
                let served_during_long_poll = !ended.load(Ordering::Acquire);
                release.store(true, Ordering::Release);
                served_during_long_poll
            }
        });
        // Both readers wait in the reactor; let every worker go to sleep.
        weft::time::sleep(Duration::from_millis(50)).await;
        let writer = std::thread::spawn(move || {
            let rt = runtime(1);
            rt.block_on(async move {
                slow_out.write_all(b"s").await.unwrap();
                std::thread::sleep(Duration::from_millis(50));
                fast_out.write_all(b"f").await.unwrap();
                (slow_out, fast_out)
            })
        });
        let served_during_long_poll = fast.await.unwrap();
        slow.await.unwrap();
        let _ends = writer.join().unwrap();
        assert!(
            served_during_long_poll,
            "the second socket's reader waited for the first reader's long poll"
        );
    });
}

/// An idle runtime with sockets waiting in the reactor sleeps: its workers
/// are not woken at all while nothing arrives (the keeper waits in the
/// poller without a timeout).
#[test]
fn an_idle_runtime_with_listening_sockets_does_not_wake() {
    let rt = runtime(2);
    let handle = rt.handle().clone();
    let (accept, recv) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let accept = weft::spawn(async move { listener.accept().await.map(drop) });
        let recv = weft::spawn(async move {
            let mut buf = [0; 8];
            udp.recv_from(&mut buf).await.map(drop)
        });
        (accept, recv)
    });
    // Let the workers settle into their sleep.
    std::thread::sleep(Duration::from_millis(100));
    let before = handle.metrics().total.unparks;
    std::thread::sleep(Duration::from_millis(300));
    let after = handle.metrics().total.unparks;
    assert_eq!(before, after, "workers woke while nothing happened");
    accept.abort();
    recv.abort();
}

/// A task on `rt` reading one byte from a socket pair: the other end, the
/// task, and its flag raised once the byte is read.
fn a_one_byte_reader(
    rt: &Runtime,
) -> (
    std::os::unix::net::UnixStream,
    weft::JoinHandle<()>,
    Arc<AtomicBool>,
) {
    let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
    reader.set_nonblocking(true).unwrap();
    let read_done = Arc::new(AtomicBool::new(false));
    let reader = rt.spawn({
        let read_done = read_done.clone();
        async move {
            let mut reader = UnixStream::from_std(reader).unwrap();
            let mut byte = [0u8];
            reader.read_exact(&mut byte).await.unwrap();
            read_done.store(true, Ordering::SeqCst);
        }
    });
    (writer, reader, read_done)
}

/// While the worker stays busy (a task that yields: it never runs dry and
/// parks, so it never waits in the poller), readiness still reaches a
/// waiting task: a busy worker looks at the reactor at its periodic check
/// (`poll_io_now`). One worker: with two, one ran dry now and then and
/// took the readiness while it slept. The busy task stops once the read is
/// done, or after 3 s.
#[test]
fn readiness_reaches_a_task_while_the_worker_stays_busy() {
    let rt = runtime(1);
    let (mut writer, reader, read_done) = a_one_byte_reader(&rt);
    let busy = rt.spawn({
        let read_done = read_done.clone();
        async move {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(3) {
                if read_done.load(Ordering::SeqCst) {
                    return true;
                }
                weft::task::yield_now().await;
            }
            false
        }
    });
    // Written once the worker is busy with the yielding task.
    std::thread::sleep(Duration::from_millis(50));
    writer.write_all(b"x").unwrap();
    assert!(
        rt.block_on(busy).unwrap(),
        "the read waited for the worker to go idle"
    );
    rt.block_on(reader).unwrap();
}

/// Every worker inside a long poll that never yields: nobody waits in the
/// poller and nobody reaches a periodic look at it, so the monitor takes
/// the readiness itself and hands the woken task to a spare thread. Each
/// long poll ends when the read is done, or after 10 s (failing the test).
#[test]
fn readiness_reaches_a_task_while_every_worker_is_stuck_in_a_long_poll() {
    let rt = runtime(2);
    let (mut writer, reader, read_done) = a_one_byte_reader(&rt);
    // The reader waits in the reactor before the workers get stuck.
    std::thread::sleep(Duration::from_millis(50));
    let (stuck_tx, stuck_rx) = std::sync::mpsc::channel();
    let stuck: Vec<_> = (0..2)
        .map(|_| {
            let (read_done, stuck_tx) = (read_done.clone(), stuck_tx.clone());
            rt.spawn(async move {
                stuck_tx.send(()).unwrap();
                let start = std::time::Instant::now();
                while !read_done.load(Ordering::SeqCst) {
                    if start.elapsed() > Duration::from_secs(10) {
                        return false;
                    }
                    std::hint::spin_loop();
                }
                true
            })
        })
        .collect();
    for _ in 0..2 {
        stuck_rx.recv().unwrap();
    }
    // Both long polls have begun (and outlast `stall_threshold` before the
    // byte can be read: they end only once it is).
    std::thread::sleep(Duration::from_millis(20));
    writer.write_all(b"x").unwrap();
    for long_poll in stuck {
        assert!(
            rt.block_on(long_poll).unwrap(),
            "the read waited for a long poll to end"
        );
    }
    rt.block_on(reader).unwrap();
    assert!(rt.handle().metrics().monitor_io_wakes > 0);
}

/// A reactor of two epoll instances (`Builder::io_shards`; the default is
/// one per 8 workers, so these 2-worker runtimes would have one): sources
/// opened on both workers and from outside land on both shards, and the
/// keeper waiting on the top poller still serves them all.
fn sharded_runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .io_shards(2)
        .build()
        .unwrap()
}

#[test]
fn a_sharded_reactor_serves_sockets_of_every_shard() {
    let rt = sharded_runtime();
    let addr = rt.block_on(echo_server());
    // Clients opened from outside (round-robin over the shards) ...
    let outside: Vec<_> = (0..8)
        .map(|_| rt.block_on(async move { TcpStream::connect(addr).await.unwrap() }))
        .collect();
    rt.block_on(async move {
        // ... and from tasks on either worker.
        let inside: Vec<_> = (0..32)
            .map(|_| weft::spawn(async move { TcpStream::connect(addr).await.unwrap() }))
            .collect();
        let mut streams = outside;
        for stream in inside {
            streams.push(stream.await.unwrap());
        }
        let rounds: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(i, mut stream)| {
                weft::spawn(async move {
                    for round in 0..20u8 {
                        let message = [i as u8 ^ round; 300];
                        stream.write_all(&message).await.unwrap();
                        let mut back = [0; 300];
                        stream.read_exact(&mut back).await.unwrap();
                        assert_eq!(back, message);
                        // Let the workers sleep now and then, so the keeper
                        // waits on the top poller with shards nested in it.
                        if round % 5 == 0 {
                            weft::time::sleep(Duration::from_millis(2)).await;
                        }
                    }
                })
            })
            .collect();
        for round in rounds {
            round.await.unwrap();
        }
    });
}

#[test]
fn a_sharded_reactor_sleeps_when_idle_and_fails_sockets_after_shutdown() {
    let rt = sharded_runtime();
    let handle = rt.handle().clone();
    let sockets: Vec<UdpSocket> = rt.block_on(async {
        let mut sockets = Vec::new();
        for _ in 0..4 {
            sockets.push(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        }
        sockets
    });
    let waiting: Vec<_> = sockets
        .iter()
        .map(|socket| socket.local_addr().unwrap())
        .map(|addr| {
            rt.spawn(async move {
                let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                socket.connect(addr).await.unwrap();
                let mut buf = [0; 4];
                socket.recv(&mut buf).await.map(drop)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let before = handle.metrics().total.unparks;
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(handle.metrics().total.unparks, before, "idle workers woke");
    drop(rt);
    for task in waiting {
        drop(task);
    }
    let other = runtime(1);
    other.block_on(async {
        for socket in &sockets {
            let error = socket.recv(&mut [0; 4]).await.unwrap_err();
            assert!(error.to_string().contains("shut down"), "{error}");
        }
    });
}

/// With a socket registered, an idle worker sleeps in the OS poller rather
/// than on its condvar; a task spawned from outside must wake it there
/// (`Shared::unpark_slot` wakes the poller when the parker says the worker
/// sleeps in it). One worker, so no other thread could run the task.
#[test]
fn a_spawn_from_outside_wakes_the_worker_asleep_in_the_poller() {
    let rt = runtime(1);
    let listener = rt
        .block_on(async { TcpListener::bind("127.0.0.1:0").await })
        .unwrap();
    for round in 0..10 {
        // Time for the worker to go back to sleep, in the poller.
        std::thread::sleep(Duration::from_millis(20));
        let (ran_tx, ran_rx) = std::sync::mpsc::channel();
        drop(rt.spawn(async move {
            let _ = ran_tx.send(());
        }));
        assert!(
            ran_rx.recv_timeout(Duration::from_secs(10)).is_ok(),
            "round {round}: the worker asleep in the poller was not woken"
        );
    }
    drop(listener);
}

/// Two tasks on one socket: one waits for it to be readable while the
/// other keeps calling `try_read` on it (which finds nothing, `WouldBlock`,
/// and must not take the waiting task's place); data arrives, and the
/// waiting task wakes. Bounded: fails after 10 s instead of hanging.
#[test]
fn a_task_awaiting_readable_wakes_while_another_calls_try_read() {
    within_10_s(runtime(2), "readable beside try_read", async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (connected, accepted) =
            futures_lite::future::zip(TcpStream::connect(addr), listener.accept()).await;
        let (ours, mut theirs) = (Arc::new(connected.unwrap()), accepted.unwrap().0);
        let waiting = {
            let ours = ours.clone();
            weft::spawn(async move { ours.readable().await.unwrap() })
        };
        let trying = {
            let ours = ours.clone();
            weft::spawn(async move {
                let mut buf = [0u8; 16];
                for _ in 0..20 {
                    match ours.try_read(&mut buf) {
                        Err(error) => assert_eq!(error.kind(), ErrorKind::WouldBlock),
                        Ok(n) => panic!("read {n} bytes before any was sent"),
                    }
                    weft::time::sleep(Duration::from_millis(1)).await;
                }
            })
        };
        trying.await.unwrap();
        theirs.write_all(b"hello").await.unwrap();
        waiting.await.unwrap();
    });
}
