//! `bytes_per_timer`: the memory a pending timer holds, measured in a child
//! process per runtime (this binary re-run as the hidden
//! `weft-bench timers-rss --runtime R --workers N --timers T`), so that
//! memory one runtime freed to the allocator cannot be reused by the next
//! and hide its cost.
//!
//! In the child, one task of a freshly built runtime: allocates and touches
//! the `Vec` of T slots (so the vector is not counted), reads the resident
//! set from `/proc/self/statm`, creates T `Box::pin(sleep(60 s))`, polls
//! each once (arming it) and stores it, reads the resident set again, and
//! prints `(after − before) / T`: the boxed sleep plus whatever the runtime
//! keeps per timer (wheel entries, waker clones, map nodes). The parent
//! parses the printed line.

use std::io::{self, Read};
use std::path::Path;
use std::pin::Pin;
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::probe;
use super::workloads::poll_once;
use crate::common::runtimes::timer::TimerRuntime;
use crate::common::runtimes::{RuntimeKind, Smol, Spawner, Tokio, Weft};

/// The sleep of every timer held.
pub const RSS_SLEEP: Duration = Duration::from_secs(60);

/// What the child prints before the figure.
const PREFIX: &str = "bytes_per_timer ";

/// Measures in this process: bytes per timer of `timers` pending sleeps on
/// a fresh `R` with `workers` workers.
pub fn measure_here<R: TimerRuntime>(workers: usize, timers: usize) -> io::Result<f64> {
    let timers = timers.max(1);
    let rt = R::build_with_timers(workers)?;
    let task = async move {
        let mut slots: Vec<Option<Pin<Box<R::Sleep>>>> = Vec::new();
        // Writing every slot now faults the vector's pages in.
        slots.resize_with(timers, || None);
        let before = probe::resident_bytes()?;
        for slot in &mut slots {
            let mut sleep = Box::pin(R::sleep(RSS_SLEEP));
            poll_once(sleep.as_mut()).await;
            *slot = Some(sleep);
        }
        let after = probe::resident_bytes()?;
        drop(slots);
        Ok(after.saturating_sub(before) as f64 / timers as f64)
    };
    rt.block_on(rt.spawner().spawn(task))
}

/// The hidden `timers-rss` subcommand: measures and prints the figure.
pub fn child_main(kind: RuntimeKind, workers: usize, timers: usize) -> ExitCode {
    let measured = match kind {
        RuntimeKind::Weft => measure_here::<Weft>(workers, timers),
        RuntimeKind::Tokio => measure_here::<Tokio>(workers, timers),
        RuntimeKind::Smol => measure_here::<Smol>(workers, timers),
    };
    match measured {
        Ok(bytes) => {
            println!("{PREFIX}{bytes}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("weft-bench: timers-rss failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `exe timers-rss …` for `kind` and parses its figure; kills the
/// child if it has not exited within `timeout`.
pub fn measure_in_child(
    exe: &Path,
    kind: RuntimeKind,
    workers: usize,
    timers: usize,
    timeout: Duration,
) -> Result<f64, String> {
    let mut child = Command::new(exe)
        .arg("timers-rss")
        .args(["--runtime", kind.name()])
        .args(["--workers", &workers.to_string()])
        .args(["--timers", &timers.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait(&mut child, timeout)?;
    let (stdout, stderr) = (join(stdout), join(stderr));
    if !status.success() {
        return Err(format!("the child exited with {status}: {}", stderr.trim()));
    }
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(PREFIX)?.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("no `{}` line in the child's output", PREFIX.trim()))
}

/// Waits for `child` until `timeout`, then kills it.
fn wait(child: &mut Child, timeout: Duration) -> Result<std::process::ExitStatus, String> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no result within {} s", timeout.as_secs()));
            }
            Err(err) => return Err(format!("waiting for the child failed: {err}")),
        }
    }
}

/// Reads a pipe to its end on a thread of its own, so that a child
/// writing more than the pipe holds cannot block.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<thread::JoinHandle<String>> {
    let mut pipe = pipe?;
    Some(thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    }))
}

fn join(reader: Option<thread::JoinHandle<String>>) -> String {
    reader.and_then(|r| r.join().ok()).unwrap_or_default()
}
