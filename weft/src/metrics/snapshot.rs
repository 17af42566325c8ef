//! `RuntimeMetrics`: what `Handle::metrics()` returns.

use super::events::WorkerMetrics;
use super::threads::ThreadCounts;

/// A snapshot of a runtime's counters. See [`Handle::metrics`](crate::runtime::Handle::metrics).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// Number of worker threads.
    pub num_workers: usize,
    /// Per-worker counters, indexed by worker.
    pub workers: Vec<WorkerMetrics>,
    /// The sum of `workers` and `spare_slots`.
    pub total: WorkerMetrics,
    /// The counters of the worker slots lent to the stall monitor's spare
    /// threads, summed (tasks a spare thread ran while workers were stuck).
    pub spare_slots: WorkerMetrics,
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
    /// `Latency`-lane tasks waiting when the snapshot was taken.
    pub latency_queue_depth: usize,
    /// `Batch`-lane tasks waiting when the snapshot was taken.
    pub batch_queue_depth: usize,
    /// Polls the stall monitor found running longer than the stall
    /// threshold (each counted once).
    pub stalls: u64,
    /// Times the monitor lent a stuck worker's waiting work to a spare
    /// thread.
    pub handoffs: u64,
    /// Spare threads started (a handoff found no idle spare).
    pub spares_started: u64,
    /// Handoffs given to an idle (warm) spare thread.
    pub spares_woken: u64,
    /// Spare threads that exited after `spare_idle_timeout` unused.
    pub spares_retired: u64,
    /// Spare threads alive when the snapshot was taken.
    pub spare_threads: usize,
    /// Threads whose priority the monitor lowered during a slow poll (each
    /// then gave its worker slot to a thread of normal priority).
    pub threads_demoted: u64,
    /// Times a demoted thread inside a stalled poll was asked to step aside
    /// for 30 µs (a signal), because the work it held up had waited two
    /// samples with no thread running it.
    pub step_asides: u64,
    /// Tasks the monitor woke with readiness it took from the reactor
    /// itself, because every awake thread was inside a stalled poll and
    /// none would look there soon.
    pub monitor_io_wakes: u64,
    /// Tasks the monitor woke by firing due timers itself, because every
    /// awake thread was inside a stalled poll, so no worker reached a
    /// periodic check or slept as the timekeeper.
    pub monitor_timer_wakes: u64,
    /// Demoted threads given their normal priority back after their poll
    /// (the process may raise priorities: `CAP_SYS_NICE`), which then went
    /// on running their worker instead of handing it to another thread.
    pub threads_restored: u64,
    /// Tasks waiting in each worker's local queue when the snapshot was taken.
    pub local_queue_depths: Vec<usize>,
    /// Threads of the blocking pool alive (running a `spawn_blocking`
    /// closure or waiting for one).
    pub blocking_threads: usize,
    /// Blocking-pool threads waiting for work.
    pub blocking_idle_threads: usize,
    /// `spawn_blocking` closures waiting for a thread.
    pub blocking_queue_depth: usize,
    /// `spawn_blocking` calls accepted since the runtime started.
    pub blocking_tasks_spawned: u64,
    /// Timers armed and not yet fired or cancelled (`weft::time`), over
    /// every worker's wheel and the outside one.
    pub timers_pending: usize,
    /// Threads this runtime started since it was built, by kind (a thread
    /// counts when its body begins). See [`threads_started`](Self::threads_started).
    pub threads_started_by_kind: ThreadCounts,
    /// Threads of this runtime that ended since it was built, by the kind
    /// they were started as (a thread counts when its body returns).
    pub threads_ended_by_kind: ThreadCounts,
}

/// tokio's `RuntimeMetrics` methods, for code written against tokio's
/// stable metrics: each reads this snapshot (a tokio handle reads live
/// counters; here they are as of [`Handle::metrics`](crate::runtime::Handle::metrics)).
impl RuntimeMetrics {
    /// Worker threads (tokio's `num_workers`).
    pub fn num_workers(&self) -> usize {
        self.num_workers
    }

    /// Tasks spawned and not yet finished (tokio's `num_alive_tasks`).
    pub fn num_alive_tasks(&self) -> usize {
        usize::try_from(self.live_tasks).unwrap_or(usize::MAX)
    }

    /// Tasks waiting in the runtime-wide queues: the inject queue and the
    /// lanes' (tokio's `global_queue_depth`).
    pub fn global_queue_depth(&self) -> usize {
        self.inject_queue_depth + self.latency_queue_depth + self.batch_queue_depth
    }

    /// Time worker `worker` spent running tasks (tokio's
    /// `worker_total_busy_duration`).
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    #[track_caller]
    pub fn worker_total_busy_duration(&self, worker: usize) -> std::time::Duration {
        std::time::Duration::from_nanos(self.worker(worker).busy_ns)
    }

    /// Times worker `worker` went to sleep (tokio's `worker_park_count`).
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    #[track_caller]
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        self.worker(worker).parks
    }

    /// Times worker `worker` went to sleep or woke (tokio's
    /// `worker_park_unpark_count`: odd while it sleeps).
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    #[track_caller]
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        let counts = self.worker(worker);
        counts.parks + counts.unparks
    }

    #[track_caller]
    fn worker(&self, worker: usize) -> &WorkerMetrics {
        self.workers.get(worker).unwrap_or_else(|| {
            panic!(
                "worker index {worker} out of range: the runtime has {} workers",
                self.num_workers
            )
        })
    }
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

    /// Every thread the runtime started since it was built: its workers,
    /// the stall monitor, the monitor's spare threads (including those
    /// that take over a demoted thread's worker slot) and the blocking
    /// pool's threads ([`threads_started_by_kind`](Self::threads_started_by_kind)
    /// splits them). Its rate in steady state is the runtime's thread
    /// churn: each new thread runs `on_thread_start` and builds its
    /// thread-local state (allocator caches included) again.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .build()
    ///     .unwrap();
    /// rt.block_on(rt.handle().spawn_blocking(|| ())).unwrap();
    /// let metrics = rt.handle().metrics();
    /// assert_eq!(metrics.threads_started_by_kind.worker, 2);
    /// assert!(metrics.threads_started_by_kind.blocking >= 1);
    /// // Alive now: at most those started less those ended.
    /// assert!(metrics.threads_started() >= metrics.threads_ended() + 2);
    /// ```
    pub fn threads_started(&self) -> u64 {
        self.threads_started_by_kind.total()
    }

    /// Every thread of the runtime that ended since it was built (a spare
    /// or blocking-pool thread retired after its idle timeout, a demoted
    /// thread back from its slow poll, a thread whose body unwound).
    /// [`threads_ended_by_kind`](Self::threads_ended_by_kind) splits them
    /// by the kind each was started as.
    pub fn threads_ended(&self) -> u64 {
        self.threads_ended_by_kind.total()
    }
}
