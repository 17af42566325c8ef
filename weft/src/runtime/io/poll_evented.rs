//! A `mio` source registered with the current runtime's reactor, and the
//! readiness loop every socket operation runs: wait until the direction is
//! ready, try the syscall, and on `WouldBlock` clear the readiness (if no
//! new delivery came meanwhile: `scheduled_io.rs`) and wait again.
//!
//! The source is deregistered when this is dropped, or by `into_inner`,
//! which gives the source back (for `into_std`).
//!
//! # Correctness and cost
//!
//! Correctness: only `WouldBlock` clears readiness and waits again; any
//! other error is returned (`poll_io`, `async_io`, `try_io`,
//! `poll_write`). Pinned by `net.rs`'s
//! `accepting_on_a_shut_down_listener_returns_the_error`,
//! `a_connected_udp_socket_reports_a_refused_datagram_then_waits_again`,
//! `poll_accept_after_the_connection_was_taken_is_pending_not_would_block`,
//! `try_recv_forgets_readiness_on_would_block_and_only_then` and
//! `small_writes_into_a_full_send_buffer_wait_for_room`. Both `Drop`s leave
//! nothing behind: the unit tests below. A cost, never a lost wake-up: the
//! short-read and short-write clears (at `poll_read`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use mio::event::Source;

use super::driver::Registered;
use super::scheduled_io::{Direction, ReadyEvent, Wants};
use crate::runtime::scheduler::Shared;
use crate::task::coop;
use crate::util::loom::sync::Arc;

pub(crate) struct PollEvented<E: Source> {
    source: Option<E>,
    shared: Arc<Shared>,
    registered: Registered,
}

/// The runtime of the calling context, or the panic that says how to get one.
#[track_caller]
pub(crate) fn current_runtime(what: &str) -> Arc<Shared> {
    crate::runtime::context::current().unwrap_or_else(|| {
        crate::runtime::context::no_runtime(format_args!(
            "`{what}` called outside of a weft runtime: I/O sources register with the \
                 reactor of the current runtime; call it from a task, inside \
                 `Runtime::block_on`, or while a `Runtime::enter` guard is alive"
        ))
    })
}

// The sockets are unwind-safe as tokio's are: a registration's state is
// atomics and a slab entry written under the reactor's own protocol, which
// a panic caught around a socket cannot leave half-written.
impl<E: Source> std::panic::UnwindSafe for PollEvented<E> {}
impl<E: Source> std::panic::RefUnwindSafe for PollEvented<E> {}

impl<E: Source> PollEvented<E> {
    /// Registers `source` with the current runtime's reactor.
    ///
    /// # Panics
    ///
    /// Outside a runtime context (the message names `what`).
    #[track_caller]
    pub(crate) fn new(source: E, what: &str) -> io::Result<PollEvented<E>> {
        PollEvented::with_runtime(source, current_runtime(what))
    }

    /// Registers `source` with `shared`'s reactor (a socket accepted by, or
    /// created by a call that began in, that runtime).
    ///
    /// # Panics
    ///
    /// If the runtime was built without its I/O driver
    /// (`Builder::drivers_opt_in`), at the caller's line.
    #[track_caller]
    pub(crate) fn with_runtime(mut source: E, shared: Arc<Shared>) -> io::Result<PollEvented<E>> {
        shared.config.check_io_enabled();
        let registered = shared.io.register(&mut source)?;
        if registered.first {
            // The keeper may sleep on its condvar: move it into the poller.
            shared.poke_keeper();
        }
        Ok(PollEvented {
            source: Some(source),
            shared,
            registered,
        })
    }

    /// The runtime whose reactor this source is registered with.
    pub(crate) fn runtime(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn get_ref(&self) -> &E {
        self.source
            .as_ref()
            .expect("source taken only by into_inner/drop")
    }

    /// Deregisters the source and gives it back.
    pub(crate) fn into_inner(mut self) -> E {
        let mut source = self.source.take().expect("source taken only once");
        self.shared.io.deregister(&mut source, &self.registered);
        source
    }

    /// Waits until `direction` is ready (spending budget when it is).
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        coop::poll_with_budget(cx, |cx| self.registered.io.poll_ready(cx, direction))
    }

