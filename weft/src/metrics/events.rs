//! The per-worker event counters, their snapshot type, and the striped
//! counters of the remote paths.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use super::histogram::{PollTimeHistogram, PollTimeRecorder};

/// A single-writer event counter.
#[derive(Debug, Default)]
pub(crate) struct EventCounter(AtomicU64);

impl EventCounter {
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
    ($(#[doc = $doc:literal] $name:ident,)*) => {
        /// One worker's counters, on their own cache lines.
        #[derive(Debug, Default)]
        #[repr(align(128))]
        pub(crate) struct WorkerCounters {
            $(pub(crate) $name: EventCounter,)*
            pub(crate) poll_times: PollTimeRecorder,
        }

        /// Counter values of one worker, or their sum over all workers.
        ///
        /// Every field is a count of events since the runtime started;
        /// subtract two snapshots ([`delta`](Self::delta)) to get the events
        /// in between.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[non_exhaustive]
        pub struct WorkerMetrics {
            $(#[doc = $doc] pub $name: u64,)*
            /// Durations of sampled polls (see [`PollTimeHistogram`]).
            pub poll_time_histogram: PollTimeHistogram,
        }

        impl WorkerCounters {
            pub(crate) fn snapshot(&self) -> WorkerMetrics {
                WorkerMetrics {
                    $($name: self.$name.get(),)*
                    poll_time_histogram: self.poll_times.snapshot(),
                }
            }
        }

        impl WorkerMetrics {
            pub(crate) fn accumulate(&mut self, other: &WorkerMetrics) {
                $(self.$name = self.$name.wrapping_add(other.$name);)*
                self.poll_time_histogram.accumulate(&other.poll_time_histogram);
            }

            /// Field-wise `self - earlier` (events between two snapshots).
            pub fn delta(&self, earlier: &WorkerMetrics) -> WorkerMetrics {
                WorkerMetrics {
                    $($name: self.$name.wrapping_sub(earlier.$name),)*
                    poll_time_histogram: self.poll_time_histogram.delta(&earlier.poll_time_histogram),
                }
            }

            /// `(name, value)` for every scalar counter, in declaration order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }

            /// `(name, doc comment)` for every scalar counter.
            pub(crate) fn descriptions() -> &'static [(&'static str, &'static str)] {
                &[$((stringify!($name), $doc),)*]
            }
        }
    };
}

worker_counters! {
    /// Task polls (one `Runnable::run` each).
    polls,
    /// Tasks spawned by tasks running on this worker.
    spawned_local,
    /// Tasks whose future was dropped on this worker (completed or cancelled).
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
    /// Nanoseconds this worker was awake (running tasks or looking for them).
    busy_ns,
    /// Polls of `Latency`-lane tasks (included in `polls`).
    latency_polls,
    /// Polls of `Batch`-lane tasks (included in `polls`).
    batch_polls,
    /// Nanoseconds spent polling `Latency`-lane tasks (every one is timed; part of `busy_ns`).
    latency_busy_ns,
    /// Nanoseconds spent polling `Batch`-lane tasks (every one is timed; part of `busy_ns`).
    batch_busy_ns,
    /// `Default` tasks moved to the `Batch` lane after a slow poll here.
    demotions,
}

impl WorkerMetrics {
    /// Polls of `Default`-lane tasks: `polls` less the other lanes'.
    pub fn default_lane_polls(&self) -> u64 {
        self.polls
            .saturating_sub(self.latency_polls)
            .saturating_sub(self.batch_polls)
    }

    /// Awake time not spent polling `Latency` or `Batch` tasks: the
    /// `Default` lane's polls *and* the scheduler's own work (finding
    /// tasks, firing timers), which weft does not time poll by poll (two
    /// clock reads per poll; `Default` polls are sampled for the poll-time
    /// histogram instead).
    pub fn default_lane_busy_ns(&self) -> u64 {
        self.busy_ns
            .saturating_sub(self.latency_busy_ns)
            .saturating_sub(self.batch_busy_ns)
    }
}
