//! The tables every suite of servers shares (echo's, HTTP's): the table
//! of runs, one line per row and server with req/s, the latency
//! percentiles in µs, CPU, and on weft's line its ratios to the best peer
//! and whether it meets the targets; the server's cost per request; what
//! the legend says of the floor; a run's progress line.

use super::cost::KINDS;
use super::floor::FLOOR;
use super::result::{Figures, Ratios, ServedRow, ServedRun};
use crate::common::figure::WEFT;
use crate::common::figure::table::Runs;
use crate::common::latency::Percentiles;
use crate::common::table::{Table, us};

/// What the legends of the echo and HTTP suites say of the floor, when it
/// is among `runtimes`.
pub fn floor_legend(runtimes: &[String]) -> &'static str {
    if runtimes.iter().any(|r| r == FLOOR) {
        "; floor: the same requests answered with no async runtime (a thread and an epoll set \
         per worker, one read and one write per readiness event): what this machine needs for \
         the work, not a peer (no ratio, no target)"
    } else {
        ""
    }
}

/// The table of runs of the echo suite (and of the HTTP suite, under its
/// `header`, with no row label and with CPU per request): on weft's lines
/// its ratios and targets.
pub fn runs_table(
    rows: &[ServedRow],
    runtimes: &[String],
    header: &[&str],
    label: Option<fn(&ServedRow) -> &str>,
    per_request: bool,
) -> Table {
    let runs = Runs {
        header,
        label,
        cells: &|row: &ServedRow, runtime: &str, figures: &Figures| {
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
/// `per_request`: the HTTP suite's) and the generator's CPU.
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
/// line per row, load (the suite's, or the paced rate) and runtime that
/// was counted; then weft's targets on it, met or missed, and why a run
/// has no counts.
pub fn cost_text(rows: &[ServedRow], runtimes: &[String]) -> String {
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
            std::iter::once(("suite".to_owned(), &row.runtimes, &row.targets)).chain(paced)
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

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &ServedRun) -> String {
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
            one_line(&ServedRun::failed("server: no net".to_owned())),
            "FAILED: server: no net"
        );
    }
}
