//! A driver thread owns one runtime for one workload and runs the blocks of
//! iterations the orchestrator orders; [`Driver`] is the orchestrator's end.
//!
//! While a block runs, the two threads do not talk: the driver keeps its
//! samples and sends them when the block is done, so that no message wakes
//! the orchestrator (a context switch, and on two cores a preempted worker)
//! in the middle of a measured iteration. Progress is published through a
//! heartbeat, a counter of finished iterations that the orchestrator reads
//! every 200 ms. A runtime whose heartbeat stands still for longer than
//! the iteration timeout is marked failed and abandoned: its thread is never
//! joined, so a hang cannot hang the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use super::result::RuntimeResult;
use crate::common::figure::Status;
use crate::common::measure::{self, Sample};
use crate::common::runtimes::{BenchRuntime, RuntimeKind, Smol, Tokio, Tuning, Weft};
use crate::common::thread::catch_panic;
use crate::suites::scheduler::stats;
use crate::suites::scheduler::workloads::Workload;

/// How often the orchestrator looks at a busy driver's heartbeat.
const POLL: Duration = Duration::from_millis(200);

/// One block of a round: warm-up iterations, then measured ones.
#[derive(Debug, Clone, Copy)]
pub struct Block {
    /// Iterations run and not recorded.
    pub warmup: usize,
    /// Iterations measured.
    pub iterations: usize,
}

/// What a driver thread sends.
enum Report {
    /// The runtime is built.
    Ready,
    /// The block is done and torn down: its measured iterations.
    BlockDone(Vec<Sample>),
    /// The runtime failed; the driver drops it and closes.
    Failed(String),
    /// The runtime is shut down; the thread is about to exit.
    Closed,
}

/// The orchestrator's end of one runtime's driver thread.
pub struct Driver {
    kind: RuntimeKind,
    workload: Workload,
    /// Dropped to tell the driver to shut its runtime down.
    orders: Option<mpsc::Sender<Block>>,
    reports: mpsc::Receiver<Report>,
    /// Iterations (warm-up included) the driver has finished.
    heartbeat: Arc<AtomicU64>,
    /// `None` once abandoned after a timeout.
    thread: Option<thread::JoinHandle<()>>,
    timeout: Duration,
    result: RuntimeResult,
}

impl Driver {
    /// Starts a driver thread for `kind` and waits for its runtime to be
    /// built; a failure is recorded in the result.
    pub fn start(
        kind: RuntimeKind,
        workload: Workload,
        workers: usize,
        tuning: Tuning,
        timeout: Duration,
    ) -> Driver {
        let (orders, order_rx) = mpsc::channel();
        let (report_tx, reports) = mpsc::channel();
        let heartbeat = Arc::new(AtomicU64::new(0));
        let beat = heartbeat.clone();
        let drive = match kind {
            RuntimeKind::Weft => drive::<Weft>,
            RuntimeKind::Tokio => drive::<Tokio>,
            RuntimeKind::Smol => drive::<Smol>,
        };
        let thread = thread::Builder::new()
            .name(format!("drive-{}", kind.name()))
            .spawn(move || drive(workload, workers, tuning, order_rx, report_tx, &beat));
        let mut driver = Driver {
            kind,
            workload,
            orders: Some(orders),
            reports,
            heartbeat,
            thread: None,
            timeout,
            result: RuntimeResult::default(),
        };
        match thread {
            Ok(thread) => {
                driver.thread = Some(thread);
                match driver.await_report(|_| {}) {
                    Ok(Report::Ready) => {}
                    Ok(_) => driver.fail(Stop::failed("protocol error: expected Ready")),
                    Err(stop) => driver.fail(stop),
                }
            }
            Err(err) => driver.fail(Stop::failed(format!("cannot start a driver thread: {err}"))),
        }
        driver
    }

    /// The runtime this driver runs.
    pub fn kind(&self) -> RuntimeKind {
        self.kind
    }

    /// Whether the runtime has not failed yet.
    pub fn is_running(&self) -> bool {
        self.result.status == Status::Ok
    }

    /// Orders one block and records its iterations; `on_progress` gets the
    /// number of iterations finished since it was last called.
    pub fn run_block(&mut self, block: Block, on_progress: impl FnMut(u64)) {
        let sent = self.orders.as_ref().is_some_and(|o| o.send(block).is_ok());
        if !sent {
            return self.fail(Stop::failed("driver thread is gone"));
        }
        match self.await_report(on_progress) {
            Ok(Report::BlockDone(samples)) => {
                samples.iter().for_each(|s| self.result.iterations.push(s));
            }
            Ok(_) => self.fail(Stop::failed("protocol error: expected BlockDone")),
            Err(stop) => self.fail(stop),
        }
    }

