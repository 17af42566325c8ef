//! The guards an [`AsyncFd`]'s waits return: the readiness seen, and the
//! way to clear it (after a `WouldBlock`) so that the next wait sleeps.
//!
//! A guard holds the reactor's event (its tick) and the bits it still
//! reports; clearing sends those bits back with the event's tick, so a
//! delivery that came since is never erased. A guard dropped without a
//! clear keeps the readiness (tokio's rule): the next wait returns at
//! once.

use std::fmt;
use std::io;
use std::os::fd::AsRawFd;

use super::AsyncFd;
use crate::io::Ready;
use crate::runtime::ReadyEvent;

/// [`try_io`](AsyncFdReadyGuard::try_io) found the fd not ready after all
/// (its closure said `WouldBlock`); the readiness was cleared.
#[derive(Debug)]
pub struct TryIoError(());

/// What a guard saw: the event, and the bits it still reports (`None`
/// once cleared).
#[derive(Clone, Copy)]
struct Seen {
    event: ReadyEvent,
    ready: Ready,
}

impl Seen {
    fn new(event: ReadyEvent) -> Option<Seen> {
        Some(Seen {
            event,
            ready: Ready::from_bits(event.ready()),
        })
    }
}

/// Clears everything `seen` reports on `fd`.
fn clear_all<T: AsRawFd>(fd: &AsyncFd<T>, seen: &mut Option<Seen>) {
    if let Some(seen) = seen.take() {
        fd.clear(seen.event, seen.ready);
    }
}

/// Clears `ready` on `fd` at `seen`'s tick; `seen` keeps reporting the
/// rest.
fn clear_matching<T: AsRawFd>(fd: &AsyncFd<T>, seen: &mut Option<Seen>, ready: Ready) {
    if let Some(mut left) = seen.take() {
        fd.clear(left.event, ready);
        left.ready = left.ready - ready;
        if !left.ready.is_empty() {
            *seen = Some(left);
        }
    }
}

fn ready_of(seen: &Option<Seen>) -> Ready {
    seen.map_or(Ready::EMPTY, |seen| seen.ready)
}

/// The readiness an [`AsyncFd`] waited for, lending it shared;
/// [`clear_ready`](Self::clear_ready) after a `WouldBlock`, or let
/// [`try_io`](Self::try_io) do it.
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    fd: &'a AsyncFd<T>,
    seen: Option<Seen>,
}

/// The readiness an [`AsyncFd`] waited for, lending it mutably.
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    fd: &'a mut AsyncFd<T>,
    seen: Option<Seen>,
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    pub(super) fn new(fd: &'a AsyncFd<T>, event: ReadyEvent) -> Self {
        AsyncFdReadyGuard {
            fd,
            seen: Seen::new(event),
        }
    }

    /// Forgets the readiness this guard saw (all of it but the closed
    /// kinds, which are final): the next wait sleeps until the reactor
    /// reports the fd ready again. Call it after a `WouldBlock`.
    pub fn clear_ready(&mut self) {
        clear_all(self.fd, &mut self.seen);
    }

    /// Forgets only `ready` (`Ready::READABLE` after a read said
    /// `WouldBlock` while writing may still go on); the guard's
    /// [`ready`](Self::ready) no longer reports it.
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(self.fd, &mut self.seen, ready);
    }

    /// Keeps the readiness (the fd may still be ready): what dropping the
    /// guard does too.
    pub fn retain_ready(&mut self) {}

    /// The readiness seen and not cleared through this guard.
    pub fn ready(&self) -> Ready {
        ready_of(&self.seen)
    }

    /// Runs `f` on the `AsyncFd`; on `WouldBlock` clears the readiness and
    /// returns `Err(TryIoError)` (wait again), otherwise its result.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
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
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.fd
    }

    /// The wrapped value.
    pub fn get_inner(&self) -> &'a T {
        self.fd.get_ref()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyMutGuard<'a, T> {
    pub(super) fn new(fd: &'a mut AsyncFd<T>, event: ReadyEvent) -> Self {
        AsyncFdReadyMutGuard {
            fd,
            seen: Seen::new(event),
        }
    }

    /// As [`AsyncFdReadyGuard::clear_ready`].
    pub fn clear_ready(&mut self) {
        clear_all(self.fd, &mut self.seen);
    }

    /// As [`AsyncFdReadyGuard::clear_ready_matching`].
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(self.fd, &mut self.seen, ready);
    }

    /// Keeps the readiness: what dropping the guard does too.
    pub fn retain_ready(&mut self) {}

    /// The readiness seen and not cleared through this guard.
    pub fn ready(&self) -> Ready {
        ready_of(&self.seen)
    }

    /// Runs `f` on the `AsyncFd`, lent mutably; on `WouldBlock` clears the
    /// readiness and returns `Err(TryIoError)`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
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

    /// The `AsyncFd` this guard is for, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.fd
    }

    /// The wrapped value.
    pub fn get_inner(&self) -> &T {
        self.fd.get_ref()
    }

    /// The wrapped value, mutably.
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.fd.get_mut()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("async_fd", self.fd)
            .field("ready", &self.ready())
            .finish()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyMutGuard")
            .field("async_fd", &self.fd)
            .field("ready", &self.ready())
            .finish()
    }
}
