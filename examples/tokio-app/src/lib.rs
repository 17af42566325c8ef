//! A small service written as plain tokio code: an axum HTTP API with
//! tower-http's timeout, sqlx on SQLite (and PostgreSQL when
//! `DATABASE_URL` is set), a tonic gRPC service, a tokio-util line codec
//! over TCP, a child process, `select!`, `spawn_blocking` and a
//! `CancellationToken`. `checks` drives each part from the outside (reqwest
//! for HTTP, tonic's client for gRPC) and says what it saw; nothing here
//! names the runtime underneath.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{Framed, LinesCodec};
use tokio_util::sync::CancellationToken;
use tower_http::timeout::TimeoutLayer;

/// The gRPC code tonic-build generated from `proto/hello.proto`.
pub mod hello {
    tonic::include_proto!("hello");
}

/// The databases the API reads.
#[derive(Clone)]
pub enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Db {
    /// An in-memory SQLite database with 100 users.
    pub async fn sqlite() -> Result<Db, sqlx::Error> {
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect("sqlite::memory:")
            .await?;
        sqlx::query("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            .execute(&pool)
            .await?;
        for id in 1..=100i64 {
            sqlx::query("INSERT INTO users (id, name) VALUES (?, ?)")
                .bind(id)
                .bind(format!("user-{id}"))
                .execute(&pool)
                .await?;
        }
        Ok(Db::Sqlite(pool))
    }

    /// The PostgreSQL database at `url`, with a fresh table of 100 users.
    pub async fn postgres(url: &str) -> Result<Db, sqlx::Error> {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect(url)
            .await?;
        sqlx::query("DROP TABLE IF EXISTS tokio_app_users")
            .execute(&pool)
            .await?;
        sqlx::query("CREATE TABLE tokio_app_users (id BIGINT PRIMARY KEY, name TEXT NOT NULL)")
            .execute(&pool)
            .await?;
        sqlx::query(
            "INSERT INTO tokio_app_users SELECT i, 'user-' || i FROM generate_series(1, 100) AS i",
        )
        .execute(&pool)
        .await?;
        Ok(Db::Postgres(pool))
    }

    /// The name of user `id`.
    pub async fn user_name(&self, id: i64) -> Result<Option<String>, sqlx::Error> {
        match self {
            Db::Sqlite(pool) => {
                sqlx::query_scalar("SELECT name FROM users WHERE id = ?")
                    .bind(id)
                    .fetch_optional(pool)
                    .await
            }
            Db::Postgres(pool) => {
                sqlx::query_scalar("SELECT name FROM tokio_app_users WHERE id = $1")
                    .bind(id)
                    .fetch_optional(pool)
                    .await
            }
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct User {
    pub id: i64,
    pub name: String,
}

async fn user(
    State(db): State<Db>,
    Path(id): Path<i64>,
) -> Result<Json<User>, axum::http::StatusCode> {
    match db.user_name(id).await {
        Ok(Some(name)) => Ok(Json(User { id, name })),
        Ok(None) => Err(axum::http::StatusCode::NOT_FOUND),
        Err(_) => Err(axum::http::StatusCode::INTERNAL_SERVER_ERROR),
    }
}

/// The HTTP API: `/hello`, `/users/{id}`, `/slow` (cut at 200 ms by the
/// timeout layer) and `/blocking` (a `spawn_blocking` computation).
pub fn router(db: Db) -> Router {
    Router::new()
        .route("/hello", get(|| async { "Hello, World!" }))
        .route("/users/{id}", get(user))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "too late"
            }),
        )
        .route(
            "/blocking",
            get(|| async {
                let sum = tokio::task::spawn_blocking(|| (1..=1000u64).sum::<u64>())
                    .await
                    .unwrap();
                sum.to_string()
            }),
        )
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            Duration::from_millis(200),
        ))
        .with_state(db)
}

