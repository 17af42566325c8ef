//! weft-service on its embedded SQLite database, on weft and on tokio:
//! every endpoint and its errors, TechEmpower's seven test types by its
//! verifier's rules, 200 concurrent requests, and graceful shutdown. Each test runs the built binary on `127.0.0.1:0`.

mod common;

use common::{Service, checks, techempower};

/// One test per runtime for each check, each on a service of its own.
macro_rules! on_both_runtimes {
    ($($module:ident::$check:ident),* $(,)?) => {
        mod weft {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let service = super::Service::start("weft", &[]);
                    super::$module::$check(&service).await;
                }
            )*
        }
        mod tokio_rt {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let service = super::Service::start("tokio", &[]);
                    super::$module::$check(&service).await;
                }
            )*
        }
    };
}

on_both_runtimes!(
    checks::users_get,
    checks::users_post,
    checks::fortunes,
    checks::report,
    checks::debug_tasks,
    checks::unknown_route,
    checks::concurrent,
    techempower::headers_on_every_response,
    techempower::json_and_plaintext,
    techempower::db_row,
    techempower::queries_clamped,
    techempower::updates_clamped,
    techempower::cached_queries_clamped,
    techempower::updates_written,
    techempower::cached_queries_without_a_query,
    techempower::plaintext_pipelined,
);

/// TechEmpower's `Date` rule as its verifier applies it: two requests 3 s
/// apart carry different dates (both runtimes at once: one 3 s wait).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_changes_between_requests_3_s_apart() {
    let services = common::RUNTIMES.map(|runtime| Service::start(runtime, &[]));
    let wait = std::time::Duration::from_secs(3);
    tokio::join!(
        techempower::date_changes(&services[0], wait),
        techempower::date_changes(&services[1], wait),
    );
}

/// TechEmpower's statement count: 512 concurrent requests of each type
/// make one `SELECT` per row read and one `UPDATE` per row written (the
/// service's own count: SQLite has no `pg_stat_statements`), and
/// `/cached-queries` none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_statement_per_row_under_512_concurrent_requests() {
    for runtime in common::RUNTIMES {
        let service = Service::start(runtime, &[]);
        techempower::statements_per_row(&service, 512).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics() {
    for runtime in common::RUNTIMES {
        checks::metrics(&Service::start(runtime, &[]), "sqlite").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_db_connections_database_calls_at_once() {
    for runtime in common::RUNTIMES {
        let service = Service::start(runtime, &["--db-connections", "3"]);
        checks::db_calls_bounded(&service, 3).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_requests_in_flight_then_exits_0() {
    for runtime in common::RUNTIMES {
        checks::shutdown_in_flight(runtime, &[], 2).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_exits_0() {
    for runtime in common::RUNTIMES {
        checks::interrupt_idle(runtime).await;
    }
}

#[test]
fn a_data_dir_that_cannot_be_made_fails_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_weft-service"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            "/proc/weft-service",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--data-dir /proc/weft-service"), "{stderr}");
}
