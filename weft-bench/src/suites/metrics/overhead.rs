//! What a `Handle::metrics()` sampler costs the workloads: the suite's
//! scheduler workloads on one weft runtime, in blocks that rotate between
//! three modes:
//!
//! - *off*: nothing runs beside the workload;
//! - *tick*: a thread wakes every millisecond and reads nothing (the
//!   control: what any 1 ms sampler thread costs, whatever it reads);
//! - *on*: a thread calls `Handle::metrics()` every millisecond.
//!
//! `on ÷ off` is what issue 7's target is about; `tick ÷ off` and
//! `on ÷ tick` split it into the cost of waking a thread every millisecond
//! and the cost of the reads themselves.
//!
//! As in the suite, a block sets the workload up, runs warm-up iterations (a
//! quarter of the block), then the measured ones, then tears the set-up
//! down; the sampler thread of a *tick* or *on* block starts before its
//! warm-up and is stopped and joined after its last iteration. The same
//! runtime serves every mode, so what differs between them is the sampler
//! alone, and the order rotates every round (off-tick-on, tick-on-off,
//! on-off-tick, …) so that no mode always follows another. A round is one
//! block of each mode.
//!
//! The *on* sampler also checks what it reads: summed polls never decrease
//! from one snapshot to the next (`decreases` counts those that did).
//!
//! There is no hang detection here (the suite's driver has it): a hung
//! workload hangs the command.

use std::hint::black_box;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::suites::scheduler::result::Iterations;
use crate::common::measure;
use crate::common::others::{self, CpuTimes};
use crate::common::runtimes::{BenchRuntime, Tuning, Weft};
use crate::suites::metrics::nanos;
use crate::suites::scheduler::stats::{self, RoundRatio, Summary};
use crate::suites::scheduler::workloads::Workload;

/// How the overhead is measured.
#[derive(Debug, Clone)]
pub struct OverheadConfig {
    /// Worker threads.
    pub workers: usize,
    /// Rounds (a block of each mode per round).
    pub rounds: usize,
    /// Measured iterations per block = the suite's quick count × this.
    pub iteration_factor: usize,
    /// The sampler's interval.
    pub interval: Duration,
    /// The workloads.
    pub workloads: Vec<Workload>,
}

/// One workload, off against on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverheadResult {
    /// The workload's name.
    pub workload: String,
    /// Measured iterations per block.
    pub iterations_per_round: usize,
    /// Percent of the machine other processes used meanwhile.
    pub others_cpu_pct: Option<f64>,
    /// Nothing beside the workload.
    pub off: Summary,
    /// A thread waking every interval, reading nothing.
    pub tick: Summary,
    /// A thread calling `Handle::metrics()` every interval.
    pub on: Summary,
    /// `on ÷ off`: above 1.0 the sampler slowed the workload down.
    pub on_off: RoundRatio,
    /// `tick ÷ off`: the cost of a thread waking every interval.
    pub tick_off: RoundRatio,
    /// `on ÷ tick`: the cost of the reads themselves.
    pub on_tick: RoundRatio,
    /// What the *tick* sampler did.
    pub tick_sampler: SamplerStats,
    /// What the *on* sampler did.
    pub sampler: SamplerStats,
    /// Every measured iteration of each mode.
    pub iterations: ModeIterations,
}

/// What runs beside the workload in a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Tick,
    On,
}

/// The order of the first round; round `r` rotates it left by `r`.
const MODES: [Mode; 3] = [Mode::Off, Mode::Tick, Mode::On];

/// The per-iteration arrays of every mode.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ModeIterations {
    /// Nothing beside the workload.
    pub off: Iterations,
    /// The idle 1 ms thread.
    pub tick: Iterations,
    /// The `Handle::metrics()` sampler.
    pub on: Iterations,
}

impl ModeIterations {
    fn of(&self, mode: Mode) -> &Iterations {
        match mode {
            Mode::Off => &self.off,
            Mode::Tick => &self.tick,
            Mode::On => &self.on,
        }
    }

    fn of_mut(&mut self, mode: Mode) -> &mut Iterations {
        match mode {
            Mode::Off => &mut self.off,
            Mode::Tick => &mut self.tick,
            Mode::On => &mut self.on,
        }
    }
}

/// What a sampler thread did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplerStats {
    /// Wake-ups (each a `Handle::metrics()` call, but for *tick*).
    pub reads: u64,
    /// Mean time between wake-ups, ms.
    pub mean_period_ms: f64,
    /// Mean duration of one `Handle::metrics()` call, µs (0 for *tick*).
    pub mean_read_us: f64,
    /// Reads whose summed polls were lower than the previous read's.
    pub decreases: u64,
}

/// Measures every workload of `config`; `on_result` sees each as it
/// completes.
pub fn run(
    config: &OverheadConfig,
    mut on_result: impl FnMut(&OverheadResult),
) -> io::Result<Vec<OverheadResult>> {
    let mut results = Vec::with_capacity(config.workloads.len());
    for &workload in &config.workloads {
        let result = run_workload(workload, config)?;
        on_result(&result);
        results.push(result);
    }
    Ok(results)
}

