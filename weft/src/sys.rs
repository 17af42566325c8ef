//! Everything platform-specific, behind one `cfg` each with a portable
//! fallback, so weft builds and runs wherever std does and is tuned on
//! Linux, where it is tested.

/// Asks the kernel to end this thread's timed waits as close to their
/// deadline as it can.
///
/// Linux lets a timed wait of a normal thread end up to its *timer slack*
/// late (50 µs by default) so it can merge wake-ups. A worker keeping time
/// waits with the next timer's deadline as its timeout, so that slack is
/// lateness. Measured on the 2-core dev VM, `sleep(1 ms)` in a loop on an
/// idle runtime overshot by p50 ~75 µs / p99 ~150 µs with the default slack
/// and p50 ~35 µs / p99 ~75 µs with 1 µs (three runs each). Workers time
/// out only while keeping time, so the merged wake-ups given up are few.
pub(crate) fn set_fine_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_TIMERSLACK, ns)` takes an integer and changes
    // only the calling thread's timer slack; it touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS);
    }
}

#[cfg(target_os = "linux")]
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

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

/// Lowers the scheduling priority of thread `tid` of this process to
/// `nice` (higher is lower priority; a thread's nice may only go up
/// without `CAP_SYS_NICE`, so this is never undone: the thread keeps it
/// for the rest of its life). Any thread of the process may do it to any
/// sibling, unprivileged.
pub(crate) fn lower_thread_priority(tid: i32, nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `setpriority(PRIO_PROCESS, tid, nice)` takes integers and
        // changes only the nice value of thread `tid`.
        let result = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, nice);
        Ok(())
    }
}

/// The nice value at which a thread competing with one nice-0 thread for
/// a core gets `share` of it (Linux's CFS/EEVDF weights: nice 0 weighs
/// 1024, each step ~1.25×). Clamped to 0..=19.
pub(crate) fn nice_for_share(share: f64) -> i32 {
    // share = w / (w + 1024)  =>  w = 1024 * share / (1 - share);
    // w = 1024 / 1.25^nice  =>  nice = log(1024 / w) / log(1.25).
    let weight = 1024.0 * share / (1.0 - share);
    let nice = (1024.0 / weight).ln() / 1.25f64.ln();
    nice.round().clamp(0.0, 19.0) as i32
}
