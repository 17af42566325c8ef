//! The mixed suite's tables: one line per (load, runtime) with throughput,
//! short-request percentiles, long p99, CPU and weft's ratios; then the
//! targets, each weft variant's value and whether it met it; the settings
//! above, the calibration and warnings below.

use std::fmt::Write;

use super::Load;
use super::result::{Figures, LoadResult, MixedResult, MixedRun, Ratios};
use crate::common::figure::rows::RowKind;
use crate::common::figure::table::{Runs, suite_text};
use crate::common::latency::Percentiles;
use crate::common::table::{self, Table};

/// Renders the suite's tables, legend and warnings.
pub fn render(result: &MixedResult) -> String {
    let s = &result.settings;
    let title = format!(
        "mixed suite: {} profile, {} workers; short {:.0} µs and long {} ms of CPU in one poll; \
         {} per load and runtime",
        s.suite.profile,
        s.suite.workers,
        s.short_cpu_us,
        table::ms(s.long_cpu_ms),
        s.window.describe(),
    );
    let runs = Runs {
        header: &header(),
        label: Some(label),
        cells: &|load: &LoadResult, runtime: &str, figures: &Figures| {
            let mut cells = figure_cells(figures);
            cells.extend(ratio_cells(load.ratios.get(runtime)));
            cells
        },
    };
    let legend = "short/s, long/s: completions per second; p50-max: short-request latency, ms \
         (closed loop: from submission, open loop: from the scheduled arrival); CPU: the \
         process's, ms per s; thr/s: threads the runtime started per s of the window (weft: \
         RuntimeMetrics::threads_started; tokio: its on_thread_start hook; n/a: smol and the \
         oracle, which count none); p99÷best: short p99 over the lowest peer's; long÷tokio, \
         CPU÷tokio: over tokio's; others: the machine's CPU other processes used meanwhile; \
         oracle: the load served by a scheduler told each request's kind (short ones on \
         threads of their own, long ones under SCHED_IDLE): what this machine allows, not a \
         peer";
    let table = runs.table(&result.loads, &s.suite.runtimes);
    let mut out = suite_text(&title, &table, legend);
    for line in from_submission_lines(result) {
        let _ = writeln!(out, "{line}");
    }
    // Targets are weft's: a run of the peers alone has none.
    if result.loads.iter().any(|load| !load.targets.is_empty()) {
        let _ = writeln!(out, "\ntargets\n{}", targets_table(result).render());
    }
    let c = &result.calibration;
    let _ = write!(
        out,
        "work loop: {:.0} turns/µs; a short request measured {:.0} µs and a long one {} ms of \
         CPU",
        c.iterations_per_us,
        c.short_measured_us,
        table::ms(c.long_measured_ms)
    );
    match (c.end_iterations_per_us, c.drift_pct()) {
        (Some(end), Some(drift)) => {
            let _ = writeln!(out, "; {end:.0} turns/µs at the end ({drift:+.1}%)");
        }
        _ => out.push('\n'),
    }
    out.push_str(&result.skew.footer());
    out
}

/// The columns of the suite's table: the load's and the runtime's, a run's
/// figures, each weft variant's ratios, and the others' share.
fn header() -> Vec<&'static str> {
    let ratios = ["p99÷best", "long÷tokio", "CPU÷tokio", "others"];
    let first = ["load", "runtime", "short/s", "long/s"];
    [
        &first[..],
        &Percentiles::LABELS,
        &["long p99", "CPU", "thr/s"],
        &ratios,
    ]
    .concat()
}

fn figure_cells(f: &Figures) -> Vec<String> {
    let mut cells = vec![
        format!("{:.0}", f.short_per_s),
        format!("{:.1}", f.long_per_s),
    ];
    cells.extend(Percentiles::cells(f.short.as_ref(), table::ms));
    cells.push(
        f.long
            .as_ref()
            .map_or("-".to_owned(), |p| table::ms(p.p99_ms)),
    );
    cells.push(format!("{:.0}", f.window.cpu_ms_per_s));
    cells.push(
        f.threads_started_per_s
            .map_or("n/a".to_owned(), |t| format!("{t:.1}")),
    );
    cells
}

fn ratio_cells(ratios: Option<&Ratios>) -> Vec<String> {
    let Some(r) = ratios else {
        return Vec::new();
    };
    let ratio = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
    vec![
        r.short_p99_vs_best
            .as_ref()
            .map_or("-".to_owned(), |b| format!("{:.2} {}", b.value, b.peer)),
        ratio(r.long_per_s_vs_tokio),
        ratio(r.cpu_vs_tokio),
    ]
}

