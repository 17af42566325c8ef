//! Lanes: which queue a task waits in, and what a worker runs first.
//!
//! - `Latency` tasks wait in one runtime-wide queue that every worker
//!   checks before anything else at every scheduling decision (an
//!   emptiness check: two loads of lines that stay shared in every cache
//!   while the queue is unused). A latency task gives up the locality of
//!   the LIFO slot for that.
//! - `Default` tasks use the LIFO slot, the worker rings and the inject
//!   queue (`scheduler/`).
//! - `Batch` tasks wait in a runtime-wide batch queue, run when a worker
//!   has nothing else, and keep a guaranteed share of every worker's time
//!   (`Builder::batch_share`) however much other work waits: a worker owes
//!   the batch lane `share × its awake time` and pays with batch polls
//!   (`scheduler/worker/lanes.rs`).
//!
//! A `Default` task whose poll runs past the slow-poll threshold is moved
//! to `Batch` for the rest of its life (`Builder::demote_slow_tasks`): it
//! is the kind of task that holds a worker for long, and the lanes keep
//! it from holding up short requests while its share keeps it moving.
//!
//! The lane lives in the task's metadata as one atomic byte: the schedule
//! function reads it at every wake (relaxed: a wake racing with a demotion
//! may still use the old lane once, which only changes the queue it waits
//! in), and only demotion writes it, from inside the task's own poll.

use std::sync::atomic::{AtomicU8, Ordering};

/// The lane a task runs in (see [`Builder::lane`](super::Builder::lane)).
///
/// ```
/// use weft::task::{Builder, Lane};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let reply = Builder::new().lane(Lane::Latency).spawn(async { "fast" }).unwrap();
///     assert_eq!(reply.await.unwrap(), "fast");
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Lane {
    /// Run before anything else: short, latency-sensitive work (a request
    /// handler's hot path, a heartbeat).
    Latency = 0,
    /// Ordinary tasks (`weft::spawn`): LIFO slot, local rings, work
    /// stealing.
    #[default]
    Default = 1,
    /// Long-running or analytic work: runs when nothing else waits, plus a
    /// guaranteed share of worker time.
    Batch = 2,
}

impl Lane {
    /// Every lane, in the order workers prefer them.
    pub const ALL: [Lane; 3] = [Lane::Latency, Lane::Default, Lane::Batch];

    fn from_u8(value: u8) -> Lane {
        match value {
            0 => Lane::Latency,
            2 => Lane::Batch,
            _ => Lane::Default,
        }
    }
}

/// A task's lane, changeable once it runs (demotion).
pub(crate) struct LaneCell(AtomicU8);

impl LaneCell {
    pub(crate) fn new(lane: Lane) -> LaneCell {
        LaneCell(AtomicU8::new(lane as u8))
    }

    #[inline]
    pub(crate) fn get(&self) -> Lane {
        Lane::from_u8(self.0.load(Ordering::Relaxed))
    }

    /// Moves a `Default` task to `Batch`; whether it did.
    pub(crate) fn demote(&self) -> bool {
        self.0
            .compare_exchange(
                Lane::Default as u8,
                Lane::Batch as u8,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}
