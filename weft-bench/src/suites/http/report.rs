//! The HTTP suite's table: one line per runtime with req/s, the request
//! latency percentiles in µs, CPU (per second and per request), and on
//! weft's line its ratios to the best peer and whether it meets the
//! targets; the settings above, a legend and warnings below.

use super::result::{HttpResult, P99_TARGET, REQ_PER_S_TARGET};
use crate::common::figure::table::suite_text;
use crate::common::latency::Percentiles;
use crate::serve::report::{cost_text, floor_legend, runs_table};
use crate::serve::result::ServedRun;

/// Renders the suite's table, legend and warnings.
pub fn render(result: &HttpResult) -> String {
    let s = &result.settings;
    let title = format!(
        "http suite: {} profile, hyper HTTP/1.1 hello ({} B body), {} workers per server; \
         one hyper-client thread, {} keep-alive connections, closed loop; {} per runtime",
        s.suite.profile,
        s.body_bytes,
        s.suite.workers,
        s.connections,
        s.window.describe(),
    );
    let table = runs_table(&result.rows, &s.suite.runtimes, &header(), None, true);
    let legend = format!(
        "req/s: responses finished per second; p50-max: request latency (send to last body \
         byte), µs; CPU: the process's (server, generator, helper threads), ms per s; µs/req: \
         that CPU per request; gen CPU: the load generator thread's part, ms per s (near \
         1000 the generator bounds the figures); req÷best: weft's req/s over the best peer's \
         (target ≥ {REQ_PER_S_TARGET}), p99÷best: weft's p99 over the lowest peer p99 (target \
         ≤ {P99_TARGET}); others: the machine's CPU other processes used meanwhile{}",
        floor_legend(&s.suite.runtimes)
    );
    let cost = cost_text(&result.rows, &s.suite.runtimes);
    suite_text(&title, &table, &legend) + &cost + &result.skew.footer()
}

/// The columns of the suite's table: the runtime, a run's figures, weft's
/// ratios and targets, and the others' share.
fn header() -> Vec<&'static str> {
    let ratios = ["req÷best", "p99÷best", "targets", "others"];
    let cpu = ["CPU", "µs/req", "gen CPU"];
    [
        &["runtime", "req/s"][..],
        &Percentiles::LABELS,
        &cpu,
        &ratios,
    ]
    .concat()
}

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &ServedRun) -> String {
    let line = crate::serve::report::one_line(run);
    match run.ok().and_then(|f| f.cpu_us_per_req) {
        Some(cpu) => format!("{line}, {cpu:.1} µs CPU/req"),
        None => line,
    }
}
