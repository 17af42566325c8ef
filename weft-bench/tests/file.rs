//! Smoke test of the file suite: with tiny sizes, every runtime writes and
//! reads its files beside the ticker and gives a total time, ticker
//! percentiles and CPU (weft also its stall monitor's counters); weft's
//! ratios and targets are filled in; the suite round-trips through JSON and
//! renders, and its directory is removed.
//!
//! One test in its own binary: the CPU figures read the whole process's
//! CPU time, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::suites::file::{self, FileConfig, Sizes};

#[test]
fn every_runtime_reads_and_writes_beside_the_ticker() {
    let parent = std::env::temp_dir().join(format!("weft-bench-file-test-{}", std::process::id()));
    std::fs::create_dir_all(&parent).unwrap();
    let config = FileConfig {
        sizes: Sizes {
            rounds: 2,
            ..Sizes::tiny()
        },
        parent: parent.clone(),
        ..FileConfig::new(common::quick(&RuntimeKind::ALL))
    };
    // Well under a second on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(60), || file::run(&config));
    assert_eq!(result.rows.len(), 1);
    let row = &result.rows[0];
    assert_eq!(row.name, file::ROW);
    for kind in RuntimeKind::ALL {
        let run = &row.runtimes[kind.name()];
        let f = run
            .ok()
            .unwrap_or_else(|| panic!("{}: {run:?}", kind.name()));
        assert_eq!(f.rounds_ms.len(), 2, "{f:?}");
        assert!(
            f.total_ms > 0.0 && f.warmup_ms > 0.0 && f.mib_per_s > 0.0,
            "{f:?}"
        );
        let ticker = f.ticker.as_ref().expect("the ticker ticked");
        assert!(ticker.count > 0 && ticker.p99_ms <= ticker.max_ms, "{f:?}");
        assert_eq!(f.window.unfinished, 0);
        assert_eq!(f.monitor.is_some(), kind == RuntimeKind::Weft, "{f:?}");
    }
    assert_eq!(row.ratios.len(), file::result::FIGURES.len());
    assert!(row.targets.iter().all(|check| check.met.is_some()));
    // The suite's directory is gone; only the test's own parent is left.
    assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 0);
    std::fs::remove_dir(&parent).unwrap();
    let back = common::round_trip(&result);
    assert_eq!(back.rows[0].runtimes, row.runtimes);
    let table = file::report::render(&result);
    assert!(table.contains("ticker p99 ≤ 2 ms"), "{table}");
}
