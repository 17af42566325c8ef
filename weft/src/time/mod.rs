//! Time: [`sleep`], [`timeout`], [`interval`], and the [`Instant`] they
//! measure with. tokio's names and semantics where the concept is the same.
//!
//! # How timers fire
//!
//! Each worker has its own hierarchical timer wheel (`wheel.rs`: 6 levels of
//! 64 slots, 65.5 µs ticks, exact nanosecond deadlines within a tick); a
//! timer is armed on the wheel of the worker that first polls it, timers
//! polled off the workers go to one outside wheel (`driver.rs`). A worker
//! fires its own due timers at its periodic global check (every ~200 µs of
//! work) and before it sleeps. Of the sleeping workers exactly one, the
//! *keeper*, sleeps with a timeout: the earliest deadline of every wheel. So
//! a timer armed on a worker that is then stuck in a long poll still fires
//! on time when another worker is idle: the keeper wakes at its deadline
//! and fires it from the stuck worker's wheel. With no pending timer
//! nothing wakes: an idle runtime has no tick.
//!
//! Compared with the peers (the issue that specified this module has the
//! measurements): tokio rounds every deadline up to its 1 ms wheel and
//! keeps all timers under one mutex per runtime; async-io keeps exact
//! deadlines in one locked `BTreeMap` and wakes its reactor on every insert.
//! Here arming takes only the arming worker's own wheel lock (uncontended),
//! deadlines are exact to the nanosecond and parking uses the condvar's
//! sub-millisecond timeout, and a slot in which thousands of timers expire
//! at once is fired 256 at a time (`FIRE_BUDGET` in `driver.rs`).
//!
//! # Dense timers
//!
//! A keeper that has just fired timers sleeps at least 400 µs before it
//! fires again (`KEEPER_MIN_GAP_NS` in `runtime/scheduler/worker/timers.rs`), and
//! runs a fired batch of up to 128 tasks alone unless they still wait
//! 200 µs later: a speed rule that keeps dense timers' lateness under
//! tokio's on less CPU than one wake per deadline would cost (measured:
//! docs/experiments.md#dense-timers). A timer armed after a quiet gap (a
//! `sleep(1 ms)` loop, a request timeout) never waits on the gap: it fires
//! within the kernel's wake-up latency (workers ask Linux for 1 µs timer
//! slack, `runtime/sys.rs`).
//!
//! # Test clock
//!
//! With the `test-util` feature, `pause` stops the runtime's clock:
//! [`Instant::now`] stands still, `advance` moves it, and when every
//! worker is idle and no `block_on` is polling, the keeper jumps the clock
//! to the next timer at once (tokio's auto-advance), so time-driven code is
//! tested without waiting.

pub mod error;
mod instant;
mod interval;
mod sleep;
mod timeout;

pub use instant::{FAR_FUTURE, Instant};
pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub use sleep::{Sleep, sleep, sleep_until};
/// `std`'s `Duration`, re-exported as tokio does (`tokio::time::Duration`).
pub use std::time::Duration;
pub use timeout::{Timeout, timeout, timeout_at};

#[cfg(feature = "test-util")]
mod test_clock;
#[cfg(feature = "test-util")]
pub use test_clock::{advance, pause, resume};
