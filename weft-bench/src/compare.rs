//! `weft-bench compare BASE.json NEW.json`: the regression gate.
//!
//! For every workload of BASE it checks that NEW ran it and that weft
//! completed it, then compares four figures of weft, each `base → new`:
//!
//! * `÷best` and `÷tokio`, weft's median over the best peer's and over
//!   tokio's. Measured side by side in one run, they cancel most of the
//!   machine's drift and are comparable across machines. The best peer is
//!   recomputed over the peers that completed the workload in *both* files,
//!   so a peer that only NEW has is additive, never a regression.
//! * weft's median time and its context switches per iteration. These are
//!   absolute, so they are gated only when both files come from the same
//!   machine (same core count and CPU model); otherwise they are shown for
//!   information.
//!
//! A figure regresses when it grows by more than its tolerance. Context
//! switches have their own, wider tolerance (they swing far more between
//! runs of one build than times do) and must also grow by more than
//! [`CSW_FLOOR`] per iteration: a few switches are noise on workloads that
//! switch a few times. The defaults come from re-runs of one build; the
//! README gives the numbers. The timers lane's rows are compared by
//! [`crate::timers::compare`], the mixed lane's loads by
//! [`crate::mixed::compare`], the echo lane's rows by
//! [`crate::echo::compare`] and the HTTP lane's row by
//! [`crate::http::compare`] (the echo lane's rules), with the same
//! tolerance. The exit code is 1 when any workload, timer row, mixed load,
//! echo row or HTTP row is missing, failed or regressed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::echo::compare::EchoGate;
use crate::json::{self, Document, RuntimeResult, WorkloadResult};
use crate::mixed::compare::MixedGate;
use crate::runtimes::RuntimeKind;
use crate::stats::{self, Comparison, Summary};
use crate::table::{self, Table};
use crate::timers::compare::TimerGate;

/// Default tolerance of times and ratios, percent: no re-run of one build
/// grew a ratio by more than 48% (README).
pub const DEFAULT_TOLERANCE_PCT: f64 = 50.0;

/// Default tolerance of context switches per iteration, percent.
pub const DEFAULT_CSW_TOLERANCE_PCT: f64 = 200.0;

/// Growth in context switches per iteration below which a change is noise.
pub const CSW_FLOOR: f64 = 20.0;

/// Allowed growth, in percent.
#[derive(Debug, Clone, Copy)]
pub struct Tolerances {
    /// For weft's median and its ratios to the peers.
    pub time_pct: f64,
    /// For weft's context switches per iteration.
    pub csw_pct: f64,
}

