//! The result document (schema [`SCHEMA`]): what a run measured, as
//! written by `--json FILE` and read back by `compare`. Its head says
//! where and what was measured; then each suite that ran adds its
//! section, in the order of the list (`crate::suites`): a field named
//! after the suite, documented with the suite's results type, or for the
//! scheduler suite, whose fields predate the sections, fields at the top
//! level (`settings`, `workloads`, `warnings`, always present: a document
//! of other suites describes the first of them there, with no workload).
//!
//! ```jsonc
//! {
//!   "schema": "weft-bench/1",
//!   "created_unix_s": 1795420696,
//!   "machine": { "cores": 2, "cpu_model": "…", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.18.44-…" },
//!   "versions": {
//!     "weft_commit": "4973d536…",    // `git rev-parse HEAD` at run time, or "unknown"
//!     "weft_dirty": false,           // tracked changes under weft/ or Cargo.lock (null: unknown)
//!     "bench_dirty": false,          // tracked changes under weft-bench/ (null: unknown)
//!     "tokio": "1.54.1",             // from Cargo.lock, at build time
//!     "async_executor": "1.14.1",    // from Cargo.lock, at build time
//!     "rustc": "rustc 1.95.0 (…)"    // `rustc --version` of the compiler that built weft-bench
//!   },
//!   "settings": { … }, "workloads": [ … ], "warnings": [ … ],   // the scheduler suite: SchedulerResults
//!   "timers": { … },                 // TimersResult; absent when the suite did not run
//!   "mixed": { … },                  // MixedResult; likewise, and so on in the list's order:
//!   "echo": { … }, "http": { … }, "file": { … }, "service": { … }, "stall": { … }
//! }
//! ```
//!
//! The document is compact JSON (read it with `jq .`); times are
//! milliseconds unless a field's name says otherwise. A section is absent
//! when its suite did not run, and from documents written before the
//! suite existed: they still parse, under the same schema string, and
//! `compare` lists its rows as new. Any change that an older reader would
//! misread bumps [`SCHEMA`]; `compare` refuses other schemas.

use std::any::Any;
use std::fmt;
use std::fs;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::common::suite::Suite;
use crate::suites::ALL;

/// Identifies the document format.
pub const SCHEMA: &str = "weft-bench/1";

/// One run of the suites: its head, and each suite's section (module doc).
pub struct Document {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// When the run started, in seconds since the Unix epoch.
    pub created_unix_s: u64,
    /// The machine the run was measured on.
    pub machine: Machine,
    /// What was measured.
    pub versions: Versions,
    /// Each suite's results, by the suite's name.
    sections: Vec<(&'static str, Box<dyn Any>)>,
}

/// The head of the document, as JSON.
#[derive(Serialize, Deserialize)]
struct Head {
    schema: String,
    created_unix_s: u64,
    machine: Machine,
    versions: Versions,
}

impl Document {
    /// A document with no section yet, created now on this machine.
    pub fn new() -> Document {
        let created_unix_s = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Document {
            schema: SCHEMA.to_owned(),
            created_unix_s,
            machine: Machine::detect(),
            versions: Versions::detect(),
            sections: Vec::new(),
        }
    }

    /// Suite `S`'s results, if the document has them.
    pub fn get<S: Suite>(&self) -> Option<&S::Results> {
        let (_, section) = self.sections.iter().find(|(name, _)| *name == S::NAME)?;
        section.downcast_ref()
    }

    /// Adds (or replaces) suite `S`'s results.
    pub fn insert<S: Suite>(&mut self, results: S::Results) {
        self.sections.retain(|(name, _)| *name != S::NAME);
        self.sections.push((S::NAME, Box::new(results)));
    }

    /// The document as compact JSON: the head, then each section in the
    /// list's order (a top-level section's fields spliced in).
    pub fn to_json(&self) -> serde_json::Result<String> {
        let head = serde_json::to_string(&Head {
            schema: self.schema.clone(),
            created_unix_s: self.created_unix_s,
            machine: self.machine.clone(),
            versions: self.versions.clone(),
        })?;
        let mut text = head[..head.len() - 1].to_owned();
        for suite in ALL {
            match suite.write(self)? {
                None => {}
                Some((true, fields)) => {
                    let fields = &fields[1..fields.len() - 1];
                    if !fields.is_empty() {
                        text.push(',');
                        text.push_str(fields);
                    }
                }
                Some((false, section)) => {
                    text.push_str(&format!(",\"{}\":{section}", suite.name()));
                }
            }
        }
        text.push('}');
        Ok(text)
    }

    /// A document from its JSON: the head, and the section of each suite
    /// of the list that it has (fields no suite reads are ignored).
    pub fn from_json(text: &str) -> serde_json::Result<Document> {
        let fields: Map<String, Value> = serde_json::from_str(text)?;
        let head: Head = serde_json::from_value(Value::Object(fields.clone()))?;
        let mut document = Document {
            schema: head.schema,
            created_unix_s: head.created_unix_s,
            machine: head.machine,
            versions: head.versions,
            sections: Vec::new(),
        };
        for suite in ALL {
            suite.read(&fields, &mut document)?;
        }
        Ok(document)
    }
}

impl Default for Document {
    fn default() -> Self {
        Document::new()
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sections: Vec<&str> = self.sections.iter().map(|(name, _)| *name).collect();
        f.debug_struct("Document")
            .field("schema", &self.schema)
            .field("created_unix_s", &self.created_unix_s)
            .field("machine", &self.machine)
            .field("versions", &self.versions)
            .field("sections", &sections)
            .finish()
    }
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
    /// The same for `weft-bench/`, the suite itself.
    pub bench_dirty: Option<bool>,
    /// tokio's version, from `Cargo.lock` at build time.
    pub tokio: String,
    /// async-executor's version, from `Cargo.lock` at build time.
    pub async_executor: String,
    /// `rustc --version` of the compiler that built the suite.
    pub rustc: String,
}

/// Writes `document` to `path` as compact JSON (a quick run's document is
/// ~100 KB so; pretty-printed, every array element would take a line and
/// five times the space: use `jq .` to read one).
pub fn write(path: &Path, document: &Document) -> io::Result<()> {
    let text = document.to_json().map_err(io::Error::other)?;
    fs::write(path, text + "\n")
}

/// Reads a document written by [`write()`], checking its schema.
pub fn read(path: &Path) -> io::Result<Document> {
    let text = fs::read_to_string(path)?;
    let document =
        Document::from_json(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
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
