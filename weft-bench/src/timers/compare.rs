//! The timers lane's part of `weft-bench compare`: for every row of BASE,
//! weft's value and its ratio to the best peer, `base → new`.
//!
//! * weft's value is gated only when both documents come from the same
//!   machine: it regresses when it grows by more than the tolerance *and*
//!   by more than the row's floor ([`RowSpec::floor`](super::RowSpec)),
//!   below which a change is noise (a few µs of lateness, a few ns of CPU).
//! * `÷best` is recomputed over the peers that completed the row in both
//!   documents (a peer only NEW has cannot make weft regress) and gated on
//!   any machine: it regresses when it grows by more than the tolerance
//!   *and* its growth, in weft's unit at the new peer's value
//!   (`(new ÷best − base ÷best) × new peer`), exceeds the row's floor. A
//!   ratio over a peer's few µs or near-zero CPU swings by multiples
//!   between re-runs while meaning a few µs; this keeps it from failing
//!   the gate.
//!
//! A row weft failed in NEW, or that NEW lacks, fails; a row (or the whole
//! lane) that BASE lacks is listed as new and passes.

use std::collections::BTreeMap;

use super::result::{TimerRow, TimerValue, TimersResult, best_ratio};
use super::row_spec;
use crate::json::Status;
use crate::runtimes::RuntimeKind;
use crate::table::{self, Table};

/// What may grow, and by how much.
#[derive(Debug, Clone, Copy)]
pub struct TimerGate {
    /// Allowed growth, percent, of weft's values and ratios.
    pub tolerance_pct: f64,
    /// Whether weft's values (absolute) are gated.
    pub same_machine: bool,
}

/// One row compared.
#[derive(Debug, Clone)]
pub struct RowDelta {
    /// The row's name.
    pub name: String,
    /// weft's value: base, new, whether it regressed.
    pub value: Option<(f64, f64, bool)>,
    /// weft's ratio to the best common peer: base, new, whether it regressed.
    pub ratio: Option<(f64, f64, bool)>,
    /// The best common peer in base and in new.
    pub peers: Option<(String, String)>,
    /// `None` when it passes; why it failed otherwise.
    pub failure: Option<String>,
    /// Only NEW has it.
    pub added: bool,
}

impl RowDelta {
    fn new(name: &str) -> RowDelta {
        RowDelta {
            name: name.to_owned(),
            value: None,
            ratio: None,
            peers: None,
            failure: None,
            added: false,
        }
    }

    /// Whether the row passes the gate.
    pub fn passes(&self) -> bool {
        self.failure.is_none()
    }

    fn verdict(&self) -> String {
        match &self.failure {
            Some(why) => why.clone(),
            None if self.added => "new row".to_owned(),
            None => "ok".to_owned(),
        }
    }
}

impl TimerGate {
    /// Compares the timers lanes of two documents: the delta table and its
    /// legend (nothing when neither has the lane), and whether NEW passed.
    pub fn check(self, base: Option<&TimersResult>, new: Option<&TimersResult>) -> (String, bool) {
        let deltas = compare(base, new, self);
        if deltas.is_empty() {
            return (String::new(), true);
        }
        let text = format!(
            "\n{}timers: weft's value is gated on the same machine only, ÷best always; a change \
             below a row's floor is noise\n",
            table(&deltas).render()
        );
        (text, deltas.iter().all(RowDelta::passes))
    }
}

/// Compares the timers lanes of two documents (either may lack it).
pub fn compare(
    base: Option<&TimersResult>,
    new: Option<&TimersResult>,
    gate: TimerGate,
) -> Vec<RowDelta> {
    let base_rows = base.map_or(&[][..], |b| &b.rows);
    let new_rows = new.map_or(&[][..], |n| &n.rows);
    let mut deltas: Vec<RowDelta> = base_rows
        .iter()
        .map(|b| compare_row(b, new_rows.iter().find(|n| n.name == b.name), gate))
        .collect();
    let added = new_rows
        .iter()
        .filter(|n| base_rows.iter().all(|b| b.name != n.name));
    deltas.extend(added.map(|n| RowDelta {
        added: true,
        ..RowDelta::new(&n.name)
    }));
    deltas
}

