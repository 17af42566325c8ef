//! The parts every suite's printed tables share: the header a suite's own
//! command prints and the table of runs (one line per row and runtime);
//! below them, what may have skewed the figures ([`super::skew::Skew`]).
//! Each suite keeps only its columns and its special tables (the mixed
//! suite's targets, its from-submission lines).

use super::skew::Windowed;
use super::{Attempt, FiguresOf, Row};
use crate::common::json::{Machine, Versions};
use crate::common::table::Table;

/// The header `weft-bench GATED` prints above the suite's tables (the
/// default run prints the scheduler suite's instead).
pub fn header(suite: &str, machine: &Machine, versions: &Versions) -> String {
    format!(
        "weft-bench {suite}: {} cores, {}\n{}, tokio {}, async-executor {}, {}\n",
        machine.cores,
        machine.cpu_model,
        versions.weft_label(),
        versions.tokio,
        versions.async_executor,
        versions.rustc
    )
}

/// A suite's printed text up to its own sections: its title line, its
/// table and the legend under it (below them go the suite's special tables
/// and [`super::skew::Skew::footer`]).
pub fn suite_text(title: &str, table: &Table, legend: &str) -> String {
    format!("\n{title}\n{}\n{legend}\n", table.render())
}

/// A completed run's cells: from its row, its runtime's name and its
/// figures.
pub type Cells<'a, R> = dyn Fn(&R, &str, &FiguresOf<R>) -> Vec<String> + 'a;

/// How a suite's table of runs reads its rows.
pub struct Runs<'a, R: Row> {
    /// The column headers: the row's label (when `label` is given), the
    /// runtime, the suite's columns, and last the share of the machine
    /// other processes used during the run.
    pub header: &'a [&'a str],
    /// The row's label in its first line (`None`: no label column).
    pub label: Option<fn(&R) -> &str>,
    /// A completed run's cells between the runtime and the last column.
    pub cells: &'a Cells<'a, R>,
}

impl<R: Row> Runs<'_, R>
where
    FiguresOf<R>: Windowed,
{
    /// One line per row and runtime of `runtimes` (in that order): a
    /// completed run's cells, `FAILED` and the error of a failed one, `-`
    /// for a runtime that did not run the row.
    pub fn table(&self, rows: &[R], runtimes: &[String]) -> Table {
        let mut table = Table::new(self.header.iter().copied());
        for row in rows {
            for (index, runtime) in runtimes.iter().enumerate() {
                let mut cells = Vec::new();
                if let Some(label) = self.label {
                    cells.push(if index == 0 { label(row) } else { "" }.to_owned());
                }
                cells.push(runtime.clone());
                match row.runs().get(runtime) {
                    None => cells.push("-".to_owned()),
                    Some(run) => match run.ok() {
                        Some(figures) => {
                            cells.extend((self.cells)(row, runtime, figures));
                            cells.resize(self.header.len() - 1, String::new());
                            let others = figures.window().others_cpu_pct;
                            cells.push(others.map_or("-".to_owned(), |pct| format!("{pct:.0}%")));
                        }
                        None => cells.push(format!("FAILED: {}", run.error().unwrap_or("unknown"))),
                    },
                }
                table.row(cells);
            }
        }
        table
    }
}
