//! `weft::time`: sleeps end after (never before) their deadline on every
//! runtime shape, timeouts and intervals keep tokio's semantics, timers fire
//! while their worker is stuck, the test clock jumps, and the edges (huge
//! durations, zero periods, no runtime, a shut-down runtime) behave as
//! documented.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{DropCounter, WakeCount, on_every_shape, rt};
use weft::time::{
    Instant, MissedTickBehavior, advance, interval, interval_at, pause, resume, sleep, sleep_until,
    timeout, timeout_at,
};

const MS: Duration = Duration::from_millis(1);

#[test]
fn sleeps_never_end_early_on_any_shape() {
    on_every_shape(|rt| {
        let tasks: Vec<_> = (0..200u64)
            .map(|i| {
                rt.spawn(async move {
                    let wait = Duration::from_micros(50 + i * 37 % 3_000);
                    let start = Instant::now();
                    sleep(wait).await;
                    start.elapsed() >= wait
                })
            })
            .collect();
        rt.block_on(async {
            for task in tasks {
                assert!(task.await.unwrap(), "a sleep ended before its deadline");
            }
        });
        // From `block_on` itself (the outside wheel).
        rt.block_on(async {
            let deadline = Instant::now() + 2 * MS;
            sleep_until(deadline).await;
            assert!(Instant::now() >= deadline);
        });
    });
}

#[test]
fn timeout_returns_the_value_or_elapsed_and_drops_the_future() {
    let rt = rt(2, true);
    let drops = DropCounter::default();
    rt.block_on(async {
        assert_eq!(timeout(Duration::from_secs(10), async { 5 }).await, Ok(5));
        let tracked = drops.track();
        let slow = async move {
            let _tracked = tracked;
            sleep(Duration::from_secs(3600)).await;
        };
        let err = timeout(2 * MS, slow).await.unwrap_err();
        assert_eq!(err.to_string(), "deadline has elapsed");
        assert_eq!(drops.drops(), 1, "the timed-out future is dropped");
        let io: std::io::Error = err.into();
        assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
        // A ready future wins over an elapsed deadline.
        let past = Instant::now() - MS;
        assert_eq!(timeout_at(past, async { 1 }).await, Ok(1));
        let mut pending = timeout(Duration::from_secs(60), std::future::ready(9));
        assert_eq!(pending.get_ref().clone().into_inner(), 9);
        assert_eq!(timeout(MS, pending.get_mut()).await, Ok(9));
        let _inner: std::time::Duration = timeout(MS, async { MS }).into_inner().await;
    });
}

/// A timeout around a loop that is always ready (each round spends the
/// task's budget and yields) still fires: the deadline is checked with
/// the budget spent. Fails with the deadline polled under the budget (the
/// loop never ends).
#[test]
fn a_timeout_fires_around_a_loop_that_spends_the_budget() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = rt(1, true);
        let outcome = rt.block_on(async {
            timeout(MS, async {
                loop {
                    weft::task::consume_budget().await;
                }
            })
            .await
        });
        done.send(outcome.is_err()).unwrap();
    });
    let elapsed = finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the timeout has not fired after 10 s");
    assert!(elapsed, "the loop cannot end by itself");
}

#[test]
fn interval_ticks_at_once_then_every_period() {
    let rt = rt(2, true);
    rt.block_on(async {
        let start = Instant::now();
        let mut ticks = interval(3 * MS);
        assert_eq!(ticks.period(), 3 * MS);
        assert_eq!(ticks.missed_tick_behavior(), MissedTickBehavior::Burst);
        let first = ticks.tick().await;
        assert!(first - start < 3 * MS, "the first tick is immediate");
        let second = ticks.tick().await;
        let third = ticks.tick().await;
        assert_eq!(
            second - first,
            3 * MS,
            "scheduled instants are one period apart"
        );
        assert_eq!(third - second, 3 * MS);
        assert!(Instant::now() >= third);
        ticks.reset();
        let after_reset = ticks.tick().await;
        assert!(after_reset >= third + 3 * MS);
    });
}

