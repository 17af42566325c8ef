//! [`AsyncFd`]: readiness for any file descriptor (a pipe, a serial port,
//! inotify, a socket weft has no type for), as tokio's
//! `tokio::io::unix::AsyncFd`, with its guards ([`AsyncFdReadyGuard`],
//! [`AsyncFdReadyMutGuard`], in `unix/guard.rs`).
//!
//! # Invariants
//!
//! - Readiness is cached until cleared: a guard clears it only when asked
//!   (`clear_ready`, `clear_ready_matching`, `try_io` on `WouldBlock`),
//!   and only if the reactor delivered nothing since the guard's event
//!   (the tick: `runtime/io/scheduled_io.rs`). Closed bits are never
//!   cleared: a read-closed fd stays ready. Pinned by `net.rs`'s
//!   `async_fd_clears_readiness_only_when_asked_and_gives_the_fd_back_unregistered`
//!   and `async_fd_api.rs`.
//! - `into_inner` gives the fd back deregistered from epoll (correctness).
//! - The reactor registers a duplicate of the fd, with the `Interest` the
//!   `AsyncFd` was made with (`Fd`'s `register` ignores the one the
//!   reactor passes); `Fd::reregister` is never called.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::task::{Context, Poll, ready};

use mio::unix::SourceFd;

use crate::io::{Interest, Ready};
use crate::runtime::{Direction, PollEvented, ReadyEvent};

mod guard;

pub use guard::{AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};

/// The reactor's own duplicate of an `AsyncFd`'s descriptor, as a `mio`
/// source registered with the `AsyncFd`'s interest.
///
/// Why a duplicate: epoll keys a registration by the open file, and the
/// number `T` holds is the user's to close or replace (`get_mut`, a
/// `RawFd` closed early). Had the reactor registered that number, closing
/// it while another descriptor keeps the file open would leave a
/// registration the reactor can no longer delete, and a new socket given
/// the same number would have its own registration deleted in its place.
/// The duplicate is weft's alone: it stays open until the `AsyncFd`
/// deregisters it, so that deregistration always succeeds, and it names the
/// same open file, so readiness is the file's.
struct Fd {
    fd: OwnedFd,
    interest: mio::Interest,
}

impl Fd {
    /// A close-on-exec duplicate of `fd`, to be registered for `interest`.
    fn duplicate(fd: RawFd, interest: Interest) -> io::Result<Fd> {
        // SAFETY: `fcntl(fd, F_DUPFD_CLOEXEC, 0)` reads no memory of ours;
        // for a number that is not an open descriptor it fails (`EBADF`).
        let duplicate = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if duplicate < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Fd {
            // SAFETY: `duplicate` is a descriptor the call above just
            // opened; nothing else owns it.
            fd: unsafe { OwnedFd::from_raw_fd(duplicate) },
            interest: interest.to_mio(),
        })
    }
}

impl mio::event::Source for Fd {
    /// Registers for the `AsyncFd`'s interest, whatever the reactor asks
    /// (it asks every source for both directions).
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        _interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).register(registry, token, self.interest)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        _interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).reregister(registry, token, self.interest)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        SourceFd(&self.fd.as_raw_fd()).deregister(registry)
    }
}

/// A file descriptor registered with the runtime's reactor (edge-triggered,
/// for the [`Interest`] it was made with: readable and writable by
/// default). The fd must be in non-blocking mode; `AsyncFd` does not change
/// it. Dropping it deregisters the fd and drops `T` (closing the fd if `T`
/// owns it); [`into_inner`](AsyncFd::into_inner) deregisters and gives `T`
/// back.
///
/// The reactor registers a duplicate of the fd that it owns (one `fcntl`
/// at `new`, one `close` at the drop), so what `T`'s own number does
/// cannot reach the reactor: readiness is that of the open file `T` had at
/// `new`, for as long as the `AsyncFd` lives, even if `T` closes or
/// replaces its number meanwhile (through [`get_mut`](AsyncFd::get_mut)).
/// tokio registers `T`'s number itself; the duplicate is the difference
/// (it also keeps the file open until the `AsyncFd` drops), and why
/// [`new`](AsyncFd::new) is safe here (tokio deprecates it for
/// [`register`](AsyncFd::register), which weft has too).
///
/// Readiness is cached until a guard clears it: a wait after a successful
/// read returns at once, the same readiness; clear it when the fd said
/// `WouldBlock` (the guards' `try_io` does).
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
/// use weft::io::unix::AsyncFd;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let (a, mut b) = UnixStream::pair().unwrap();
///     a.set_nonblocking(true).unwrap();
///     let a = AsyncFd::new(a).unwrap();
///     b.write_all(b"ping").unwrap();
///     let mut buf = [0; 4];
///     let n = loop {
///         let mut guard = a.readable().await.unwrap();
///         match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
///             Ok(result) => break result.unwrap(),
///             Err(_would_block) => continue,
///         }
///     };
///     assert_eq!(&buf[..n], b"ping");
/// });
/// ```
pub struct AsyncFd<T: AsRawFd> {
    evented: PollEvented<Fd>,
    inner: Option<T>,
}

