//! Everything platform-specific, behind one `cfg` each with a portable
//! fallback, so weft builds and runs wherever std does and is tuned on
//! Linux, where it is tested.

/// Asks the kernel to end this thread's timed waits as close to their
/// deadline as it can.
///
/// Linux lets a timed wait of a normal thread end up to its *timer slack*
/// late (50 µs by default) so it can merge wake-ups. A worker keeping time
/// waits with the next timer's deadline as its timeout, so that slack is
/// lateness: with a 1 µs slack a short sleep overshoots about half as much.
/// For speed (timer lateness), not correctness. Workers time out only while
/// keeping time, so the merged wake-ups given up are few. Pinned by
/// `worker_threads_have_a_fine_timer_slack` (below).
///
/// Measured: docs/experiments.md#timer-slack
pub(crate) fn set_fine_timer_slack() {
    // All five arguments are passed: the call is variadic, and with two the
    // kernel reads whatever the other registers hold (valgrind reports them
    // as uninitialised).
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0)` takes integers and
    // changes only the calling thread's timer slack; no memory of ours.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            TIMER_SLACK_NS,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

#[cfg(target_os = "linux")]
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// Asks the kernel to let this thread preempt a running thread soon after
/// it wakes, by requesting the shortest time slice there is.
///
/// Linux's EEVDF scheduler (6.6 and later) protects a running thread for
/// the rest of its slice (0.75-3 ms by default), and with a 250 Hz tick a
/// thread that wakes behind a protected one can wait up to ~4 ms. A
/// worker woken for a short request behind a long poll on its core (the
/// mixed lane) waited exactly that. Since 6.12 a normal thread may ask for
/// its own slice (`sched_attr.sched_runtime`, clamped to 0.1-100 ms), with
/// no privilege: it changes when the thread is picked, not its share of the
/// CPU. A short slice gives a woken worker an early deadline, so it is
/// picked at once, and protects a running worker only 0.1 ms.
///
/// For speed (short-request latency beside long polls), not correctness.
/// Its cost is context switches: a worker woken with the short slice may
/// preempt the thread that woke it (`block_on` spawning, say); kept, as
/// the mixed lane is what the slice is for. Older kernels reject the
/// request (`E2BIG`/`EINVAL`): ignored, nothing else changes. Pinned by
/// lanes.rs's `runtime_threads_ask_for_the_shortest_slice_without_privilege`
/// and `a_slice_request_keeps_the_threads_policy_and_nice_value` (below).
///
/// Measured: docs/experiments.md#time-slices
pub(crate) fn request_short_slice() {
    let _ = set_slice(0, SHORT_SLICE_NS);
}

/// Gives thread `tid` of this process, found inside a poll that has
/// lasted a monitor sample period, a time slice longer than the kernel's
/// default, until [`restore_short_slice`]; whether it was changed.
///
/// Why: with EEVDF, a thread that wakes on a busy core preempts the
/// running one at once only if its virtual deadline (its place plus its
/// slice) comes first; otherwise it waits for the running thread's slice to
/// run out, checked at the next tick (4 ms at 250 Hz). A runtime thread
/// keeps the shortest slice ([`request_short_slice`]), so every thread
/// with the default slice (1.4 ms on 2 CPUs, at most 2.8 ms) that woke
/// behind one inside a long poll waited for that tick: in the mixed lane's
/// open loop, the generator submitting the requests (outside the runtime)
/// waited that tick behind long polls, and its lateness counts in the
/// latency from arrival. A slice longer than any default puts a woken
/// thread's deadline first, whatever the long poll's nice value; and it
/// does not lengthen the long poll's run, which the kernel protects only
/// for the shortest slice among the threads waiting on that core.
///
/// For speed (the latency of whatever wakes behind a long poll), not
/// correctness; the long polls' throughput does not change. Pinned by
/// lanes.rs's `a_long_poll_has_a_long_slice_until_it_returns`.
///
/// Measured: docs/experiments.md#time-slices (also the rejected 2, 10 and
/// 100 ms slices).
pub(crate) fn lengthen_slice(tid: i32) -> bool {
    tid != 0 && set_slice(tid, LONG_SLICE_NS).is_ok()
}

/// The CPU time thread `tid` of this process has used, in ns (its
/// per-thread CPU clock, as `pthread_getcpuclockid` names it); `None` where
/// it cannot be read (another platform, a thread that ended).
///
/// The caller vouches that `tid` names a live thread of this process: the
/// monitor calls this under the slot's thread lock
/// (`PollWatch::with_thread`), which a thread clears before it can end.
pub(crate) fn thread_cpu_ns(tid: i32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // The kernel's encoding of a thread's scheduler CPU clock
        // (`MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`, a per-thread clock).
        let clock = (!tid << 3) | 6;
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable timespec; the clock id names a
        // thread of this process (the caller's promise), and a stale one
        // only makes the call fail (EINVAL), which is handled.
        let failed = unsafe { libc::clock_gettime(clock, &mut now) } != 0;
        (!failed).then(|| now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        None
    }
}

/// Whether thread `tid` of this process is asleep in the kernel (state `S`
/// or `D` in `/proc/self/task/<tid>/stat`: a synchronous sleep, a blocking
/// read) rather than running or waiting for a core (`R`); `None` where that
/// cannot be read (another platform, a thread that ended). A snapshot: the
/// monitor asks at each sample of a stalled poll.
///
/// The caller vouches that `tid` names a live thread of this process (the
/// monitor asks under the slot's thread lock, `PollWatch::with_thread`); a
/// stale id only makes the read fail.
pub(crate) fn thread_is_blocked(tid: i32) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
        // The state follows the command name, which is in parentheses and
        // may itself hold spaces or parentheses: read after the last one.
        let state = stat[stat.rfind(')')? + 1..].trim_start().chars().next()?;
        Some(matches!(state, 'S' | 'D'))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        None
    }
}

/// Gives thread `tid` back the shortest slice after [`lengthen_slice`]
/// (its poll ended). The caller vouches that `tid` is alive (a thread id
/// may name another thread, even of another process, once its own has
/// ended): the monitor calls this only under the slot's thread lock, for
/// the thread still running the slot.
pub(crate) fn restore_short_slice(tid: i32) {
    let _ = set_slice(tid, SHORT_SLICE_NS);
}

/// Sets the time slice of thread `tid` of this process (0: the calling
/// thread) to `slice_ns`, keeping everything else the kernel keeps for it
/// (policy, nice value, reset-on-fork). A thread the program moved to a
/// policy other than `SCHED_OTHER`/`SCHED_BATCH` (say in `on_thread_start`)
/// is left alone: the slice is the fair class's, and rewriting the policy
/// would undo the program's choice. Older kernels reject a slice
/// (`E2BIG`/`EINVAL`): the error is returned and nothing changes.
///
/// The caller vouches that `tid` names a live thread of this process: the
/// monitor calls this only under the slot's thread lock
/// (`PollWatch::with_thread`), which a thread clears before it can end.
fn set_slice(tid: i32, slice_ns: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // Read, change the slice, write back: `sched_setattr` sets policy,
        // nice and slice together. Only the monitor changes another
        // thread's nice value (`demote_thread`), and it lengthens and
        // restores slices itself, so its own calls never interleave. A
        // spare restoring its own slice after its last poll may meet a
        // demotion the monitor decided from a sample taken during that
        // poll: then the demotion is undone where raising a nice value is
        // allowed, or this call fails where it is not; the spare has
        // already decided to go on serving (`run_spare` read its demotion
        // flag first), so only its priority is at stake, never a task.
        let size = std::mem::size_of::<SchedAttr>() as u32;
        let mut attr = SchedAttr::empty();
        // Sound: `sched_getattr(tid, attr, size, 0)` writes at most `size`
        // (48) bytes into `attr`, a live, writable `repr(C)` copy of the
        // kernel's `sched_attr` v0 on this stack.
        // SAFETY: `attr` is a live, writable `sched_attr` v0 of `size` bytes.
        let read =
            unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &raw mut attr, size, 0u32) };
        if read != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fair = [libc::SCHED_OTHER as u32, libc::SCHED_BATCH as u32];
        if !fair.contains(&attr.policy) {
            return Err(std::io::ErrorKind::Unsupported.into());
        }
        attr.size = size;
        // Only reset-on-fork is passed back: the kernel may report flags
        // (utilization clamps) that a v0 `sched_attr` cannot carry.
        attr.flags &= SCHED_FLAG_RESET_ON_FORK;
        attr.runtime_ns = slice_ns;
        // Sound: `sched_setattr(tid, attr, 0)` reads `size` (48) bytes
        // from `attr`, the live `repr(C)` `sched_attr` v0 filled above, and
        // changes only thread `tid`'s scheduling parameters (to what they
        // were, but for the slice).
        // SAFETY: `attr` is a live `sched_attr` v0 of `size` bytes; only `tid` changes.
        let result = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &raw const attr, 0u32) };
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, slice_ns);
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// `SCHED_FLAG_RESET_ON_FORK` of `sched_attr.sched_flags`.
#[cfg(target_os = "linux")]
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// Thread `tid`'s nice value (0: the calling thread's).
#[cfg(target_os = "linux")]
fn nice_of(tid: i32) -> std::io::Result<libc::c_int> {
    // `getpriority` may return -1 as a value: errno tells.
    // SAFETY: `__errno_location` points at this thread's errno;
    // `getpriority(PRIO_PROCESS, tid)` only reads a nice value.
    let nice = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t)
    };
    let error = std::io::Error::last_os_error();
    if nice == -1 && error.raw_os_error() != Some(0) {
        return Err(error);
    }
    Ok(nice)
}

/// The slice [`request_short_slice`] asks for: the kernel's minimum.
const SHORT_SLICE_NS: u64 = 100_000;
/// The slice [`lengthen_slice`] gives: longer than the kernel's default
/// (0.7 ms scaled by 1 + log2 of the CPUs, up to 8: at most 2.8 ms).
const LONG_SLICE_NS: u64 = 3_000_000;

/// The kernel's `struct sched_attr`, version 0 (`SCHED_ATTR_SIZE_VER0`).
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime_ns: u64,
    deadline_ns: u64,
    period_ns: u64,
}

#[cfg(target_os = "linux")]
impl SchedAttr {
    /// An all-zero `sched_attr` v0 that says its own size, for
    /// `sched_getattr` to fill.
    fn empty() -> SchedAttr {
        SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            ..SchedAttr::default()
        }
    }
}

/// The calling thread's kernel thread id (0 where there is none to give).
pub(crate) fn current_thread_id() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` takes no argument and cannot fail.
        unsafe { libc::gettid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Lowers thread `tid` of this process by [`DEMOTION_STEP`] nice steps
/// (nice 0 becomes 10; at most 19): it then weighs about a tenth of a
/// normal thread, so a thread of normal priority
/// that wakes on its core runs almost at once, while it still gets a tenth
/// of a contested core and all of an idle one. One-way for an unprivileged
/// process (raising a nice value back needs `CAP_SYS_NICE`), so the thread
/// keeps it for the rest of its life; any thread may lower a sibling,
/// unprivileged. A process that may raise priorities gets the thread back
/// at its old value after the poll ([`restore_nice`]). Returns the thread's
/// nice value before.
///
/// For fairness between short and long work, not correctness: nice 10
/// gave the mixed lane's short requests the lowest tail in both the closed
/// and the open loop (nice 5 less separation, nice 15 a worse open loop).
/// Not `SCHED_IDLE`: a thread that gets no CPU at all while normal threads
/// run turns every lock it holds into a priority inversion (the monitor's
/// own lock when it hands its worker on, a registry shard when its task
/// ends). That a stalled poll's thread is lowered is pinned by lanes.rs's
/// `a_slow_polls_thread_is_lowered_and_a_normal_thread_takes_over_its_worker`;
/// the step itself only by the measurement.
///
/// Measured: docs/experiments.md#demotion
///
/// The caller vouches that `tid` names a live thread of this process (the
/// monitor calls this under the slot's thread lock, `PollWatch::with_thread`).
pub(crate) fn demote_thread(tid: i32) -> std::io::Result<i32> {
    #[cfg(target_os = "linux")]
    {
        // Relative to the thread's current nice value, so a service started
        // under `nice` still separates its demoted threads from the others.
        let current = nice_of(tid)?;
        set_nice(tid, (current + DEMOTION_STEP).min(MAX_NICE))?;
        Ok(current)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        Ok(0)
    }
}

/// Gives thread `tid` of this process the nice value `nice` that
/// [`demote_thread`] returned. Raising a priority needs `CAP_SYS_NICE` (or
/// an `RLIMIT_NICE` that allows it): an unprivileged process gets `EACCES`
/// or `EPERM`, and its demoted threads keep the lowered value.
///
/// The caller vouches that `tid` names a live thread of this process (its
/// own, under the slot's thread lock: `PollWatch::restore_thread_priority`).
pub(crate) fn restore_nice(tid: i32, nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        set_nice(tid, nice)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, nice);
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn set_nice(tid: i32, nice: i32) -> std::io::Result<()> {
    // SAFETY: `setpriority(PRIO_PROCESS, tid, nice)` takes integers and
    // changes only the nice value of thread `tid`.
    let result = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Installs, once per process, the handler with which a demoted thread
/// steps aside ([`ask_to_step_aside`]); whether it is installed.
///
/// Why a demoted thread must step aside, not only weigh less: Linux's
/// EEVDF scheduler lets a woken thread preempt the running one only if it
/// is *eligible* (it has not had more than its share of late), and decides
/// that at the wake-up and then at each tick (4 ms at 250 Hz). A spare
/// that ran short requests a moment ago can wake ineligible, and then
/// waits out the rest of the tick behind a long poll whatever that poll's
/// nice value (our reading of the gaps traced in the mixed lane's open
/// loop; a `sched_yield` from the long poll did not close them, blocking
/// does). A thread that blocks, even for microseconds, gives its core to
/// whatever waits there at once (or to a waiting thread pulled from the
/// other core's queue by the kernel's idle balancing). For speed (the
/// latency of the work held up), not correctness. Pinned by lanes.rs's
/// `a_demoted_poll_steps_aside_for_the_work_it_holds_up`.
///
/// The signal is `SIGURG` (as Go's goroutine preemption): its default
/// action is to do nothing, so a signal that reaches a thread after the
/// handler was replaced, or after its target ended and the id was reused
/// by another thread of the process, does no harm (at most a 30 µs pause
/// of that thread). Through `signal-hook-registry`, a handler the program
/// installed for `SIGURG` before (or installs with it) still runs, and is
/// then also called for these signals. With `SA_RESTART` (the registry's
/// flag), an interrupted `read` or `write` resumes; the calls Linux never
/// restarts (`epoll_wait`, `nanosleep`, `poll`, ...) return `EINTR`, which
/// std's wrappers (`thread::sleep`) and careful code retry: the cost Go's
/// preemption has too.
///
/// Traced and measured: docs/experiments.md#the-open-loop-tail
pub(crate) fn install_step_aside() -> bool {
    #[cfg(target_os = "linux")]
    {
        static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *INSTALLED.get_or_init(|| {
            let handler = || {
                let pause = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: STEP_ASIDE_PAUSE_NS,
                };
                // Sound: `nanosleep` reads only `pause`, on this stack (the
                // remaining time is not wanted). It is not on POSIX's list
                // of async-signal-safe functions, but on Linux (glibc,
                // musl) it is the bare system call: no lock, no allocation.
                // The only state it may change is this thread's `errno`
                // (interrupted by another signal), which is put back so
                // the interrupted code never sees it change.
                // SAFETY: `nanosleep` reads only `pause`; `errno` is put back.
                unsafe {
                    let errno = libc::__errno_location();
                    let saved = *errno;
                    libc::nanosleep(&pause, std::ptr::null_mut());
                    *errno = saved;
                }
            };
            // SAFETY: the handler only sleeps (see inside): it takes no
            // lock, allocates nothing, cannot panic, and leaves `errno` as
            // it found it.
            unsafe { signal_hook_registry::register(STEP_ASIDE_SIGNAL, handler) }.is_ok()
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Asks thread `tid` of this process to step aside for
/// [`STEP_ASIDE_PAUSE_NS`] (the handler [`install_step_aside`] installed,
/// which the caller checked). Whether the signal was sent. The caller
/// vouches that `tid` names a live thread of this process (the monitor
/// calls this under the slot's thread lock, `PollWatch::with_thread`).
pub(crate) fn ask_to_step_aside(tid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `tgkill(pid, tid, sig)` takes integers; the thread group
        // is this process, so no other process's thread is signalled.
        let result =
            unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, STEP_ASIDE_SIGNAL) };
        result == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        false
    }
}

/// The signal of [`ask_to_step_aside`].
#[cfg(target_os = "linux")]
const STEP_ASIDE_SIGNAL: libc::c_int = libc::SIGURG;

/// How long a demoted thread steps aside: long enough for the kernel to
/// run or pull over the thread that waits, short enough to cost the long
/// poll little (speed, not correctness).
/// Measured (mixed lane, open loop): docs/experiments.md#stepping-aside
#[cfg(target_os = "linux")]
const STEP_ASIDE_PAUSE_NS: libc::c_long = 30_000;

/// How many nice steps a demoted thread is lowered by (`demote_thread`):
/// nice 0 becomes 10.
#[cfg(target_os = "linux")]
const DEMOTION_STEP: libc::c_int = 10;
/// The lowest priority there is.
#[cfg(target_os = "linux")]
const MAX_NICE: libc::c_int = 19;

/// What a failed `accept` says, for `weft::hyper::serve`'s accept loop.
#[cfg(all(feature = "hyper", not(loom)))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AcceptFailure {
    /// The one pending connection failed (it was aborted or reset, or the
    /// network refused it); the listener is fine and the next accept may
    /// succeed at once.
    Connection,
    /// The process or the system is out of a resource (file descriptors,
    /// socket buffers, memory); the connection waits in the queue until
    /// something is freed.
    Resources,
    /// The listener itself is unusable (closed, shut down, its runtime
    /// gone): every further accept fails the same way.
    Listener,
}

/// Sorts an `accept` error. On Linux by `errno`: the resource errors of
/// accept(2), and the network errors its manual says to retry like
/// `EAGAIN`. Anything unknown is the listener's, so a listener that
/// cannot recover ends `serve` instead of retrying forever.
#[cfg(all(feature = "hyper", not(loom), target_os = "linux"))]
pub(crate) fn accept_failure(error: &std::io::Error) -> AcceptFailure {
    match error.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            AcceptFailure::Resources
        }
        Some(
            libc::ECONNABORTED
            | libc::ECONNRESET
            | libc::EINTR
            | libc::EPROTO
            | libc::EPERM
            | libc::ETIMEDOUT
            | libc::ENETDOWN
            | libc::ENETUNREACH
            | libc::ENONET
            | libc::EHOSTDOWN
            | libc::EHOSTUNREACH
            | libc::ENOPROTOOPT
            | libc::EOPNOTSUPP,
        ) => AcceptFailure::Connection,
        _ => AcceptFailure::Listener,
    }
}

