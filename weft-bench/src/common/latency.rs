//! Latency histograms (`hdrhistogram`, microseconds, three significant
//! digits) and the percentiles the suite reports from them.
//!
//! A histogram rather than a sorted `Vec`: the generator records every
//! completion as it arrives, in constant time and memory, while it also
//! has arrivals to submit on time. Values beyond the histogram's range
//! (10 minutes) are clamped to it rather than lost, so a count is never
//! short.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The largest latency a histogram holds, µs; longer ones count as this.
const MAX_US: u64 = 600_000_000;

/// The latencies of one kind of request.
#[derive(Debug, Clone)]
pub struct Recorder {
    histogram: Histogram<u64>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// A recorder holding `latency` 100 times (for tests).
    #[cfg(test)]
    pub fn hundred(latency: Duration) -> Recorder {
        let mut recorder = Recorder::new();
        for _ in 0..100 {
            recorder.record(latency);
        }
        recorder
    }

    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder {
            histogram: Histogram::new_with_bounds(1, MAX_US, 3)
                .expect("constant, valid histogram bounds"),
        }
    }

    /// Records one latency (below 1 µs counts as 1 µs).
    pub fn record(&mut self, latency: Duration) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(MAX_US);
        self.histogram.saturating_record(us.clamp(1, MAX_US));
    }

    /// Adds every latency `other` recorded (the file suite pools its
    /// rounds).
    pub fn add(&mut self, other: &Recorder) {
        self.histogram
            .add(&other.histogram)
            .expect("recorders share their bounds");
    }

    /// How many latencies were recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The percentiles; `None` if nothing was recorded.
    pub fn summary(&self) -> Option<Percentiles> {
        if self.histogram.is_empty() {
            return None;
        }
        let ms = |quantile: f64| self.histogram.value_at_quantile(quantile) as f64 / 1e3;
        Some(Percentiles {
            count: self.histogram.len(),
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: self.histogram.max() as f64 / 1e3,
            mean_ms: self.histogram.mean() / 1e3,
        })
    }
}

/// Latency percentiles of one kind of request, milliseconds. Each is the
/// histogram's value at that quantile (within 0.1% of the recorded one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Latencies recorded.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// The longest.
    pub max_ms: f64,
    /// The mean.
    pub mean_ms: f64,
}

impl Percentiles {
    /// The labels of the five percentiles the tables and the chart show.
    pub const LABELS: [&'static str; 5] = ["p50", "p90", "p99", "p99.9", "max"];

    /// The five percentiles the chart draws, with their labels.
    pub fn charted(&self) -> [(&'static str, f64); 5] {
        let values = [
            self.p50_ms,
            self.p90_ms,
            self.p99_ms,
            self.p999_ms,
            self.max_ms,
        ];
        std::array::from_fn(|i| (Percentiles::LABELS[i], values[i]))
    }

    /// The five percentiles' cells in a table (`-` without latencies),
    /// printed by `format` (from ms).
    pub fn cells(percentiles: Option<&Percentiles>, format: fn(f64) -> String) -> Vec<String> {
        match percentiles {
            Some(p) => p.charted().iter().map(|&(_, v)| format(v)).collect(),
            None => vec!["-".to_owned(); 5],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= b * 0.002
    }

    #[test]
    fn percentiles_of_a_known_spread() {
        let mut recorder = Recorder::new();
        // 1 ms, 2 ms, ..., 1000 ms: the q-quantile is q × 1000 ms.
        for ms in 1..=1_000u64 {
            recorder.record(Duration::from_millis(ms));
        }
        let p = recorder.summary().unwrap();
        assert_eq!(p.count, 1_000);
        assert!(close(p.p50_ms, 500.0), "{p:?}");
        assert!(close(p.p90_ms, 900.0), "{p:?}");
        assert!(close(p.p99_ms, 990.0), "{p:?}");
        assert!(close(p.p999_ms, 999.0), "{p:?}");
        assert!(close(p.max_ms, 1_000.0), "{p:?}");
        assert!(close(p.mean_ms, 500.5), "{p:?}");
    }

    #[test]
    fn a_rare_tail_shows_only_above_its_quantile() {
        let mut recorder = Recorder::new();
        for _ in 0..995 {
            recorder.record(Duration::from_micros(150));
        }
        for _ in 0..5 {
            recorder.record(Duration::from_millis(50));
        }
        let p = recorder.summary().unwrap();
        assert!(close(p.p99_ms, 0.150), "{p:?}");
        assert!(close(p.p999_ms, 50.0), "{p:?}");
    }

    #[test]
    fn recorders_add_up() {
        let mut a = Recorder::new();
        a.record(Duration::from_millis(1));
        let mut b = Recorder::new();
        b.record(Duration::from_millis(3));
        a.add(&b);
        let p = a.summary().unwrap();
        assert_eq!(p.count, 2);
        assert!(close(p.max_ms, 3.0), "{p:?}");
    }

    #[test]
    fn extremes_are_clamped_not_lost() {
        let mut recorder = Recorder::new();
        recorder.record(Duration::ZERO);
        recorder.record(Duration::from_secs(3_600));
        assert_eq!(recorder.count(), 2);
        assert!(Recorder::new().summary().is_none());
    }
}
