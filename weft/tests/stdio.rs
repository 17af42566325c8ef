//! `weft::io::{stdin, stdout, stderr}`: each test runs this test binary
//! again as a child (with `WEFT_STDIO_CHILD` naming what the child does),
//! so the bytes the child writes to its real stdout and stderr, and what it
//! reads from a piped stdin, can be checked from outside: order, large
//! writes split in pieces, the end of input, a write handed over before it
//! lands. Both futures-io's and tokio's traits are used.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::process::{Command, Output, Stdio};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::io::AsyncWrite;
use weft::runtime::Runtime;

const CHILD: &str = "WEFT_STDIO_CHILD";
const BEGIN: &[u8] = b"<<weft-stdio-begin>>\n";
const END: &[u8] = b"<<weft-stdio-end>>\n";

/// What this process was started to do as a child, if it is one.
fn child_role() -> Option<String> {
    std::env::var(CHILD).ok()
}

/// Runs the test `name` of this binary in a child with `role`, feeding
/// `input` to its stdin; returns its output once it has exited
/// successfully.
fn run_child(name: &str, role: &str, input: Vec<u8>) -> Output {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "the child failed; stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The bytes between the markers (the test harness writes its own lines
/// around them).
fn between_markers(bytes: &[u8]) -> &[u8] {
    let find = |needle: &[u8], from: usize| {
        bytes[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|at| at + from)
    };
    let start = find(BEGIN, 0).expect("a begin marker") + BEGIN.len();
    let end = find(END, start).expect("an end marker");
    &bytes[start..end]
}

fn lines(prefix: &str, count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| format!("{prefix} {i}\n").into_bytes())
        .collect()
}

/// Letters only, so no marker can appear inside.
fn letters(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Many small writes to stdout and stderr, none awaited to its landing
/// (each returns once handed over; the next waits for it), arrive in the
/// order they were made, with nothing lost, once flushed; stderr through
/// tokio's `AsyncWriteExt`.
#[test]
fn writes_arrive_in_order() {
    const NAME: &str = "writes_arrive_in_order";
    if child_role().as_deref() == Some(NAME) {
        Runtime::new().unwrap().block_on(async {
            let mut out = weft::io::stdout();
            let mut err = weft::io::stderr();
            out.write_all(BEGIN).await.unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut err, BEGIN)
                .await
                .unwrap();
            for i in 0..2000 {
                out.write_all(format!("out {i}\n").as_bytes())
                    .await
                    .unwrap();
                let line = format!("err {i}\n");
                tokio::io::AsyncWriteExt::write_all(&mut err, line.as_bytes())
                    .await
                    .unwrap();
            }
            out.write_all(END).await.unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut err, END)
                .await
                .unwrap();
            out.flush().await.unwrap();
            tokio::io::AsyncWriteExt::shutdown(&mut err).await.unwrap();
        });
        return;
    }
    let output = run_child(NAME, NAME, Vec::new());
    assert!(between_markers(&output.stdout) == lines("out", 2000));
    assert!(between_markers(&output.stderr) == lines("err", 2000));
}

/// One write larger than `MAX_BUF` is handed over in pieces that land in
/// order: 5 MiB written with one `write_all` arrive whole.
#[test]
fn a_large_write_arrives_whole() {
    const NAME: &str = "a_large_write_arrives_whole";
    const LEN: usize = 5 << 20;
    // Over twice the 2 MiB a pool job writes at most.
    const _: () = assert!(LEN > 2 * (2 << 20));
    if child_role().as_deref() == Some(NAME) {
        Runtime::new().unwrap().block_on(async {
            let mut out = weft::io::stdout();
            out.write_all(BEGIN).await.unwrap();
            out.write_all(&letters(LEN)).await.unwrap();
            out.write_all(END).await.unwrap();
            out.close().await.unwrap();
        });
        return;
    }
    let output = run_child(NAME, NAME, Vec::new());
    let got = between_markers(&output.stdout);
    assert_eq!(got.len(), LEN);
    assert!(got == letters(LEN), "the bytes differ");
}

/// What is piped into stdin is read back byte for byte (3 MiB, more than
/// one pool job reads, through tokio's `AsyncReadExt`), then the end of
/// input, which a further read reports again.
#[test]
fn stdin_reads_what_was_piped_in() {
    const NAME: &str = "stdin_reads_what_was_piped_in";
    const LEN: usize = 3 << 20;
    if child_role().as_deref() == Some(NAME) {
        Runtime::new().unwrap().block_on(async {
            let mut input = weft::io::stdin();
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut input, &mut got)
                .await
                .unwrap();
            let mut more = [0; 16];
            assert_eq!(input.read(&mut more).await.unwrap(), 0, "still the end");
            let mut out = weft::io::stdout();
            out.write_all(BEGIN).await.unwrap();
            out.write_all(&got).await.unwrap();
            out.write_all(END).await.unwrap();
            out.flush().await.unwrap();
        });
        return;
    }
    let output = run_child(NAME, NAME, letters(LEN));
    let got = between_markers(&output.stdout);
    assert_eq!(got.len(), LEN);
    assert!(got == letters(LEN), "the bytes differ");
}

