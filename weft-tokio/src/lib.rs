//! tokio's API on weft's runtime.
//!
//! This crate is named `tokio` (version 1.99, above every tokio release) so
//! that one line in a project's manifest,
//!
//! ```toml
//! [patch.crates-io]
//! tokio = { path = "path/to/weft/weft-tokio" }
//! ```
//!
//! makes it the `tokio` of every crate in the graph: the project's own
//! code and reqwest, sqlx, tonic, tower, hyper-util, tokio-util... all
//! spawn, sleep, connect and read on weft's scheduler, with no tokio
//! runtime in the process. `scripts/weft-tokio.sh check DIR` says whether
//! the patch took effect; [`runtime::is_weft`] says so at run time, and [`weft`] reaches
//! weft's own API (its settings, metrics and stall monitor).
//!
//! # Where each part comes from
//!
//! - The runtime and everything bound to it — [`runtime`], [`task`],
//!   [`time`], [`net`], [`fs`], [`process`], [`signal`], the standard
//!   streams and [`io::unix::AsyncFd`] — is weft's own API under tokio's
//!   names. Types that carry tokio's I/O traits (the sockets and their
//!   halves, [`fs::File`], the child's pipes, the standard streams) are thin
//!   wrappers of weft's, which implement the runtime-agnostic `futures-io`
//!   traits; the adapters are in `io_adapt.rs`. The socket wrappers
//!   dereference to weft's type for the methods whose signatures do not
//!   involve tokio's types.
//! - The runtime-free parts — [`sync`], the [`io`] traits and utilities,
//!   [`select!`], [`join!`], [`try_join!`], [`pin!`] — are tokio's own code,
//!   from tokio's release, compiled as the crate `weft-tokio-upstream`
//!   (`scripts/weft-tokio.sh setup` writes it under `upstream/`; it is not
//!   committed). Its sockets and runtime are never re-exported.
//! - `#[tokio::main]` and `#[tokio::test]` are tokio's own attribute macros
//!   (`tokio-macros`): they expand to `tokio::runtime::Builder`, which is
//!   [`runtime::Builder`] here.
//!
//! # No cycle
//!
//! weft's `tokio-io` and `tokio-compat` features depend on the crate named
//! `tokio`; with the patch in place that is this crate, which depends on
//! weft: a cycle. This crate therefore uses weft with neither feature (its
//! own adapters give weft's streams tokio's traits), and a project on the
//! patch must not turn them on. hyper-util's `tokio` feature is fine: it
//! depends on `tokio`, which is this crate.

#![warn(missing_docs)]

mod io_adapt;
mod net_forward;

pub mod fs;
pub mod io;
pub mod net;
pub mod process;
pub mod runtime;
pub mod signal;
pub mod sync;
pub mod task;
pub mod time;

pub use task::spawn;

/// weft itself: its runtime builder's own settings (the stall monitor,
/// lanes), its metrics and dumps, for code that knows it runs on weft.
pub use ::weft;

/// tokio's attribute for an async `main`: builds a [`runtime::Runtime`]
/// (multi-thread unless `flavor = "current_thread"`) and blocks on the body.
pub use tokio_macros::main;
/// tokio's attribute for an async test: a current-thread runtime per test
/// unless `flavor = "multi_thread"`.
pub use tokio_macros::test;

pub use tokio_upstream::{join, pin, select, try_join};

/// What tokio's macros expand to (`tokio::macros::support`): tokio's own.
#[doc(hidden)]
pub mod macros {
    pub use tokio_upstream::macros::support;
}

/// Declares a task-local value ([`task::LocalKey`]), as `tokio::task_local!`.
pub use weft::task_local;
