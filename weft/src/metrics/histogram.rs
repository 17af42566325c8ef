//! The poll-time histogram: log2 buckets of sampled poll durations.
//!
//! Timing every poll would cost two clock reads (~50 ns here) on a path
//! that is ~150 ns for a tiny task, so a worker times one poll in every
//! `poll_time_sample_every` (Builder setting, default 16; 1 times every
//! poll). The sample is by count, not by time, so it estimates the
//! distribution over polls without favouring long ones; `count` says how
//! many polls were timed.

use std::time::Duration;

use super::events::EventCounter;

/// Number of buckets in a [`PollTimeHistogram`].
pub const POLL_TIME_BUCKETS: usize = 20;

/// Polls shorter than this land in bucket 0.
const FIRST_UPPER_NS: u64 = 256;

/// Sampled poll durations in log2 buckets.
///
/// Bucket 0 counts polls under 256 ns; bucket `k` (1 ≤ k ≤ 18) polls in
/// `[2^(k+7), 2^(k+8))` ns; bucket 19 polls of 2^26 ns (~67 ms) or more.
///
/// ```
/// use weft::metrics::PollTimeHistogram;
/// use std::time::Duration;
///
/// assert_eq!(PollTimeHistogram::bucket_of(Duration::from_nanos(100)), 0);
/// assert_eq!(PollTimeHistogram::bucket_of(Duration::from_nanos(300)), 1);
/// assert_eq!(PollTimeHistogram::bucket_upper_bound(0), Some(Duration::from_nanos(256)));
/// assert_eq!(PollTimeHistogram::bucket_upper_bound(19), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PollTimeHistogram {
    /// Timed polls per bucket.
    pub buckets: [u64; POLL_TIME_BUCKETS],
    /// Sum of the timed polls' durations, in nanoseconds.
    pub sum_ns: u64,
}

impl PollTimeHistogram {
    /// The bucket a poll of `duration` falls in.
    pub fn bucket_of(duration: Duration) -> usize {
        let ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        if ns < FIRST_UPPER_NS {
            return 0;
        }
        // ns >= 256: floor(log2(ns)) >= 8; bucket 1 starts at 2^8.
        let bucket = (63 - ns.leading_zeros()) as usize - 7;
        bucket.min(POLL_TIME_BUCKETS - 1)
    }

    /// Exclusive upper bound of bucket `k`; `None` for the last (unbounded)
    /// bucket or past the end.
    pub fn bucket_upper_bound(k: usize) -> Option<Duration> {
        (k < POLL_TIME_BUCKETS - 1).then(|| Duration::from_nanos(FIRST_UPPER_NS << k))
    }

    /// Number of timed polls.
    pub fn count(&self) -> u64 {
        self.buckets.iter().fold(0, |sum, n| sum.wrapping_add(*n))
    }

    /// Mean duration of the timed polls.
    pub fn mean(&self) -> Option<Duration> {
        let count = self.count();
        (count > 0).then(|| Duration::from_nanos(self.sum_ns / count))
    }

    /// Bucket-wise `self - earlier`.
    pub fn delta(&self, earlier: &PollTimeHistogram) -> PollTimeHistogram {
        let mut delta = *self;
        for (bucket, before) in delta.buckets.iter_mut().zip(earlier.buckets) {
            *bucket = bucket.wrapping_sub(before);
        }
        delta.sum_ns = delta.sum_ns.wrapping_sub(earlier.sum_ns);
        delta
    }

    pub(crate) fn accumulate(&mut self, other: &PollTimeHistogram) {
        for (bucket, more) in self.buckets.iter_mut().zip(other.buckets) {
            *bucket = bucket.wrapping_add(more);
        }
        self.sum_ns = self.sum_ns.wrapping_add(other.sum_ns);
    }
}

/// The single-writer recording side, one per worker.
#[derive(Debug, Default)]
pub(crate) struct PollTimeRecorder {
    buckets: [EventCounter; POLL_TIME_BUCKETS],
    sum_ns: EventCounter,
}

impl PollTimeRecorder {
    pub(crate) fn record(&self, duration: Duration) {
        self.buckets[PollTimeHistogram::bucket_of(duration)].incr();
        self.sum_ns
            .add(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX));
    }

    pub(crate) fn snapshot(&self) -> PollTimeHistogram {
        let mut histogram = PollTimeHistogram::default();
        for (out, bucket) in histogram.buckets.iter_mut().zip(&self.buckets) {
            *out = bucket.get();
        }
        histogram.sum_ns = self.sum_ns.get();
        histogram
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const NS: Duration = Duration::from_nanos(1);

    /// The buckets as documented: bucket 0 under 256 ns, bucket `k` from
    /// `256 << (k - 1)` to `256 << k` ns, the last one unbounded; and
    /// `bucket_of` agrees with `bucket_upper_bound` at every edge.
    #[test]
    fn bucket_edges_are_the_documented_powers_of_two() {
        assert_eq!(PollTimeHistogram::bucket_of(Duration::ZERO), 0);
        for k in 0..POLL_TIME_BUCKETS - 1 {
            let upper = PollTimeHistogram::bucket_upper_bound(k).unwrap();
            assert_eq!(upper, Duration::from_nanos(256 << k));
            assert_eq!(
                PollTimeHistogram::bucket_of(upper - NS),
                k,
                "below {upper:?}"
            );
            assert_eq!(PollTimeHistogram::bucket_of(upper), k + 1, "at {upper:?}");
        }
        assert_eq!(
            PollTimeHistogram::bucket_upper_bound(POLL_TIME_BUCKETS - 1),
            None
        );
        assert_eq!(
            PollTimeHistogram::bucket_upper_bound(POLL_TIME_BUCKETS),
            None
        );
        assert_eq!(
            PollTimeHistogram::bucket_of(Duration::MAX),
            POLL_TIME_BUCKETS - 1
        );
    }

    /// Recorded polls land in their buckets; the mean and a delta read
    /// them back.
    #[test]
    fn recorded_polls_give_counts_a_mean_and_deltas() {
        let recorder = PollTimeRecorder::default();
        assert_eq!(recorder.snapshot().mean(), None, "no poll timed yet");
        recorder.record(Duration::from_nanos(100));
        recorder.record(Duration::from_nanos(300));
        let earlier = recorder.snapshot();
        recorder.record(Duration::from_micros(2));
        recorder.record(Duration::from_nanos(300));
        let later = recorder.snapshot();
        assert_eq!(later.count(), 4);
        assert_eq!(later.buckets[0], 1);
        assert_eq!(later.buckets[1], 2);
        assert_eq!(
            later.buckets[PollTimeHistogram::bucket_of(Duration::from_micros(2))],
            1
        );
        assert_eq!(later.sum_ns, 2_700);
        assert_eq!(later.mean(), Some(Duration::from_nanos(675)));
        let delta = later.delta(&earlier);
        assert_eq!(delta.count(), 2);
        assert_eq!(delta.buckets[1], 1);
        assert_eq!(delta.sum_ns, 2_300);
        assert_eq!(delta.mean(), Some(Duration::from_nanos(1_150)));
        let mut total = earlier;
        total.accumulate(&delta);
        assert_eq!(total, later);
    }
}
