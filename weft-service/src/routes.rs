//! The `Router` both runtimes serve, and its handlers.
//!
//! Every error is JSON, `{"error": "..."}`, with its status: 400 for a
//! malformed request, 404 for an unknown user or route, 422 for a user
//! that fails validation, 503 while the database is unavailable, 500 for
//! anything else.
//!
//! TechEmpower's test types (`/json`, `/plaintext`, `/db`, `/queries`,
//! `/updates`, `/cached-queries`, `/fortunes`) answer as its verifier
//! requires: a bad count (`0`, `foo`, empty, missing) is clamped to 1 to
//! 500, never an error. Every response the router makes carries
//! `Server: weft-service` (hyper adds `Date`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::middleware::map_response;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

use crate::db::seed::{USERS, WORLDS};
use crate::db::{Db, DbError, User, World};
use crate::fortunes;
use crate::report::{self, Report};
use crate::rt::Rt;

/// Rows a report reads.
const REPORT_ROWS: i64 = 1_000;
/// A report's CPU budget when `ms` is not given, and the largest allowed.
const REPORT_DEFAULT_MS: u64 = 50;
const REPORT_MAX_MS: u64 = 10_000;

/// The `Server` header of every response.
pub const SERVER: &str = "weft-service";

/// The most rows `/queries`, `/updates` and `/cached-queries` answer.
const MAX_ROWS: usize = 500;

#[derive(Clone)]
pub struct App {
    pub rt: Rt,
    pub db: Arc<Db>,
    pub reports: Arc<Reports>,
    pub world_cache: Arc<WorldCache>,
}

/// `/cached-queries`' in-process copy of the `World` table: loaded when
/// the service starts (or, if the database was down then, by the first
/// request that finds it up), then never read from the database again.
#[derive(Debug, Default)]
pub struct WorldCache(OnceCell<Box<[World]>>);

impl WorldCache {
    /// The cached rows, loading them first if they are not yet.
    pub async fn rows(&self, db: &Db) -> Result<&[World], DbError> {
        let rows = self
            .0
            .get_or_try_init(|| async { Ok::<_, DbError>(db.all_worlds().await?.into()) })
            .await?;
        Ok(rows)
    }

    pub fn is_loaded(&self) -> bool {
        self.0.initialized()
    }
}

/// The analytic requests: how many are running, how many have finished.
#[derive(Debug, Default)]
pub struct Reports {
    in_flight: AtomicU64,
    done: AtomicU64,
}

/// Counts one report in flight until dropped (answered, failed or cancelled).
struct InFlight<'a>(&'a Reports);

impl<'a> InFlight<'a> {
    fn enter(reports: &'a Reports) -> InFlight<'a> {
        reports.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(reports)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.done.fetch_add(1, Ordering::Relaxed);
    }
}

pub fn router(app: App) -> Router {
    let router = Router::new()
        .route("/users/{id}", get(get_user))
        .route("/users", post(create_user))
        .route("/fortunes", get(get_fortunes))
        .route("/report", get(get_report))
        .route("/metrics", get(get_metrics))
        .route("/json", get(get_json))
        .route("/plaintext", get(get_plaintext))
        .route("/db", get(get_db))
        .route("/queries", get(get_queries))
        .route("/updates", get(get_updates))
        .route("/cached-queries", get(get_cached_queries));
    let router = match app.rt {
        Rt::Weft => router.route("/debug/tasks", get(debug_tasks)),
        Rt::Tokio => router,
    };
    router
        .fallback(not_found)
        .layer(map_response(add_server_header))
        .with_state(app)
}

/// `Server: weft-service`, on every response of the router (the
/// fallback's and the errors' too).
async fn add_server_header(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::SERVER, HeaderValue::from_static(SERVER));
    response
}

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// TechEmpower's json test: the object serialised for each request.
async fn get_json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

/// TechEmpower's plaintext test, as `text/plain` (no charset).
async fn get_plaintext() -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))],
        "Hello, World!",
    )
        .into_response()
}

/// The row count of `/queries`, `/updates` (`queries=N`) and
/// `/cached-queries` (`count=N`), as TechEmpower requires it: an integer
/// clamped to 1 to 500; anything else (missing, empty, not a number) is 1,
/// and a number of digits too large for an `i64` is 500.
fn row_count(params: &HashMap<String, String>, name: &str) -> usize {
    let Some(value) = params.get(name) else {
        return 1;
    };
    match value.parse::<i64>() {
        Ok(n) => n.clamp(1, MAX_ROWS as i64) as usize,
        Err(_) => {
            let digits = value.strip_prefix('+').unwrap_or(value);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                MAX_ROWS
            } else {
                1
            }
        }
    }
}