    /// Runs `op` once `direction` is ready, until it does not return
    /// `WouldBlock`.
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut op: impl FnMut(&E) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            let event = ready!(self.poll_ready(cx, direction))?;
            match op(self.get_ref()) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.registered.io.clear_readiness(event, direction);
                }
                result => return Poll::Ready(result),
            }
        }
    }

    /// `poll_io` as a future that any number of tasks may await at once on
    /// one shared source (each is a listed waiter, all woken).
    pub(crate) async fn async_io<R>(
        &self,
        wants: impl Into<Wants>,
        mut op: impl FnMut(&E) -> io::Result<R>,
    ) -> io::Result<R> {
        let wants = wants.into();
        loop {
            let event = Readiness {
                evented: self,
                wants,
                id: 0,
            }
            .await?;
            // The budget is spent by the operation, not by the wait (as
            // tokio's): a task that waits and then does its own `try_*`
            // call is charged by that call's kind, not twice.
            std::future::poll_fn(coop::poll_budget).await;
            match op(self.get_ref()) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.registered.io.clear_readiness(event, wants);
                }
                result => {
                    coop::spend();
                    return result;
                }
            }
        }
    }

    /// Waits until `wants` (a direction, or any set of readiness bits) is
    /// ready, as a listed waiter.
    pub(crate) async fn ready(&self, wants: impl Into<Wants>) -> io::Result<ReadyEvent> {
        Readiness {
            evented: self,
            wants: wants.into(),
            id: 0,
        }
        .await
    }

    /// Marks `ready` (reactor bits) without waiting for the reactor's first
    /// event: see `ScheduledIo::assume_ready`. Call it only on a source
    /// nobody waits on yet.
    pub(crate) fn assume_ready(&self, ready: u64) {
        self.registered.io.assume_ready(ready);
    }

    /// Forgets the readiness of `wants` seen in `event` (the operation
    /// returned `WouldBlock`, or an `AsyncFd` guard was told to).
    pub(crate) fn clear_readiness(&self, event: ReadyEvent, wants: impl Into<Wants>) {
        self.registered.io.clear_readiness(event, wants);
    }

    /// Runs `op` once if `direction` is known ready, without waiting:
    /// `WouldBlock` otherwise (tokio's `try_read`/`try_io` family). Reads
    /// the readiness without storing a waker: one stored here would take
    /// the place of a task waiting in the direction's slot (`poll_read`,
    /// `poll_accept`, `AsyncFd::poll_read_ready`), which would then never
    /// be woken.
    pub(crate) fn try_io<R>(
        &self,
        wants: impl Into<Wants>,
        op: impl FnOnce(&E) -> io::Result<R>,
    ) -> io::Result<R> {
        let wants = wants.into();
        let Some(event) = self.registered.io.ready_now(wants) else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let event = event?;
        match op(self.get_ref()) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.registered.io.clear_readiness(event, wants);
                Err(error)
            }
            result => result,
        }
    }
}

impl<E: Source> PollEvented<E>
where
    for<'a> &'a E: io::Read + io::Write,
{
    /// Reads into `buf` once the source is readable. A short read means
    /// the socket's buffer was drained: the readiness is cleared at once
    /// (tick permitting), saving the syscall that would say `WouldBlock`.
    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        use std::io::Read;
        let len = buf.len();
        self.poll_read_with(cx, len, |mut source| source.read(buf))
    }

    /// `poll_read` into memory that need not be initialized (hyper's read
    /// buffer): the kernel writes the bytes read, nothing zeroes the rest.
    /// Returns how many bytes the read initialized, from the start of
    /// `buf`.
    #[cfg(feature = "hyper")]
    pub(crate) fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>>
    where
        E: std::os::fd::AsRawFd,
    {
        let len = buf.len();
        #[cfg(target_os = "linux")]
        return self.poll_read_with(cx, len, |source| {
            let fd = source.as_raw_fd();
            // SAFETY: `recv` writes at most `len` bytes at the start of
            // `buf` (memory this call borrows mutably) and reads none of
            // it; `fd` is the open socket `source` owns for the call.
            let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), len, 0) };
            // A negative count is an error (`errno`), anything else the
            // number of bytes written, at most `len`.
            usize::try_from(n).map_err(|_| io::Error::last_os_error())
        });
        // Without `libc` (it is a Linux dependency): zeroed, then read.
        #[cfg(not(target_os = "linux"))]
        {
            use std::io::Read;
            let buf = zeroed(buf);
            self.poll_read_with(cx, len, |mut source| source.read(buf))
        }
    }

    /// The readiness loop of a read of `len` bytes made by `read`.
    fn poll_read_with(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        mut read: impl FnMut(&E) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            let event = ready!(self.poll_ready(cx, Direction::Read))?;
            match read(self.get_ref()) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.clear_readiness(event, Direction::Read);
                }
                // A cost rule: without it (the guard made `false`, or
                // `n > 0` / `n < buf.len()` turned so it never holds; nine
                // mutants here and in `poll_write`, every test passes)
                // the next call makes the syscall that says `WouldBlock`
                // and clears then. Clearing on a full read would lose
                // data still buffered (`<` made `<=`: caught).
                Ok(n) if n > 0 && n < len => {
                    self.clear_readiness(event, Direction::Read);
                    return Poll::Ready(Ok(n));
                }
                result => return Poll::Ready(result),
            }
        }
    }

    /// Writes from `buf` once the source is writable (a short write clears
    /// the readiness, as a short read does).
    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        use std::io::Write;
        loop {
            let event = ready!(self.poll_ready(cx, Direction::Write))?;
            match self.get_ref().write(buf) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.clear_readiness(event, Direction::Write);
                }
                Ok(n) if n > 0 && n < buf.len() => {
                    self.clear_readiness(event, Direction::Write);
                    return Poll::Ready(Ok(n));
                }
                result => return Poll::Ready(result),
            }
        }
    }

    /// Vectored write once the source is writable.
    pub(crate) fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        use std::io::Write;
        self.poll_io(cx, Direction::Write, |source| {
            let mut source = source;
            source.write_vectored(bufs)
        })
    }
}

