//! The echo lane's table: one line per (row, runtime) with req/s, the
//! round-trip percentiles in µs, CPU, and on weft's line its ratios to the
//! best peer and whether it meets the targets; the settings above, a
//! legend and warnings below.

use super::Row;
use super::cost::KINDS;
use super::result::{
    EchoResult, EchoRun, Figures, P99_TARGET, REQ_PER_S_TARGET, Ratios, RowResult,
};
use crate::common::figure::WEFT;
use crate::common::figure::lane::RowKind;
use crate::common::figure::table::{Runs, lane_text};
use crate::common::table::{Table, us};
use crate::serve::floor::FLOOR;
use crate::suites::mixed::latency::Percentiles;

/// Renders the lane's table, legend and warnings.
pub fn render(result: &EchoResult) -> String {
    let s = &result.settings;
    let title = format!(
        "echo lane: {} profile, {} workers per server, one load-generator thread; TCP over \
         loopback, closed loop; {} per row and runtime",
        s.lane.profile,
        s.lane.workers,
        s.window.describe(),
    );
    let table = runs_table(
        &result.rows,
        &s.lane.runtimes,
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
        floor_legend(&s.lane.runtimes)
    );
    let cost = cost_text(&result.rows, &s.lane.runtimes);
    lane_text(&title, &table, &legend) + &cost + &result.skew.footer()
}

/// What the legends of the echo and HTTP lanes say of the floor, when it
/// is among `runtimes`.
pub(crate) fn floor_legend(runtimes: &[String]) -> &'static str {
    if runtimes.iter().any(|r| r == FLOOR) {
        "; floor: the same requests answered with no async runtime (a thread and an epoll set \
         per worker, one read and one write per readiness event): what this machine needs for \
         the work, not a peer (no ratio, no target)"
    } else {
        ""
    }
}

/// The columns of the lane's table: the row's and the runtime's, a run's
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

/// The table of runs of the echo lane (and of the HTTP lane, under its
/// `header`, with no row label and with CPU per request): on weft's lines
/// its ratios and targets.
pub(crate) fn runs_table(
    rows: &[RowResult],
    runtimes: &[String],
    header: &[&str],
    label: Option<fn(&RowResult) -> &str>,
    per_request: bool,
) -> Table {
    let runs = Runs {
        header,
        label,
        cells: &|row: &RowResult, runtime: &str, figures: &Figures| {
            let mut cells = figure_cells(figures, per_request);
            if runtime == WEFT {
                cells.extend(ratio_cells(row.ratios.as_ref()));
            }
            cells
        },
    };
    runs.table(rows, runtimes)
}

/// A run's cells: req/s, the percentiles in µs, CPU, CPU per request (if
/// `per_request`: the HTTP lane's) and the generator's CPU.
fn figure_cells(f: &Figures, per_request: bool) -> Vec<String> {
    let mut cells = vec![format!("{:.0}", f.req_per_s)];
    cells.extend(Percentiles::cells(f.latency.as_ref(), us));
    cells.push(format!("{:.0}", f.window.cpu_ms_per_s));
    if per_request {
        let cpu = f.cpu_us_per_req;
        cells.push(cpu.map_or("-".to_owned(), |cpu| format!("{cpu:.1}")));
    }
    cells.push(format!("{:.0}", f.generator_cpu_ms_per_s));
    cells
}

/// weft's ratios to the best peer and whether they meet the targets.
fn ratio_cells(ratios: Option<&Ratios>) -> Vec<String> {
    let Some(r) = ratios else {
        return Vec::new();
    };
    let ratio = |peer: &Option<crate::common::figure::PeerRatio>| {
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

/// The server's cost per request (perf on the server's threads): one
/// line per row, load (the lane's, or the paced rate) and runtime that
/// was counted; then weft's targets on it, met or missed, and why a run
/// has no counts.
pub(crate) fn cost_text(rows: &[RowResult], runtimes: &[String]) -> String {
    let mut table = Table::new(
        ["row", "load", "runtime", "req/s", "µs/req", "sys/req"]
            .into_iter()
            .chain(KINDS.map(|k| k.strip_prefix("sched_").unwrap_or(k)))
            .chain(["cs/req"]),
    );
    let mut notes = Vec::new();
    for row in rows {
        let paced = row
            .paced
            .iter()
            .map(|p| (format!("{:.0}/s", p.rate_per_s), &p.runtimes, &p.targets));
        for (load, runs, targets) in
            std::iter::once(("lane".to_owned(), &row.runtimes, &row.targets)).chain(paced)
        {
            for runtime in runtimes {
                let Some(f) = runs.get(runtime).and_then(|r| r.ok()) else {
                    continue;
                };
                let mut cells = vec![
                    row.name.clone(),
                    load.clone(),
                    runtime.clone(),
                    format!("{:.0}", f.req_per_s),
                ];
                match &f.server {
                    Some(c) => {
                        cells.extend(
                            [c.cpu_us_per_req, c.syscalls_per_req].map(|v| format!("{v:.2}")),
                        );
                        cells.extend(KINDS.map(|k| {
                            format!("{:.3}", c.syscalls_by_kind.get(k).copied().unwrap_or(0.0))
                        }));
                        cells.push(format!("{:.3}", c.context_switches_per_req));
                    }
                    None => {
                        cells.extend(std::iter::repeat_n("n/a".to_owned(), KINDS.len() + 3));
                        if let Some(err) = &f.server_error
                            && !notes.contains(err)
                        {
                            notes.push(err.clone());
                        }
                    }
                }
                table.row(cells);
            }
            for check in targets {
                notes.push(format!(
                    "{} ({}, {load}): {} {}",
                    check.target,
                    row.name,
                    check.value_text(),
                    check.verdict()
                ));
            }
        }
    }
    format!(
        "server cost per request (perf on the server's threads)\n{}{}",
        table.render(),
        notes.iter().map(|n| format!("{n}\n")).collect::<String>()
    )
}

/// The row's name as the table reads it.
fn label(row: &RowResult) -> &str {
    Row::label_of(&row.name)
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
        .window
        .others_cpu_pct
        .map_or(String::new(), |pct| format!(", others {pct:.0}%"));
    format!(
        "{:.0} req/s, p50 {p50} µs, p99 {p99} µs, CPU {:.0} ms/s (generator {:.0}){others}",
        f.req_per_s, f.window.cpu_ms_per_s, f.generator_cpu_ms_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_run_reads_failed() {
        assert_eq!(
            one_line(&EchoRun::failed("server: no net".to_owned())),
            "FAILED: server: no net"
        );
    }
}
