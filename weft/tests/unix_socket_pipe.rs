//! `net::UnixSocket` (bind first, then listen, connect or make a datagram
//! socket) and `net::unix::pipe` (anonymous pipes and FIFOs). Each
//! test's comment says what it pins.

#![cfg(all(not(loom), target_os = "linux"))]

use std::ffi::CString;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::io::Interest;
use weft::net::UnixSocket;
use weft::net::unix::pipe;
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

/// A path no other test run uses, removed first.
fn temp_path(what: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("weft-{what}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn mkfifo(path: &Path) {
    let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

/// A stream socket bound before it listens accepts a connection from one
/// bound before it connects, and the server sees the client's bound path;
/// bytes go through. Datagram sockets bound then made `datagram` exchange
/// a datagram.
#[test]
fn unix_socket_binds_then_listens_connects_or_becomes_a_datagram_socket() {
    runtime().block_on(within_10_s("UnixSocket", async {
        let server_path = temp_path("socket-server");
        let client_path = temp_path("socket-client");
        let socket = UnixSocket::new_stream().unwrap();
        socket.bind(&server_path).unwrap();
        let listener = socket.listen(16).unwrap();
        let client = UnixSocket::new_stream().unwrap();
        client.bind(&client_path).unwrap();
        let client = client.connect(&server_path).await.unwrap();
        let (server, peer) = listener.accept().await.unwrap();
        assert_eq!(peer.as_pathname(), Some(client_path.as_path()));
        client.try_write(b"hello").unwrap();
        server.readable().await.unwrap();
        let mut buf = [0; 8];
        assert_eq!(server.try_read(&mut buf).unwrap(), 5);

        let a_path = temp_path("socket-dgram-a");
        let a = UnixSocket::new_datagram().unwrap();
        a.bind(&a_path).unwrap();
        let a = a.datagram().unwrap();
        let b = UnixSocket::new_datagram().unwrap().datagram().unwrap();
        b.send_to(b"ping", &a_path).await.unwrap();
        let n = a.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"ping");
        for path in [server_path, client_path, a_path] {
            std::fs::remove_file(path).unwrap();
        }
    }));
}

/// A stream's method on a datagram socket, or the reverse, is an error
/// that says so, not a kernel error.
#[test]
fn unix_socket_refuses_the_other_kinds_methods() {
    runtime().block_on(async {
        let error = UnixSocket::new_datagram()
            .unwrap()
            .connect("nowhere.sock")
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "connect cannot be called on a datagram socket"
        );
        let error = UnixSocket::new_datagram().unwrap().listen(1).unwrap_err();
        assert_eq!(
            error.to_string(),
            "listen cannot be called on a datagram socket"
        );
        let error = UnixSocket::new_stream().unwrap().datagram().unwrap_err();
        assert_eq!(
            error.to_string(),
            "datagram cannot be called on a stream socket"
        );
    });
}

/// A fresh pipe's sender is writable before any event; an anonymous pipe
/// carries bytes through the I/O traits; the reader
/// waits for the writer, and sees end of stream when it is dropped.
#[test]
fn anonymous_pipe_carries_bytes_and_ends() {
    runtime().block_on(within_10_s("pipe", async {
        let (mut tx, mut rx) = pipe::pipe().unwrap();
        let mut ran = false;
        tx.try_io(|| {
            ran = true;
            Ok(())
        })
        .unwrap();
        assert!(ran, "a fresh pipe's sender is writable at once");
        let writer = weft::spawn(async move {
            weft::time::sleep(Duration::from_millis(10)).await;
            tx.write_all(b"through the pipe").await.unwrap();
        });
        let mut got = Vec::new();
        rx.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"through the pipe");
        writer.await.unwrap();
    }));
}

/// A FIFO opened with `OpenOptions`: the sender needs a reader (`ENXIO`
/// without one) unless `read_write`; `try_read` says `WouldBlock` when
/// empty and reads once `readable`; `ready(READABLE)` says readable;
/// `try_io` runs only when ready. A regular file is not a pipe.
#[test]
fn fifo_ends_open_and_exchange() {
    runtime().block_on(within_10_s("fifo", async {
        let path = temp_path("fifo");
        mkfifo(&path);
        let error = pipe::OpenOptions::new().open_sender(&path).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENXIO));
        let rx = pipe::OpenOptions::new().open_receiver(&path).unwrap();
        let tx = pipe::OpenOptions::new().open_sender(&path).unwrap();
        let mut buf = [0; 8];
        assert_eq!(
            rx.try_read(&mut buf).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        tx.writable().await.unwrap();
        assert_eq!(tx.try_write(b"fifo").unwrap(), 4);
        assert!(rx.ready(Interest::READABLE).await.unwrap().is_readable());
        let n = rx
            .try_io(|| (&std::fs::File::from(rx.as_fd_dup())).read(&mut buf))
            .unwrap();
        assert_eq!(&buf[..n], b"fifo");
        drop((tx, rx));

        let lonely = pipe::OpenOptions::new().read_write(true).open_sender(&path);
        assert!(lonely.is_ok(), "read_write opens with no reader");
        std::fs::remove_file(&path).unwrap();

        let file_path = temp_path("not-a-fifo");
        std::fs::write(&file_path, b"").unwrap();
        let error = pipe::OpenOptions::new()
            .open_receiver(&file_path)
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        std::fs::remove_file(&file_path).unwrap();
    }));
}

/// `from_file` checks the access mode (a read-only end is no sender) and
/// sets `O_NONBLOCK`; `into_blocking_fd` clears it again.
#[test]
fn from_file_checks_and_sets_nonblocking() {
    runtime().block_on(async {
        let path = temp_path("fifo-from-file");
        mkfifo(&path);
        let _keep_reader = pipe::OpenOptions::new().open_receiver(&path).unwrap();
        // Non-blocking, or the open waits for a writer.
        let read_only = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .unwrap();
        let error = pipe::Sender::from_file(read_only).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);

        let write_only = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let tx = pipe::Sender::from_file(write_only).unwrap();
        assert_ne!(flags(tx.as_raw_fd()) & libc::O_NONBLOCK, 0);
        let fd = tx.into_blocking_fd().unwrap();
        assert_eq!(flags(fd.as_raw_fd()) & libc::O_NONBLOCK, 0);
        let mut file = std::fs::File::from(fd);
        file.write_all(b"x").unwrap();
        std::fs::remove_file(&path).unwrap();
    });
}

fn flags(fd: i32) -> i32 {
    // SAFETY: `F_GETFL` reads no memory of ours; `fd` is open.
    unsafe { libc::fcntl(fd, libc::F_GETFL) }
}

/// A duplicate of a receiver's descriptor, to read through `std`.
trait DupFd {
    fn as_fd_dup(&self) -> std::os::fd::OwnedFd;
}

impl DupFd for pipe::Receiver {
    fn as_fd_dup(&self) -> std::os::fd::OwnedFd {
        std::os::fd::AsFd::as_fd(self).try_clone_to_owned().unwrap()
    }
}
