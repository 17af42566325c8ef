//! The file suite's tables: one line per runtime with the pass's total
//! time, throughput, warm-up, the ticker's lateness percentiles, CPU, and
//! on weft's line its ratios to the best peer; then weft's targets, met or
//! missed; the settings above, a legend and warnings below.

use std::fmt::Write;

use super::Sizes;
use super::result::{Figures, FileResult, FileRow};
use super::workload::Pass;
use crate::common::figure::WEFT;
use crate::common::figure::table::{Runs, suite_text};
use crate::common::figure::target;
use crate::common::latency::Percentiles;
use crate::common::table::{self, ms};

/// Renders the suite's tables, legend and warnings.
pub fn render(result: &FileResult) -> String {
    let s = &result.settings;
    let title = format!(
        "file suite: {} profile, {} workers per runtime; {}; {} measured pass{} per runtime, \
         each after a warm-up pass of {} per task",
        s.suite.profile,
        s.suite.workers,
        scene(&s.sizes),
        s.sizes.rounds,
        if s.sizes.rounds == 1 { "" } else { "es" },
        bytes(s.sizes.warmup_bytes),
    );
    let header = [
        &["runtime", "total ms", "MiB/s", "warm-up ms", "ticks"][..],
        &Percentiles::LABELS,
        &["CPU ms", "total÷best", "p99÷best", "others"],
    ]
    .concat();
    let tick_ms = s.sizes.tick_us.max(1) as f64 / 1e3;
    let runs = Runs {
        header: &header,
        label: None,
        cells: &|row: &FileRow, runtime: &str, f: &Figures| {
            let mut cells = figure_cells(f, tick_ms);
            if runtime == WEFT {
                let ratio = |name: &str| {
                    row.ratios
                        .get(name)
                        .map_or("-".to_owned(), |r| format!("{:.2} {}", r.value, r.peer))
                };
                cells.extend([ratio("total_ms"), ratio("tick_p99_ms")]);
            }
            cells
        },
    };
    let runs = runs.table(&result.rows, &s.suite.runtimes);
    let legend = format!(
        "total: the measured pass, from the ticker's spawn until the last of the {} tasks \
         finished (the median of the rounds); MiB/s: bytes read and written over it; warm-up: \
         the pass before it, on the same runtime (its blocking pool starting); ticks: the \
         ticker's wakes over the measured passes, of one per {} ms if never late; p50-max: \
         how late they were, ms; CPU: the process's over the pass; \
         total÷best, p99÷best: weft's over the best peer's; others: the machine's CPU other \
         processes used meanwhile; files in {}",
        s.sizes.writers + s.sizes.readers,
        tick_ms,
        s.dir,
    );
    let mut out = suite_text(&title, &runs, &legend);
    out.push_str(&monitor_lines(result));
    let _ = writeln!(
        out,
        "targets\n{}",
        target::table(result.rows.iter().flat_map(|row| &row.targets)).render()
    );
    out + &result.skew.footer()
}

/// weft's stall-monitor counters over its measured passes (its reading of
/// workers kept from a core by the pool's threads shows here).
fn monitor_lines(result: &FileResult) -> String {
    let mut out = String::new();
    let weft = result
        .rows
        .iter()
        .filter_map(|row| row.runtimes.get(WEFT)?.ok());
    for monitor in weft.filter_map(|f| f.monitor.as_ref()) {
        let counters = monitor.iter().map(|(name, &value)| (name.as_str(), value));
        let counters = table::counters(counters);
        let _ = writeln!(
            out,
            "weft's stall monitor over the measured passes: {counters}"
        );
    }
    out
}

/// `32 tasks write and 32 read 8 MiB files in 64 KiB-1 MiB chunks beside
/// a 1 ms ticker`.
fn scene(sizes: &Sizes) -> String {
    let smallest = sizes.chunk_bytes.iter().min().copied().unwrap_or(0);
    let largest = sizes.chunk_bytes.iter().max().copied().unwrap_or(0);
    format!(
        "{} tasks write and {} read {} files in {}-{} chunks beside a {} ms ticker",
        sizes.writers,
        sizes.readers,
        bytes(sizes.file_bytes),
        bytes(smallest),
        bytes(largest),
        sizes.tick_us as f64 / 1e3,
    )
}

/// `8 MiB`, `64 KiB`, `100 B`.
fn bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

/// A run's cells: total, MiB/s, warm-up, the ticks taken of those due
/// every `tick_ms` over the passes, their lateness percentiles in ms, CPU.
fn figure_cells(f: &Figures, tick_ms: f64) -> Vec<String> {
    let ticks = f.ticker.as_ref().map_or(0, |p| p.count);
    let due = f.window.window_s * 1e3 / tick_ms;
    let mut cells = vec![
        ms(f.total_ms),
        format!("{:.0}", f.mib_per_s),
        ms(f.warmup_ms),
        format!("{ticks}/{due:.0}"),
    ];
    cells.extend(Percentiles::cells(f.ticker.as_ref(), ms));
    cells.push(format!("{:.0}", f.cpu_ms));
    cells
}

/// One round's figures on one line, for the progress output.
pub fn pass_line(pass: &Pass, sizes: &Sizes) -> String {
    let ms_of = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let ticks = pass.ticks.summary();
    let tick = |of: fn(&Percentiles) -> f64| ticks.as_ref().map_or("-".to_owned(), |p| ms(of(p)));
    let mib = sizes.pass_bytes() as f64 / (1024.0 * 1024.0);
    let others = pass
        .others_cpu_pct
        .map_or(String::new(), |pct| format!(", others {pct:.0}%"));
    let monitor = pass.monitor.as_ref().map_or(String::new(), |counters| {
        format!("; monitor: {}", table::counters(counters.iter().copied()))
    });
    format!(
        "total {} ms ({:.0} MiB/s), warm-up {} ms, tick p99 {} ms, max {} ms, CPU {} ms{others}\
         {monitor}",
        ms(ms_of(pass.wall)),
        mib / pass.wall.as_secs_f64().max(1e-9),
        ms(ms_of(pass.warmup)),
        tick(|p| p.p99_ms),
        tick(|p| p.max_ms),
        ms(ms_of(pass.cpu)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::setup::Profile;

    #[test]
    fn the_scene_reads_as_the_issue_says() {
        assert_eq!(
            scene(&Sizes::of(Profile::Quick)),
            "32 tasks write and 32 read 8 MiB files in 64 KiB-1 MiB chunks beside a 1 ms ticker"
        );
        assert_eq!(bytes(100), "100 B");
    }
}
