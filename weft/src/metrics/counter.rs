//! `Counter`: an application counter that tasks bump from every worker
//! without contention, and a sampler reads without losing a count.
//!
//! # Design
//!
//! Every weft worker thread holds a process-unique *slot* (`WorkerSlot`,
//! taken when the worker starts, given back when it exits). A counter has
//! one cache line per slot; a worker adds to its own line with a relaxed
//! load and store: one writer per line, no read-modify-write, no line
//! bouncing. Threads without a slot (outside the runtime, or workers past
//! the first [`SLOTS`]) add to a shared fallback line with `fetch_add`.
//!
//! Nothing is ever reset: `take` returns the difference between the current
//! sum and the sum at the previous `take`. Each line only grows and a
//! reader's successive loads of one line never go back in time, so
//! consecutive sums never decrease and the `take`s add up to exactly the
//! `add`s: a sampler can read every millisecond and lose nothing. Rates
//! come from [`Sample`]s, which carry the instant they were read, so a
//! late sampler does not inflate the rate (see the seed measurement in
//! DESIGN.md: dividing by the nominal interval is what mis-counts).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::util::locks::StdMutex as Mutex;

/// Worker threads that get a contention-free line in every [`Counter`].
pub(crate) const SLOTS: usize = 64;

static FREE_SLOTS: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT_SLOT: Mutex<usize> = Mutex::new(0);

thread_local! {
    static SLOT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// A worker thread's slot; given back on drop.
pub(crate) struct WorkerSlot(usize);

impl WorkerSlot {
    /// Takes a free slot for this thread, if any is left.
    pub(crate) fn acquire() -> Option<WorkerSlot> {
        let slot = FREE_SLOTS.lock().unwrap().pop().or_else(|| {
            let mut next = NEXT_SLOT.lock().unwrap();
            (*next < SLOTS).then(|| {
                *next += 1;
                *next - 1
            })
        })?;
        SLOT.with(|cell| cell.set(Some(slot)));
        Some(WorkerSlot(slot))
    }
}

impl Drop for WorkerSlot {
    fn drop(&mut self) {
        let _ = SLOT.try_with(|cell| cell.set(None));
        // The mutex orders this thread's last adds before the next owner's.
        FREE_SLOTS.lock().unwrap().push(self.0);
    }
}

/// A monotonic counter sharded per worker thread (one cache line for each
/// of the first 64 weft worker threads alive at once, and one shared line
/// for every other thread).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weft::metrics::Counter;
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let transactions = Arc::new(Counter::new());
/// let before = transactions.sample();
/// let handles: Vec<_> = (0..100)
///     .map(|_| {
///         let transactions = transactions.clone();
///         rt.spawn(async move { transactions.add(1) })
///     })
///     .collect();
/// for handle in handles {
///     rt.block_on(handle).unwrap();
/// }
/// let after = transactions.sample();
/// assert_eq!(after.count - before.count, 100);
/// assert_eq!(transactions.take(), 100);
/// assert_eq!(transactions.take(), 0);
/// ```
pub struct Counter {
    lines: Box<[CachePadded<AtomicU64>]>,
    fallback: CachePadded<AtomicU64>,
    taken: Mutex<u64>,
}

/// A counter value and the instant it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The counter's total when read.
    pub count: u64,
    /// When it was read.
    pub at: Instant,
}

impl Sample {
    /// Events per second between `earlier` and this sample: Δcount ÷ Δt,
    /// with Δt measured, not assumed. `None` if no time passed. To average
    /// several such rates, weight each by its Δt (or divide the summed
    /// counts by the summed time): a plain mean of ratios over uneven
    /// intervals is biased.
    pub fn rate_since(&self, earlier: &Sample) -> Option<f64> {
        let seconds = self.at.checked_duration_since(earlier.at)?.as_secs_f64();
        (seconds > 0.0).then(|| self.count.wrapping_sub(earlier.count) as f64 / seconds)
    }
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new()
    }
}

impl Counter {
    /// A counter at zero.
    pub fn new() -> Counter {
        Counter {
            lines: (0..SLOTS)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            fallback: CachePadded::new(AtomicU64::new(0)),
            taken: Mutex::new(0),
        }
    }

    /// Adds `n`. Cheap on a weft worker (no atomic read-modify-write);
    /// elsewhere one `fetch_add` on a shared line.
    #[inline]
    pub fn add(&self, n: u64) {
        match SLOT.try_with(Cell::get).ok().flatten() {
            Some(slot) => {
                let line = &self.lines[slot];
                // Single writer: this thread owns `slot` (see module doc).
                line.store(
                    line.load(Ordering::Relaxed).wrapping_add(n),
                    Ordering::Relaxed,
                );
            }
            None => {
                self.fallback.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The total of every `add` so far (those still in flight on other
    /// threads may be missing; none is ever counted twice).
    pub fn sum(&self) -> u64 {
        self.lines
            .iter()
            .chain(std::iter::once(&self.fallback))
            .fold(0u64, |sum, line| {
                sum.wrapping_add(line.load(Ordering::Relaxed))
            })
    }

    /// The total and the instant it was read: take two and call
    /// [`Sample::rate_since`] for a rate.
    pub fn sample(&self) -> Sample {
        let count = self.sum();
        Sample {
            count,
            at: Instant::now(),
        }
    }

    /// The count added since the previous `take` (or since creation).
    /// Successive takes add up to exactly the number of events counted.
    pub fn take(&self) -> u64 {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let total = self.sum();
        let delta = total.wrapping_sub(*taken);
        *taken = total;
        delta
    }
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter").field("sum", &self.sum()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Slots are process-wide: the two tests that take them run one at a
    /// time (other tests' workers may hold a few meanwhile).
    static SLOT_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The point of the design: a worker's adds land on its own line, none
    /// on the shared one.
    #[test]
    fn a_workers_adds_land_on_its_own_line() {
        let _serial = SLOT_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let counter = std::sync::Arc::new(Counter::new());
        let rt = crate::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let on_worker = counter.clone();
        rt.block_on(rt.spawn(async move { on_worker.add(3) }))
            .unwrap();
        assert_eq!(counter.sum(), 3);
        assert_eq!(
            counter.fallback.load(Ordering::Relaxed),
            0,
            "a worker's add went to the shared line"
        );
        assert_eq!(format!("{counter:?}"), "Counter { sum: 3 }");
    }

    /// Every slot handed out is in range and held by one owner; dropping a
    /// slot takes it off the thread.
    #[test]
    fn slots_are_distinct_in_range_and_dropped_off_the_thread() {
        let _serial = SLOT_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::spawn(|| {
            let taken: Vec<WorkerSlot> = std::iter::from_fn(WorkerSlot::acquire).collect();
            let mut indices: Vec<usize> = taken.iter().map(|slot| slot.0).collect();
            indices.sort_unstable();
            indices.dedup();
            assert_eq!(indices.len(), taken.len(), "a slot handed out twice");
            assert!(
                indices.iter().all(|&slot| slot < SLOTS),
                "a slot out of range: {indices:?}"
            );
            assert_eq!(SLOT.with(Cell::get), taken.last().map(|slot| slot.0));
            assert!(!taken.is_empty(), "no slot was free");
            drop(taken);
            // (Whether the freed slots are taken again cannot be asserted
            // here: other tests' workers may take them first.)
            assert_eq!(SLOT.with(Cell::get), None, "a dropped slot still set");
        })
        .join()
        .unwrap();
    }
}
