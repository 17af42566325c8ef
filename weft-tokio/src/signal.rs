//! `tokio::signal` on weft: weft's process-wide handlers.

pub use weft::signal::ctrl_c;

/// Unix signals.
pub mod unix {
    use std::io;

    pub use weft::signal::unix::{Signal, SignalKind};

    /// Listens for `kind` from now on (weft's process-wide handler).
    ///
    /// # Panics
    ///
    /// Outside a runtime, or in one built without `enable_io`, with
    /// tokio's messages (weft's own `signal` works outside a runtime).
    #[track_caller]
    pub fn signal(kind: SignalKind) -> io::Result<Signal> {
        if weft::runtime::Handle::try_current().is_err() {
            panic!("there is no signal driver running, must be called from the context of a Tokio 1.x runtime");
        }
        weft::signal::unix::signal(kind)
    }
}
