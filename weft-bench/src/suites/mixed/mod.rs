//! The mixed suite, `weft-bench mixed` (and in the default
//! run): short requests (~150 µs of CPU in one poll) and long ones (~50 ms
//! in one poll) on one runtime with 2 workers, the clients outside the
//! runtime: does a long poll hold up the short work queued behind it
//! (DESIGN.md, point 2)?
//!
//! | load | short requests | long requests |
//! |---|---|---|
//! | `closed_32_2` | 32 closed-loop clients | 2 closed-loop clients |
//! | `closed_128_8` | 128 closed-loop clients | 8 closed-loop clients |
//! | `open_2000` | Poisson arrivals, 2,000/s | 2 closed-loop clients |
//!
//! A closed-loop client has exactly one request outstanding and resubmits
//! as soon as it completes; open-loop arrivals come on schedule whatever
//! the runtime does. Every request goes in through the runtime's handle
//! from one generator thread ([`generator`]), which receives completions
//! on a std channel and records latencies ([`crate::common::latency`]); the work is a
//! calibrated integer loop ([`burn`]), the open loop's schedule a seeded
//! Poisson process ([`crate::common::schedule`]).
//!
//! The runtimes ([`Variant`]): weft with its defaults, weft with the stall
//! monitor off, weft with slow-task demotion off, tokio, smol; then the
//! [`oracle`], a scheduler told each request's kind, which shows what the
//! machine allows (never a peer in the ratios). Each
//! (load, runtime) pair runs on a runtime built for it and dropped after
//! it, on a thread of its own that is abandoned (with a warning) if it does
//! not answer in time; the pairs run one after the other, so only one
//! runtime is ever alive. [`result`] is the JSON, the figures `compare`
//! gates and the ratios, [`targets`] the targets, [`report`] the table and
//! [`chart`] the SVG. Targets are reported, met or missed; a missed
//! target never fails the run (only a runtime that failed does).

pub mod burn;
pub mod chart;
pub mod generator;
pub mod oracle;
pub mod report;
pub mod result;
pub mod suite;
pub mod targets;

pub use suite::Mixed;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

use crate::common::figure::rows::RowKind;
use crate::common::figure::skew::Watch;
use crate::common::runtimes::{BenchRuntime, RuntimeKind, Smol, Tokio, Tuning, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::common::thread::on_thread;

use burn::{Burner, Calibration};
use generator::{Outcome, Plan};
use oracle::Oracle;
use result::{LoadResult, MixedResult, MixedRun, MixedSettings};

crate::common::figure::rows::rows! {
    /// One load of the suite.
    pub enum Load {
        /// 32 short and 2 long closed-loop clients.
        Closed32x2 = ("closed_32_2", "closed 32+2"),
        /// 128 short and 8 long closed-loop clients.
        Closed128x8 = ("closed_128_8", "closed 128+8"),
        /// Short arrivals at 2,000/s (Poisson), 2 long closed-loop clients.
        Open2000 = ("open_2000", "open 2000/s+2"),
    }
}

impl Load {
    /// (closed-loop short clients, open-loop short rate, long clients).
    fn shape(self) -> (u32, Option<f64>, u32) {
        match self {
            Load::Closed32x2 => (32, None, 2),
            Load::Closed128x8 => (128, None, 8),
            Load::Open2000 => (0, Some(2_000.0), 2),
        }
    }
}

/// A runtime of the suite: the three runtimes, and weft with each of the
/// two mechanisms aimed at this load switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Variant {
    /// weft with its defaults.
    #[value(name = "weft")]
    Weft,
    /// weft with `Builder::stall_monitor(false)`.
    #[value(name = "weft-no-stall-monitor")]
    WeftNoStallMonitor,
    /// weft with `Builder::demote_slow_tasks(false)`.
    #[value(name = "weft-no-demote")]
    WeftNoDemote,
    /// tokio's multi-thread runtime.
    #[value(name = "tokio")]
    Tokio,
    /// smol's executor run by the worker threads.
    #[value(name = "smol")]
    Smol,
}

impl Variant {
    /// Every runtime, in the order each load runs them.
    pub const ALL: [Variant; 5] = [
        Variant::Weft,
        Variant::WeftNoStallMonitor,
        Variant::WeftNoDemote,
        Variant::Tokio,
        Variant::Smol,
    ];

    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Weft => "weft",
            Variant::WeftNoStallMonitor => "weft-no-stall-monitor",
            Variant::WeftNoDemote => "weft-no-demote",
            Variant::Tokio => "tokio",
            Variant::Smol => "smol",
        }
    }

    /// The runtime it builds.
    pub fn kind(self) -> RuntimeKind {
        match self {
            Variant::Weft | Variant::WeftNoStallMonitor | Variant::WeftNoDemote => {
                RuntimeKind::Weft
            }
            Variant::Tokio => RuntimeKind::Tokio,
            Variant::Smol => RuntimeKind::Smol,
        }
    }

    /// weft's settings for it (ignored by the peers).
    fn tuning(self) -> Tuning {
        Tuning {
            stall_monitor: self != Variant::WeftNoStallMonitor,
            demote_slow_tasks: self != Variant::WeftNoDemote,
            ..Tuning::default()
        }
    }

    /// The variants of the runtimes in `kinds` (weft: all three), in order.
    pub fn of(kinds: &[RuntimeKind]) -> Vec<Variant> {
        Variant::ALL
            .into_iter()
            .filter(|v| kinds.contains(&v.kind()))
            .collect()
    }
}

