//! [`Reaper`]: one child's `std::process::Child` and what tells when it
//! exits: its pidfd on the reactor, or, where pidfds are missing, the
//! process's `SIGCHLD` deliveries (the module doc of `process` says when
//! each is used).
//!
//! The one rule: the status is taken only by `std::process::Child::try_wait`
//! (`waitpid(pid, WNOHANG)`), after the exit event was *armed* (the pidfd
//! registered, or the `SIGCHLD` listener created), so an exit between the
//! last `try_wait` and the wait for the event is never missed: epoll
//! reports a pidfd that is already readable at its registration, and a
//! listener counts the deliveries after its creation.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::task::{Context, Poll, ready};

use crate::io::unix::AsyncFd;
use crate::signal::unix::{Signal, SignalKind, signal};

/// A child not yet reaped, and its exit event.
pub(super) struct Reaper {
    std: std::process::Child,
    exit: ExitEvent,
}

/// What wakes a task waiting for the exit.
enum ExitEvent {
    /// The child's pidfd: readable once it has exited.
    Pidfd(AsyncFd<OwnedFd>),
    /// A listener for `SIGCHLD` (any child's exit), where pidfds are
    /// missing.
    Sigchld(Signal),
}

impl Reaper {
    /// Arms the exit event of a child just spawned (the pidfd, else
    /// `SIGCHLD`). Must run inside a runtime (the pidfd registers with its
    /// reactor). On an error the child is given back, still running.
    pub(super) fn new(
        std: std::process::Child,
    ) -> Result<Reaper, (io::Error, std::process::Child)> {
        Reaper::with_event(std, true)
    }

    /// As `new`; `pidfd: false` goes straight to the `SIGCHLD` fallback
    /// (so the tests can run it on a kernel that has pidfds).
    pub(super) fn with_event(
        std: std::process::Child,
        pidfd: bool,
    ) -> Result<Reaper, (io::Error, std::process::Child)> {
        let registered = if pidfd {
            pidfd_open(std.id()).and_then(AsyncFd::new).ok()
        } else {
            None
        };
        let exit = match registered {
            Some(fd) => ExitEvent::Pidfd(fd),
            None => match signal(SignalKind::child()) {
                Ok(listener) => ExitEvent::Sigchld(listener),
                Err(error) => return Err((error, std)),
            },
        };
        Ok(Reaper { std, exit })
    }

    /// The child's pid.
    pub(super) fn id(&self) -> u32 {
        self.std.id()
    }

    /// Whether the exit is watched through a pidfd.
    #[cfg(test)]
    pub(super) fn uses_pidfd(&self) -> bool {
        matches!(self.exit, ExitEvent::Pidfd(_))
    }

    /// Reaps the child if it has exited (`waitpid(pid, WNOHANG)`); once it
    /// has, returns the same status again without a syscall.
    pub(super) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.std.try_wait()
    }

    /// Sends `SIGKILL`, unless the child was already reaped (then the pid
    /// may be another process's, and nothing is sent: `Ok`).
    pub(super) fn start_kill(&mut self) -> io::Result<()> {
        self.std.kill()
    }

    /// Waits for the exit and reaps the child. Cancel-safe: a future
    /// dropped between two polls loses nothing.
    pub(super) fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        loop {
            if let Some(status) = self.std.try_wait()? {
                return Poll::Ready(Ok(status));
            }
            match &mut self.exit {
                ExitEvent::Pidfd(fd) => {
                    let mut guard = match ready!(fd.poll_read_ready(cx)) {
                        Ok(guard) => guard,
                        Err(error) if crate::runtime::is_rt_shutdown_err(&error) => {
                            // The runtime that spawned the child has gone
                            // (a child may be awaited on another runtime,
                            // as on tokio): watch it from the current one.
                            self.exit = ExitEvent::Pidfd(self.rearm_pidfd().map_err(|_| error)?);
                            continue;
                        }
                        Err(error) => return Poll::Ready(Err(error)),
                    };
                    if let Some(status) = self.std.try_wait()? {
                        return Poll::Ready(Ok(status));
                    }
                    // Readable but not yet waitable would be a kernel's
                    // oddity; forget this readiness and wait for the next.
                    guard.clear_ready();
                }
                ExitEvent::Sigchld(listener) => {
                    // Some child exited since the last look: maybe this one.
                    ready!(listener.poll_recv(cx));
                }
            }
        }
    }

    /// A new pidfd for the child, registered with the current runtime's
    /// reactor (the child is not reaped yet, so its pid still names it).
    /// Fails (rather than panic) outside a runtime.
    fn rearm_pidfd(&self) -> io::Result<AsyncFd<OwnedFd>> {
        crate::runtime::Handle::try_current().map_err(io::Error::other)?;
        pidfd_open(self.std.id()).and_then(AsyncFd::new)
    }

    /// The `std` child, for the process-wide list of children whose
    /// runtime has gone (`orphan.rs`).
    pub(super) fn into_std(self) -> std::process::Child {
        self.std
    }
}

