//! Smoke test of the mixed suite: every load on every runtime, with tiny
//! timing, gives throughput, percentiles and CPU; weft's ratios and
//! targets are filled in; the chart is written.
//!
//! One test in its own binary: the CPU figures read the whole process's
//! CPU time, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::common::latency::Percentiles;
use weft_bench::suites::mixed::result::{Figures, ORACLE};
use weft_bench::suites::mixed::{self, Load, MixedConfig, Timing, Variant};

#[test]
fn every_load_gives_figures_on_every_runtime() {
    let config = MixedConfig {
        timing: Timing::tiny(),
        ..MixedConfig::new(common::quick(&Variant::ALL))
    };
    // About 5 s on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(60), || mixed::run(&config));
    assert_eq!(result.loads.len(), Load::ALL.len());
    let runtimes = Variant::ALL.map(Variant::name);
    for (_, runtime, f) in common::every_run(&result.loads, runtimes, short) {
        assert!(f.short_per_s > 0.0 && f.long_per_s > 0.0, "{f:?}");
        // Threads started: counted by weft and tokio, not by smol.
        let counted = f.threads_started_per_s.is_some();
        assert_eq!(counted, runtime != Variant::Smol.name(), "{runtime}: {f:?}");
    }
    for load in &result.loads {
        // The oracle serves every load too; its long requests may get
        // nothing in closed loop (they run only on cores nobody else
        // wants), so only its short figures are asserted.
        let oracle = load.runtimes[ORACLE].ok().expect("the oracle's figures");
        assert!(oracle.short.as_ref().is_some_and(|s| s.count > 0));
        assert_eq!(oracle.window.unfinished, 0);
        assert!(!load.ratios.contains_key(ORACLE));
        assert!(load.ratios["weft"].short_p99_vs_best.is_some());
        assert!(load.targets.iter().all(|check| check.met.is_some()));
    }
    assert!(result.calibration.drift_pct().is_some());
    let chart = std::env::temp_dir().join(format!("weft-bench-mixed-{}.svg", std::process::id()));
    mixed::chart::write(&chart, &result).expect("chart written");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("tokio"));
    let _ = std::fs::remove_file(&chart);
}

fn short(f: &Figures) -> Option<&Percentiles> {
    f.short.as_ref()
}
