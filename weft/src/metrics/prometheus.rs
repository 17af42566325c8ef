//! Prometheus text exposition of a [`RuntimeMetrics`] snapshot.
//!
//! The library serves nothing; an application puts this text behind its own
//! `/metrics` endpoint. Format: Prometheus text format 0.0.4, one `# HELP`
//! and `# TYPE` per family, worker series labelled `worker="<index>"`,
//! thread counts labelled `kind="worker|monitor|spare|blocking"`.

use std::fmt::Write;

use super::events::WorkerMetrics;
use super::histogram::{POLL_TIME_BUCKETS, PollTimeHistogram};
use super::snapshot::RuntimeMetrics;

impl RuntimeMetrics {
    /// The snapshot in Prometheus' text format, every metric prefixed
    /// `weft_`.
    ///
    /// ```
    /// let rt = weft::runtime::Runtime::new().unwrap();
    /// rt.block_on(async {});
    /// let text = rt.handle().metrics().to_prometheus();
    /// assert!(text.contains("# TYPE weft_polls_total counter"));
    /// assert!(text.contains("weft_polls_total{worker=\"0\"}"));
    /// ```
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        for (index, (name, help)) in WorkerMetrics::descriptions().iter().enumerate() {
            let values = self.workers.iter().map(|w| w.fields()[index].1);
            worker_family(&mut out, name, help, values);
        }
        poll_time_family(&mut out, &self.workers);
        let runtime_wide: [(&str, &str, &str, u64); 24] = [
            (
                "workers",
                "gauge",
                "Worker threads.",
                self.num_workers as u64,
            ),
            (
                "spawned_remote_total",
                "counter",
                "Tasks spawned from outside the workers.",
                self.spawned_remote,
            ),
            (
                "finished_remote_total",
                "counter",
                "Task futures dropped off the workers.",
                self.finished_remote,
            ),
            (
                "remote_wake_requests_total",
                "counter",
                "Worker wake-ups requested from outside the workers.",
                self.remote_wake_requests,
            ),
            (
                "live_tasks",
                "gauge",
                "Tasks spawned and not yet finished.",
                self.live_tasks,
            ),
            (
                "inject_queue_depth",
                "gauge",
                "Tasks waiting in the inject queue.",
                self.inject_queue_depth as u64,
            ),
            (
                "blocking_threads",
                "gauge",
                "Threads of the blocking pool.",
                self.blocking_threads as u64,
            ),
            (
                "blocking_idle_threads",
                "gauge",
                "Blocking-pool threads waiting for work.",
                self.blocking_idle_threads as u64,
            ),
            (
                "blocking_queue_depth",
                "gauge",
                "spawn_blocking closures waiting for a thread.",
                self.blocking_queue_depth as u64,
            ),
            (
                "blocking_tasks_spawned_total",
                "counter",
                "spawn_blocking calls accepted.",
                self.blocking_tasks_spawned,
            ),
            (
                "timers_pending",
                "gauge",
                "Timers armed and not yet fired or cancelled.",
                self.timers_pending as u64,
            ),
            (
                "latency_queue_depth",
                "gauge",
                "Latency-lane tasks waiting.",
                self.latency_queue_depth as u64,
            ),
            (
                "batch_queue_depth",
                "gauge",
                "Batch-lane tasks waiting.",
                self.batch_queue_depth as u64,
            ),
            (
                "stalls_total",
                "counter",
                "Polls found running longer than the stall threshold.",
                self.stalls,
            ),
            (
                "handoffs_total",
                "counter",
                "Stuck workers' waiting work lent to a spare thread.",
                self.handoffs,
            ),
            (
                "spares_started_total",
                "counter",
                "Spare threads started.",
                self.spares_started,
            ),
            (
                "spares_woken_total",
                "counter",
                "Handoffs given to an idle spare thread.",
                self.spares_woken,
            ),
            (
                "spares_retired_total",
                "counter",
                "Spare threads that exited unused.",
                self.spares_retired,
            ),
            (
                "spare_threads",
                "gauge",
                "Spare threads alive.",
                self.spare_threads as u64,
            ),
            (
                "threads_demoted_total",
                "counter",
                "Threads lowered in priority during a slow poll.",
                self.threads_demoted,
            ),
            (
                "step_asides_total",
                "counter",
                "Times a demoted thread in a stalled poll was asked to step aside briefly.",
                self.step_asides,
            ),
            (
                "monitor_io_wakes_total",
                "counter",
                "Tasks woken by readiness the monitor took while every thread was in a stalled poll.",
                self.monitor_io_wakes,
            ),
            (
                "monitor_timer_wakes_total",
                "counter",
                "Tasks woken by timers the monitor fired while every thread was in a stalled poll.",
                self.monitor_timer_wakes,
            ),
            (
                "threads_restored_total",
                "counter",
                "Demoted threads given their priority back after their poll.",
                self.threads_restored,
            ),
        ];
        for (name, kind, help, value) in runtime_wide {
            header(&mut out, name, kind, help);
            let _ = writeln!(out, "weft_{name} {value}");
        }
        let threads = [
            (
                "threads_started_total",
                "Threads the runtime started, by the kind each was started as.",
                &self.threads_started_by_kind,
            ),
            (
                "threads_ended_total",
                "Threads of the runtime that ended, by the kind each was started as.",
                &self.threads_ended_by_kind,
            ),
        ];
        for (name, help, counts) in threads {
            header(&mut out, name, "counter", help);
            for (kind, value) in counts.by_kind() {
                let _ = writeln!(out, "weft_{name}{{kind=\"{kind}\"}} {value}");
            }
        }
        header(
            &mut out,
            "local_queue_depth",
            "gauge",
            "Tasks waiting in a worker's local queue and LIFO slot.",
        );
        for (worker, depth) in self.local_queue_depths.iter().enumerate() {
            let _ = writeln!(out, "weft_local_queue_depth{{worker=\"{worker}\"}} {depth}");
        }
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP weft_{name} {help}");
    let _ = writeln!(out, "# TYPE weft_{name} {kind}");
}

