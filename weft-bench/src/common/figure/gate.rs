//! The gate `weft-bench compare BASE NEW` applies to every suite: for each
//! row of BASE, each of the suite's figures of weft and its ratio to the
//! figure's peer, `base → new`.
//!
//! * weft's value is gated only when both documents come from the same
//!   machine (absolute figures do not travel): it regresses when it
//!   worsens by more than the figure's tolerance *and* by more than its
//!   floor.
//! * The ratio is recomputed over the peers that completed the row in
//!   both documents, so a peer only NEW has cannot make weft regress, and
//!   is gated on any machine (measured side by side, it cancels most of
//!   the machine): it regresses when it worsens by more than the
//!   tolerance *and* its change counted in the figure's unit at the new
//!   peer's value (`(new ratio − base ratio) × new peer`) exceeds the
//!   floor. A ratio over a peer's few µs swings by multiples between
//!   re-runs while meaning a few µs; this keeps it from failing the gate.
//! * "Worsens" follows the figure's direction: for throughput, a fall.
//!
//! A row weft failed in NEW, or that NEW lacks, fails; a row weft failed
//! in BASE has nothing to regress from and passes; a row (or a whole
//! suite) that BASE lacks is listed as new and passes.

use super::rows::Gated;
use super::{Attempt, Better, Figure, FiguresOf, Format, Row, Tolerance, ratio};
use crate::common::table::{self, Table};

/// Allowed worsening, in percent.
#[derive(Debug, Clone, Copy)]
pub struct Tolerances {
    /// Of figures answering to [`Tolerance::Time`], and of every ratio.
    pub time_pct: f64,
    /// Of figures answering to [`Tolerance::Switches`].
    pub csw_pct: f64,
}

/// What may worsen, and by how much.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    /// The tolerances.
    pub tolerances: Tolerances,
    /// Whether weft's own (absolute) values are gated: both documents come
    /// from the same machine.
    pub same_machine: bool,
}

/// A value before and after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// In BASE.
    pub base: f64,
    /// In NEW.
    pub new: f64,
    /// Whether it worsened beyond the tolerance and the floor.
    pub regressed: bool,
}

/// The gate's verdict on one figure of a row, or on a whole row.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Verdict {
    /// Within tolerance, or nothing to compare against.
    Pass,
    /// Worse beyond tolerance: `weft` (its value), `ratio`, or both.
    Regressed(Vec<&'static str>),
    /// Missing from NEW, or weft failed it there.
    Failed(String),
    /// Only NEW has the row.
    Added,
}

/// One figure of one row compared (or a whole row, when it has no
/// figure to compare).
#[derive(Debug, Clone)]
pub struct Delta {
    /// The row.
    pub row: String,
    /// The figure: name, direction, format.
    pub figure: Option<(&'static str, Better, Format)>,
    /// weft's value.
    pub value: Option<Change>,
    /// weft's ratio to the figure's peer.
    pub ratio: Option<Change>,
    /// That peer in BASE and in NEW.
    pub peers: Option<(String, String)>,
    /// The verdict.
    pub verdict: Verdict,
}

impl Delta {
    fn row(row: &str, verdict: Verdict) -> Delta {
        Delta {
            row: row.to_owned(),
            figure: None,
            value: None,
            ratio: None,
            peers: None,
            verdict,
        }
    }

    /// `row figure`, or the row alone (also when the figure is the row,
    /// as in the timers suite).
    pub fn name(&self) -> String {
        match self.figure {
            Some((figure, ..)) if figure != self.row => format!("{} {figure}", self.row),
            _ => self.row.clone(),
        }
    }

    /// Whether it passes the gate.
    pub fn passes(&self) -> bool {
        matches!(self.verdict, Verdict::Pass | Verdict::Added)
    }

