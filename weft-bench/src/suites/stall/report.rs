//! The stall suite's tables: one line per case and runtime with each
//! kind's share of its calm rate, the ticker's lateness, the calm rates,
//! where the blockers ran, and on weft's line its ratios to the best
//! peer; then weft's targets, met or missed; the settings above, a legend
//! and warnings below.

use std::fmt::Write;

use super::Case;
use super::result::{Figures, StallResult, StallRow, TrialFigures};
use super::workload::Trial;
use crate::common::figure::WEFT;
use crate::common::figure::rows::RowKind;
use crate::common::figure::table::{Runs, suite_text};
use crate::common::figure::target;
use crate::common::table;

/// Renders the suite's tables, legend and warnings.
pub fn render(result: &StallResult) -> String {
    let s = &result.settings;
    let z = &s.sizes;
    let workers = s.suite.workers;
    let title = format!(
        "stall suite: {} profile, {workers} workers per runtime; a {} ms ticker, tasks spawned \
         from a client thread, {} B TCP round trips; {} ms calm, then blockers sleep {} ms in \
         their polls ({}, {}); {} trial{} per case",
        s.suite.profile,
        z.tick_ms,
        z.message_bytes,
        z.calm_ms,
        z.stall_ms,
        label(Case::One, workers),
        label(Case::All, workers),
        z.trials,
        if z.trials == 1 { "" } else { "s" },
    );
    let header = [
        "case",
        "runtime",
        "timers",
        "tasks",
        "I/O",
        "p99 calm µs",
        "p99 stall µs",
        "max stall µs",
        "ticks/s",
        "tasks/s",
        "trips/s",
        "blockers",
        "timers÷best",
        "tasks÷best",
        "I/O÷best",
        "p99÷best",
        "others",
    ];
    let runs = Runs {
        header: &header,
        label: Some(|row: &StallRow| Case::label_of(&row.name)),
        cells: &|row: &StallRow, runtime: &str, f: &Figures| {
            let mut cells = figure_cells(f);
            if runtime == WEFT {
                let ratio = |name: &str| {
                    row.ratios
                        .get(name)
                        .map_or("-".to_owned(), |r| format!("{:.2} {}", r.value, r.peer))
                };
                cells.extend(["timers_pct", "tasks_pct", "io_pct", "tick_p99_us"].map(ratio));
            }
            cells
        },
    };
    let runs = runs.table(&result.rows, &s.suite.runtimes);
    let lowest = if z.trials > 1 {
        ", in brackets the lowest trial's"
    } else {
        ""
    };
    let legend = format!(
        "timers, tasks, I/O: each kind's rate while the blockers held their workers, as a share \
         of its rate in the calm window before (the median of the trials{lowest}); p99 calm, \
         p99 stall, max stall: the ticker's lateness (wake − deadline), of the ticks woken in \
         the calm window and of those outstanding during the stall (a tick never fired counts \
         until the trial's end; one tick stranded for part of the stall lowers the timers' \
         share and shows in the max, not in the p99 of ~200 ticks); ticks/s, tasks/s, \
         trips/s: the calm rates; blockers: how far apart they started and, on weft, the slots \
         polling them during the stall (at or above {workers}: a spare slot, not a worker); \
         ÷best: weft's over the best peer's (none when every peer is at 0); others: the \
         machine's CPU other processes used during the stalls"
    );
    let mut out = suite_text(&title, &runs, &legend);
    out.push_str(&monitor_lines(result));
    let _ = writeln!(
        out,
        "targets (weft, the lowest trial's share)\n{}",
        target::table(result.rows.iter().flat_map(|row| &row.targets)).render()
    );
    out + &result.skew.footer()
}

/// `one blocked = 1 of 2`.
fn label(case: Case, workers: usize) -> String {
    format!("{} = {}", case.label(), case.describe(workers))
}

/// A share, with the lowest trial's in brackets when there were several.
fn share(median: f64, min: f64, trials: usize) -> String {
    if trials > 1 {
        format!("{median:.0}% ({min:.0}%)")
    } else {
        format!("{median:.0}%")
    }
}

/// µs, whole.
fn us(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |us| format!("{us:.0}"))
}

