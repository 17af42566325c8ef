//! weft-service on PostgreSQL, on weft and on tokio: every endpoint
//! (TechEmpower's seven test types by its verifier's rules among them), a
//! database without the tables (created and seeded), TechEmpower's
//! statement count in `pg_stat_statements` after 512 concurrent requests
//! of each type, a graceful shutdown, and the server stopped mid-run
//! (503s, no crash) and started again (200s).
//!
//! Needs `WEFT_SERVICE_POSTGRES_URL` (`bash scripts/postgres.sh start`
//! prints one; `.ci/run` sets it); without it each test says it skipped
//! and passes. The outage test stops and starts the server through
//! `scripts/postgres.sh`, so it runs only when the URL is that script's
//! server. The tests share one server, so they take turns.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{RUNTIMES, Service, checks, techempower, until_status};

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

async fn connect(url: &str) -> tokio_postgres::Client {
    common::connect_postgres(url).await
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
            .batch_execute("DROP TABLE IF EXISTS users, fortune, world")
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

/// Makes `pg_stat_statements` count on the server at `url`: when it is not
/// preloaded, adds it to `shared_preload_libraries` (`ALTER SYSTEM`) and
/// restarts the server through `scripts/postgres.sh` (so only that
/// script's server: `Err` says why not), then creates the extension.
async fn enable_pg_stat_statements(url: &str) -> Result<(), String> {
    let client = connect(url).await;
    let preload: String = client
        .query_one("SHOW shared_preload_libraries", &[])
        .await
        .unwrap()
        .get(0);
    if !preload.contains("pg_stat_statements") {
        if postgres_sh("url").as_deref() != Some(url) {
            return Err(format!(
                "{url} does not preload pg_stat_statements and is not the server \
                 scripts/postgres.sh runs (which this test may restart)"
            ));
        }
        let libraries = if preload.trim().is_empty() {
            "pg_stat_statements".to_owned()
        } else {
            format!("{preload}, pg_stat_statements")
        };
        client
            .batch_execute(&format!(
                "ALTER SYSTEM SET shared_preload_libraries = '{libraries}'"
            ))
            .await
            .map_err(|e| format!("ALTER SYSTEM: {e}"))?;
        drop(client);
        let mut restart = StartOnDrop(true);
        postgres_sh("stop").ok_or("scripts/postgres.sh stop failed")?;
        postgres_sh("start").ok_or("scripts/postgres.sh start failed")?;
        restart.0 = false;
    }
    connect(url)
        .await
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .await
        .map_err(|e| format!("CREATE EXTENSION pg_stat_statements: {e}"))
}

/// What `pg_stat_statements` has counted on the statements that name the
/// `World` table (TechEmpower's verifier matches the word `world`):
/// (`SELECT` calls, rows they returned, `UPDATE` calls, rows they changed).
async fn world_statements(url: &str) -> [i64; 4] {
    let row = connect(url)
        .await
        .query_one(
            "SELECT coalesce(sum(calls) FILTER (WHERE query ~* '^\\s*select'), 0)::bigint,
                    coalesce(sum(rows) FILTER (WHERE query ~* '^\\s*select'), 0)::bigint,
                    coalesce(sum(calls) FILTER (WHERE query ~* '^\\s*update'), 0)::bigint,
                    coalesce(sum(rows) FILTER (WHERE query ~* '^\\s*update'), 0)::bigint
             FROM pg_stat_statements
             WHERE query ~* '\\mworld\\M'
               AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .unwrap();
    [row.get(0), row.get(1), row.get(2), row.get(3)]
}

/// TechEmpower's statement count as its verifier takes it: after 512
/// concurrent requests of each type, `pg_stat_statements` shows one
/// `SELECT` per row read and one `UPDATE` per row written, and none for
/// `/cached-queries`; the service's own count (`/metrics`) agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_statement_per_row_in_pg_stat_statements() {
    const REQUESTS: i64 = 512;
    let test = "one_statement_per_row_in_pg_stat_statements";
    let Some(url) = postgres_url(test) else {
        return;
    };
    let _turn = take_turn().await;
    if let Err(why) = enable_pg_stat_statements(&url).await {
        common::say(&format!(
            "{test}: pg_stat_statements not checked ({why}); the service's own count only"
        ));
        for runtime in RUNTIMES {
            let service = Service::start(runtime, &["--database", &url]);
            techempower::statements_per_row(&service, REQUESTS as usize).await;
        }
        return;
    }
    for runtime in RUNTIMES {
        let service = Service::start(runtime, &["--database", &url]);
        // Connected, and the cache loaded, before counting.
        assert_eq!(service.get("/db").await.status, 200);
        for (path, rows, expected) in [
            ("/db", 1, [REQUESTS, REQUESTS, 0, 0]),
            (
                "/queries?queries=20",
                20,
                [20 * REQUESTS, 20 * REQUESTS, 0, 0],
            ),
            (
                "/updates?queries=20",
                20,
                [20 * REQUESTS, 20 * REQUESTS, 20 * REQUESTS, 20 * REQUESTS],
            ),
            ("/cached-queries?count=20", 20, [0, 0, 0, 0]),
        ] {
            let selects = checks::gauge(&service, "weft_service_world_selects_total").await;
            let updates = checks::gauge(&service, "weft_service_world_updates_total").await;
            connect(&url)
                .await
                .batch_execute("SELECT pg_stat_statements_reset()")
                .await
                .unwrap();
            techempower::concurrently(&service, path, REQUESTS as usize, rows).await;
            assert_eq!(
                world_statements(&url).await,
                expected,
                "{runtime} {REQUESTS} × {path}: pg_stat_statements' \
                 [SELECT calls, rows, UPDATE calls, rows]"
            );
            let selected = checks::gauge(&service, "weft_service_world_selects_total").await;
            let updated = checks::gauge(&service, "weft_service_world_updates_total").await;
            assert_eq!(
                [(selected - selects) as i64, (updated - updates) as i64],
                [expected[0], expected[2]],
                "{runtime} {path}: the service's count"
            );
        }
    }
}
