//! The server under load: `weft-service` in a process of its own, started
//! from this executable (`weft-bench service-serve …`, which runs the
//! service's own `run`), so a suite measures the service as a user runs
//! it, and its CPU apart from the load generator's.

use std::io::{self, BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::runtimes::RuntimeKind;

/// How long a server may take to print its address (seeding the SQLite
/// file included) and to exit after `SIGTERM`.
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// A running server; killed on drop if still running.
pub struct Server {
    child: Child,
    /// Where it listens.
    pub address: SocketAddr,
    data_dir: PathBuf,
}

impl Server {
    /// Starts the service (`exe service-serve …`) on `kind` with `workers`
    /// workers, on `database` (`None`: SQLite in a fresh directory), and
    /// waits for its address.
    pub fn start(
        exe: &Path,
        kind: RuntimeKind,
        workers: usize,
        database: Option<&str>,
    ) -> io::Result<Server> {
        // A directory per server, even for two started at once by one
        // process (the tests run the suite and a soak side by side): two
        // servers on one SQLite file find it locked.
        static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let serial = SERVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let data_dir = std::env::temp_dir().join(format!(
            "weft-bench-service-{}-{serial}-{}",
            std::process::id(),
            kind.name()
        ));
        let _ = std::fs::remove_dir_all(&data_dir);
        let mut command = Command::new(exe);
        command
            .args([
                "service-serve",
                "--runtime",
                kind.name(),
                "--listen",
                "127.0.0.1:0",
            ])
            .args(["--workers", &workers.to_string()])
            .arg("--data-dir")
            .arg(&data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        // Its stderr (its shutdown line, or why it failed to start) in a
        // file, read back if it does not start.
        std::fs::create_dir_all(&data_dir)?;
        let stderr_path = data_dir.join("stderr.log");
        command.stderr(std::fs::File::create(&stderr_path)?);
        if let Some(url) = database {
            command.args(["--database", url]);
        }
        let mut child = command.spawn()?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(read);
        });
        let line = match rx.recv_timeout(START_TIMEOUT) {
            Ok(read) => read?,
            Err(_) => String::new(),
        };
        let address = line
            .trim_end()
            .strip_prefix("listening on http://")
            .and_then(|address| address.parse().ok());
        let Some(address) = address else {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            let _ = std::fs::remove_dir_all(&data_dir);
            return Err(io::Error::other(format!(
                "weft-service on {} did not start (first line {line:?}; stderr: {})",
                kind.name(),
                stderr.trim()
            )));
        };
        Ok(Server {
            child,
            address,
            data_dir,
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its CPU time so far (user and system, all threads).
    pub fn cpu(&self) -> Option<Duration> {
        process_cpu(self.child.id())
    }

    /// Stops it with `SIGTERM` (a graceful shutdown) and waits for it;
    /// `Err` if it did not exit 0 in time.
    pub fn stop(mut self) -> io::Result<()> {
        // SAFETY: `kill` on our own child, not yet reaped (`self.child`
        // is waited for only below), so the pid is still its own.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return match status.code() {
                    Some(0) => Ok(()),
                    _ => Err(io::Error::other(format!(
                        "weft-service exited with {status} after SIGTERM"
                    ))),
                };
            }
            if Instant::now() >= deadline {
                return Err(io::Error::other(format!(
                    "weft-service still running {STOP_TIMEOUT:?} after SIGTERM"
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// utime + stime of process `pid` (`/proc/PID/stat` fields 14 and 15,
/// counted from after the command name, which may hold spaces).
pub fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_s > 0).then(|| Duration::from_secs_f64(ticks as f64 / per_s as f64))
}