/// Runs the comparison and prints its table; the exit code says whether
/// NEW passed (2 if a file could not be read).
pub fn main(base: &Path, new: &Path, tolerances: Tolerances) -> ExitCode {
    let read = |path: &Path| {
        json::read(path)
            .map_err(|err| eprintln!("weft-bench: cannot read {}: {err}", path.display()))
    };
    let (Ok(base), Ok(new)) = (read(base), read(new)) else {
        return ExitCode::from(2);
    };
    let gate = Gate {
        tolerances,
        same_machine: same_machine(&base, &new),
    };
    let rows = compare(&base, &new, &gate);
    print!("{}", render(&base, &new, &gate, &rows));
    let timer_gate = TimerGate {
        tolerance_pct: tolerances.time_pct,
        same_machine: gate.same_machine,
    };
    let (timers, timers_pass) = timer_gate.check(base.timers.as_ref(), new.timers.as_ref());
    print!("{timers}");
    let mixed_gate = MixedGate {
        tolerance_pct: tolerances.time_pct,
        same_machine: gate.same_machine,
    };
    let (mixed, mixed_pass) = mixed_gate.check(base.mixed.as_ref(), new.mixed.as_ref());
    print!("{mixed}");
    let echo_gate = EchoGate {
        tolerance_pct: tolerances.time_pct,
        same_machine: gate.same_machine,
    };
    let (echo, echo_pass) = echo_gate.check(base.echo.as_ref(), new.echo.as_ref());
    print!("{echo}");
    let (http, http_pass) =
        crate::http::compare::check(echo_gate, base.http.as_ref(), new.http.as_ref());
    print!("{http}");
    if rows.iter().all(|row| row.outcome.passes())
        && timers_pass
        && mixed_pass
        && echo_pass
        && http_pass
    {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What may grow, and by how much.
struct Gate {
    tolerances: Tolerances,
    /// Whether absolute figures are gated.
    same_machine: bool,
}

fn same_machine(base: &Document, new: &Document) -> bool {
    base.machine.cores == new.machine.cores && base.machine.cpu_model == new.machine.cpu_model
}

/// One figure of weft, before and after.
struct Figure {
    /// Its column in the delta table.
    label: &'static str,
    unit: Unit,
    base: f64,
    new: f64,
    /// Whether its growth beyond the tolerance fails the gate.
    gated: bool,
    /// Allowed relative growth, percent.
    tolerance_pct: f64,
    /// Growth that counts as noise however large relatively.
    floor: f64,
}

/// How a figure is printed.
#[derive(Clone, Copy)]
enum Unit {
    Ms,
    Count,
    Ratio,
}

/// The delta table's figure columns, in order.
const FIGURE_LABELS: [&str; 4] = ["weft ms", "csw/iter", "÷best", "÷tokio"];

impl Figure {
    fn regressed(&self) -> bool {
        let growth = self.new - self.base;
        self.gated && growth > self.base * self.tolerance_pct / 100.0 && growth > self.floor
    }

    fn cell(&self) -> String {
        let format = |v: f64| match self.unit {
            Unit::Ms => table::ms(v),
            Unit::Count => table::count(v),
            Unit::Ratio => format!("{v:.2}"),
        };
        let mark = if self.regressed() { " !" } else { "" };
        let delta = table::delta_pct(self.base, self.new);
        format!("{} → {} {delta}{mark}", format(self.base), format(self.new))
    }
}

/// The verdict on one workload.
enum Outcome {
    Pass,
    Regressed(Vec<&'static str>),
    Failed(String),
    /// Only NEW has it: nothing to compare against.
    Added,
}

impl Outcome {
    fn passes(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Added)
    }

    fn describe(&self) -> String {
        match self {
            Outcome::Pass => "ok".to_owned(),
            Outcome::Regressed(what) => format!("REGRESSED: {}", what.join(", ")),
            Outcome::Failed(why) => format!("FAILED: {why}"),
            Outcome::Added => "new workload".to_owned(),
        }
    }
}

/// One line of the delta table.
struct Row {
    workload: String,
    figures: Vec<Figure>,
    best_peers: Option<(String, String)>,
    outcome: Outcome,
}

impl Row {
    fn new(workload: &str, outcome: Outcome) -> Row {
        Row {
            workload: workload.to_owned(),
            figures: Vec::new(),
            best_peers: None,
            outcome,
        }
    }
}

fn compare(base: &Document, new: &Document, gate: &Gate) -> Vec<Row> {
    let mut rows: Vec<Row> = base
        .workloads
        .iter()
        .map(|b| compare_workload(b, new.workloads.iter().find(|n| n.name == b.name), gate))
        .collect();
    let added = new
        .workloads
        .iter()
        .filter(|n| base.workloads.iter().all(|b| b.name != n.name));
    rows.extend(added.map(|n| Row::new(&n.name, Outcome::Added)));
    rows
}

fn compare_workload(base: &WorkloadResult, new: Option<&WorkloadResult>, gate: &Gate) -> Row {
    let Some(new) = new else {
        return Row::new(&base.name, Outcome::Failed("missing from NEW".to_owned()));
    };
    let Some(new_weft) = weft_summary(new) else {
        return Row::new(&base.name, Outcome::Failed(weft_error(new)));
    };
    let mut row = Row::new(&base.name, Outcome::Pass);
    // A workload weft failed in BASE has nothing to regress from.
    let Some(base_weft) = weft_summary(base) else {
        return row;
    };
    let (base_cmp, new_cmp) = common_peer_comparisons(base, new);
    row.figures = figures(base_weft, new_weft, gate);
    row.figures
        .extend(ratio_figures(base_cmp.as_ref(), new_cmp.as_ref(), gate));
    row.best_peers = base_cmp
        .zip(new_cmp)
        .map(|(b, n)| (b.best.peer, n.best.peer));
    let regressed: Vec<&'static str> = row
        .figures
        .iter()
        .filter(|figure| figure.regressed())
        .map(|figure| figure.label)
        .collect();
    if !regressed.is_empty() {
        row.outcome = Outcome::Regressed(regressed);
    }
    row
}

/// weft's absolute figures: gated only when both runs share a machine.
fn figures(base: &Summary, new: &Summary, gate: &Gate) -> Vec<Figure> {
    let figure = |label, unit, value: fn(&Summary) -> f64, tolerance_pct, floor| Figure {
        label,
        unit,
        base: value(base),
        new: value(new),
        gated: gate.same_machine,
        tolerance_pct,
        floor,
    };
    let tolerances = gate.tolerances;
    vec![
        figure(
            "weft ms",
            Unit::Ms,
            |s| s.median_ms,
            tolerances.time_pct,
            0.0,
        ),
        figure(
            "csw/iter",
            Unit::Count,
            |s| s.csw_per_iter,
            tolerances.csw_pct,
            CSW_FLOOR,
        ),
    ]
}

/// weft's ratios to the best peer and to tokio, where both runs have them.
fn ratio_figures(base: Option<&Comparison>, new: Option<&Comparison>, gate: &Gate) -> Vec<Figure> {
    let figure = |label, pick: fn(&Comparison) -> Option<f64>| {
        Some(Figure {
            label,
            unit: Unit::Ratio,
            base: pick(base?)?,
            new: pick(new?)?,
            gated: true,
            tolerance_pct: gate.tolerances.time_pct,
            floor: 0.0,
        })
    };
    [
        figure("÷best", |c| Some(c.best.value)),
        figure("÷tokio", |c| c.tokio.as_ref().map(|r| r.value)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn weft_result(workload: &WorkloadResult) -> Option<&RuntimeResult> {
    workload.runtimes.get(RuntimeKind::Weft.name())
}

fn weft_summary(workload: &WorkloadResult) -> Option<&Summary> {
    weft_result(workload)?.ok_summary()
}

fn weft_error(workload: &WorkloadResult) -> String {
    match weft_result(workload) {
        None => "weft did not run".to_owned(),
        Some(result) => result
            .error
            .clone()
            .unwrap_or_else(|| "weft failed".to_owned()),
    }
}

/// weft against the peers that completed the workload in both documents.
fn common_peer_comparisons(
    base: &WorkloadResult,
    new: &WorkloadResult,
) -> (Option<Comparison>, Option<Comparison>) {
    let completed = |runtimes: &BTreeMap<String, RuntimeResult>, peer: &str| {
        runtimes.get(peer).is_some_and(|r| r.ok_summary().is_some())
    };
    let in_both = |peer: &str| completed(&base.runtimes, peer) && completed(&new.runtimes, peer);
    (
        stats::compare(&base.runtimes, in_both),
        stats::compare(&new.runtimes, in_both),
    )
}

fn render(base: &Document, new: &Document, gate: &Gate, rows: &[Row]) -> String {
    let describe = |doc: &Document| {
        let (s, m) = (&doc.settings, &doc.machine);
        let label = doc.versions.weft_label();
        format!(
            "{label}; {}, {} workers; {} cores, {}",
            s.profile, s.workers, m.cores, m.cpu_model
        )
    };
    let mut out = format!("base: {}\nnew:  {}\n", describe(base), describe(new));
    if !gate.same_machine {
        out.push_str("different machines: weft ms and csw/iter are shown, not gated\n");
    }
    if base.settings.workers != new.settings.workers {
        out.push_str("warning: different worker counts; the ratios may not be comparable\n");
    }
    out.push('\n');
    out.push_str(&delta_table(rows).render());
    out.push_str(&format!(
        "tolerance: {:.0}% for times and ratios, {:.0}% and more than {CSW_FLOOR} for \
         csw/iter; ! = beyond tolerance\n",
        gate.tolerances.time_pct, gate.tolerances.csw_pct
    ));
    out
}

fn delta_table(rows: &[Row]) -> Table {
    let header = std::iter::once("workload").chain(FIGURE_LABELS);
    let mut table = Table::new(header.chain(["best peer", "result"]));
    for row in rows {
        let mut cells = vec![row.workload.clone()];
        cells.extend(FIGURE_LABELS.iter().map(|label| {
            let figure = row.figures.iter().find(|f| f.label == *label);
            figure.map_or("-".to_owned(), Figure::cell)
        }));
        cells.push(match &row.best_peers {
            Some((b, n)) if b == n => b.clone(),
            Some((b, n)) => format!("{b} → {n}"),
            None => "-".to_owned(),
        });
        cells.push(row.outcome.describe());
        table.row(cells);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Iterations, Machine, Settings, Status, Versions};

    /// A document with one entry per `(workload, [(runtime, median ms)])`.
    fn doc(workloads: &[(&str, &[(&str, f64)])]) -> Document {
        let workloads = workloads
            .iter()
            .map(|&(name, runtimes)| workload(name, runtimes))
            .collect();
        document(workloads)
    }

    /// A workload whose runtimes took `ms` in every iteration.
    fn workload(name: &str, runtimes: &[(&str, f64)]) -> WorkloadResult {
        let runtimes: BTreeMap<String, RuntimeResult> = runtimes
            .iter()
            .map(|&(runtime, ms)| {
                let iterations = Iterations {
                    ms: vec![ms; 4],
                    csw_voluntary: vec![10; 4],
                    csw_involuntary: vec![0; 4],
                    ..Iterations::default()
                };
                let summary = stats::summarize(&iterations, 2);
                let result = RuntimeResult {
                    summary,
                    iterations,
                    ..Default::default()
                };
                (runtime.to_owned(), result)
            })
            .collect();
        WorkloadResult {
            name: name.to_owned(),
            iterations_per_round: 2,
            comparison: stats::compare(&runtimes, |_| true),
            runtimes,
        }
    }

    fn document(workloads: Vec<WorkloadResult>) -> Document {
        Document {
            schema: json::SCHEMA.to_owned(),
            created_unix_s: 0,
            machine: Machine {
                cores: 2,
                cpu_model: "test".to_owned(),
                os: "test".to_owned(),
                kernel: "test".to_owned(),
            },
            versions: Versions {
                weft_commit: "abc".to_owned(),
                weft_dirty: Some(false),
                bench_dirty: Some(false),
                tokio: "1".to_owned(),
                async_executor: "1".to_owned(),
                rustc: "rustc".to_owned(),
            },
            settings: Settings {
                profile: "quick".to_owned(),
                workers: 4,
                rounds: 2,
                runtimes: vec!["weft".to_owned(), "tokio".to_owned(), "smol".to_owned()],
                iteration_timeout_s: 10.0,
                weft_inject_batch_cap: None,
                weft_lifo_slot: true,
            },
            workloads,
            warnings: Vec::new(),
            timers: None,
            mixed: None,
            echo: None,
            http: None,
        }
    }

    fn gate() -> Gate {
        Gate {
            tolerances: Tolerances {
                time_pct: 30.0,
                csw_pct: 200.0,
            },
            same_machine: true,
        }
    }

    fn outcomes(base: &Document, new: &Document, gate: &Gate) -> Vec<String> {
        compare(base, new, gate)
            .iter()
            .map(|r| r.outcome.describe())
            .collect()
    }

    const BASE: &[(&str, f64)] = &[("weft", 1.0), ("tokio", 2.0), ("smol", 1.5)];

    #[test]
    fn a_rerun_within_tolerance_passes() {
        let new = doc(&[("a", &[("weft", 1.2), ("tokio", 2.1), ("smol", 1.6)])]);
        assert_eq!(outcomes(&doc(&[("a", BASE)]), &new, &gate()), ["ok"]);
    }

    #[test]
    fn a_slower_weft_regresses() {
        let new = doc(&[("a", &[("weft", 2.0), ("tokio", 2.0), ("smol", 1.5)])]);
        assert_eq!(
            outcomes(&doc(&[("a", BASE)]), &new, &gate()),
            ["REGRESSED: weft ms, ÷best, ÷tokio"]
        );
    }

    #[test]
    fn on_another_machine_only_ratios_are_gated() {
        let new = doc(&[("a", &[("weft", 2.0), ("tokio", 4.0), ("smol", 3.0)])]);
        let other = Gate {
            same_machine: false,
            ..gate()
        };
        assert_eq!(outcomes(&doc(&[("a", BASE)]), &new, &other), ["ok"]);
    }

    #[test]
    fn missing_and_failed_workloads_fail_and_new_ones_are_listed() {
        let base = doc(&[("a", BASE), ("b", BASE)]);
        let mut new = doc(&[("a", BASE), ("c", BASE)]);
        let weft = new.workloads[0].runtimes.get_mut("weft").unwrap();
        weft.status = Status::Failed;
        weft.error = Some("timed out".to_owned());
        assert_eq!(
            outcomes(&base, &new, &gate()),
            [
                "FAILED: timed out",
                "FAILED: missing from NEW",
                "new workload"
            ]
        );
    }

    #[test]
    fn a_peer_only_new_has_is_additive() {
        let base = doc(&[("a", &[("weft", 1.0), ("tokio", 2.0)])]);
        let new = doc(&[("a", &[("weft", 1.0), ("tokio", 2.0), ("smol", 0.5)])]);
        let rows = compare(&base, &new, &gate());
        assert_eq!(rows[0].outcome.describe(), "ok");
        assert_eq!(
            rows[0].best_peers,
            Some(("tokio".to_owned(), "tokio".to_owned()))
        );
    }
}