#[derive(Default)]
struct Greeter;

#[tonic::async_trait]
impl hello::greeter_server::Greeter for Greeter {
    async fn say_hello(
        &self,
        request: tonic::Request<hello::HelloRequest>,
    ) -> Result<tonic::Response<hello::HelloReply>, tonic::Status> {
        Ok(tonic::Response::new(hello::HelloReply {
            message: format!("Hello, {}!", request.into_inner().name),
        }))
    }
}

/// The running service: its addresses, and the token that stops it.
pub struct App {
    pub http: SocketAddr,
    pub grpc: SocketAddr,
    pub lines: SocketAddr,
    pub stop: CancellationToken,
}

/// Starts the HTTP API, the gRPC service and a line-echo server on
/// loopback ports; all stop when `App::stop` is cancelled.
pub async fn start(db: Db) -> std::io::Result<App> {
    let stop = CancellationToken::new();

    let http_listener = TcpListener::bind("127.0.0.1:0").await?;
    let http = http_listener.local_addr()?;
    let until = stop.clone();
    tokio::spawn(async move {
        axum::serve(http_listener, router(db))
            .with_graceful_shutdown(async move { until.cancelled().await })
            .await
            .unwrap();
    });

    let grpc_listener = TcpListener::bind("127.0.0.1:0").await?;
    let grpc = grpc_listener.local_addr()?;
    let until = stop.clone();
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(hello::greeter_server::GreeterServer::new(Greeter))
            .serve_with_incoming_shutdown(
                tonic::transport::server::TcpIncoming::from_listener(grpc_listener, true, None)
                    .unwrap(),
                async move { until.cancelled().await },
            )
            .await
            .unwrap();
    });

    let lines_listener = TcpListener::bind("127.0.0.1:0").await?;
    let lines = lines_listener.local_addr()?;
    let until = stop.clone();
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = until.cancelled() => return,
                accepted = lines_listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            tokio::spawn(async move {
                let mut framed = Framed::new(stream, LinesCodec::new());
                while let Some(Ok(line)) = framed.next().await {
                    if framed.send(line.to_uppercase()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });

    Ok(App {
        http,
        grpc,
        lines,
        stop,
    })
}

/// What one check of the service saw.
pub type Check = Result<(), String>;

fn expect<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Check {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

/// `/hello` over reqwest.
pub async fn check_hello(app: &App) -> Check {
    let body = reqwest::get(format!("http://{}/hello", app.http))
        .await
        .map_err(|e| e.to_string())?
        .text()
        .await
        .map_err(|e| e.to_string())?;
    expect("/hello", body.as_str(), "Hello, World!")
}

/// `/users/7` over reqwest: a row read through sqlx.
pub async fn check_user(app: &App) -> Check {
    let user: User = reqwest::get(format!("http://{}/users/7", app.http))
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    expect(
        "/users/7",
        user,
        User {
            id: 7,
            name: "user-7".into(),
        },
    )
}

/// `/slow` is cut by the timeout layer at 200 ms (408), long before its
/// 5 s sleep ends.
pub async fn check_timeout(app: &App) -> Check {
    let start = Instant::now();
    let status = reqwest::get(format!("http://{}/slow", app.http))
        .await
        .map_err(|e| e.to_string())?
        .status();
    expect("/slow status", status.as_u16(), 408)?;
    let took = start.elapsed();
    if took > Duration::from_secs(2) {
        return Err(format!(
            "/slow answered after {took:?}, the timeout is 200 ms"
        ));
    }
    Ok(())
}

/// `/blocking`: a computation on the blocking pool.
pub async fn check_blocking(app: &App) -> Check {
    let body = reqwest::get(format!("http://{}/blocking", app.http))
        .await
        .map_err(|e| e.to_string())?
        .text()
        .await
        .map_err(|e| e.to_string())?;
    expect("/blocking", body.as_str(), "500500")
}

/// The gRPC service through tonic's client.
pub async fn check_grpc(app: &App) -> Check {
    let mut client = hello::greeter_client::GreeterClient::connect(format!("http://{}", app.grpc))
        .await
        .map_err(|e| e.to_string())?;
    let reply = client
        .say_hello(hello::HelloRequest {
            name: "weft".into(),
        })
        .await
        .map_err(|e| e.to_string())?;
    expect(
        "SayHello",
        reply.into_inner().message.as_str(),
        "Hello, weft!",
    )
}

/// Two lines through the line-echo server, framed by tokio-util's codec.
pub async fn check_codec(app: &App) -> Check {
    let stream = TcpStream::connect(app.lines)
        .await
        .map_err(|e| e.to_string())?;
    let mut framed = Framed::new(stream, LinesCodec::new());
    for line in ["hello", "tokio"] {
        framed.send(line).await.map_err(|e| e.to_string())?;
        let echoed = framed
            .next()
            .await
            .ok_or("the server hung up")?
            .map_err(|e| e.to_string())?;
        expect("echoed line", echoed, line.to_uppercase())?;
    }
    Ok(())
}

/// A child process: `echo`'s output, and a `sleep` killed early.
pub async fn check_process() -> Check {
    let output = tokio::process::Command::new("echo")
        .arg("from a child")
        .output()
        .await
        .map_err(|e| e.to_string())?;
    expect(
        "echo's output",
        output.stdout.as_slice(),
        b"from a child\n".as_slice(),
    )?;
    let mut child = tokio::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    tokio::select! {
        _ = child.wait() => return Err("sleep 30 ended by itself".into()),
        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
    }
    child.kill().await.map_err(|e| e.to_string())?;
    if start.elapsed() > Duration::from_secs(5) {
        return Err("killing the child took over 5 s".into());
    }
    Ok(())
}

/// A `CancellationToken` stops a task waiting on a long sleep.
pub async fn check_cancel() -> Check {
    let token = CancellationToken::new();
    let waiter = tokio::spawn({
        let token = token.clone();
        async move {
            tokio::select! {
                _ = token.cancelled() => "cancelled",
                _ = tokio::time::sleep(Duration::from_secs(30)) => "slept",
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    token.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .map_err(|_| "the cancelled task did not end".to_string())?
        .map_err(|e| e.to_string())?;
    expect("waiter", outcome, "cancelled")
}

/// Every check, by name, against a running service.
pub async fn run_checks(app: &App) -> Vec<(&'static str, Check)> {
    vec![
        ("hello", check_hello(app).await),
        ("user", check_user(app).await),
        ("timeout", check_timeout(app).await),
        ("blocking", check_blocking(app).await),
        ("grpc", check_grpc(app).await),
        ("codec", check_codec(app).await),
        ("process", check_process().await),
        ("cancel", check_cancel().await),
    ]
}

/// The names of this process's threads (`/proc/self/task/*/comm`).
pub fn thread_names() -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            if let Ok(name) = std::fs::read_to_string(task.path().join("comm")) {
                names.push(name.trim().to_owned());
            }
        }
    }
    names
}

/// Which runtime's threads run this process: "tokio" (tokio's workers,
/// named `tokio-rt-worker` or `tokio-runtime-w…`, and no weft thread), "weft" (weft's, and no
/// tokio runtime thread), or a description of a mix.
pub fn runtime_seen() -> String {
    let names = thread_names();
    let tokio = names
        .iter()
        .filter(|n| n.starts_with("tokio-rt") || n.starts_with("tokio-runtime"))
        .count();
    let weft = names.iter().filter(|n| n.starts_with("weft")).count();
    match (tokio, weft) {
        (t, 0) if t > 0 => "tokio".into(),
        (0, w) if w > 0 => "weft".into(),
        _ => format!("{tokio} tokio and {weft} weft threads: {names:?}"),
    }
}
