//! What the stall monitor reports about a stuck poll ([`StallInfo`]).

use std::fmt;
use std::panic::Location;
use std::time::Duration;

/// A worker found inside one poll for longer than the stall threshold,
/// as passed to [`Builder::on_stall`](crate::runtime::Builder::on_stall).
///
/// It names the task that holds the worker (its
/// [`Builder::name`](crate::task::Builder::name), if it has one, and where
/// it was spawned) and how long it had been inside that poll when the
/// monitor looked. Its `Display` form is one line:
///
/// ```text
/// weft: worker 1 stuck for 12.3ms in a poll of task `report` (spawned at src/main.rs:10:5)
/// ```
#[derive(Debug, Clone)]
pub struct StallInfo {
    pub(crate) worker: usize,
    pub(crate) task_name: Option<&'static str>,
    pub(crate) spawned_at: &'static Location<'static>,
    pub(crate) stuck_for: Duration,
}

impl StallInfo {
    /// The index of the thread's worker slot: below `worker_threads` for a
    /// worker, at or above it for a spare thread the monitor brought in.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The task's name, if it was spawned with one.
    pub fn task_name(&self) -> Option<&str> {
        self.task_name
    }

    /// Where the task was spawned (the caller of `weft::spawn`,
    /// `Handle::spawn` or `task::Builder::spawn`).
    pub fn spawned_at(&self) -> &'static Location<'static> {
        self.spawned_at
    }

    /// How long the worker had been inside the poll when the monitor
    /// found it (measured by the monitor: up to one monitor period less
    /// than the true time).
    pub fn stuck_for(&self) -> Duration {
        self.stuck_for
    }
}

impl fmt::Display for StallInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "weft: worker {} stuck for {:?} in a poll of ",
            self.worker, self.stuck_for
        )?;
        match self.task_name {
            Some(name) => write!(f, "task `{name}`")?,
            None => write!(f, "an unnamed task")?,
        }
        write!(f, " (spawned at {})", self.spawned_at)
    }
}
