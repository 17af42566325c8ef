//! `tokio::time` on weft: weft's timer wheels, its clock (paused under
//! the `test-util` feature), `Sleep`, `Interval` and `Timeout`.

pub use weft::time::{
    error, interval, interval_at, sleep, sleep_until, timeout, timeout_at, Duration, Instant,
    Interval, MissedTickBehavior, Sleep, Timeout,
};

#[cfg(feature = "test-util")]
pub use weft::time::{advance, pause, resume};
