//! The tokio bridge (feature `tokio-compat`, [`Builder::tokio_compat`]): a
//! tokio runtime beside weft's, for crates that call tokio's reactor, its
//! timers or `tokio::spawn` directly (reqwest, tonic, sqlx, redis,
//! tower-http's timeouts).
//!
//! # What it is
//!
//! A runtime built with `tokio_compat()` starts one more thread,
//! `weft-tokio`, which owns a tokio `current_thread` runtime with I/O and
//! time enabled and blocks in its `block_on` until the weft runtime shuts
//! down. Every weft thread that polls futures enters that runtime's
//! `Handle` (`tokio::runtime::Handle::enter`, the guard kept on the
//! thread's stack): the workers and the monitor's threads for their whole
//! life, the blocking pool's threads likewise, a `block_on` caller for the
//! call, a [`Runtime::enter`](crate::runtime::Runtime::enter) guard while it
//! lives. Inside a weft task `tokio::runtime::Handle::current()` then finds
//! it: a tokio socket or timer registers with its drivers, the `weft-tokio`
//! thread turns them and wakes the weft task (a wake from another thread),
//! and `tokio::spawn` runs the task on that thread.
//!
//! The `weft-tokio` thread has the weft runtime as its current context
//! too, so a task started with `tokio::spawn` may call `weft::spawn` and
//! use weft's timers and sockets.
//!
//! Nothing here runs under a weft lock: the thread is started and stopped
//! by `Runtime::start` and `Runtime::shutdown` alone, and entering a handle
//! touches only thread-locals.
//!
//! # Lifetime
//!
//! 1. `Runtime::start` starts the thread before the shared state (which
//!    keeps the tokio `Handle` for the threads to enter) and sends it the
//!    shared state once built; the thread makes it its weft context and
//!    enters `block_on(stop)`.
//! 2. `Runtime::shutdown` stops it last, after the workers, the spare
//!    threads and the blocking pool are gone (or their deadline passed):
//!    no weft task polls a tokio socket or timer whose driver is gone.
//! 3. The stop signal carries how long tokio's own blocking threads (DNS
//!    lookups, `tokio::fs`) may take: what is left of the weft shutdown's
//!    deadline, at most [`BLOCKING_GRACE`]. The thread ends `block_on` and
//!    shuts the tokio runtime down with `shutdown_timeout(grace)`, which
//!    drops every task still on it at once; blocking closures still
//!    running after the grace are left to finish on their own.
//! 4. The weft shutdown waits for the thread within its own deadline (on
//!    drop, without one: the thread's work is bounded by step 3, unless a
//!    tokio task's destructor blocks) and detaches it past the deadline.
//!
//! A `TokioThread` dropped without `stop` drops the stop sender, which the
//! thread takes as a stop with no grace, and is not waited for: a runtime
//! whose start failed, and a shutdown that cannot wait (from inside one of
//! the runtime's own threads).
//!
//! [`Builder::tokio_compat`]: crate::runtime::Builder

#[cfg(all(feature = "tokio-compat", not(loom)))]
mod enabled;
#[cfg(all(feature = "tokio-compat", not(loom)))]
pub(crate) use enabled::{TokioContext, TokioGuard, TokioThread, start};

#[cfg(not(all(feature = "tokio-compat", not(loom))))]
mod disabled;
#[cfg(not(all(feature = "tokio-compat", not(loom))))]
pub(crate) use disabled::{TokioContext, TokioGuard, TokioThread, start};

/// The longest the tokio runtime's shutdown waits for tokio's own blocking
/// threads (step 3 of the lifetime above).
#[cfg_attr(not(all(feature = "tokio-compat", not(loom))), allow(dead_code))]
pub(crate) const BLOCKING_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