/// A pidfd for `pid`: readable once the process has exited, close-on-exec
/// (the kernel sets it on every pidfd). Fails with the OS's error where
/// pidfds are missing (`ENOSYS` before Linux 5.3).
#[cfg(target_os = "linux")]
fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `pidfd_open(pid, 0)` reads no memory of ours; `pid` is a
    // child of this process not yet reaped (only its `Reaper` reaps it),
    // so the number names that child and no other process.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd =
        i32::try_from(fd).map_err(|_| io::Error::other("pidfd_open returned no descriptor"))?;
    // SAFETY: `fd` is a descriptor the call above just opened; nothing
    // else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Elsewhere there are no pidfds: always the `SIGCHLD` fallback.
#[cfg(not(target_os = "linux"))]
fn pidfd_open(_pid: u32) -> io::Result<OwnedFd> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::future::poll_fn;
    use std::time::{Duration, Instant};

    use super::Reaper;
    use crate::runtime::{Handle, Runtime};

    fn sh(script: &str) -> std::process::Child {
        std::process::Command::new("sh")
            .args(["-c", script])
            .spawn()
            .unwrap()
    }

    fn reaper(script: &str, pidfd: bool) -> Reaper {
        Reaper::with_event(sh(script), pidfd)
            .map_err(|(error, _)| error)
            .unwrap()
    }

    /// This kernel has pidfds (5.3 or later): they are what `new` uses.
    #[test]
    fn pidfds_are_used_where_the_kernel_has_them() {
        let rt = Runtime::new().unwrap();
        let _context = rt.enter();
        let mut reaper = Reaper::new(sh("exit 0")).map_err(|(e, _)| e).unwrap();
        assert!(reaper.uses_pidfd());
        let status = rt.block_on(poll_fn(|cx| reaper.poll_wait(cx))).unwrap();
        assert!(status.success());
    }

    /// The `SIGCHLD` fallback waits for and reaps each of many children
    /// exiting close together (deliveries collapse: every listener looks
    /// at its own child at each one), each with its own status.
    #[test]
    fn the_sigchld_fallback_waits_for_every_child() {
        let rt = Runtime::new().unwrap();
        rt.block_on(async {
            let waits: Vec<_> = (0..20)
                .map(|i| {
                    let mut reaper = reaper(&format!("sleep 0.0{}; exit {i}", i % 5), false);
                    assert!(!reaper.uses_pidfd());
                    crate::spawn(async move { poll_fn(|cx| reaper.poll_wait(cx)).await })
                })
                .collect();
            for (i, wait) in waits.into_iter().enumerate() {
                let status = wait.await.unwrap().unwrap();
                assert_eq!(status.code(), Some(i as i32));
            }
        });
    }

    /// A child watched through `SIGCHLD` and dropped is reaped by its
    /// orphan task as one watched through a pidfd is.
    #[test]
    fn an_orphan_on_the_sigchld_fallback_is_reaped() {
        let rt = Runtime::new().unwrap();
        let pid = rt.block_on(async {
            let reaper = reaper("sleep 0.1", false);
            let pid = reaper.id();
            super::super::orphan::adopt(reaper, &Handle::current());
            pid
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "pid {pid} was not reaped");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
