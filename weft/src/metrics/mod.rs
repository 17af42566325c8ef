//! Scheduler counters and the snapshot `Handle::metrics()` returns.
//!
//! # Invariants
//!
//! Each worker's counters have exactly one writer, the worker itself, which
//! updates them with a relaxed load and a relaxed store: no read-modify-write
//! on the hot path and no cache line shared with another worker (the block is
//! padded to 128 bytes). A reader sums them with relaxed loads. A snapshot can
//! therefore lag a worker by the increments still in its store buffer, but
//! every value it reads is one the counter really held, so totals are never
//! wrong, only slightly stale, and once the runtime is idle (or after a
//! join) they are exact.
//!
//! Counts that outside threads produce (remote spawns, wake requests made
//! from outside the runtime, futures dropped off the workers) cannot have a
//! single writer; they live in striped atomics updated with `fetch_add`, on
//! the remote paths only.
//!
//! The counters are plain `std` atomics even under loom: they are not part
//! of any protocol, and modelling them would only grow the state space.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

/// A single-writer event counter.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`. Only the owning worker may call this.
    #[inline(always)]
    pub(crate) fn add(&self, n: u64) {
        let value = self.0.load(Ordering::Relaxed);
        self.0.store(value.wrapping_add(n), Ordering::Relaxed);
    }

    #[inline(always)]
    pub(crate) fn incr(&self) {
        self.add(1);
    }

    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A counter any thread may add to (remote paths only), striped over
/// cache lines so that outside threads spawning at once do not all bounce
/// one line: each thread adds to the stripe it was assigned on first use.
#[derive(Debug, Default)]
pub(crate) struct SharedCounter {
    stripes: [CachePadded<AtomicU64>; STRIPES],
}

const STRIPES: usize = 8;

thread_local! {
    static STRIPE: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES
    };
}

impl SharedCounter {
    #[inline]
    pub(crate) fn incr(&self) {
        let stripe = STRIPE.try_with(|s| *s).unwrap_or(0);
        self.stripes[stripe].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

macro_rules! worker_counters {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// One worker's counters, on their own cache lines.
        #[derive(Debug, Default)]
        #[repr(align(128))]
        pub(crate) struct WorkerCounters {
            $(pub(crate) $name: Counter,)*
        }

        /// Counter values of one worker, or their sum over all workers.
        ///
        /// Every field is a count of events since the runtime started;
        /// subtract two snapshots to get the events in between.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct WorkerMetrics {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl WorkerCounters {
            pub(crate) fn snapshot(&self) -> WorkerMetrics {
                WorkerMetrics { $($name: self.$name.get(),)* }
            }
        }

        impl WorkerMetrics {
            fn accumulate(&mut self, other: &WorkerMetrics) {
                $(self.$name = self.$name.wrapping_add(other.$name);)*
            }

            /// Field-wise `self - earlier` (events between two snapshots).
            pub fn delta(&self, earlier: &WorkerMetrics) -> WorkerMetrics {
                WorkerMetrics { $($name: self.$name.wrapping_sub(earlier.$name),)* }
            }

            /// `(name, value)` for every counter, in declaration order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

worker_counters! {
    /// Task polls (one `Runnable::run` each).
    polls,
    /// Tasks spawned by tasks running on this worker.
    spawned_local,
    /// Tasks whose future was dropped on this worker (completed or
    /// cancelled).
    tasks_finished,
    /// Batches taken from the inject queue.
    inject_batches,
    /// Tasks taken from the inject queue, over all batches.
    inject_tasks,
    /// Successful steals from another worker's queue or LIFO slot.
    steals,
    /// Tasks moved by those steals.
    stolen_tasks,
    /// Tasks run from this worker's LIFO slot.
    lifo_hits,
    /// Times a full local queue moved half of itself to the inject queue.
    overflows,
    /// Wake-ups this worker requested for a sleeping worker.
    wake_requests,
    /// Times this worker went to sleep.
    parks,
    /// Times this worker came back from sleep because it was woken.
    unparks,
}

/// A snapshot of a runtime's counters. See [`Handle::metrics`](crate::runtime::Handle::metrics).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// Number of worker threads.
    pub num_workers: usize,
    /// Per-worker counters, indexed by worker.
    pub workers: Vec<WorkerMetrics>,
    /// The sum of `workers`.
    pub total: WorkerMetrics,
    /// Tasks spawned from threads that are not workers of this runtime.
    pub spawned_remote: u64,
    /// Wake-ups of sleeping workers requested from outside the workers.
    pub remote_wake_requests: u64,
    /// Futures dropped off the workers (shutdown, or cancellation from
    /// outside).
    pub finished_remote: u64,
    /// Tasks spawned and not yet finished (completed or cancelled).
    pub live_tasks: u64,
    /// Tasks waiting in the inject queue when the snapshot was taken.
    pub inject_queue_depth: usize,
    /// Tasks waiting in each worker's local queue when the snapshot was taken.
    pub local_queue_depths: Vec<usize>,
}

impl RuntimeMetrics {
    pub(crate) fn from_workers(workers: Vec<WorkerMetrics>) -> RuntimeMetrics {
        let mut total = WorkerMetrics::default();
        workers.iter().for_each(|w| total.accumulate(w));
        RuntimeMetrics {
            num_workers: workers.len(),
            workers,
            total,
            ..RuntimeMetrics::default()
        }
    }

    /// Every task spawned, from inside and outside.
    pub fn spawned(&self) -> u64 {
        self.total.spawned_local + self.spawned_remote
    }

    /// All wake requests, from workers and from outside.
    pub fn wake_requests(&self) -> u64 {
        self.total.wake_requests + self.remote_wake_requests
    }
}
