//! The result document (schema [`SCHEMA`]): what a run measured, as
//! written by `--json FILE` and read back by `compare`: the scheduler
//! lane's workloads ([`WorkloadResult`]), and in `timers`, `mixed`, `echo`,
//! `http`, `file`, `service` and `stall` the other lanes' results
//! ([`TimersResult`], [`MixedResult`], [`EchoResult`], [`HttpResult`],
//! [`FileResult`], [`ServiceResult`], [`StallResult`], each documented
//! with its part of the JSON). The scheduler lane's figures, those `compare` gates, are
//! [`SCHEDULER`].
//!
//! The document is compact JSON (read it with `jq .`); times are
//! milliseconds unless a field's name says otherwise. `weft-bench timers
//! --json FILE` (and `mixed`, `echo`, `http`, `file`, `stall`) write the same document with
//! no workloads, its `settings` then describing that lane's run (profile,
//! workers, runtimes). The lane fields are optional, so documents written
//! before a lane existed still parse, under the same schema string.
//!
//! Per-iteration arrays let a reader check drift (the first half of the
//! run against the second) or recompute any statistic; a runtime that
//! failed keeps the iterations it completed. Any change that an older
//! reader would misread bumps [`SCHEMA`]; `compare` refuses other
//! schemas.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::common::figure::lane::Lane;
use crate::common::figure::{self, Attempt, Figure, Format, Peer, Tolerance};
use crate::common::measure::Sample;
use crate::common::setup::LaneSettings;
use crate::suites::echo::result::EchoResult;
use crate::suites::file::result::FileResult;
use crate::suites::http::result::HttpResult;
use crate::suites::mixed::result::MixedResult;
use crate::suites::scheduler::stats::{Comparison, Summary};
use crate::suites::service::result::ServiceResult;
use crate::suites::stall::result::StallResult;
use crate::suites::timers::result::TimersResult;

pub use crate::common::figure::Status;

/// Identifies the document format.
pub const SCHEMA: &str = "weft-bench/1";

/// weft's median iteration time, over the best peer's.
pub const MEDIAN_MS: Figure<Summary> = Figure::lower("median_ms", "ms", |s| Some(s.median_ms));

/// Growth in context switches per iteration below which a change is noise:
/// a few switches are noise on workloads that switch a few times.
pub const CSW_FLOOR: f64 = 20.0;

/// The scheduler lane's figures `compare` gates: weft's median over the
/// best peer's and over tokio's (measured side by side in one run, they
/// cancel most of the machine's drift and are comparable across
/// machines), and its context switches per iteration, with their own,
/// wider tolerance (they swing far more between runs of one build than
/// times do) and [`CSW_FLOOR`].
pub const SCHEDULER: [Figure<Summary>; 3] = [
    MEDIAN_MS,
    MEDIAN_MS.with_peer(Peer::Tokio),
    Figure::lower("csw_per_iter", "switches", |s: &Summary| {
        Some(s.csw_per_iter)
    })
    .with_peer(Peer::None)
    .with_format(Format::Count)
    .with_floor(CSW_FLOOR)
    .with_tolerance(Tolerance::Switches),
];

/// The scheduler lane in `compare`.
pub const LANE: Lane<Summary> = Lane::new("scheduler", "workload", &SCHEDULER);

