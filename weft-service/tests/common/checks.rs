//! What every endpoint must answer, as async checks on a running service.
//! The SQLite tests run each on a service of its own; the PostgreSQL
//! tests run them all on one.

use std::time::Duration;

use super::{Service, techempower, until_status};

/// TechEmpower's fortunes, as its specification gives them.
const FORTUNES: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. — Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "フレームワークのベンチマーク",
];

pub async fn all(service: &Service, database: &str) {
    users_get(service).await;
    users_post(service).await;
    fortunes(service).await;
    report(service).await;
    metrics(service, database).await;
    debug_tasks(service).await;
    unknown_route(service).await;
    concurrent(service).await;
    techempower::all(service).await;
}

pub async fn users_get(service: &Service) {
    let user = service.get("/users/42").await;
    assert_eq!(user.status, 200, "{user:?}");
    assert_eq!(user.content_type, "application/json");
    let json = user.json();
    assert_eq!(json["id"], 42);
    assert_eq!(json["email"], "user42@example.com");
    assert!(json["name"].as_str().is_some_and(|name| !name.is_empty()));
    assert_eq!(service.get("/users/10000").await.status, 200);

    for unknown in ["/users/0", "/users/-3", "/users/9223372036854775807"] {
        let missing = service.get(unknown).await;
        assert_eq!(missing.status, 404, "{unknown}: {missing:?}");
        assert!(missing.error().contains("no user"), "{missing:?}");
    }
    for bad in ["/users/abc", "/users/1.5", "/users/99999999999999999999"] {
        let malformed = service.get(bad).await;
        assert_eq!(malformed.status, 400, "{bad}: {malformed:?}");
        assert_eq!(malformed.content_type, "application/json");
        assert!(malformed.error().contains("integer"), "{malformed:?}");
    }
}

