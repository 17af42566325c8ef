//! TechEmpower's seven test types (json, plaintext, db, queries, updates,
//! cached-queries, fortunes) checked by the rules of its verifier, as
//! async checks on a running service: the headers of every response, the
//! bodies and their shapes, the clamping of the row count, the updates
//! written, the cache served without a query, and one statement per row.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::time::{Duration, SystemTime};

use super::{Answer, Service, checks};

/// Rows in `World`, ids 1 to `WORLDS`, each `randomNumber` 1 to `WORLDS`.
pub const WORLDS: i64 = 10_000;

/// Every check here, on one service.
pub async fn all(service: &Service) {
    headers_on_every_response(service).await;
    json_and_plaintext(service).await;
    db_row(service).await;
    queries_clamped(service).await;
    updates_clamped(service).await;
    cached_queries_clamped(service).await;
    updates_written(service).await;
    cached_queries_without_a_query(service).await;
    plaintext_pipelined(service).await;
    date_changes(service, Duration::from_millis(1_100)).await;
}

/// TechEmpower's headers on `answer`: `Server`, a `Date` in the HTTP date
/// format (IMF-fixdate) close to now, a `Content-Type`, and a
/// `Content-Length` or `Transfer-Encoding`.
pub fn assert_headers(what: &str, answer: &Answer) -> SystemTime {
    let headers = &answer.headers;
    let get = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(
        get("server").as_deref(),
        Some("weft-service"),
        "{what}: Server: {answer:?}"
    );
    let date = get("date").unwrap_or_else(|| panic!("{what}: no Date: {answer:?}"));
    let when = httpdate::parse_http_date(&date)
        .unwrap_or_else(|e| panic!("{what}: Date {date:?} is not an HTTP date: {e}"));
    assert_eq!(
        httpdate::fmt_http_date(when),
        date,
        "{what}: Date in the IMF-fixdate form"
    );
    let now = SystemTime::now();
    let skew = now.duration_since(when).unwrap_or_else(|e| e.duration());
    assert!(
        skew < Duration::from_secs(5),
        "{what}: Date {date} is {skew:?} off"
    );
    assert!(
        get("content-type").is_some_and(|t| !t.is_empty()),
        "{what}: no Content-Type: {answer:?}"
    );
    assert!(
        headers.contains_key("content-length") || headers.contains_key("transfer-encoding"),
        "{what}: neither Content-Length nor Transfer-Encoding: {answer:?}"
    );
    when
}

