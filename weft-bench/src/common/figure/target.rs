//! Targets: a bound on one of weft's figures, or on its ratio to the
//! figure's peer, checked in one run and reported as met or missed. They
//! are goals, not a gate: a missed target never fails a run (`compare`,
//! against a baseline, is the gate).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Attempt, Figure, Peer, WEFT};

/// A target on weft's value of `figure`, or on its ratio to the figure's
/// peer (`ratio`), in the figure's direction: at most `limit` when lower
/// is better, at least it when higher is.
pub struct Target<F: 'static> {
    /// As the table reads it (`server CPU/req ≤ 0.91× tokio's`).
    pub label: &'static str,
    /// The figure.
    pub figure: Figure<F>,
    /// The bound, in the figure's unit or as a ratio.
    pub limit: f64,
    /// Whether the bound is on weft's ratio to the figure's peer.
    pub ratio: bool,
}

impl<F> Target<F> {
    /// A bound on weft's value.
    pub const fn value(label: &'static str, figure: Figure<F>, limit: f64) -> Self {
        Target {
            label,
            figure,
            limit,
            ratio: false,
        }
    }

    /// A bound on weft's ratio to the figure's peer.
    pub const fn ratio(label: &'static str, figure: Figure<F>, limit: f64) -> Self {
        Target {
            label,
            figure,
            limit,
            ratio: true,
        }
    }

    /// The figure's name in [`Check::figure`]: with `_vs_best` or
    /// `_vs_tokio` for a ratio.
    fn checked_name(&self) -> String {
        let suffix = match (self.ratio, self.figure.peer) {
            (false, _) | (true, Peer::None) => "",
            (true, Peer::Best) => "_vs_best",
            (true, Peer::Tokio) => "_vs_tokio",
        };
        format!("{}{suffix}", self.figure.name)
    }

    /// The target checked on `runs`: no value when weft (or, for a ratio,
    /// its peer) has none.
    pub fn check<A: Attempt<Figures = F>>(&self, runs: &BTreeMap<String, A>) -> Check {
        let value = if self.ratio {
            self.figure.weft_ratio(runs).map(|r| r.value)
        } else {
            runs.get(WEFT).and_then(|run| self.figure.of(run))
        };
        Check {
            runtime: WEFT.to_owned(),
            target: self.label.to_owned(),
            figure: self.checked_name(),
            limit: self.limit,
            value,
            met: value.map(|v| self.figure.better.meets(v, self.limit)),
        }
    }
}

/// Every target of `targets` checked on `runs`.
pub fn check_all<F, A: Attempt<Figures = F>>(
    targets: &[Target<F>],
    runs: &BTreeMap<String, A>,
) -> Vec<Check> {
    targets.iter().map(|t| t.check(runs)).collect()
}

/// One target checked for one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The runtime checked (`weft`, or a weft variant in the mixed suite).
    pub runtime: String,
    /// The target as the table reads it (`short p99 ≤ 10 ms`).
    pub target: String,
    /// The constrained figure as named in JSON: a value (`short_p99_ms`,
    /// `syscalls_per_req`) or a ratio (`long_per_s_vs_tokio`,
    /// `total_ms_vs_best`, `server_cpu_us_per_req_vs_tokio`).
    pub figure: String,
    /// The target's bound, in the figure's unit.
    pub limit: f64,
    /// The figure; `None` when the runtime (or its peer) has no result.
    pub value: Option<f64>,
    /// Whether the target was met; `None` when there is no value.
    pub met: Option<bool>,
}

impl Check {
    /// `met` / `missed` / `-`.
    pub fn verdict(&self) -> &'static str {
        verdict(self.met)
    }

    /// The value as the table prints it: a ratio as a percentage, a
    /// percentage (`_pct`) as one, ms, or the number.
    pub fn value_text(&self) -> String {
        match self.value {
            None => "-".to_owned(),
            Some(v) if self.figure.contains("_vs_") => format!("{:.0}%", v * 100.0),
            Some(v) if self.figure.ends_with("_pct") => format!("{v:.0}%"),
            Some(v) if self.figure.ends_with("_ms") => crate::common::table::ms(v),
            Some(v) => format!("{v:.3}"),
        }
    }

    /// `label: value verdict`, as a line of a suite's targets.
    pub fn line(&self) -> String {
        format!("{}: {} {}", self.target, self.value_text(), self.verdict())
    }
}

/// `met` / `missed` / `-` for a target's outcome.
pub fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "missed",
        None => "-",
    }
}

/// weft's targets as a table: each with weft's value and `met` or
/// `missed`.
pub fn table<'a>(checks: impl IntoIterator<Item = &'a Check>) -> crate::common::table::Table {
    let mut table = crate::common::table::Table::new(["target", WEFT]);
    for check in checks {
        let cell = format!("{} {}", check.value_text(), check.verdict());
        table.row(vec![check.target.clone(), cell]);
    }
    table
}
