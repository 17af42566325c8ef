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
//! [`task::JoinError`], [`task::JoinSet`] (dropping it aborts its tasks),
//! [`task::AbortHandle`], [`runtime::UnhandledPanic`], [`task::yield_now`],
//! [`task::spawn_blocking`],
//! [`time::sleep`], [`time::timeout`], [`time::interval`], [`net::TcpListener`],
//! [`net::TcpStream`], [`net::UdpSocket`], [`task::consume_budget`],
//! [`fs::File`], [`fs::read`], [`fs::write`], [`fs::read_dir`].
//!
//! Layers (each module's doc states its invariants): `task` (the task cell,
//! join handles, the registry of live tasks), `scheduler` (local queues, the
//! inject queue, the sleep/wake protocol, the worker loop), `time` (timer
//! wheels per worker, the time driver, sleeps, timeouts, intervals), `io`
//! (the reactor: one OS poller, a readiness word per source; `AsyncFd`),
//! `net` (TCP, UDP and Unix sockets, their halves),
//! `blocking` (the `spawn_blocking` thread pool), `fs` (files and
//! directories on that pool), `runtime` (builder,
//! context, `block_on`, shutdown), `metrics` (counters).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, missing_docs)]

#[cfg(not(loom))]
pub mod fs;
#[cfg(all(feature = "hyper", not(loom)))]
pub mod hyper;
pub mod io;
pub mod metrics;
#[cfg(not(loom))]
pub mod net;
#[cfg(all(unix, not(loom)))]
pub mod process;
pub mod runtime;
#[cfg(all(unix, not(loom)))]
pub mod signal;
pub mod task;
pub mod time;
pub(crate) mod util;

use std::future::Future;

pub use task::{JoinError, JoinHandle};

/// Runs an `async fn main` on a weft multi-thread runtime.
///
/// The function becomes a plain `fn` that builds a runtime with
/// [`runtime::Builder::new_multi_thread`], blocks on the original body and
/// returns its value; it panics if the runtime cannot be built (a thread
/// cannot be spawned). Arguments: `worker_threads = N` (at least 1; the
/// default is the machine's available parallelism) and `tokio_compat =
/// true` ([`runtime::Builder::tokio_compat`]: a tokio runtime beside weft's
/// for crates written for tokio's reactor and timers; it needs the
/// `tokio-compat` feature, and without it the argument is a compile error
/// saying so). There is no `flavor`: weft has only the multi-thread
/// runtime.
///
/// ```
/// use std::time::Duration;
///
/// #[weft::main]
/// async fn main() {
///     let answer = weft::spawn(async { 42 }).await.unwrap();
///     weft::time::sleep(Duration::from_millis(1)).await;
///     println!("{answer}");
/// }
/// ```
///
/// The return type is kept, so `main` may return a `Result`, and `?`
/// converts into its error type as in a synchronous `main`:
///
/// ```
/// use std::error::Error;
///
/// #[weft::main(worker_threads = 2)]
/// async fn main() -> Result<(), Box<dyn Error>> {
///     let port: u16 = "8080".parse()?;
///     let workers = weft::runtime::Handle::current().metrics().num_workers;
///     assert_eq!(workers, 2);
///     println!("would listen on {port}");
///     Ok(())
/// }
/// ```
///
/// It also goes on other `async fn`s, which may take arguments: each call
/// then blocks on a runtime of its own, so make it from outside any
/// runtime.
///
/// Misuse is a compile error on the token to change, saying what to write:
/// a missing `async`, arguments on `main`, an unknown or repeated argument,
/// `worker_threads = 0` or not an integer literal, `start_paused` (only for
/// tests).
pub use weft_macros::main;

