//! Smoke test of the stall suite: with tiny windows, every runtime runs the
//! ticker, the task client and the round trips, blocks one and then every
//! worker, and gives each kind's calm rate and share; the stall window is
//! the blockers' overlap; weft's targets are checked; the suite
//! round-trips through JSON and renders. The shares themselves are not
//! asserted: they are what the suite measures.
//!
//! One test in its own binary: the blockers and the closed loops take the
//! machine's cores, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::common::figure::rows::RowKind;
use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::suites::stall::{self, Case, Sizes, StallConfig};

#[test]
fn every_runtime_keeps_its_work_logged_through_both_cases() {
    let config = StallConfig {
        sizes: Sizes::tiny(),
        ..StallConfig::new(common::quick(&RuntimeKind::ALL))
    };
    // About 7 s on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(90), || stall::run(&config));
    assert_eq!(result.rows.len(), 2);
    for (row, case) in result.rows.iter().zip(Case::ALL) {
        assert_eq!(row.name, case.name());
        for kind in RuntimeKind::ALL {
            let run = &row.runtimes[kind.name()];
            let f = run
                .ok()
                .unwrap_or_else(|| panic!("{} {}: {run:?}", row.name, kind.name()));
            assert_eq!(f.trials.len(), 1, "{f:?}");
            let trial = &f.trials[0];
            assert_eq!(trial.blockers.len(), case.blockers(2), "{f:?}");
            assert!(trial.stall_ms >= 300.0, "{f:?}");
            let calm = trial.calm_per_s;
            assert!(
                calm.timers > 0.0 && calm.tasks > 0.0 && calm.io > 0.0,
                "{f:?}"
            );
            for (_, median, min) in f.shares() {
                assert!(median >= 0.0 && min <= median, "{f:?}");
            }
            assert!(
                f.tick_p99_us.is_some() && f.calm_tick_p99_us.is_some(),
                "{f:?}"
            );
            assert_eq!(
                trial.blocker_slots.is_some(),
                kind == RuntimeKind::Weft,
                "{f:?}"
            );
            assert_eq!(f.monitor.is_some(), kind == RuntimeKind::Weft, "{f:?}");
        }
        assert_eq!(row.targets.len(), 3);
        assert!(row.targets.iter().all(|check| check.met.is_some()));
    }
    let back = common::round_trip(&result);
    assert_eq!(back.rows[1].runtimes, result.rows[1].runtimes);
    let table = stall::report::render(&result);
    assert!(
        table.contains("all blocked: timers ≥ 90% of calm"),
        "{table}"
    );
}