/// One run of the lanes. In JSON (the lanes' fields are shown with their
/// types):
///
/// ```jsonc
/// {
///   "schema": "weft-bench/1",
///   "created_unix_s": 1795420696,
///   "machine": { "cores": 2, "cpu_model": "…", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.18.44-…" },
///   "versions": {
///     "weft_commit": "4973d536…",    // `git rev-parse HEAD` at run time, or "unknown"
///     "weft_dirty": false,           // tracked changes under weft/ or Cargo.lock (null: unknown)
///     "bench_dirty": false,          // tracked changes under weft-bench/ (null: unknown)
///     "tokio": "1.54.1",             // from Cargo.lock, at build time
///     "async_executor": "1.14.1",    // from Cargo.lock, at build time
///     "rustc": "rustc 1.95.0 (…)"    // `rustc --version` of the compiler that built weft-bench
///   },
///   "settings": {
///     "profile": "quick", "workers": 4, "rounds": 5,
///     "runtimes": ["weft", "tokio", "smol"],       // block order
///     "iteration_timeout_s": 10.0,
///     "weft_inject_batch_cap": null, "weft_lifo_slot": true
///   },
///   "workloads": [{ … }],                          // the scheduler lane: WorkloadResult
///   "warnings": ["…"],                             // absent when empty
///   "timers": { … },                               // TimersResult; absent when the lane did not run
///   "mixed": { … },                                // MixedResult; likewise
///   "echo": { … },                                 // EchoResult; likewise
///   "http": { … },                                 // HttpResult; likewise
///   "file": { … },                                 // FileResult; likewise
///   "service": { … },                              // ServiceResult; likewise
///   "stall": { … }                                 // StallResult; likewise
/// }
/// ```
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
    /// The other lanes' results, beside these fields.
    #[serde(flatten)]
    pub lanes: LaneResults,
}

/// The results of the lanes after the scheduler lane, in the document
/// beside its fields. Each lane's field is absent when the lane did not
/// run, and from documents written before it existed: they still parse,
/// and `compare` lists its rows as new.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LaneResults {
    /// The timers lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timers: Option<TimersResult>,
    /// The mixed lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedResult>,
    /// The echo lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<EchoResult>,
    /// The HTTP lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpResult>,
    /// The file lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<FileResult>,
    /// The service lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceResult>,
    /// The stall lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallResult>,
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
    /// Profile, workers, the runtimes in the order their blocks alternate
    /// (as every lane's).
    #[serde(flatten)]
    pub lane: LaneSettings,
    /// Rounds: blocks of iterations per runtime, alternating runtimes.
    pub rounds: usize,
    /// Longest wait for one iteration before a runtime is marked failed.
    pub iteration_timeout_s: f64,
    /// weft's `inject_batch_cap`, if overridden.
    pub weft_inject_batch_cap: Option<usize>,
    /// weft's `lifo_slot`.
    pub weft_lifo_slot: bool,
}

/// One workload on every runtime. In JSON:
///
/// ```jsonc
/// {
///   "name": "spawn_many_local",
///   "iterations_per_round": 20,                  // round r = elements r*20 .. r*20+19 of each array
///   "runtimes": {
///     "weft": {
///       "status": "ok",                          // or "failed", with "error": "…"
///       "summary": {                             // null unless status is ok
///         "median_ms": 4.10, "min_ms": 2.32, "max_ms": 5.55,
///         "round_medians_ms": [4.29, 3.56, 3.18, 4.21, 4.21],
///         "spread_pct": 27.0,
///         "csw_per_iter": 221.8, "csw_voluntary_per_iter": 176.5, "csw_involuntary_per_iter": 45.3,
///         "counters_per_iter": { "polls": 10000.0, "parks": 158.0, … }   // weft only
///       },
///       "iterations": {                          // one element per measured iteration, in order
///         "ms": [3.1641, …],                     // rounded to 0.1 µs
///         "csw_voluntary": [457, …], "csw_involuntary": [331, …],
///         "counters": { "polls": [10000, …], … }  // weft only
///       }
///     },
///     "tokio": { … }, "smol": { … }
///   },
///   "comparison": {                              // null when weft or every peer failed
///     "best":  { "peer": "smol",  "value": 0.51, "rounds": [0.52, 0.43, …], "resolved": true },
///     "tokio": { "peer": "tokio", "value": 0.40, "rounds": [0.44, …], "resolved": true },  // null without tokio
///     "verdict": "faster"                        // "faster" | "slower" | "unresolved"
///   }
/// }
/// ```
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

figure::impl_row!(WorkloadResult, RuntimeResult);

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
        self.ok()
    }
}

figure::impl_attempt!(RuntimeResult, summary: Summary);

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
