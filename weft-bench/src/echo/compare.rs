//! The echo lane's part of `weft-bench compare`: for every row of BASE,
//! two figures of weft and its ratio to the best peer on each, `base →
//! new`, following the mixed lane's rules (`mixed/compare.rs`):
//!
//! | figure | better | ratio to | floor ([`floor`]) |
//! |---|---|---|---|
//! | `req_per_s` | higher | the highest peer req/s | 5,000 req/s at 1 connection, 30,000 at 64 |
//! | `p99_ms` | lower | the lowest peer p99 | 0.05 ms at 1 connection, 2 ms at 64 |
//!
//! * weft's value is gated only when both documents come from the same
//!   machine: it regresses when it worsens by more than the tolerance *and*
//!   by more than the figure's floor.
//! * The ratio is recomputed over the peers that completed the row in
//!   both documents (a peer only NEW has cannot make weft regress) and
//!   gated on any machine: it regresses when it worsens by more than the
//!   tolerance *and* its change counted in the figure's unit at the new
//!   peer's value exceeds the floor.
//!
//! The floors come from six quiet quick runs of one build on the 2-core
//! dev machine (2026-11-24, `others` ≤ 4% in every window but two, left
//! out): weft's req/s was 15.8-20.7k at 1 connection and 157-224k at 64
//! (the VM ran about 20% slower in two of the runs, for every runtime
//! alike), its ratio to the best peer 0.99-1.12 and 1.07-1.42; its p99
//! 74-92 µs at 1 connection and 0.50-2.41 ms at 64, where the tail is
//! made of the load generator's preemptions (p99.9 is ~4 ms for weft and
//! tokio alike: three busy threads on two cores) and moves by whole
//! milliseconds between runs. Each floor is above the widest swing seen;
//! throughput is held mostly by the tolerance (50% by default), above the
//! floors at every row.
//!
//! A row weft failed in NEW, or that NEW lacks, fails; a row (or the whole
//! lane) that BASE lacks is listed as new and passes.

use std::collections::BTreeMap;

use super::report::us;
use super::result::{Better, EchoResult, EchoRun, Figures, RowResult, vs_best_peer};
use crate::json::Status;
use crate::runtimes::RuntimeKind;
use crate::table::{self, Table};

/// What may worsen, and by how much.
#[derive(Debug, Clone, Copy)]
pub struct EchoGate {
    /// Allowed worsening, percent, of weft's figures and ratios.
    pub tolerance_pct: f64,
    /// Whether weft's own figures (absolute) are gated.
    pub same_machine: bool,
}

/// A compared figure of weft.
#[derive(Debug, Clone, Copy)]
struct Spec {
    name: &'static str,
    better: Better,
    value: fn(&Figures) -> Option<f64>,
}

const SPECS: [Spec; 2] = [
    Spec {
        name: "req_per_s",
        better: Better::Higher,
        value: |f| Some(f.req_per_s),
    },
    Spec {
        name: "p99_ms",
        better: Better::Lower,
        value: Figures::p99_ms,
    },
];

/// The change of `figure` on `row`, in the figure's unit (req/s, ms),
/// below which it is noise however large relatively: just above the
/// widest swings of quiet quick re-runs of one build (module doc).
pub fn floor(figure: &str, row: &str) -> f64 {
    match (figure, row) {
        ("req_per_s", "conn1_64b") => 5_000.0,
        ("req_per_s", _) => 30_000.0,
        (_, "conn1_64b") => 0.05,
        _ => 2.0,
    }
}

impl Spec {
    /// How much worse `new` is than `base` (negative: better).
    fn worsening(&self, base: f64, new: f64) -> f64 {
        match self.better {
            Better::Lower => new - base,
            Better::Higher => base - new,
        }
    }

    fn format(&self, value: f64) -> String {
        match self.better {
            Better::Higher => format!("{value:.0}"),
            Better::Lower => format!("{} µs", us(value)),
        }
    }
}

/// One figure of one row compared.
#[derive(Debug, Clone)]
pub struct RowDelta {
    /// `row figure`.
    pub name: String,
    /// Which figure (`None` for a row that has none compared).
    figure: Option<Spec>,
    /// weft's value: base, new, whether it regressed.
    pub value: Option<(f64, f64, bool)>,
    /// weft's ratio to the best peer: base, new, whether it regressed.
    pub ratio: Option<(f64, f64, bool)>,
    /// The best peer in base and in new.
    pub peers: Option<(String, String)>,
    /// `None` when it passes; why it failed otherwise.
    pub failure: Option<String>,
    /// Only NEW has it.
    pub added: bool,
}

