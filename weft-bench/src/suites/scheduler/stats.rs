//! Statistics over measured iterations: per-runtime summaries (median, min,
//! max, per-round medians and their spread, means of context switches and
//! counters) and weft's ratios to its peers, with the per-round check that
//! decides whether a ratio is resolved.
//!
//! Noise is read from the rounds: each round is one block of iterations per
//! runtime, and blocks alternate between runtimes, so a round's ratio is
//! weft against a peer under the same machine conditions. A ratio is
//! *resolved* only when every round's ratio lies on the same side of 1.0.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::common::figure::{Figure, Peer, WEFT};
use super::result::{Iterations, MEDIAN_MS, RuntimeResult};
use crate::common::stats::median;

/// Statistics of one workload on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Median iteration time, ms.
    pub median_ms: f64,
    /// Fastest iteration, ms.
    pub min_ms: f64,
    /// Slowest iteration, ms.
    pub max_ms: f64,
    /// Median of each round, ms.
    pub round_medians_ms: Vec<f64>,
    /// (largest − smallest round median) ÷ median, in percent.
    pub spread_pct: f64,
    /// Mean context switches per iteration, voluntary + involuntary.
    pub csw_per_iter: f64,
    /// Mean voluntary context switches per iteration.
    pub csw_voluntary_per_iter: f64,
    /// Mean involuntary context switches per iteration.
    pub csw_involuntary_per_iter: f64,
    /// Mean counter deltas per iteration (weft only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters_per_iter: BTreeMap<String, f64>,
}

/// Summarizes `iterations` split into rounds of `per_round`; `None` if
/// there is no iteration.
pub fn summarize(iterations: &Iterations, per_round: usize) -> Option<Summary> {
    let times = &iterations.ms;
    let median_ms = median(times)?;
    let round_medians_ms: Vec<f64> = times.chunks(per_round.max(1)).filter_map(median).collect();
    let (round_min, round_max) = min_max(&round_medians_ms);
    let (min_ms, max_ms) = min_max(times);
    let csw_voluntary_per_iter = mean(&iterations.csw_voluntary);
    let csw_involuntary_per_iter = mean(&iterations.csw_involuntary);
    Some(Summary {
        median_ms,
        min_ms,
        max_ms,
        spread_pct: (round_max - round_min) / median_ms * 100.0,
        round_medians_ms,
        csw_per_iter: csw_voluntary_per_iter + csw_involuntary_per_iter,
        csw_voluntary_per_iter,
        csw_involuntary_per_iter,
        counters_per_iter: iterations
            .counters
            .iter()
            .map(|(name, values)| (name.clone(), mean(values)))
            .collect(),
    })
}

/// weft's time divided by a peer's, overall and per round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The peer.
    pub peer: String,
    /// weft's median ÷ the peer's median.
    pub value: f64,
    /// The same per round (weft's round median ÷ the peer's).
    pub rounds: Vec<f64>,
    /// Every round's ratio lies on the same side of 1.0.
    pub resolved: bool,
}

impl Ratio {
    fn between(weft: &Summary, peer_name: &str, peer: &Summary) -> Ratio {
        let RoundRatio {
            value,
            rounds,
            resolved,
        } = RoundRatio::between(weft, peer);
        let peer = peer_name.to_owned();
        Ratio {
            peer,
            value,
            rounds,
            resolved,
        }
    }
}

/// One median over another, overall and per round (the metrics suite's
/// modes; [`Ratio`] names its peer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRatio {
    /// Ratio of the medians.
    pub value: f64,
    /// Ratio of the round medians, round by round.
    pub rounds: Vec<f64>,
    /// Every round's ratio lies on the same side of 1.0 (never with no
    /// round).
    pub resolved: bool,
}

impl RoundRatio {
    /// `a` over `b`.
    pub fn between(a: &Summary, b: &Summary) -> RoundRatio {
        let rounds: Vec<f64> = a
            .round_medians_ms
            .iter()
            .zip(&b.round_medians_ms)
            .map(|(a, b)| a / b)
            .collect();
        let resolved = !rounds.is_empty()
            && (rounds.iter().all(|&r| r < 1.0) || rounds.iter().all(|&r| r > 1.0));
        RoundRatio {
            value: a.median_ms / b.median_ms,
            rounds,
            resolved,
        }
    }
}