/// A run's cells up to the ratios.
fn figure_cells(f: &Figures) -> Vec<String> {
    let trials = f.trials.len();
    let mut cells: Vec<String> = f
        .shares()
        .iter()
        .map(|&(_, median, min)| share(median, min, trials))
        .collect();
    cells.extend([us(f.calm_tick_p99_us), us(f.tick_p99_us), us(f.tick_max_us)]);
    match f.calm_per_s() {
        Some(calm) => cells.extend([calm.timers, calm.tasks, calm.io].map(|r| format!("{r:.0}"))),
        None => cells.extend(["-", "-", "-"].map(str::to_owned)),
    }
    let blockers: Vec<String> = f.trials.iter().map(blockers).collect();
    cells.push(blockers.join("; "));
    cells
}

/// Where a trial's blockers ran: `0.3 ms apart, slots 0,1`.
fn blockers(trial: &TrialFigures) -> String {
    let spread = trial
        .blockers
        .iter()
        .map(|b| b.start_ms)
        .fold(0.0, f64::max);
    let mut text = if trial.blockers.len() > 1 {
        format!("{spread:.1} ms apart")
    } else {
        String::new()
    };
    if let Some(slots) = &trial.blocker_slots {
        let slots: Vec<String> = slots.iter().map(usize::to_string).collect();
        let slots = if slots.is_empty() {
            "none seen".to_owned()
        } else {
            slots.join(",")
        };
        if !text.is_empty() {
            text.push_str(", ");
        }
        let _ = write!(text, "slots {slots}");
    }
    if text.is_empty() {
        "-".to_owned()
    } else {
        text
    }
}

/// weft's stall-monitor counters over the stalls, per case.
fn monitor_lines(result: &StallResult) -> String {
    let mut out = String::new();
    for row in &result.rows {
        let Some(monitor) = row
            .runtimes
            .get(WEFT)
            .and_then(|run| run.ok()?.monitor.as_ref())
        else {
            continue;
        };
        let counters = monitor.iter().map(|(name, &value)| (name.as_str(), value));
        let _ = writeln!(
            out,
            "weft's stall monitor over the stalls, {}: {}",
            Case::label_of(&row.name),
            table::counters(counters)
        );
    }
    out
}

/// One trial's figures on one line, for the progress output.
pub fn trial_line(figures: &TrialFigures, trial: &Trial) -> String {
    let (share, calm) = (figures.share_pct, figures.calm_per_s);
    let others = trial
        .others_cpu_pct
        .map_or(String::new(), |pct| format!(", others {pct:.0}%"));
    let monitor = trial.monitor.as_ref().map_or(String::new(), |counters| {
        format!("; monitor: {}", table::counters(counters.iter().copied()))
    });
    format!(
        "timers {:.0}%, tasks {:.0}%, I/O {:.0}% of calm ({:.0} ticks, {:.0} tasks, {:.0} round \
         trips per s); tick p99 {} µs calm, {} µs stall (max {} µs); stall {:.0} ms, blockers: \
         {}{others}\
         {monitor}",
        share.timers,
        share.tasks,
        share.io,
        calm.timers,
        calm.tasks,
        calm.io,
        us(figures.calm_tick_p99_us),
        us(figures.tick_p99_us),
        us(figures.tick_max_us),
        figures.stall_ms,
        blockers(figures),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Skew;
    use crate::common::setup::SuiteSettings;
    use crate::common::setup::Profile;
    use crate::suites::stall::Sizes;
    use crate::suites::stall::result::tests::trial;
    use crate::suites::stall::result::{StallRun, StallSettings};

    #[test]
    fn the_table_shows_shares_ratios_and_targets() {
        let sizes = Sizes::of(Profile::Quick);
        let runs = [("weft", 20), ("tokio", 0), ("smol", 10)]
            .map(|(name, tick)| {
                let run = StallRun::from_trials(&[trial(tick)], &sizes);
                (name.to_owned(), run)
            })
            .into();
        let result = StallResult {
            settings: StallSettings {
                suite: SuiteSettings::new(Profile::Quick, 2, ["weft", "tokio", "smol"]),
                sizes,
            },
            rows: vec![StallRow::of(Case::All, runs)],
            skew: Skew::default(),
        };
        let text = render(&result);
        assert!(text.contains("all blocked = 2 of 2"), "{text}");
        assert!(text.contains("0.50 smol"), "{text}");
        assert!(
            text.contains("all blocked: timers ≥ 90% of calm  50% missed"),
            "{text}"
        );
        assert!(text.contains("slots 0,2"), "{text}");
        assert!(text.contains("handoffs 1, stalls 2"), "{text}");
        let figures = TrialFigures::of(&trial(10), &Sizes::of(Profile::Quick)).unwrap();
        let line = trial_line(&figures, &trial(10));
        assert!(
            line.starts_with("timers 100%, tasks 10%, I/O 100% of calm"),
            "{line}"
        );
    }
}
