//! The echo lane's table: one line per (row, runtime) with req/s, the
//! round-trip percentiles in µs, CPU, and on weft's line its ratios to the
//! best peer and whether it meets the targets; the settings above, a
//! legend and warnings below.

use std::fmt::Write;

use super::Row;
use super::result::{
    EchoResult, EchoRun, Figures, P99_TARGET, REQ_PER_S_TARGET, Ratios, RowResult,
};
use crate::json::{Machine, Versions};
use crate::table::Table;

/// The header `weft-bench echo` prints above the table (the default run
/// prints the scheduler lane's instead).
pub fn header(machine: &Machine, versions: &Versions) -> String {
    format!(
        "weft-bench echo: {} cores, {}\n{}, tokio {}, async-executor {}, {}\n",
        machine.cores,
        machine.cpu_model,
        versions.weft_label(),
        versions.tokio,
        versions.async_executor,
        versions.rustc
    )
}

/// Renders the lane's table, legend and warnings.
pub fn render(result: &EchoResult) -> String {
    let s = &result.settings;
    let mut out = format!(
        "\necho lane: {} profile, {} workers per server, one load-generator thread; TCP over \
         loopback, closed loop; {} s warm-up, {} s measured per row and runtime\n",
        s.profile,
        s.workers,
        s.warmup_ms / 1e3,
        s.measure_ms / 1e3,
    );
    let _ = writeln!(out, "{}", figures_table(result).render());
    let _ = writeln!(
        out,
        "req/s: round trips finished per second; p50-max: round-trip latency, µs; CPU: the \
         process's (server, generator, helper threads), ms per s; gen CPU: the load \
         generator thread's part of it; req÷best: weft's req/s over the best peer's (target ≥ {REQ_PER_S_TARGET}), p99÷best: weft's p99 over the lowest \
         peer p99 (target ≤ {P99_TARGET}); others: the machine's CPU other processes used \
         meanwhile"
    );
    if let Some(pct) = result.others_cpu_pct {
        let _ = writeln!(
            out,
            "other processes used {pct:.0}% of the machine meanwhile"
        );
    }
    for warning in &result.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

const FIGURE_HEADER: [&str; 14] = [
    "row",
    "runtime",
    "req/s",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "CPU",
    "gen CPU",
    "req÷best",
    "p99÷best",
    "targets",
    "others",
];

fn figures_table(result: &EchoResult) -> Table {
    let mut table = Table::new(FIGURE_HEADER);
    for row in &result.rows {
        let label = label(row);
        for (index, runtime) in result.settings.runtimes.iter().enumerate() {
            let mut cells = vec![
                if index == 0 { label } else { "" }.to_owned(),
                runtime.clone(),
            ];
            match row.runtimes.get(runtime).map(|run| (run, run.ok())) {
                None => cells.push("-".to_owned()),
                Some((_, Some(figures))) => {
                    cells.extend(figure_cells(figures));
                    if runtime == crate::runtimes::RuntimeKind::Weft.name() {
                        cells.extend(ratio_cells(row.ratios.as_ref()));
                    }
                    cells.resize(FIGURE_HEADER.len() - 1, String::new());
                    cells.push(
                        figures
                            .others_cpu_pct
                            .map_or("-".to_owned(), |pct| format!("{pct:.0}%")),
                    );
                }
                Some((run, None)) => cells.push(format!(
                    "FAILED: {}",
                    run.error.as_deref().unwrap_or("unknown")
                )),
            }
            table.row(cells);
        }
    }
    table
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

fn figure_cells(f: &Figures) -> Vec<String> {
    let mut cells = vec![format!("{:.0}", f.req_per_s)];
    match &f.latency {
        Some(p) => cells.extend([p.p50_ms, p.p90_ms, p.p99_ms, p.p999_ms, p.max_ms].map(us)),
        None => cells.extend(std::iter::repeat_n("-".to_owned(), 5)),
    }
    cells.push(format!("{:.0}", f.cpu_ms_per_s));
    cells.push(format!("{:.0}", f.generator_cpu_ms_per_s));
    cells
}

pub(crate) fn ratio_cells(ratios: Option<&Ratios>) -> Vec<String> {
    let Some(r) = ratios else {
        return Vec::new();
    };
    let ratio = |peer: &Option<crate::mixed::result::PeerRatio>| {
        peer.as_ref()
            .map_or("-".to_owned(), |p| format!("{:.2} {}", p.value, p.peer))
    };
    let verdict = |met: Option<bool>| match met {
        Some(true) => "met",
        Some(false) => "missed",
        None => "-",
    };
    vec![
        ratio(&r.req_per_s_vs_best),
        ratio(&r.p99_vs_best),
        format!("{}/{}", verdict(r.req_per_s_met), verdict(r.p99_met)),
    ]
}

/// The row's name as the table reads it.
fn label(row: &RowResult) -> &str {
    match Row::from_name(&row.name) {
        Some(known) => known.label(),
        None => &row.name,
    }
}

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &EchoRun) -> String {
    let Some(f) = run.ok() else {
        return format!("FAILED: {}", run.error.as_deref().unwrap_or("unknown"));
    };
    let (p50, p99) = f
        .latency
        .as_ref()
        .map_or(("-".to_owned(), "-".to_owned()), |p| {
            (us(p.p50_ms), us(p.p99_ms))
        });
    let others = f
        .others_cpu_pct
        .map_or(String::new(), |pct| format!(", others {pct:.0}%"));
    format!(
        "{:.0} req/s, p50 {p50} µs, p99 {p99} µs, CPU {:.0} ms/s (generator {:.0}){others}",
        f.req_per_s, f.cpu_ms_per_s, f.generator_cpu_ms_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_in_microseconds() {
        assert_eq!(us(0.0474), "47");
        assert_eq!(us(0.0052), "5.2");
        assert_eq!(
            one_line(&EchoRun::failed("server: no net".to_owned())),
            "FAILED: server: no net"
        );
    }
}