/// The three missed-tick behaviours on the paused clock, exactly as
/// `MissedTickBehavior`'s doc says: ticks due every 10 ms from 0, the task
/// back only at 25 ms. Each tick's (scheduled instant, completion time).
#[test]
fn missed_ticks_burst_delay_or_skip_as_documented() {
    let cases = [
        (MissedTickBehavior::Burst, [(10, 25), (20, 25), (30, 30)]),
        (MissedTickBehavior::Delay, [(10, 25), (35, 35), (45, 45)]),
        (MissedTickBehavior::Skip, [(10, 25), (30, 30), (40, 40)]),
    ];
    for (behavior, expected) in cases {
        let rt = rt(1, true);
        let seen = rt.block_on(async {
            pause();
            let start = Instant::now();
            let mut ticks = interval(10 * MS);
            ticks.set_missed_tick_behavior(behavior);
            assert_eq!(ticks.missed_tick_behavior(), behavior);
            assert_eq!(ticks.tick().await, start);
            advance(25 * MS).await;
            let mut seen = Vec::new();
            for _ in 0..3 {
                let scheduled = ticks.tick().await;
                let at = |instant: Instant| (instant - start).as_millis();
                seen.push((at(scheduled), at(Instant::now())));
            }
            seen
        });
        assert_eq!(seen, expected, "{behavior:?}");
    }
    // A tick up to 5 ms late is not missed (tokio's leeway): `Delay` keeps
    // the schedule.
    let rt = rt(1, true);
    rt.block_on(async {
        pause();
        let start = Instant::now();
        let mut ticks = interval(10 * MS);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticks.tick().await;
        advance(15 * MS).await;
        assert_eq!(ticks.tick().await - start, 10 * MS);
        assert_eq!(ticks.tick().await - start, 20 * MS, "5 ms late is on time");
    });
}

/// Each reset moves the next tick, on the paused clock: `reset` one period
/// from now, `reset_after` and `reset_at` where they say,
/// `reset_immediately` to now.
#[test]
fn interval_resets_move_the_next_tick() {
    let rt = rt(1, true);
    rt.block_on(async {
        pause();
        let start = Instant::now();
        let since_start = || (Instant::now() - start).as_millis();
        let mut ticks = interval(10 * MS);
        ticks.tick().await;
        advance(3 * MS).await;
        ticks.reset();
        ticks.tick().await;
        assert_eq!(since_start(), 13, "reset: one period from 3 ms");
        ticks.reset_after(4 * MS);
        ticks.tick().await;
        assert_eq!(since_start(), 17, "reset_after(4 ms) at 13 ms");
        ticks.reset_at(start + 50 * MS);
        ticks.tick().await;
        assert_eq!(since_start(), 50, "reset_at(50 ms)");
        ticks.reset_immediately();
        ticks.tick().await;
        assert_eq!(since_start(), 50, "reset_immediately: no wait");
        ticks.tick().await;
        assert_eq!(since_start(), 60, "then one period on");
    });
}

#[test]
#[should_panic(expected = "`period` must be non-zero")]
fn a_zero_interval_panics_naming_the_argument() {
    let rt = rt(1, true);
    let _guard = rt.enter();
    let _ = interval(Duration::ZERO);
}

#[test]
#[should_panic(expected = "called outside of a weft runtime")]
fn sleep_outside_a_runtime_says_what_to_do() {
    drop(sleep(MS));
}

#[test]
fn huge_durations_neither_panic_nor_overflow() {
    let rt = rt(2, true);
    rt.block_on(async {
        let forever = sleep(Duration::MAX);
        assert!(forever.deadline() > Instant::now() + Duration::from_secs(86_400 * 365 * 29));
        assert!(timeout(Duration::MAX, async { 3 }).await == Ok(3));
        // Armed and cancelled without trouble.
        let outcome = timeout(MS, forever).await;
        assert!(outcome.is_err());
        let mut far = interval_at(Instant::now(), Duration::MAX);
        far.tick().await;
    });
}

/// Spins until `fired` is set, at most 3 s.
fn spin_until(fired: &AtomicBool) {
    let start = std::time::Instant::now();
    while !fired.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(3) {
        std::hint::spin_loop();
    }
}

