//! The timer of each runtime behind one interface, so that every row of the
//! timers suite is written once: [`TimerRuntime`] adds to the suite's
//! [`BenchRuntime`] a build with timers enabled and the runtime's own
//! `sleep` and `sleep_until`.
//!
//! * **weft**: `weft::time::sleep` / `sleep_until`; weft's timers need no
//!   switch, so the runtime is the scheduler suite's.
//! * **tokio**: `tokio::time::sleep` / `sleep_until` on a multi-thread
//!   runtime built with `enable_time()` (the scheduler suite's tokio has no
//!   timer driver).
//! * **smol**: `async_io::Timer::after` / `at` on the scheduler suite's
//!   executor and threads. Those threads run `futures_lite::future::block_on`,
//!   not `async_io::block_on`, so async-io's own thread (started at the first
//!   timer, kept for the life of the process) drives the timers: its CPU is
//!   this process's and is counted by every CPU figure.
//!
//! Deadlines are `std::time::Instant`s: weft's and tokio's `Instant` are
//! std's (no test clock is paused here), and async-io uses std's directly.
//!
//! tokio's cooperative budget does not distort the rows that poll many
//! sleeps in one task poll: a `Sleep` that returns `Pending` gives its unit
//! of budget back, so every poll registers the timer.

use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use crate::common::runtimes::{BenchRuntime, Smol, Tokio, Tuning, Weft};

/// A runtime with a timer.
pub trait TimerRuntime: BenchRuntime + 'static {
    /// The runtime's sleep future (its output is ignored).
    type Sleep: Future + Send + 'static;

    /// Starts a runtime with `workers` worker threads and its timer enabled.
    fn build_with_timers(workers: usize) -> io::Result<Self>;
    /// The runtime's own `sleep(duration)`; call it from one of its tasks.
    fn sleep(duration: Duration) -> Self::Sleep;
    /// The runtime's own `sleep_until(deadline)`; call it from one of its tasks.
    fn sleep_until(deadline: Instant) -> Self::Sleep;
}

impl TimerRuntime for Weft {
    type Sleep = weft::time::Sleep;

    fn build_with_timers(workers: usize) -> io::Result<Self> {
        Weft::build(workers, Tuning::default())
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        weft::time::sleep(duration)
    }

    fn sleep_until(deadline: Instant) -> Self::Sleep {
        weft::time::sleep_until(weft::time::Instant::from_std(deadline))
    }
}

impl TimerRuntime for Tokio {
    type Sleep = tokio::time::Sleep;

    fn build_with_timers(workers: usize) -> io::Result<Self> {
        Tokio::with_driver(workers, tokio::runtime::Builder::enable_time)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        tokio::time::sleep(duration)
    }

    fn sleep_until(deadline: Instant) -> Self::Sleep {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline))
    }
}

impl TimerRuntime for Smol {
    type Sleep = async_io::Timer;

    fn build_with_timers(workers: usize) -> io::Result<Self> {
        Smol::build(workers, Tuning::default())
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        async_io::Timer::after(duration)
    }

    fn sleep_until(deadline: Instant) -> Self::Sleep {
        async_io::Timer::at(deadline)
    }
}
