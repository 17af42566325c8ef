//! Work on a thread of its own that may hang: every suite runs a runtime
//! this way, so that a runtime that never answers is abandoned, with a
//! warning, instead of hanging the run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Runs `work` on a thread of its own called `name` and waits at most
/// `timeout` for its result (a panic is an error). A thread that does not
/// answer in time is abandoned, never joined, so that a hang cannot hang
/// the run: `abandoned` is called to warn that it may still be running.
pub fn on_thread<T: Send + 'static>(
    name: String,
    timeout: Duration,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
    abandoned: impl FnOnce(),
) -> Result<T, String> {
    let (sender, receiver) = mpsc::channel();
    let thread = thread::Builder::new()
        .name(name)
        .spawn(move || {
            let _ = sender.send(catch_panic(work).and_then(|result| result));
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    match receiver.recv_timeout(timeout) {
        Ok(result) => {
            let _ = thread.join();
            result
        }
        Err(RecvTimeoutError::Timeout) => {
            abandoned();
            Err(format!("no result within {} s", timeout.as_secs()))
        }
        Err(RecvTimeoutError::Disconnected) => Err("its thread died".to_owned()),
    }
}

/// Runs `f`, turning a panic into its message.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a non-string panic");
        format!("panicked: {message}")
    })
}
