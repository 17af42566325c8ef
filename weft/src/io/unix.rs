//! [`AsyncFd`]: readiness for any file descriptor (a pipe, a serial port,
//! inotify, a socket weft has no type for), as tokio's
//! `tokio::io::unix::AsyncFd`.
//!
//! A guard clears readiness only when asked (`try_io` on `WouldBlock`,
//! `clear_ready`), and `into_inner` gives the fd back deregistered from
//! epoll (correctness): pinned by `net.rs`'s
//! `async_fd_clears_readiness_only_when_asked_and_gives_the_fd_back_unregistered`.
//! `Fd::reregister` is never called: the reactor registers a source once,
//! for both directions.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::task::{Context, Poll, ready};

use mio::unix::SourceFd;

use crate::runtime::{Direction, PollEvented, ReadyEvent};

/// The reactor's own duplicate of an `AsyncFd`'s descriptor, as a `mio`
/// source.
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
struct Fd(OwnedFd);

impl Fd {
    /// A close-on-exec duplicate of `fd`.
    fn duplicate(fd: RawFd) -> io::Result<Fd> {
        // SAFETY: `fcntl(fd, F_DUPFD_CLOEXEC, 0)` reads no memory of ours;
        // for a number that is not an open descriptor it fails (`EBADF`).
        let duplicate = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if duplicate < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `duplicate` is a descriptor the call above just opened;
        // nothing else owns it.
        Ok(Fd(unsafe { OwnedFd::from_raw_fd(duplicate) }))
    }
}

impl mio::event::Source for Fd {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).deregister(registry)
    }
}

/// A file descriptor registered with the runtime's reactor (edge-triggered,
/// both directions). The fd must be in non-blocking mode; `AsyncFd` does
/// not change it. Dropping it deregisters the fd and drops `T` (closing the
/// fd if `T` owns it); [`into_inner`](AsyncFd::into_inner) deregisters and
/// gives `T` back.
///
/// The reactor registers a duplicate of the fd that it owns (one `fcntl`
/// at `new`, one `close` at the drop), so what `T`'s own number does
/// cannot reach the reactor: readiness is that of the open file `T` had at
/// `new`, for as long as the `AsyncFd` lives, even if `T` closes or
/// replaces its number meanwhile (through [`get_mut`](AsyncFd::get_mut)).
/// tokio registers `T`'s number itself; the duplicate is the difference
/// (it also keeps the file open until the `AsyncFd` drops).
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

/// The readiness an [`AsyncFd`] waited for; [`clear_ready`] after a
/// `WouldBlock`, or let [`try_io`] do it.
///
/// [`clear_ready`]: AsyncFdReadyGuard::clear_ready
/// [`try_io`]: AsyncFdReadyGuard::try_io
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    fd: &'a AsyncFd<T>,
    event: ReadyEvent,
    direction: Direction,
}

/// [`AsyncFdReadyGuard::try_io`] found the fd not ready after all.
#[derive(Debug)]
pub struct TryIoError(());

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s fd with the current runtime's reactor.
    ///
    /// # Panics
    ///
    /// Outside a runtime context.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        let runtime = crate::runtime::current_runtime("AsyncFd::new");
        let fd = Fd::duplicate(inner.as_raw_fd())?;
        Ok(AsyncFd {
            evented: PollEvented::with_runtime(fd, runtime)?,
            inner: Some(inner),
        })
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
    /// an error).
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Direction::Read).await
    }

    /// Waits until the fd is writable (or its write side closed, or it has
    /// an error).
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Direction::Write).await
    }

    async fn ready(&self, direction: Direction) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.evented.ready(direction).await?;
        Ok(AsyncFdReadyGuard {
            fd: self,
            event,
            direction,
        })
    }

    /// `readable` in `poll` form: only the last task to call it is woken.
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        self.poll_ready(cx, Direction::Read)
    }

    /// `writable` in `poll` form: only the last task to call it is woken.
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        self.poll_ready(cx, Direction::Write)
    }

    fn poll_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.evented.poll_ready(cx, direction))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            event,
            direction,
        }))
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: AsRawFd> AsyncFdReadyGuard<'_, T> {
    /// Forgets the readiness this guard saw: the next wait sleeps until the
    /// reactor reports the fd ready again. Call it after a `WouldBlock`.
    pub fn clear_ready(&mut self) {
        self.fd.evented.clear_readiness(self.event, self.direction);
    }

    /// Keeps the readiness (the fd may still be ready).
    pub fn retain_ready(&mut self) {}

    /// Runs `f` on the `AsyncFd`; on `WouldBlock` clears the readiness and
    /// returns `Err(TryIoError)` (wait again), otherwise its result.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.fd) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The `AsyncFd` this guard is for.
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.fd
    }

    /// The wrapped value.
    pub fn get_inner(&self) -> &T {
        self.fd.get_ref()
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
        let error = AsyncFd::new(i32::MAX).err().expect("not an open fd");
        assert_eq!(error.raw_os_error(), Some(libc::EBADF), "{error}");
    }
}