fn compare_row(base: &TimerRow, new: Option<&TimerRow>, gate: TimerGate) -> RowDelta {
    let mut delta = RowDelta::new(&base.name);
    let Some(new) = new else {
        delta.failure = Some("FAILED: missing from NEW".to_owned());
        return delta;
    };
    let Some(new_weft) = new.weft() else {
        delta.failure = Some(format!("FAILED: {}", weft_error(new)));
        return delta;
    };
    // A row weft failed in BASE has nothing to regress from.
    let Some(base_weft) = base.weft() else {
        return delta;
    };
    let floor = row_spec(&base.name).map_or(0.0, |spec| spec.floor);
    let grew = |from: f64, to: f64| to - from > from * gate.tolerance_pct / 100.0;
    let value_regressed =
        gate.same_machine && grew(base_weft, new_weft) && new_weft - base_weft > floor;
    delta.value = Some((base_weft, new_weft, value_regressed));
    let in_both = |peer: &str| completed(&base.runtimes, peer) && completed(&new.runtimes, peer);
    if let (Some(b), Some(n)) = (
        best_ratio(&base.runtimes, in_both),
        best_ratio(&new.runtimes, in_both),
    ) {
        // The ratio's growth in weft's unit, at the new peer's value.
        let new_peer = new.runtimes.get(&n.peer).and_then(TimerValue::ok_value);
        let implied = (n.value - b.value) * new_peer.unwrap_or(0.0);
        let regressed = grew(b.value, n.value) && implied > floor;
        delta.ratio = Some((b.value, n.value, regressed));
        delta.peers = Some((b.peer, n.peer));
    }
    let mut what = Vec::new();
    if value_regressed {
        what.push("weft");
    }
    if delta.ratio.is_some_and(|r| r.2) {
        what.push("÷best");
    }
    if !what.is_empty() {
        delta.failure = Some(format!("REGRESSED: {}", what.join(", ")));
    }
    delta
}

fn completed(runtimes: &BTreeMap<String, TimerValue>, peer: &str) -> bool {
    runtimes.get(peer).is_some_and(|v| v.ok_value().is_some())
}

fn weft_error(row: &TimerRow) -> String {
    match row.runtimes.get(RuntimeKind::Weft.name()) {
        None => "weft did not run".to_owned(),
        Some(v) if v.status == Status::Failed => {
            v.error.clone().unwrap_or_else(|| "weft failed".to_owned())
        }
        Some(_) => "weft has no value".to_owned(),
    }
}

