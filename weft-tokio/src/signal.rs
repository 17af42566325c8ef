//! `tokio::signal` on weft: weft's process-wide handlers.

pub use weft::signal::ctrl_c;

/// Unix signals.
pub mod unix {
    pub use weft::signal::unix::{signal, Signal, SignalKind};
}
