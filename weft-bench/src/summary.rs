//! The default run's last table: one line per workload of every lane that
//! ran, with weft's, tokio's and smol's headline figure side by side and
//! weft's ratio to the best peer. Each lane's own table above it has the
//! detail; this is the answer to "where does weft stand" in one place.
//!
//! Headline figures: the scheduler lane's median ms per iteration, each
//! timers row's value, the mixed lane's short-request p99, the echo and
//! HTTP lanes' requests per second. "ahead" means better than every peer
//! that finished (lower time or latency, higher throughput).

use std::collections::BTreeMap;

use crate::json::Document;
use crate::table::Table;

const RUNTIMES: [&str; 3] = ["weft", "tokio", "smol"];

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

/// One line of the summary.
struct Line {
    lane: &'static str,
    workload: String,
    unit: String,
    better: Better,
    /// By runtime name; `None`: failed or not run.
    values: BTreeMap<&'static str, Option<f64>>,
}

impl Line {
    fn new(
        lane: &'static str,
        workload: impl Into<String>,
        unit: impl Into<String>,
        better: Better,
        value_of: impl Fn(&str) -> Option<f64>,
    ) -> Line {
        Line {
            lane,
            workload: workload.into(),
            unit: unit.into(),
            better,
            values: RUNTIMES.iter().map(|&rt| (rt, value_of(rt))).collect(),
        }
    }

    /// weft's figure over the best peer's (both present and the best one
    /// non-zero).
    fn ratio(&self) -> Option<f64> {
        let weft = self.values.get("weft").copied().flatten()?;
        let peers = self
            .values
            .iter()
            .filter(|(name, _)| **name != "weft")
            .filter_map(|(_, value)| *value);
        let best = match self.better {
            Better::Lower => peers.fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.min(v)))
            }),
            Better::Higher => peers.fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.max(v)))
            }),
        }?;
        (best != 0.0).then(|| weft / best)
    }

    fn verdict(&self) -> &'static str {
        match (self.ratio(), self.better) {
            (None, _) => "-",
            (Some(r), Better::Lower) if r < 1.0 => "ahead",
            (Some(r), Better::Higher) if r > 1.0 => "ahead",
            (Some(1.0), _) => "level",
            _ => "behind",
        }
    }
}

fn lines(document: &Document) -> Vec<Line> {
    let mut lines = Vec::new();
    for workload in &document.workloads {
        lines.push(Line::new(
            "scheduler",
            &workload.name,
            "ms",
            Better::Lower,
            |rt| Some(workload.runtimes.get(rt)?.ok_summary()?.median_ms),
        ));
    }
    for row in document.timers.iter().flat_map(|t| &t.rows) {
        lines.push(Line::new(
            "timers",
            &row.name,
            &row.unit,
            Better::Lower,
            |rt| row.runtimes.get(rt)?.value,
        ));
    }
    for load in document.mixed.iter().flat_map(|m| &m.loads) {
        lines.push(Line::new(
            "mixed",
            format!("{} short p99", load.name),
            "ms",
            Better::Lower,
            |rt| Some(load.runtimes.get(rt)?.ok()?.short.as_ref()?.p99_ms),
        ));
    }
    for row in document.echo.iter().flat_map(|e| &e.rows) {
        lines.push(Line::new(
            "echo",
            &row.name,
            "req/s",
            Better::Higher,
            |rt| Some(row.runtimes.get(rt)?.ok()?.req_per_s),
        ));
    }
    for row in document.http.iter().flat_map(|h| &h.rows) {
        lines.push(Line::new(
            "http",
            &row.name,
            "req/s",
            Better::Higher,
            |rt| Some(row.runtimes.get(rt)?.ok()?.req_per_s),
        ));
    }
    lines
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
            format!(
                "{} ({})",
                line.unit,
                if line.better == Better::Lower {
                    "lower better"
                } else {
                    "higher better"
                }
            ),
            cell(line.values["weft"]),
            cell(line.values["tokio"]),
            cell(line.values["smol"]),
            line.ratio().map_or("-".to_owned(), |r| format!("{r:.2}")),
            line.verdict().to_owned(),
        ]);
    }
    let ahead = lines.iter().filter(|l| l.verdict() == "ahead").count();
    let compared = lines.iter().filter(|l| l.ratio().is_some()).count();
    format!(
        "\nsummary: every lane's headline figure (÷best: weft's over the best peer's)\n{}weft ahead of both peers on {ahead} of {compared} compared figures\n",
        table.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(better: Better, weft: Option<f64>, tokio: Option<f64>, smol: Option<f64>) -> Line {
        Line::new("lane", "w", "u", better, |rt| match rt {
            "weft" => weft,
            "tokio" => tokio,
            _ => smol,
        })
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
