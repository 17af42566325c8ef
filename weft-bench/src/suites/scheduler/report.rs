//! The tables `weft-bench run` prints: the at-a-glance table (one row per
//! workload: medians, ratios to the best peer and to tokio, context
//! switches, verdict), the timing detail (min, max, round medians), and
//! weft's counters per iteration.

use std::fmt::Write;

use super::result::{RuntimeResult, SchedulerResults, WorkloadResult};
use crate::common::runtimes::RuntimeKind;
use crate::common::table::{self, Table};
use crate::suites::scheduler::stats::{Ratio, Verdict};

/// weft counters shown in the counters table, as (header, JSON counters).
/// Wake requests add those made from outside the workers.
const COUNTER_COLUMNS: [(&str, &[&str]); 7] = [
    ("wake_requests", &["wake_requests", "remote_wake_requests"]),
    ("parks", &["parks"]),
    ("unparks", &["unparks"]),
    ("steals", &["steals"]),
    ("inject_batches", &["inject_batches"]),
    ("inject_tasks", &["inject_tasks"]),
    ("lifo_hits", &["lifo_hits"]),
];

/// Renders every table of a run.
pub fn render(doc: &SchedulerResults) -> String {
    let mut out = header(doc);
    let _ = writeln!(out, "{}", summary_table(doc).render());
    out.push_str(
        "median ms ± spread of the round medians; ÷best, ÷tokio: weft's median over the peer's \
         (? = the rounds disagree on the side of 1.0); csw: context switches per iteration\n",
    );
    let _ = writeln!(out, "\n{}", detail_table(doc).render());
    if doc
        .settings
        .suite
        .runtimes
        .iter()
        .any(|r| r == RuntimeKind::Weft.name())
    {
        let _ = writeln!(
            out,
            "weft counters per iteration (means)\n{}",
            counter_table(doc).render()
        );
    }
    for warning in &doc.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

/// A workload's medians on one line, for the progress output.
pub fn one_line(workload: &WorkloadResult, runtimes: &[String]) -> String {
    let times: Vec<String> = runtimes
        .iter()
        .map(|name| format!("{name} {}", time_cell(workload.runtimes.get(name))))
        .collect();
    let ratio = workload.comparison.as_ref().map_or(String::new(), |c| {
        format!(" → weft ÷ {} {}", c.best.peer, ratio_cell(Some(&c.best)))
    });
    format!("{} (ms): {}{ratio}", workload.name, times.join(", "))
}

fn header(doc: &SchedulerResults) -> String {
    let s = &doc.settings;
    format!(
        "\nscheduler suite: {} profile, {} workers, {} rounds\n",
        s.suite.profile, s.suite.workers, s.rounds
    )
}

fn summary_table(doc: &SchedulerResults) -> Table {
    let runtimes = &doc.settings.suite.runtimes;
    let header = std::iter::once("workload".to_owned())
        .chain(runtimes.iter().map(|r| format!("{r} ms")))
        .chain(["best peer", "÷best", "÷tokio"].map(String::from))
        .chain(runtimes.iter().map(|r| format!("csw {r}")))
        .chain(["verdict".to_owned()]);
    let mut table = Table::new(header);
    for workload in &doc.workloads {
        let result = |name: &String| workload.runtimes.get(name);
        let comparison = workload.comparison.as_ref();
        let mut row = vec![workload.name.clone()];
        row.extend(runtimes.iter().map(|r| time_cell(result(r))));
        row.push(comparison.map_or("-".to_owned(), |c| c.best.peer.clone()));
        row.push(ratio_cell(comparison.map(|c| &c.best)));
        row.push(ratio_cell(comparison.and_then(|c| c.tokio.as_ref())));
        row.extend(runtimes.iter().map(|r| csw_cell(result(r))));
        row.push(verdict(workload));
        table.row(row);
    }
    table
}

fn time_cell(result: Option<&RuntimeResult>) -> String {
    match result {
        None => "-".to_owned(),
        Some(r) => match r.ok_summary() {
            Some(s) => format!("{} ±{:.0}%", table::ms(s.median_ms), s.spread_pct),
            None => "FAILED".to_owned(),
        },
    }
}

fn csw_cell(result: Option<&RuntimeResult>) -> String {
    result
        .and_then(RuntimeResult::ok_summary)
        .map_or("-".to_owned(), |s| table::count(s.csw_per_iter))
}

fn ratio_cell(ratio: Option<&Ratio>) -> String {
    match ratio {
        None => "-".to_owned(),
        Some(r) if r.resolved => format!("{:.2}", r.value),
        Some(r) => format!("{:.2}?", r.value),
    }
}

fn verdict(workload: &WorkloadResult) -> String {
    let weft_failed = workload
        .runtimes
        .get(RuntimeKind::Weft.name())
        .is_some_and(|r| r.ok_summary().is_none());
    match &workload.comparison {
        Some(c) => match c.verdict {
            Verdict::Faster => "weft faster".to_owned(),
            Verdict::Slower => "weft slower".to_owned(),
            Verdict::Unresolved => "unresolved".to_owned(),
        },
        None if weft_failed => "WEFT FAILED".to_owned(),
        None => "-".to_owned(),
    }
}

fn detail_table(doc: &SchedulerResults) -> Table {
    let header = [
        "workload",
        "runtime",
        "median",
        "min",
        "max",
        "round medians (ms)",
    ];
    let mut table = Table::new(header.into_iter().chain(["csw vol", "csw invol"]));
    for workload in &doc.workloads {
        for name in &doc.settings.suite.runtimes {
            let Some(summary) = workload
                .runtimes
                .get(name)
                .and_then(RuntimeResult::ok_summary)
            else {
                continue;
            };
            let rounds: Vec<String> = summary
                .round_medians_ms
                .iter()
                .map(|&m| table::ms(m))
                .collect();
            table.row(vec![
                workload.name.clone(),
                name.clone(),
                table::ms(summary.median_ms),
                table::ms(summary.min_ms),
                table::ms(summary.max_ms),
                rounds.join(" "),
                table::count(summary.csw_voluntary_per_iter),
                table::count(summary.csw_involuntary_per_iter),
            ]);
        }
    }
    table
}

fn counter_table(doc: &SchedulerResults) -> Table {
    let header = std::iter::once("workload").chain(COUNTER_COLUMNS.iter().map(|c| c.0));
    let mut table = Table::new(header);
    for workload in &doc.workloads {
        let Some(summary) = workload
            .runtimes
            .get(RuntimeKind::Weft.name())
            .and_then(RuntimeResult::ok_summary)
        else {
            continue;
        };
        let mut row = vec![workload.name.clone()];
        row.extend(COUNTER_COLUMNS.iter().map(|(_, fields)| {
            let sum: f64 = fields
                .iter()
                .filter_map(|f| summary.counters_per_iter.get(*f))
                .sum();
            table::count(sum)
        }));
        table.row(row);
    }
    table
}
