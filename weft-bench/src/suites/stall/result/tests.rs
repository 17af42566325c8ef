//! The stall suite's shares, figures and targets on made-up trials.

use std::time::Instant;

use super::*;
use crate::common::figure::WEFT;
use crate::common::setup::Profile;
use crate::suites::stall::shares::Tick;
use crate::suites::stall::shares::tests::{at, blocker};

/// Events every `every_ms` from `from` to `to` ms after `t0`.
fn every(t0: Instant, from: u64, to: u64, every_ms: u64) -> Vec<Instant> {
    (from..to)
        .step_by(every_ms as usize)
        .map(|ms| at(t0, ms))
        .collect()
}

/// A trial with a 1 s calm window and a 2 s stall from 1,000 ms: in the
/// stall, the ticker fires every `stall_tick_ms` (0: stranded until its
/// end), tasks come at a tenth of their calm rate, round trips at
/// their calm rate.
pub(crate) fn trial(stall_tick_ms: u64) -> Trial {
    let t0 = Instant::now();
    let mut ticks: Vec<Tick> = every(t0, 0, 1_000, 10)
        .into_iter()
        .map(|wake| Tick {
            deadline: wake,
            wake: Some(wake),
        })
        .collect();
    if stall_tick_ms == 0 {
        ticks.push(Tick {
            deadline: at(t0, 1_005),
            wake: Some(at(t0, 3_000)),
        });
    } else {
        ticks.extend(
            every(t0, 1_000, 3_000, stall_tick_ms)
                .into_iter()
                .map(|wake| Tick {
                    deadline: wake - Duration::from_millis(1),
                    wake: Some(wake),
                }),
        );
    }
    let mut tasks = every(t0, 0, 1_000, 1);
    tasks.extend(every(t0, 1_000, 3_000, 10));
    Trial {
        workers: 2,
        blockers_spawned: 2,
        calm: Span::new(t0, at(t0, 1_000)),
        blockers: vec![blocker(t0, 1_000, 3_000), blocker(t0, 1_000, 3_000)],
        ticks,
        tasks,
        round_trips: every(t0, 0, 3_000, 2),
        end: at(t0, 3_100),
        stall_wall: Duration::from_millis(2_000),
        stall_cpu: Duration::from_millis(1_000),
        others_cpu_pct: Some(10.0),
        blocker_slots: Some(vec![0, 2]),
        monitor: Some(vec![("stalls", 2), ("handoffs", 1)]),
        notes: Vec::new(),
    }
}

fn sizes() -> Sizes {
    Sizes::of(Profile::Quick)
}

#[test]
fn a_trial_gives_each_kinds_share_of_its_calm_rate() {
    let figures = TrialFigures::of(&trial(10), &sizes()).unwrap();
    assert_eq!((figures.calm_ms, figures.stall_ms), (1_000.0, 2_000.0));
    assert_eq!(figures.calm_per_s.timers, 100.0);
    assert_eq!(figures.share_pct.timers, 100.0);
    assert!((figures.share_pct.tasks - 10.0).abs() < 1e-9);
    assert_eq!(figures.share_pct.io, 100.0);
    assert_eq!(figures.ticks_outstanding, 200);
    assert_eq!(figures.tick_p99_us, Some(1_000.0));
    assert_eq!(figures.calm_tick_p99_us, Some(0.0));
    assert_eq!(figures.blockers[1].ms, 2_000.0);
    // Stranded: no wake in the stall, one tick late by the whole stall.
    let stranded = TrialFigures::of(&trial(0), &sizes()).unwrap();
    assert_eq!(stranded.share_pct.timers, 0.0);
    assert_eq!(stranded.ticks_outstanding, 1);
    assert_eq!(stranded.tick_p99_us, Some(1_995_000.0));
}

