//! weft-bench: the benchmark lane. It runs tokio's scheduler workloads on
//! weft, tokio and smol side by side in one process, alternating blocks of
//! iterations between the runtimes, and reports times, ratios, context
//! switches and weft's counters; it writes and compares JSON baselines.
//!
//! Modules, in the order data flows: [`cli`] parses the command line;
//! [`harness`] alternates the runtimes of [`runtimes`], each owned by a
//! [`driver`] thread that runs the [`workloads`] and times each iteration
//! with [`measure`]; [`stats`]
//! summarizes; [`report`] prints (with [`table`]); [`json`] is the document
//! written by `--json` (with [`system`] describing the machine); [`compare`]
//! is the regression gate between two documents; [`summary`] is the default
//! run's last table.
//!
//! [`figure`] is what every lane shares: a figure (name, which way is
//! better, which peer it is compared with, format, noise floor), a run's
//! status, weft's ratio to the peer, the gate's verdict and delta table,
//! and the skeleton of the lanes' tables. A lane is its workload, its JSON
//! and its list of figures.
//!
//! [`metrics`] is the metrics lane (`weft-bench metrics`, and
//! `metrics-dump`): whether weft's counters are exact and cheap to sample.
//!
//! [`timers`] is the timers lane (`weft-bench timers`, and the second lane
//! of the default run): weft's timers against tokio's and async-io's on
//! cost, memory, accuracy and CPU; its rows join the same document and gate.
//!
//! [`mixed`] is the mixed lane (`weft-bench mixed`, and the third lane of
//! the default run): 150 µs and 50 ms requests on one runtime, clients
//! outside it; short-request latency, throughput and CPU against tokio and
//! smol; its loads join the same document and gate, and it draws a chart.
//!
//! [`echo`] is the echo lane (`weft-bench echo`, and the fourth lane of
//! the default run): TCP echo over loopback on each runtime, driven by one
//! load-generator thread; req/s and round-trip latency against tokio and
//! smol; its rows join the same document and gate.
//!
//! [`http`] is the HTTP lane (`weft-bench http`, and the fifth lane of the
//! default run): hyper's HTTP/1.1 hello server on each runtime, driven by
//! one hyper-client thread with 64 keep-alive connections; req/s, latency
//! and CPU per request against tokio and smol; its row joins the same
//! document and gate.
//!
//! [`floor`] answers the echo and HTTP lanes' requests with no async
//! runtime (a thread and an epoll set per worker): what this machine needs
//! for the same work, shown beside the runtimes, never a peer.
//!
//! [`file`](mod@file) is the file lane (`weft-bench file`, and the sixth lane of the
//! default run): 32 tasks writing and 32 reading 8 MiB files through each
//! runtime's file API beside a 1 ms ticker; total time, the ticker's
//! lateness and CPU against tokio and smol; its row joins the same
//! document and gate.
//!
//! [`stall`] is the stall lane (`weft-bench stall`, and the last lane of
//! the default run): a ticker, tasks spawned from outside and TCP round
//! trips on a runtime while tasks block one or every worker in a
//! synchronous sleep; each kind's rate during the stall as a share of its
//! calm rate, against tokio and smol; its cases join the same document
//! and gate.

pub mod common;
pub mod serve;
pub mod suites;
