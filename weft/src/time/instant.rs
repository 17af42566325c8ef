//! `Instant`: a point on the runtime's clock.
//!
//! Pinned, with `clock.rs` and `test_clock.rs`, by the unit tests below
//! (arithmetic as `std`'s, `saturating_add` near the clock's end) and
//! `time.rs` (`after_resume_the_clock_runs_on_from_where_it_stood`,
//! `sleeps_and_instants_print_their_deadline`).

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A measurement of a monotonically nondecreasing clock, as
/// `std::time::Instant`, except that inside a runtime whose clock is paused
/// (feature `test-util`, `weft::time::pause`) [`Instant::now`]
/// reads the paused clock.
///
/// ```
/// use std::time::Duration;
/// use weft::time::Instant;
///
/// let start = Instant::now();
/// let later = start + Duration::from_millis(5);
/// assert_eq!(later - start, Duration::from_millis(5));
/// assert_eq!(later.into_std(), start.into_std() + Duration::from_millis(5));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time (the runtime's paused clock under `test-util`).
    #[must_use]
    pub fn now() -> Instant {
        #[cfg(feature = "test-util")]
        if let Some(now) = crate::runtime::context::with_current(|shared| {
            // Always the runtime's clock: after a pause and `resume` it
            // runs on from where it stood, ahead of the real clock.
            shared.map(|shared| shared.time.clock.now())
        }) {
            return Instant { std: now };
        }
        Instant {
            std: std::time::Instant::now(),
        }
    }

    /// Wraps a `std::time::Instant`.
    #[must_use]
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The `std::time::Instant` this is.
    #[must_use]
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    #[must_use]
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time from `earlier` to `self`, `None` if `earlier` is later.
    #[must_use]
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    #[must_use]
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time since `self` ([`Instant::now`] minus `self`, at least zero).
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + duration`, `None` on overflow.
    #[must_use]
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_add(duration).map(Instant::from_std)
    }

    /// `self - duration`, `None` on underflow.
    #[must_use]
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_sub(duration).map(Instant::from_std)
    }

    /// `self + duration`, the duration capped at [`FAR_FUTURE`] (about 30
    /// years, tokio's cap too), so `sleep(Duration::MAX)` neither panics
    /// nor overflows.
    pub(crate) fn saturating_add(self, duration: Duration) -> Instant {
        let capped = duration.min(FAR_FUTURE);
        self.checked_add(capped)
            .or_else(|| self.checked_add(capped / 2))
            .unwrap_or(self)
    }
}

/// The longest delay a timer honours: about 30 years. Longer ones wait this
/// long (a deadline that far out is "never" for any program).
pub const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(instant: Instant) -> std::time::Instant {
        instant.into_std()
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    ///
    /// On overflow, as `std::time::Instant`; use [`Instant::checked_add`].
    fn add(self, rhs: Duration) -> Instant {
        Instant::from_std(self.std + rhs)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    fn sub(self, rhs: Duration) -> Instant {
        Instant::from_std(self.std - rhs)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// Saturates at zero, as `std::time::Instant` does.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::{FAR_FUTURE, Instant};

    const MS: Duration = Duration::from_millis(1);

    /// Every operation agrees with `std::time::Instant`'s.
    #[test]
    fn arithmetic_is_std_arithmetic() {
        let std_now = std::time::Instant::now();
        let now = Instant::from_std(std_now);
        let later = now + 5 * MS;
        assert_eq!(later.duration_since(now), 5 * MS);
        assert_eq!(now.duration_since(later), Duration::ZERO, "saturates");
        assert_eq!(later.checked_duration_since(now), Some(5 * MS));
        assert_eq!(now.checked_duration_since(later), None);
        assert_eq!(later.saturating_duration_since(now), 5 * MS);
        assert_eq!(later - now, 5 * MS);
        assert_eq!((later - 2 * MS).into_std(), std_now + 3 * MS);
        assert_eq!(
            later.checked_sub(2 * MS).map(Instant::into_std),
            Some(std_now + 3 * MS)
        );
        assert_eq!(
            later.checked_add(2 * MS).map(Instant::into_std),
            Some(std_now + 7 * MS)
        );
        let mut moved = now;
        moved += 4 * MS;
        assert_eq!(moved.into_std(), std_now + 4 * MS);
        moved -= MS;
        assert_eq!(moved.into_std(), std_now + 3 * MS);
    }

    /// The latest instant `std` can represent from `start` (to the second).
    fn last_representable(start: std::time::Instant) -> std::time::Instant {
        let (mut fits, mut overflows) = (0u64, u64::MAX);
        while overflows - fits > 1 {
            let middle = fits + (overflows - fits) / 2;
            if start.checked_add(Duration::from_secs(middle)).is_some() {
                fits = middle;
            } else {
                overflows = middle;
            }
        }
        start + Duration::from_secs(fits)
    }

    /// Near the end of the clock's range, where `FAR_FUTURE` no longer
    /// fits, a deadline still lands ahead (half of it), not at `self`
    /// (which would make a `sleep(Duration::MAX)` there end at once).
    #[test]
    fn saturating_add_near_the_end_of_the_clock_still_lands_ahead() {
        let end = last_representable(std::time::Instant::now());
        let late = Instant::from_std(end - FAR_FUTURE * 3 / 4);
        assert!(late.checked_add(FAR_FUTURE).is_none());
        assert_eq!(late.saturating_add(Duration::MAX), late + FAR_FUTURE / 2);
        let now = Instant::now();
        assert_eq!(now.saturating_add(Duration::MAX), now + FAR_FUTURE);
    }
}
