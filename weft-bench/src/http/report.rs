//! The HTTP lane's table: one line per runtime with req/s, the request
//! latency percentiles in µs, CPU (per second and per request), and on
//! weft's line its ratios to the best peer and whether it meets the
//! targets; the settings above, a legend and warnings below.

use std::fmt::Write;

use super::result::{HttpResult, P99_TARGET, REQ_PER_S_TARGET};
use crate::echo::report::{ratio_cells, us};
use crate::echo::result::Figures;
use crate::json::{Machine, Versions};
use crate::runtimes::RuntimeKind;
use crate::table::Table;

/// The header `weft-bench http` prints above the table (the default run
/// prints the scheduler lane's instead).
pub fn header(machine: &Machine, versions: &Versions) -> String {
    format!(
        "weft-bench http: {} cores, {}\n{}, tokio {}, async-executor {}, {}\n",
        machine.cores,
        machine.cpu_model,
        versions.weft_label(),
        versions.tokio,
        versions.async_executor,
        versions.rustc
    )
}

/// Renders the lane's table, legend and warnings.
pub fn render(result: &HttpResult) -> String {
    let s = &result.settings;
    let mut out = format!(
        "\nhttp lane: {} profile, hyper HTTP/1.1 hello ({} B body), {} workers per server; \
         one hyper-client thread, {} keep-alive connections, closed loop; {} s warm-up, {} s \
         measured per runtime\n",
        s.profile,
        s.body_bytes,
        s.workers,
        s.connections,
        s.warmup_ms / 1e3,
        s.measure_ms / 1e3,
    );
    let _ = writeln!(out, "{}", figures_table(result).render());
    let _ = writeln!(
        out,
        "req/s: responses finished per second; p50-max: request latency (send to last body \
         byte), µs; CPU: the process's (server, generator, helper threads), ms per s; µs/req: \
         that CPU per request; gen CPU: the load generator thread's part, ms per s (near \
         1000 the generator bounds the figures); req÷best: weft's req/s over the best peer's \
         (target ≥ {REQ_PER_S_TARGET}), p99÷best: weft's p99 over the lowest peer p99 (target \
         ≤ {P99_TARGET}); others: the machine's CPU other processes used meanwhile"
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
    "runtime",
    "req/s",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "CPU",
    "µs/req",
    "gen CPU",
    "req÷best",
    "p99÷best",
    "targets",
    "others",
];

fn figures_table(result: &HttpResult) -> Table {
    let mut table = Table::new(FIGURE_HEADER);
    for row in &result.rows {
        for runtime in &result.settings.runtimes {
            let mut cells = vec![runtime.clone()];
            match row.runtimes.get(runtime).map(|run| (run, run.ok())) {
                None => cells.push("-".to_owned()),
                Some((_, Some(figures))) => {
                    cells.extend(figure_cells(figures));
                    if runtime == RuntimeKind::Weft.name() {
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

fn figure_cells(f: &Figures) -> Vec<String> {
    let mut cells = vec![format!("{:.0}", f.req_per_s)];
    match &f.latency {
        Some(p) => cells.extend([p.p50_ms, p.p90_ms, p.p99_ms, p.p999_ms, p.max_ms].map(us)),
        None => cells.extend(std::iter::repeat_n("-".to_owned(), 5)),
    }
    cells.push(format!("{:.0}", f.cpu_ms_per_s));
    cells.push(
        f.cpu_us_per_req
            .map_or("-".to_owned(), |cpu| format!("{cpu:.1}")),
    );
    cells.push(format!("{:.0}", f.generator_cpu_ms_per_s));
    cells
}

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &crate::echo::result::EchoRun) -> String {
    let line = crate::echo::report::one_line(run);
    match run.ok().and_then(|f| f.cpu_us_per_req) {
        Some(cpu) => format!("{line}, {cpu:.1} µs CPU/req"),
        None => line,
    }
}
