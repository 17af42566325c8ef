//! `weft-bench metrics-dump`: runs a small workload on a weft runtime and
//! prints `Handle::metrics()` as JSON (the `serde` feature) or as
//! Prometheus text (`RuntimeMetrics::to_prometheus`), for
//! `scripts/check_metrics_formats.sh` to parse with standard tools.

use std::io;

use clap::ValueEnum;

use crate::common::runtimes::{BenchRuntime, Tuning, Weft};
use crate::suites::scheduler::workloads::Workload;

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The snapshot serialized with serde, pretty-printed.
    Json,
    /// Prometheus text exposition format 0.0.4.
    Prometheus,
}

/// Workloads run before the snapshot: remote spawns (inject batches),
/// task-to-task wakes, and enough polls on every worker to fill the
/// poll-time histogram.
const WORKLOADS: [Workload; 3] = [
    Workload::SpawnManyRemoteIdle,
    Workload::PingPong,
    Workload::YieldMany,
];

/// Runs the workloads on `workers` workers and renders the snapshot.
pub fn render(format: Format, workers: usize) -> io::Result<String> {
    let rt = Weft::build(workers, Tuning::default())?;
    for workload in WORKLOADS {
        workload.instantiate(&rt).iterate();
    }
    // A task joined from here has finished: its poll is counted.
    let handle = rt.spawner();
    rt.block_on(handle.spawn(async {}))
        .map_err(io::Error::other)?;
    let metrics = handle.metrics();
    match format {
        Format::Json => serde_json::to_string_pretty(&metrics).map_err(io::Error::other),
        Format::Prometheus => Ok(metrics.to_prometheus()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_render_every_worker() {
        let json: serde_json::Value =
            serde_json::from_str(&render(Format::Json, 2).unwrap()).unwrap();
        assert_eq!(json["num_workers"], 2);
        assert_eq!(json["workers"].as_array().unwrap().len(), 2);
        assert!(json["total"]["polls"].as_u64().unwrap() > 0);
        let text = render(Format::Prometheus, 2).unwrap();
        assert!(text.contains("weft_polls_total{worker=\"1\"}"));
        assert!(text.contains("# TYPE weft_poll_time_seconds histogram"));
    }
}