/// What a workload's ratio to the best peer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// weft was faster than the best peer in every round.
    Faster,
    /// weft was slower than the best peer in every round.
    Slower,
    /// The rounds disagree.
    Unresolved,
}

/// weft against its peers on one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Against the peer with the lowest median.
    pub best: Ratio,
    /// Against tokio, when tokio completed the workload.
    pub tokio: Option<Ratio>,
    /// What `best` says.
    pub verdict: Verdict,
}

/// Compares weft with every peer that completed the workload and passes
/// `include_peer` (the best peer as [`MEDIAN_MS`] picks it); `None` when
/// weft or every such peer failed or is absent.
pub fn compare(
    runtimes: &BTreeMap<String, RuntimeResult>,
    include_peer: impl Fn(&str) -> bool,
) -> Option<Comparison> {
    let weft = runtimes.get(WEFT)?.ok_summary()?;
    let ratio_to = |figure: Figure<Summary>| {
        let (peer, _) = figure.peer(runtimes, &include_peer)?;
        Some(Ratio::between(weft, peer, runtimes[peer].ok_summary()?))
    };
    let best = ratio_to(MEDIAN_MS)?;
    let tokio = ratio_to(MEDIAN_MS.with_peer(Peer::Tokio));
    let verdict = match (best.resolved, best.rounds.first()) {
        (true, Some(&r)) if r < 1.0 => Verdict::Faster,
        (true, Some(_)) => Verdict::Slower,
        _ => Verdict::Unresolved,
    };
    Some(Comparison {
        best,
        tokio,
        verdict,
    })
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

fn mean(values: &[u64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::Status;

    fn result(ms: &[f64]) -> RuntimeResult {
        let iterations = Iterations {
            ms: ms.to_vec(),
            csw_voluntary: vec![2; ms.len()],
            csw_involuntary: vec![1; ms.len()],
            ..Iterations::default()
        };
        RuntimeResult {
            summary: summarize(&iterations, 2),
            iterations,
            ..RuntimeResult::default()
        }
    }

    #[test]
    fn summary_splits_rounds() {
        let summary = result(&[1.0, 3.0, 2.0, 6.0]).summary.unwrap();
        assert_eq!(summary.round_medians_ms, vec![2.0, 4.0]);
        assert_eq!((summary.min_ms, summary.max_ms), (1.0, 6.0));
        assert_eq!(summary.spread_pct, 80.0); // (4 − 2) ÷ 2.5
        assert_eq!(summary.csw_per_iter, 3.0);
    }

    #[test]
    fn best_peer_is_the_fastest_and_rounds_resolve_the_ratio() {
        let runtimes = BTreeMap::from([
            ("weft".to_owned(), result(&[1.0, 1.0, 1.0, 1.0])),
            ("tokio".to_owned(), result(&[4.0, 4.0, 4.0, 4.0])),
            ("smol".to_owned(), result(&[0.9, 0.9, 1.2, 1.2])),
        ]);
        let comparison = compare(&runtimes, |_| true).unwrap();
        assert_eq!(comparison.best.peer, "smol");
        assert_eq!(comparison.verdict, Verdict::Unresolved);
        assert!(comparison.tokio.unwrap().resolved);
        let without_smol = compare(&runtimes, |peer| peer != "smol").unwrap();
        assert_eq!(without_smol.best.peer, "tokio");
        assert_eq!(without_smol.verdict, Verdict::Faster);
    }

    #[test]
    fn failed_runtimes_are_not_compared() {
        let mut failed = result(&[0.1, 0.1]);
        failed.status = Status::Failed;
        let runtimes = BTreeMap::from([
            ("weft".to_owned(), result(&[1.0, 1.0])),
            ("smol".to_owned(), failed),
        ]);
        assert_eq!(compare(&runtimes, |_| true), None);
    }
}
