//! weft-service: one axum application with a real database, run on weft or
//! on tokio from the same code (issue 37). The binary is `main.rs`; the
//! library is the same service for a process that runs it itself
//! (`weft-bench service` starts its servers from its own executable).
//!
//! Seed 004's workload over HTTP: point reads (`GET /users/{id}`) served
//! beside analytic requests (`GET /report`, a long computation in one
//! poll) on one thread pool. The runtimes differ only in how the runtime
//! is built, how the listener accepts, and the handful of primitives in
//! `rt.rs` (blocking pool, spawn, timeout, the database's TCP stream).
//!
//! - `args.rs`: the command line.
//! - `serve.rs`: builds the runtime, opens the database, accepts, and
//!   shuts down gracefully on `SIGINT`/`SIGTERM`.
//! - `routes.rs`: the `Router` and its handlers; `report.rs` the analytic
//!   computation; `fortunes.rs` TechEmpower's fortunes page.
//! - `db/`: SQLite (embedded, on the blocking pool) and PostgreSQL
//!   (tokio-postgres over the runtime's own TCP stream), one interface.

mod args;
mod db;
mod fortunes;
mod report;
mod routes;
mod rt;
mod serve;

pub use args::{Args, RuntimeKind};

/// Runs the service as `args` says until `SIGINT` or `SIGTERM`; the first
/// line on stdout is `listening on http://ADDRESS`. `Err` says why it
/// could not start or serve.
pub fn run(args: Args) -> Result<(), String> {
    serve::run(args)
}
