//! What the lanes' smoke tests share (each test binary uses a part).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use weft_bench::figure::Run;
use weft_bench::figure::skew::Window;
use weft_bench::mixed::latency::Percentiles;

/// Runs a lane with tiny timing, `run`, and checks that it stayed tiny:
/// `limit` is far above its time on the 2-core dev machine, so that it
/// catches tiny timing grown into real timing without failing a loaded
/// machine.
pub fn tiny_lane<T>(limit: Duration, run: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = run();
    let took = started.elapsed();
    assert!(took < limit, "the tiny lane took {took:?}");
    result
}

/// The figures of `runtime`'s run among `runs`, which must have completed
/// with latencies in order, the process's CPU, and nothing left
/// unfinished; `latencies` finds them in the figures.
pub fn completed<'a, F: Debug>(
    runs: &'a BTreeMap<String, Run<F>>,
    runtime: &str,
    latencies: fn(&F) -> Option<&Percentiles>,
    window: fn(&F) -> &Window,
) -> &'a F {
    let run = &runs[runtime];
    let figures = run.ok().unwrap_or_else(|| panic!("{runtime}: {run:?}"));
    let p = latencies(figures).unwrap_or_else(|| panic!("{runtime}: no latencies"));
    assert!(p.count > 0 && p.p50_ms > 0.0, "{figures:?}");
    assert!(p.p50_ms <= p.p99_ms && p.p99_ms <= p.max_ms, "{figures:?}");
    assert!(window(figures).cpu_ms_per_s > 0.0, "{figures:?}");
    assert_eq!(window(figures).unfinished, 0, "{figures:?}");
    figures
}
