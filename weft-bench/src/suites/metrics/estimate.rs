//! From one phase's samples to the figures the table shows: the reference
//! rate and, for every estimator, the mean and standard deviation of its
//! per-sample rates and its error.
//!
//! The estimators, each a rate per sample:
//!
//! - `swap ÷ nominal`: the test atomic's swapped count ÷ the nominal
//!   interval (the published way);
//! - `swap ÷ measured`: the same count ÷ the measured time since the
//!   previous swap;
//! - `Counter`: `Sample::rate_since` of consecutive `Counter::sample()`s
//!   (Δcount ÷ measured Δt);
//! - the baseline: the baseline atomic's count ÷ measured time, every 1 s.
//!
//! The reference (`exact`) is the phase's true mean rate: every
//! transaction counted in the window (the test atomic's swaps added up)
//! ÷ the window's measured length (first swap to last). The error of an
//! estimator is `mean ÷ exact − 1`, signed: negative is an under-count.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::suites::metrics::counting::{BaselineSamples, TestSamples};

/// An estimator's figures over one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Number of per-sample rates.
    pub samples: usize,
    /// Their mean, transactions/s.
    pub mean_tps: f64,
    /// Their standard deviation (n − 1); `None` under two samples.
    pub stddev_tps: Option<f64>,
    /// `mean ÷ exact − 1`, percent.
    pub err_pct: f64,
    /// `mean ÷ baseline mean − 1`, percent (the published error); absent
    /// for the baselines themselves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub err_vs_baseline_pct: Option<f64>,
}

/// Everything derived from one phase's samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// The reference: Σ swapped counts ÷ Σ measured Δt, transactions/s.
    pub exact_tps: f64,
    /// Σ Counter Δcounts ÷ Σ Counter Δt: the same window seen by the
    /// Counter (equal to `exact_tps` but for the instants of the reads).
    pub counter_window_tps: f64,
    /// Mean measured period of the test sampler, ms.
    pub period_mean_ms: f64,
    /// Longest measured period, ms.
    pub period_max_ms: f64,
    /// Baseline: count ÷ measured Δt, every second.
    pub baseline: Estimate,
    /// Baseline as published: count ÷ its nominal interval.
    pub baseline_nominal: Estimate,
    /// Test atomic, count ÷ nominal interval.
    pub swap_nominal: Estimate,
    /// Test atomic, count ÷ measured Δt.
    pub swap_measured: Estimate,
    /// `Counter` with `Sample::rate_since`.
    pub counter: Estimate,
}

/// Computes a phase's figures; `interval` and `base_interval` are the
/// nominal intervals of the test and baseline samplers.
pub fn figures(
    interval: Duration,
    base_interval: Duration,
    test: &TestSamples,
    base: &BaselineSamples,
) -> PhaseFigures {
    let exact_tps = ratio_of_sums(&test.swap_counts, &test.swap_dt_ns);
    let baseline_rates = measured_rates(&base.counts, &base.dt_ns);
    let baseline = estimate(&baseline_rates, exact_tps, None);
    let baseline_mean = Some(baseline.mean_tps);
    let nominal_s = interval.as_secs_f64();
    let nominal_rates: Vec<f64> = test
        .swap_counts
        .iter()
        .map(|&n| n as f64 / nominal_s)
        .collect();
    let base_nominal: Vec<f64> = base
        .counts
        .iter()
        .map(|&n| n as f64 / base_interval.as_secs_f64())
        .collect();
    let periods_ms: Vec<f64> = test.swap_dt_ns.iter().map(|&ns| ns as f64 / 1e6).collect();
    PhaseFigures {
        exact_tps,
        counter_window_tps: ratio_of_sums(&test.counter_counts, &test.counter_dt_ns),
        period_mean_ms: mean(&periods_ms),
        period_max_ms: periods_ms.iter().copied().fold(0.0, f64::max),
        baseline,
        baseline_nominal: estimate(&base_nominal, exact_tps, None),
        swap_nominal: estimate(&nominal_rates, exact_tps, baseline_mean),
        swap_measured: estimate(
            &measured_rates(&test.swap_counts, &test.swap_dt_ns),
            exact_tps,
            baseline_mean,
        ),
        counter: estimate(&test.counter_tps, exact_tps, baseline_mean),
    }
}