/// Every endpoint, the TechEmpower ones and the others, answers and errors
/// alike, carries TechEmpower's headers; each TechEmpower type has its
/// content type.
pub async fn headers_on_every_response(service: &Service) {
    for (path, status, content_type) in [
        ("/json", 200, Some("application/json")),
        ("/plaintext", 200, Some("text/plain")),
        ("/db", 200, Some("application/json")),
        ("/queries?queries=3", 200, Some("application/json")),
        ("/updates?queries=3", 200, Some("application/json")),
        ("/cached-queries?count=3", 200, Some("application/json")),
        ("/fortunes", 200, Some("text/html; charset=utf-8")),
        ("/users/1", 200, Some("application/json")),
        ("/users/0", 404, Some("application/json")),
        ("/users/abc", 400, Some("application/json")),
        ("/report?ms=1", 200, Some("application/json")),
        ("/report?ms=abc", 400, Some("application/json")),
        ("/metrics", 200, None),
        ("/no/such/route", 404, Some("application/json")),
    ] {
        let answer = service.get(path).await;
        assert_eq!(answer.status, status, "{path}: {answer:?}");
        if let Some(content_type) = content_type {
            assert_eq!(answer.content_type, content_type, "{path}");
        }
        assert_headers(path, &answer);
    }
    let tasks = service.get("/debug/tasks").await;
    assert_eq!(tasks.status, if service.is_weft() { 200 } else { 404 });
    assert_headers("/debug/tasks", &tasks);
    for (body, status) in [
        (r#"{"name":"Headers","email":"h@example.com"}"#, 201),
        ("not json", 400),
        (r#"{"name":"x","email":"nobody"}"#, 422),
    ] {
        let answer = service.post("/users", body).await;
        assert_eq!(answer.status, status, "POST /users {body}: {answer:?}");
        assert_headers("POST /users", &answer);
    }
    let wrong_method = service.post("/json", "{}").await;
    assert_eq!(wrong_method.status, 405, "{wrong_method:?}");
    assert_eq!(
        wrong_method
            .headers
            .get("server")
            .map(|v| v.to_str().unwrap()),
        Some("weft-service")
    );
}

pub async fn json_and_plaintext(service: &Service) {
    let json = service.get("/json").await;
    assert_eq!(json.status, 200, "{json:?}");
    assert_eq!(json.content_type, "application/json");
    assert_eq!(json.json(), serde_json::json!({"message": "Hello, World!"}));
    assert_eq!(json.body, r#"{"message":"Hello, World!"}"#);
    let text = service.get("/plaintext").await;
    assert_eq!(text.status, 200, "{text:?}");
    assert_eq!(text.content_type, "text/plain");
    assert_eq!(text.body, "Hello, World!");
}

/// `value` is a `World` row: exactly `id` and `randomNumber`, integers
/// from 1 to 10,000. Returns them.
pub fn assert_world(what: &str, value: &serde_json::Value) -> (i64, i64) {
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {value}"));
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["id", "randomNumber"], "{what}: {value}");
    let field = |name: &str| {
        let n = object[name]
            .as_i64()
            .unwrap_or_else(|| panic!("{what}: {name} not an integer: {value}"));
        assert!(
            (1..=WORLDS).contains(&n),
            "{what}: {name} out of range: {value}"
        );
        n
    };
    (field("id"), field("randomNumber"))
}

/// `answer` is a 200 JSON array of `rows` `World` rows; returns them.
pub fn assert_worlds(what: &str, answer: &Answer, rows: usize) -> Vec<(i64, i64)> {
    assert_eq!(answer.status, 200, "{what}: {answer:?}");
    assert_eq!(answer.content_type, "application/json", "{what}");
    let json = answer.json();
    let array = json
        .as_array()
        .unwrap_or_else(|| panic!("{what}: not an array: {}", answer.body));
    assert_eq!(array.len(), rows, "{what}: rows");
    array.iter().map(|row| assert_world(what, row)).collect()
}

/// `/db`: one object (not an array), a random row each time.
pub async fn db_row(service: &Service) {
    let mut ids = HashSet::new();
    for _ in 0..30 {
        let answer = service.get("/db").await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.content_type, "application/json");
        ids.insert(assert_world("/db", &answer.json()).0);
    }
    assert!(ids.len() > 1, "30 requests, always the same row: {ids:?}");
}

/// The row count's values and what each must give: missing, empty, not a
/// number, below 1 are 1; above 500 is 500.
const COUNTS: [(&str, usize); 13] = [
    ("", 1),
    ("=", 1),
    ("=0", 1),
    ("=foo", 1),
    ("=-5", 1),
    ("=1", 1),
    ("=13", 13),
    ("=500", 500),
    ("=501", 500),
    ("=99999999999999999999", 500),
    ("=2.5", 1),
    ("=%FF", 1),
    ("=%32%30", 20),
];

async fn clamped(service: &Service, path: &str, name: &str, counts: &[(&str, usize)]) {
    for (value, rows) in counts {
        let url = if value.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{name}{value}")
        };
        let answer = service.get(&url).await;
        let worlds = assert_worlds(&url, &answer, *rows);
        let distinct: HashSet<i64> = worlds.iter().map(|w| w.0).collect();
        if *rows >= 13 {
            assert!(
                distinct.len() > 1,
                "{url}: random rows, not one: {distinct:?}"
            );
        }
    }
    // Another parameter than the count is as if it were missing.
    let other = format!("{path}?other=7");
    assert_worlds(&other, &service.get(&other).await, 1);
}

