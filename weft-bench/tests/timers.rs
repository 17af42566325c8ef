//! Smoke test of the timers suite: every row, with tiny sizes, on every
//! runtime, gives a finite positive number (`bytes_per_timer` through the
//! real child process, `weft-bench timers-rss`).
//!
//! One test in its own binary: the CPU rows read the whole process's CPU
//! time, which tests running beside it would disturb.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::suites::timers::sizes::Sizes;
use weft_bench::suites::timers::{self, Experiment, TimersConfig};

#[test]
fn every_row_gives_a_positive_number_on_every_runtime() {
    let config = TimersConfig {
        sizes: Sizes::tiny(),
        exe: PathBuf::from(env!("CARGO_BIN_EXE_weft-bench")),
        timeout: Duration::from_secs(20),
        ..TimersConfig::new(common::quick(&RuntimeKind::ALL))
    };
    // Under a second on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(30), || timers::run(&config));
    let rows: usize = Experiment::ALL.iter().map(|e| e.rows().len()).sum();
    assert_eq!(result.rows.len(), rows);
    for row in &result.rows {
        for kind in RuntimeKind::ALL {
            let value = &row.runtimes[kind.name()];
            let number = value.ok_value();
            assert!(
                number.is_some_and(|v| v.is_finite() && v > 0.0),
                "{} on {}: {value:?}",
                row.name,
                kind.name()
            );
        }
        assert!(row.best.is_some(), "{} has no ratio", row.name);
    }
}