/// Runs an `async fn` test on its own weft multi-thread runtime.
///
/// Like [`main`](macro@main), and adds `#[test]`. The function's other
/// attributes (`#[should_panic]`, `#[ignore]`) and its return type are
/// kept, so a test may return a `Result`. Arguments: `worker_threads = N`
/// (at least 1; the default is the machine's available parallelism),
/// `start_paused = true` and `tokio_compat = true` (as for `main`).
///
/// ```
/// #[weft::test]
/// async fn spawned_tasks_finish() {
///     assert_eq!(weft::spawn(async { 1 + 1 }).await.unwrap(), 2);
/// }
///
/// #[weft::test(worker_threads = 1)]
/// #[should_panic(expected = "boom")]
/// async fn panics_reach_the_test() {
///     panic!("boom");
/// }
/// ```
///
/// `start_paused = true` calls `weft::time::pause()` before the body runs:
/// sleeps then finish as soon as every task is idle, `Instant::now()`
/// jumping to their deadlines. It needs the `test-util`
/// feature, e.g. `weft = { version = "0.1", features = ["test-util"] }` in
/// `[dev-dependencies]`; without it the argument is a compile error saying
/// so.
///
/// ```
/// use std::time::Duration;
/// use weft::time::{Instant, sleep};
///
/// #[weft::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = Instant::now();
///     sleep(Duration::from_secs(3600)).await;
///     assert!(start.elapsed() >= Duration::from_secs(3600));
/// }
/// ```
///
/// Misuse is a compile error on the token to change, as for `main`; also
/// arguments on the test function and a second test attribute.
pub use weft_macros::test;

/// Used by `#[weft::test(start_paused = true)]`: pauses the clock, or,
/// without the `test-util` feature, stops the build with a message saying
/// which feature to turn on. A macro rather than a function so that the
/// error is raised in the user's crate, where the feature is missing, not
/// when weft itself is built.
#[cfg(feature = "test-util")]
#[doc(hidden)]
#[macro_export]
macro_rules! __weft_start_paused {
    () => {
        $crate::time::pause()
    };
}

/// Used by `#[weft::test(start_paused = true)]`: pauses the clock, or,
/// without the `test-util` feature, stops the build with a message saying
/// which feature to turn on.
#[cfg(not(feature = "test-util"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __weft_start_paused {
    () => {
        ::core::compile_error!(
            "`start_paused = true` needs weft's `test-util` feature: \
             add `features = [\"test-util\"]` to the `weft` line in [dev-dependencies]"
        )
    };
}

/// Used by `#[weft::main(tokio_compat = true)]` and `#[weft::test(...)]`:
/// `$builder.tokio_compat()`, or, without the `tokio-compat` feature, a
/// `compile_error!` saying which feature to turn on (raised in the user's
/// crate, as `__weft_start_paused!`).
#[cfg(feature = "tokio-compat")]
#[doc(hidden)]
#[macro_export]
macro_rules! __weft_tokio_compat {
    ($builder:expr) => {
        $builder.tokio_compat()
    };
}

/// Used by `#[weft::main(tokio_compat = true)]` and `#[weft::test(...)]`:
/// without the `tokio-compat` feature, stops the build with a message
/// saying which feature to turn on.
#[cfg(not(feature = "tokio-compat"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __weft_tokio_compat {
    ($builder:expr) => {
        ::core::compile_error!(
            "`tokio_compat = true` needs weft's `tokio-compat` feature: \
             add `features = [\"tokio-compat\"]` to the `weft` line in Cargo.toml"
        )
    };
}

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
    let options = runtime::SpawnOptions::plain(std::panic::Location::caller());
    let spawned = runtime::context::with_current(|shared| {
        shared.map(|shared| runtime::spawn_on(shared, future, options))
    });
    match spawned {
        Some(join) => join,
        None => crate::runtime::context::no_runtime(format_args!(
            "`weft::spawn` called outside of a weft runtime: call it from a task, inside \
             `Runtime::block_on`, or while a `Runtime::enter` guard is alive; or spawn through a \
             `weft::runtime::Handle` from any thread"
        )),
    }
}
