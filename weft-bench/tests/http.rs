//! Smoke test of the HTTP suite: the hello server on every runtime, under
//! the hyper-client generator with tiny timing, gives throughput,
//! percentiles, CPU and CPU per request, no request is left unfinished,
//! and weft's ratios to the best peer are filled in; the floor runs last,
//! in no ratio and no target, and the table, the JSON and the summary
//! carry it; the suite round-trips through JSON.
//!
//! One test in its own binary: the CPU figures read the whole process's
//! CPU time, which tests running beside it would disturb.

mod common;

use std::time::Duration;

use weft_bench::common::json::Document;
use weft_bench::common::latency::Percentiles;
use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::common::summary;
use weft_bench::serve::Timing;
use weft_bench::serve::floor::FLOOR;
use weft_bench::serve::result::Figures;
use weft_bench::suites::http::result::HttpSettings;
use weft_bench::suites::http::{self, HttpConfig};

#[test]
fn every_runtime_serves_hello_and_gives_figures() {
    let config = HttpConfig {
        timing: Timing::tiny(),
        ..HttpConfig::new(common::quick(&RuntimeKind::ALL))
    };
    assert_eq!(config.connections, 64);
    // About 1 s on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(60), || http::run(&config));
    assert_eq!(result.rows.len(), 1);
    let row = &result.rows[0];
    assert_eq!(row.name, http::ROW);
    let [weft, tokio, smol] = RuntimeKind::ALL.map(RuntimeKind::name);
    let servers = [weft, tokio, smol, FLOOR];
    assert_eq!(result.settings.suite.runtimes, servers);
    for (_, _, f) in common::every_run(&result.rows, servers, latency) {
        assert!(f.req_per_s > 0.0 && f.generator_cpu_ms_per_s > 0.0, "{f:?}");
        assert!(f.cpu_us_per_req.is_some_and(|cpu| cpu > 0.0), "{f:?}");
        // The server's cost, or why perf could not count it.
        let cost = f
            .server
            .as_ref()
            .map(|c| c.cpu_us_per_req > 0.0 && c.syscalls_per_req > 0.0);
        assert!(cost == Some(true) || f.server_error.is_some(), "{f:?}");
    }
    // Paced at a share of tokio's rate, every runtime, and the targets.
    let paced = row.paced.as_ref().expect("the paced runs");
    assert!(paced.rate_per_s > 0.0 && paced.runtimes.len() == servers.len());
    assert_eq!((row.targets.len(), paced.targets.len()), (4, 4));
    let ratios = row.ratios.as_ref().expect("weft's ratios");
    assert!(ratios.req_per_s_vs_best.is_some() && ratios.p99_vs_best.is_some());
    assert!(ratios.req_per_s_met.is_some() && ratios.p99_met.is_some());
    // The floor is no peer: no ratio names it, every target is weft's.
    let peers = [&ratios.req_per_s_vs_best, &ratios.p99_vs_best];
    assert!(
        peers
            .iter()
            .all(|r| r.as_ref().is_some_and(|r| r.peer != FLOOR))
    );
    let targets = row.targets.iter().chain(&paced.targets);
    assert!(targets.into_iter().all(|t| t.runtime == weft));
    let back = common::round_trip(&result);
    assert_eq!(back.rows[0].runtimes, row.runtimes);
    let text = http::report::render(&result);
    assert!(text.contains("weft") && text.contains("floor: the same requests"));
    let floor_lines = text
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == FLOOR));
    // Its line in the suite's table and at each load in the cost table.
    assert_eq!(floor_lines.count(), 3, "{text}");
    let mut document = Document::new();
    document.insert::<http::Http>(result);
    let summary = summary::render(&document);
    assert!(summary.contains("floor | weft | tokio"), "{summary}");
    // Without it, the suite names it nowhere.
    let without = HttpConfig {
        floor: false,
        ..config
    };
    assert!(
        !HttpSettings::new(&without)
            .suite
            .runtimes
            .iter()
            .any(|r| r == FLOOR)
    );
}

fn latency(f: &Figures) -> Option<&Percentiles> {
    f.latency.as_ref()
}
