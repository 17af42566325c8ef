//! The hot path of a tokio service, as plain tokio code: an axum server
//! with sqlx (SQLite) behind it, and reqwest calling it. weft-bench's
//! `tokio-patch` lane runs this binary built on tokio and built with tokio
//! patched to weft-tokio, and compares the two. Nothing here names weft.
//!
//! ```text
//! tokio-bench serve                         serves on 127.0.0.1:0; prints "listening ADDR"
//! tokio-bench get BASE PATH CONCURRENCY N   N GETs of PATH, CONCURRENCY at a time
//! tokio-bench mix BASE USERS REPORTS MS DURATION_MS
//!                                           USERS loops of GET /users/ID beside REPORTS
//!                                           loops of GET /report?ms=MS, for DURATION_MS
//! tokio-bench sqlx CONCURRENCY N            N point reads on a pool, in this process
//! ```
//!
//! Each measuring command prints one line of JSON: the requests (or
//! queries) measured, their latency's p50 and p99 in µs, and this
//! process's CPU time (user + system, every thread) per request in µs.
//! The server's routes: `/hello` (a constant), `/users/{id}` (one row by
//! primary key), `/report?ms=N` (100 rows, then N ms of the thread's CPU
//! in one poll: seed 004's analytic request, which holds its worker).

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

/// Rows in the users table.
const USERS: i64 = 10_000;
/// Rows a report reads before it computes.
const REPORT_ROWS: i64 = 100;
/// Requests (or queries) run before measuring, to warm connections.
const WARMUP: usize = 200;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
struct User {
    id: i64,
    name: String,
    email: String,
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["serve"] => serve().await,
        ["get", base, path, concurrency, n] => {
            get_load(base, path, number(concurrency), number(n)).await
        }
        ["mix", base, users, reports, ms, duration_ms] => {
            mix(
                base,
                number(users),
                number(reports),
                number(ms) as u64,
                Duration::from_millis(number(duration_ms) as u64),
            )
            .await
        }
        ["sqlx", concurrency, n] => sqlx_reads(number(concurrency), number(n)).await,
        _ => {
            eprintln!("usage: see the module documentation of examples/tokio-bench/src/main.rs");
            std::process::exit(2);
        }
    }
}

fn number(text: &str) -> usize {
    text.parse()
        .unwrap_or_else(|_| panic!("expected a number, got {text:?}"))
}

/// A pool on a fresh in-memory SQLite database with `USERS` rows, shared
/// by the pool's connections (kept open for the process's life: the
/// database lives as long as one of them).
async fn database() -> SqlitePool {
    let url = format!(
        "sqlite:file:tokio-bench-{}?mode=memory&cache=shared",
        std::process::id()
    );
    let options = SqliteConnectOptions::from_str(&url).expect("a valid URL");
    let pool = SqlitePoolOptions::new()
        .min_connections(4)
        .max_connections(4)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await
        .expect("the database opens");
    sqlx::query(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL)",
    )
    .execute(&pool)
    .await
    .expect("the table is made");
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) \
         INSERT INTO users SELECT i, 'user' || i, 'user' || i || '@example.com' FROM n",
    )
    .bind(USERS)
    .execute(&pool)
    .await
    .expect("the rows are written");
    pool
}

async fn serve() {
    let pool = database().await;
    let app = Router::new()
        .route("/hello", get(|| async { "ok" }))
        .route("/users/{id}", get(user))
        .route("/report", get(report))
        .with_state(pool);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    println!("listening {}", listener.local_addr().expect("an address"));
    axum::serve(listener, app).await.expect("serves");
}

async fn user(State(pool): State<SqlitePool>, Path(id): Path<i64>) -> Json<User> {
    Json(point_read(&pool, id).await)
}

async fn point_read(pool: &SqlitePool, id: i64) -> User {
    sqlx::query_as::<_, User>("SELECT id, name, email FROM users WHERE id = ?")
        .bind(id)
        .fetch_one(pool)
        .await
        .expect("the row exists")
}

#[derive(Deserialize)]
struct ReportParams {
    ms: u64,
}

/// Reads `REPORT_ROWS` rows, then spends `ms` of this thread's CPU time in
/// one poll (no `.await` inside).
async fn report(State(pool): State<SqlitePool>, Query(params): Query<ReportParams>) -> String {
    let rows: Vec<User> = sqlx::query_as("SELECT id, name, email FROM users WHERE id <= ?")
        .bind(REPORT_ROWS)
        .fetch_all(&pool)
        .await
        .expect("the rows exist");
    let mut value: f64 = rows.iter().map(|u| u.id as f64 + u.name.len() as f64).sum();
    let budget = Duration::from_millis(params.ms);
    let start = thread_cpu_time();
    while thread_cpu_time() - start < budget {
        for _ in 0..10_000 {
            value = (value * 1.000_000_1).sqrt() + 1.0;
        }
    }
    format!("{value}")
}

/// This thread's CPU time.
fn thread_cpu_time() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// This process's CPU time (user + system, every thread).
fn process_cpu_time() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// What a measuring command prints.
#[derive(Serialize)]
struct Measured {
    requests: usize,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_request: f64,
    wall_ms: f64,
}

