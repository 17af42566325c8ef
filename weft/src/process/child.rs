//! [`Child`]: a spawned process, its pipes, and the state of its exit
//! (running, with its [`Reaper`]; or exited, with the status).

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::process::{ExitStatus, Output};
use std::task::{Context, Poll};

use super::orphan;
use super::pipe::{ChildStderr, ChildStdin, ChildStdout};
use super::reap::Reaper;
use crate::runtime::Handle;

/// A child process, as tokio's `Child`: [`wait`](Child::wait) for it,
/// [`try_wait`](Child::try_wait), [`kill`](Child::kill) it, and use its
/// pipes.
///
/// Dropping a `Child` does not stop the process (unless the command set
/// [`kill_on_drop`](super::Command::kill_on_drop)), but it is still reaped
/// when it exits: no zombie is left (the module's doc says how).
pub struct Child {
    /// The write end of the child's stdin, if it was piped.
    pub stdin: Option<ChildStdin>,
    /// The read end of the child's stdout, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The read end of the child's stderr, if it was piped.
    pub stderr: Option<ChildStderr>,
    state: State,
}

enum State {
    Running {
        reaper: Reaper,
        kill_on_drop: bool,
        /// The runtime the child was spawned on, whose reactor its pidfd
        /// is registered with: an orphan task runs there.
        handle: Handle,
    },
    Exited(ExitStatus),
    /// Only while a drop takes the state out.
    Gone,
}

impl Child {
    /// Wraps a `std` child just spawned by `Command::spawn` (inside
    /// `handle`'s runtime). On an error the child is killed and reaped
    /// (by an orphan task) and no `Child` is returned.
    pub(super) fn new(
        mut std: std::process::Child,
        kill_on_drop: bool,
        handle: Handle,
    ) -> io::Result<Child> {
        let stdin = std.stdin.take();
        let stdout = std.stdout.take();
        let stderr = std.stderr.take();
        let reaper = match Reaper::new(std) {
            Ok(reaper) => reaper,
            Err((error, mut std)) => {
                // No exit event could be armed: stop the child and let the
                // process-wide list reap it.
                let _ = std.kill();
                orphan::leave(std);
                return Err(error);
            }
        };
        let mut child = Child {
            stdin: None,
            stdout: None,
            stderr: None,
            state: State::Running {
                reaper,
                kill_on_drop,
                handle,
            },
        };
        let pipes = (|| {
            child.stdin = stdin.map(ChildStdin::from_std).transpose()?;
            child.stdout = stdout.map(ChildStdout::from_std).transpose()?;
            child.stderr = stderr.map(ChildStderr::from_std).transpose()?;
            io::Result::Ok(())
        })();
        if let Err(error) = pipes {
            // Dropped as killed-on-drop: the child is stopped and reaped.
            if let State::Running { kill_on_drop, .. } = &mut child.state {
                *kill_on_drop = true;
            }
            return Err(error);
        }
        Ok(child)
    }

    /// The child's pid while it has not been reaped; `None` once its
    /// status was collected (the pid may then name another process).
    pub fn id(&self) -> Option<u32> {
        match &self.state {
            State::Running { reaper, .. } => Some(reaper.id()),
            _ => None,
        }
    }

