//! The rows of the timers suite measured in this process, written once over
//! [`TimerRuntime`] and run unchanged on every runtime. Each call of
//! [`measure`] is one repetition on a runtime built for it and dropped
//! after it, so an idle runtime of an earlier row cannot disturb a CPU
//! reading. (`bytes_per_timer` runs in a child process: [`super::rss`].)
//!
//! * `arm_cancel_ns`: inside one task, N times: create a 10 s sleep, poll it
//!   once with the task's context (arming it), drop it (cancelling it).
//!   Wall time of the loop over N.
//! * `spread_p99_us`, `spread_max_us`, `spread_cpu_ms`: one task spawns N
//!   tasks; task i sleeps until `start + i × span / N` (`start` = the
//!   spawning's beginning + the lead) and stores its lateness (now −
//!   deadline) in slot i. Lateness p99 and max; the process's CPU from
//!   `start` until the last task finished (the bench thread blocks on a
//!   condvar meanwhile).
//! * `sleep_1ms_p99_us`: on an otherwise idle runtime one task sleeps 1 ms
//!   N times; p99 of each sleep's overshoot (elapsed − 1 ms).
//! * `stuck_worker_late_max_us`: a task P, spawned from outside, spawns T
//!   (which sleeps until 5 ms from its first poll and returns its lateness),
//!   yields so that T runs and arms its timer on P's worker, then spins
//!   50 ms without yielding, then awaits T. At least 2 workers, so another
//!   worker is idle and can fire the timer. Max lateness over N scenes.
//! * `heartbeat_cpu_per_wake_ns`: N tasks each loop `sleep(1 ms)` and count
//!   their wakes; after the settling time, the process's CPU over the
//!   window divided by the wakes in it.
//! * `idle_cpu_ms_per_s`, `drop_ms`: N tasks each sleep an hour; after the
//!   settling time, the process's CPU over the window, per second; then the
//!   time `drop(runtime)` takes with those N timers pending.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::task::Poll;
use std::thread;
use std::time::{Duration, Instant};

use super::Experiment;
use super::probe::{self, Countdown, us};
use super::sizes::{Sizes, ms};
use crate::common::measure::process_cpu_time;
use crate::common::runtimes::Spawner;
use crate::common::runtimes::timer::TimerRuntime;
use crate::common::stats::percentile;

/// The sleep `arm_cancel_ns` arms and cancels.
pub const ARM_CANCEL_SLEEP: Duration = Duration::from_secs(10);
/// The sleep of `sleep_1ms_p99_us` and of every heartbeat.
pub const SHORT_SLEEP: Duration = Duration::from_millis(1);
/// The sleep of every idle task.
pub const IDLE_SLEEP: Duration = Duration::from_secs(3600);

/// One repetition's figures (in the order of [`Experiment::rows`]) and
/// anything worth a warning.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// One value per row of the experiment.
    pub figures: Vec<f64>,
    /// Conditions that may have skewed the figures.
    pub notes: Vec<String>,
}

/// Runs one repetition of `experiment` on a fresh `R` with `workers`
/// workers (at least 2 for `stuck_worker`), dropping it afterwards.
pub fn measure<R: TimerRuntime>(
    experiment: Experiment,
    sizes: &Sizes,
    workers: usize,
) -> Result<Measured, String> {
    let workers = match experiment {
        Experiment::StuckWorker => workers.max(2),
        _ => workers,
    };
    let rt = R::build_with_timers(workers).map_err(|e| format!("build failed: {e}"))?;
    let figures = |figures| Measured {
        figures,
        notes: Vec::new(),
    };
    let measured = match experiment {
        Experiment::ArmCancel => figures(vec![arm_cancel(&rt, sizes.arm_cancel_iterations)]),
        Experiment::Spread => spread(&rt, sizes)?,
        Experiment::Sleep1ms => figures(vec![sleep_1ms(&rt, sizes.sleep_iterations)?]),
        Experiment::StuckWorker => figures(vec![stuck_worker(&rt, sizes)]),
        Experiment::Heartbeat => figures(vec![heartbeat(&rt, sizes)?]),
        Experiment::Idle => return idle(rt, sizes).map(figures),
        Experiment::BytesPerTimer => return Err("measured in a child process".to_owned()),
    };
    drop(rt);
    Ok(measured)
}

