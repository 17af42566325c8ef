//! weft-bench: weft next to tokio and smol on the same workloads, in the
//! same process, alternating between the runtimes; tables, a JSON
//! document, and a regression gate between two documents.
//!
//! It is nine suites, one folder each under [`suites`], each behind the
//! one trait [`common::suite::Suite`] and listed once in
//! [`suites::ALL`] (the default run runs the first eight, in this order):
//!
//! | suite | measures |
//! |---|---|
//! | [`scheduler`](suites::scheduler) | tokio's scheduler workloads: spawning, waking, yielding; times, context switches, weft's counters |
//! | [`timers`](suites::timers) | timer cost, accuracy, memory, idle CPU, a timer on a stuck worker |
//! | [`mixed`](suites::mixed) | 150 µs and 50 ms requests on one runtime: short-request latency beside long polls |
//! | [`echo`](suites::echo) | TCP echo over loopback; the server's CPU and system calls per request |
//! | [`http`](suites::http) | hyper's hello server; the server's CPU and system calls per request |
//! | [`file`](mod@suites::file) | 64 tasks reading and writing 8 MiB files beside a 1 ms ticker |
//! | [`service`](suites::service) | weft-service (axum over SQLite or PostgreSQL) under HTTP load, weft and tokio |
//! | [`stall`](suites::stall) | a ticker, spawned tasks and TCP round trips while tasks block workers in a synchronous sleep |
//! | [`metrics`](suites::metrics) (not in the default run) | whether weft's counters are exact and cheap to sample |
//!
//! [`common`] is what every suite shares: the trait and the runs
//! ([`common::suite`], [`common::run`]), the command line built from the
//! list ([`common::cli`]), the runtimes behind one interface
//! ([`common::runtimes`], with their timers and TCP), measuring
//! ([`common::measure`], [`common::others`], [`common::latency`],
//! [`common::stats`]), a suite's setup ([`common::setup`]), figures, their
//! ratios, targets and the gate ([`common::figure`]), the document
//! ([`common::json`], [`common::system`]), [`common::compare`],
//! [`common::summary`], tables and charts.
//!
//! [`serve`] is what the echo and HTTP suites share: a server on each
//! runtime (or the floor, with no runtime) under one load generator, the
//! generators' plan and outcome, the server's cost counted with perf, the
//! rows' figures, JSON and tables.

pub mod common;
pub mod serve;
pub mod suites;