    /// Sends the child `SIGKILL` and returns without waiting for it to
    /// end. After the status was collected this does nothing and returns
    /// `Ok` (no signal: the pid may be another process's). The child
    /// remains to be waited for (`wait`, `try_wait`, or the drop's reaping).
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Running { reaper, .. } => reaper.start_kill(),
            _ => Ok(()),
        }
    }

    /// [`start_kill`](Child::start_kill), then [`wait`](Child::wait).
    /// Unlike `std`'s `kill`, the child is reaped when this returns.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Closes the child's stdin (so a child reading it sees its end and
    /// no one deadlocks), then waits for the child to exit and reaps it.
    /// Returns the same status again if called after. Cancel-safe: a
    /// dropped `wait` loses nothing (the stdin is closed, though).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        match &mut self.state {
            State::Running { reaper, .. } => match reaper.poll_wait(cx) {
                Poll::Ready(Ok(status)) => {
                    self.state = State::Exited(status);
                    Poll::Ready(Ok(status))
                }
                other => other,
            },
            State::Exited(status) => Poll::Ready(Ok(*status)),
            State::Gone => unreachable!("the state is gone only inside drop"),
        }
    }

    /// The status if the child has exited (reaping it), `None` if it still
    /// runs; never blocks and never closes stdin. Once it has returned a
    /// status it returns that status again.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match &mut self.state {
            State::Running { reaper, .. } => {
                let status = reaper.try_wait()?;
                if let Some(status) = status {
                    self.state = State::Exited(status);
                }
                Ok(status)
            }
            State::Exited(status) => Ok(Some(*status)),
            State::Gone => unreachable!("the state is gone only inside drop"),
        }
    }

    /// Closes stdin, then reads all of stdout and stderr (those that were
    /// piped; the others give empty vectors) while waiting for the exit.
    /// On the first error the rest is dropped (and so is the `Child`).
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let stdout = self.stdout.take();
        let stderr = self.stderr.take();
        let mut out = Collect::new(stdout.is_some());
        let mut err = Collect::new(stderr.is_some());
        let mut status = None;
        poll_fn(|cx| {
            if let Some(stdout) = &stdout {
                out.poll(cx, |cx, buf| stdout.poll_read_bytes(cx, buf))?;
            }
            if let Some(stderr) = &stderr {
                err.poll(cx, |cx, buf| stderr.poll_read_bytes(cx, buf))?;
            }
            if status.is_none() {
                if let Poll::Ready(result) = self.poll_wait(cx) {
                    status = Some(result?);
                }
            }
            match status {
                Some(_) if out.done && err.done => Poll::Ready(io::Result::Ok(())),
                _ => Poll::Pending,
            }
        })
        .await?;
        Ok(Output {
            status: status.expect("the loop ends only with a status"),
            stdout: out.bytes,
            stderr: err.bytes,
        })
    }
}

/// One stream read to its end by `wait_with_output`.
struct Collect {
    bytes: Vec<u8>,
    done: bool,
}

impl Collect {
    /// `piped: false`: nothing to read.
    fn new(piped: bool) -> Collect {
        Collect {
            bytes: Vec::new(),
            done: !piped,
        }
    }

    /// Reads until the stream would block (its waker is then registered)
    /// or ends; `Err` on a read error.
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        mut read: impl FnMut(&mut Context<'_>, &mut [u8]) -> Poll<io::Result<usize>>,
    ) -> io::Result<()> {
        const CHUNK: usize = 8 * 1024;
        while !self.done {
            let len = self.bytes.len();
            self.bytes.resize(len + CHUNK, 0);
            let polled = read(cx, &mut self.bytes[len..]);
            let n = match polled {
                Poll::Ready(Ok(n)) => n,
                Poll::Ready(Err(error)) => {
                    self.bytes.truncate(len);
                    return Err(error);
                }
                Poll::Pending => 0,
            };
            self.bytes.truncate(len + n);
            match polled {
                Poll::Pending => return Ok(()),
                _ if n == 0 => self.done = true,
                _ => {}
            }
        }
        Ok(())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let State::Running {
            mut reaper,
            kill_on_drop,
            handle,
        } = std::mem::replace(&mut self.state, State::Gone)
        else {
            return;
        };
        if kill_on_drop {
            let _ = reaper.start_kill();
        }
        // Already exited (or no longer ours: an error): nothing to wait for.
        if !matches!(reaper.try_wait(), Ok(None)) {
            return;
        }
        orphan::adopt(reaper, &handle);
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Child");
        match &self.state {
            State::Running { reaper, .. } => debug.field("pid", &reaper.id()),
            State::Exited(status) => debug.field("status", status),
            State::Gone => &mut debug,
        };
        debug
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish()
    }
}
