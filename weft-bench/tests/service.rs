//! Smoke test of the service lane: weft-service (the built `weft-bench`,
//! as `service-serve`) on weft and on tokio, both loads with tiny timing,
//! gives rates, percentiles, the server's CPU and no errors, each server
//! stops gracefully, weft's targets are checked; the lane round-trips
//! through JSON.

mod common;

use std::time::Duration;

use weft_bench::figure::lane::Setup;
use weft_bench::figure::skew::Window;
use weft_bench::harness::Profile;
use weft_bench::mixed::latency::Percentiles;
use weft_bench::service::result::{Figures, ServiceResult};
use weft_bench::service::{self, ServiceConfig};

#[test]
fn weft_and_tokio_serve_both_loads_and_give_figures() {
    let setup = Setup::new(Profile::Quick, 2, &service::RUNTIMES);
    let exe = env!("CARGO_BIN_EXE_weft-bench").into();
    let config = ServiceConfig::tiny(setup, exe);
    // About 10 s on the 2-core dev machine (four servers, each seeding its
    // SQLite file).
    let result = common::tiny_lane(Duration::from_secs(180), || service::run(&config));
    assert_eq!(result.rows.len(), 2);
    for row in &result.rows {
        for kind in service::RUNTIMES {
            let f = common::completed(&row.runtimes, kind.name(), latency, window);
            assert!(f.req_per_s > 0.0 && f.errors == 0, "{}: {f:?}", row.name);
        }
        assert!(!row.targets.is_empty() && row.targets.iter().all(|c| c.value.is_some()));
    }
    let seed004 = result.rows[1].runtimes["weft"].ok().unwrap();
    assert!(
        seed004.reports_per_s.is_some_and(|r| r > 0.0),
        "{seed004:?}"
    );
    let text = serde_json::to_string(&result).unwrap();
    let back: ServiceResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back.rows[0].runtimes, result.rows[0].runtimes);
    assert!(service::report::render(&result).contains("seed 004"));
}

fn latency(f: &Figures) -> Option<&Percentiles> {
    f.latency.as_ref()
}

fn window(f: &Figures) -> &Window {
    &f.window
}
