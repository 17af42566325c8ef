//! The service's checks as `#[tokio::test]`s, on the default
//! (current-thread) runtime and on the multi-thread one.

use tokio_app::{App, Db};

async fn app() -> App {
    tokio_app::start(Db::sqlite().await.unwrap()).await.unwrap()
}

#[tokio::test]
async fn every_check_passes_on_the_default_test_runtime() {
    let app = app().await;
    for (name, outcome) in tokio_app::run_checks(&app).await {
        assert_eq!(outcome, Ok(()), "{name}");
    }
    app.stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_check_passes_on_two_workers() {
    let app = app().await;
    for (name, outcome) in tokio_app::run_checks(&app).await {
        assert_eq!(outcome, Ok(()), "{name}");
    }
    app.stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_endpoint_reads_postgres_when_a_url_is_given() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!("DATABASE_URL not set: PostgreSQL not checked");
        return;
    };
    let app = tokio_app::start(Db::postgres(&url).await.unwrap())
        .await
        .unwrap();
    assert_eq!(tokio_app::check_user(&app).await, Ok(()));
    app.stop.cancel();
}

/// One runtime's threads, never both: `TOKIO_APP_RUNTIME` (set by
/// `scripts/tokio-app.sh` to the build it made) names which.
#[tokio::test(flavor = "multi_thread")]
async fn only_one_runtimes_threads_run_the_process() {
    let seen = tokio_app::runtime_seen();
    assert!(seen == "tokio" || seen == "weft", "{seen}");
    if let Ok(expected) = std::env::var("TOKIO_APP_RUNTIME") {
        assert_eq!(seen, expected);
    }
}
