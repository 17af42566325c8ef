//! The server's own cost per request, counted by `perf stat` on the
//! server's threads only: their CPU (task clock), their system calls by
//! kind and their context switches, over the generator's window.
//!
//! The server runs in this process, so the counting names its threads:
//! those the server's start created ([`threads`] before and after), with
//! `inherit` covering any thread they start later, plus the runtime's
//! shared threads that exist apart from any one server (async-io's
//! reactor thread for smol, [`crate::common::runtimes::net::NetRuntime::SHARED_THREADS`]).
//! The generator's thread is never counted.
//!
//! perf starts with its events disabled (`-D -1`) when the server is up,
//! and the generator enables them at the window's start and disables them
//! at its end through perf's control FIFO, waiting for each `ack`; so the
//! counts cover the same window as the requests they are divided by.
//!
//! Kinds ([`KINDS`]): `read` (read, readv, recvfrom, recvmsg, recvmmsg on
//! anything but an eventfd), `write` (write, writev, sendto, sendmsg,
//! sendmmsg, likewise), `epoll_wait` (and epoll_pwait, epoll_pwait2),
//! `futex` (and futex_wait, futex_wake, futex_waitv, futex_requeue),
//! `eventfd` (a read or write on one of the process's eventfds when the
//! server was up: `--filter 'fd == N || …'` on the read and write
//! tracepoints), `sched_yield`, and `other` (every other system call:
//! the total from `raw_syscalls:sys_enter` less the kinds). Each syscall
//! tracepoint is counted only where the kernel has it.
//!
//! Without perf, without tracepoints (not root), or if perf fails, the
//! run goes on and its figures say why there are no counts.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The kinds of system call counted apart, in the order of [`Counts::kinds`].
pub const KINDS: [&str; 7] = [
    "read",
    "write",
    "epoll_wait",
    "futex",
    "eventfd",
    "sched_yield",
    "other",
];

const READ: usize = 0;
const WRITE: usize = 1;
const EVENTFD: usize = 4;
const OTHER: usize = 6;

/// The syscall tracepoints (`syscalls:sys_enter_NAME`) and their kind.
const KIND_EVENTS: [(&str, usize); 19] = [
    ("read", READ),
    ("readv", READ),
    ("recvfrom", READ),
    ("recvmsg", READ),
    ("recvmmsg", READ),
    ("write", WRITE),
    ("writev", WRITE),
    ("sendto", WRITE),
    ("sendmsg", WRITE),
    ("sendmmsg", WRITE),
    ("epoll_wait", 2),
    ("epoll_pwait", 2),
    ("epoll_pwait2", 2),
    ("futex", 3),
    ("futex_wait", 3),
    ("futex_wake", 3),
    ("futex_waitv", 3),
    ("futex_requeue", 3),
    ("sched_yield", 5),
];

/// How long perf may take to attach, to answer a command, and to print
/// its counts and end after `SIGINT` (seconds on a loaded 2-core machine).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(15);
const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// What one perf counter adds to.
#[derive(Debug, Clone, Copy)]
enum Slot {
    TaskClock,
    Switches,
    Total,
    Kind(usize),
    /// Reads or writes on an eventfd: counted as `eventfd` and taken off
    /// the kind (read or write) that counted them too.
    Eventfd(usize),
}

/// The server threads' totals over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Their CPU time.
    pub task_clock: Duration,
    /// Their context switches, voluntary and not.
    pub context_switches: u64,
    /// Their system calls.
    pub syscalls: u64,
    /// Those by kind, in [`KINDS`] order (`other` is the rest).
    pub kinds: [u64; 7],
}

/// The threads of this process, by id.
pub fn threads() -> BTreeSet<u32> {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return BTreeSet::new();
    };
    tasks
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The threads of this process called `name`.
pub fn named(name: &str) -> Vec<u32> {
    threads()
        .into_iter()
        .filter(|tid| {
            fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == name)
        })
        .collect()
}

/// The file descriptors of this process that are eventfds.
fn eventfds() -> Vec<u32> {
    let Ok(fds) = fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    fds.filter_map(|fd| {
        let fd = fd.ok()?;
        let target = fs::read_link(fd.path()).ok()?;
        (target.to_str()? == "anon_inode:[eventfd]").then_some(())?;
        fd.file_name().to_str()?.parse().ok()
    })
    .collect()
}