/// A small read takes what it asked for, and the rest of what the pool
/// job read comes with the next reads, in order.
#[test]
fn small_reads_take_the_rest_in_order() {
    const NAME: &str = "small_reads_take_the_rest_in_order";
    if child_role().as_deref() == Some(NAME) {
        Runtime::new().unwrap().block_on(async {
            let mut input = weft::io::stdin();
            let mut got = Vec::new();
            let mut byte = [0; 3];
            loop {
                let n = input.read(&mut byte).await.unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&byte[..n]);
            }
            let mut out = weft::io::stdout();
            out.write_all(BEGIN).await.unwrap();
            out.write_all(&got).await.unwrap();
            out.write_all(END).await.unwrap();
            out.flush().await.unwrap();
        });
        return;
    }
    let input = lines("in", 500);
    let output = run_child(NAME, NAME, input.clone());
    assert!(between_markers(&output.stdout) == input);
}

/// A write returns as soon as its bytes are handed over, before they land:
/// with stdout a pipe nobody reads yet, a 1 MiB write (more than the pipe
/// holds) is `Ready` at its first poll, and the next write waits
/// (`Pending`) for it; `flush` then returns once the reader has taken it
/// all. The parent reads the child's stderr first (through
/// `weft::process`), and its stdout only after the child said so.
#[test]
fn a_write_is_handed_over_before_it_lands() {
    const NAME: &str = "a_write_is_handed_over_before_it_lands";
    const LEN: usize = 1 << 20;
    if child_role().as_deref() == Some(NAME) {
        Runtime::new().unwrap().block_on(async {
            let mut out = weft::io::stdout();
            let mut cx = Context::from_waker(Waker::noop());
            let data = letters(LEN);
            let first = Pin::new(&mut out).poll_write(&mut cx, &data);
            assert!(matches!(first, Poll::Ready(Ok(LEN))), "{first:?}");
            let second = Pin::new(&mut out).poll_write(&mut cx, b"x");
            assert!(second.is_pending(), "{second:?}");
            eprintln!("handed over");
            out.flush().await.unwrap();
            eprintln!("flushed");
        });
        return;
    }
    Runtime::new().unwrap().block_on(async {
        let mut child = weft::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, NAME)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let mut said = Vec::new();
        let mut buf = [0; 256];
        while !said.windows(11).any(|w| w == b"handed over") {
            let n = weft::time::timeout(Duration::from_secs(20), stderr.read(&mut buf))
                .await
                .expect("the child says it handed the write over")
                .unwrap();
            assert_ne!(n, 0, "stderr ended: {}", String::from_utf8_lossy(&said));
            said.extend_from_slice(&buf[..n]);
        }
        let mut stdout = Vec::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut stdout)
            .await
            .unwrap();
        stderr.read_to_end(&mut said).await.unwrap();
        let said = String::from_utf8_lossy(&said);
        assert!(said.contains("flushed"), "{said}");
        assert!(child.wait().await.unwrap().success(), "{said}");
        assert!(
            stdout.windows(LEN).any(|w| w == letters(LEN)),
            "the 1 MiB write is on stdout"
        );
    });
}

/// The handles name the process's descriptors 0, 1 and 2.
#[test]
fn the_handles_are_descriptors_0_1_and_2() {
    assert_eq!(weft::io::stdin().as_raw_fd(), 0);
    assert_eq!(weft::io::stdout().as_raw_fd(), 1);
    assert_eq!(weft::io::stderr().as_raw_fd(), 2);
}

/// Used outside a runtime, a write panics at its first poll, saying where
/// to use it.
#[test]
#[should_panic(expected = "`weft::io::Stdout` polled outside of a weft runtime")]
fn a_write_outside_a_runtime_panics() {
    let mut out = weft::io::stdout();
    let mut cx = Context::from_waker(Waker::noop());
    let _ = Pin::new(&mut out).poll_write(&mut cx, b"never written");
}

/// After the runtime has shut down, a write, a flush and a read on a
/// standard stream fail with the shutdown error (`is_rt_shutdown_err`,
/// tokio's), rather than hand bytes to a pool that will not run them.
#[test]
fn operations_after_shutdown_fail_with_the_shutdown_error() {
    let rt = Runtime::new().unwrap();
    let handle = rt.handle().clone();
    let _entered = rt.enter();
    rt.shutdown_timeout(Duration::from_secs(10));
    let write = handle.block_on(async { weft::io::stdout().write_all(b"x").await });
    let error = write.unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&error), "{error}");
    let flush = handle.block_on(async { weft::io::stderr().flush().await });
    assert!(flush.is_ok(), "nothing to flush: {flush:?}");
    let read = handle.block_on(async { weft::io::stdin().read(&mut [0; 4]).await });
    let error = read.unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&error), "{error}");
}
