//! The tables `weft-bench metrics` prints: per wait, one row per sampling
//! interval with every estimator's mean rate, standard deviation and error;
//! then the sampler overhead per workload; then the targets.

use std::fmt::Write;

use crate::common::table::{self, Table};
use crate::suites::metrics::counting::{CountingRun, Exactness, Phase};
use crate::suites::metrics::document::{
    COUNTER_ERR_TARGET_PCT, CountingTargets, MetricsDocument, OVERHEAD_TARGET_RATIO,
    OverheadTargets, TargetStatus,
};
use crate::suites::metrics::estimate::Estimate;
use crate::suites::metrics::overhead::OverheadResult;
use crate::suites::metrics::wait::{Mechanism, NOISE};
use crate::suites::scheduler::stats::{RoundRatio, Summary};

/// Renders every table of a run.
pub fn render(doc: &MetricsDocument) -> String {
    let (s, m) = (&doc.settings, &doc.machine);
    let mut out = format!(
        "weft-bench metrics: {} profile, {} workers; {} cores, {}\n{}, {:.0} s\n",
        s.profile,
        s.workers,
        m.cores,
        m.cpu_model,
        doc.versions.weft_label(),
        doc.duration_s
    );
    for run in &doc.counting {
        let _ = writeln!(out, "\n{}", counting_title(run));
        out.push_str(&counting_table(run).render());
        let _ = writeln!(out, "{}", exactness_line(&run.exactness));
    }
    if !doc.counting.is_empty() {
        out.push_str(
            "TPS: mean of the per-sample rates; σ: their standard deviation; err: mean ÷ exact − 1 \
             (exact: every count of the window ÷ its measured length); period, max: the sampler's \
             mean and longest measured interval; others: share of the machine other processes \
             used meanwhile; 1 s base: the parallel 1 s baseline's err\n",
        );
    }
    if !doc.overhead.is_empty() {
        let _ = writeln!(
            out,
            "\nHandle::metrics() every {} ms beside the workload (on), a thread waking as often \
             and reading nothing (tick), nothing (off); {} rounds",
            s.overhead_sampler_interval_ms, s.overhead_rounds
        );
        out.push_str(&overhead_table(&doc.overhead).render());
        out.push_str(
            "ms: median ± spread of the round medians; on÷off etc.: ratio of the medians (? = \
             the rounds disagree on the side of 1.0); rounds: smallest–largest round on÷off; \
             read: mean time of one Handle::metrics(); others: share of the machine other \
             processes used during the workload; ≤1%: every round's on÷off ≤ 1.01 (met), \
             every round's > 1.01 (missed), or neither (unresolved)\n",
        );
    }
    out.push_str(&targets(doc));
    out
}

fn counting_title(run: &CountingRun) -> String {
    let how = match run.wait.mechanism {
        Mechanism::Timer => "sleep on the bench timer thread",
        Mechanism::Spin => "yield_now until the deadline",
    };
    format!(
        "{} tasks, wait {} ±{:.0}% ({how}), then count 1",
        run.tasks,
        run.wait.label(),
        NOISE * 100.0
    )
}

fn counting_table(run: &CountingRun) -> Table {
    let mut table = Table::new([
        "interval",
        "samples",
        "period",
        "max",
        "others",
        "exact TPS",
        "1 s base",
        "÷nominal",
        "σ",
        "err",
        "÷measured",
        "σ",
        "err",
        "Counter",
        "σ",
        "err",
    ]);
    for phase in &run.phases {
        let f = &phase.figures;
        let mut row = vec![
            interval(phase),
            f.counter.samples.to_string(),
            format!("{} ms", table::ms(f.period_mean_ms)),
            format!("{} ms", table::ms(f.period_max_ms)),
            percent(phase.others_cpu_pct),
            tps(f.exact_tps),
            pct(f.baseline.err_pct),
        ];
        for estimate in [&f.swap_nominal, &f.swap_measured, &f.counter] {
            row.extend(estimate_cells(estimate));
        }
        table.row(row);
    }
    table
}

fn interval(phase: &Phase) -> String {
    crate::suites::metrics::duration_label(std::time::Duration::from_secs_f64(
        phase.interval_ms / 1e3,
    ))
}

