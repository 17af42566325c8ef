//! weft-service on its embedded SQLite database, on weft and on tokio:
//! every endpoint and its errors, 200 concurrent requests, and graceful
//! shutdown. Each test runs the built binary on `127.0.0.1:0`.

mod common;

use common::{Service, checks};

/// One test per runtime for each check, each on a service of its own.
macro_rules! on_both_runtimes {
    ($($check:ident),* $(,)?) => {
        mod weft {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let service = super::Service::start("weft", &[]);
                    super::checks::$check(&service).await;
                }
            )*
        }
        mod tokio_rt {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let service = super::Service::start("tokio", &[]);
                    super::checks::$check(&service).await;
                }
            )*
        }
    };
}

on_both_runtimes!(
    users_get,
    users_post,
    fortunes,
    report,
    debug_tasks,
    unknown_route,
    concurrent,
);

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
