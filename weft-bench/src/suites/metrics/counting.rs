//! The counting experiment, after the published one (see the README): 100
//! tasks on a weft runtime each loop "wait, then count one transaction";
//! for each sampling interval a sampler thread reads the count, and a
//! baseline sampler reads its own count every second beside it.
//!
//! Each transaction is counted three times, right after its wait:
//! `fetch_add(1)` on the *test* atomic, `fetch_add(1)` on the *baseline*
//! atomic (each on its own cache line), and `Counter::add(1)`. Per phase
//! (one sampling interval), the sampler thread, every `interval` of
//! `thread::sleep`:
//!
//! 1. `swap(0)`s the test atomic and reads `Instant::now()`: one count
//!    with the measured time since the previous swap;
//! 2. takes `Counter::sample()`: a count with the instant it was read.
//!
//! The baseline thread `swap(0)`s the baseline atomic every second. The
//! tasks run through every phase of one wait without stopping. When they
//! are stopped and joined, the counts must agree exactly: transactions the
//! tasks report, the Counter's sum, and every swap of either atomic added
//! up ([`Exactness`]).

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use weft::metrics::{Counter, Sample};

use crate::common::others::{self, CpuTimes};
use crate::suites::metrics::estimate::{self, PhaseFigures};
use crate::suites::metrics::nanos;
use crate::suites::metrics::timer::{TimerHandle, TimerService};
use crate::suites::metrics::wait::{Rng, Wait};

/// The published baseline's interval.
pub const BASELINE_INTERVAL: Duration = Duration::from_secs(1);

/// How one wait is measured.
#[derive(Debug, Clone)]
pub struct CountingConfig {
    /// Worker threads of the weft runtime.
    pub workers: usize,
    /// Tasks counting transactions.
    pub tasks: usize,
    /// Each transaction's wait.
    pub wait: Wait,
    /// Sampling intervals, one phase each, in order.
    pub intervals: Vec<Duration>,
    /// A phase lasts this long...
    pub window: Duration,
    /// ...or this many intervals, whichever is longer.
    pub min_samples: u32,
    /// Time the tasks run before the first phase.
    pub warmup: Duration,
    /// The baseline sampler's interval ([`BASELINE_INTERVAL`] in the suite).
    pub baseline_interval: Duration,
}

impl CountingConfig {
    /// How long the phase of `interval` samples.
    pub fn window_for(&self, interval: Duration) -> Duration {
        self.window.max(interval * self.min_samples)
    }
}

/// Everything measured for one wait.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CountingRun {
    /// The wait.
    pub wait: Wait,
    /// Tasks counting transactions.
    pub tasks: usize,
    /// The end-of-run totals.
    pub exactness: Exactness,
    /// One per sampling interval.
    pub phases: Vec<Phase>,
}

/// Totals once every task has stopped: all equal when nothing is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exactness {
    /// Transactions the tasks report having counted.
    pub task_total: u64,
    /// `Counter::sum()`.
    pub counter_total: u64,
    /// Every `swap(0)` of the test atomic, added up (the final one too).
    pub swap_total: u64,
    /// The same for the baseline atomic.
    pub baseline_swap_total: u64,
    /// All four are equal.
    pub exact: bool,
}

/// One sampling interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    /// The sampler's nominal interval, ms.
    pub interval_ms: f64,
    /// How long it sampled (nominal), s.
    pub window_s: f64,
    /// Percent of the machine other processes used meanwhile.
    pub others_cpu_pct: Option<f64>,
    /// Rates, errors and the sampler's real period.
    #[serde(flatten)]
    pub figures: PhaseFigures,
    /// Every sample of the test sampler.
    pub samples: TestSamples,
    /// Every sample of the 1 s baseline sampler.
    pub baseline_samples: BaselineSamples,
}