fn measured(mut latencies_ns: Vec<u64>, cpu: Duration, wall: Duration) -> Measured {
    latencies_ns.sort_unstable();
    let at = |q: f64| {
        let index = ((latencies_ns.len() as f64 - 1.0) * q).round() as usize;
        latencies_ns.get(index).copied().unwrap_or(0) as f64 / 1000.0
    };
    Measured {
        requests: latencies_ns.len(),
        p50_us: at(0.50),
        p99_us: at(0.99),
        cpu_us_per_request: cpu.as_secs_f64() * 1e6 / latencies_ns.len().max(1) as f64,
        wall_ms: wall.as_secs_f64() * 1e3,
    }
}

/// `n` GETs of `base + path` (each a fresh id where the path ends in `/`),
/// `concurrency` at a time, on one kept-alive client.
async fn get_load(base: &str, path: &str, concurrency: usize, n: usize) {
    let client = reqwest::Client::new();
    let url = format!("{base}{path}");
    run_gets(&client, &url, concurrency, WARMUP).await;
    let cpu = process_cpu_time();
    let start = Instant::now();
    let latencies = run_gets(&client, &url, concurrency, n).await;
    let report = measured(latencies, process_cpu_time() - cpu, start.elapsed());
    println!("{}", serde_json::to_string(&report).expect("serializes"));
}

async fn run_gets(client: &reqwest::Client, url: &str, concurrency: usize, n: usize) -> Vec<u64> {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (client, url, next) = (client.clone(), url.to_owned(), next.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < n as u64 {
                let start = Instant::now();
                let body = client
                    .get(&url)
                    .send()
                    .await
                    .expect("the request is answered")
                    .bytes()
                    .await
                    .expect("the body arrives");
                assert!(!body.is_empty());
                latencies.push(start.elapsed().as_nanos() as u64);
            }
            latencies
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        all.extend(done.expect("a load task ends"));
    }
    all
}

/// `users` loops of `GET /users/{id}` beside `reports` loops of
/// `GET /report?ms={ms}`, for `duration`: the users' latency is measured.
async fn mix(base: &str, users: usize, reports: usize, ms: u64, duration: Duration) {
    let client = reqwest::Client::new();
    run_gets(&client, &format!("{base}/users/1"), users, WARMUP).await;
    let deadline = Instant::now() + duration;
    let mut report_tasks = tokio::task::JoinSet::new();
    for _ in 0..reports {
        let (client, url) = (client.clone(), format!("{base}/report?ms={ms}"));
        report_tasks.spawn(async move {
            let mut done = 0u64;
            while Instant::now() < deadline {
                client
                    .get(&url)
                    .send()
                    .await
                    .expect("the report is answered")
                    .bytes()
                    .await
                    .expect("the report arrives");
                done += 1;
            }
            done
        });
    }
    let cpu = process_cpu_time();
    let start = Instant::now();
    let mut user_tasks = tokio::task::JoinSet::new();
    for task in 0..users.max(1) {
        let (client, base) = (client.clone(), base.to_owned());
        user_tasks.spawn(async move {
            let mut latencies = Vec::new();
            let mut seed = 0x9E37_79B9_7F4A_7C15_u64 ^ (task as u64 + 1);
            while Instant::now() < deadline {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let id = (seed % USERS as u64) as i64 + 1;
                let request_start = Instant::now();
                client
                    .get(format!("{base}/users/{id}"))
                    .send()
                    .await
                    .expect("the user is answered")
                    .bytes()
                    .await
                    .expect("the user arrives");
                latencies.push(request_start.elapsed().as_nanos() as u64);
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = user_tasks.join_next().await {
        latencies.extend(done.expect("a users task ends"));
    }
    let report = measured(latencies, process_cpu_time() - cpu, start.elapsed());
    while let Some(done) = report_tasks.join_next().await {
        done.expect("a reports task ends");
    }
    println!("{}", serde_json::to_string(&report).expect("serializes"));
}

/// `n` point reads by primary key on a pool of 4 connections,
/// `concurrency` tasks at a time, in this process.
async fn sqlx_reads(concurrency: usize, n: usize) {
    let pool = database().await;
    let run = |count: usize| {
        let pool = pool.clone();
        async move {
            let next = Arc::new(AtomicU64::new(0));
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..concurrency.max(1) {
                let (pool, next) = (pool.clone(), next.clone());
                tasks.spawn(async move {
                    let mut latencies = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count as u64 {
                            break latencies;
                        }
                        let start = Instant::now();
                        let user = point_read(&pool, (i % USERS as u64) as i64 + 1).await;
                        assert!(user.id > 0);
                        latencies.push(start.elapsed().as_nanos() as u64);
                    }
                });
            }
            let mut all = Vec::with_capacity(count);
            while let Some(done) = tasks.join_next().await {
                all.extend(done.expect("a query task ends"));
            }
            all
        }
    };
    run(WARMUP).await;
    let cpu = process_cpu_time();
    let start = Instant::now();
    let latencies = run(n).await;
    let report = measured(latencies, process_cpu_time() - cpu, start.elapsed());
    println!("{}", serde_json::to_string(&report).expect("serializes"));
}
