//! The runtime's clock: nanoseconds since the time driver's epoch, read by
//! the wheels and by `weft::time::Instant::now` inside the runtime.
//!
//! Without the `test-util` feature this is `std::time::Instant` and nothing
//! else. With it, the clock can be *paused* (`weft::time::pause`): it then
//! stands still until `advance` moves it or, when every worker is idle and
//! no `block_on` is polling, the worker keeping time jumps it to the next
//! timer (`scheduler::worker`'s park). `resume` lets it run again from where
//! it stood. The pause state is plain atomics: the clock is not part of any
//! handshake, each reader just wants the latest value.

use std::time::Instant as StdInstant;

#[cfg(feature = "test-util")]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) struct Clock {
    epoch: StdInstant,
    #[cfg(feature = "test-util")]
    paused: AtomicBool,
    /// While paused: the time that stands still, in ns since `epoch`.
    #[cfg(feature = "test-util")]
    frozen_ns: AtomicU64,
    /// While running: added (wrapping, so it may be negative) to the real
    /// time since `epoch`, so time resumes where a pause left it.
    #[cfg(feature = "test-util")]
    offset_ns: AtomicU64,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            epoch: StdInstant::now(),
            #[cfg(feature = "test-util")]
            paused: AtomicBool::new(false),
            #[cfg(feature = "test-util")]
            frozen_ns: AtomicU64::new(0),
            #[cfg(feature = "test-util")]
            offset_ns: AtomicU64::new(0),
        }
    }

    /// Now, in ns since the epoch.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        #[cfg(feature = "test-util")]
        if self.paused.load(Ordering::Acquire) {
            return self.frozen_ns.load(Ordering::Acquire);
        }
        let real = self.real_ns();
        #[cfg(feature = "test-util")]
        let real = real.wrapping_add(self.offset_ns.load(Ordering::Acquire));
        real
    }

    fn real_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// `instant` in ns since the epoch (0 for instants before it).
    #[inline]
    pub(crate) fn to_ns(&self, instant: StdInstant) -> u64 {
        u64::try_from(instant.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The instant `ns` after the epoch.
    #[cfg(feature = "test-util")]
    pub(crate) fn to_instant(&self, ns: u64) -> StdInstant {
        self.epoch + std::time::Duration::from_nanos(ns)
    }

    /// Now, as an instant of this clock.
    #[cfg(feature = "test-util")]
    pub(crate) fn now(&self) -> StdInstant {
        self.to_instant(self.now_ns())
    }

    pub(crate) fn is_paused(&self) -> bool {
        #[cfg(feature = "test-util")]
        return self.paused.load(Ordering::Acquire);
        #[cfg(not(feature = "test-util"))]
        false
    }
}

#[cfg(feature = "test-util")]
impl Clock {
    /// Stops the clock. Panics if it is already paused (tokio's rule).
    #[track_caller]
    pub(crate) fn pause(&self) {
        let now = self.now_ns();
        self.frozen_ns.store(now, Ordering::Release);
        if self.paused.swap(true, Ordering::AcqRel) {
            panic!("`weft::time::pause` called while time is already paused");
        }
    }

    /// Lets the clock run again from where it stands. Panics if it is not
    /// paused.
    #[track_caller]
    pub(crate) fn resume(&self) {
        if !self.paused.load(Ordering::Acquire) {
            panic!("`weft::time::resume` called while time is not paused");
        }
        let frozen = self.frozen_ns.load(Ordering::Acquire);
        self.offset_ns
            .store(frozen.wrapping_sub(self.real_ns()), Ordering::Release);
        self.paused.store(false, Ordering::Release);
    }

    /// Moves a paused clock forward to `ns`, never backward.
    pub(crate) fn advance_to(&self, ns: u64) {
        self.frozen_ns.fetch_max(ns, Ordering::AcqRel);
    }
}
