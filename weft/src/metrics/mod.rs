//! Runtime metrics and application counters that do not perturb what they
//! measure.
//!
//! - [`RuntimeMetrics`] (`Handle::metrics()`): per-worker and summed counts
//!   of polls, spawns, steals, inject batches, LIFO hits, overflows, wake
//!   requests, parks, unparks, awake time, a poll-time histogram, and queue
//!   depths. [`RuntimeMetrics::to_prometheus`] renders it as Prometheus
//!   text; with the `serde` feature it is `Serialize`.
//!   It also counts the threads the runtime started and ended, by kind
//!   ([`RuntimeMetrics::threads_started`], [`ThreadCounts`]).
//! - [`Counter`]: an application counter sharded per worker thread, read
//!   with [`Counter::take`] or [`Counter::sample`] without losing a count.
//!
//! # Invariants
//!
//! Each worker's counters have exactly one writer, the worker itself, which
//! updates them with a relaxed load and a relaxed store: no read-modify-write
//! on the hot path and no cache line shared with another worker (the block is
//! padded to 128 bytes). A reader sums them with relaxed loads. A snapshot can
//! therefore lag a worker by the increments still in its store buffer, but
//! every value it reads is one the counter really held, so totals are never
//! wrong, only slightly stale, and once the runtime is idle (or after a
//! join) they are exact.
//!
//! Counts that outside threads produce (remote spawns, wake requests made
//! from outside the runtime, futures dropped off the workers) cannot have a
//! single writer; they live in striped atomics updated with `fetch_add`, on
//! the remote paths only.
//!
//! The counters are plain `std` atomics even under loom: they are not part
//! of any protocol, and modelling them would only grow the state space.

mod counter;
mod events;
mod histogram;
mod prometheus;
mod snapshot;
mod threads;

pub(crate) use counter::WorkerSlot;
pub use counter::{Counter, Sample};
pub use events::WorkerMetrics;
pub(crate) use events::{SharedCounter, WorkerCounters};
pub use histogram::{POLL_TIME_BUCKETS, PollTimeHistogram};
pub use snapshot::RuntimeMetrics;
pub use threads::ThreadCounts;
pub(crate) use threads::{ThreadCounters, ThreadKind};
