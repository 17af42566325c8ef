//! An idle runtime sleeps: with nothing to run and a timer pending, its
//! threads use no CPU until the timer is due (the timekeeper waits with a
//! timeout, the stall monitor sleeps while every worker does). Its own
//! test binary: CPU time is counted for the whole process, and other tests
//! running in parallel would add theirs.
//!
//! Not a speed target: a thread that polls instead of sleeping burns a
//! whole core for the test's 300 ms, a sleeping one a few milliseconds at
//! most (waking up, firing the timer), so the 60 ms bound leaves a wide
//! margin either way on a loaded machine (CPU time does not grow while a
//! thread waits for a core).

use std::time::{Duration, Instant};

use weft::runtime::Builder;

/// CPU time (user + system) of the whole process so far.
fn process_cpu_time() -> Duration {
    // SAFETY: `getrusage` fills the `rusage` it is given, a zeroed local;
    // RUSAGE_SELF has no other requirement.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// The CPU time the runtime's threads use while `rt` waits 300 ms for a
/// timer, everything else idle.
fn cpu_while_a_timer_is_pending(rt: &weft::runtime::Runtime) -> Duration {
    let sleeping = rt.spawn(async { weft::time::sleep(Duration::from_millis(300)).await });
    let (start, cpu_before) = (Instant::now(), process_cpu_time());
    rt.block_on(sleeping).unwrap();
    let (elapsed, cpu) = (start.elapsed(), process_cpu_time() - cpu_before);
    assert!(
        elapsed >= Duration::from_millis(300),
        "the timer fired early"
    );
    cpu
}

/// Both ways the timekeeper sleeps, one after the other (one test, so no
/// other test's CPU time is counted): on its condvar while no socket is
/// registered, then in the OS poller while one is.
#[test]
fn an_idle_runtime_with_a_pending_timer_uses_no_cpu_until_it_is_due() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    // Every thread started and settled: a first task ran, the runtime is
    // idle again.
    rt.block_on(rt.spawn(async {})).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let cpu = cpu_while_a_timer_is_pending(&rt);
    assert!(
        cpu < Duration::from_millis(60),
        "keeping time on the condvar, an idle runtime used {cpu:?} of CPU in 300 ms"
    );
    let listener = rt
        .block_on(async { weft::net::TcpListener::bind("127.0.0.1:0").await })
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let cpu = cpu_while_a_timer_is_pending(&rt);
    assert!(
        cpu < Duration::from_millis(60),
        "keeping time in the poller, an idle runtime used {cpu:?} of CPU in 300 ms"
    );
    drop(listener);
}
