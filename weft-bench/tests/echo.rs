//! Smoke test of the echo lane: every row on every runtime, with tiny
//! timing, gives throughput, percentiles and CPU, no round trip is left
//! unfinished, and weft's ratios to the best peer are filled in; the
//! document with the lane round-trips through JSON.
//!
//! One test in its own binary: the CPU figures read the whole process's
//! CPU time, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::echo::result::Figures;
use weft_bench::echo::{self, EchoConfig, Row, Timing};
use weft_bench::figure::lane::Setup;
use weft_bench::figure::skew::Window;
use weft_bench::harness::Profile;
use weft_bench::mixed::latency::Percentiles;
use weft_bench::runtimes::RuntimeKind;

#[test]
fn every_row_gives_figures_on_every_runtime() {
    let config = EchoConfig {
        timing: Timing::tiny(),
        ..EchoConfig::new(Setup::new(Profile::Quick, 2, &RuntimeKind::ALL))
    };
    // About 3 s on the 2-core dev machine.
    let result = common::tiny_lane(Duration::from_secs(60), || echo::run(&config));
    assert_eq!(result.rows.len(), Row::ALL.len());
    for row in &result.rows {
        for kind in RuntimeKind::ALL {
            let f = common::completed(&row.runtimes, kind.name(), latency, window);
            assert!(f.req_per_s > 0.0 && f.generator_cpu_ms_per_s > 0.0, "{f:?}");
        }
        let ratios = row.ratios.as_ref().expect("weft's ratios");
        assert!(ratios.req_per_s_vs_best.is_some() && ratios.p99_vs_best.is_some());
    }
    let text = serde_json::to_string(&result).unwrap();
    let back: echo::result::EchoResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back.rows[0].runtimes, result.rows[0].runtimes);
}

fn latency(f: &Figures) -> Option<&Percentiles> {
    f.latency.as_ref()
}

fn window(f: &Figures) -> &Window {
    &f.window
}