/// The figures of per-sample `rates` against `exact` (and a baseline).
pub fn estimate(rates: &[f64], exact: f64, baseline: Option<f64>) -> Estimate {
    let mean_tps = mean(rates);
    Estimate {
        samples: rates.len(),
        mean_tps,
        stddev_tps: stddev(rates),
        err_pct: error_pct(mean_tps, exact),
        err_vs_baseline_pct: baseline.map(|b| error_pct(mean_tps, b)),
    }
}

/// `value ÷ reference − 1`, percent.
pub fn error_pct(value: f64, reference: f64) -> f64 {
    (value / reference - 1.0) * 100.0
}

/// `count ÷ Δt` per sample, transactions/s.
fn measured_rates(counts: &[u64], dt_ns: &[u64]) -> Vec<f64> {
    counts
        .iter()
        .zip(dt_ns)
        .map(|(&n, &ns)| n as f64 / (ns as f64 / 1e9))
        .collect()
}

/// Σ counts ÷ Σ Δt, transactions/s.
fn ratio_of_sums(counts: &[u64], dt_ns: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let seconds = dt_ns.iter().sum::<u64>() as f64 / 1e9;
    total as f64 / seconds
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation; `None` under two values.
fn stddev(values: &[f64]) -> Option<f64> {
    (values.len() >= 2).then(|| {
        let m = mean(values);
        let squares: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
        (squares / (values.len() - 1) as f64).sqrt()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_samples(counts: &[u64], dt_ms: &[u64]) -> TestSamples {
        let dt_ns: Vec<u64> = dt_ms.iter().map(|ms| ms * 1_000_000).collect();
        TestSamples {
            swap_counts: counts.to_vec(),
            swap_dt_ns: dt_ns.clone(),
            counter_counts: counts.to_vec(),
            counter_tps: measured_rates(counts, &dt_ns),
            counter_dt_ns: dt_ns,
        }
    }

    /// The figures of a 10 ms sampler's samples, with the 1 s baseline's.
    fn figures_at_10ms(test: &TestSamples, base: &BaselineSamples) -> PhaseFigures {
        figures(
            Duration::from_millis(10),
            Duration::from_secs(1),
            test,
            base,
        )
    }

    #[test]
    fn late_samplers_inflate_only_the_nominal_rate() {
        // 1,000 TPS exactly; a 10 ms sampler that really wakes every 12 ms.
        let test = test_samples(&[12, 12, 12], &[12, 12, 12]);
        let base = BaselineSamples {
            counts: vec![1000],
            dt_ns: vec![1_000_000_000],
        };
        let f = figures_at_10ms(&test, &base);
        assert!((f.exact_tps - 1000.0).abs() < 1e-9);
        assert!((f.swap_nominal.err_pct - 20.0).abs() < 1e-9);
        assert!(f.swap_measured.err_pct.abs() < 1e-9);
        assert!(f.counter.err_pct.abs() < 1e-9);
        assert_eq!(f.swap_measured.stddev_tps, Some(0.0));
        assert_eq!(f.baseline.stddev_tps, None);
        assert!((f.period_mean_ms - 12.0).abs() < 1e-9);
    }

    #[test]
    fn a_mean_of_rates_over_uneven_intervals_differs_from_the_exact_rate() {
        // 10 in 5 ms, then 10 in 15 ms: exact 1,000/s, mean of rates 1,333/s.
        let test = test_samples(&[10, 10], &[5, 15]);
        let f = figures_at_10ms(&test, &BaselineSamples::default());
        assert!((f.exact_tps - 1000.0).abs() < 1e-9);
        assert!((f.swap_measured.err_pct - 100.0 / 3.0).abs() < 1e-9);
        assert!((stddev(&[1.0, 3.0]).unwrap() - 2f64.sqrt()).abs() < 1e-12);
    }
}