/// How long each (load, runtime) pair runs, and the requests' sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Excluded from every figure.
    pub warmup: Duration,
    /// The measured window.
    pub measure: Duration,
    /// Longest wait for the window's requests after it.
    pub drain_timeout: Duration,
    /// CPU of a short request.
    pub short_cpu: Duration,
    /// CPU of a long request.
    pub long_cpu: Duration,
}

impl Timing {
    /// The timing of `profile`. Quick: 0.2 s warm-up and 1.5 s measured
    /// per pair, about 30 s for the 15 pairs on two cores; full: 0.5 s and
    /// 6 s (four times the samples in the tails).
    pub fn of(profile: Profile) -> Timing {
        let quick = Timing {
            warmup: Duration::from_millis(200),
            measure: Duration::from_millis(1_500),
            drain_timeout: Duration::from_secs(10),
            short_cpu: Duration::from_micros(150),
            long_cpu: Duration::from_millis(50),
        };
        match profile {
            Profile::Quick => quick,
            Profile::Full => Timing {
                warmup: Duration::from_millis(500),
                measure: Duration::from_secs(6),
                ..quick
            },
        }
    }

    /// For smoke tests: every pair in a fraction of a second, requests a
    /// tenth of their size (not meaningful as measurements).
    pub fn tiny() -> Timing {
        Timing {
            warmup: Duration::from_millis(20),
            measure: Duration::from_millis(300),
            drain_timeout: Duration::from_secs(5),
            short_cpu: Duration::from_micros(15),
            long_cpu: Duration::from_millis(5),
        }
    }
}

/// The open loop's schedule seed: the same arrivals for every runtime and
/// every run (small, so that any JSON reader keeps it exact).
const SEED: u64 = 2_000;

/// How long the generator spins before an open-loop arrival instead of
/// sleeping: at 2,000 arrivals a second, 20 µs each is 4% of one core.
const SPIN: Duration = Duration::from_micros(20);

/// Everything a run of the mixed suite needs to know.
#[derive(Debug, Clone)]
pub struct MixedConfig {
    /// Profile, workers, the runtimes in the order each load runs them.
    pub setup: Setup<Variant>,
    /// Durations and request sizes.
    pub timing: Timing,
    /// The loads, in order.
    pub loads: Vec<Load>,
    /// Whether each load also runs on the oracle ([`oracle`]), after the
    /// runtimes.
    pub oracle: bool,
    /// Where the chart goes (`None`: [`chart::path_for`] `--json`).
    pub chart: Option<PathBuf>,
}

impl MixedConfig {
    /// The default configuration of `setup`: every load, the profile's
    /// timing, the oracle.
    pub fn new(setup: Setup<Variant>) -> MixedConfig {
        MixedConfig {
            timing: Timing::of(setup.profile),
            loads: Load::ALL.to_vec(),
            oracle: true,
            chart: None,
            setup,
        }
    }

    fn plan(&self, load: Load) -> Plan {
        let (short_clients, short_rate_per_s, long_clients) = load.shape();
        let t = &self.timing;
        Plan {
            short_clients,
            short_rate_per_s,
            long_clients,
            short_cpu: t.short_cpu,
            long_cpu: t.long_cpu,
            warmup: t.warmup,
            measure: t.measure,
            drain_timeout: t.drain_timeout,
            seed: SEED,
            spin: SPIN,
        }
    }