/// The test sampler's samples, one array element per sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TestSamples {
    /// What each `swap(0)` of the test atomic returned.
    pub swap_counts: Vec<u64>,
    /// Measured time since the previous swap, ns.
    pub swap_dt_ns: Vec<u64>,
    /// Δcount between consecutive `Counter::sample()`s.
    pub counter_counts: Vec<u64>,
    /// Δt between them (`Sample::at`), ns.
    pub counter_dt_ns: Vec<u64>,
    /// `Sample::rate_since` of consecutive samples, transactions/s.
    pub counter_tps: Vec<f64>,
}

/// The baseline sampler's samples.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BaselineSamples {
    /// What each `swap(0)` of the baseline atomic returned.
    pub counts: Vec<u64>,
    /// Measured time since the previous swap, ns.
    pub dt_ns: Vec<u64>,
}

/// What the tasks count into, each on its own cache line.
struct Counts {
    test: Padded,
    baseline: Padded,
    counter: Counter,
    running: AtomicBool,
}

#[repr(align(128))]
struct Padded(AtomicU64);

impl Counts {
    fn transaction(&self) {
        self.test.0.fetch_add(1, Relaxed);
        self.baseline.0.fetch_add(1, Relaxed);
        self.counter.add(1);
    }
}

/// Runs every phase of `config` on a new runtime; `on_phase` sees each
/// phase as it completes.
pub fn run(config: &CountingConfig, mut on_phase: impl FnMut(&Phase)) -> io::Result<CountingRun> {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(config.workers)
        .build()?;
    let timer = TimerService::start()?;
    let counts = Arc::new(Counts {
        test: Padded(AtomicU64::new(0)),
        baseline: Padded(AtomicU64::new(0)),
        counter: Counter::new(),
        running: AtomicBool::new(true),
    });
    let tasks: Vec<_> = (0..config.tasks)
        .map(|index| {
            let task = transactions(counts.clone(), timer.handle(), config.wait, index as u64);
            rt.spawn(task)
        })
        .collect();
    thread::sleep(config.warmup);
    let mut swapped = (0u64, 0u64);
    let mut phases = Vec::with_capacity(config.intervals.len());
    for &interval in &config.intervals {
        let phase = run_phase(&counts, config, interval, &mut swapped);
        on_phase(&phase);
        phases.push(phase);
    }
    counts.running.store(false, Relaxed);
    let mut task_total = 0;
    for task in tasks {
        task_total += rt.block_on(task).map_err(io::Error::other)?;
    }
    drop(timer);
    Ok(CountingRun {
        wait: config.wait,
        tasks: config.tasks,
        exactness: Exactness::check(&counts, task_total, swapped),
        phases,
    })
}

impl Exactness {
    /// Compares the totals once every task has finished; `swapped` is what
    /// the samplers swapped out of (test, baseline) so far.
    fn check(counts: &Counts, task_total: u64, swapped: (u64, u64)) -> Exactness {
        let swap_total = swapped.0 + counts.test.0.swap(0, Relaxed);
        let baseline_swap_total = swapped.1 + counts.baseline.0.swap(0, Relaxed);
        let counter_total = counts.counter.sum();
        Exactness {
            task_total,
            counter_total,
            swap_total,
            baseline_swap_total,
            exact: [counter_total, swap_total, baseline_swap_total]
                .iter()
                .all(|&n| n == task_total),
        }
    }
}

/// One task: wait, count, until stopped; returns how many it counted.
async fn transactions(counts: Arc<Counts>, timer: TimerHandle, wait: Wait, seed: u64) -> u64 {
    let mut rng = Rng::new(seed);
    // Start at a random point of the period, so the tasks do not count in
    // lockstep from the first round on.
    let offset = wait.nominal.mul_f64(rng.next_f64());
    wait.exactly(offset, &timer).await;
    let mut counted = 0;
    while counts.running.load(Relaxed) {
        wait.run(&timer, &mut rng).await;
        counts.transaction();
        counted += 1;
    }
    counted
}

