//! weft: a multi-thread async runtime whose scheduler drains outside work as
//! fast as smol's and keeps tokio's locality for tasks that wake each other.
//!
//! ```
//! use weft::runtime::Runtime;
//!
//! let rt = Runtime::new()?;
//! // From outside the runtime:
//! let outside = rt.spawn(async { 40 });
//! let total = rt.block_on(async move {
//!     // From inside:
//!     let inside = weft::spawn(async { 2 });
//!     outside.await.unwrap() + inside.await.unwrap()
//! });
//! assert_eq!(total, 42);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The crate follows tokio's names where the concept is the same:
//! [`runtime::Builder`], [`runtime::Runtime`], [`runtime::Handle`],
//! [`spawn`], [`task::JoinHandle`] (dropping it detaches the task),
//! [`task::JoinError`], [`task::yield_now`], [`task::spawn_blocking`],
//! [`time::sleep`], [`time::timeout`], [`time::interval`], [`net::TcpListener`],
//! [`net::TcpStream`], [`net::UdpSocket`], [`task::consume_budget`].
//!
//! Layers (each module's doc states its invariants): `task` (the task cell,
//! join handles, the registry of live tasks), `scheduler` (local queues, the
//! inject queue, the sleep/wake protocol, the worker loop), `time` (timer
//! wheels per worker, the time driver, sleeps, timeouts, intervals), `io`
//! (the reactor: one OS poller, a readiness word per source; `AsyncFd`),
//! `net` (TCP, UDP and Unix sockets),
//! `blocking` (the `spawn_blocking` thread pool), `runtime` (builder,
//! context, `block_on`, shutdown), `metrics` (counters).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, missing_docs)]

pub(crate) mod blocking;
#[cfg(all(feature = "hyper", not(loom)))]
pub mod hyper;
pub mod io;
pub(crate) mod loom;

pub mod metrics;
#[cfg(not(loom))]
pub mod net;
pub mod runtime;
pub(crate) mod scheduler;
#[cfg(all(unix, not(loom)))]
pub mod signal;
pub(crate) mod sys;
pub mod task;
pub mod time;

use std::future::Future;

pub use task::{JoinError, JoinHandle};

/// Spawns a task on the current runtime.
///
/// The task starts running on a worker right away; the returned
/// [`JoinHandle`] gives its output. Dropping the handle detaches the task.
///
/// # Panics
///
/// Outside a runtime context: call it from a task, inside
/// `Runtime::block_on`, or under a `Runtime::enter` guard. To spawn from any
/// thread, use [`runtime::Handle::spawn`].
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let value = rt.block_on(async {
///     weft::spawn(async { "hello" }).await.unwrap()
/// });
/// assert_eq!(value, "hello");
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let options = task::SpawnOptions::plain(std::panic::Location::caller());
    let spawned = runtime::context::with_handle(|handle| {
        handle.map(|handle| task::spawn_on(&handle.shared, future, options))
    });
    match spawned {
        Some(join) => join,
        None => panic!(
            "`weft::spawn` called outside of a weft runtime: call it from a task, inside \
             `Runtime::block_on`, or while a `Runtime::enter` guard is alive; or spawn through a \
             `weft::runtime::Handle` from any thread"
        ),
    }
}

#[cfg(all(test, loom))]
mod loom_support;