    /// The verdict as the table prints it; `row` names what a suite's rows
    /// are called.
    pub fn describe(&self, row: &str) -> String {
        match &self.verdict {
            Verdict::Pass => "ok".to_owned(),
            Verdict::Regressed(what) => format!("REGRESSED: {}", what.join(", ")),
            Verdict::Failed(why) => format!("FAILED: {why}"),
            Verdict::Added => format!("new {row}"),
        }
    }
}

impl Gate {
    /// Compares `suite` in two documents (either may lack it): its delta
    /// table and legend (nothing when neither has a row), and whether NEW
    /// passed.
    pub fn check<R: Row>(
        &self,
        suite: &Gated<FiguresOf<R>>,
        base: Option<&[R]>,
        new: Option<&[R]>,
    ) -> (String, bool) {
        let deltas = self.compare(suite, base.unwrap_or_default(), new.unwrap_or_default());
        if deltas.is_empty() {
            return (String::new(), true);
        }
        let mut falls: Vec<&str> = Vec::new();
        for (name, better, _) in deltas.iter().filter_map(|d| d.figure) {
            if better == Better::Higher && !falls.contains(&name) {
                falls.push(name);
            }
        }
        let falls = if falls.is_empty() {
            String::new()
        } else {
            format!(" ({}: a fall is the regression)", falls.join(", "))
        };
        let text = format!(
            "\n{}{}: weft's value is gated on the same machine only, its ratio always; a change \
             below a figure's floor is noise{falls}\n",
            table(suite, &deltas).render(),
            suite.name,
        );
        (text, deltas.iter().all(Delta::passes))
    }

    /// Every delta of `suite` between the rows of two documents: BASE's
    /// rows in order, then the rows only NEW has.
    pub fn compare<R: Row>(
        &self,
        suite: &Gated<FiguresOf<R>>,
        base: &[R],
        new: &[R],
    ) -> Vec<Delta> {
        let mut deltas = Vec::new();
        for b in base {
            let n = new.iter().find(|n| n.name() == b.name());
            deltas.extend(self.compare_row(suite, b, n));
        }
        let added = new
            .iter()
            .filter(|n| base.iter().all(|b| b.name() != n.name()));
        deltas.extend(added.map(|n| Delta::row(n.name(), Verdict::Added)));
        deltas
    }

    fn compare_row<R: Row>(
        &self,
        suite: &Gated<FiguresOf<R>>,
        base: &R,
        new: Option<&R>,
    ) -> Vec<Delta> {
        let name = base.name();
        let Some(new) = new else {
            let why = "missing from NEW".to_owned();
            return vec![Delta::row(name, Verdict::Failed(why))];
        };
        if new.weft().is_none() {
            return vec![Delta::row(name, Verdict::Failed(new.weft_error()))];
        }
        // A row weft failed in BASE has nothing to regress from.
        if base.weft().is_none() {
            return vec![Delta::row(name, Verdict::Pass)];
        }
        let figures = suite.figures(name);
        let mut deltas = Vec::with_capacity(figures.len());
        for (index, figure) in figures.iter().enumerate() {
            // A figure compared with a second peer gates weft's value once.
            let again = figures[..index].iter().any(|f| f.name == figure.name);
            deltas.push(self.compare_figure(figure, base, new, !again));
        }
        deltas
    }

    fn compare_figure<R: Row>(
        &self,
        figure: &Figure<FiguresOf<R>>,
        base: &R,
        new: &R,
        value_too: bool,
    ) -> Delta {
        let judge = self.judge(figure, base.name());
        let mut delta = Delta::row(base.name(), Verdict::Pass);
        delta.figure = Some((figure.name, figure.better, figure.format));
        let weft_value = |row: &R| row.weft().and_then(figure.value);
        if let (true, Some(b), Some(n)) = (value_too, weft_value(base), weft_value(new)) {
            delta.value = Some(judge.value(b, n));
        }
        let completed =
            |row: &R, peer: &str| row.runs().get(peer).is_some_and(|r| r.ok().is_some());
        let in_both = |peer: &str| completed(base, peer) && completed(new, peer);
        let ratio_of = |row: &R| {
            let (peer, peer_value) = figure.peer(row.runs(), in_both)?;
            let ratio = ratio(weft_value(row)?, peer_value)?;
            Some((peer.to_owned(), ratio, peer_value))
        };
        if let Some(((base_peer, b, _), (new_peer, n, new_peer_value))) =
            ratio_of(base).zip(ratio_of(new))
        {
            delta.ratio = Some(judge.ratio(b, n, new_peer_value));
            delta.peers = Some((base_peer, new_peer));
        }
        let what: Vec<&'static str> = [(delta.value, "weft"), (delta.ratio, "ratio")]
            .into_iter()
            .filter(|(change, _)| change.is_some_and(|c| c.regressed))
            .map(|(_, what)| what)
            .collect();
        if !what.is_empty() {
            delta.verdict = Verdict::Regressed(what);
        }
        delta
    }