/// The delta table of the timers rows.
pub fn table(deltas: &[RowDelta]) -> Table {
    let mut table = Table::new(["timer row", "weft", "÷best", "best peer", "result"]);
    let cell = |figure: Option<(f64, f64, bool)>, format: fn(f64) -> String| {
        figure.map_or("-".to_owned(), |(base, new, regressed)| {
            let mark = if regressed { " !" } else { "" };
            let change = table::delta_pct(base, new);
            format!("{} → {} {change}{mark}", format(base), format(new))
        })
    };
    for delta in deltas {
        table.row(vec![
            delta.name.clone(),
            cell(delta.value, table::ms),
            cell(delta.ratio, |v| format!("{v:.2}")),
            match &delta.peers {
                Some((b, n)) if b == n => b.clone(),
                Some((b, n)) => format!("{b} → {n}"),
                None => "-".to_owned(),
            },
            delta.verdict(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timers::result::TimersSettings;
    use crate::timers::sizes::Sizes;
    use crate::timers::{Experiment, RowSpec};

    fn spec(name: &str) -> &'static RowSpec {
        row_spec(name).unwrap()
    }

    /// A lane with one row per `(row, [(runtime, value)])`.
    fn lane(rows: &[(&str, &[(&str, f64)])]) -> TimersResult {
        let rows = rows
            .iter()
            .map(|&(name, values)| {
                let runtimes = values
                    .iter()
                    .map(|&(rt, v)| (rt.to_owned(), TimerValue::ok(vec![v])))
                    .collect();
                TimerRow::new(spec(name), runtimes)
            })
            .collect();
        TimersResult {
            settings: TimersSettings {
                profile: "quick".to_owned(),
                workers: 2,
                runtimes: vec!["weft".to_owned(), "tokio".to_owned(), "smol".to_owned()],
                sizes: Sizes::tiny(),
            },
            rows,
            others_cpu_pct: None,
            warnings: Vec::new(),
        }
    }

    fn verdicts(
        base: Option<&TimersResult>,
        new: Option<&TimersResult>,
        same: bool,
    ) -> Vec<String> {
        let gate = TimerGate {
            tolerance_pct: 50.0,
            same_machine: same,
        };
        compare(base, new, gate)
            .iter()
            .map(RowDelta::verdict)
            .collect()
    }

    const BASE: &[(&str, f64)] = &[("weft", 100.0), ("tokio", 200.0), ("smol", 400.0)];

    #[test]
    fn within_tolerance_passes_and_growth_beyond_it_regresses() {
        let base = lane(&[("arm_cancel_ns", BASE)]);
        let rerun = lane(&[(
            "arm_cancel_ns",
            &[("weft", 140.0), ("tokio", 210.0), ("smol", 390.0)],
        )]);
        assert_eq!(verdicts(Some(&base), Some(&rerun), true), ["ok"]);
        let slower = lane(&[(
            "arm_cancel_ns",
            &[("weft", 300.0), ("tokio", 200.0), ("smol", 400.0)],
        )]);
        assert_eq!(
            verdicts(Some(&base), Some(&slower), true),
            ["REGRESSED: weft, ÷best"]
        );
        // On another machine weft's value is not gated; its ratio still is.
        assert_eq!(
            verdicts(Some(&base), Some(&slower), false),
            ["REGRESSED: ÷best"]
        );
    }

    #[test]
    fn growth_below_the_floor_is_noise() {
        let base = lane(&[("idle_cpu_ms_per_s", &[("weft", 0.1), ("tokio", 0.2)])]);
        let new = lane(&[("idle_cpu_ms_per_s", &[("weft", 0.9), ("tokio", 0.2)])]);
        assert_eq!(verdicts(Some(&base), Some(&new), true), ["ok"]);
        // The ratio triples, but over a peer of 30 µs: 60 µs is noise here.
        let base = lane(&[(
            "stuck_worker_late_max_us",
            &[("weft", 100.0), ("smol", 100.0)],
        )]);
        let new = lane(&[(
            "stuck_worker_late_max_us",
            &[("weft", 90.0), ("smol", 30.0)],
        )]);
        assert_eq!(verdicts(Some(&base), Some(&new), false), ["ok"]);
    }

    #[test]
    fn missing_failed_and_new_rows() {
        let base = lane(&[("arm_cancel_ns", BASE), ("drop_ms", BASE)]);
        let mut new = lane(&[("arm_cancel_ns", BASE), ("spread_cpu_ms", BASE)]);
        let weft = new.rows[0].runtimes.get_mut("weft").unwrap();
        *weft = TimerValue::failed("no result within 60 s".to_owned(), Vec::new());
        assert_eq!(
            verdicts(Some(&base), Some(&new), true),
            [
                "FAILED: no result within 60 s",
                "FAILED: missing from NEW",
                "new row"
            ]
        );
        // A baseline from before the lane: every row is new.
        assert_eq!(verdicts(None, Some(&new), true), ["new row", "new row"]);
        assert_eq!(Experiment::Idle.rows()[1].name, "drop_ms");
    }

    #[test]
    fn a_peer_only_new_has_is_additive() {
        let base = lane(&[("drop_ms", &[("weft", 100.0), ("tokio", 200.0)])]);
        let new = lane(&[(
            "drop_ms",
            &[("weft", 100.0), ("tokio", 200.0), ("smol", 10.0)],
        )]);
        let deltas = compare(
            Some(&base),
            Some(&new),
            TimerGate {
                tolerance_pct: 50.0,
                same_machine: true,
            },
        );
        assert!(deltas[0].passes());
        assert_eq!(
            deltas[0].peers,
            Some(("tokio".to_owned(), "tokio".to_owned()))
        );
    }
}
