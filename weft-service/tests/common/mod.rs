//! The tests' harness: the built `weft-service` binary as a child process
//! on `127.0.0.1:0`, and an HTTP client.

#![allow(dead_code)] // each test file uses its own part

pub mod checks;
pub mod techempower;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const RUNTIMES: [&str; 2] = ["weft", "tokio"];

/// A running service; killed on drop if still running.
pub struct Service {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    pub runtime: String,
    pub base: String,
    pub client: reqwest::Client,
    /// The service's stderr, shown when a test fails.
    stderr_log: PathBuf,
    /// Where its SQLite file is (used unless `postgres` is set).
    pub data_dir: PathBuf,
    /// The PostgreSQL URL given with `--database`, if any.
    pub postgres: Option<String>,
}

/// A response: status, content type, `Location`, every header, body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The `error` field of a JSON error body.
    pub fn error(&self) -> String {
        let json = self.json();
        json["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no \"error\" in {self:?}"))
            .to_owned()
    }
}

impl Service {
    /// Starts the binary on `runtime` with 2 workers (unless `extra` says
    /// `--workers`), on SQLite in a fresh directory, plus `extra`
    /// arguments; returns once it has printed its address.
    pub fn start(runtime: &str, extra: &[&str]) -> Service {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let data_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "weft-service-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&data_dir);
        std::fs::create_dir_all(&data_dir).unwrap();
        let stderr_log = data_dir.join("stderr.log");
        let workers: &[&str] = if extra.contains(&"--workers") {
            &[]
        } else {
            &["--workers", "2"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft-service"))
            .args(["--runtime", runtime, "--listen", "127.0.0.1:0"])
            .args(workers)
            .arg("--data-dir")
            .arg(&data_dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_log).unwrap())
            .spawn()
            .expect("spawning weft-service");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut line = String::new();
            let read = stdout.read_line(&mut line);
            let _ = tx.send((read.map(|_| line), ()));
            stdout
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok((Ok(line), ())) => line,
            Ok((Err(e), ())) => panic!("reading weft-service's stdout: {e}"),
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "weft-service --runtime {runtime} printed nothing in 60 s; stderr: {}",
                    read(&stderr_log)
                );
            }
        };
        let stdout = reader.join().unwrap();
        let base = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line {line:?}; stderr: {}", read(&stderr_log)))
            .to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        assert!(!base.ends_with(":0"), "the real port, not 0: {base}");
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let postgres = extra
            .iter()
            .position(|arg| *arg == "--database")
            .and_then(|i| extra.get(i + 1))
            .filter(|url| url.starts_with("postgres"))
            .map(|url| (*url).to_owned());
        Service {
            child,
            _stdout: stdout,
            runtime: runtime.to_owned(),
            base,
            client,
            stderr_log,
            data_dir,
            postgres,
        }
    }

    /// `host:port` of the service.
    pub fn address(&self) -> &str {
        self.base.strip_prefix("http://").unwrap()
    }

    /// The whole `World` table, read from the service's database directly
    /// (not through the service): `(id, randomNumber)` in id order.
    pub async fn world_table(&self) -> Vec<(i32, i32)> {
        const ALL: &str = "SELECT id, randomnumber FROM world ORDER BY id";
        match &self.postgres {
            Some(url) => {
                let client = connect_postgres(url).await;
                let rows = client.query(ALL, &[]).await.unwrap();
                rows.iter().map(|row| (row.get(0), row.get(1))).collect()
            }
            None => {
                let path = self.data_dir.join("weft-service.sqlite3");
                tokio::task::spawn_blocking(move || {
                    let conn = rusqlite::Connection::open(&path).unwrap();
                    conn.busy_timeout(Duration::from_secs(10)).unwrap();
                    let mut all = conn.prepare(ALL).unwrap();
                    all.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap()
                })
                .await
                .unwrap()
            }
        }
    }

    pub fn is_weft(&self) -> bool {
        self.runtime == "weft"
    }

    pub async fn get(&self, path: &str) -> Answer {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path} on {}: {e}", self.runtime));
        answer(response).await
    }

    pub async fn post(&self, path: &str, body: &str) -> Answer {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path} on {}: {e}", self.runtime));
        answer(response).await
    }

    /// Sends `signal` (a `libc::SIG*` number).
    pub fn signal(&self, signal: i32) {
        let pid = self.child.id() as i32;
        // SAFETY: `kill` on our own child's pid; it has not been reaped
        // (`wait` takes `self` by value), so the pid is still its own.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal})");
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait(mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "weft-service --runtime {} still running {limit:?} after the signal",
                self.runtime
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "weft-service --runtime {}'s stderr:\n{}",
                self.runtime,
                read(&self.stderr_log)
            );
        }
    }
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

/// A line on the test process's stderr that the test harness does not
/// capture (it captures `eprintln!`), for a test that skips.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

async fn answer(response: reqwest::Response) -> Answer {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let status = response.status().as_u16();
    let content_type = header("content-type").unwrap_or_default();
    let location = header("location");
    let headers = response.headers().clone();
    let body = response.text().await.expect("reading the body");
    Answer {
        status,
        content_type,
        location,
        headers,
        body,
    }
}

/// A PostgreSQL connection of the test's own.
pub async fn connect_postgres(url: &str) -> tokio_postgres::Client {
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

/// Polls `path` until it answers `status`, for up to `limit`.
pub async fn until_status(service: &Service, path: &str, status: u16, limit: Duration) -> Answer {
    let deadline = Instant::now() + limit;
    loop {
        let answer = service.get(path).await;
        if answer.status == status || Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
