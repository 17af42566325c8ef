//! The default run's last table: one line per headline figure of every
//! suite that ran, with weft's, tokio's and smol's values side by side
//! and weft's ratio to the best peer. Each suite's own tables above it
//! have the detail; this is the answer to "where does weft stand" in one
//! place. Each suite says which figures head it ([`Suite::summarize`]:
//! the scheduler suite's median ms per iteration, the echo and HTTP
//! suites' requests per second, …) and adds notes under the table (the
//! floor's cost, the stall suite's targets). "ahead" means better than
//! every peer that finished (lower time or latency, higher throughput or
//! share).
//!
//! [`Suite::summarize`]: crate::common::suite::Suite::summarize

use std::collections::BTreeMap;

use crate::common::figure::{Better, Figure, FiguresOf, Row, WEFT, ratio};
use crate::common::json::Document;
use crate::common::table::Table;
use crate::suites::ALL;

const RUNTIMES: [&str; 3] = ["weft", "tokio", "smol"];

/// One line of the summary.
struct Line {
    suite: &'static str,
    workload: String,
    unit: &'static str,
    better: Better,
    /// By runtime name; `None`: failed or not run.
    values: BTreeMap<&'static str, Option<f64>>,
}

impl Line {
    /// `figure` of `row` of `suite`, under the name `workload`.
    fn new<R: Row>(
        suite: &'static str,
        workload: String,
        figure: &Figure<FiguresOf<R>>,
        row: &R,
    ) -> Line {
        Line {
            suite,
            workload,
            unit: figure.unit,
            better: figure.better,
            values: RUNTIMES
                .iter()
                .map(|&rt| (rt, row.runs().get(rt).and_then(|run| figure.of(run))))
                .collect(),
        }
    }

    /// weft's figure over the best peer's (both present and the best one
    /// positive).
    fn ratio(&self) -> Option<f64> {
        let weft = self.values.get(WEFT).copied().flatten()?;
        let peers = self
            .values
            .iter()
            .filter(|(name, _)| **name != WEFT)
            .filter_map(|(name, value)| Some((*name, (*value)?)));
        ratio(weft, self.better.best(peers)?.1)
    }

    fn verdict(&self) -> &'static str {
        match self.ratio() {
            None => "-",
            Some(1.0) => "level",
            Some(r) if self.better.meets(r, 1.0) => "ahead",
            Some(_) => "behind",
        }
    }
}

/// The summary as the suites fill it in: its lines, and the notes under
/// it.
#[derive(Default)]
pub struct SummaryTable {
    lines: Vec<Line>,
    notes: Vec<String>,
}

impl SummaryTable {
    /// A line: `figure` of `row` of `suite`, under the name `workload`.
    pub fn line<R: Row>(
        &mut self,
        suite: &'static str,
        workload: String,
        figure: &Figure<FiguresOf<R>>,
        row: &R,
    ) {
        self.lines.push(Line::new(suite, workload, figure, row));
    }

    /// A note under the table.
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }
}

fn cell(value: Option<f64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) if v >= 1000.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The summary table of every suite in `document`, or nothing when none
/// produced a line.
pub fn render(document: &Document) -> String {
    let mut summary = SummaryTable::default();
    for suite in ALL {
        suite.summarize(document, &mut summary);
    }
    let lines = &summary.lines;
    if lines.is_empty() {
        return String::new();
    }
    let mut table = Table::new([
        "suite", "workload", "unit", "weft", "tokio", "smol", "÷best", "weft is",
    ]);
    for line in lines {
        table.row(vec![
            line.suite.to_owned(),
            line.workload.clone(),
            format!("{} ({})", line.unit, line.better.phrase()),
            cell(line.values["weft"]),
            cell(line.values["tokio"]),
            cell(line.values["smol"]),
            line.ratio().map_or("-".to_owned(), |r| format!("{r:.2}")),
            line.verdict().to_owned(),
        ]);
    }
    let ahead = lines.iter().filter(|l| l.verdict() == "ahead").count();
    let compared = lines.iter().filter(|l| l.ratio().is_some()).count();
    let notes: String = summary
        .notes
        .iter()
        .map(|note| format!("{note}\n"))
        .collect();
    format!(
        "\nsummary: every suite's headline figure (÷best: weft's over the best peer's)\n{}weft ahead of both peers on {ahead} of {compared} compared figures\n{notes}",
        table.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(better: Better, weft: Option<f64>, tokio: Option<f64>, smol: Option<f64>) -> Line {
        Line {
            suite: "suite",
            workload: "w".to_owned(),
            unit: "u",
            better,
            values: BTreeMap::from([("weft", weft), ("tokio", tokio), ("smol", smol)]),
        }
    }

    #[test]
    fn the_ratio_is_to_the_best_peer_in_the_figures_direction() {
        let lower = line(Better::Lower, Some(1.0), Some(2.0), Some(4.0));
        assert_eq!(lower.ratio(), Some(0.5));
        assert_eq!(lower.verdict(), "ahead");
        let higher = line(Better::Higher, Some(100.0), Some(200.0), Some(50.0));
        assert_eq!(higher.ratio(), Some(0.5));
        assert_eq!(higher.verdict(), "behind");
    }

    #[test]
    fn a_failed_peer_is_left_out_and_a_failed_weft_gives_no_ratio() {
        let one_peer = line(Better::Lower, Some(3.0), None, Some(2.0));
        assert_eq!(one_peer.ratio(), Some(1.5));
        let no_weft = line(Better::Lower, None, Some(1.0), Some(2.0));
        assert_eq!(no_weft.ratio(), None);
        assert_eq!(no_weft.verdict(), "-");
    }
}