/// [`AsyncFd::register`] (or `try_new`) failed: the error and the value it
/// was given, back ([`into_parts`](AsyncFdRegisterError::into_parts)).
pub struct AsyncFdRegisterError<T> {
    inner: T,
    cause: io::Error,
}

/// tokio's older name of [`AsyncFdRegisterError`].
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;

impl<T> AsyncFdRegisterError<T> {
    /// The value given to `register` and the error that refused it.
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }
}

impl<T> fmt::Display for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl<T> fmt::Debug for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> std::error::Error for AsyncFdRegisterError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdRegisterError<T>> for io::Error {
    fn from(error: AsyncFdRegisterError<T>) -> io::Error {
        error.cause
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s fd with the current runtime's reactor, readable
    /// and writable.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        Ok(AsyncFd::try_new(inner)?)
    }

    /// `new` for the readiness of `interest` only (`Interest::PRIORITY`
    /// must be asked for here to be seen).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        Ok(AsyncFd::try_with_interest(inner, interest)?)
    }

    /// `new`, giving `inner` back on failure.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn try_new(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// `with_interest`, giving `inner` back on failure.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn try_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        let runtime = crate::runtime::current_runtime("AsyncFd::new");
        // Here, not in the closure below: the panic is at the caller's line.
        runtime.config.check_io_enabled();
        let registered = Fd::duplicate(inner.as_raw_fd(), interest)
            .and_then(|fd| PollEvented::with_runtime(fd, runtime));
        match registered {
            Ok(evented) => Ok(AsyncFd {
                evented,
                inner: Some(inner),
            }),
            Err(cause) => Err(AsyncFdRegisterError { inner, cause }),
        }
    }

    /// tokio's `register`: `try_new`. weft registers a duplicate of the
    /// fd, so it needs nothing of the caller.
    ///
    /// # Safety
    ///
    /// tokio's contract, kept so that code written for tokio is sound
    /// here too: `inner.as_raw_fd()` is an open descriptor that stays open,
    /// naming the same file, while the `AsyncFd` lives.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub unsafe fn register(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_new(inner)
    }

    /// tokio's `register_with_interest`: `try_with_interest`.
    ///
    /// # Safety
    ///
    /// As [`register`](AsyncFd::register).
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub unsafe fn register_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, interest)
    }

    /// The wrapped value.
    pub fn get_ref(&self) -> &T {
        self.inner.as_ref().expect("taken only by into_inner")
    }

    /// The wrapped value, mutably. Replacing its fd does not move the
    /// registration: readiness stays that of the file registered at `new`.
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.as_mut().expect("taken only by into_inner")
    }

    /// Deregisters the fd and gives the wrapped value back.
    pub fn into_inner(mut self) -> T {
        let inner = self.inner.take().expect("taken only once");
        // Deregisters now, while `inner` still holds the fd open.
        drop(self);
        inner
    }

    /// Waits until the fd is readable (or its read side closed, or it has
    /// an error). Any number of tasks may wait at once.
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    /// `readable`, with a guard that lends the `AsyncFd` mutably.
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits until the fd is writable (or its write side closed, or it has
    /// an error).
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// `writable`, with a guard that lends the `AsyncFd` mutably.
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Waits until any readiness of `interest` is there; the guard's
    /// [`ready`](AsyncFdReadyGuard::ready) says which.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.evented.ready(interest.wants()).await?;
        Ok(AsyncFdReadyGuard::new(self, event))
    }

    /// `ready`, with a guard that lends the `AsyncFd` mutably.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = self.evented.ready(interest.wants()).await?;
        Ok(AsyncFdReadyMutGuard::new(self, event))
    }

    /// `readable` in `poll` form: only the last task to call it (or
    /// `poll_read_ready_mut`) is woken.
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// `poll_read_ready` with a guard that lends the `AsyncFd` mutably.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// `writable` in `poll` form: only the last task to call it (or
    /// `poll_write_ready_mut`) is woken.
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// `poll_write_ready` with a guard that lends the `AsyncFd` mutably.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    fn poll_event(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.evented.poll_ready(cx, direction)
    }

    /// Runs `f` once `interest` is ready, again after each `WouldBlock`
    /// (which clears the readiness), and returns its first other result.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.get_ref();
        self.evented.async_io(interest.wants(), |_| f(inner)).await
    }

    /// `async_io` with the wrapped value lent mutably.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.inner.as_mut().expect("taken only by into_inner");
        self.evented.async_io(interest.wants(), |_| f(inner)).await
    }

    /// Runs `f` if `interest` is known ready, without waiting:
    /// `WouldBlock` otherwise; a `WouldBlock` from `f` clears the
    /// readiness.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.get_ref();
        self.evented.try_io(interest.wants(), |_| f(inner))
    }

    /// `try_io` with the wrapped value lent mutably.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.inner.as_mut().expect("taken only by into_inner");
        self.evented.try_io(interest.wants(), |_| f(inner))
    }

    /// Forgets `ready` as seen in `event` (a guard's clear).
    fn clear(&self, event: ReadyEvent, ready: Ready) {
        self.evented
            .clear_readiness(event, crate::runtime::Wants(ready.bits()));
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use super::AsyncFd;
    use crate::runtime::current_runtime;

    fn nonblocking_pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        (a, b)
    }

    /// The kernel's registration goes with the `AsyncFd`: `into_inner` and
    /// drop each delete it. (`Fd::deregister` made `Ok(())` left it, whose
    /// token then named a freed `ScheduledIo`.)
    #[test]
    fn into_inner_and_drop_leave_no_kernel_registration() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let shared = current_runtime("test");
        let before = shared.io.kernel_registrations();
        let (a, _b) = nonblocking_pair();
        let fd = AsyncFd::new(a).unwrap();
        assert_eq!(shared.io.kernel_registrations(), before + 1);
        let a = fd.into_inner();
        assert_eq!(shared.io.kernel_registrations(), before);
        drop(AsyncFd::new(a).unwrap());
        assert_eq!(shared.io.kernel_registrations(), before);
        assert_eq!(shared.io.num_orphaned(), 0);
    }

    /// The number an `AsyncFd` of a `RawFd` was made from, closed early
    /// while a duplicate keeps its file open, does not strand a
    /// registration: the reactor registered its own duplicate, which it
    /// deletes. (Registering the user's number, that DEL failed and the
    /// kernel kept delivering a freed source's token.)
    #[test]
    fn a_number_closed_under_an_async_fd_strands_no_registration() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let shared = current_runtime("test");
        let before = shared.io.kernel_registrations();
        let (a, _b) = nonblocking_pair();
        let duplicate = a.try_clone().unwrap();
        let fd = AsyncFd::new(a.as_raw_fd()).unwrap();
        drop(a);
        drop(fd);
        assert_eq!(shared.io.kernel_registrations(), before);
        assert_eq!(shared.io.num_orphaned(), 0);
        drop(duplicate);
    }

    /// A number that is not an open descriptor is refused at `new`.
    #[test]
    fn a_number_that_is_not_open_is_an_error() {
        let rt = crate::runtime::Runtime::new().unwrap();
        let _context = rt.enter();
        let error = AsyncFd::new(i32::MAX).expect_err("not an open fd");
        assert_eq!(error.raw_os_error(), Some(libc::EBADF), "{error}");
    }
}