fn estimate_cells(estimate: &Estimate) -> [String; 3] {
    [
        tps(estimate.mean_tps),
        estimate.stddev_tps.map_or("-".to_owned(), tps),
        pct(estimate.err_pct),
    ]
}

fn exactness_line(e: &Exactness) -> String {
    let verdict = if e.exact {
        "exact, nothing lost"
    } else {
        "MISMATCH"
    };
    format!(
        "end of run: tasks counted {}, Counter sum {}, test swaps {}, baseline swaps {}: {verdict}",
        e.task_total, e.counter_total, e.swap_total, e.baseline_swap_total
    )
}

fn overhead_table(results: &[OverheadResult]) -> Table {
    let mut table = Table::new([
        "workload",
        "off ms",
        "tick ms",
        "on ms",
        "on÷off",
        "rounds",
        "tick÷off",
        "on÷tick",
        "csw off",
        "csw on",
        "read",
        "others",
        "≤1%",
    ]);
    for r in results {
        let (lo, hi) = min_max(&r.on_off.rounds);
        table.row(vec![
            r.workload.clone(),
            time(&r.off),
            time(&r.tick),
            time(&r.on),
            ratio(&r.on_off),
            format!("{lo:.2}–{hi:.2}"),
            ratio(&r.tick_off),
            ratio(&r.on_tick),
            table::count(r.off.csw_per_iter),
            table::count(r.on.csw_per_iter),
            format!("{:.1} µs", r.sampler.mean_read_us),
            percent(r.others_cpu_pct),
            TargetStatus::of_rounds(&r.on_off.rounds).name().to_owned(),
        ]);
    }
    table
}

fn time(summary: &Summary) -> String {
    format!(
        "{} ±{:.0}%",
        table::ms(summary.median_ms),
        summary.spread_pct
    )
}

fn ratio(ratio: &RoundRatio) -> String {
    format!(
        "{:.3}{}",
        ratio.value,
        if ratio.resolved { "" } else { "?" }
    )
}

fn targets(doc: &MetricsDocument) -> String {
    let t = &doc.targets;
    let mut out = String::from("\ntargets\n");
    counting_targets(&t.counting, &mut out);
    overhead_targets(&t.overhead, &mut out);
    for line in &t.disturbances {
        let _ = writeln!(out, "warning: {line}");
    }
    if !t.disturbances.is_empty() {
        out.push_str(
            "(a sampler kept off the CPU skews means of per-sample rates, for every estimator \
             alike; other processes add noise to the overhead ratios)\n",
        );
    }
    out
}

fn counting_targets(t: &CountingTargets, out: &mut String) {
    if let (Some(err), Some(met)) = (t.counter_max_abs_err_pct, t.counter_target_met) {
        let _ = writeln!(
            out,
            "- Counter |err| < {COUNTER_ERR_TARGET_PCT}% at every interval: worst {err:.3}%: {}",
            if met { "met" } else { "MISSED" }
        );
    }
    if let Some(err) = t.counter_max_abs_time_weighted_err_pct {
        let _ = writeln!(
            out,
            "  (time-weighted, Σ Δcount ÷ Σ Δt over the same samples: worst {err:.4}%)"
        );
    }
    if let Some(exact) = t.counts_exact {
        let _ = writeln!(
            out,
            "- end-of-run totals equal (tasks, Counter, both atomics): {}",
            if exact { "yes" } else { "NO" }
        );
    }
}

fn overhead_targets(t: &OverheadTargets, out: &mut String) {
    if !t.workloads.is_empty() {
        let count = |status| t.workloads.iter().filter(|o| o.status == status).count();
        let _ = writeln!(
            out,
            "- 1 ms Handle::metrics() sampler slows a workload by ≤ {:.0}% in every round: met {}, \
             missed {}, unresolved {} (of {})",
            (OVERHEAD_TARGET_RATIO - 1.0) * 100.0,
            count(TargetStatus::Met),
            count(TargetStatus::Missed),
            count(TargetStatus::Unresolved),
            t.workloads.len()
        );
    }
    if let Some(p) = &t.overhead_pooled {
        let _ = writeln!(
            out,
            "  pooled over the {} rounds of every workload: median on÷off {:.3} ({} rounds above \
             1.0), median on÷tick {:.3} ({} above 1.0)",
            p.rounds, p.on_off_median, p.on_off_above_one, p.on_tick_median, p.on_tick_above_one
        );
    }
    if let Some(monotonic) = t.snapshots_monotonic {
        let _ = writeln!(
            out,
            "- summed polls never decreased between two snapshots: {}",
            if monotonic { "yes" } else { "NO" }
        );
    }
}

