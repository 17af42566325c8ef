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