fn random_ids(count: usize) -> Vec<i32> {
    (0..count).map(|_| fastrand::i32(1..=WORLDS)).collect()
}

/// TechEmpower's db test: one random `World` row.
async fn get_db(State(app): State<App>) -> Result<Json<World>, ApiError> {
    let worlds = app.db.worlds(random_ids(1)).await?;
    let world = worlds
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "no World row"))?;
    Ok(Json(world))
}

/// TechEmpower's queries test: `queries` random rows, one query each.
async fn get_queries(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Vec<World>>, ApiError> {
    let ids = random_ids(row_count(&params, "queries"));
    Ok(Json(app.db.worlds(ids).await?))
}

/// TechEmpower's updates test: `queries` random rows, each read, given a
/// new random number and written back; the rows as written.
async fn get_updates(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Vec<World>>, ApiError> {
    let ids = random_ids(row_count(&params, "queries"));
    Ok(Json(app.db.update_worlds(ids).await?))
}

/// TechEmpower's cached-queries test: `count` random rows from the
/// in-process cache, no database query once it is loaded.
async fn get_cached_queries(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Vec<World>>, ApiError> {
    let rows = app.world_cache.rows(&app.db).await?;
    if rows.is_empty() {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the World table is empty",
        ));
    }
    let count = row_count(&params, "count");
    Ok(Json(
        (0..count)
            .map(|_| rows[fastrand::usize(..rows.len())])
            .collect(),
    ))
}

/// An error response: the status and `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, Json(body)).into_response()
    }
}

impl From<DbError> for ApiError {
    fn from(error: DbError) -> ApiError {
        match error {
            DbError::Unavailable(why) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("database unavailable: {why}"),
            ),
            DbError::Failed(why) => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("database error: {why}"),
            ),
        }
    }
}

async fn get_user(State(app): State<App>, Path(id): Path<String>) -> Result<Json<User>, ApiError> {
    let Ok(id) = id.parse::<i64>() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("user id must be an integer, not {id:?}"),
        ));
    };
    match app.db.user(id).await? {
        Some(user) => Ok(Json(user)),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no user with id {id}"),
        )),
    }
}

#[derive(Deserialize)]
struct NewUser {
    name: String,
    email: String,
}

/// The body is read as JSON whatever its `Content-Type`: malformed JSON is
/// 400, a missing or mistyped field or an invalid value 422.
async fn create_user(State(app): State<App>, body: Bytes) -> Result<Response, ApiError> {
    let new: NewUser = serde_json::from_slice(&body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("invalid user: {e}"),
        ),
        _ => ApiError::new(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")),
    })?;
    let name = new.name.trim();
    let email = new.email.trim();
    let invalid = |why: &str| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why);
    if name.is_empty() || name.len() > 200 {
        return Err(invalid("name must be 1 to 200 bytes"));
    }
    if email.len() > 254
        || !email
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
    {
        return Err(invalid(
            "email must look like local@domain (at most 254 bytes)",
        ));
    }
    let user = app
        .db
        .insert_user(name.to_owned(), email.to_owned())
        .await?;
    let location = format!("/users/{}", user.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(user),
    )
        .into_response())
}

async fn get_fortunes(State(app): State<App>) -> Result<Html<String>, ApiError> {
    Ok(Html(fortunes::page(app.db.fortunes().await?)))
}

/// Reads `REPORT_ROWS` users from a random id, then computes for `ms`
/// milliseconds of CPU in this same poll.
async fn get_report(
    State(app): State<App>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Report>, ApiError> {
    let ms = match params.get("ms") {
        None => REPORT_DEFAULT_MS,
        Some(ms) => ms
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms <= REPORT_MAX_MS)
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("ms must be an integer from 0 to {REPORT_MAX_MS}, not {ms:?}"),
                )
            })?,
    };
    let _in_flight = InFlight::enter(&app.reports);
    let first = fastrand::i64(1..=USERS - REPORT_ROWS + 1);
    let rows = app.db.users_from(first, REPORT_ROWS).await?;
    Ok(Json(report::compute(&rows, Duration::from_millis(ms))))
}

