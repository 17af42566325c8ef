//! The echo and HTTP suites' part of the default run's summary: per row,
//! weft's requests per second; on rows with cost targets (and their paced
//! runs) the server's CPU, system calls and context switches per request;
//! and under the table, for such a row that also ran on the floor, the
//! floor's cost beside weft's and tokio's (never in a ratio).

use std::collections::BTreeMap;

use super::floor::FLOOR;
use super::result::{REQ_PER_S, SERVER_CPU, SWITCHES, SYSCALLS, ServedRow, ServedRun};
use crate::common::figure::{Row, WEFT};
use crate::common::summary::SummaryTable;

/// Adds `suite`'s `rows` to the summary: lines, and the floor's notes.
pub fn summarize(suite: &'static str, rows: &[ServedRow], table: &mut SummaryTable) {
    for row in rows {
        table.line(suite, row.name.clone(), &REQ_PER_S, row);
        if !row.targets.is_empty() {
            cost_lines(table, suite, row);
        }
        if let Some(paced) = &row.paced {
            cost_lines(table, suite, paced);
        }
    }
    for row in rows {
        if !row.targets.is_empty() && row.runtimes.contains_key(FLOOR) {
            table.note(floor_note(suite, row));
        }
    }
}

/// The server's cost per request on `row` of `suite` (a row with cost
/// targets, or its paced runs): CPU, system calls, context switches.
fn cost_lines<R: Row<Run = ServedRun>>(table: &mut SummaryTable, suite: &'static str, row: &R) {
    for (figure, what) in [
        (&SERVER_CPU, "server µs/req"),
        (&SYSCALLS, "syscalls/req"),
        (&SWITCHES, "switches/req"),
    ] {
        table.line(suite, format!("{} {what}", row.name()), figure, row);
    }
}

/// The server's CPU (µs) and system calls per request of the floor, weft
/// and tokio on `row`, at the suite's load and paced.
fn floor_note(suite: &str, row: &ServedRow) -> String {
    let paced = row.paced.iter().map(|p| {
        let rate = format!("{:.0}/s", p.rate_per_s);
        format!("; at {rate} {}", floor_cells(&p.runtimes))
    });
    format!(
        "{suite} {} server µs/req and syscalls/req, floor | weft | tokio: at the suite's load {}{}",
        row.name,
        floor_cells(&row.runtimes),
        paced.collect::<String>()
    )
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
