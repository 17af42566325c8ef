//! The bridge itself: the `weft-tokio` thread and the handle weft's
//! threads enter.

use std::io;
use std::sync::{Arc as StdArc, mpsc};

use crate::util::locks::{StdCondvar as Condvar, StdMutex as Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::BLOCKING_GRACE;
use crate::runtime::scheduler::Shared;
use crate::util::loom::sync::Arc;

/// What weft's threads enter: the tokio runtime's handle, if this runtime
/// has one. Kept in `Shared`.
pub(crate) struct TokioContext {
    handle: Option<tokio::runtime::Handle>,
}

/// The entered handle, until dropped. Not `Send`: it restores this
/// thread's previous tokio context.
pub(crate) struct TokioGuard<'a> {
    _entered: Option<tokio::runtime::EnterGuard<'a>>,
}

impl TokioContext {
    /// No tokio runtime: entering does nothing.
    pub(crate) fn none() -> TokioContext {
        TokioContext { handle: None }
    }

    /// Makes the tokio runtime this thread's tokio context until the guard
    /// drops (tokio's rule: guards drop innermost first).
    pub(crate) fn enter(&self) -> TokioGuard<'_> {
        TokioGuard {
            _entered: self.handle.as_ref().map(tokio::runtime::Handle::enter),
        }
    }
}

/// The `weft-tokio` thread, owned by the `Runtime`.
pub(crate) struct TokioThread {
    /// The weft runtime's shared state, sent once it exists (dropped
    /// unsent if the start fails).
    weft: Option<mpsc::Sender<Arc<Shared>>>,
    /// The stop signal: how long tokio's blocking threads may take.
    stop: Option<oneshot::Sender<Duration>>,
    /// Set when the thread has shut tokio down and is ending.
    ended: StdArc<Ended>,
    thread: Option<thread::JoinHandle<()>>,
}

/// Whether the `weft-tokio` thread has ended its work: a flag and its
/// condvar, so the shutdown can wait with a deadline.
#[derive(Default)]
struct Ended {
    ended: Mutex<bool>,
    changed: Condvar,
}

/// Sets `Ended` when dropped: at the end of the thread, also by a panic.
struct EndGuard(StdArc<Ended>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        *self.0.ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.changed.notify_all();
    }
}

impl Ended {
    /// Waits until the thread ended or `deadline` passes.
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        crate::util::locks::wait_until(&self.changed, ended, deadline, |ended| *ended)
    }
}

/// Starts the `weft-tokio` thread if `enabled`; returns it and the context
/// for `Shared`.
pub(crate) fn start(enabled: bool) -> io::Result<(Option<TokioThread>, TokioContext)> {
    if !enabled {
        return Ok((None, TokioContext::none()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let handle = runtime.handle().clone();
    let (weft_tx, weft_rx) = mpsc::channel::<Arc<Shared>>();
    let (stop_tx, stop_rx) = oneshot::channel::<Duration>();
    let ended = StdArc::new(Ended::default());
    let end = EndGuard(ended.clone());
    let thread = thread::Builder::new()
        .name("weft-tokio".to_owned())
        .spawn(move || {
            let _end = end;
            // Blocks until the runtime is built (or its start failed).
            let weft = weft_rx.recv().ok();
            let _current = weft.map(crate::runtime::context::set_current);
            // A dropped sender (a failed start) is a stop with no grace.
            let grace = runtime.block_on(stop_rx).unwrap_or(Duration::ZERO);
            runtime.shutdown_timeout(grace);
        })?;
    let thread = TokioThread {
        weft: Some(weft_tx),
        stop: Some(stop_tx),
        ended,
        thread: Some(thread),
    };
    Ok((
        Some(thread),
        TokioContext {
            handle: Some(handle),
        },
    ))
}

impl TokioThread {
    /// Gives the thread the weft runtime as its context (step 1).
    pub(crate) fn set_weft(&mut self, shared: Arc<Shared>) {
        if let Some(weft) = self.weft.take() {
            let _ = weft.send(shared);
        }
    }

    /// Stops the tokio runtime and waits for its thread until `deadline`
    /// (`None`: as long as it takes); steps 3 and 4. (Dropped instead, the
    /// thread is stopped with no grace and not waited for.)
    pub(crate) fn stop(mut self, deadline: Option<Instant>) {
        self.weft = None;
        let grace = deadline.map_or(BLOCKING_GRACE, |deadline| {
            deadline
                .saturating_duration_since(Instant::now())
                .min(BLOCKING_GRACE)
        });
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(grace);
        }
        let ended = self.ended.wait(deadline);
        match self.thread.take() {
            Some(thread) if ended => {
                let _ = thread.join();
            }
            // Past the deadline: detached, it ends on its own.
            _ => {}
        }
    }
}
