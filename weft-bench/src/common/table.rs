//! A plain-text table: the first column left-aligned, the others
//! right-aligned, columns as wide as their widest cell; and the number
//! formats the tables share.

use std::fmt::Write;

/// A column of a table whose rows are `R`s: its header, and its cell in
/// a row.
pub type Column<R> = (&'static str, fn(&R) -> String);

/// A table being filled row by row.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are left blank; a row may not have
    /// more cells than the header).
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert!(
            cells.len() <= self.header.len(),
            "a row of {} cells under {} headers",
            cells.len(),
            self.header.len()
        );
        self.rows.push(cells);
    }

    /// One row per item of `rows` under `columns`.
    pub fn of<'a, R: 'a>(columns: &[Column<R>], rows: impl IntoIterator<Item = &'a R>) -> Table {
        let mut table = Table::new(columns.iter().map(|&(header, _)| header));
        for row in rows {
            table.row(columns.iter().map(|(_, cell)| cell(row)).collect());
        }
        table
    }

    /// The table as text, one line per row, under an underlined header.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|col| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .filter_map(|row| row.get(col))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        for row in std::iter::once(&self.header)
            .chain([&rule])
            .chain(&self.rows)
        {
            let line: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(col, &width)| {
                    let cell = row.get(col).map_or("", String::as_str);
                    if col == 0 {
                        format!("{cell:<width$}")
                    } else {
                        format!("{cell:>width$}")
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        out
    }
}

/// Milliseconds with three significant digits or so.
pub fn ms(value: f64) -> String {
    match value {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v if v >= 1.0 => format!("{v:.2}"),
        v => format!("{v:.3}"),
    }
}

/// A latency in ms as whole µs (tenths below 10 µs).
pub fn us(ms: f64) -> String {
    let us = ms * 1e3;
    if us >= 10.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

/// A mean count per iteration.
pub fn count(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// Named counters as a progress line reads them, `stalls 12, step asides
/// 3`: those above zero, underscores as spaces; `-` when none is.
pub fn counters<'a>(counters: impl Iterator<Item = (&'a str, u64)>) -> String {
    let shown: Vec<String> = counters
        .filter(|&(_, value)| value > 0)
        .map(|(name, value)| format!("{} {value}", name.replace('_', " ")))
        .collect();
    if shown.is_empty() {
        "-".to_owned()
    } else {
        shown.join(", ")
    }
}

/// A relative change, `+12%` / `-3%`.
pub fn delta_pct(base: f64, new: f64) -> String {
    if base == 0.0 {
        return if new == 0.0 {
            "±0%".to_owned()
        } else {
            "new".to_owned()
        };
    }
    format!("{:+.0}%", (new / base - 1.0) * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut table = Table::new(["name", "ms"]);
        table.row(vec!["a".into(), "1.25".into()]);
        table.row(vec!["longer".into(), "10.5".into()]);
        assert_eq!(
            table.render(),
            "name      ms\n------  ----\na       1.25\nlonger  10.5\n"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(ms(123.4), "123");
        assert_eq!(ms(0.2914), "0.291");
        assert_eq!(delta_pct(2.0, 2.5), "+25%");
        assert_eq!(count(2.34), "2.3");
        assert_eq!(us(0.0474), "47");
        assert_eq!(us(0.0052), "5.2");
        let shown = [("stalls", 12), ("handoffs", 0), ("step_asides", 3)];
        assert_eq!(counters(shown.into_iter()), "stalls 12, step asides 3");
        assert_eq!(counters([("stalls", 0)].into_iter()), "-");
    }
}
