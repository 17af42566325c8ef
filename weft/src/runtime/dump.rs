//! Task dumps: [`Handle::dump`](super::Handle::dump).
//!
//! A dump reads two things the runtime keeps anyway. The registry
//! (`runtime/task/registry.rs`) has an entry per task that has returned `Pending`
//! at least once and is not finished; each entry's counters are written by
//! the task's own polls and its wakes, lock-free. Each worker slot's poll
//! watch (`runtime/scheduler/monitor/watch.rs`) says which task it is polling.
//! A dump copies the entries one shard lock at a time, reads the watches
//! without a lock, and builds and sorts its rows after, with no runtime
//! lock held; nothing it does runs code the runtime does not own.

use std::fmt;
use std::panic::Location;
use std::time::{Duration, Instant};

use crate::runtime::scheduler::Shared;
use crate::runtime::task::label::Label;
use crate::runtime::task::{EntrySnapshot, Lane, lane_of};

/// A snapshot of the tasks of a runtime, from
/// [`Handle::dump`](super::Handle::dump).
///
/// [`tasks`](Self::tasks) yields one [`TaskInfo`] per task it lists, in the
/// order of the `Display` table: running tasks first (longest running
/// first), then scheduled ones, then idle ones (longest idle first).
///
/// # What a dump lists, and what it can miss
///
/// - Every task that has returned `Pending` at least once and has not
///   finished: idle (waiting for a wake), scheduled (woken, waiting in a
///   queue for its next poll) or running.
/// - Every task being polled by a worker at that moment, including one in
///   its first poll.
///
/// It does not list, and counts in [`unlisted`](Self::unlisted) instead:
/// tasks spawned but not polled yet (waiting in a queue for their first
/// poll), and a task caught between the end of its first poll and its
/// registration. Tasks that finish in their first poll never appear
/// unless a dump catches them running. `spawn_blocking` closures are not
/// tasks of the workers and are not listed (see
/// [`RuntimeMetrics`](crate::metrics::RuntimeMetrics) for the blocking pool).
///
/// A dump is not one atomic picture: the shards and the workers are read
/// one after another while tasks keep running, so a task may show a state
/// it left a moment before (never a task that was already freed: an entry
/// is copied under the lock its task takes to remove it).
///
/// # Times
///
/// Workers read the clock only where they did before dumps existed:
/// at their periodic checks (about every 200 µs of polls,
/// [`Builder::global_check_target`](super::Builder::global_check_target)),
/// on waking up, and around the polls they time. So:
///
/// - A running task's time is measured from the worker's last clock
///   reading before the poll began: at most one check interval more than
///   the poll's real length.
/// - An idle or scheduled task's idle time is measured from the worker's
///   last clock reading before its last poll ended: likewise at most one
///   check interval too long.
/// - [`TaskInfo::busy`]: every poll of a `Latency` or `Batch` task is
///   timed, so its busy time is exact; a worker times one `Default` poll in
///   [`poll_time_sample_every`](super::Builder::poll_time_sample_every)
///   (16 by default), and a `Default` task's busy time is the mean of its
///   timed polls times its number of polls (zero while none was timed).
///
/// # Cost
///
/// A dump takes each registry shard's lock for as long as it copies that
/// shard's entries (a few tens of nanoseconds per task); a task that
/// registers or finishes on that shard meanwhile waits for it. A runtime
/// that takes no dump pays, per poll, one more store on the worker's own
/// poll-watch line (the task's address); per `Pending` poll, a few plain
/// stores to the task's entry; per wake, one store there. Measured: `docs/experiments.md#task-dumps`
/// (`cargo run --release -p weft --example dump_cost`).
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let waiter = weft::task::Builder::new()
///         .name("waiter")
///         .spawn(std::future::pending::<()>())
///         .unwrap();
///     // Until the task has been polled once, it is only counted.
///     let dump = loop {
///         let dump = weft::runtime::Handle::current().dump();
///         if dump.tasks().any(|task| task.name() == Some("waiter")) {
///             break dump;
///         }
///         weft::task::yield_now().await;
///     };
///     println!("{dump}");
///     waiter.abort();
/// });
/// ```
#[derive(Debug, Clone)]
pub struct Dump {
    tasks: Vec<TaskInfo>,
    unlisted: u64,
}

/// One task in a [`Dump`].
#[derive(Clone)]
pub struct TaskInfo {
    id: u64,
    label: Label,
    lane: Lane,
    state: TaskState,
    polls: u64,
    busy: Duration,
}

/// What a task was doing when a [`Dump`] was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Being polled by worker slot `worker` (a worker's index, or a spare
    /// slot's, above them) for `elapsed` (see [`Dump`]'s Times).
    Running {
        /// The worker slot polling it.
        worker: usize,
        /// How long the poll has run, at most one check interval too long.
        elapsed: Duration,
    },
    /// Woken, waiting in a queue for its next poll.
    Scheduled,
    /// Waiting for a wake since its last poll ended, `elapsed` ago.
    Idle {
        /// How long it has waited, at most one check interval too long.
        elapsed: Duration,
    },
}

