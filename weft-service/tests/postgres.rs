//! weft-service on PostgreSQL, on weft and on tokio: every endpoint, a
//! database without the tables (created and seeded), a graceful shutdown,
//! and the server stopped mid-run (503s, no crash) and started again
//! (200s).
//!
//! Needs `WEFT_SERVICE_POSTGRES_URL` (`bash scripts/postgres.sh start`
//! prints one; `.ci/run` sets it); without it each test says it skipped
//! and passes. The outage test stops and starts the server through
//! `scripts/postgres.sh`, so it runs only when the URL is that script's
//! server. The tests share one server, so they take turns.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{RUNTIMES, Service, checks, until_status};

fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("WEFT_SERVICE_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            common::say(&format!(
                "{test}: skipped: WEFT_SERVICE_POSTGRES_URL is not set \
                 (`bash scripts/postgres.sh start` prints one)"
            ));
            None
        }
    }
}

/// One test at a time on the shared server (each test has a runtime of
/// its own; tokio's mutex needs none).
async fn take_turn() -> tokio::sync::MutexGuard<'static, ()> {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TURN.lock().await
}

/// `scripts/postgres.sh command`'s stdout, trimmed; `None` if it failed.
fn postgres_sh(command: &str) -> Option<String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/postgres.sh");
    let output = Command::new("bash")
        .arg(script)
        .arg(command)
        .output()
        .unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_on_postgres() {
    let Some(url) = postgres_url("every_endpoint_on_postgres") else {
        return;
    };
    let _turn = take_turn().await;
    for runtime in RUNTIMES {
        let service = Service::start(runtime, &["--database", &url]);
        checks::all(&service, "postgres").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_requests_in_flight_on_postgres() {
    let Some(url) = postgres_url("sigterm_answers_the_requests_in_flight_on_postgres") else {
        return;
    };
    let _turn = take_turn().await;
    for runtime in RUNTIMES {
        checks::shutdown_in_flight(runtime, &["--database", &url], 1).await;
    }
}

/// A connection of the test's own.
async fn connect(url: &str) -> tokio_postgres::Client {
    let config: tokio_postgres::Config = url.parse().expect(url);
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        other => panic!("{url}: not a TCP host: {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let stream = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .expect(url);
    let (client, connection) = config
        .connect_raw(stream, tokio_postgres::NoTls)
        .await
        .expect(url);
    drop(tokio::spawn(connection));
    client
}

/// The sessions the server has counted on this database (each connection
/// made to it, counted by the time it ends).
async fn sessions(url: &str) -> i64 {
    let client = connect(url).await;
    let row = client
        .query_one(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    row.get(0)
}

/// On a database without the service's tables, the first connection
/// creates and seeds them; `/metrics` shows the pool's size and counts its
/// queries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_without_tables_is_created_and_seeded_on_postgres() {
    let Some(url) = postgres_url("a_database_without_tables_is_created_and_seeded_on_postgres")
    else {
        return;
    };
    let _turn = take_turn().await;
    for runtime in RUNTIMES {
        connect(&url)
            .await
            .batch_execute("DROP TABLE IF EXISTS users, fortune")
            .await
            .unwrap();
        let service = Service::start(runtime, &["--database", &url, "--db-connections", "3"]);
        checks::users_get(&service).await;
        checks::fortunes(&service).await;
        let gauge = |name| checks::gauge(&service, name);
        assert_eq!(gauge("weft_service_db_connections").await, 3);
        assert!(
            gauge("weft_service_db_calls_max").await >= 1,
            "queries counted"
        );
        assert_eq!(gauge("weft_service_db_calls_in_flight").await, 0);
    }
}

/// The pool keeps its connections: 50 requests on one connection's pool
/// make a handful of sessions at most, not one each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_reuses_its_connections_on_postgres() {
    let Some(url) = postgres_url("the_pool_reuses_its_connections_on_postgres") else {
        return;
    };
    let _turn = take_turn().await;
    for runtime in RUNTIMES {
        let service = Service::start(runtime, &["--database", &url, "--db-connections", "1"]);
        assert_eq!(service.get("/users/1").await.status, 200);
        let before = sessions(&url).await;
        for id in 1..=50 {
            assert_eq!(service.get(&format!("/users/{id}")).await.status, 200);
        }
        // The sessions of connections closed meanwhile are counted once
        // their server processes end: give them time.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let made = sessions(&url).await - before;
        assert!(made <= 5, "{made} sessions for 50 requests ({runtime})");
    }
}

/// Starts the server again if the test fails while it is stopped, so the
/// other tests find it running.
struct StartOnDrop(bool);

impl Drop for StartOnDrop {
    fn drop(&mut self) {
        if self.0 {
            let _ = postgres_sh("start");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_gives_503_and_started_again_gives_200() {
    let test = "postgres_stopped_gives_503_and_started_again_gives_200";
    let Some(url) = postgres_url(test) else {
        return;
    };
    let _turn = take_turn().await;
    if postgres_sh("url").as_deref() != Some(url.as_str()) {
        common::say(&format!(
            "{test}: skipped: {url} is not the server scripts/postgres.sh runs"
        ));
        return;
    }
    let mut services = RUNTIMES.map(|runtime| Service::start(runtime, &["--database", &url]));
    for service in &services {
        assert_eq!(service.get("/users/7").await.status, 200);
    }

    let mut restart = StartOnDrop(true);
    postgres_sh("stop").expect("scripts/postgres.sh stop");
    // A service started while the database is down starts, and answers 503.
    let late = Service::start("weft", &["--database", &url]);
    for service in services.iter().chain([&late]) {
        for path in ["/users/7", "/fortunes", "/report?ms=1"] {
            let down = service.get(path).await;
            assert_eq!(down.status, 503, "{} {path}: {down:?}", service.runtime);
            assert!(down.error().contains("database unavailable"), "{down:?}");
        }
        let post = service
            .post("/users", r#"{"name":"Down","email":"down@example.com"}"#)
            .await;
        assert_eq!(post.status, 503, "{post:?}");
        assert_eq!(service.get("/metrics").await.status, 200);
    }
    for service in &mut services {
        assert!(service.is_running(), "{} exited", service.runtime);
    }

    postgres_sh("start").expect("scripts/postgres.sh start");
    restart.0 = false;
    for service in services.iter().chain([&late]) {
        let up = until_status(service, "/users/7", 200, Duration::from_secs(30)).await;
        assert_eq!(up.status, 200, "{}: {up:?}", service.runtime);
        assert_eq!(service.get("/fortunes").await.status, 200);
        let post = service
            .post("/users", r#"{"name":"Up","email":"up@example.com"}"#)
            .await;
        assert_eq!(post.status, 201, "{post:?}");
    }
}
