//! The echo suite's table: one line per (row, runtime) with req/s, the
//! round-trip percentiles in µs, CPU, and on weft's line its ratios to the
//! best peer and whether it meets the targets; the settings above, a
//! legend and warnings below.

use super::Row;
use super::result::{EchoResult, P99_TARGET, REQ_PER_S_TARGET};
use crate::common::figure::rows::RowKind;
use crate::common::figure::table::suite_text;
use crate::common::latency::Percentiles;
use crate::serve::report::{cost_text, floor_legend, runs_table};
use crate::serve::result::ServedRow;

/// Renders the suite's table, legend and warnings.
pub fn render(result: &EchoResult) -> String {
    let s = &result.settings;
    let title = format!(
        "echo suite: {} profile, {} workers per server, one load-generator thread; TCP over \
         loopback, closed loop; {} per row and runtime",
        s.suite.profile,
        s.suite.workers,
        s.window.describe(),
    );
    let table = runs_table(
        &result.rows,
        &s.suite.runtimes,
        &header(),
        Some(label),
        false,
    );
    let legend = format!(
        "req/s: round trips finished per second; p50-max: round-trip latency, µs; CPU: the \
         process's (server, generator, helper threads), ms per s; gen CPU: the load \
         generator thread's part of it; req÷best: weft's req/s over the best peer's (target ≥ \
         {REQ_PER_S_TARGET}), p99÷best: weft's p99 over the lowest peer p99 (target ≤ \
         {P99_TARGET}); others: the machine's CPU other processes used meanwhile{}",
        floor_legend(&s.suite.runtimes)
    );
    let cost = cost_text(&result.rows, &s.suite.runtimes);
    suite_text(&title, &table, &legend) + &cost + &result.skew.footer()
}

/// The columns of the suite's table: the row's and the runtime's, a run's
/// figures, weft's ratios and targets, and the others' share.
fn header() -> Vec<&'static str> {
    let ratios = ["req÷best", "p99÷best", "targets", "others"];
    [
        &["row", "runtime", "req/s"][..],
        &Percentiles::LABELS,
        &["CPU", "gen CPU"],
        &ratios,
    ]
    .concat()
}

/// The row's name as the table reads it.
fn label(row: &ServedRow) -> &str {
    Row::label_of(&row.name)
}
