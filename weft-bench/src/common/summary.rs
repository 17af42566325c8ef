//! The default run's last table: one line per workload of every lane that
//! ran, with weft's, tokio's and smol's headline figure side by side and
//! weft's ratio to the best peer. Each lane's own table above it has the
//! detail; this is the answer to "where does weft stand" in one place.
//!
//! Headline figures: the scheduler lane's median ms per iteration, each
//! timers row's value, the mixed lane's short-request p99, the echo and
//! HTTP lanes' requests per second, the file lane's total time and its
//! ticker's p99 lateness, the service lane's figures, and per stall-lane
//! case each kind's share of its calm rate and the ticker's p99 in the
//! stall. "ahead" means better than every peer that finished (lower time
//! or latency, higher throughput or share).
//!
//! Below the table, a note per echo or HTTP row with cost targets that
//! also ran on the floor (`crate::serve::floor`): its server CPU and system calls
//! per request beside weft's and tokio's, never in a ratio; and per
//! stall-lane case, weft's targets met or missed (they are absolute
//! shares, not ratios).

use std::collections::BTreeMap;

use crate::common::figure::{Better, Figure, FiguresOf, Row, WEFT, ratio};
use crate::common::json::{Document, MEDIAN_MS};
use crate::common::table::Table;
use crate::serve::floor::FLOOR;
use crate::serve::result::ServedRun;
use crate::suites::{file, mixed, service, stall, timers};

const RUNTIMES: [&str; 3] = ["weft", "tokio", "smol"];

/// One line of the summary.
struct Line {
    lane: &'static str,
    workload: String,
    unit: &'static str,
    better: Better,
    /// By runtime name; `None`: failed or not run.
    values: BTreeMap<&'static str, Option<f64>>,
}