/// Prometheus text: the runtime's metrics (all of weft's `RuntimeMetrics`;
/// tokio's few stable ones) and which runtime and database serve.
async fn get_metrics(State(app): State<App>) -> impl IntoResponse {
    let mut text = match app.rt {
        Rt::Weft => weft::runtime::Handle::current().metrics().to_prometheus(),
        Rt::Tokio => tokio_metrics(),
    };
    let info = format!(
        "{{runtime=\"{}\",database=\"{}\"}} 1",
        app.rt.name(),
        app.db.kind()
    );
    let reports = &app.reports;
    for (name, kind, help, value) in [
        (
            "weft_service_info",
            "gauge",
            "The runtime and database serving.",
            info,
        ),
        (
            "weft_service_db_connections",
            "gauge",
            "The database pool's size: the most database calls at once.",
            format!(" {}", app.db.connections()),
        ),
        (
            "weft_service_db_calls_in_flight",
            "gauge",
            "Database calls under way (SQLite: on the blocking pool).",
            format!(" {}", app.db.calls().now()),
        ),
        (
            "weft_service_db_calls_max",
            "gauge",
            "The most database calls there have been under way at once.",
            format!(" {}", app.db.calls().max()),
        ),
        (
            "weft_service_db_calls_total",
            "counter",
            "Database calls made (SQLite: blocking-pool calls; PostgreSQL: pipelined batches of queries).",
            format!(" {}", app.db.calls().total()),
        ),
        (
            "weft_service_world_selects_total",
            "counter",
            "World rows read by /db, /queries and /updates, one SELECT statement each.",
            format!(" {}", app.db.world_statements().selects()),
        ),
        (
            "weft_service_world_updates_total",
            "counter",
            "World rows written by /updates, one UPDATE statement each.",
            format!(" {}", app.db.world_statements().updates()),
        ),
        (
            "weft_service_world_cache_loaded",
            "gauge",
            "1 once /cached-queries' copy of the World table is loaded.",
            format!(" {}", u8::from(app.world_cache.is_loaded())),
        ),
        (
            "weft_service_reports_in_flight",
            "gauge",
            "/report requests being served.",
            format!(" {}", reports.in_flight.load(Ordering::Relaxed)),
        ),
        (
            "weft_service_reports_total",
            "counter",
            "/report requests finished (answered or not).",
            format!(" {}", reports.done.load(Ordering::Relaxed)),
        ),
    ] {
        text.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{value}\n"
        ));
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
}

fn tokio_metrics() -> String {
    let metrics = tokio::runtime::Handle::current().metrics();
    let gauges = [
        ("tokio_workers", "Worker threads.", metrics.num_workers()),
        (
            "tokio_alive_tasks",
            "Tasks alive.",
            metrics.num_alive_tasks(),
        ),
        (
            "tokio_global_queue_depth",
            "Tasks in the global queue.",
            metrics.global_queue_depth(),
        ),
    ];
    let mut text = String::new();
    for (name, help, value) in gauges {
        text.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
        ));
    }
    text
}

/// A dump of the runtime's tasks, as text (`weft::runtime::Dump`'s table:
/// state, how long, id, lane, polls, busy time, name, spawn location).
async fn debug_tasks() -> Response {
    let dump = weft::runtime::Handle::current().dump();
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        dump.to_string(),
    )
        .into_response()
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no route for {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_count_is_clamped_never_refused() {
        let count = |value: Option<&str>| {
            let params: HashMap<String, String> = value
                .map(|v| ("queries".to_owned(), v.to_owned()))
                .into_iter()
                .collect();
            row_count(&params, "queries")
        };
        for (value, rows) in [
            (None, 1),
            (Some(""), 1),
            (Some("0"), 1),
            (Some("-1"), 1),
            (Some("-99999999999999999999"), 1),
            (Some("foo"), 1),
            (Some("2.5"), 1),
            (Some(" 7"), 1),
            (Some("1"), 1),
            (Some("+7"), 7),
            (Some("20"), 20),
            (Some("500"), 500),
            (Some("501"), 500),
            (Some("99999999999999999999"), 500),
        ] {
            assert_eq!(count(value), rows, "{value:?}");
        }
        let other: HashMap<String, String> = [("count".to_owned(), "9".to_owned())].into();
        assert_eq!(row_count(&other, "queries"), 1);
        assert_eq!(row_count(&other, "count"), 9);
    }
}
