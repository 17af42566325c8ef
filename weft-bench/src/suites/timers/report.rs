//! The timers suite's table: one line per row with every runtime's value,
//! the best peer and weft's ratio to it; the settings above it and the
//! warnings below.

use super::result::{TimerRow, TimerValue, TimersResult};
use crate::common::figure::table::suite_text;
use crate::common::table::{self, Table};

/// Renders the suite's table, its legend and its warnings.
pub fn render(result: &TimersResult) -> String {
    let s = &result.settings;
    let z = &s.sizes;
    let title = format!(
        "timers suite: {} profile, {} workers; repetitions: {} (arm_cancel {}, heartbeat {})",
        s.suite.profile,
        s.suite.workers,
        z.repetitions,
        z.arm_cancel_repetitions,
        z.heartbeat_repetitions
    );
    let legend = "every row is lower-is-better; ÷best: weft's value over the lowest peer's \
                  (below 1.0 weft is lower)";
    suite_text(&title, &table(result), legend) + &result.skew.footer()
}

fn table(result: &TimersResult) -> Table {
    let runtimes = &result.settings.suite.runtimes;
    let header = ["row", "unit"]
        .into_iter()
        .map(String::from)
        .chain(runtimes.iter().cloned())
        .chain(["best peer", "÷best"].map(String::from));
    let mut table = Table::new(header);
    for row in &result.rows {
        let mut cells = vec![row.name.clone(), row.unit.clone()];
        cells.extend(runtimes.iter().map(|r| value_cell(row.runtimes.get(r))));
        cells.push(row.best.as_ref().map_or("-".to_owned(), |b| b.peer.clone()));
        cells.push(
            row.best
                .as_ref()
                .map_or("-".to_owned(), |b| format!("{:.2}", b.value)),
        );
        table.row(cells);
    }
    table
}

/// A row's values on one line, for the progress output.
pub fn one_line(row: &TimerRow) -> String {
    let values: Vec<String> = row
        .runtimes
        .iter()
        .map(|(name, value)| format!("{name} {}", value_cell(Some(value))))
        .collect();
    let ratio = row.best.as_ref().map_or(String::new(), |b| {
        format!(" → weft ÷ {} {:.2}", b.peer, b.value)
    });
    format!("{} ({}): {}{ratio}", row.name, row.unit, values.join(", "))
}

fn value_cell(value: Option<&TimerValue>) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) => v.ok_value().map_or("FAILED".to_owned(), table::ms),
    }
}
