//! What the suites' smoke tests share (each test binary uses a part).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use weft_bench::common::figure::skew::Windowed;
use weft_bench::common::figure::{Attempt, FiguresOf, Row};
use weft_bench::common::latency::Percentiles;
use weft_bench::common::setup::Profile;
use weft_bench::common::setup::Setup;

/// The quick profile on 2 workers with `runtimes`, as every smoke test
/// sets a suite up.
pub fn quick<K: Copy>(runtimes: &[K]) -> Setup<K> {
    Setup::new(Profile::Quick, 2, runtimes)
}

/// Runs a suite with tiny timing, `run`, and checks that it stayed tiny:
/// `limit` is far above its time on the 2-core dev machine, so that it
/// catches tiny timing grown into real timing without failing a loaded
/// machine.
pub fn tiny_suite<T>(limit: Duration, run: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = run();
    let took = started.elapsed();
    assert!(took < limit, "the tiny suite took {took:?}");
    result
}

/// The figures of `runtime`'s run among `runs`, which must have completed
/// with latencies in order, the process's CPU, and nothing left
/// unfinished; `latencies` finds them in the figures.
pub fn completed<'a, A>(
    runs: &'a BTreeMap<String, A>,
    runtime: &str,
    latencies: fn(&A::Figures) -> Option<&Percentiles>,
) -> &'a A::Figures
where
    A: Attempt + Debug,
    A::Figures: Windowed + Debug,
{
    let run = &runs[runtime];
    let figures = run.ok().unwrap_or_else(|| panic!("{runtime}: {run:?}"));
    let p = latencies(figures).unwrap_or_else(|| panic!("{runtime}: no latencies"));
    assert!(p.count > 0 && p.p50_ms > 0.0, "{figures:?}");
    assert!(p.p50_ms <= p.p99_ms && p.p99_ms <= p.max_ms, "{figures:?}");
    assert!(figures.window().cpu_ms_per_s > 0.0, "{figures:?}");
    assert_eq!(figures.window().unfinished, 0, "{figures:?}");
    figures
}

/// Every row of `rows` by each of `runtimes`: its name, the runtime's
/// and its figures, each [`completed`].
pub fn every_run<R>(
    rows: &[R],
    runtimes: impl IntoIterator<Item = &'static str> + Clone,
    latencies: fn(&FiguresOf<R>) -> Option<&Percentiles>,
) -> Vec<(&str, &'static str, &FiguresOf<R>)>
where
    R: Row,
    R::Run: Debug,
    FiguresOf<R>: Windowed + Debug,
{
    let mut runs = Vec::new();
    for row in rows {
        for runtime in runtimes.clone() {
            runs.push((
                row.name(),
                runtime,
                completed(row.runs(), runtime, latencies),
            ));
        }
    }
    runs
}

/// `value` read back from its JSON, which must write the same JSON again.
pub fn round_trip<T: Serialize + DeserializeOwned>(value: &T) -> T {
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
    back
}
