//! `weft::signal`: deliveries reach listeners, waiting or not; `ctrl_c`
//! waits for `SIGINT`; the dispatching thread survives a signal that
//! interrupts its read. Its own process (a test binary of its own): the
//! handlers installed here stay for the rest of the process, and each test
//! raises a signal no other test listens for.

#![cfg(not(loom))]

use std::io::ErrorKind;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use weft::runtime::{Builder, Runtime};
use weft::signal::unix::{SignalKind, signal};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap()
}

/// Waits (up to 10 s) for `listener`'s next delivery; `what` names it in
/// the failure.
async fn next_delivery(listener: &mut weft::signal::unix::Signal, what: &str) {
    weft::time::timeout(Duration::from_secs(10), listener.recv())
        .await
        .unwrap_or_else(|_| panic!("{what} not delivered within 10 s"))
        .unwrap();
}

fn raise(signum: i32) {
    // SAFETY: `raise` has no memory-safety preconditions; each signal
    // raised here has a handler installed by the test first.
    assert_eq!(unsafe { libc::raise(signum) }, 0);
}

/// A signal raised by the process reaches a listener; one raised before
/// `signal` was called does not; bursts are reported.
#[test]
fn a_raised_signal_reaches_its_listener() {
    let rt = runtime();
    rt.block_on(async {
        let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
        raise(libc::SIGUSR1);
        next_delivery(&mut usr1, "SIGUSR1 delivered").await;
        // Nothing pending now: `recv` waits until the next one.
        let waiting = weft::time::timeout(Duration::from_millis(50), usr1.recv()).await;
        assert!(
            waiting.is_err(),
            "no delivery pending after the first was reported"
        );
        raise(libc::SIGUSR1);
        next_delivery(&mut usr1, "the second SIGUSR1").await;
        let debug = format!("{usr1:?}");
        assert!(debug.contains("delivered: 2"), "{debug}");
        assert_eq!(SignalKind::interrupt().as_raw_value(), libc::SIGINT);
        assert_eq!(
            SignalKind::from_raw(libc::SIGKILL).as_raw_value(),
            libc::SIGKILL
        );
        let error = signal(SignalKind::from_raw(libc::SIGKILL)).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
    });
}

/// A listener already waiting in `recv` (its waker registered, nothing
/// delivered yet) is woken by the next delivery. Awaited in a task that
/// reports on a channel: a `timeout` would poll `recv` once more when it
/// expires and find the delivery without any wake.
#[test]
fn a_waiting_listener_is_woken_by_the_next_delivery() {
    let rt = runtime();
    let mut winch = signal(SignalKind::window_change()).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = rt.spawn(async move {
        winch.recv().await.unwrap();
        done.send(()).unwrap();
    });
    std::thread::sleep(Duration::from_millis(100));
    raise(libc::SIGWINCH);
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the waiting listener was woken");
    rt.block_on(waiter).unwrap();
}

/// `ctrl_c` completes at a `SIGINT` after the call, not before.
#[test]
fn ctrl_c_waits_for_sigint() {
    let rt = runtime();
    rt.block_on(async {
        let mut ctrl_c = std::pin::pin!(weft::signal::ctrl_c());
        let early = weft::time::timeout(Duration::from_millis(50), &mut ctrl_c).await;
        assert!(early.is_err(), "ctrl_c completed with no SIGINT");
        raise(libc::SIGINT);
        weft::time::timeout(Duration::from_secs(10), ctrl_c)
            .await
            .expect("ctrl_c completed at SIGINT")
            .unwrap();
    });
}

/// The thread of the handler below, once it ran.
static INTERRUPTED_THREAD: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_interrupted_thread(_: libc::c_int) {
    // SAFETY: `gettid` has no preconditions and is async-signal-safe.
    let tid = unsafe { libc::gettid() };
    INTERRUPTED_THREAD.store(tid, Ordering::SeqCst);
}

/// Another part of the program may install a handler without
/// `SA_RESTART`; when that signal lands on the `weft-signal` thread, its
/// blocking read fails with `EINTR`. The thread reads on: later
/// deliveries still arrive.
#[test]
fn the_dispatching_thread_survives_an_interrupted_read() {
    let rt = runtime();
    rt.block_on(async {
        let mut alarm = signal(SignalKind::alarm()).unwrap();
        // One delivery first: the dispatching thread is then back in its
        // blocking read.
        raise(libc::SIGALRM);
        next_delivery(&mut alarm, "SIGALRM delivered").await;
        weft::time::sleep(Duration::from_millis(20)).await;

        // SAFETY: a zeroed `sigaction` is a valid value; the handler is an
        // `extern "C" fn(c_int)` that only calls async-signal-safe
        // functions; no flags, so no `SA_RESTART`.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_interrupted_thread as *const () as libc::sighandler_t;
            assert_eq!(
                libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut()),
                0
            );
        }
        let dispatcher = dispatching_thread_id();
        // SAFETY: `tgkill` has no memory-safety preconditions; the thread
        // is this process's and SIGUSR2 has the handler installed above.
        let sent =
            unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), dispatcher, libc::SIGUSR2) };
        assert_eq!(sent, 0);
        while INTERRUPTED_THREAD.load(Ordering::SeqCst) == 0 {
            weft::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(INTERRUPTED_THREAD.load(Ordering::SeqCst), dispatcher);
        weft::time::sleep(Duration::from_millis(20)).await;

        raise(libc::SIGALRM);
        next_delivery(&mut alarm, "SIGALRM delivered after the interrupted read").await;
    });
}

/// The id of the thread named `weft-signal`.
fn dispatching_thread_id() -> i32 {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|task| {
            std::fs::read_to_string(task.join("comm"))
                .is_ok_and(|name| name.trim() == "weft-signal")
        })
        .expect("a weft-signal thread")
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}
