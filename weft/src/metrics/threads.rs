//! Threads the runtime started and ended, by kind.
//!
//! Every thread weft starts counts itself in when its body begins and out
//! when its body returns (or unwinds), with a [`CountedThread`] guard: a
//! `fetch_add` on a counter of the runtime's, twice in a thread's life, so
//! the cost is nothing beside the thread's own start.

use std::sync::atomic::{AtomicU64, Ordering};

/// What a thread was started as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThreadKind {
    /// A worker, started with the runtime.
    Worker,
    /// The stall monitor's own threads: the monitor, and the spawner
    /// that starts spare threads for it.
    Monitor,
    /// A spare thread the monitor started (to take a stuck worker's
    /// waiting work, or a demoted thread's worker slot).
    Spare,
    /// A thread of the blocking pool.
    Blocking,
}

/// Threads counted by what they were started as. In
/// [`RuntimeMetrics::threads_started_by_kind`](crate::metrics::RuntimeMetrics::threads_started_by_kind)
/// and `threads_ended_by_kind`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ThreadCounts {
    /// Worker threads (started with the runtime).
    pub worker: u64,
    /// The stall monitor's own threads: the monitor, and the spawner that
    /// starts spare threads for it (once, at the first spare).
    pub monitor: u64,
    /// Spare threads the stall monitor started: to run a stuck worker's
    /// waiting work, or to carry on as a worker whose thread was demoted
    /// during a slow poll. A spare keeps its kind whatever it goes on to
    /// do.
    pub spare: u64,
    /// Blocking-pool threads (`spawn_blocking`, `weft::fs`).
    pub blocking: u64,
}

impl ThreadCounts {
    /// Every kind together.
    pub fn total(&self) -> u64 {
        self.worker + self.monitor + self.spare + self.blocking
    }

    /// The kinds with their names, in a fixed order (the Prometheus
    /// `kind` label's values).
    pub fn by_kind(&self) -> [(&'static str, u64); 4] {
        [
            ("worker", self.worker),
            ("monitor", self.monitor),
            ("spare", self.spare),
            ("blocking", self.blocking),
        ]
    }
}

/// A runtime's thread counters (in its shared state).
#[derive(Debug, Default)]
pub(crate) struct ThreadCounters {
    started: [AtomicU64; 4],
    ended: [AtomicU64; 4],
}

impl ThreadCounters {
    /// Counts the calling thread in as `kind`, and out when the guard
    /// drops: the first line of a thread's body.
    pub(crate) fn count(&self, kind: ThreadKind) -> CountedThread<'_> {
        self.started[kind as usize].fetch_add(1, Ordering::Relaxed);
        CountedThread {
            counters: self,
            kind,
        }
    }

    /// (started, ended) so far.
    pub(crate) fn snapshot(&self) -> (ThreadCounts, ThreadCounts) {
        let read = |counters: &[AtomicU64; 4]| {
            let [worker, monitor, spare, blocking] =
                std::array::from_fn(|i| counters[i].load(Ordering::Relaxed));
            ThreadCounts {
                worker,
                monitor,
                spare,
                blocking,
            }
        };
        (read(&self.started), read(&self.ended))
    }
}

/// A thread counted in; counted out on drop.
pub(crate) struct CountedThread<'a> {
    counters: &'a ThreadCounters,
    kind: ThreadKind,
}

impl Drop for CountedThread<'_> {
    fn drop(&mut self) {
        self.counters.ended[self.kind as usize].fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_counts_its_kind_in_and_out() {
        let counters = ThreadCounters::default();
        let spare = counters.count(ThreadKind::Spare);
        {
            let _blocking = counters.count(ThreadKind::Blocking);
            let (started, ended) = counters.snapshot();
            assert_eq!(
                (started.spare, started.blocking, started.total()),
                (1, 1, 2)
            );
            assert_eq!(ended.total(), 0);
        }
        let (_, ended) = counters.snapshot();
        assert_eq!((ended.blocking, ended.spare), (1, 0));
        drop(spare);
        let (started, ended) = counters.snapshot();
        assert_eq!(started, ended);
        assert_eq!(started.by_kind()[2], ("spare", 1));
    }
}
