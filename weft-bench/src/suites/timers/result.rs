//! What the timers suite measured: the `timers` field of the `--json`
//! document (absent from documents written before the suite existed, so
//! older baselines still parse), and weft's ratio to its best peer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::RowSpec;
use super::sizes::Sizes;
use crate::common::figure::rows::SuiteResult;
use crate::common::figure::{self, Attempt, PeerRatio, Status};
use crate::common::setup::SuiteSettings;
use crate::common::stats;

/// One run of the timers suite. In JSON:
///
/// ```jsonc
/// "timers": {                                    // absent when the suite did not run
///   "settings": { "profile": "quick", "workers": 2, "runtimes": ["weft", "tokio", "smol"],
///                 "sizes": { "arm_cancel_iterations": 200000, "arm_cancel_repetitions": 5,
///                            "rss_timers": 1000000, "spread_timers": 100000, … } },
///   "rows": [{
///     "name": "arm_cancel_ns", "unit": "ns",
///     "runtimes": {
///       "weft": { "status": "ok", "value": 119.2,            // the median of the repetitions
///                 "repetitions": [121.0, 118.7, 119.2, 125.3, 117.9] },
///       "tokio": { … }, "smol": { … }                        // failed: "status": "failed", "error": "…"
///     },
///     "best": { "peer": "tokio", "value": 0.94 }             // weft ÷ lowest peer; null if none (or it is 0)
///   }, …],
///   "others_cpu_pct": 3.1,                       // other processes' share of the machine meanwhile
///   "warnings": ["…"]                            // absent when empty
/// }
/// ```
pub type TimersResult = SuiteResult<TimersSettings, TimerRow>;

/// How the timers suite was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimersSettings {
    /// Profile, workers of every runtime (`stuck_worker` uses at least 2),
    /// runtimes in the order each repetition ran them.
    #[serde(flatten)]
    pub suite: SuiteSettings,
    /// The sizes of every row.
    pub sizes: Sizes,
}

/// One row on every runtime. Every row is lower-is-better.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimerRow {
    /// The row's name, its unit included (`arm_cancel_ns`).
    pub name: String,
    /// The unit of every value.
    pub unit: String,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, TimerValue>,
    /// weft's value over the lowest peer's (below 1.0 weft is lower,
    /// better); absent when weft or every peer failed, or the lowest
    /// peer's value is zero.
    pub best: Option<PeerRatio>,
}

/// One row on one runtime.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerValue {
    /// Whether every repetition completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The median of the repetitions; present when `status` is `ok`.
    pub value: Option<f64>,
    /// Every repetition's value, in the order measured.
    pub repetitions: Vec<f64>,
}

impl TimerValue {
    /// A runtime that completed every repetition.
    pub fn ok(repetitions: Vec<f64>) -> TimerValue {
        TimerValue {
            value: stats::median(&repetitions),
            repetitions,
            ..TimerValue::default()
        }
    }

    /// A runtime that failed, keeping the repetitions it completed.
    pub fn failed(error: String, repetitions: Vec<f64>) -> TimerValue {
        TimerValue {
            status: Status::Failed,
            error: Some(error),
            value: None,
            repetitions,
        }
    }

    /// The value, if the runtime completed the row.
    pub fn ok_value(&self) -> Option<f64> {
        self.ok().copied()
    }
}

figure::impl_attempt!(TimerValue, value: f64);

figure::impl_row!(TimerRow, TimerValue);

impl TimerRow {
    /// A row from every runtime's value, with weft's ratio to the best peer.
    pub fn new(spec: &RowSpec, runtimes: BTreeMap<String, TimerValue>) -> TimerRow {
        TimerRow {
            name: spec.name.to_owned(),
            unit: spec.unit.to_owned(),
            best: spec.weft_ratio(&runtimes),
            runtimes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, f64)]) -> BTreeMap<String, TimerValue> {
        pairs
            .iter()
            .map(|&(name, v)| (name.to_owned(), TimerValue::ok(vec![v, v * 2.0, v])))
            .collect()
    }

    #[test]
    fn value_is_the_median_of_the_repetitions() {
        assert_eq!(TimerValue::ok(vec![3.0, 1.0, 2.0]).ok_value(), Some(2.0));
        let failed = TimerValue::failed("timed out".to_owned(), vec![1.0]);
        assert_eq!(failed.ok_value(), None);
    }

    #[test]
    fn ratio_is_to_the_lowest_peer_and_never_to_a_zero() {
        let spec = super::super::row_spec("drop_ms").unwrap();
        let row = TimerRow::new(
            spec,
            values(&[("weft", 1.0), ("tokio", 4.0), ("smol", 2.0)]),
        );
        let best = row.best.unwrap();
        assert_eq!((best.peer.as_str(), best.value), ("smol", 0.5));
        let zero = TimerRow::new(spec, values(&[("weft", 1.0), ("tokio", 0.0)]));
        assert_eq!(zero.best, None);
    }
}