/// A task arms a `timer` on its worker (its timer task runs there first),
/// has `long_tasks` spinning tasks spawned from outside, then spins itself
/// until the timer has fired. Returns whether it fired while all of them
/// still spun (i.e. some other, idle worker fired it).
fn stuck_worker_sees_its_timer(
    rt: &weft::runtime::Runtime,
    timer: Duration,
    long_tasks: usize,
) -> bool {
    let fired = Arc::new(AtomicBool::new(false));
    let handle = rt.handle().clone();
    rt.block_on(async move {
        weft::spawn(async move {
            let timer = weft::spawn({
                let fired = fired.clone();
                async move {
                    sleep(timer).await;
                    fired.store(true, Ordering::SeqCst);
                }
            });
            // Let the timer task run (and arm its timer) here first.
            weft::task::yield_now().await;
            let spinners: Vec<_> = std::thread::spawn({
                let fired = fired.clone();
                move || {
                    (0..long_tasks)
                        .map(|_| {
                            let fired = fired.clone();
                            handle.spawn(async move { spin_until(&fired) })
                        })
                        .collect()
                }
            })
            .join()
            .unwrap();
            spin_until(&fired);
            let saw = fired.load(Ordering::SeqCst);
            timer.await.unwrap();
            for spinner in spinners {
                spinner.await.unwrap();
            }
            saw
        })
        .await
        .unwrap()
    })
}

/// A timer armed on a worker that then spins in one long poll fires from
/// the idle worker: the timer's task runs while the spinner still spins.
#[test]
fn a_timer_fires_while_its_worker_is_stuck() {
    let rt = rt(2, true);
    for _ in 0..5 {
        assert!(
            stuck_worker_sees_its_timer(&rt, 5 * MS, 0),
            "the timer waited for its stuck worker"
        );
    }
}

/// Four workers: while one is stuck with a timer armed, two long tasks
/// arrive from outside and take two more. The keeper may be woken for one of
/// them; the chain of searchers (rule 4 of `idle.rs`: a searcher that finds
/// work wakes another) then ends with a worker that finds nothing, sleeps,
/// and keeps time. A change to the wake rules (gating wakes on the backlog)
/// must keep this.
#[test]
fn a_stuck_workers_timer_fires_while_other_work_arrives() {
    let rt = rt(4, true);
    for _ in 0..5 {
        assert!(
            stuck_worker_sees_its_timer(&rt, 20 * MS, 2),
            "the timer waited while three workers were busy and one slept"
        );
    }
}

/// A timer armed on a worker's own wheel fires while that worker is stuck
/// in the very poll that armed it: the idle worker that keeps time fires
/// it. The stall monitor is off, so no spare can be what fires it.
#[test]
fn a_timer_on_a_stuck_workers_own_wheel_is_fired_by_the_idle_worker() {
    let rt = common::rt_without_stall_monitor(2);
    for _ in 0..3 {
        let fired_while_stuck = rt.block_on(rt.spawn(async {
            // Armed from inside this task's poll: on this worker's wheel.
            let mut nap = Box::pin(sleep(5 * MS));
            assert!(poll_once(&mut nap).await, "a 5 ms sleep ended at once");
            // Now stuck in one poll until the timer fires (at most 3 s).
            let start = std::time::Instant::now();
            while !nap.is_elapsed() && start.elapsed() < Duration::from_secs(3) {
                std::hint::spin_loop();
            }
            nap.is_elapsed()
        }));
        assert!(
            fired_while_stuck.unwrap(),
            "the timer waited for the poll of the worker whose wheel it is on"
        );
    }
}

/// How long a stuck task waits for its own timer before giving up: the
/// stall the tests below set against a timer due in 20 ms.
const STALL: Duration = Duration::from_secs(3);

/// What a stall may add to a timer at most in the tests below (the stall
/// threshold, a monitor sample, a periodic check or two, a loaded CI
/// machine): far below [`STALL`], so a timer that waits for its worker's
/// poll fails.
const LATE_BOUND: Duration = Duration::from_millis(1_000);

/// Inside one poll: arms a `timer` on the polling worker's own wheel, then
/// blocks the worker (synchronous 1 ms sleeps, as a blocking driver call
/// would) until that timer has fired, at most [`STALL`]. Raises `stuck`
/// once blocked. Returns how long after the arming the timer fired.
async fn arm_then_block_until_fired(timer: Duration, stuck: Arc<AtomicUsize>) -> Duration {
    let armed_at = std::time::Instant::now();
    let mut nap = Box::pin(sleep(timer));
    assert!(poll_once(&mut nap).await, "a sleep ended at once");
    stuck.fetch_add(1, Ordering::SeqCst);
    while !nap.is_elapsed() && armed_at.elapsed() < STALL {
        std::thread::sleep(MS);
    }
    armed_at.elapsed()
}

