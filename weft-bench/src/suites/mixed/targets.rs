//! The mixed suite's targets (DESIGN.md point 2: what suites and the stall
//! monitor are for), checked for every weft variant and reported as met
//! or missed. They are goals, not a gate: a missed target never fails a
//! run (`compare` is the gate, against a baseline).
//!
//! | load | targets |
//! |---|---|
//! | `closed_32_2` | short p99 ≤ 10 ms; long throughput ≥ 80% of tokio's |
//! | `closed_128_8` | short p99 ≤ 40 ms; long throughput ≥ 80% of tokio's |
//! | `open_2000` | short p99 ≤ 2 ms, p99.9 ≤ 5 ms; long throughput ≥ 90% of tokio's; CPU ≤ 110% of tokio's |
//!
//! The throughput and CPU targets are relative to tokio measured in the
//! same run, so they hold on any machine; the latency targets are absolute
//! (a short request is 150 µs of CPU wherever it runs).

pub use crate::common::figure::target::Check;

use super::Load;
use super::result::Figures;

/// One target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Short-request p99 at most this many ms.
    ShortP99AtMost(f64),
    /// Short-request p99.9 at most this many ms.
    ShortP999AtMost(f64),
    /// Long throughput at least this fraction of tokio's.
    LongVsTokioAtLeast(f64),
    /// CPU per second at most this fraction of tokio's.
    CpuVsTokioAtMost(f64),
}

impl Rule {
    /// The targets of `load`.
    pub fn of(load: Load) -> &'static [Rule] {
        match load {
            Load::Closed32x2 => &[Rule::ShortP99AtMost(10.0), Rule::LongVsTokioAtLeast(0.8)],
            Load::Closed128x8 => &[Rule::ShortP99AtMost(40.0), Rule::LongVsTokioAtLeast(0.8)],
            Load::Open2000 => &[
                Rule::ShortP99AtMost(2.0),
                Rule::ShortP999AtMost(5.0),
                Rule::LongVsTokioAtLeast(0.9),
                Rule::CpuVsTokioAtMost(1.1),
            ],
        }
    }

    /// How the target reads in the table.
    pub fn describe(self) -> String {
        match self {
            Rule::ShortP99AtMost(ms) => format!("short p99 ≤ {ms} ms"),
            Rule::ShortP999AtMost(ms) => format!("short p99.9 ≤ {ms} ms"),
            Rule::LongVsTokioAtLeast(f) => format!("long/s ≥ {:.0}% of tokio's", f * 100.0),
            Rule::CpuVsTokioAtMost(f) => format!("CPU ≤ {:.0}% of tokio's", f * 100.0),
        }
    }

    /// The figure it constrains, as named in JSON.
    fn figure(self) -> &'static str {
        match self {
            Rule::ShortP99AtMost(_) => "short_p99_ms",
            Rule::ShortP999AtMost(_) => "short_p999_ms",
            Rule::LongVsTokioAtLeast(_) => "long_per_s_vs_tokio",
            Rule::CpuVsTokioAtMost(_) => "cpu_vs_tokio",
        }
    }

    fn limit(self) -> f64 {
        match self {
            Rule::ShortP99AtMost(v)
            | Rule::ShortP999AtMost(v)
            | Rule::LongVsTokioAtLeast(v)
            | Rule::CpuVsTokioAtMost(v) => v,
        }
    }

    /// The constrained value for a runtime whose figures are `own`, with
    /// tokio's in the same run; `None` when either is missing.
    fn value(self, own: &Figures, tokio: Option<&Figures>) -> Option<f64> {
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        match self {
            Rule::ShortP99AtMost(_) => own.short.as_ref().map(|p| p.p99_ms),
            Rule::ShortP999AtMost(_) => own.short.as_ref().map(|p| p.p999_ms),
            Rule::LongVsTokioAtLeast(_) => ratio(own.long_per_s, tokio?.long_per_s),
            Rule::CpuVsTokioAtMost(_) => ratio(own.window.cpu_ms_per_s, tokio?.window.cpu_ms_per_s),
        }
    }

    fn met(self, value: f64) -> bool {
        match self {
            Rule::LongVsTokioAtLeast(limit) => value >= limit,
            Rule::ShortP99AtMost(limit)
            | Rule::ShortP999AtMost(limit)
            | Rule::CpuVsTokioAtMost(limit) => value <= limit,
        }
    }

    /// Checks the target for `runtime`.
    pub fn check(self, runtime: &str, own: Option<&Figures>, tokio: Option<&Figures>) -> Check {
        let value = own.and_then(|own| self.value(own, tokio));
        Check {
            runtime: runtime.to_owned(),
            target: self.describe(),
            figure: self.figure().to_owned(),
            limit: self.limit(),
            value,
            met: value.map(|v| self.met(v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Window;
    use crate::common::latency::Percentiles;

    fn figures(p99: f64, long_per_s: f64, cpu: f64) -> Figures {
        Figures {
            window: Window {
                window_s: 1.5,
                cpu_ms_per_s: cpu,
                unfinished: 0,
                others_cpu_pct: None,
            },
            short_per_s: 1_000.0,
            long_per_s,
            short: Some(Percentiles {
                count: 100,
                p50_ms: 1.0,
                p90_ms: 2.0,
                p99_ms: p99,
                p999_ms: p99 * 2.0,
                max_ms: p99 * 3.0,
                mean_ms: 1.0,
            }),
            long: None,
            submit_lag_p99_ms: None,
            short_from_submit: None,
            monitor: None,
            threads_started_per_s: None,
        }
    }

    #[test]
    fn targets_are_met_or_missed_against_tokio() {
        let tokio = figures(100.0, 20.0, 1_900.0);
        let weft = figures(8.0, 15.0, 2_200.0);
        let checks: Vec<(String, Option<bool>)> = Rule::of(Load::Open2000)
            .iter()
            .map(|rule| rule.check("weft", Some(&weft), Some(&tokio)))
            .map(|c| (c.value_text(), c.met))
            .collect();
        assert_eq!(
            checks,
            [
                ("8.00".to_owned(), Some(false)),
                ("16.0".to_owned(), Some(false)),
                ("75%".to_owned(), Some(false)),
                ("116%".to_owned(), Some(false)),
            ]
        );
        let check = Rule::LongVsTokioAtLeast(0.8).check("weft", Some(&weft), None);
        assert_eq!((check.value, check.verdict()), (None, "-"));
        let check = Rule::ShortP99AtMost(10.0).check("weft", Some(&weft), None);
        assert_eq!(check.verdict(), "met");
    }
}
