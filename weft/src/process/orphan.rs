//! Children dropped before their exit was collected: reaped anyway.
//!
//! [`adopt`] spawns an *orphan* task on the child's runtime that owns its
//! [`Reaper`] and waits for the exit as `Child::wait` would. If the task
//! cannot run to its end (its runtime is shut down, or shuts down while it
//! waits, and drops it; or the wait fails), its drop passes the `std`
//! child to [`leave`]: a process-wide list served by one thread,
//! `weft-reaper`, that tries every child on it (`waitpid(pid, WNOHANG)`)
//! at each `SIGCHLD` and at least every [`SWEEP`], and exits once the list
//! is empty. So no child weft spawned stays a zombie for longer than its
//! exit plus a sweep, whatever happens to the runtime.
//!
//! The list's lock is held only to push, to sweep (syscalls, no user code)
//! and to hand the thread over; the thread starts under it, so there is at
//! most one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use super::reap::Reaper;
use crate::runtime::Handle;
use crate::signal::unix::{SignalKind, signal};
use crate::util::locks::StdMutex;

/// The longest a left-over child waits for a look after its exit, should
/// its `SIGCHLD` be missed (another handler, a listener that failed).
const SWEEP: Duration = Duration::from_secs(1);

/// Waits for `reaper`'s child on `handle`'s runtime and reaps it.
pub(super) fn adopt(reaper: Reaper, handle: &Handle) {
    // Dropping the join handle detaches the task. On a runtime that has
    // shut down, `spawn` drops the future at once: its drop hands the
    // child to the list.
    drop(handle.spawn(Orphan(Some(reaper))));
}

/// The orphan task's future.
struct Orphan(Option<Reaper>);

impl Future for Orphan {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(reaper) = self.0.as_mut() else {
            return Poll::Ready(());
        };
        match reaper.poll_wait(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(_status)) => {
                self.0 = None;
                Poll::Ready(())
            }
            // The reactor is gone (the runtime shut down) or the wait
            // failed: the drop below passes the child on.
            Poll::Ready(Err(_)) => Poll::Ready(()),
        }
    }
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if let Some(reaper) = self.0.take() {
            leave(reaper.into_std());
        }
    }
}

/// The children whose orphan task could not reap them.
struct Leftovers {
    children: Vec<std::process::Child>,
    /// The `weft-reaper` thread while it runs.
    thread: Option<Thread>,
}

static LEFTOVERS: StdMutex<Leftovers> = StdMutex::new(Leftovers {
    children: Vec::new(),
    thread: None,
});

/// Adds `child` to the list and makes sure the thread looks at it.
pub(super) fn leave(child: std::process::Child) {
    let mut leftovers = LEFTOVERS.lock().unwrap_or_else(|e| e.into_inner());
    leftovers.children.push(child);
    if let Some(thread) = &leftovers.thread {
        thread.unpark();
        return;
    }
    // A thread that cannot start leaves the child on the list for the next
    // `leave` to try again.
    if let Ok(started) = thread::Builder::new()
        .name("weft-reaper".into())
        .spawn(serve_leftovers)
    {
        leftovers.thread = Some(started.thread().clone());
    }
}

/// Unparks the thread that made it: the waker of the `SIGCHLD` listener.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The `weft-reaper` thread: sweeps the list at each `SIGCHLD` (the
/// listener is created before the first sweep, so an exit after a sweep
/// is a delivery the next wait sees), a new child, or `SWEEP`.
fn serve_leftovers() {
    let mut sigchld = signal(SignalKind::child()).ok();
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if !sweep() {
            return;
        }
        let delivered = sigchld
            .as_mut()
            .is_some_and(|listener| listener.poll_recv(&mut cx).is_ready());
        if !delivered {
            thread::park_timeout(SWEEP);
        }
    }
}

/// Reaps what has exited; `false` (and the thread marked gone, under the
/// same lock a `leave` takes) once nothing is left.
fn sweep() -> bool {
    let mut leftovers = LEFTOVERS.lock().unwrap_or_else(|e| e.into_inner());
    // An error (`ECHILD`: reaped elsewhere) also drops the child: there is
    // nothing left to wait for.
    leftovers
        .children
        .retain_mut(|child| matches!(child.try_wait(), Ok(None)));
    if leftovers.children.is_empty() {
        leftovers.thread = None;
        return false;
    }
    true
}