/// A per-worker counter family. `busy_ns` is exposed in seconds, as
/// Prometheus' conventions ask.
fn worker_family(out: &mut String, name: &str, help: &str, values: impl Iterator<Item = u64>) {
    let (family, scale, help) = match name {
        "busy_ns" => (
            "busy_seconds_total".to_owned(),
            1e-9,
            "Seconds this worker was awake (running tasks or looking for them).",
        ),
        _ => (format!("{name}_total"), 1.0, help.trim()),
    };
    header(out, &family, "counter", help);
    for (worker, value) in values.enumerate() {
        if scale == 1.0 {
            let _ = writeln!(out, "weft_{family}{{worker=\"{worker}\"}} {value}");
        } else {
            let _ = writeln!(
                out,
                "weft_{family}{{worker=\"{worker}\"}} {}",
                value as f64 * scale
            );
        }
    }
}

fn poll_time_family(out: &mut String, workers: &[WorkerMetrics]) {
    header(
        out,
        "poll_time_seconds",
        "histogram",
        "Durations of sampled task polls (one poll in poll_time_sample_every is timed).",
    );
    for (worker, metrics) in workers.iter().enumerate() {
        let histogram = &metrics.poll_time_histogram;
        let mut cumulative = 0u64;
        for bucket in 0..POLL_TIME_BUCKETS {
            cumulative += histogram.buckets[bucket];
            let le = PollTimeHistogram::bucket_upper_bound(bucket).map_or_else(
                || "+Inf".to_owned(),
                |bound| format!("{}", bound.as_secs_f64()),
            );
            let _ = writeln!(
                out,
                "weft_poll_time_seconds_bucket{{worker=\"{worker}\",le=\"{le}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "weft_poll_time_seconds_sum{{worker=\"{worker}\"}} {}",
            histogram.sum_ns as f64 * 1e-9
        );
        let _ = writeln!(
            out,
            "weft_poll_time_seconds_count{{worker=\"{worker}\"}} {cumulative}"
        );
    }
}