fn targets_table(result: &MixedResult) -> Table {
    let weft: Vec<&String> = result
        .settings
        .suite
        .runtimes
        .iter()
        .filter(|r| super::result::is_weft(r))
        .collect();
    let header = ["load", "target"]
        .into_iter()
        .map(String::from)
        .chain(weft.iter().map(|r| r.to_string()));
    let mut table = Table::new(header);
    for load in &result.loads {
        let label = label(load);
        // Each target once, in the order of the first variant's checks.
        let mut targets: Vec<&str> = Vec::new();
        for check in &load.targets {
            if !targets.contains(&check.target.as_str()) {
                targets.push(&check.target);
            }
        }
        for (index, target) in targets.into_iter().enumerate() {
            let mut cells = vec![
                if index == 0 { label } else { "" }.to_owned(),
                target.to_owned(),
            ];
            cells.extend(
                weft.iter()
                    .map(|runtime| target_cell(load, runtime, target)),
            );
            table.row(cells);
        }
    }
    table
}

/// For each open-loop load, the short p99 from submission and the
/// generator's lateness (p99), runtime by runtime: the runtime's own part
/// of the table's p99, which counts from the scheduled arrival.
fn from_submission_lines(result: &MixedResult) -> Vec<String> {
    let mut lines = Vec::new();
    for load in &result.loads {
        let parts: Vec<String> = result
            .settings
            .suite
            .runtimes
            .iter()
            .filter_map(|name| {
                let f = load.runtimes.get(name)?.ok()?;
                let p99 = f.short_from_submit.as_ref()?.p99_ms;
                let lag = f
                    .submit_lag_p99_ms
                    .map_or(String::new(), |lag| format!(" (lag {})", table::ms(lag)));
                Some(format!("{name} {}{lag}", table::ms(p99)))
            })
            .collect();
        if !parts.is_empty() {
            lines.push(format!(
                "{}: short p99 from submission, ms (generator lateness p99): {}",
                label(load),
                parts.join(", ")
            ));
        }
    }
    lines
}

/// The load's name as the tables read it.
fn label(load: &LoadResult) -> &str {
    Load::label_of(&load.name)
}

fn target_cell(load: &LoadResult, runtime: &str, target: &str) -> String {
    load.targets
        .iter()
        .find(|c| c.runtime == runtime && c.target == target)
        .map_or("-".to_owned(), |c| {
            format!("{} {}", c.value_text(), c.verdict())
        })
}

/// A run's figures on one line, for the progress output.
pub fn one_line(run: &MixedRun) -> String {
    let Some(f) = run.ok() else {
        return format!("FAILED: {}", run.error.as_deref().unwrap_or("unknown"));
    };
    let p99 = |p: Option<&crate::common::latency::Percentiles>| {
        p.map_or("-".to_owned(), |p| table::ms(p.p99_ms))
    };
    let lag = f.submit_lag_p99_ms.map_or(String::new(), |lag| {
        format!(", generator lag p99 {} ms", table::ms(lag))
    });
    let others = f
        .window
        .others_cpu_pct
        .map_or(String::new(), |pct| format!(", others {pct:.0}%"));
    let threads = f
        .threads_started_per_s
        .map_or(String::new(), |t| format!(", threads started {t:.1}/s"));
    let monitor = f.monitor.as_ref().map_or(String::new(), |counters| {
        let counters = counters.iter().map(|(name, &value)| (name.as_str(), value));
        format!("; monitor: {}", table::counters(counters))
    });
    format!(
        "short {:.0}/s p99 {} ms, long {:.1}/s p99 {} ms, CPU {:.0} ms/s{threads}{lag}{others}{monitor}",
        f.short_per_s,
        p99(f.short.as_ref()),
        f.long_per_s,
        p99(f.long.as_ref()),
        f.window.cpu_ms_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Readings;
    use crate::suites::mixed::result::MixedRun;
    use std::time::Duration;

    #[test]
    fn a_failed_run_reads_failed() {
        assert_eq!(
            one_line(&MixedRun::failed("no result within 41 s".to_owned())),
            "FAILED: no result within 41 s"
        );
    }

    /// weft's monitor counters close the line, the zero ones left out; a
    /// peer's line has none.
    #[test]
    fn a_weft_run_ends_with_its_monitor_counters() {
        let outcome = crate::suites::mixed::generator::Outcome {
            readings: Readings::steady(Duration::from_secs(1), Duration::ZERO),
            monitor: Some(vec![("stalls", 12), ("handoffs", 0), ("step_asides", 3)]),
            ..Default::default()
        };
        let line = one_line(&MixedRun::from_outcome(&outcome));
        assert!(
            line.ends_with("; monitor: stalls 12, step asides 3"),
            "{line}"
        );
        let peer = crate::suites::mixed::generator::Outcome {
            monitor: None,
            ..outcome
        };
        assert!(!one_line(&MixedRun::from_outcome(&peer)).contains("monitor"));
    }
}