/// The portable fallback, by `ErrorKind`: `EMFILE`, `ENFILE` and `ENOBUFS`
/// have no stable kind, so an OS error of no known kind counts as a
/// resource error (retried with back-off, never ended on); an error that
/// is not the OS's (weft's own, after its runtime shut down) and a bad
/// argument (a listener shut down) are the listener's.
#[cfg(all(feature = "hyper", not(loom), not(target_os = "linux")))]
pub(crate) fn accept_failure(error: &std::io::Error) -> AcceptFailure {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ConnectionAborted
        | ErrorKind::ConnectionReset
        | ErrorKind::Interrupted
        | ErrorKind::PermissionDenied
        | ErrorKind::TimedOut
        | ErrorKind::NetworkDown
        | ErrorKind::NetworkUnreachable
        | ErrorKind::HostUnreachable => AcceptFailure::Connection,
        ErrorKind::InvalidInput => AcceptFailure::Listener,
        _ if error.raw_os_error().is_some() => AcceptFailure::Resources,
        _ => AcceptFailure::Listener,
    }
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use super::*;

    /// A thread's CPU clock runs while it computes and stands while it
    /// sleeps in the kernel.
    #[test]
    fn a_threads_cpu_clock_runs_while_it_computes_and_not_while_it_sleeps() {
        let tid = current_thread_id();
        let before = thread_cpu_ns(tid).expect("the calling thread's CPU clock");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = thread_cpu_ns(tid).unwrap() - before;
        assert!(slept < 25_000_000, "{slept} ns of CPU in a 50 ms sleep");
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        let spun = thread_cpu_ns(tid).unwrap() - before - slept;
        assert!(spun > 1_000_000, "{spun} ns of CPU in a 20 ms spin");
    }

    /// A thread asleep in a system call reads as blocked; one computing
    /// does not: what the monitor asks to tell a stalled poll that holds a
    /// core from one blocked in the kernel.
    #[test]
    fn a_sleeping_thread_is_blocked_and_a_computing_one_is_not() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let spinner = std::thread::spawn({
            let stop = stop.clone();
            move || {
                tid_tx.send(current_thread_id()).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }
        });
        let spinning = tid_rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(thread_is_blocked(spinning), Some(false));
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            tid_tx.send(current_thread_id()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(200));
        });
        let sleeping = tid_rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(thread_is_blocked(sleeping), Some(true));
        sleeper.join().unwrap();
        assert_eq!(thread_is_blocked(sleeping), None, "an ended thread");
    }

    /// Every worker thread keeps time with a 1 µs timer slack.
    #[test]
    fn worker_threads_have_a_fine_timer_slack() {
        assert_eq!(worker_slack_and_slice(true).0, TIMER_SLACK_NS);
    }

    /// The calling thread's timer slack and time slice (`sched_runtime`).
    fn slack_and_slice() -> (libc::c_ulong, u64) {
        // SAFETY: `prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)` takes integers and
        // returns the calling thread's slack.
        let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
        let size = std::mem::size_of::<SchedAttr>() as u32;
        let mut attr = SchedAttr::empty();
        // SAFETY: `sched_getattr(0, attr, size, 0)` writes at most `size`
        // bytes into `attr`, a live `repr(C)` `sched_attr` v0.
        let read = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &raw mut attr, size, 0u32) };
        assert_eq!(read, 0, "{}", std::io::Error::last_os_error());
        (slack as libc::c_ulong, attr.runtime_ns)
    }

    /// A worker's timer slack and slice, on a runtime with both settings
    /// `tuned` or both off.
    fn worker_slack_and_slice(tuned: bool) -> (libc::c_ulong, u64) {
        let rt = crate::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .time_slices(tuned)
            .fine_timer_slack(tuned)
            .build()
            .unwrap();
        rt.block_on(rt.spawn(async { slack_and_slice() })).unwrap()
    }

    /// `Builder::time_slices(false)` and `fine_timer_slack(false)` leave a
    /// worker what it inherited from the thread that built the runtime.
    #[test]
    fn builder_settings_turn_the_kernel_requests_off() {
        let (inherited_slack, inherited_slice) =
            std::thread::spawn(slack_and_slice).join().unwrap();
        assert_eq!(
            worker_slack_and_slice(false),
            (inherited_slack, inherited_slice)
        );
        let (slack, slice) = worker_slack_and_slice(true);
        assert_eq!(slack, TIMER_SLACK_NS);
        // Kernels before 6.12 refuse a slice: nothing changes there.
        assert!(
            slice == SHORT_SLICE_NS || slice == inherited_slice,
            "{slice}"
        );
    }

    /// Asking for a slice keeps the policy and nice value a program gave
    /// its thread (`on_thread_start` may set them): a `SCHED_BATCH` thread
    /// stays one, and a `SCHED_IDLE` one is left alone entirely. (Writing
    /// `SCHED_OTHER` with flags 0, as the request once did, reset both.)
    #[test]
    fn a_slice_request_keeps_the_threads_policy_and_nice_value() {
        fn set_policy(policy: libc::c_int) {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: `sched_setscheduler(0, policy, param)` reads `param`,
            // live on this stack, and changes only this (test) thread.
            let set = unsafe { libc::sched_setscheduler(0, policy, &param) };
            assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
        }
        fn policy() -> libc::c_int {
            // SAFETY: `sched_getscheduler(0)` only reads this thread's policy.
            unsafe { libc::sched_getscheduler(0) }
        }
        std::thread::spawn(|| {
            set_policy(libc::SCHED_BATCH);
            // SAFETY: as in the test below: this thread's nice value only.
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 4) }, 0);
            request_short_slice();
            assert_eq!(policy(), libc::SCHED_BATCH);
            assert_eq!(nice_of(0).unwrap(), 4);
            set_policy(libc::SCHED_IDLE);
            assert_eq!(
                set_slice(0, SHORT_SLICE_NS).unwrap_err().kind(),
                std::io::ErrorKind::Unsupported
            );
            assert_eq!(policy(), libc::SCHED_IDLE);
        })
        .join()
        .unwrap();
    }

    /// A nice value of -1 is a value, not the error `getpriority` also
    /// reports as -1; a thread that does not exist is an error. (Setting
    /// -1 needs the privilege to raise a priority: where the test runs
    /// without it, that refusal is what it checks instead.)
    #[test]
    fn nice_values_read_back_and_a_missing_thread_is_an_error() {
        std::thread::spawn(|| {
            let tid = current_thread_id();
            // SAFETY: `setpriority(PRIO_PROCESS, tid, nice)` takes integers
            // and changes only this (test) thread's nice value.
            let set =
                |nice| unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
            if set(-1) == 0 {
                assert_eq!(nice_of(tid).unwrap(), -1);
                assert_eq!(nice_of(0).unwrap(), -1);
            } else {
                let error = std::io::Error::last_os_error();
                assert!(
                    matches!(error.raw_os_error(), Some(libc::EACCES | libc::EPERM)),
                    "{error}"
                );
            }
            assert_eq!(set(3), 0);
            assert_eq!(nice_of(tid).unwrap(), 3);
        })
        .join()
        .unwrap();
        // Thread ids are below `pid_max` (at most 2^22).
        let error = nice_of(i32::MAX).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ESRCH), "{error}");
    }
}
