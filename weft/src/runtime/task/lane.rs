//! Lanes: which queue a task waits in, and what a worker runs first.
//!
//! - `Latency` tasks wait in one runtime-wide queue that every worker
//!   checks before anything else at every scheduling decision (an
//!   emptiness check: two loads of lines that stay shared in every cache
//!   while the queue is unused). A latency task gives up the locality of
//!   the LIFO slot for that.
//! - `Default` tasks use the LIFO slot, the worker rings and the inject
//!   queue (`runtime/scheduler/`).
//! - `Batch` tasks wait in a runtime-wide batch queue, run when a worker
//!   has nothing else, and keep a guaranteed share of every worker's time
//!   (`Builder::batch_share`) however much other work waits: a worker owes
//!   the batch lane `share × its awake time` and pays with batch polls
//!   (`runtime/scheduler/worker/lanes.rs`).
//!
//! A `Default` task whose poll runs past the slow-poll threshold is moved
//! to `Batch` for the rest of its life (`Builder::demote_slow_tasks`): it
//! is the kind of task that holds a worker for long, and the lanes keep
//! it from holding up short requests while its share keeps it moving.
//!
//! The lane lives in the task's metadata, in the word of its label: the
//! schedule function reads it at every wake (relaxed: a wake racing with a demotion
//! may still use the old lane once, which only changes the queue it waits
//! in), and only demotion writes it, from inside the task's own poll.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::label::Label;

/// The lane a task runs in (see [`Builder::lane`](crate::task::Builder::lane)).
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

/// The lane in a word from [`LaneAndLabel::bits`].
pub(crate) fn lane_of(bits: usize) -> Lane {
    Lane::from_u8(((bits & LANE_MASK) >> LANE_SHIFT) as u8)
}

/// A task's lane and its label in one word (the task header stays small:
/// `label.rs` says why): the label's bits, the lane in bits 1-2.
pub(crate) struct LaneAndLabel(AtomicUsize);

const LANE_SHIFT: u32 = 1;
const LANE_MASK: usize = 0b11 << LANE_SHIFT;

impl LaneAndLabel {
    pub(crate) fn new(lane: Lane, label: Label) -> LaneAndLabel {
        LaneAndLabel(AtomicUsize::new(
            label.bits() | ((lane as usize) << LANE_SHIFT),
        ))
    }

    #[inline]
    pub(crate) fn lane(&self) -> Lane {
        let bits = self.0.load(Ordering::Relaxed);
        Lane::from_u8(((bits & LANE_MASK) >> LANE_SHIFT) as u8)
    }

    /// The whole word (label bits and lane), for readers on other threads
    /// (the poll watch, dumps): [`Label::from_bits`] and [`lane_of`] decode
    /// it.
    #[inline]
    pub(crate) fn bits(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    #[cfg(all(test, not(loom)))]
    fn label(&self) -> Label {
        Label::from_bits(self.0.load(Ordering::Relaxed)).expect("a task always has a label")
    }

    /// Moves a `Default` task to `Batch`; whether it did.
    pub(crate) fn demote(&self) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                let lane = Lane::from_u8(((bits & LANE_MASK) >> LANE_SHIFT) as u8);
                // The lane bits were cleared: `|` equals `^` (equivalent).
                (lane == Lane::Default)
                    .then_some((bits & !LANE_MASK) | ((Lane::Batch as usize) << LANE_SHIFT))
            })
            .is_ok()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::panic::Location;

    use super::{Lane, LaneAndLabel};
    use crate::runtime::task::label::Label;

    /// Only a `Default` task moves to `Batch`, once; the label is kept.
    #[test]
    fn only_a_default_task_is_demoted() {
        let here = Location::caller();
        for label in [Label::unnamed(here), Label::named("a handler", here)] {
            for lane in [Lane::Latency, Lane::Default, Lane::Batch] {
                let word = LaneAndLabel::new(lane, label);
                assert_eq!(word.lane(), lane);
                assert_eq!(word.demote(), lane == Lane::Default, "{lane:?}");
                let after = if lane == Lane::Default {
                    Lane::Batch
                } else {
                    lane
                };
                assert_eq!(word.lane(), after, "{lane:?}");
                assert!(!word.demote(), "{lane:?} demoted twice");
                assert!(word.label() == label, "the label changed");
            }
        }
    }
}