pub async fn queries_clamped(service: &Service) {
    clamped(service, "/queries", "queries", &COUNTS).await;
}

pub async fn updates_clamped(service: &Service) {
    clamped(service, "/updates", "queries", &COUNTS).await;
}

pub async fn cached_queries_clamped(service: &Service) {
    clamped(service, "/cached-queries", "count", &COUNTS).await;
}

/// `/updates?queries=20`: the table before and after differs in exactly
/// the rows answered, each holding the number the answer shows (for an id
/// answered twice, the last), a number other than before.
pub async fn updates_written(service: &Service) {
    let before = service.world_table().await;
    assert_eq!(before.len(), WORLDS as usize, "the seeded World table");
    assert!(
        before.iter().zip(1..).all(|(row, id)| row.0 == id),
        "ids 1 to 10,000"
    );
    assert!(
        before
            .iter()
            .all(|row| (1..=WORLDS as i32).contains(&row.1))
    );
    let answer = service.get("/updates?queries=20").await;
    let rows = assert_worlds("/updates?queries=20", &answer, 20);
    let after = service.world_table().await;
    assert_eq!(after.len(), WORLDS as usize);
    let mut written: HashMap<i64, i64> = HashMap::new();
    let mut answered = HashMap::<i64, usize>::new();
    for (id, number) in &rows {
        written.insert(*id, *number);
        *answered.entry(*id).or_default() += 1;
    }
    for (old, new) in before.iter().zip(&after) {
        let id = i64::from(old.0);
        match written.get(&id) {
            Some(number) => {
                assert_eq!(i64::from(new.1), *number, "row {id} as answered");
                if answered[&id] == 1 {
                    assert_ne!(old.1, new.1, "row {id} given a new number");
                }
            }
            None => assert_eq!(old, new, "row {id} not answered, yet changed"),
        }
    }
}

/// `/cached-queries` makes no database query: the service's database
/// calls and `World` statements stay as they were, and the cache says it
/// is loaded.
pub async fn cached_queries_without_a_query(service: &Service) {
    assert_eq!(
        checks::gauge(service, "weft_service_world_cache_loaded").await,
        1
    );
    let selects = checks::gauge(service, "weft_service_world_selects_total").await;
    let calls = checks::gauge(service, "weft_service_db_calls_total").await;
    for _ in 0..5 {
        let answer = service.get("/cached-queries?count=500").await;
        assert_worlds("/cached-queries?count=500", &answer, 500);
    }
    assert_eq!(
        checks::gauge(service, "weft_service_world_selects_total").await,
        selects
    );
    assert_eq!(
        checks::gauge(service, "weft_service_db_calls_total").await,
        calls,
        "database calls for /cached-queries"
    );
    // The counter does count: one /db is one call.
    assert_eq!(service.get("/db").await.status, 200);
    assert_eq!(
        checks::gauge(service, "weft_service_db_calls_total").await,
        calls + 1
    );
}

/// 16 `GET /plaintext` sent in one write on one connection (HTTP/1.1
/// pipelining, TechEmpower's depth): 16 answers, in order, each complete.
pub async fn plaintext_pipelined(service: &Service) {
    let address = service.address().to_owned();
    let answers = tokio::task::spawn_blocking(move || pipelined(&address, "/plaintext", 16))
        .await
        .unwrap();
    assert_eq!(answers.len(), 16);
    for (head, body) in answers {
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let head = head.to_ascii_lowercase();
        assert!(head.contains("\r\nserver: weft-service\r\n"), "{head}");
        assert!(head.contains("\r\ncontent-type: text/plain\r\n"), "{head}");
        assert!(head.contains("\r\ndate: "), "{head}");
        assert_eq!(body, "Hello, World!");
    }
}