/// One phase: the test sampler and the baseline sampler, each on its own
/// thread, for the interval's window.
fn run_phase(
    counts: &Counts,
    config: &CountingConfig,
    interval: Duration,
    swapped: &mut (u64, u64),
) -> Phase {
    let window = config.window_for(interval);
    let baseline_interval = config.baseline_interval;
    let cpu_before = CpuTimes::now();
    let ((samples, primed), (baseline_samples, baseline_primed)) = thread::scope(|scope| {
        let baseline = scope.spawn(|| sample_baseline(counts, baseline_interval, window));
        let test = scope.spawn(|| sample_test(counts, interval, window));
        (join(test), join(baseline))
    });
    let others_cpu_pct = others::since(cpu_before);
    swapped.0 += primed + samples.swap_counts.iter().sum::<u64>();
    swapped.1 += baseline_primed + baseline_samples.counts.iter().sum::<u64>();
    Phase {
        interval_ms: interval.as_secs_f64() * 1e3,
        window_s: window.as_secs_f64(),
        others_cpu_pct,
        figures: estimate::figures(interval, baseline_interval, &samples, &baseline_samples),
        samples,
        baseline_samples,
    }
}

fn join<T>(handle: thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The test sampler; returns its samples and what its first swap (which
/// starts the window) took out.
fn sample_test(counts: &Counts, interval: Duration, window: Duration) -> (TestSamples, u64) {
    let mut samples = TestSamples::default();
    let mut sampled: Option<Sample> = None;
    let primed = swap_every(&counts.test.0, interval, window, |swap| {
        let sample = counts.counter.sample();
        if let (Some((count, dt)), Some(before)) = (swap, &sampled) {
            samples.swap_counts.push(count);
            samples.swap_dt_ns.push(nanos(dt));
            samples.counter_counts.push(sample.count - before.count);
            samples.counter_dt_ns.push(nanos(sample.at - before.at));
            // `thread::sleep` sleeps at least `interval`, so Δt > 0.
            let tps = sample
                .rate_since(before)
                .expect("time passed between samples");
            samples.counter_tps.push(tps);
        }
        sampled = Some(sample);
    });
    (samples, primed)
}

/// The baseline sampler, every `interval`.
fn sample_baseline(
    counts: &Counts,
    interval: Duration,
    window: Duration,
) -> (BaselineSamples, u64) {
    let mut samples = BaselineSamples::default();
    let primed = swap_every(&counts.baseline.0, interval, window, |swap| {
        if let Some((count, dt)) = swap {
            samples.counts.push(count);
            samples.dt_ns.push(nanos(dt));
        }
    });
    (samples, primed)
}

/// Swaps `count` out every `interval` for `window` (both samplers): the
/// first swap starts the window, and `each` is called right after it with
/// `None`, then after every later swap with what it took out and the time
/// since the swap before. Returns what the first swap took out.
fn swap_every(
    count: &AtomicU64,
    interval: Duration,
    window: Duration,
    mut each: impl FnMut(Option<(u64, Duration)>),
) -> u64 {
    let primed = count.swap(0, Relaxed);
    let mut swapped_at = Instant::now();
    each(None);
    let end = swapped_at + window;
    while swapped_at < end {
        thread::sleep(interval);
        let taken = count.swap(0, Relaxed);
        let now = Instant::now();
        each(Some((taken, now - swapped_at)));
        swapped_at = now;
    }
    primed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::metrics::wait::Mechanism;

    #[test]
    fn a_short_run_counts_exactly() {
        let config = CountingConfig {
            workers: 2,
            tasks: 10,
            wait: Wait {
                nominal: Duration::from_millis(1),
                mechanism: Mechanism::Timer,
            },
            intervals: vec![Duration::from_millis(20), Duration::from_millis(5)],
            window: Duration::from_millis(100),
            min_samples: 2,
            warmup: Duration::from_millis(10),
            baseline_interval: Duration::from_millis(50),
        };
        let mut seen = 0;
        let run = run(&config, |_| seen += 1).unwrap();
        assert_eq!(seen, 2);
        assert!(run.exactness.exact, "{:?}", run.exactness);
        assert!(run.exactness.task_total > 0);
        let phase = &run.phases[1];
        assert!(phase.samples.swap_counts.len() >= 2);
        assert_eq!(
            phase.samples.counter_tps.len(),
            phase.samples.swap_counts.len()
        );
    }
}
