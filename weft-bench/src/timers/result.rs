//! What the timers lane measured: the `timers` field of the `--json`
//! document (absent from documents written before the lane existed, so
//! older baselines still parse), and weft's ratio to its best peer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::RowSpec;
use super::sizes::Sizes;
use crate::json::Status;
use crate::runtimes::RuntimeKind;
use crate::stats;

/// One run of the timers lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimersResult {
    /// How it was measured.
    pub settings: TimersSettings,
    /// One entry per row, in the order measured.
    pub rows: Vec<TimerRow>,
    /// Percent of the machine other processes used during the lane, where
    /// `/proc` tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Anything that may have skewed the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// How the timers lane was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimersSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime (`stuck_worker` uses at least 2).
    pub workers: usize,
    /// The runtimes, in the order each repetition ran them.
    pub runtimes: Vec<String>,
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
    /// weft's value over the lowest peer's; absent when weft or every peer
    /// failed, or the lowest peer's value is zero.
    pub best: Option<BestRatio>,
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
        self.value.filter(|_| self.status == Status::Ok)
    }
}

/// weft's value over a peer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestRatio {
    /// The peer with the lowest value.
    pub peer: String,
    /// weft's value ÷ the peer's. Below 1.0 weft is lower (better).
    pub value: f64,
}

impl TimerRow {
    /// A row from every runtime's value, with weft's ratio to the best peer.
    pub fn new(spec: &RowSpec, runtimes: BTreeMap<String, TimerValue>) -> TimerRow {
        TimerRow {
            name: spec.name.to_owned(),
            unit: spec.unit.to_owned(),
            best: best_ratio(&runtimes, |_| true),
            runtimes,
        }
    }

    /// weft's value, if it completed the row.
    pub fn weft(&self) -> Option<f64> {
        self.runtimes.get(RuntimeKind::Weft.name())?.ok_value()
    }
}

/// weft over the lowest of the peers that completed the row and pass
/// `include_peer`; `None` when there is none, weft failed, or that peer's
/// value is zero.
pub fn best_ratio(
    runtimes: &BTreeMap<String, TimerValue>,
    include_peer: impl Fn(&str) -> bool,
) -> Option<BestRatio> {
    let weft = runtimes.get(RuntimeKind::Weft.name())?.ok_value()?;
    let (peer, value) = runtimes
        .iter()
        .filter(|(name, _)| *name != RuntimeKind::Weft.name() && include_peer(name))
        .filter_map(|(name, value)| Some((name, value.ok_value()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    (value > 0.0).then(|| BestRatio {
        peer: peer.clone(),
        value: weft / value,
    })
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
    fn ratio_is_to_the_lowest_peer() {
        let runtimes = values(&[("weft", 1.0), ("tokio", 4.0), ("smol", 2.0)]);
        let best = best_ratio(&runtimes, |_| true).unwrap();
        assert_eq!((best.peer.as_str(), best.value), ("smol", 0.5));
        let best = best_ratio(&runtimes, |peer| peer != "smol").unwrap();
        assert_eq!((best.peer.as_str(), best.value), ("tokio", 0.25));
    }

    #[test]
    fn no_ratio_to_a_zero() {
        let runtimes = values(&[("weft", 1.0), ("tokio", 0.0)]);
        assert_eq!(best_ratio(&runtimes, |_| true), None);
    }
}