    /// Longest wait for one pair: its run, its drain and building and
    /// dropping the runtime, with room for a loaded machine.
    fn timeout(&self) -> Duration {
        let t = &self.timing;
        t.warmup + t.measure + t.drain_timeout + Duration::from_secs(30)
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &MixedConfig) -> MixedResult {
    let mut watch = Watch::start("mixed");
    let burner = Burner::calibrate();
    let mut calibration = Calibration {
        iterations_per_us: burner.iterations_per_us,
        end_iterations_per_us: None,
        short_measured_us: burner.measure(config.timing.short_cpu, 21).as_secs_f64() * 1e6,
        long_measured_ms: burner.measure(config.timing.long_cpu, 3).as_secs_f64() * 1e3,
    };
    let mut loads = Vec::new();
    for &load in &config.loads {
        let mut runs = BTreeMap::new();
        let oracle = config.oracle.then_some(None);
        for variant in config
            .setup
            .runtimes
            .iter()
            .copied()
            .map(Some)
            .chain(oracle)
        {
            let name = variant.map_or(result::ORACLE, Variant::name);
            let measured = measure(variant, load, config, burner, &mut watch.warnings);
            let run = measured.map_or_else(MixedRun::failed, |o| MixedRun::from_outcome(&o));
            eprintln!(
                "weft-bench: mixed: {} on {name}: {}",
                load.label(),
                report::one_line(&run)
            );
            let what = format!("mixed: {} on {name}", load.name());
            watch.window(&what, &run, "requests", config.timing.drain_timeout);
            watch
                .warnings
                .extend(run.ok().and_then(|f| lag_note(&what, f)));
            runs.insert(name.to_owned(), run);
        }
        loads.push(LoadResult::new(load, runs));
    }
    calibration.end_iterations_per_us = Some(Burner::calibrate().iterations_per_us);
    if let Some(drift) = calibration.drift_pct().filter(|d| d.abs() >= 10.0) {
        watch.warnings.push(format!(
            "mixed: the work loop ran {drift:+.0}% faster at the end than at the start: the \
             requests burnt {} CPU than asked",
            if drift > 0.0 { "less" } else { "more" }
        ));
    }
    MixedResult {
        settings: MixedSettings::new(config, SEED, SPIN),
        calibration,
        loads,
        skew: watch.finish(),
    }
}

/// A warning about one pair (`what`) whose generator was so late that the
/// open loop's tail is partly its.
fn lag_note(what: &str, figures: &result::Figures) -> Option<String> {
    let lag = figures.submit_lag_p99_ms.filter(|&lag| lag >= 1.0)?;
    let own = figures
        .short_from_submit
        .as_ref()
        .map_or(String::new(), |p| {
            format!(
                " (from submission: p99 {:.1} ms, p99.9 {:.1} ms)",
                p.p99_ms, p.p999_ms
            )
        });
    Some(format!(
        "{what}: the generator submitted arrivals up to {lag:.1} ms late (p99); that lateness \
         is part of the latencies{own}"
    ))
}

/// One load on one runtime (`None`: on the oracle), on a thread of its
/// own, abandoned if it does not answer within the timeout.
fn measure(
    variant: Option<Variant>,
    load: Load,
    config: &MixedConfig,
    burner: Burner,
    warnings: &mut Vec<String>,
) -> Result<Outcome, String> {
    let (plan, workers, timeout) = (config.plan(load), config.setup.workers, config.timeout());
    let name = variant.map_or(result::ORACLE, Variant::name);
    let work = move || {
        let outcome = match variant {
            Some(variant) => {
                let tuning = variant.tuning();
                match variant.kind() {
                    RuntimeKind::Weft => on::<Weft>(workers, tuning, burner, &plan),
                    RuntimeKind::Tokio => on::<Tokio>(workers, tuning, burner, &plan),
                    RuntimeKind::Smol => on::<Smol>(workers, tuning, burner, &plan),
                }
            }
            // A short thread per worker, a long thread per long client.
            None => Oracle::start(workers, plan.long_clients as usize)
                .and_then(|oracle| generator::run(&oracle, burner, &plan)),
        };
        outcome.map_err(|e| e.to_string())
    };
    let abandoned = || {
        warnings.push(format!(
            "mixed: {name} abandoned in {} after {} s; it may still be running and disturb \
             what follows",
            load.name(),
            timeout.as_secs()
        ));
    };
    on_thread(format!("mixed-{name}"), timeout, work, abandoned)
}

/// Builds `R`, runs the plan against it from this thread, drops it.
fn on<R: BenchRuntime>(
    workers: usize,
    tuning: Tuning,
    burner: Burner,
    plan: &Plan,
) -> std::io::Result<Outcome> {
    let rt = R::build(workers, tuning)?;
    let threads_started = || rt.threads_started();
    let mut outcome = generator::run_counting(&rt.spawner(), burner, plan, &threads_started)?;
    outcome.monitor = rt.monitor_counters();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_follow_the_runtimes() {
        assert_eq!(
            Variant::of(&[RuntimeKind::Tokio, RuntimeKind::Weft]),
            [
                Variant::Weft,
                Variant::WeftNoStallMonitor,
                Variant::WeftNoDemote,
                Variant::Tokio
            ]
        );
        assert!(!Variant::WeftNoStallMonitor.tuning().stall_monitor);
        assert!(Variant::WeftNoStallMonitor.tuning().demote_slow_tasks);
        assert!(!Variant::WeftNoDemote.tuning().demote_slow_tasks);
        assert_eq!(Variant::Tokio.tuning(), Tuning::default());
    }
}