/// Polls `future` exactly once with the task's context, whatever it returns.
pub async fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) {
    poll_fn(|cx| {
        let _ = future.as_mut().poll(cx);
        Poll::Ready(())
    })
    .await;
}

fn arm_cancel<R: TimerRuntime>(rt: &R, iterations: usize) -> f64 {
    let task = async move {
        let start = Instant::now();
        for _ in 0..iterations {
            let sleep = pin!(R::sleep(ARM_CANCEL_SLEEP));
            poll_once(sleep).await;
        }
        start.elapsed().as_nanos() as f64 / iterations.max(1) as f64
    };
    rt.block_on(rt.spawner().spawn(task))
}

/// What the spread tasks share.
struct Spread {
    lateness_ns: Vec<AtomicU64>,
    finished: Countdown,
}

fn spread<R: TimerRuntime>(rt: &R, sizes: &Sizes) -> Result<Measured, String> {
    let timers = sizes.spread_timers.max(1);
    let span_ns = ms(sizes.spread_span_ms).as_nanos();
    let shared = Arc::new(Spread {
        lateness_ns: (0..timers).map(|_| AtomicU64::new(0)).collect(),
        finished: Countdown::new(timers),
    });
    let start = Instant::now() + ms(sizes.spread_lead_ms);
    let (spawner, tasks) = (rt.spawner(), shared.clone());
    let spawning = async move {
        for i in 0..timers {
            let offset = u64::try_from(span_ns * i as u128 / timers as u128).unwrap_or(u64::MAX);
            let deadline = start + Duration::from_nanos(offset);
            let shared = tasks.clone();
            spawner.spawn_detached(async move {
                R::sleep_until(deadline).await;
                let late = Instant::now().saturating_duration_since(deadline);
                shared.lateness_ns[i].store(nanos(late), Relaxed);
                shared.finished.finish();
            });
        }
        Instant::now()
    };
    let spawned = rt.block_on(rt.spawner().spawn(spawning));
    probe::sleep_until(start);
    let cpu_before = process_cpu_time().map_err(|e| format!("getrusage: {e}"))?;
    shared.finished.wait();
    let cpu = process_cpu_time()
        .map_err(|e| format!("getrusage: {e}"))?
        .saturating_sub(cpu_before);
    let lateness: Vec<f64> = shared
        .lateness_ns
        .iter()
        .map(|l| us(l.load(Relaxed)))
        .collect();
    let mut notes = Vec::new();
    if spawned > start {
        notes.push(format!(
            "spawning the spread's {timers} tasks took {:.0} ms past the lead: the first \
             deadlines had passed before their tasks ran",
            (spawned - start).as_secs_f64() * 1e3
        ));
    }
    Ok(Measured {
        figures: vec![
            percentile(&lateness, 0.99).unwrap_or(0.0),
            percentile(&lateness, 1.0).unwrap_or(0.0),
            cpu.as_secs_f64() * 1e3,
        ],
        notes,
    })
}

fn sleep_1ms<R: TimerRuntime>(rt: &R, iterations: usize) -> Result<f64, String> {
    let task = async move {
        let mut overshoots = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let begun = Instant::now();
            R::sleep(SHORT_SLEEP).await;
            overshoots.push(us(nanos(begun.elapsed().saturating_sub(SHORT_SLEEP))));
        }
        overshoots
    };
    let overshoots = rt.block_on(rt.spawner().spawn(task));
    percentile(&overshoots, 0.99).ok_or_else(|| "no sleep measured".to_owned())
}