/// Sends `depth` requests for `path` in one write, then reads `depth`
/// answers (each sized by its `Content-Length`): (head, body) each.
pub fn pipelined(address: &str, path: &str, depth: usize) -> Vec<(String, String)> {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: */*\r\n\r\n");
    stream.write_all(request.repeat(depth).as_bytes()).unwrap();
    let mut buffer = Vec::new();
    let mut answers = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    while answers.len() < depth {
        // Take every complete answer in the buffer.
        while let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(buffer[..end + 4].to_vec()).unwrap();
            let length: usize = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().unwrap())
                })
                .unwrap_or_else(|| panic!("no Content-Length: {head}"));
            if buffer.len() < end + 4 + length {
                break;
            }
            let body = String::from_utf8(buffer[end + 4..end + 4 + length].to_vec()).unwrap();
            buffer.drain(..end + 4 + length);
            answers.push((head, body));
        }
        if answers.len() == depth {
            break;
        }
        let n = stream
            .read(&mut chunk)
            .unwrap_or_else(|e| panic!("{} of {depth} answers, then: {e}", answers.len()));
        assert!(n > 0, "closed after {} of {depth} answers", answers.len());
        buffer.extend_from_slice(&chunk[..n]);
    }
    assert!(buffer.is_empty(), "more than {depth} answers");
    answers
}

/// The `Date` of a request `wait` after another is later, by at least
/// `wait` less the header's 1 s resolution.
pub async fn date_changes(service: &Service, wait: Duration) {
    let first = assert_headers("/json", &service.get("/json").await);
    tokio::time::sleep(wait).await;
    let second = assert_headers("/json", &service.get("/json").await);
    let moved = second
        .duration_since(first)
        .unwrap_or_else(|e| panic!("Date went back by {:?}", e.duration()));
    assert!(
        moved + Duration::from_secs(1) > wait && moved > Duration::ZERO,
        "Date moved {moved:?} in {wait:?}"
    );
}

/// TechEmpower's statement count, as the service counts it: `requests`
/// concurrent requests of each type make one `SELECT` per row read and
/// one `UPDATE` per row written, and `/cached-queries` none.
pub async fn statements_per_row(service: &Service, requests: usize) {
    for (path, rows, selects, updates) in [
        ("/db", 1, 1, 0),
        ("/queries?queries=20", 20, 20, 0),
        ("/updates?queries=20", 20, 20, 20),
        ("/cached-queries?count=20", 20, 0, 0),
    ] {
        let select_count = checks::gauge(service, "weft_service_world_selects_total").await;
        let update_count = checks::gauge(service, "weft_service_world_updates_total").await;
        concurrently(service, path, requests, rows).await;
        let selected =
            checks::gauge(service, "weft_service_world_selects_total").await - select_count;
        let updated =
            checks::gauge(service, "weft_service_world_updates_total").await - update_count;
        assert_eq!(
            (selected, updated),
            ((requests * selects) as u64, (requests * updates) as u64),
            "{requests} × {path} on {}: (SELECTs, UPDATEs)",
            service.runtime
        );
    }
}

/// `requests` requests for `path` at once, each answered 200 with `rows`
/// `World` rows (`/db`: one object).
pub async fn concurrently(service: &Service, path: &str, requests: usize, rows: usize) {
    let url = format!("{}{path}", service.base);
    let tasks: Vec<_> = (0..requests)
        .map(|_| {
            let request = service.client.get(&url);
            tokio::spawn(async move {
                let response = request.send().await.expect("an answer");
                let status = response.status().as_u16();
                (status, response.text().await.expect("a body"))
            })
        })
        .collect();
    for task in tasks {
        let (status, body) = task.await.unwrap();
        assert_eq!(status, 200, "{path}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).expect(&body);
        match json.as_array() {
            Some(array) => {
                assert_eq!(array.len(), rows, "{path}");
                for row in array {
                    assert_world(path, row);
                }
            }
            None => {
                assert_eq!(rows, 1, "{path}: {body}");
                assert_world(path, &json);
            }
        }
    }
}