/// Waits (off the runtime) until `count` tasks are blocked.
fn wait_until_blocked(stuck: &AtomicUsize, count: usize) {
    let start = std::time::Instant::now();
    while stuck.load(Ordering::SeqCst) < count {
        assert!(start.elapsed() < STALL, "the tasks never blocked");
        std::thread::sleep(MS);
    }
}

/// One worker blocks in a poll with a timer armed on its own wheel while
/// the other stays busy (a task yielding in a loop, so it never goes idle
/// and never fires every wheel on its way to sleep): the busy worker's
/// periodic check fires the stalled worker's wheel. Fails with the
/// periodic check firing only its own and the outside wheel (the timer
/// then waits the whole stall).
#[test]
fn a_stalled_workers_timer_fires_while_the_other_is_busy() {
    let rt = rt(2, true);
    for _ in 0..3 {
        let stuck = Arc::new(AtomicUsize::new(0));
        let blocked = rt.spawn(arm_then_block_until_fired(20 * MS, stuck.clone()));
        wait_until_blocked(&stuck, 1);
        let busy = rt.spawn(async move {
            let start = std::time::Instant::now();
            while !blocked.is_finished() && start.elapsed() < 2 * STALL {
                weft::task::yield_now().await;
            }
            blocked.await.unwrap()
        });
        let fired_after = rt.block_on(busy).unwrap();
        assert!(
            fired_after < LATE_BOUND,
            "a 20 ms timer on the stalled worker's wheel fired after {fired_after:?}"
        );
    }
}

/// Every worker blocks in a poll, each with a timer armed on its own
/// wheel, and a task spawned meanwhile sleeps five times 10 ms: no worker
/// reaches a periodic check or sleeps as the keeper, so the stall
/// monitor fires the timers and a spare thread runs the sleeper. Fails
/// without the monitor's firing (no timer fires until a poll returns).
#[test]
fn timers_fire_while_every_worker_is_stuck() {
    let rt = rt(2, true);
    for _ in 0..3 {
        let stuck = Arc::new(AtomicUsize::new(0));
        let blocked: Vec<_> = (0..2)
            .map(|_| rt.spawn(arm_then_block_until_fired(20 * MS, stuck.clone())))
            .collect();
        wait_until_blocked(&stuck, 2);
        let ticker = rt.spawn(async {
            let start = std::time::Instant::now();
            for _ in 0..5 {
                sleep(10 * MS).await;
            }
            start.elapsed()
        });
        let ticked_for = rt.block_on(ticker).unwrap();
        assert!(
            ticked_for < LATE_BOUND,
            "five 10 ms sleeps took {ticked_for:?} while every worker was stuck"
        );
        for task in blocked {
            let fired_after = rt.block_on(task).unwrap();
            assert!(
                fired_after < LATE_BOUND,
                "a 20 ms timer on a stuck worker's wheel fired after {fired_after:?}"
            );
        }
    }
    assert!(rt.handle().metrics().monitor_timer_wakes > 0);
}

/// A task that blocks "forever" keeps its worker, never the timers: while
/// it blocks, sleeping tasks still wake, and a `shutdown_timeout` that
/// leaves it behind still drops every pending sleeping task once.
#[test]
fn a_task_blocked_for_ever_keeps_its_worker_not_the_timers() {
    let drops = DropCounter::default();
    let rt = rt(2, true);
    let release = Arc::new(AtomicBool::new(false));
    let stuck = Arc::new(AtomicUsize::new(0));
    drop(rt.spawn({
        let (release, stuck) = (release.clone(), stuck.clone());
        async move {
            stuck.fetch_add(1, Ordering::SeqCst);
            // Bounded so a broken runtime cannot hang the test binary.
            let start = std::time::Instant::now();
            while !release.load(Ordering::SeqCst) && start.elapsed() < 4 * STALL {
                std::thread::sleep(MS);
            }
        }
    }));
    wait_until_blocked(&stuck, 1);
    for _ in 0..100 {
        let tracked = drops.track();
        drop(rt.spawn(async move {
            let _tracked = tracked;
            sleep(Duration::from_secs(3600)).await;
        }));
    }
    let woke = rt.block_on(rt.spawn(async {
        let start = std::time::Instant::now();
        for _ in 0..5 {
            sleep(10 * MS).await;
        }
        start.elapsed()
    }));
    assert!(
        woke.unwrap() < LATE_BOUND,
        "the timers waited for the blocked task"
    );
    rt.shutdown_timeout(Duration::from_millis(100));
    assert_eq!(drops.drops(), 100, "every sleeping task dropped once");
    release.store(true, Ordering::SeqCst);
}

