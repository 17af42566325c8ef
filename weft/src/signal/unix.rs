//! Unix signals as streams of notifications: [`signal`] and [`SignalKind`]
//! (the mechanism is in the parent module's doc).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

use crate::util::locks::StdMutex as Mutex;

/// A kind of signal: one of the constructors, or any number with
/// [`SignalKind::from_raw`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(i32);

impl SignalKind {
    /// Any signal by number (`SIGKILL`, `SIGSTOP` and the synchronous
    /// faults are refused by [`signal`]).
    pub const fn from_raw(signum: i32) -> SignalKind {
        SignalKind(signum)
    }

    /// The signal's number.
    pub const fn as_raw_value(&self) -> i32 {
        self.0
    }

    /// `SIGINT` (Ctrl-C).
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }

    /// `SIGTERM` (the polite "please stop").
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }

    /// `SIGHUP` (the terminal went away; often "reload configuration").
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }

    /// `SIGQUIT`.
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }

    /// `SIGUSR1`.
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }

    /// `SIGUSR2`.
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }

    /// `SIGCHLD`.
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }

    /// `SIGWINCH` (the terminal was resized).
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }

    /// `SIGPIPE`.
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }

    /// `SIGALRM`.
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }
}

/// Signals whose handler cannot be replaced, or that report a fault of the
/// thread that caused it (handling them here would loop on the fault).
const FORBIDDEN: [i32; 6] = [
    libc::SIGKILL,
    libc::SIGSTOP,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
];

/// One signal's deliveries and waiting tasks.
#[derive(Default)]
struct Slot {
    /// Deliveries seen by the `weft-signal` thread.
    delivered: AtomicU64,
    waiters: Mutex<Vec<Waker>>,
}

struct Registry {
    /// The handler's end of the pipe (never closed: the handler may run at
    /// any time for the rest of the process).
    pipe: UnixStream,
    slots: Mutex<HashMap<i32, Arc<Slot>>>,
}

fn registry() -> io::Result<&'static Registry> {
    static REGISTRY: Mutex<Option<&'static Registry>> = Mutex::new(None);
    let mut registry = REGISTRY.lock().unwrap();
    if let Some(registry) = *registry {
        return Ok(registry);
    }
    let (write, read) = UnixStream::pair()?;
    // A full pipe must not block the handler: deliveries past the pipe's
    // capacity collapse into the ones already queued.
    write.set_nonblocking(true)?;
    // Leaked on purpose: the handler may run at any time for the rest of
    // the process, so its pipe must never close.
    let created: &'static Registry = Box::leak(Box::new(Registry {
        pipe: write,
        slots: Mutex::new(HashMap::new()),
    }));
    std::thread::Builder::new()
        .name("weft-signal".into())
        .spawn(move || dispatch(created, read))?;
    *registry = Some(created);
    Ok(created)
}

/// The `weft-signal` thread: reads signal numbers and wakes their waiters.
fn dispatch(registry: &'static Registry, mut read: UnixStream) {
    let mut buf = [0u8; 64];
    loop {
        let n = match read.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            // A handler installed elsewhere without `SA_RESTART` makes the
            // read fail with EINTR (tests/signal.rs). Any other error is
            // out of reach (the write end is never closed), so retrying on
            // every error would pass every test -- and spin if one came.
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        for &signum in &buf[..n] {
            let slot = registry
                .slots
                .lock()
                .unwrap()
                .get(&i32::from(signum))
                .cloned();
            if let Some(slot) = slot {
                slot.delivered.fetch_add(1, Ordering::AcqRel);
                let waiters = std::mem::take(&mut *slot.waiters.lock().unwrap());
                for waker in waiters {
                    crate::util::locks::user_code("a waker's wake (signal)");
                    waker.wake();
                }
            }
        }
    }
}