fn stuck_worker<R: TimerRuntime>(rt: &R, sizes: &Sizes) -> f64 {
    let (delay, spin) = (ms(sizes.stuck_deadline_ms), ms(sizes.stuck_spin_ms));
    let mut worst = 0.0_f64;
    for _ in 0..sizes.stuck_iterations {
        let spawner = rt.spawner();
        let stuck = async move {
            let timer = spawner.spawn(async move {
                let deadline = Instant::now() + delay;
                R::sleep_until(deadline).await;
                Instant::now().saturating_duration_since(deadline)
            });
            // Let T run on this worker and arm its timer here.
            R::Spawner::yield_now().await;
            probe::spin(spin);
            timer.await
        };
        let late = rt.block_on(rt.spawner().spawn(stuck));
        worst = worst.max(us(nanos(late)));
    }
    worst
}

/// A counter alone on its cache line, so that tasks counting on different
/// workers do not share one.
#[repr(align(64))]
#[derive(Default)]
struct Padded(AtomicU64);

/// What the heartbeat tasks share.
struct Heartbeat {
    wakes: Vec<Padded>,
    stop: AtomicBool,
    stopped: Countdown,
}

impl Heartbeat {
    fn total(&self) -> u64 {
        self.wakes.iter().map(|w| w.0.load(Relaxed)).sum()
    }
}

fn heartbeat<R: TimerRuntime>(rt: &R, sizes: &Sizes) -> Result<f64, String> {
    let tasks = sizes.heartbeat_tasks;
    let shared = Arc::new(Heartbeat {
        wakes: (0..tasks).map(|_| Padded::default()).collect(),
        stop: AtomicBool::new(false),
        stopped: Countdown::new(tasks),
    });
    let spawner = rt.spawner();
    for i in 0..tasks {
        let shared = shared.clone();
        spawner.spawn_detached(async move {
            while !shared.stop.load(Relaxed) {
                R::sleep(SHORT_SLEEP).await;
                shared.wakes[i].0.fetch_add(1, Relaxed);
            }
            shared.stopped.finish();
        });
    }
    thread::sleep(ms(sizes.settle_ms));
    let window = cpu_over(ms(sizes.heartbeat_window_ms), || shared.total());
    shared.stop.store(true, Relaxed);
    shared.stopped.wait();
    let (cpu, wakes) = window?;
    if wakes == 0 {
        return Err("no task woke during the window".to_owned());
    }
    Ok(cpu.as_nanos() as f64 / wakes as f64)
}

fn idle<R: TimerRuntime>(rt: R, sizes: &Sizes) -> Result<Vec<f64>, String> {
    let spawner = rt.spawner();
    for _ in 0..sizes.idle_tasks {
        spawner.spawn_detached(async {
            R::sleep(IDLE_SLEEP).await;
        });
    }
    // smol's spawner is its executor: the runtime must hold the last one.
    drop(spawner);
    thread::sleep(ms(sizes.settle_ms));
    let window = ms(sizes.idle_window_ms);
    let (cpu, _) = cpu_over(window, || 0)?;
    let dropping = Instant::now();
    drop(rt);
    let drop_ms = dropping.elapsed().as_secs_f64() * 1e3;
    let cpu_ms_per_s = cpu.as_secs_f64() * 1e3 / window.as_secs_f64().max(1e-9);
    Ok(vec![cpu_ms_per_s, drop_ms])
}

/// The process's CPU time over `window` (the calling thread sleeps
/// through it), and how much `count` grew meanwhile.
fn cpu_over(window: Duration, count: impl Fn() -> u64) -> Result<(Duration, u64), String> {
    let cpu = || process_cpu_time().map_err(|e| format!("getrusage: {e}"));
    let (cpu_before, count_before) = (cpu()?, count());
    thread::sleep(window);
    let (cpu_after, count_after) = (cpu()?, count());
    Ok((
        cpu_after.saturating_sub(cpu_before),
        count_after.saturating_sub(count_before),
    ))
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
