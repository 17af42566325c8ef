//! Smoke test of the service suite: weft-service (the built `weft-bench`,
//! as `service-serve`) on weft and on tokio, both loads with tiny timing,
//! gives rates, percentiles, the server's CPU and no errors, each server
//! stops gracefully, weft's targets are checked; the suite round-trips
//! through JSON.

mod common;

use std::time::Duration;

use weft_bench::common::latency::Percentiles;
use weft_bench::common::runtimes::RuntimeKind;
use weft_bench::suites::service::result::Figures;
use weft_bench::suites::service::soak::SoakConfig;
use weft_bench::suites::service::{self, ServiceConfig};

#[test]
fn weft_and_tokio_serve_both_loads_and_give_figures() {
    let setup = common::quick(&service::RUNTIMES);
    let exe = env!("CARGO_BIN_EXE_weft-bench").into();
    let config = ServiceConfig::tiny(setup, exe);
    // About 10 s on the 2-core dev machine (four servers, each seeding its
    // SQLite file).
    let result = common::tiny_suite(Duration::from_secs(180), || service::run(&config));
    assert_eq!(result.rows.len(), 2);
    let runtimes = service::RUNTIMES.map(RuntimeKind::name);
    for (row, _, f) in common::every_run(&result.rows, runtimes, latency) {
        assert!(f.req_per_s > 0.0 && f.errors == 0, "{row}: {f:?}");
    }
    for row in &result.rows {
        assert!(!row.targets.is_empty() && row.targets.iter().all(|c| c.value.is_some()));
    }
    let seed004 = result.rows[1].runtimes["weft"].ok().unwrap();
    assert!(
        seed004.reports_per_s.is_some_and(|r| r > 0.0),
        "{seed004:?}"
    );
    let back = common::round_trip(&result);
    assert_eq!(back.rows[0].runtimes, result.rows[0].runtimes);
    assert!(service::report::render(&result).contains("seed 004"));
}

fn latency(f: &Figures) -> Option<&Percentiles> {
    f.latency.as_ref()
}

/// The soak, shortened: 15 s of seed 004 on each runtime, a sample every
/// 5 s and the reference at 5 s (the test-only knobs of [`SoakConfig`]):
/// the samples are taken on the interval's grid and at the end, read the
/// server's `/proc`, count its answers, reach the JSON and the table, and
/// the verdict is judged from the reference sample.
#[test]
fn a_short_soak_samples_the_server_on_both_runtimes() {
    let setup = common::quick(&service::RUNTIMES);
    let exe = env!("CARGO_BIN_EXE_weft-bench").into();
    let soak = SoakConfig {
        interval: Duration::from_secs(5),
        reference_after: Duration::from_secs(5),
        ..SoakConfig::new(Duration::from_secs(15))
    };
    let config = ServiceConfig::tiny(setup, exe).soak(soak);
    // About 35 s on the 2-core dev machine.
    let result = common::tiny_suite(Duration::from_secs(180), || service::run(&config));
    assert_eq!(result.rows.len(), 1, "a soak runs seed 004 alone");
    let runtimes = service::RUNTIMES.map(RuntimeKind::name);
    for (_, runtime, f) in common::every_run(&result.rows, runtimes, latency) {
        let soak = f.soak.as_ref().unwrap_or_else(|| panic!("{f:?}"));
        // weft's /metrics gives its threads by kind; tokio's has no such
        // figures.
        for s in &soak.samples {
            let kinds = s.threads_by_kind.as_ref();
            let workers = kinds.map(|kinds| kinds.get("worker").map_or(0, |k| k.alive));
            match runtime {
                "weft" => assert!(workers.is_some_and(|n| n >= 1), "{s:?}"),
                _ => assert_eq!(workers, None, "{runtime}: {s:?}"),
            }
        }
        let times: Vec<f64> = soak.samples.iter().map(|s| s.t_s).collect();
        // 0, 5, 10, 15 s from the load's start, then the window's end
        // (the warm-up's 0.2 s after 15 s).
        assert!(times.len() >= 4 && times[0] < 1.0, "{times:?}");
        assert!(times.windows(2).all(|t| t[0] < t[1]), "{times:?}");
        assert!(*times.last().unwrap() >= 15.0, "{times:?}");
        for s in &soak.samples {
            let r = &s.resources;
            assert!(r.rss_kib > 0 && r.threads >= 2 && r.fds >= 3, "{s:?}");
            // The 2 reporters' connections at least (the first sample is
            // taken after they opened), within the open loop's bound.
            let most = (2 + service::load::OPEN_LOOP_CONNECTIONS) as u64;
            assert!((2..=most).contains(&s.client_connections), "{s:?}");
            assert!(s.own_fds() < r.fds, "{s:?}");
        }
        let answered: u64 = soak.samples.iter().map(|s| s.users).sum();
        assert!(answered > 0, "{:?}", soak.samples);
        assert!(soak.samples.last().unwrap().errors.total() <= f.errors);
        let v = &soak.verdict;
        let reference = times.iter().find(|&&t| t >= 5.0).copied();
        assert_eq!(v.reference_t_s, reference, "{v:?}");
        assert!(v.passed.is_some() && v.rss_ratio.is_some(), "{v:?}");
    }
    let back = common::round_trip(&result);
    assert_eq!(back.rows[0].runtimes, result.rows[0].runtimes);
    assert_eq!(back.settings.soak_s, Some(15.0));
    let table = service::report::render(&result);
    assert!(
        table.contains("soak on weft") && table.contains("verdict on tokio"),
        "{table}"
    );
}
