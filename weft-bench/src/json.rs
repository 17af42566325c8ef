//! The result document: what a run measured, as written by `--json` and read
//! back by `compare`: the scheduler lane's workloads, in `timers` the
//! timers lane's rows, in `mixed` the mixed lane's loads and in `echo` the
//! echo lane's rows, in `http` the HTTP lane's. The schema is described in the crate's README; bump
//! [`SCHEMA`] on any change that an older reader would misread.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::echo::result::EchoResult;
use crate::http::result::HttpResult;
use crate::measure::Sample;
use crate::mixed::result::MixedResult;
use crate::stats::{Comparison, Summary};
use crate::timers::result::TimersResult;

/// Identifies the document format.
pub const SCHEMA: &str = "weft-bench/1";

/// One run of the lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// When the run started, in seconds since the Unix epoch.
    pub created_unix_s: u64,
    /// The machine the run was measured on.
    pub machine: Machine,
    /// What was measured.
    pub versions: Versions,
    /// How it was measured.
    pub settings: Settings,
    /// One entry per workload, in the order they ran.
    pub workloads: Vec<WorkloadResult>,
    /// Anything that may have disturbed the run (an abandoned runtime).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The timers lane, when it ran (absent from documents written before
    /// it existed: they still parse, and `compare` lists its rows as new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timers: Option<TimersResult>,
    /// The mixed lane, when it ran (absent from documents written before
    /// it existed, which still parse; `compare` lists its rows as new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedResult>,
    /// The echo lane, when it ran (absent from documents written before
    /// it existed, which still parse; `compare` lists its rows as new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<EchoResult>,
    /// The HTTP lane, when it ran (absent from documents written before
    /// it existed, which still parse; `compare` lists its row as new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpResult>,
}

/// The machine a run was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// `std::thread::available_parallelism()`.
    pub cores: usize,
    /// `model name` from `/proc/cpuinfo`, or `"unknown"`.
    pub cpu_model: String,
    /// `PRETTY_NAME` from `/etc/os-release`, or `"unknown"`.
    pub os: String,
    /// The kernel release (`uname -r`), or `"unknown"`.
    pub kernel: String,
}

/// Versions of everything that was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Versions {
    /// `git rev-parse HEAD` of the workspace at run time, or `"unknown"`.
    pub weft_commit: String,
    /// Whether tracked files under `weft/` or `Cargo.lock` had uncommitted
    /// changes: the runtime measured is not exactly `weft_commit` (`None`
    /// when git could not tell).
    pub weft_dirty: Option<bool>,
    /// The same for `weft-bench/`, the lane itself.
    pub bench_dirty: Option<bool>,
    /// tokio's version, from `Cargo.lock` at build time.
    pub tokio: String,
    /// async-executor's version, from `Cargo.lock` at build time.
    pub async_executor: String,
    /// `rustc --version` of the compiler that built the lane.
    pub rustc: String,
}

/// How a run was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// Rounds: blocks of iterations per runtime, alternating runtimes.
    pub rounds: usize,
    /// The runtimes run, in the order their blocks alternate.
    pub runtimes: Vec<String>,
    /// Longest wait for one iteration before a runtime is marked failed.
    pub iteration_timeout_s: f64,
    /// weft's `inject_batch_cap`, if overridden.
    pub weft_inject_batch_cap: Option<usize>,
    /// weft's `lifo_slot`.
    pub weft_lifo_slot: bool,
}

/// One workload on every runtime.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// The workload's name (tokio's benchmark name).
    pub name: String,
    /// Measured iterations per round (after warm-up).
    pub iterations_per_round: usize,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, RuntimeResult>,
    /// weft against its peers; absent when weft or every peer failed.
    pub comparison: Option<Comparison>,
}

/// Whether a runtime completed a workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every round completed.
    #[default]
    Ok,
    /// It failed to build, panicked, or an iteration timed out.
    Failed,
}

/// One workload on one runtime.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RuntimeResult {
    /// Whether every round completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Statistics over the iterations; present when `status` is `ok`.
    pub summary: Option<Summary>,
    /// Every measured iteration, in the order measured.
    pub iterations: Iterations,
}

impl RuntimeResult {
    /// The summary, if the runtime completed the workload.
    pub fn ok_summary(&self) -> Option<&Summary> {
        self.summary.as_ref().filter(|_| self.status == Status::Ok)
    }
}

/// Per-iteration values, one array element per measured iteration. Round
/// `r` is elements `r * iterations_per_round ..` of every array.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Iterations {
    /// Wall time, milliseconds.
    pub ms: Vec<f64>,
    /// Voluntary context switches of the whole process.
    pub csw_voluntary: Vec<u64>,
    /// Involuntary context switches of the whole process.
    pub csw_involuntary: Vec<u64>,
    /// The runtime's counter deltas, by counter name (weft only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Vec<u64>>,
}

impl Iterations {
    /// Appends one measured iteration (its time rounded to 0.1 µs).
    pub fn push(&mut self, sample: &Sample) {
        self.ms
            .push((sample.wall.as_secs_f64() * 1e7).round() / 1e4);
        self.csw_voluntary.push(sample.csw_voluntary);
        self.csw_involuntary.push(sample.csw_involuntary);
        for &(name, value) in sample.counters.iter().flatten() {
            self.counters
                .entry(name.to_owned())
                .or_default()
                .push(value);
        }
    }
}

/// Writes `document` to `path` as compact JSON (a quick run's document is
/// ~100 KB so; pretty-printed, every array element would take a line and
/// five times the space: use `jq .` to read one).
pub fn write(path: &Path, document: &Document) -> io::Result<()> {
    let text = serde_json::to_string(document).map_err(io::Error::other)?;
    fs::write(path, text + "\n")
}

/// Reads a document written by [`write()`], checking its schema.
pub fn read(path: &Path) -> io::Result<Document> {
    let text = fs::read_to_string(path)?;
    let document: Document =
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    if document.schema != SCHEMA {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "schema is {:?}, this build reads {SCHEMA:?}",
                document.schema
            ),
        ));
    }
    Ok(document)
}