/// One phase on one line, for the progress output.
pub fn phase_line(wait: &str, phase: &Phase) -> String {
    let f = &phase.figures;
    format!(
        "wait {wait}, interval {}: exact {} TPS; err ÷nominal {}, ÷measured {}, Counter {}",
        interval(phase),
        tps(f.exact_tps),
        pct(f.swap_nominal.err_pct),
        pct(f.swap_measured.err_pct),
        pct(f.counter.err_pct)
    )
}

/// One workload's overhead on one line, for the progress output.
pub fn overhead_line(result: &OverheadResult) -> String {
    format!(
        "{}: off {} ms, tick {} ms, on {} ms, on÷off {}",
        result.workload,
        table::ms(result.off.median_ms),
        table::ms(result.tick.median_ms),
        table::ms(result.on.median_ms),
        ratio(&result.on_off)
    )
}

/// A share of the machine, `3%`, or `-` when unknown.
fn percent(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |v| format!("{v:.0}%"))
}

fn tps(value: f64) -> String {
    format!("{value:.0}")
}

fn pct(value: f64) -> String {
    if value.is_finite() {
        format!("{value:+.2}%")
    } else {
        "-".to_owned()
    }
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::suites::metrics::counting::{BaselineSamples, TestSamples};
    use crate::suites::metrics::estimate;
    use crate::suites::metrics::wait::Wait;

    fn phase() -> Phase {
        let samples = TestSamples {
            swap_counts: vec![10, 12],
            swap_dt_ns: vec![1_000_000, 1_200_000],
            counter_counts: vec![10, 12],
            counter_dt_ns: vec![1_000_000, 1_200_000],
            counter_tps: vec![10_000.0, 10_000.0],
        };
        let baseline_samples = BaselineSamples {
            counts: vec![10_000],
            dt_ns: vec![1_000_000_000],
        };
        let second = Duration::from_secs(1);
        let figures = estimate::figures(second / 1000, second, &samples, &baseline_samples);
        Phase {
            interval_ms: 1.0,
            window_s: 3.0,
            others_cpu_pct: Some(1.0),
            figures,
            samples,
            baseline_samples,
        }
    }

    #[test]
    fn the_counting_table_has_a_header_per_column() {
        let run = CountingRun {
            wait: Wait {
                nominal: Duration::from_millis(10),
                mechanism: Mechanism::Timer,
            },
            tasks: 100,
            exactness: Exactness {
                task_total: 22,
                counter_total: 22,
                swap_total: 22,
                baseline_swap_total: 22,
                exact: true,
            },
            phases: vec![phase()],
        };
        let text = counting_table(&run).render();
        assert!(text.contains("1.20 ms"), "{text}");
        assert!(phase_line("10 ms", &run.phases[0]).contains("÷nominal +10.00%"));
    }

    #[test]
    fn the_overhead_table_has_a_header_per_column() {
        let config = crate::suites::metrics::overhead::OverheadConfig {
            workers: 2,
            rounds: 1,
            iteration_factor: 1,
            interval: Duration::from_millis(1),
            workloads: vec![crate::suites::scheduler::workloads::Workload::ChainedSpawn],
        };
        let results = crate::suites::metrics::overhead::run(&config, |_| {}).unwrap();
        let text = overhead_table(&results).render();
        assert!(text.contains("chained_spawn"), "{text}");
        assert!(overhead_line(&results[0]).starts_with("chained_spawn: off"));
    }

    #[test]
    fn percentages_are_signed() {
        assert_eq!(pct(0.1234), "+0.12%");
        assert_eq!(pct(-14.5), "-14.50%");
        assert_eq!(pct(f64::NAN), "-");
    }
}
