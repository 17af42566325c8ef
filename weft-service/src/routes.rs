//! The `Router` both runtimes serve, and its handlers.
//!
//! Every error is JSON, `{"error": "..."}`, with its status: 400 for a
//! malformed request, 404 for an unknown user or route, 422 for a user
//! that fails validation, 503 while the database is unavailable, 500 for
//! anything else.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::db::seed::USERS;
use crate::db::{Db, DbError, User};
use crate::fortunes;
use crate::report::{self, Report};
use crate::rt::Rt;

/// Rows a report reads.
const REPORT_ROWS: i64 = 1_000;
/// A report's CPU budget when `ms` is not given, and the largest allowed.
const REPORT_DEFAULT_MS: u64 = 50;
const REPORT_MAX_MS: u64 = 10_000;

#[derive(Clone)]
pub struct App {
    pub rt: Rt,
    pub db: Arc<Db>,
    pub reports: Arc<Reports>,
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
        .route("/metrics", get(get_metrics));
    let router = match app.rt {
        Rt::Weft => router.route("/debug/tasks", get(debug_tasks)),
        Rt::Tokio => router,
    };
    router.fallback(not_found).with_state(app)
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
