//! `tokio::task` on weft: spawning, joining, aborting, yielding, blocking
//! sections and task-locals are weft's own.

pub use weft::task::{
    block_in_place, consume_budget, id, spawn_blocking, spawn_local, try_id, unconstrained,
    yield_now, AbortHandle, AccessError, Id, JoinError, JoinHandle, JoinSet, LocalEnterGuard,
    LocalKey, LocalSet,
};

/// tokio's task builder (`tokio_unstable` there): a named spawn.
pub use weft::task::Builder;

/// The futures behind tokio's task helpers.
pub mod futures {
    pub use weft::task::futures::TaskLocalFuture;
}

/// Cooperative scheduling: weft's per-poll budget. It counts weft's own
/// resources (sockets, timers, join handles); tokio's [`crate::sync`]
/// primitives, compiled from tokio's release without its runtime, do not
/// consume it (docs/guide.md, "Differences from tokio").
pub mod coop {
    pub use weft::task::coop::*;
}

/// Spawns `future` on the current runtime, as `tokio::spawn`.
///
/// # Panics
///
/// Outside a runtime.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    weft::spawn(future)
}