impl TaskState {
    /// Sort key: running before scheduled before idle; longer first.
    fn order(&self) -> (u8, std::cmp::Reverse<Duration>) {
        match *self {
            TaskState::Running { elapsed, .. } => (0, std::cmp::Reverse(elapsed)),
            TaskState::Scheduled => (1, std::cmp::Reverse(Duration::ZERO)),
            TaskState::Idle { elapsed } => (2, std::cmp::Reverse(elapsed)),
        }
    }
}

impl TaskInfo {
    /// The task's id: its address, unique among the tasks alive at the
    /// same time (a finished task's id may be reused by a later task).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name given with [`task::Builder::name`](crate::task::Builder::name),
    /// if any.
    pub fn name(&self) -> Option<&str> {
        self.label.name()
    }

    /// Where the task was spawned.
    pub fn location(&self) -> &'static Location<'static> {
        self.label.spawned_at()
    }

    /// The task's lane (a slow `Default` task may have been moved to
    /// `Batch`, see [`Builder::demote_slow_tasks`](super::Builder::demote_slow_tasks)).
    pub fn lane(&self) -> Lane {
        self.lane
    }

    /// What the task was doing.
    pub fn state(&self) -> TaskState {
        self.state
    }

    /// Polls that have returned (a poll in progress is not counted).
    pub fn polls(&self) -> u64 {
        self.polls
    }

    /// Time spent in those polls: exact for `Latency` and `Batch` tasks,
    /// estimated from sampled polls for `Default` ones (see [`Dump`]).
    pub fn busy(&self) -> Duration {
        self.busy
    }
}

impl fmt::Debug for TaskInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskInfo")
            .field("id", &self.id)
            .field("name", &self.name())
            .field("location", &self.location())
            .field("lane", &self.lane)
            .field("state", &self.state)
            .field("polls", &self.polls)
            .field("busy", &self.busy)
            .finish()
    }
}

impl Dump {
    /// Takes a dump of the runtime behind `shared`.
    pub(crate) fn capture(shared: &Shared) -> Dump {
        let registry = &shared.registry;
        let now_ns = registry.clock_ns(Instant::now());
        let since = |ns: u64| Duration::from_nanos(now_ns.saturating_sub(ns));
        // (task address, lane-and-label word, clock reading, slot)
        let running: Vec<(usize, usize, u64, usize)> = shared
            .remotes
            .iter()
            .enumerate()
            .filter_map(|(slot, remote)| {
                let (task, bits, clock_ns) = remote.watch.running()?;
                Some((task, bits, clock_ns, slot))
            })
            .collect();
        let mut entries: Vec<EntrySnapshot> = Vec::new();
        registry.snapshot(&mut entries);
        let live = shared.live_tasks();

        let mut tasks = Vec::with_capacity(entries.len() + running.len());
        let mut running_listed = vec![false; running.len()];
        for entry in &entries {
            let on_worker = running.iter().position(|run| run.0 == entry.task);
            let state = match on_worker {
                Some(index) => {
                    running_listed[index] = true;
                    let (_, _, clock_ns, worker) = running[index];
                    TaskState::Running {
                        worker,
                        elapsed: since(clock_ns),
                    }
                }
                None if entry.scheduled => TaskState::Scheduled,
                None => TaskState::Idle {
                    elapsed: since(entry.idle_since_ns),
                },
            };
            tasks.push(TaskInfo {
                id: entry.task as u64,
                label: label_of(entry.lane_and_label),
                lane: lane_of(entry.lane_and_label),
                state,
                polls: entry.polls,
                busy: busy_estimate(entry),
            });
        }
        // Tasks in their first poll (no entry yet).
        for (run, _) in running
            .iter()
            .zip(&running_listed)
            .filter(|(_, listed)| !**listed)
        {
            let (task, bits, clock_ns, worker) = *run;
            tasks.push(TaskInfo {
                id: task as u64,
                label: label_of(bits),
                lane: lane_of(bits),
                state: TaskState::Running {
                    worker,
                    elapsed: since(clock_ns),
                },
                polls: 0,
                busy: Duration::ZERO,
            });
        }
        tasks.sort_by_key(|task| (task.state.order(), task.id));
        let unlisted = live.saturating_sub(tasks.len() as u64);
        Dump { tasks, unlisted }
    }

    /// The tasks listed, in the `Display` table's order.
    pub fn tasks(&self) -> impl ExactSizeIterator<Item = &TaskInfo> + '_ {
        self.tasks.iter()
    }

    /// Live tasks the dump could not list: mostly tasks spawned and waiting
    /// for their first poll (see [`Dump`]). Computed from the runtime's
    /// spawn and finish counts, read after the tasks.
    pub fn unlisted(&self) -> u64 {
        self.unlisted
    }
}

/// The label in a lane-and-label word that came from a live task.
fn label_of(bits: usize) -> Label {
    Label::from_bits(bits).expect("a task always has a label")
}

