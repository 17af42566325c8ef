//! Signals: [`ctrl_c`] and, on Unix, [`unix::signal`] (tokio's names), so a
//! server can shut down gracefully.
//!
//! # How a signal reaches a task
//!
//! The first listener of a signal installs a process-wide handler through
//! `signal-hook-registry` (other handlers of the same signal keep working).
//! The handler does only what a signal handler may: it writes the signal's
//! number, one byte, to a pipe that lives as long as the process. One
//! thread, `weft-signal`, started with the first handler, reads that pipe
//! and, per signal, bumps a delivery counter and wakes the tasks waiting
//! for it. A listener remembers the counter value it has seen, so a signal
//! that arrives between two `recv` calls is not lost, and several arriving
//! at once are reported once (as tokio's). The thread and the pipe are
//! shared by every runtime of the process: a signal is a property of the
//! process, not of one runtime, and nothing here depends on a runtime
//! being alive.
//!
//! Once a handler is installed for a signal, the signal's default action
//! (ending the process for `SIGINT` and `SIGTERM`) no longer happens, for
//! the rest of the process, as with tokio.

pub mod unix;

/// Completes at the next Ctrl-C (`SIGINT`) after the call.
///
/// ```no_run
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     weft::signal::ctrl_c().await.unwrap();
///     println!("shutting down");
/// });
/// ```
pub async fn ctrl_c() -> std::io::Result<()> {
    let mut signal = unix::signal(unix::SignalKind::interrupt())?;
    signal.recv().await;
    Ok(())
}