    /// Shuts the runtime down and returns what it measured, adding a line to
    /// `warnings` if it failed or could not be shut down.
    pub fn close(mut self, per_round: usize, warnings: &mut Vec<String>) -> RuntimeResult {
        let what = format!("{} on {}", self.workload.name(), self.kind.name());
        drop(self.orders.take());
        if self.thread.is_some() {
            match self.await_report(|_| {}) {
                // A driver that never built its runtime exits without `Closed`.
                Ok(Report::Closed) | Err(Stop { abandon: false, .. }) => {
                    let _ = self.thread.take().map(thread::JoinHandle::join);
                }
                Ok(_) => warnings.push(format!("{what}: protocol error: expected Closed")),
                Err(stop) => warnings.push(format!("{what}: shutting down: {}", stop.reason)),
            }
        }
        if self.is_running() {
            self.result.summary = stats::summarize(&self.result.iterations, per_round);
        } else if let Some(error) = &self.result.error {
            warnings.push(format!("{what}: {error}"));
        }
        self.result
    }

    /// Waits for the driver's next report other than a failure, for as long
    /// as its heartbeat keeps moving and at most the timeout without it.
    fn await_report(&self, mut on_progress: impl FnMut(u64)) -> Result<Report, Stop> {
        let mut seen = self.heartbeat.load(Relaxed);
        let mut last_beat = Instant::now();
        loop {
            match self.reports.recv_timeout(POLL.min(self.timeout)) {
                Ok(Report::Failed(reason)) => return Err(Stop::failed(reason)),
                Ok(report) => {
                    on_progress(self.heartbeat.load(Relaxed) - seen);
                    return Ok(report);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Stop::failed("driver thread exited"));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let beat = self.heartbeat.load(Relaxed);
            if beat != seen {
                on_progress(beat - seen);
                (seen, last_beat) = (beat, Instant::now());
            } else if last_beat.elapsed() >= self.timeout {
                return Err(Stop::hung(self.timeout));
            }
        }
    }

    /// Marks the runtime failed for this workload and stops ordering blocks.
    fn fail(&mut self, stop: Stop) {
        if stop.abandon {
            self.thread = None;
        }
        self.result.status = Status::Failed;
        self.result.error = Some(stop.reason);
        drop(self.orders.take());
    }
}

/// Why a driver stopped before its last round.
struct Stop {
    reason: String,
    /// The driver thread is stuck: never wait for it again.
    abandon: bool,
}

impl Stop {
    fn failed(reason: impl Into<String>) -> Stop {
        Stop {
            reason: reason.into(),
            abandon: false,
        }
    }

    fn hung(timeout: Duration) -> Stop {
        Stop {
            reason: format!(
                "no iteration finished within {timeout:?} (hung?); abandoned, and may still be \
                 running and disturbing the workloads after it"
            ),
            abandon: true,
        }
    }
}

/// The driver thread: owns one runtime for one workload and runs the blocks
/// it is ordered, until the order channel closes or a block fails.
fn drive<R: BenchRuntime>(
    workload: Workload,
    workers: usize,
    tuning: Tuning,
    orders: mpsc::Receiver<Block>,
    reports: mpsc::Sender<Report>,
    heartbeat: &AtomicU64,
) {
    let rt = match catch_panic(|| R::build(workers, tuning)) {
        Ok(Ok(rt)) => rt,
        Ok(Err(err)) => {
            let _ = reports.send(Report::Failed(format!("build failed: {err}")));
            return;
        }
        Err(reason) => {
            let _ = reports.send(Report::Failed(reason));
            return;
        }
    };
    let _ = reports.send(Report::Ready);
    for block in orders {
        let report = match catch_panic(|| run_block(&rt, workload, block, heartbeat)) {
            Ok(Ok(samples)) => Report::BlockDone(samples),
            Ok(Err(reason)) | Err(reason) => Report::Failed(reason),
        };
        let failed = matches!(report, Report::Failed(_));
        if reports.send(report).is_err() || failed {
            break;
        }
    }
    drop(rt);
    let _ = reports.send(Report::Closed);
}

/// Sets the workload up, runs the block, tears the set-up down.
fn run_block<R: BenchRuntime>(
    rt: &R,
    workload: Workload,
    block: Block,
    heartbeat: &AtomicU64,
) -> Result<Vec<Sample>, String> {
    let mut instance = workload.instantiate(rt);
    for _ in 0..block.warmup {
        instance.iterate();
        heartbeat.fetch_add(1, Relaxed);
    }
    let mut samples = Vec::with_capacity(block.iterations);
    for _ in 0..block.iterations {
        let sample = measure::sample(|| instance.iterate(), || rt.counters())
            .map_err(|e| format!("getrusage failed: {e}"))?;
        samples.push(sample);
        heartbeat.fetch_add(1, Relaxed);
    }
    Ok(samples)
}