#[test]
fn a_trial_without_a_stall_or_calm_work_fails() {
    let mut short = trial(10);
    short.blockers[1] = blocker(short.calm.start, 2_500, 4_500);
    let err = TrialFigures::of(&short, &sizes()).unwrap_err();
    assert!(err.contains("500 ms, less than half"), "{err}");
    let mut idle = trial(10);
    idle.round_trips.clear();
    let err = TrialFigures::of(&idle, &sizes()).unwrap_err();
    assert_eq!(err, "no I/O round trips in the calm window");
}

#[test]
fn trials_give_the_median_and_the_lowest_share() {
    let run = StallRun::from_trials(&[trial(10), trial(0), trial(20)], &sizes());
    let f = run.ok().unwrap();
    assert_eq!((f.timers_pct, f.timers_min_pct), (50.0, 0.0));
    assert_eq!((f.io_pct, f.io_min_pct), (100.0, 100.0));
    assert_eq!(f.trials.len(), 3);
    // Pooled: 200 + 1 + 100 outstanding ticks; the stranded one is the max.
    assert_eq!(f.tick_max_us, Some(1_995_000.0));
    assert_eq!(f.tick_p99_us, Some(1_000.0));
    assert_eq!(f.window.window_s, 6.0);
    assert_eq!(f.window.cpu_ms_per_s, 500.0);
    assert_eq!(f.window.others_cpu_pct, Some(10.0));
    let monitor = f.monitor.as_ref().unwrap();
    assert_eq!((monitor["stalls"], monitor["handoffs"]), (6, 3));
    assert_eq!(f.calm_per_s().unwrap().tasks, 1_000.0);
    assert!(StallRun::from_trials(&[], &sizes()).ok().is_none());
}

fn runs(timers: &[(&str, u64)]) -> BTreeMap<String, StallRun> {
    let runs = timers.iter().map(|&(name, tick)| {
        (
            name.to_owned(),
            StallRun::from_trials(&[trial(tick)], &sizes()),
        )
    });
    runs.collect()
}

#[test]
fn targets_are_absolute_shares_and_ratios_to_the_best_peer() {
    let row = StallRow::of(Case::All, runs(&[("weft", 20), ("tokio", 0), ("smol", 10)]));
    let timers = &row.ratios["timers_pct"];
    assert_eq!((timers.peer.as_str(), timers.value), ("smol", 0.5));
    let verdicts: Vec<(&str, String, &str)> = row
        .targets
        .iter()
        .map(|c| (c.target.as_str(), c.value_text(), c.verdict()))
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "all blocked: timers ≥ 90% of calm",
                "50%".to_owned(),
                "missed"
            ),
            (
                "all blocked: tasks ≥ 80% of calm",
                "10%".to_owned(),
                "missed"
            ),
            ("all blocked: I/O ≥ 80% of calm", "100%".to_owned(), "met"),
        ]
    );
    // Every peer at 0%: no ratio, the targets still say.
    let alone = StallRow::of(Case::One, runs(&[("weft", 10), ("tokio", 0)]));
    assert!(!alone.ratios.contains_key("timers_pct"));
    assert_eq!(alone.targets[0].met, Some(true));
    let mut failed = runs(&[("tokio", 10)]);
    failed.insert(WEFT.to_owned(), StallRun::failed("no".to_owned()));
    let failed = StallRow::of(Case::One, failed);
    assert!(failed.ratios.is_empty() && failed.targets.iter().all(|c| c.met.is_none()));
}

#[test]
fn placement_notes_say_when_fewer_workers_blocked() {
    let spread = Duration::from_millis(100);
    // Slots 0 and 2 on 2 workers: one blocker on a spare slot.
    let notes = shares::placement_notes(&trial(10), spread);
    assert_eq!(notes.len(), 1);
    assert!(notes[0].starts_with("1 of 2 blockers"), "{notes:?}");
    let mut late = trial(10);
    late.blocker_slots = Some(vec![1, 0]);
    late.blockers[1] = blocker(late.calm.start, 1_150, 3_150);
    let notes = shares::placement_notes(&late, spread);
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("150 ms apart"), "{notes:?}");
}
