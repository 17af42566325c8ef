//! The suites, one folder each, and their one list.
//!
//! Each folder's `suite.rs` implements [`Suite`]
//! for a unit struct: its options, how it runs, its tables, what `compare`
//! gates and its lines in the summary; the rest of the folder is its
//! workload and its results. [`ALL`] is the list the command line, the
//! default run (in this order), the document, `compare` and the summary
//! iterate: adding a suite is a folder and one line below.
//!
//! [`Suite`]: crate::common::suite::Suite

use crate::common::suite::AnySuite;

/// Declares each suite's module and lists them, in the default run's
/// order: `module::Suite,` per line.
macro_rules! suites {
    ($($module:ident :: $suite:ident,)*) => {
        $(pub mod $module;)*

        /// Every suite, in the order the default run runs them.
        pub static ALL: &[&dyn AnySuite] = &[$(&$module::$suite),*];
    };
}

suites! {
    scheduler::Scheduler,
    timers::Timers,
    mixed::Mixed,
    echo::Echo,
    http::Http,
    file::File,
    service::Service,
    tokio_patch::TokioPatch,
    stall::Stall,
    metrics::Metrics,
}