/// A listener for one kind of signal: [`recv`](Signal::recv) completes once
/// per delivery burst after the listener's last `recv`.
///
/// ```no_run
/// use weft::signal::unix::{signal, SignalKind};
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let mut hangups = signal(SignalKind::hangup()).unwrap();
///     loop {
///         hangups.recv().await;
///         println!("reloading configuration");
///     }
/// });
/// ```
#[derive(Debug)]
pub struct Signal {
    slot: Arc<Slot>,
    seen: u64,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("delivered", &self.delivered.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Listens for `kind` from now on (a delivery before this call is not
/// reported). Fails for signals that cannot be handled (`SIGKILL`,
/// `SIGSTOP`, the synchronous faults `SIGSEGV`, `SIGBUS`, `SIGILL`,
/// `SIGFPE`) or out-of-range numbers.
///
/// Works outside a runtime too (the handler is process-wide). Inside one
/// built with [`drivers_opt_in`](crate::runtime::Builder::drivers_opt_in)
/// and without `enable_io`, it panics at the caller's line, as tokio's.
#[track_caller]
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    // Not inside a closure: the panic's location is the caller's.
    if let Some(shared) = crate::runtime::context::current() {
        shared.config.check_io_enabled();
    }
    let signum = kind.0;
    if FORBIDDEN.contains(&signum) || !(1..=i32::from(u8::MAX)).contains(&signum) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("signal {signum} cannot be listened for"),
        ));
    }
    let registry = registry()?;
    let slot = {
        let mut slots = registry.slots.lock().unwrap();
        match slots.get(&signum) {
            Some(slot) => slot.clone(),
            None => {
                install_handler(signum, registry)?;
                let slot = Arc::new(Slot::default());
                slots.insert(signum, slot.clone());
                slot
            }
        }
    };
    let seen = slot.delivered.load(Ordering::Acquire);
    Ok(Signal { slot, seen })
}

fn install_handler(signum: i32, registry: &'static Registry) -> io::Result<()> {
    let byte = signum as u8;
    let handler = move || {
        // Async-signal-safe: one `send` on a non-blocking fd; a full pipe
        // drops the byte (a delivery is already queued).
        let _ = (&registry.pipe).write(&[byte]);
    };
    // The handler makes one system call, `send(2)` (std's `Write for
    // &UnixStream` is one `send` with `MSG_NOSIGNAL`), on a file descriptor
    // that stays open for the life of the process (`Registry` is leaked,
    // never dropped); it allocates nothing, takes no lock and cannot panic
    // (the result is ignored, an error is only `errno` read). The only
    // shared state it reads, `registry.pipe`'s number, is never written
    // after the registry was built, before this registration.
    // `signal-hook-registry` saves and restores `errno` around it.
    // SAFETY: so it is async-signal-safe and panic-free, as `register`
    // requires; `signum` is not one of its forbidden signals (it would
    // panic): `signal` refused those (`FORBIDDEN`).
    unsafe { signal_hook_registry::register(signum, handler) }.map(drop)
}

impl Signal {
    /// Waits for the next delivery after the last one this listener
    /// reported; `None` never happens (the stream does not end), it is
    /// there for tokio's signature.
    pub async fn recv(&mut self) -> Option<()> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// `recv` in `poll` form.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let delivered = self.slot.delivered.load(Ordering::Acquire);
        if delivered != self.seen {
            self.seen = delivered;
            return Poll::Ready(Some(()));
        }
        // Cloned before the lock, and dropped after it if not needed: a
        // waker is the program's code (`crate::util::locks`). Signals are rare:
        // the clone a listener polled again pays is nothing beside them.
        crate::util::locks::user_code("a waker's clone (signal)");
        let waker = cx.waker().clone();
        let (ready, unused) = {
            let mut waiters = self.slot.waiters.lock().unwrap();
            // Re-read under the lock: the dispatcher bumps the counter
            // before it takes the lock to wake the waiters.
            let delivered = self.slot.delivered.load(Ordering::Acquire);
            if delivered != self.seen {
                self.seen = delivered;
                (true, Some(waker))
            } else if waiters.iter().any(|w| w.will_wake(&waker)) {
                (false, Some(waker))
            } else {
                waiters.push(waker);
                (false, None)
            }
        };
        crate::util::locks::user_code("a waker's drop (signal)");
        drop(unused);
        if ready {
            Poll::Ready(Some(()))
        } else {
            Poll::Pending
        }
    }
}
