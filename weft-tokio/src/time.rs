//! `tokio::time` on weft: weft's timer wheels, its clock (paused under
//! the `test-util` feature), `Sleep`, `Interval` and `Timeout`.

pub use weft::time::{
    interval, interval_at, sleep, sleep_until, timeout, timeout_at, Duration, Instant, Interval,
    MissedTickBehavior, Sleep, Timeout,
};

#[cfg(feature = "test-util")]
pub use weft::time::{advance, resume};

/// Stops the runtime's clock (weft's `time::pause`), on a current-thread
/// runtime only, as on tokio (weft's own `pause` also works on a
/// multi-thread runtime).
///
/// # Panics
///
/// On a multi-thread runtime (tokio's message), outside a runtime, or if
/// time is already paused.
#[cfg(feature = "test-util")]
#[track_caller]
pub fn pause() {
    if weft::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == weft::runtime::RuntimeFlavor::MultiThread)
    {
        panic!(
            "`time::pause()` requires the `current_thread` Tokio runtime. This is the default \
             Runtime used by `#[tokio::test]."
        );
    }
    weft::time::pause();
}

/// Time errors: weft's [`Elapsed`](error::Elapsed), and tokio's timer
/// [`Error`](error::Error) for code that names it.
pub mod error {
    use std::fmt;

    pub use weft::time::error::Elapsed;

    /// tokio's timer error (a timer armed on a runtime shutting down, too
    /// many timers, a deadline too far). weft's timers never fail in these
    /// ways, so nothing here returns one; the type is here so that code
    /// naming it compiles, with tokio's constructors and questions.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Error(Kind);

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Shutdown,
        AtCapacity,
        Invalid,
    }

    impl Error {
        /// The timer's runtime is shutting down.
        pub fn shutdown() -> Error {
            Error(Kind::Shutdown)
        }

        /// Whether this is a `shutdown` error.
        pub fn is_shutdown(&self) -> bool {
            self.0 == Kind::Shutdown
        }

        /// There are too many timers.
        pub fn at_capacity() -> Error {
            Error(Kind::AtCapacity)
        }

        /// Whether this is an `at_capacity` error.
        pub fn is_at_capacity(&self) -> bool {
            self.0 == Kind::AtCapacity
        }

        /// The deadline is out of the timer's range.
        pub fn invalid() -> Error {
            Error(Kind::Invalid)
        }

        /// Whether this is an `invalid` error.
        pub fn is_invalid(&self) -> bool {
            self.0 == Kind::Invalid
        }
    }

    impl fmt::Display for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self.0 {
                Kind::Shutdown => {
                    "the timer is shutdown, must be called from the context of Tokio runtime"
                }
                Kind::AtCapacity => "timer is at capacity and cannot create a new entry",
                Kind::Invalid => "timer duration exceeds maximum duration",
            })
        }
    }

    impl std::error::Error for Error {}
}