impl Line {
    /// `figure` of `row` of `lane`, under the name `workload`.
    fn new<R: Row>(
        lane: &'static str,
        workload: String,
        figure: &Figure<FiguresOf<R>>,
        row: &R,
    ) -> Line {
        Line {
            lane,
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

fn lines(document: &Document) -> Vec<Line> {
    let mut lines = Vec::new();
    for workload in &document.workloads {
        let name = workload.name.clone();
        lines.push(Line::new("scheduler", name, &MEDIAN_MS, workload));
    }
    for row in document.lanes.timers.iter().flat_map(|t| &t.rows) {
        if let Some(figure) = timers::row_spec(&row.name) {
            lines.push(Line::new("timers", row.name.clone(), figure, row));
        }
    }
    for load in document.lanes.mixed.iter().flat_map(|m| &m.loads) {
        let name = format!("{} short p99", load.name);
        lines.push(Line::new("mixed", name, &mixed::result::SHORT_P99, load));
    }
    let echo = document.lanes.echo.iter().flat_map(|e| &e.rows);
    let http = document.lanes.http.iter().flat_map(|h| &h.rows);
    for (lane, row) in echo.map(|r| ("echo", r)).chain(http.map(|r| ("http", r))) {
        let name = row.name.clone();
        lines.push(Line::new(lane, name, &crate::serve::result::REQ_PER_S, row));
        if !row.targets.is_empty() {
            cost_lines(&mut lines, lane, row);
        }
        if let Some(paced) = &row.paced {
            cost_lines(&mut lines, lane, paced);
        }
    }
    for row in document.lanes.file.iter().flat_map(|f| &f.rows) {
        for (figure, what) in [
            (&file::result::TOTAL, "total"),
            (&file::result::TICK_P99, "tick p99"),
        ] {
            lines.push(Line::new(
                "file",
                format!("{} {what}", row.name),
                figure,
                row,
            ));
        }
    }
    for row in document.lanes.service.iter().flat_map(|s| &s.rows) {
        let figures = service::result::figures(&row.name);
        for figure in figures {
            let name = format!("{} {}", row.name, figure.name);
            lines.push(Line::new("service", name, figure, row));
        }
    }
    for row in document.lanes.stall.iter().flat_map(|s| &s.rows) {
        for figure in &stall::result::FIGURES {
            let name = format!("{} {}", row.name, figure.name);
            lines.push(Line::new("stall", name, figure, row));
        }
    }
    lines
}

/// The stall lane's notes: per case, weft's targets met or missed.
fn stall_notes(document: &Document) -> Vec<String> {
    let rows = document.lanes.stall.iter().flat_map(|s| &s.rows);
    rows.filter(|row| !row.targets.is_empty())
        .map(|row| {
            let checks: Vec<String> = row.targets.iter().map(|check| check.line()).collect();
            format!(
                "stall {}: weft's targets (the lowest trial's share): {}",
                row.name,
                checks.join("; ")
            )
        })
        .collect()
}

/// The server's cost per request on `row` of `lane` (echo's and HTTP's
/// rows with cost targets, and their paced runs): CPU, system calls,
/// context switches.
fn cost_lines<R: Row<Run = ServedRun>>(lines: &mut Vec<Line>, lane: &'static str, row: &R) {
    use crate::serve::result::{SERVER_CPU, SWITCHES, SYSCALLS};
    for (figure, what) in [
        (&SERVER_CPU, "server µs/req"),
        (&SYSCALLS, "syscalls/req"),
        (&SWITCHES, "switches/req"),
    ] {
        lines.push(Line::new(
            lane,
            format!("{} {what}", row.name()),
            figure,
            row,
        ));
    }
}

/// The floor's notes: for each echo or HTTP row with cost targets that
/// ran on the floor, the server's CPU (µs) and system calls per request
/// of the floor, weft and tokio, at the lane's load and paced.
fn floor_notes(document: &Document) -> Vec<String> {
    let echo = document.lanes.echo.iter().flat_map(|e| &e.rows);
    let http = document.lanes.http.iter().flat_map(|h| &h.rows);
    let rows = echo.map(|r| ("echo", r)).chain(http.map(|r| ("http", r)));
    let rows = rows.filter(|(_, row)| !row.targets.is_empty() && row.runtimes.contains_key(FLOOR));
    rows.map(|(lane, row)| {
        let paced = row.paced.iter().map(|p| {
            let rate = format!("{:.0}/s", p.rate_per_s);
            format!("; at {rate} {}", floor_cells(&p.runtimes))
        });
        format!(
            "{lane} {} server µs/req and syscalls/req, floor | weft | tokio: at the lane's load \
             {}{}",
            row.name,
            floor_cells(&row.runtimes),
            paced.collect::<String>()
        )
    })
    .collect()
}

/// `CPU/syscalls` of the floor, weft and tokio in `runs`, `-` where not
/// counted.
fn floor_cells(runs: &BTreeMap<String, ServedRun>) -> String {
    let cost = |runtime: &str| {
        let cost = runs.get(runtime).and_then(|r| r.ok()?.server.as_ref());
        cost.map_or("-".to_owned(), |c| {
            format!("{:.2}/{:.3}", c.cpu_us_per_req, c.syscalls_per_req)
        })
    };
    [FLOOR, WEFT, "tokio"].map(cost).join(" | ")
}

fn cell(value: Option<f64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) if v >= 1000.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The summary table, or nothing when no lane produced a line.
pub fn render(document: &Document) -> String {
    let lines = lines(document);
    if lines.is_empty() {
        return String::new();
    }
    let mut table = Table::new([
        "lane", "workload", "unit", "weft", "tokio", "smol", "÷best", "weft is",
    ]);
    for line in &lines {
        table.row(vec![
            line.lane.to_owned(),
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
    let notes: String = floor_notes(document)
        .iter()
        .chain(&stall_notes(document))
        .map(|note| format!("{note}\n"))
        .collect();
    format!(
        "\nsummary: every lane's headline figure (÷best: weft's over the best peer's)\n{}weft ahead of both peers on {ahead} of {compared} compared figures\n{notes}",
        table.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(better: Better, weft: Option<f64>, tokio: Option<f64>, smol: Option<f64>) -> Line {
        Line {
            lane: "lane",
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