    /// How `figure` is judged on the row called `row`.
    fn judge<F>(&self, figure: &Figure<F>, row: &str) -> Judge {
        let tolerance_pct = match figure.tolerance {
            Tolerance::Time => self.tolerances.time_pct,
            Tolerance::Switches => self.tolerances.csw_pct,
        };
        Judge {
            better: figure.better,
            floor: figure.floor.at(row),
            tolerance_pct,
            same_machine: self.same_machine,
        }
    }
}

/// The rules of the module doc for one figure of one row.
struct Judge {
    better: Better,
    floor: f64,
    tolerance_pct: f64,
    same_machine: bool,
}

impl Judge {
    /// Whether `to` is worse than `from` by more than the tolerance.
    fn worse(&self, from: f64, to: f64) -> bool {
        self.better.worsening(from, to) > from.abs() * self.tolerance_pct / 100.0
    }

    /// weft's value: gated on the same machine only, beyond the floor.
    fn value(&self, base: f64, new: f64) -> Change {
        let beyond_floor = self.better.worsening(base, new) > self.floor;
        let regressed = self.same_machine && self.worse(base, new) && beyond_floor;
        Change {
            base,
            new,
            regressed,
        }
    }

    /// weft's ratio: gated everywhere, its change counted in the figure's
    /// unit at the new peer's value beyond the floor.
    fn ratio(&self, base: f64, new: f64, new_peer_value: f64) -> Change {
        let implied = self.better.worsening(base, new) * new_peer_value;
        let regressed = self.worse(base, new) && implied > self.floor;
        Change {
            base,
            new,
            regressed,
        }
    }
}

/// The delta table of `suite`: one line per figure of a row (per row, when
/// it has none compared), with weft's value and ratio `base → new`, the
/// peer, and the verdict; `!` marks what worsened beyond tolerance. A
/// figure compared with a second peer (the scheduler suite's median, with
/// tokio) adds a line with that ratio alone.
pub fn table<F>(suite: &Gated<F>, deltas: &[Delta]) -> Table {
    let mut table = Table::new([
        format!("{} figure", suite.name),
        "weft".to_owned(),
        "ratio".to_owned(),
        "to".to_owned(),
        "result".to_owned(),
    ]);
    let cell = |change: Option<Change>, format: &dyn Fn(f64) -> String| {
        change.map_or("-".to_owned(), |c| {
            let mark = if c.regressed { " !" } else { "" };
            let delta = table::delta_pct(c.base, c.new);
            format!("{} → {} {delta}{mark}", format(c.base), format(c.new))
        })
    };
    let mut previous = String::new();
    for delta in deltas {
        let format = delta.figure.map_or(Format::Plain, |(_, _, format)| format);
        let name = delta.name();
        // The same figure to a second peer: its ratio only.
        let again = name == previous && delta.value.is_none();
        table.row(vec![
            if again { String::new() } else { name.clone() },
            if again {
                String::new()
            } else {
                cell(delta.value, &|v| format.show(v))
            },
            cell(delta.ratio, &|v| format!("{v:.2}")),
            match &delta.peers {
                Some((b, n)) if b == n => b.clone(),
                Some((b, n)) => format!("{b} → {n}"),
                None => "-".to_owned(),
            },
            delta.describe(suite.row),
        ]);
        previous = name;
    }
    table
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::common::figure::{Peer, Run};

    /// A row of a test suite: weft's and its peers' values.
    struct TestRow {
        name: &'static str,
        runs: BTreeMap<String, Run<f64>>,
    }

    impl Row for TestRow {
        type Run = Run<f64>;

        fn name(&self) -> &str {
            self.name
        }

        fn runs(&self) -> &BTreeMap<String, Run<f64>> {
            &self.runs
        }
    }

    fn row(name: &'static str, values: &[(&str, f64)]) -> TestRow {
        let runs = values
            .iter()
            .map(|&(rt, v)| (rt.to_owned(), Run::completed(v)))
            .collect();
        TestRow { name, runs }
    }

    /// Lower-is-better against the best peer with a floor of 1, and
    /// higher-is-better against tokio with a floor of 10.
    const FIGURES: [Figure<f64>; 2] = [
        Figure::lower("time", "ms", |v| Some(*v)).with_floor(1.0),
        Figure::higher("rate", "req/s", |v| Some(1_000.0 / v))
            .with_peer(Peer::Tokio)
            .with_floor(10.0),
    ];

    const GATED: Gated<f64> = Gated::new("test", "row", &FIGURES);

    fn gate(same_machine: bool) -> Gate {
        Gate {
            tolerances: Tolerances {
                time_pct: 50.0,
                csw_pct: 200.0,
            },
            same_machine,
        }
    }

    fn verdicts(base: &[TestRow], new: &[TestRow], same_machine: bool) -> Vec<String> {
        gate(same_machine)
            .compare(&GATED, base, new)
            .iter()
            .map(|d| format!("{}: {}", d.name(), d.describe(GATED.row)))
            .collect()
    }

    const BASE: &[(&str, f64)] = &[("weft", 10.0), ("tokio", 20.0), ("smol", 15.0)];

    #[test]
    fn a_rerun_within_tolerance_or_floor_passes() {
        let new = [row("a", &[("weft", 14.0), ("tokio", 20.0), ("smol", 15.0)])];
        assert_eq!(
            verdicts(&[row("a", BASE)], &new, true),
            ["a time: ok", "a rate: ok"]
        );
        // Three times slower, but by less than the floor of 1.
        let base = [row("a", &[("weft", 0.1), ("smol", 0.1)])];
        let new = [row("a", &[("weft", 0.3), ("smol", 0.1)])];
        assert_eq!(verdicts(&base, &new, true)[0], "a time: ok");
    }

    #[test]
    fn a_slower_weft_regresses_and_a_fall_in_throughput_too() {
        let new = [row("a", &[("weft", 30.0), ("tokio", 20.0), ("smol", 15.0)])];
        assert_eq!(
            verdicts(&[row("a", BASE)], &new, true),
            [
                "a time: REGRESSED: weft, ratio",
                "a rate: REGRESSED: weft, ratio"
            ]
        );
        // On another machine only the ratios are gated.
        assert_eq!(
            verdicts(&[row("a", BASE)], &new, false),
            ["a time: REGRESSED: ratio", "a rate: REGRESSED: ratio"]
        );
    }

    #[test]
    fn missing_failed_and_new_rows() {
        let mut failed = row("a", BASE);
        failed
            .runs
            .insert("weft".to_owned(), Run::failed("timed out".to_owned()));
        assert_eq!(
            verdicts(
                &[row("a", BASE), row("b", BASE)],
                &[failed, row("c", BASE)],
                true
            ),
            [
                "a: FAILED: timed out",
                "b: FAILED: missing from NEW",
                "c: new row"
            ]
        );
        // A baseline without the suite: every row is new; neither: nothing.
        assert_eq!(verdicts(&[], &[row("a", BASE)], true), ["a: new row"]);
        assert_eq!(
            gate(true).check::<TestRow>(&GATED, None, None),
            (String::new(), true)
        );
    }

    #[test]
    fn a_peer_only_new_has_is_additive() {
        let base = [row("a", &[("weft", 10.0), ("tokio", 20.0)])];
        let new = [row("a", &[("weft", 10.0), ("tokio", 20.0), ("smol", 1.0)])];
        let deltas = gate(true).compare(&GATED, &base, &new);
        assert!(deltas.iter().all(Delta::passes));
        assert_eq!(
            deltas[0].peers,
            Some(("tokio".to_owned(), "tokio".to_owned()))
        );
    }

    #[test]
    fn the_legend_names_the_figures_whose_fall_regresses() {
        let (text, passed) =
            gate(true).check(&GATED, Some(&[row("a", BASE)]), Some(&[row("a", BASE)]));
        assert!(passed);
        assert!(text.contains("test figure"), "{text}");
        assert!(text.contains("(rate: a fall is the regression)"), "{text}");
    }
}