#[test]
fn a_sleep_polled_after_shutdown_completes_instead_of_hanging() {
    let rt = rt(2, true);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let (mut armed, mut never_armed) = {
        let _guard = rt.enter();
        (
            Box::pin(sleep(Duration::from_secs(3600))),
            Box::pin(sleep(Duration::from_secs(3600))),
        )
    };
    // Armed on the outside wheel (polled off the workers), still pending.
    assert!(armed.as_mut().poll(&mut cx).is_pending());
    assert_eq!(rt.handle().metrics().timers_pending, 1);
    // A task sleeping when the runtime goes away is cancelled with it.
    let sleeping = rt.spawn(async { sleep(Duration::from_secs(3600)).await });
    drop(rt);
    // Polled on a plain thread after the runtime is gone: both complete.
    assert!(armed.as_mut().poll(&mut cx).is_ready());
    assert!(armed.is_elapsed());
    assert!(never_armed.as_mut().poll(&mut cx).is_ready());
    assert!(never_armed.is_elapsed());
    let waiting = std::pin::pin!(sleeping);
    match waiting.poll(&mut cx) {
        std::task::Poll::Ready(outcome) => assert!(outcome.unwrap_err().is_cancelled()),
        std::task::Poll::Pending => panic!("a sleeping task's handle waits after shutdown"),
    }
}

#[test]
fn shutdown_drops_every_sleeping_task_exactly_once() {
    let drops = DropCounter::default();
    let rt = rt(2, true);
    for _ in 0..1_000 {
        let tracked = drops.track();
        drop(rt.spawn(async move {
            let _tracked = tracked;
            sleep(Duration::from_secs(3600)).await;
        }));
    }
    rt.block_on(async {
        while weft::runtime::Handle::current().metrics().timers_pending < 1_000 {
            weft::task::yield_now().await;
        }
    });
    drop(rt);
    assert_eq!(drops.drops(), 1_000);
}

#[test]
fn reset_moves_the_deadline_of_a_waiting_task() {
    let rt = rt(2, true);
    rt.block_on(async {
        let mut nap = std::pin::pin!(sleep(Duration::from_secs(3600)));
        // Armed with this task's waker, then moved close: the task wakes.
        assert!(timeout(MS, nap.as_mut()).await.is_err());
        nap.as_mut().reset(Instant::now() + 2 * MS);
        assert!(!nap.is_elapsed());
        nap.as_mut().await;
        assert!(nap.is_elapsed());
    });
}

#[test]
fn paused_time_jumps_to_the_next_timer_when_everyone_is_idle() {
    let rt = rt(2, true);
    rt.block_on(async {
        pause();
        let start = Instant::now();
        let wall = std::time::Instant::now();
        sleep(Duration::from_secs(3600)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(3600));
        let spawned = weft::spawn(async {
            let mut ticks = interval(Duration::from_secs(60));
            for _ in 0..10 {
                ticks.tick().await;
            }
        });
        spawned.await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3600 + 9 * 60));
        assert!(wall.elapsed() < Duration::from_secs(30), "no real waiting");
        resume();
        let resumed = Instant::now();
        sleep(MS).await;
        assert!(resumed.elapsed() >= MS);
    });
}

/// A paused clock jumps only while nothing polls: a `block_on` busy inside
/// its poll (here blocked in a real sleep) holds it, although every worker
/// sleeps and a timer is pending. (`Shared::block_on_polling` made a no-op
/// let it jump the hour at once.)
/// With the clock paused, time does not jump while a `spawn_blocking`
/// closure is queued or running (tokio's rule): a 3 s timeout around a
/// blocking 20 ms sleep gives the closure's value. Fails with the auto-advance
/// ignoring the blocking pool (the timeout elapses at once).
#[test]
fn a_paused_clock_does_not_jump_while_blocking_work_runs() {
    let rt = rt(2, true);
    for _ in 0..5 {
        let outcome = rt.block_on(async {
            pause();
            let waiter = weft::spawn(async {
                let blocking = weft::task::spawn_blocking(|| {
                    std::thread::sleep(20 * MS);
                    7
                });
                timeout(Duration::from_secs(3), blocking).await
            });
            let outcome = waiter.await.unwrap();
            resume();
            outcome
        });
        assert_eq!(
            outcome
                .expect("the paused clock jumped past the blocking work")
                .unwrap(),
            7
        );
    }
}

