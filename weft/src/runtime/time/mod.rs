//! The engine's time: the clock, the timer wheel, and the driver that
//! keeps one wheel per worker plus one for timers armed off the workers.
//! The public side (`Sleep`, `Timeout`, `Interval`, `Instant`) is
//! `crate::time`.

pub(crate) mod clock;
pub(crate) mod driver;
pub(crate) mod wheel;