fn run_workload(workload: Workload, config: &OverheadConfig) -> io::Result<OverheadResult> {
    let rt = Weft::build(config.workers, Tuning::default())?;
    let cpu_before = CpuTimes::now();
    let per_round = workload.quick_iterations_per_round() * config.iteration_factor;
    let Measured {
        iterations,
        tick: tick_totals,
        on: on_totals,
    } = run_rounds(&rt, workload, config, per_round)?;
    let others_cpu_pct = others::since(cpu_before);
    let summarize = |mode| {
        stats::summarize(iterations.of(mode), per_round)
            .ok_or_else(|| io::Error::other("no iteration measured"))
    };
    let (off, tick, on) = (
        summarize(Mode::Off)?,
        summarize(Mode::Tick)?,
        summarize(Mode::On)?,
    );
    Ok(OverheadResult {
        workload: workload.name().to_owned(),
        iterations_per_round: per_round,
        others_cpu_pct,
        on_off: RoundRatio::between(&on, &off),
        tick_off: RoundRatio::between(&tick, &off),
        on_tick: RoundRatio::between(&on, &tick),
        off,
        tick,
        on,
        tick_sampler: tick_totals.stats(),
        sampler: on_totals.stats(),
        iterations,
    })
}

/// What the rounds of one workload measured.
struct Measured {
    iterations: ModeIterations,
    tick: SamplerTotals,
    on: SamplerTotals,
}

/// Every round: one block of each mode, in an order that rotates.
fn run_rounds(
    rt: &Weft,
    workload: Workload,
    config: &OverheadConfig,
    per_round: usize,
) -> io::Result<Measured> {
    let mut measured = Measured {
        iterations: ModeIterations::default(),
        tick: SamplerTotals::default(),
        on: SamplerTotals::default(),
    };
    for round in 0..config.rounds {
        let mut order = MODES;
        order.rotate_left(round % MODES.len());
        for mode in order {
            let sampler = match mode {
                Mode::Off => None,
                Mode::Tick => Some(Sampler::start(rt.spawner(), config.interval, false)?),
                Mode::On => Some(Sampler::start(rt.spawner(), config.interval, true)?),
            };
            let samples = run_block(rt, workload, per_round)?;
            if let Some(sampler) = sampler {
                let totals = if mode == Mode::On {
                    &mut measured.on
                } else {
                    &mut measured.tick
                };
                totals.add(sampler.stop());
            }
            let iterations = measured.iterations.of_mut(mode);
            samples.iter().for_each(|s| iterations.push(s));
        }
    }
    Ok(measured)
}

/// One block: set-up, warm-up, measured iterations, tear-down.
fn run_block(rt: &Weft, workload: Workload, iterations: usize) -> io::Result<Vec<measure::Sample>> {
    let mut instance = workload.instantiate(rt);
    for _ in 0..iterations.div_ceil(4) {
        instance.iterate();
    }
    (0..iterations)
        .map(|_| measure::sample(|| instance.iterate(), || None))
        .collect()
}

/// A thread waking every interval until stopped, and reading
/// `Handle::metrics()` each time if asked to.
struct Sampler {
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<SamplerTotals>,
}

impl Sampler {
    fn start(handle: weft::runtime::Handle, interval: Duration, read: bool) -> io::Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("metrics-sampler".to_owned())
            .spawn({
                let stop = stop.clone();
                move || sample_until(read.then_some(&handle), interval, &stop)
            })?;
        Ok(Sampler { stop, thread })
    }

    fn stop(self) -> SamplerTotals {
        self.stop.store(true, Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// The sampler thread's loop; `handle` is `None` for the *tick* control.
fn sample_until(
    handle: Option<&weft::runtime::Handle>,
    interval: Duration,
    stop: &AtomicBool,
) -> SamplerTotals {
    let start = Instant::now();
    let mut totals = SamplerTotals::default();
    let mut last_polls = 0;
    while !stop.load(Relaxed) {
        thread::sleep(interval);
        totals.reads += 1;
        let Some(handle) = handle else { continue };
        let before = Instant::now();
        let metrics = black_box(handle.metrics());
        totals.read_ns += nanos(before.elapsed());
        totals.decreases += u64::from(metrics.total.polls < last_polls);
        last_polls = metrics.total.polls;
    }
    totals.elapsed_ns = nanos(start.elapsed());
    totals
}

/// Sums over the sampler threads of a workload's *on* blocks.
#[derive(Debug, Clone, Copy, Default)]
struct SamplerTotals {
    reads: u64,
    read_ns: u64,
    elapsed_ns: u64,
    decreases: u64,
}

impl SamplerTotals {
    fn add(&mut self, other: SamplerTotals) {
        self.reads += other.reads;
        self.read_ns += other.read_ns;
        self.elapsed_ns += other.elapsed_ns;
        self.decreases += other.decreases;
    }

    fn stats(&self) -> SamplerStats {
        let reads = self.reads.max(1) as f64;
        SamplerStats {
            reads: self.reads,
            mean_period_ms: self.elapsed_ns as f64 / reads / 1e6,
            mean_read_us: self.read_ns as f64 / reads / 1e3,
            decreases: self.decreases,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_run_compares_both_modes() {
        let config = OverheadConfig {
            workers: 2,
            rounds: 2,
            iteration_factor: 1,
            interval: Duration::from_millis(1),
            workloads: vec![Workload::ChainedSpawn],
        };
        let results = run(&config, |_| {}).unwrap();
        let result = &results[0];
        assert_eq!(result.on_off.rounds.len(), 2);
        assert_eq!(
            result.iterations.on.ms.len(),
            2 * result.iterations_per_round
        );
        assert_eq!(
            result.iterations.tick.ms.len(),
            2 * result.iterations_per_round
        );
        assert!(result.sampler.reads > 0 && result.tick_sampler.reads > 0);
        assert_eq!(result.tick_sampler.mean_read_us, 0.0);
        assert_eq!(result.sampler.decreases, 0);
    }
}