/// The busy time of a registered task (see [`Dump`]'s Times).
fn busy_estimate(entry: &EntrySnapshot) -> Duration {
    if entry.timed_polls == 0 {
        return Duration::ZERO;
    }
    let polls = entry.polls.max(entry.timed_polls);
    let ns = u128::from(entry.timed_ns) * u128::from(polls) / u128::from(entry.timed_polls);
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// A duration in the unit that keeps it short (`999ns`, `2.5us`, `1.5ms`,
/// `2.0s`); honours width and alignment.
struct Short(Duration);

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        let ns = self.0.as_nanos();
        let mut text = Text::default();
        if ns < 1_000 {
            write!(text, "{ns}ns")?;
        } else if ns < 1_000_000 {
            write!(text, "{:.1}us", ns as f64 / 1e3)?;
        } else if ns < 1_000_000_000 {
            write!(text, "{:.1}ms", ns as f64 / 1e6)?;
        } else {
            write!(text, "{:.1}s", ns as f64 / 1e9)?;
        }
        f.pad(text.as_str())
    }
}

/// A short text on the stack, so a dump's table is formatted without an
/// allocation per cell.
#[derive(Default)]
struct Text {
    bytes: [u8; 32],
    len: usize,
}

impl Text {
    fn as_str(&self) -> &str {
        // Only whole `str`s are ever appended (`write_str`).
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("?")
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn lane_name(lane: Lane) -> &'static str {
    match lane {
        Lane::Latency => "Latency",
        Lane::Default => "Default",
        Lane::Batch => "Batch",
    }
}

impl fmt::Display for Dump {
    /// A table, one task a line, in [`Dump::tasks`]' order, then a line
    /// with the unlisted count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        writeln!(
            f,
            "{:<13} {:>9} {:>18} {:<7} {:>8} {:>9}  {:<24} LOCATION",
            "STATE", "FOR", "ID", "LANE", "POLLS", "BUSY", "NAME"
        )?;
        for task in &self.tasks {
            let mut state = Text::default();
            let elapsed = match task.state {
                TaskState::Running { worker, elapsed } => {
                    write!(state, "running@{worker}")?;
                    Some(elapsed)
                }
                TaskState::Scheduled => {
                    state.write_str("scheduled")?;
                    None
                }
                TaskState::Idle { elapsed } => {
                    state.write_str("idle")?;
                    Some(elapsed)
                }
            };
            let mut elapsed_text = Text::default();
            match elapsed {
                Some(elapsed) => write!(elapsed_text, "{}", Short(elapsed))?,
                None => elapsed_text.write_str("-")?,
            }
            writeln!(
                f,
                "{:<13} {:>9} {:>#18x} {:<7} {:>8} {:>9}  {:<24} {}",
                state.as_str(),
                elapsed_text.as_str(),
                task.id,
                lane_name(task.lane),
                task.polls,
                Short(task.busy),
                task.name().unwrap_or("-"),
                task.location(),
            )?;
        }
        write!(
            f,
            "{} tasks listed; {} more spawned and not polled yet (or finishing)",
            self.tasks.len(),
            self.unlisted
        )
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The estimate scales the timed polls' mean to all polls; exact when
    /// every poll was timed; zero with none timed.
    #[test]
    fn busy_is_the_timed_mean_times_the_polls() {
        let entry = |polls, timed_ns, timed_polls| EntrySnapshot {
            task: 0,
            lane_and_label: 0,
            polls,
            timed_ns,
            timed_polls,
            idle_since_ns: 0,
            scheduled: false,
        };
        assert_eq!(
            busy_estimate(&entry(32, 300, 2)),
            Duration::from_nanos(4_800)
        );
        assert_eq!(busy_estimate(&entry(3, 900, 3)), Duration::from_nanos(900));
        assert_eq!(busy_estimate(&entry(5, 0, 0)), Duration::ZERO);
    }

    #[test]
    fn short_durations_keep_their_unit() {
        assert_eq!(Short(Duration::from_nanos(999)).to_string(), "999ns");
        assert_eq!(Short(Duration::from_micros(1500)).to_string(), "1.5ms");
        assert_eq!(Short(Duration::from_secs(2)).to_string(), "2.0s");
        assert_eq!(Short(Duration::from_nanos(2_500)).to_string(), "2.5us");
        // Each unit starts at its own first value.
        assert_eq!(Short(Duration::from_nanos(1_000)).to_string(), "1.0us");
        assert_eq!(Short(Duration::from_millis(1)).to_string(), "1.0ms");
        assert_eq!(Short(Duration::from_secs(1)).to_string(), "1.0s");
        assert_eq!(
            format!("{:>7}|", Short(Duration::from_nanos(999))),
            "  999ns|"
        );
        assert_eq!(
            format!("{:<7}|", Short(Duration::from_nanos(999))),
            "999ns  |"
        );
        let longest = Short(Duration::MAX).to_string();
        assert!(longest.ends_with('s') && longest.len() > 20, "{longest}");
    }
}
