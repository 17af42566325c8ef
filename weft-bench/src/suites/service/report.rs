//! The service suite's tables: one line per load and runtime with the
//! measured requests' rate and latency percentiles, `/report`s per
//! second, the server's and the generator's CPU, errors, and on weft's
//! line its ratios to tokio; then weft's targets, met or missed; the
//! settings above, a legend and warnings below.

use std::fmt::Write;

use super::Load;
use super::result::{Figures, ServiceResult, ServiceRow, ServiceRun};
use crate::common::figure::WEFT;
use crate::common::figure::rows::RowKind;
use crate::common::figure::table::{Runs, suite_text};
use crate::common::figure::target;
use crate::common::latency::Percentiles;
use crate::common::table::ms;

/// Renders the suite's tables, legend and warnings.
pub fn render(result: &ServiceResult) -> String {
    let s = &result.settings;
    let title = format!(
        "service suite: {} profile, weft-service on {} with {} workers per server, each in a \
         process of its own; one generator thread: /fortunes on {} connections (closed loop); \
         seed 004: /users at {}/s (open loop) beside {} closed-loop /report?ms={}; {} per pair",
        s.suite.profile,
        s.database,
        s.suite.workers,
        s.connections,
        s.users_per_s,
        s.reporters,
        s.report_ms,
        s.window.describe(),
    );
    let header = [
        &["load", "runtime", "req/s"][..],
        &Percentiles::LABELS,
        &[
            "reports/s",
            "server CPU",
            "gen CPU",
            "errors",
            "req÷tokio",
            "p99÷tokio",
            "others",
        ],
    ]
    .concat();
    let runs = Runs {
        header: &header,
        label: Some(|row: &ServiceRow| Load::label_of(&row.name)),
        cells: &|row: &ServiceRow, runtime: &str, f: &Figures| {
            let mut cells = figure_cells(f);
            if runtime == WEFT {
                let ratio = |name: &str| {
                    row.ratios
                        .get(name)
                        .map_or("-".to_owned(), |r| format!("{:.2}", r.value))
                };
                cells.extend([ratio("req_per_s"), ratio("p99_ms")]);
            }
            cells
        },
    };
    let runs = runs.table(&result.rows, &s.suite.runtimes);
    let legend = "req/s: the measured requests (/fortunes; /users) answered in the window, \
         per s; p50-max: their latency, ms, from the send (closed loop) or from the arrival \
         (open loop); reports/s: /report answers per s; server CPU: the server process's, ms \
         per s; gen CPU: the generator process's; errors: failed requests or wrong answers, \
         warm-up included; req÷tokio, p99÷tokio: weft's over tokio's; others: the machine's \
         CPU other processes used meanwhile";
    let mut out = suite_text(&title, &runs, legend);
    let _ = writeln!(
        out,
        "targets\n{}",
        target::table(result.rows.iter().flat_map(|row| &row.targets)).render()
    );
    out += &soak_tables(result);
    out + &result.skew.footer()
}

fn figure_cells(f: &Figures) -> Vec<String> {
    let mut cells = vec![format!("{:.0}", f.req_per_s)];
    cells.extend(Percentiles::cells(f.latency.as_ref(), ms));
    cells.push(
        f.reports_per_s
            .map_or("-".to_owned(), |r| format!("{r:.1}")),
    );
    cells.push(format!("{:.0}", f.window.cpu_ms_per_s));
    cells.push(format!("{:.0}", f.generator_cpu_ms_per_s));
    cells.push(f.errors.to_string());
    cells
}

/// Each soak's samples and verdict, by runtime (empty without a soak).
fn soak_tables(result: &ServiceResult) -> String {
    let mut out = String::new();
    for row in &result.rows {
        for (runtime, run) in &row.runtimes {
            let Some(soak) = run.ok().and_then(|f| f.soak.as_ref()) else {
                continue;
            };
            let _ = writeln!(
                out,
                "soak on {runtime}: the server every {} s (resources now; answers, their p99 \
                 and CPU since the last sample; errors so far)\n{}verdict on {runtime}: {}\n",
                soak.interval_s,
                soak.table().render(),
                soak.verdict_line()
            );
        }
    }
    out
}

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &ServiceRun) -> String {
    let Some(f) = run.ok() else {
        return format!("FAILED: {}", run.error.as_deref().unwrap_or("unknown"));
    };
    let p = |of: fn(&Percentiles) -> f64| f.latency.as_ref().map_or("-".to_owned(), |p| ms(of(p)));
    let reports = f
        .reports_per_s
        .map_or(String::new(), |r| format!(", {r:.1} reports/s"));
    let soak = f.soak.as_ref().map_or(String::new(), |soak| {
        format!("; soak {}", soak.verdict_line())
    });
    format!(
        "{:.0} req/s, p50 {} ms, p99 {} ms, p99.9 {} ms{reports}, server CPU {:.0} ms/s, {} errors{soak}",
        f.req_per_s,
        p(|p| p.p50_ms),
        p(|p| p.p99_ms),
        p(|p| p.p999_ms),
        f.window.cpu_ms_per_s,
        f.errors
    )
}
