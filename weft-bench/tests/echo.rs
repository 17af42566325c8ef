//! Smoke test of the echo suite: every row on every runtime, with tiny
//! timing, gives throughput, percentiles and CPU, no round trip is left
//! unfinished, and weft's ratios to the best peer are filled in; every
//! row runs on the floor too, in no ratio; the document with the suite
//! round-trips through JSON.
//!
//! One test in its own binary: the CPU figures read the whole process's
//! CPU time, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::common::latency::Percentiles;
use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::serve::Timing;
use weft_bench::serve::floor::FLOOR;
use weft_bench::serve::result::Figures;
use weft_bench::suites::echo::{self, EchoConfig, Row};

#[test]
fn every_row_gives_figures_on_every_runtime() {
    let config = EchoConfig {
        timing: Timing::tiny(),
        ..EchoConfig::new(common::quick(&RuntimeKind::ALL))
    };
    // About 3 s on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(60), || echo::run(&config));
    assert_eq!(result.rows.len(), Row::ALL.len());
    let [weft, tokio, smol] = RuntimeKind::ALL.map(RuntimeKind::name);
    let servers = [weft, tokio, smol, FLOOR];
    assert_eq!(result.settings.suite.runtimes, servers);
    for (_, _, f) in common::every_run(&result.rows, servers, latency) {
        assert!(f.req_per_s > 0.0 && f.generator_cpu_ms_per_s > 0.0, "{f:?}");
    }
    for row in &result.rows {
        let ratios = row.ratios.as_ref().expect("weft's ratios");
        let peers = [&ratios.req_per_s_vs_best, &ratios.p99_vs_best];
        assert!(
            peers
                .iter()
                .all(|r| r.as_ref().is_some_and(|r| r.peer != FLOOR))
        );
    }
    let text = echo::report::render(&result);
    assert!(text.contains("floor: the same requests"), "{text}");
    let back = common::round_trip(&result);
    assert_eq!(back.rows[0].runtimes, result.rows[0].runtimes);
}

fn latency(f: &Figures) -> Option<&Percentiles> {
    f.latency.as_ref()
}