pub async fn users_post(service: &Service) {
    let created = service
        .post(
            "/users",
            r#"{"name":"Frances Allen","email":"fran@example.com"}"#,
        )
        .await;
    assert_eq!(created.status, 201, "{created:?}");
    let id = created.json()["id"].as_i64().expect("an id");
    assert!(id > 10_000, "new ids follow the seeded ones: {id}");
    let location = created.location.clone().expect("a Location header");
    assert_eq!(location, format!("/users/{id}"));
    let fetched = service.get(&location).await;
    assert_eq!(fetched.status, 200);
    assert_eq!(fetched.json()["name"], "Frances Allen");
    assert_eq!(fetched.json()["email"], "fran@example.com");

    for (body, status, reason) in [
        (r#"{"name":"x","#, 400, "malformed JSON"),
        ("not json", 400, "malformed JSON"),
        ("", 400, "malformed JSON"),
        (r#"{"name":"x"}"#, 422, "missing field `email`"),
        (r#"{"email":"x@y"}"#, 422, "missing field `name`"),
        (r#"{"name":7,"email":"x@y"}"#, 422, "invalid type"),
        (r#"{"name":" ","email":"x@y"}"#, 422, "name"),
        (r#"{"name":"x","email":"nobody"}"#, 422, "email"),
    ] {
        let refused = service.post("/users", body).await;
        assert_eq!(refused.status, status, "{body}: {refused:?}");
        assert!(refused.error().contains(reason), "{body}: {refused:?}");
        assert!(refused.location.is_none());
    }
}

pub async fn fortunes(service: &Service) {
    let page = service.get("/fortunes").await;
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    let html = &page.body;
    assert!(html.starts_with("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"), "{html}");
    assert!(html.ends_with("</table></body></html>"), "{html}");
    assert!(!html.contains("<script>"), "unescaped: {html}");
    assert!(html.contains(
        "<tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;</td></tr>"
    ));
    assert!(html.contains("<tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr>"));

    let rows: Vec<(u32, String)> = html
        .split("<tr><td>")
        .skip(1)
        .map(|row| {
            let (id, rest) = row.split_once("</td><td>").expect("two cells");
            let message = rest.split_once("</td></tr>").expect("row end").0;
            (id.parse().expect("a numeric id"), unescape(message))
        })
        .collect();
    let mut expected: Vec<(u32, String)> = (1..)
        .zip(FORTUNES.map(str::to_owned))
        .chain([(0, "Additional fortune added at request time.".to_owned())])
        .collect();
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        rows, expected,
        "the 12 rows and the added one, sorted by message"
    );
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

pub async fn report(service: &Service) {
    let report = service.get("/report?ms=30").await;
    assert_eq!(report.status, 200, "{report:?}");
    let json = report.json();
    assert_eq!(json["ms"], 30);
    assert_eq!(json["rows"], 1000);
    assert!(json["cpu_ms"].as_f64().unwrap() >= 30.0, "{json}");
    assert!(json["iterations"].as_u64().unwrap() > 0, "{json}");

    let default = service.get("/report").await;
    assert_eq!(default.status, 200, "{default:?}");
    assert_eq!(default.json()["ms"], 50);
    assert_eq!(service.get("/report?ms=0").await.json()["iterations"], 0);

    for bad in [
        "/report?ms=abc",
        "/report?ms=-1",
        "/report?ms=10001",
        "/report?ms=",
    ] {
        let refused = service.get(bad).await;
        assert_eq!(refused.status, 400, "{bad}: {refused:?}");
        assert!(refused.error().contains("ms must be"), "{refused:?}");
    }
}

pub async fn metrics(service: &Service, database: &str) {
    let metrics = service.get("/metrics").await;
    assert_eq!(metrics.status, 200, "{metrics:?}");
    assert!(
        metrics.content_type.starts_with("text/plain"),
        "{metrics:?}"
    );
    let text = &metrics.body;
    let runtime_metrics: &[&str] = if service.is_weft() {
        &[
            "# TYPE weft_polls_total counter",
            "weft_threads_started_total{kind=\"worker\"} ",
            "# TYPE weft_threads_ended_total counter",
        ]
    } else {
        &["# TYPE tokio_workers gauge"]
    };
    for metric in runtime_metrics {
        assert!(text.contains(metric), "{metric} missing:\n{text}");
    }
    let info = format!(
        "weft_service_info{{runtime=\"{}\",database=\"{database}\"}} 1",
        service.runtime
    );
    assert!(text.contains(&info), "{text}");
    assert!(text.contains("weft_service_reports_in_flight 0"), "{text}");
}

pub async fn debug_tasks(service: &Service) {
    let tasks = service.get("/debug/tasks").await;
    if service.is_weft() {
        assert_eq!(tasks.status, 200, "{tasks:?}");
        let text = &tasks.body;
        // The service's own named task, idle until a signal, with the
        // file that spawned it; and the header of the table.
        let line = text
            .lines()
            .find(|line| line.contains("shutdown signals"))
            .unwrap_or_else(|| panic!("no signal task in the dump:\n{text}"));
        assert!(line.contains("weft-service/src/serve.rs"), "{line}");
        assert!(line.starts_with("idle"), "{line}");
        assert!(text.starts_with("STATE"), "{text}");
        // The request's own connection task is in a poll: running.
        assert!(text.contains("running@"), "{text}");
    } else {
        assert_eq!(tasks.status, 404, "{tasks:?}");
    }
}

pub async fn unknown_route(service: &Service) {
    let missing = service.get("/no/such/route").await;
    assert_eq!(missing.status, 404, "{missing:?}");
    assert!(missing.error().contains("/no/such/route"));
}

/// 200 requests at once (200 connections): users and fortunes.
/// The value of the gauge `name` in `/metrics`.
pub async fn gauge(service: &Service, name: &str) -> u64 {
    let metrics = service.get("/metrics").await;
    assert_eq!(metrics.status, 200, "{metrics:?}");
    let prefix = format!("{name} ");
    metrics
        .body
        .lines()
        .find_map(|line| line.strip_prefix(&prefix)?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{}", metrics.body))
}

/// 200 concurrent point reads on a service started with
/// `--db-connections connections`: all answered, and never more than
/// `connections` database calls under way at once (the service counts
/// them from before the blocking task's spawn to its end).
pub async fn db_calls_bounded(service: &Service, connections: u64) {
    assert_eq!(
        gauge(service, "weft_service_db_connections").await,
        connections
    );
    let requests: Vec<_> = (1..=200u32)
        .map(|i| {
            let client = service.client.clone();
            let url = format!("{}/users/{i}", service.base);
            tokio::spawn(async move {
                let response = client.get(&url).send().await.expect(&url);
                (url, response.status().as_u16())
            })
        })
        .collect();
    for request in requests {
        let (url, status) = request.await.unwrap();
        assert_eq!(status, 200, "{url}");
    }
    let max = gauge(service, "weft_service_db_calls_max").await;
    assert!(
        (1..=connections).contains(&max),
        "{} database calls at once, over --db-connections {connections}",
        max
    );
    assert_eq!(gauge(service, "weft_service_db_calls_in_flight").await, 0);
}

pub async fn concurrent(service: &Service) {
    let requests: Vec<_> = (1..=200u32)
        .map(|i| {
            let client = service.client.clone();
            let path = if i % 4 == 0 {
                "/fortunes".to_owned()
            } else {
                format!("/users/{i}")
            };
            let url = format!("{}{path}", service.base);
            tokio::spawn(async move {
                let response = client.get(&url).send().await.expect(&url);
                let status = response.status().as_u16();
                let body = response.text().await.expect(&url);
                (path, status, body)
            })
        })
        .collect();
    for request in requests {
        let (path, status, body) = request.await.unwrap();
        assert_eq!(status, 200, "{path}: {body}");
        if let Some(id) = path.strip_prefix("/users/") {
            assert!(body.contains(&format!("\"id\":{id},")), "{path}: {body}");
        } else {
            assert!(
                body.contains("フレームワークのベンチマーク"),
                "{path}: {body}"
            );
        }
    }
}

/// `SIGTERM` while `reports` long reports run: all are answered, then
/// the process exits 0. Runs on 4 workers so `/metrics` can say when every
/// report is inside its handler. (On PostgreSQL the tests send one: two
/// reports' queries may be served one after the other, when the runtime
/// leaves a connection's task queued behind the first report's 1.5 s
/// poll, and then two never run at once.)
pub async fn shutdown_in_flight(runtime: &str, extra: &[&str], reports: usize) {
    let mut args = vec!["--workers", "4"];
    args.extend_from_slice(extra);
    let service = Service::start(runtime, &args);
    let requests: Vec<_> = (0..reports)
        .map(|_| {
            let request = service
                .client
                .get(format!("{}/report?ms=1500", service.base));
            tokio::spawn(async move {
                let response = request.send().await.expect("the report is answered");
                (response.status().as_u16(), response.text().await.unwrap())
            })
        })
        .collect();
    let line = format!("weft_service_reports_in_flight {reports}");
    let seen = until_metric(&service, &line).await;
    assert!(seen.is_none(), "{runtime}: never {line}; last: {seen:?}");
    service.signal(libc::SIGTERM);
    for request in requests {
        let (status, body) = request.await.unwrap();
        assert_eq!(status, 200, "{runtime}: {body}");
        assert!(body.contains("\"ms\":1500"), "{runtime}: {body}");
    }
    let status = tokio::task::spawn_blocking(move || service.wait(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0), "{runtime}: {status}");
}

/// `SIGINT` on an idle service: exit 0.
pub async fn interrupt_idle(runtime: &str) {
    let service = Service::start(runtime, &[]);
    assert_eq!(service.get("/users/1").await.status, 200);
    service.signal(libc::SIGINT);
    let status = tokio::task::spawn_blocking(move || service.wait(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
}

/// Polls `/metrics` until it has `line`: `None` once it has, else the
/// last value of that metric seen.
async fn until_metric(service: &Service, line: &str) -> Option<String> {
    let name = line.split(' ').next().unwrap_or(line);
    let mut last = None;
    for _ in 0..400 {
        let metrics = until_status(service, "/metrics", 200, Duration::from_secs(10)).await;
        if metrics.body.lines().any(|l| l == line) {
            return None;
        }
        last = metrics
            .body
            .lines()
            .find(|l| l.starts_with(name) && l.as_bytes().get(name.len()) == Some(&b' '))
            .map(str::to_owned);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Some(last.unwrap_or_else(|| "absent".to_owned()))
}
