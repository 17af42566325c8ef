//! What every suite shares; no module here names a suite (the command
//! line, the runs, the document, `compare` and the summary iterate
//! [`crate::suites::ALL`]).
//!
//! * The trait and the runs: [`suite`] ([`suite::Suite`], one per suite),
//!   [`run`] (the default run, a suite alone, the document and exit code),
//!   [`cli`] (the command line built from the list).
//! * The runtimes: [`runtimes`] (weft, tokio and smol behind one
//!   interface; their timers, [`runtimes::timer`], and TCP,
//!   [`runtimes::net`]), [`thread`] (work on a thread that may hang).
//! * Measuring: [`measure`] (an iteration, the process's and a thread's
//!   CPU, a window), [`others`] (other processes' share of the machine),
//!   [`latency`] (histograms and percentiles), [`stats`], [`schedule`]
//!   (seeded Poisson arrivals), [`setup`] (profile, workers, runtimes).
//! * Judging and showing: [`figure`] (figures, ratios to the peers,
//!   targets, the gate, a suite's rows and results), [`json`] (the
//!   document) with [`system`], [`compare`], [`summary`], [`table`],
//!   [`chart`].

pub mod chart;
pub mod cli;
pub mod compare;
pub mod figure;
pub mod json;
pub mod latency;
pub mod measure;
pub mod others;
pub mod run;
pub mod runtimes;
pub mod schedule;
pub mod setup;
pub mod stats;
pub mod suite;
pub mod summary;
pub mod system;
pub mod table;
pub mod thread;