impl RowDelta {
    fn new(name: String) -> RowDelta {
        RowDelta {
            name,
            figure: None,
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

impl EchoGate {
    /// Compares the echo lanes of two documents: the delta table and its
    /// legend (nothing when neither has the lane), and whether NEW passed.
    pub fn check(self, base: Option<&EchoResult>, new: Option<&EchoResult>) -> (String, bool) {
        self.check_rows(
            "echo",
            base.map(|b| &b.rows[..]),
            new.map(|n| &n.rows[..]),
            floor,
        )
    }

    /// The same for any lane whose rows are [`RowResult`]s (the HTTP
    /// lane's), under its name `lane` and with its floors.
    pub fn check_rows(
        self,
        lane: &str,
        base: Option<&[RowResult]>,
        new: Option<&[RowResult]>,
        floor: Floor,
    ) -> (String, bool) {
        let deltas = compare_rows(base, new, self, floor);
        if deltas.is_empty() {
            return (String::new(), true);
        }
        let text = format!(
            "\n{}{lane}: weft's value is gated on the same machine only, its ratio always; a \
             change below a figure's floor is noise (req/s: a fall is the regression)\n",
            table_of(lane, &deltas).render()
        );
        (text, deltas.iter().all(RowDelta::passes))
    }
}

/// A lane's floors: the change of a figure (`req_per_s`, `p99_ms`) on a
/// row, in the figure's unit, below which it is noise.
pub type Floor = fn(figure: &str, row: &str) -> f64;

/// Compares the echo lanes of two documents (either may lack it).
pub fn compare(
    base: Option<&EchoResult>,
    new: Option<&EchoResult>,
    gate: EchoGate,
) -> Vec<RowDelta> {
    compare_rows(
        base.map(|b| &b.rows[..]),
        new.map(|n| &n.rows[..]),
        gate,
        floor,
    )
}

/// Compares the rows of a lane in two documents (either may lack it).
pub fn compare_rows(
    base: Option<&[RowResult]>,
    new: Option<&[RowResult]>,
    gate: EchoGate,
    floor: Floor,
) -> Vec<RowDelta> {
    let base_rows = base.unwrap_or_default();
    let new_rows = new.unwrap_or_default();
    let mut deltas = Vec::new();
    for b in base_rows {
        let n = new_rows.iter().find(|n| n.name == b.name);
        deltas.extend(compare_row(b, n, gate, floor));
    }
    let added = new_rows
        .iter()
        .filter(|n| base_rows.iter().all(|b| b.name != n.name));
    deltas.extend(added.map(|n| RowDelta {
        added: true,
        ..RowDelta::new(n.name.clone())
    }));
    deltas
}

fn compare_row(
    base: &RowResult,
    new: Option<&RowResult>,
    gate: EchoGate,
    floor: Floor,
) -> Vec<RowDelta> {
    let Some(new) = new else {
        let mut delta = RowDelta::new(base.name.clone());
        delta.failure = Some("FAILED: missing from NEW".to_owned());
        return vec![delta];
    };
    if new.weft().is_none() {
        let mut delta = RowDelta::new(base.name.clone());
        delta.failure = Some(format!("FAILED: {}", weft_error(new)));
        return vec![delta];
    }
    // A row weft failed in BASE has nothing to regress from.
    if base.weft().is_none() {
        return vec![RowDelta::new(base.name.clone())];
    }
    SPECS
        .iter()
        .map(|spec| compare_figure(spec, base, new, gate, floor))
        .collect()
}

fn compare_figure(
    spec: &Spec,
    base: &RowResult,
    new: &RowResult,
    gate: EchoGate,
    floor: Floor,
) -> RowDelta {
    let mut delta = RowDelta::new(format!("{} {}", base.name, spec.name));
    delta.figure = Some(*spec);
    let floor = floor(spec.name, &base.name);
    let worse =
        |from: f64, to: f64| spec.worsening(from, to) > from.abs() * gate.tolerance_pct / 100.0;
    let weft_value = |row: &RowResult| row.weft().and_then(spec.value);
    if let (Some(b), Some(n)) = (weft_value(base), weft_value(new)) {
        let regressed = gate.same_machine && worse(b, n) && spec.worsening(b, n) > floor;
        delta.value = Some((b, n, regressed));
    }
    let in_both = |peer: &str| completed(&base.runtimes, peer) && completed(&new.runtimes, peer);
    let of = |row: &RowResult| {
        let best = vs_best_peer(&row.runtimes, spec.value, spec.better, in_both)?;
        let peer_value = (spec.value)(row.runtimes.get(&best.peer)?.ok()?)?;
        Some((best.peer, best.value, peer_value))
    };
    if let Some(((base_peer, b, _), (new_peer, n, new_peer_value))) = of(base).zip(of(new)) {
        // The ratio's change in the figure's unit, at the new peer's value.
        let implied = spec.worsening(b, n) * new_peer_value;
        let regressed = worse(b, n) && implied > floor;
        delta.ratio = Some((b, n, regressed));
        delta.peers = Some((base_peer, new_peer));
    }
    let mut what = Vec::new();
    if delta.value.is_some_and(|v| v.2) {
        what.push("weft");
    }
    if delta.ratio.is_some_and(|r| r.2) {
        what.push("ratio");
    }
    if !what.is_empty() {
        delta.failure = Some(format!("REGRESSED: {}", what.join(", ")));
    }
    delta
}

fn completed(runtimes: &BTreeMap<String, EchoRun>, peer: &str) -> bool {
    runtimes.get(peer).is_some_and(|r| r.ok().is_some())
}

fn weft_error(row: &RowResult) -> String {
    match row.runtimes.get(RuntimeKind::Weft.name()) {
        None => "weft did not run".to_owned(),
        Some(run) if run.status == Status::Failed => run
            .error
            .clone()
            .unwrap_or_else(|| "weft failed".to_owned()),
        Some(_) => "weft has no figures".to_owned(),
    }
}

/// The delta table of the echo lane.
pub fn table(deltas: &[RowDelta]) -> Table {
    table_of("echo", deltas)
}

/// The delta table of lane `lane`.
pub fn table_of(lane: &str, deltas: &[RowDelta]) -> Table {
    let mut table = Table::new([
        format!("{lane} figure"),
        "weft".to_owned(),
        "ratio".to_owned(),
        "to".to_owned(),
        "result".to_owned(),
    ]);
    let cell = |figure: Option<(f64, f64, bool)>, format: &dyn Fn(f64) -> String| {
        figure.map_or("-".to_owned(), |(base, new, regressed)| {
            let mark = if regressed { " !" } else { "" };
            let change = table::delta_pct(base, new);
            format!("{} → {} {change}{mark}", format(base), format(new))
        })
    };
    for delta in deltas {
        let value_format = |v: f64| delta.figure.map_or(format!("{v}"), |spec| spec.format(v));
        table.row(vec![
            delta.name.clone(),
            cell(delta.value, &value_format),
            cell(delta.ratio, &|v| format!("{v:.2}")),
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
    use crate::echo::result::EchoSettings;
    use crate::echo::{EchoConfig, Row};
    use crate::harness::Profile;
    use crate::mixed::latency::Percentiles;

    /// A run with this throughput and p99 (µs).
    fn run(req_per_s: f64, p99_us: f64) -> EchoRun {
        let p99_ms = p99_us / 1e3;
        EchoRun {
            figures: Some(Figures {
                window_s: 1.5,
                req_per_s,
                latency: Some(Percentiles {
                    count: 1_000,
                    p50_ms: p99_ms / 2.0,
                    p90_ms: p99_ms / 1.5,
                    p99_ms,
                    p999_ms: p99_ms * 1.5,
                    max_ms: p99_ms * 2.0,
                    mean_ms: p99_ms / 2.0,
                }),
                cpu_ms_per_s: 1_900.0,
                cpu_us_per_req: Some(1_900.0 * 1e3 / req_per_s),
                generator_cpu_ms_per_s: 600.0,
                unfinished: 0,
                others_cpu_pct: None,
            }),
            ..EchoRun::default()
        }
    }

    /// A lane with `rows`, each `[(runtime, run)]`.
    fn lane(rows: &[(Row, Vec<(&str, EchoRun)>)]) -> EchoResult {
        let rows = rows
            .iter()
            .map(|(row, runs)| {
                let runs = runs
                    .iter()
                    .map(|(name, run)| ((*name).to_owned(), run.clone()))
                    .collect();
                RowResult::new(*row, runs)
            })
            .collect();
        EchoResult {
            settings: EchoSettings::new(&EchoConfig::new(Profile::Quick, 2)),
            rows,
            others_cpu_pct: None,
            warnings: Vec::new(),
        }
    }

    fn many(weft: EchoRun) -> EchoResult {
        lane(&[(
            Row::Conn64Bytes64,
            vec![
                ("weft", weft),
                ("tokio", run(240_000.0, 750.0)),
                ("smol", run(200_000.0, 850.0)),
            ],
        )])
    }

    fn verdicts(base: Option<&EchoResult>, new: Option<&EchoResult>, same: bool) -> Vec<String> {
        let gate = EchoGate {
            tolerance_pct: 50.0,
            same_machine: same,
        };
        compare(base, new, gate)
            .iter()
            .map(|d| format!("{}: {}", d.name, d.verdict()))
            .collect()
    }

    #[test]
    fn a_rerun_within_tolerance_or_floor_passes() {
        let base = many(run(250_000.0, 700.0));
        // p99 0.70 → 2.40 ms: more than three times, but under the 2 ms
        // floor (a swing seen between quiet re-runs).
        let new = many(run(200_000.0, 2_400.0));
        assert_eq!(
            verdicts(Some(&base), Some(&new), true),
            ["conn64_64b req_per_s: ok", "conn64_64b p99_ms: ok"]
        );
    }

    #[test]
    fn a_slower_weft_regresses() {
        let base = many(run(250_000.0, 700.0));
        let new = many(run(100_000.0, 4_000.0));
        assert_eq!(
            verdicts(Some(&base), Some(&new), true),
            [
                "conn64_64b req_per_s: REGRESSED: weft, ratio",
                "conn64_64b p99_ms: REGRESSED: weft, ratio"
            ]
        );
        // On another machine only the ratios are gated.
        assert_eq!(
            verdicts(Some(&base), Some(&new), false)[0],
            "conn64_64b req_per_s: REGRESSED: ratio"
        );
    }

    #[test]
    fn missing_failed_new_and_absent_lanes() {
        let base = many(run(250_000.0, 700.0));
        let failed = many(EchoRun::failed("server: no net".to_owned()));
        assert_eq!(
            verdicts(Some(&base), Some(&failed), true),
            ["conn64_64b: FAILED: server: no net"]
        );
        let other = lane(&[(Row::Conn1Bytes64, vec![("weft", run(15_000.0, 100.0))])]);
        assert_eq!(
            verdicts(Some(&base), Some(&other), true),
            ["conn64_64b: FAILED: missing from NEW", "conn1_64b: new row"]
        );
        // A baseline from before the lane: every row is new; neither: nothing.
        assert_eq!(verdicts(None, Some(&base), true), ["conn64_64b: new row"]);
        let gate = EchoGate {
            tolerance_pct: 50.0,
            same_machine: true,
        };
        assert_eq!(gate.check(None, None), (String::new(), true));
    }

    #[test]
    fn a_peer_only_new_has_is_additive() {
        let base = lane(&[(
            Row::Conn64Bytes64,
            vec![
                ("weft", run(250_000.0, 700.0)),
                ("tokio", run(240_000.0, 750.0)),
            ],
        )]);
        // smol, only in NEW, is far better than weft: not a regression.
        let new = lane(&[(
            Row::Conn64Bytes64,
            vec![
                ("weft", run(250_000.0, 700.0)),
                ("tokio", run(240_000.0, 750.0)),
                ("smol", run(900_000.0, 100.0)),
            ],
        )]);
        let deltas = compare(
            Some(&base),
            Some(&new),
            EchoGate {
                tolerance_pct: 50.0,
                same_machine: true,
            },
        );
        assert!(deltas.iter().all(RowDelta::passes));
        assert_eq!(
            deltas[0].peers,
            Some(("tokio".to_owned(), "tokio".to_owned()))
        );
    }
}