/// Where the kernel lists its syscall tracepoints. On a fresh machine
/// tracefs is often not mounted yet, and perf mounts it on first use: so
/// before giving up, perf itself is asked to count one tracepoint, and
/// when the tracepoints are still missing its own words are the reason.
fn tracepoints() -> Result<PathBuf, String> {
    let find = || {
        ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
            .iter()
            .map(|root| Path::new(root).join("events/syscalls"))
            .find(|dir| dir.join("sys_enter_read").exists())
    };
    if let Some(dir) = find() {
        return Ok(dir);
    }
    let asked = Command::new("perf")
        .args(["stat", "-e", "raw_syscalls:sys_enter", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("perf not available: `perf` could not be run ({e})"))?;
    find().ok_or_else(|| {
        let stderr = String::from_utf8_lossy(&asked.stderr);
        let said = stderr
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("no syscall tracepoints under /sys/kernel/tracing");
        format!("perf cannot count system calls: {said}")
    })
}

/// `perf stat` attached to a server's threads, its events off until
/// [`Probe::enable`].
#[derive(Debug)]
pub struct Probe {
    child: Child,
    control: File,
    ack: File,
    dir: PathBuf,
    slots: Vec<Slot>,
}

impl Probe {
    /// Attaches perf to `tids` and waits until it counts (disabled).
    pub fn attach(tids: &[u32]) -> Result<Probe, String> {
        if tids.is_empty() {
            return Err("no server thread to count".to_owned());
        }
        let syscalls = tracepoints()?;
        let dir = std::env::temp_dir().join(format!(
            "weft-bench-perf-{}-{}",
            std::process::id(),
            tids[0]
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("perf: {e}"))?;
        let (control, ack) = (dir.join("control"), dir.join("ack"));
        let made = Command::new("mkfifo").arg(&control).arg(&ack).status();
        if !made.is_ok_and(|s| s.success()) {
            return Err("perf not available: cannot make its control FIFOs".to_owned());
        }
        let mut slots = vec![Slot::TaskClock, Slot::Switches, Slot::Total];
        let mut events: Vec<String> = ["task-clock", "context-switches", "raw_syscalls:sys_enter"]
            .map(str::to_owned)
            .to_vec();
        let exists = |name: &str| syscalls.join(format!("sys_enter_{name}")).exists();
        for (name, kind) in KIND_EVENTS.iter().filter(|(name, _)| exists(name)) {
            events.push(format!("syscalls:sys_enter_{name}"));
            slots.push(Slot::Kind(*kind));
        }
        let mut filtered = Vec::new();
        let fds = eventfds();
        if !fds.is_empty() {
            let filter: Vec<String> = fds.iter().map(|fd| format!("fd == {fd}")).collect();
            for (name, kind) in [("read", READ), ("write", WRITE)] {
                filtered.push((format!("syscalls:sys_enter_{name}"), filter.join(" || ")));
                slots.push(Slot::Eventfd(kind));
            }
        }
        let tids: Vec<String> = tids.iter().map(u32::to_string).collect();
        let mut command = Command::new("perf");
        command
            .args(["stat", "-x", ",", "-D", "-1", "-t", &tids.join(",")])
            .arg("-o")
            .arg(dir.join("counts"))
            .arg("--control")
            .arg(format!("fifo:{},{}", control.display(), ack.display()));
        for event in &events {
            command.args(["-e", event]);
        }
        for (event, filter) in &filtered {
            command.args(["-e", event, "--filter", filter]);
        }
        command.stdin(Stdio::null()).stdout(Stdio::null());
        command.stderr(File::create(dir.join("stderr")).map_err(|e| format!("perf: {e}"))?);
        let fifo = |path: &Path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
        };
        let (control, ack) = match (fifo(&control), fifo(&ack)) {
            (Ok(control), Ok(ack)) => (control, ack),
            (Err(e), _) | (_, Err(e)) => return Err(format!("perf: its FIFOs: {e}")),
        };
        let child = command
            .spawn()
            .map_err(|e| format!("perf not available: {e}"))?;
        let mut probe = Probe {
            child,
            control,
            ack,
            dir,
            slots,
        };
        if let Err(err) = probe.command("disable", ATTACH_TIMEOUT) {
            let _ = probe.child.kill();
            let _ = probe.child.wait();
            let said = fs::read_to_string(probe.dir.join("stderr")).unwrap_or_default();
            let said = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(format!("perf did not start ({err}) {said}")
                .trim_end()
                .to_owned());
        }
        Ok(probe)
    }

    /// Starts counting.
    pub fn enable(&self) -> io::Result<()> {
        self.command("enable", COMMAND_TIMEOUT)
    }

    /// Stops counting.
    pub fn disable(&self) -> io::Result<()> {
        self.command("disable", COMMAND_TIMEOUT)
    }

    /// Sends `what` to perf and waits for its `ack`.
    fn command(&self, what: &str, timeout: Duration) -> io::Result<()> {
        (&self.control).write_all(format!("{what}\n").as_bytes())?;
        let deadline = Instant::now() + timeout;
        let mut answer = Vec::new();
        let mut buffer = [0u8; 64];
        while !answer.windows(3).any(|w| w == b"ack") {
            match (&self.ack).read(&mut buffer) {
                Ok(read) => answer.extend_from_slice(&buffer[..read]),
                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(ErrorKind::TimedOut, "perf did not answer"));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Ends perf and reads what it counted while enabled.
    pub fn finish(mut self) -> Result<Counts, String> {
        let pid = libc::pid_t::try_from(self.child.id()).map_err(|e| e.to_string())?;
        // SAFETY: `kill` takes no pointer; `pid` is our own child, not yet
        // waited for, so the id cannot have been reused.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let deadline = Instant::now() + FINISH_TIMEOUT;
        while self.child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if Instant::now() >= deadline {
                return Err(format!(
                    "perf did not end within {FINISH_TIMEOUT:?} of SIGINT"
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let text = fs::read_to_string(self.dir.join("counts")).map_err(|e| format!("perf: {e}"))?;
        parse(&text, &self.slots)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The counts in perf's CSV output (`-x ,`: value, unit, event, …; one
/// line per event in the order given, `#` lines and blank ones aside).
fn parse(text: &str, slots: &[Slot]) -> Result<Counts, String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    if lines.len() != slots.len() {
        return Err(format!(
            "perf gave {} counts for {} events",
            lines.len(),
            slots.len()
        ));
    }
    let mut counts = Counts::default();
    let mut taken = 0;
    for (line, slot) in lines.iter().zip(slots) {
        let field = line.split(',').next().unwrap_or("");
        let value: f64 = field
            .parse()
            .map_err(|_| format!("perf counted nothing for `{line}`"))?;
        let whole = value as u64;
        match *slot {
            Slot::TaskClock => counts.task_clock = Duration::from_secs_f64(value / 1e3),
            Slot::Switches => counts.context_switches = whole,
            Slot::Total => counts.syscalls = whole,
            Slot::Kind(kind) => counts.kinds[kind] += whole,
            Slot::Eventfd(kind) => {
                counts.kinds[EVENTFD] += whole;
                counts.kinds[kind] = counts.kinds[kind].saturating_sub(whole);
            }
        }
        if !matches!(slot, Slot::TaskClock | Slot::Switches | Slot::Total) {
            taken += whole;
        }
    }
    // Eventfd counts were added once and taken off once: `taken` counted
    // them twice.
    let eventfd = counts.kinds[EVENTFD];
    counts.kinds[OTHER] = counts.syscalls.saturating_sub(taken - eventfd);
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_csv_sorts_into_kinds_and_other_is_the_rest() {
        let slots = [
            Slot::TaskClock,
            Slot::Switches,
            Slot::Total,
            Slot::Kind(READ),
            Slot::Kind(WRITE),
            Slot::Kind(3),
            Slot::Eventfd(READ),
            Slot::Eventfd(WRITE),
        ];
        let text = "# started on …\n\n\
                    1500.5,msec,task-clock,1,100.00,,\n\
                    40,,context-switches,1,100.00,,\n\
                    1000,,raw_syscalls:sys_enter,1,100.00,,\n\
                    400,,syscalls:sys_enter_read,1,100.00,,\n\
                    450,,syscalls:sys_enter_write,1,100.00,,\n\
                    20,,syscalls:sys_enter_futex,1,100.00,,\n\
                    10,,syscalls:sys_enter_read,1,100.00,,\n\
                    30,,syscalls:sys_enter_write,1,100.00,,\n";
        let counts = parse(text, &slots).unwrap();
        assert_eq!(counts.task_clock, Duration::from_micros(1_500_500));
        assert_eq!((counts.context_switches, counts.syscalls), (40, 1000));
        // read 390, write 420, futex 20, eventfd 40: 870 of 1000 named.
        assert_eq!(counts.kinds, [390, 420, 0, 20, 40, 0, 130]);
        assert!(parse("<not counted>,,task-clock\n", &slots[..1]).is_err());
        assert!(parse(text, &slots[..3]).is_err());
    }

    #[test]
    fn this_process_has_threads_and_no_thread_has_an_empty_name() {
        assert!(threads().contains(&std::process::id()));
        assert!(named("").is_empty());
    }
}