/// `buf` zeroed, as initialized bytes (for reads that take only those).
#[cfg(feature = "hyper")]
pub(crate) fn zeroed(buf: &mut [std::mem::MaybeUninit<u8>]) -> &mut [u8] {
    for byte in buf.iter_mut() {
        byte.write(0);
    }
    // SAFETY: every element was just initialized; `MaybeUninit<u8>` and
    // `u8` have the same layout.
    unsafe { &mut *(std::ptr::from_mut::<[std::mem::MaybeUninit<u8>]>(buf) as *mut [u8]) }
}

impl<E: Source> Drop for PollEvented<E> {
    fn drop(&mut self) {
        if let Some(mut source) = self.source.take() {
            self.shared.io.deregister(&mut source, &self.registered);
        }
    }
}

/// Waits for some readiness (a direction's, or any set of bits) as a
/// listed waiter of the source.
struct Readiness<'a, E: Source> {
    evented: &'a PollEvented<E>,
    wants: Wants,
    id: u64,
}

impl<E: Source> Future for Readiness<'_, E> {
    type Output = io::Result<ReadyEvent>;

    /// Spends no budget (tokio's `readable`/`writable`/`ready` spend
    /// none): a loop of `writable().await` and `try_write` runs as long
    /// as the socket takes bytes; `async_io` spends for its operation.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let io = &this.evented.registered.io;
        let result = io.poll_ready_listed(cx, this.wants, &mut this.id);
        if result.is_ready() {
            io.forget_waiter(std::mem::take(&mut this.id));
        }
        result
    }
}

impl<E: Source> Drop for Readiness<'_, E> {
    fn drop(&mut self) {
        self.evented.registered.io.forget_waiter(self.id);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Waker};

    use super::{PollEvented, current_runtime};
    use crate::runtime::io::scheduled_io::Direction;

    fn udp_socket() -> mio::net::UdpSocket {
        mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap()
    }

    /// Dropping a source deregisters it: the reactor forgets it (kept, its
    /// state lived as long as the runtime and the keeper never left the
    /// poller for its condvar).
    #[test]
    fn a_dropped_source_leaves_the_reactor() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let shared = current_runtime("test");
        let evented = PollEvented::new(udp_socket(), "test").unwrap();
        assert_eq!(shared.io.num_registered(), 1);
        drop(evented);
        assert_eq!(shared.io.num_registered(), 0);
    }

    /// A readiness future dropped while it waits leaves the source's list
    /// of waiters (kept, every wait cancelled by a timeout would grow the
    /// list of a long-lived socket, and its stale waker be woken).
    #[test]
    fn a_cancelled_wait_leaves_the_waiter_list() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let evented = PollEvented::new(udp_socket(), "test").unwrap();
        {
            let mut waiting = pin!(evented.ready(Direction::Read));
            let mut cx = Context::from_waker(Waker::noop());
            assert!(
                waiting.as_mut().poll(&mut cx).is_pending(),
                "nothing was sent"
            );
            assert_eq!(evented.registered.io.listed_waiters(), 1);
        }
        assert_eq!(evented.registered.io.listed_waiters(), 0);
    }

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Counter(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Counter {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// A `try_*` call that finds the socket not ready does not take the
    /// place of a task waiting on the same direction through the `poll_*`
    /// interface (the direction's waker slot): that task is still woken
    /// when data arrives. (Kept: `try_io` once polled the readiness with a
    /// no-op waker, which replaced the waiting task's, and the task was
    /// never woken.)
    #[test]
    fn a_try_io_that_would_block_leaves_the_waiting_tasks_waker() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let evented = PollEvented::new(udp_socket(), "test").unwrap();
        let counter = std::sync::Arc::new(Counter::default());
        let waker = Waker::from(counter.clone());
        assert!(
            evented
                .poll_ready(&mut Context::from_waker(&waker), Direction::Read)
                .is_pending(),
            "nothing was sent"
        );
        let mut buf = [0; 8];
        let tried = evented.try_io(Direction::Read, |socket| socket.recv(&mut buf));
        assert_eq!(
            tried.unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "nothing was sent"
        );
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = evented.get_ref().local_addr().unwrap();
        sender.send_to(b"ping", to).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while counter.0.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the task waiting for readability was not woken in 10 s: `try_io` replaced its waker"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