#[test]
fn a_paused_clock_does_not_jump_while_block_on_is_busy() {
    let rt = rt(1, true);
    rt.block_on(async {
        pause();
        let start = Instant::now();
        let sleeper = weft::spawn(sleep(Duration::from_secs(3600)));
        // (A clock that jumps fires the timer at once: stop waiting then.)
        while weft::runtime::Handle::current().metrics().timers_pending < 1
            && !sleeper.is_finished()
        {
            weft::task::yield_now().await;
        }
        // The worker goes to sleep with the timer armed; this poll goes on.
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "the clock jumped while block_on polled"
        );
        assert!(!sleeper.is_finished());
    });
}

/// A paused clock does not jump while I/O is ready: readiness waiting in
/// the reactor when the last worker goes to sleep is work, delivered
/// before the clock may move (tokio's auto-advance waits for it too). One
/// worker, so the keeper that finds the readiness is the worker going to
/// sleep, not a poller woken while someone still polls.
#[test]
fn a_paused_clock_does_not_jump_past_ready_io() {
    let rt = rt(1, true);
    rt.block_on(rt.spawn(async {
        pause();
        let (reader, mut writer) = std::os::unix::net::UnixStream::pair().unwrap();
        reader.set_nonblocking(true).unwrap();
        let reader = weft::net::UnixStream::from_std(reader).unwrap();
        let start = Instant::now();
        let waiting =
            weft::spawn(async move { timeout(Duration::from_secs(3600), reader.readable()).await });
        // Let the reader register its interest and wait (it ran first:
        // it was in this worker's LIFO slot).
        weft::task::yield_now().await;
        assert!(!waiting.is_finished(), "nothing was written yet");
        // Ready now, but nobody has looked: the worker is in this poll.
        std::io::Write::write_all(&mut writer, b"x").unwrap();
        let readable = waiting.await.unwrap();
        assert!(readable.is_ok(), "the timeout fired before ready I/O");
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "the clock jumped while I/O was ready"
        );
        resume();
    }))
    .unwrap();
}

/// `resume` lets the clock run again from where it stood: ahead of the
/// real clock by what `advance` added, then following real time (a busy
/// `block_on` keeps a paused clock still, so only a running one moves).
#[test]
fn after_resume_the_clock_runs_on_from_where_it_stood() {
    let rt = rt(1, true);
    rt.block_on(async {
        pause();
        let paused_at = Instant::now();
        advance(Duration::from_secs(3600)).await;
        resume();
        let resumed_at = Instant::now();
        assert!(resumed_at - paused_at >= Duration::from_secs(3600));
        std::thread::sleep(5 * MS);
        assert!(
            Instant::now() - resumed_at >= 5 * MS,
            "the clock did not run after resume"
        );
    });
}

/// `Debug` says what a sleep and an instant are.
#[test]
fn sleeps_and_instants_print_their_deadline() {
    let rt = rt(1, true);
    rt.block_on(async {
        let now = Instant::now();
        assert_eq!(format!("{now:?}"), format!("{:?}", now.into_std()));
        let nap = sleep_until(now + MS);
        let printed = format!("{nap:?}");
        assert!(printed.starts_with("Sleep { deadline: "), "{printed}");
        assert!(printed.contains("elapsed: false"), "{printed}");
    });
}

#[test]
fn advance_fires_what_is_due_and_no_more() {
    let rt = rt(2, true);
    rt.block_on(async {
        pause();
        let fired = Arc::new(AtomicUsize::new(0));
        let count = |after: Duration| {
            let fired = fired.clone();
            weft::spawn(async move {
                sleep(after).await;
                fired.fetch_add(1, Ordering::SeqCst);
            })
        };
        // Keep this `block_on` polling so the clock cannot auto-advance.
        let a = count(Duration::from_secs(1));
        let b = count(Duration::from_secs(10));
        while weft::runtime::Handle::current().metrics().timers_pending < 2 {
            weft::task::yield_now().await;
        }
        advance(Duration::from_secs(2)).await;
        a.await.unwrap();
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert!(!b.is_finished());
        advance(Duration::from_secs(8)).await;
        b.await.unwrap();
        assert_eq!(fired.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn many_timers_in_one_slot_all_fire() {
    let rt = rt(2, true);
    rt.block_on(async {
        let deadline = Instant::now() + 3 * MS;
        let tasks: Vec<_> = (0..5_000)
            .map(|_| weft::spawn(async move { sleep_until(deadline).await }))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert!(Instant::now() >= deadline);
        assert_eq!(weft::runtime::Handle::current().metrics().timers_pending, 0);
    });
}

/// Polls `fut` once (arming a sleep's timer); `true` if it is still pending.
async fn poll_once<F: std::future::Future + Unpin>(fut: &mut F) -> bool {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::pin::Pin::new(&mut *fut).poll(cx).is_pending())
    })
    .await
}

/// A sleep whose deadline has passed (or is now) completes at its first
/// poll, without a trip through the wheel (as tokio's does): only a sleep
/// known to have been ahead at its creation arms without reading the clock.
#[test]
fn a_deadline_already_past_completes_at_the_first_poll() {
    let rt = rt(1, true);
    rt.block_on(async {
        let mut past = Box::pin(sleep_until(Instant::now() - MS));
        assert!(
            !poll_once(&mut past).await,
            "sleep_until a past instant waited"
        );
        let mut zero = Box::pin(sleep(Duration::ZERO));
        assert!(!poll_once(&mut zero).await, "sleep(0) waited");
        let mut now = Box::pin(sleep_until(Instant::now()));
        assert!(!poll_once(&mut now).await, "sleep_until(now) waited");
    });
}

#[test]
fn a_fired_timer_reads_as_elapsed_before_its_sleep_is_polled_again() {
    let rt = rt(2, true);
    rt.block_on(async {
        let mut nap = Box::pin(sleep(MS));
        assert!(poll_once(&mut nap).await, "a 1 ms sleep ended at once");
        // The later timer fires after the earlier one: by the time this
        // sleep ends, `nap`'s timer has fired, though `nap` is not polled.
        sleep(20 * MS).await;
        assert!(nap.is_elapsed(), "a fired timer read as still armed");
    });
}

/// A sleep polled again with another waker (moved to another task, or a
/// `select!` polled from a new one) wakes that waker when it fires, not
/// the first (`Wheel::update_waker`; kept the old waker, the new poller
/// would never be woken).
#[test]
fn a_sleep_polled_with_a_new_waker_wakes_that_one() {
    let rt = rt(2, true);
    rt.block_on(async {
        let first = Arc::new(WakeCount::default());
        let second = Arc::new(WakeCount::default());
        let mut nap = Box::pin(sleep(5 * MS));
        for waker in [&first, &second] {
            let waker = std::task::Waker::from(waker.clone());
            let mut cx = std::task::Context::from_waker(&waker);
            assert!(nap.as_mut().poll(&mut cx).is_pending());
        }
        // This poll goes on; the keeper fires the timer meanwhile.
        let start = std::time::Instant::now();
        while second.wakes() == 0 && start.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(MS);
        }
        assert!(nap.is_elapsed(), "the timer did not fire in 3 s");
        assert_eq!(second.wakes(), 1, "the last waker");
        assert_eq!(first.wakes(), 0, "a replaced waker");
    });
}

#[test]
fn a_dropped_or_reset_sleep_leaves_no_timer_behind() {
    let rt = rt(1, true);
    rt.block_on(async {
        let handle = weft::runtime::Handle::current();
        let before = handle.metrics().timers_pending;
        let mut nap = Box::pin(sleep(Duration::from_secs(3600)));
        assert!(poll_once(&mut nap).await);
        assert_eq!(handle.metrics().timers_pending, before + 1, "armed");
        // A reset takes the old timer off its wheel before it arms again.
        nap.as_mut()
            .reset(Instant::now() + Duration::from_secs(7200));
        assert_eq!(handle.metrics().timers_pending, before + 1, "reset");
        drop(nap);
        assert_eq!(
            handle.metrics().timers_pending,
            before,
            "a dropped sleep's timer stayed on its wheel"
        );
    });
}

#[test]
fn advance_fires_a_due_timer_before_it_returns() {
    // tokio's rule: the timers `advance` makes due have fired when it
    // returns (here from the calling thread, on every wheel; the keeper
    // it also pokes would get there too, but later).
    let rt = rt(2, true);
    rt.block_on(async {
        pause();
        let mut nap = Box::pin(sleep(Duration::from_secs(1)));
        assert!(poll_once(&mut nap).await);
        advance(Duration::from_secs(2)).await;
        assert!(
            nap.is_elapsed(),
            "a timer due after `advance` had not fired"
        );
        resume();
    });
}
