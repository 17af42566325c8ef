//! What the service suite measured: the `service` field of the `--json`
//! document (absent from documents written before the suite existed, so
//! older baselines still parse), the figures `compare` gates, weft's
//! ratios to tokio and its targets (issue 37).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::load::Outcome;
use super::soak::Soak;
use super::{Load, ServiceConfig};
use crate::common::figure::rows::{FigureRow, Gated, SuiteResult, RowKind};
use crate::common::figure::skew::{self, Window};
use crate::common::figure::target::Target;
use crate::common::figure::{Figure, Format, Peer, Run};
use crate::common::latency::Percentiles;
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{SuiteSettings, WindowSettings};

/// Measured requests answered per second (`/fortunes`; `/users`), over tokio's.
pub const REQ_PER_S: Figure<Figures> =
    Figure::higher("req_per_s", "req/s", |f: &Figures| Some(f.req_per_s))
        .with_peer(Peer::Tokio)
        .with_format(Format::Whole);

/// Their p99 latency, over tokio's.
pub const P99: Figure<Figures> = Figure::lower("p99_ms", "ms", |f: &Figures| {
    Some(f.latency.as_ref()?.p99_ms)
})
.with_peer(Peer::Tokio);

/// `/report` answers per second beside the point reads, over tokio's.
pub const REPORTS_PER_S: Figure<Figures> =
    Figure::higher("reports_per_s", "req/s", |f: &Figures| f.reports_per_s).with_peer(Peer::Tokio);

/// The figures `compare` gates on each row. Provisional floors, wide
/// enough for the shared 2-core dev machine until quiet runs set them:
/// 3,000 req/s and 5 ms for `/fortunes`; 20 ms of `/users` p99 and 5
/// reports a second for seed 004.
const FORTUNES_FIGURES: [Figure<Figures>; 2] = [REQ_PER_S.with_floor(3_000.0), P99.with_floor(5.0)];
const SEED004_FIGURES: [Figure<Figures>; 2] = [P99.with_floor(20.0), REPORTS_PER_S.with_floor(5.0)];

/// The figures of the row called `row`.
pub fn figures(row: &str) -> &'static [Figure<Figures>] {
    match Load::from_name(row) {
        Some(Load::Seed004) => &SEED004_FIGURES,
        _ => &FORTUNES_FIGURES,
    }
}

/// The service suite in `compare`.
pub const GATED: Gated<Figures> = Gated::by_row("service", "load", figures);

/// Issue 37's targets, by row: (a) `/fortunes` req/s ≥ 1.0× tokio's;
/// (b) `/users` p99 ≤ 5 ms and ≤ 0.1× tokio's, `/report` per second ≥
/// 0.5× tokio's. Reported, never gating.
pub fn targets(load: Load) -> &'static [Target<Figures>] {
    const FORTUNES: [Target<Figures>; 1] = [Target::ratio(
        "/fortunes req/s ≥ 1.0× tokio's",
        REQ_PER_S,
        1.0,
    )];
    const SEED004: [Target<Figures>; 3] = [
        Target::value("/users p99 ≤ 5 ms", P99, 5.0),
        Target::ratio("/users p99 ≤ 0.1× tokio's", P99, 0.1),
        Target::ratio("/report per s ≥ 0.5× tokio's", REPORTS_PER_S, 0.5),
    ];
    match load {
        Load::Fortunes => &FORTUNES,
        Load::Seed004 => &SEED004,
    }
}

/// One run of the service suite. In JSON:
///
/// ```jsonc
/// "service": {                                   // absent when the suite did not run
///   "settings": { "profile": "quick", "workers": 2, "runtimes": ["weft", "tokio"],
///                 "warmup_ms": 1000.0, "measure_ms": 5000.0, "drain_timeout_ms": 5000.0,
///                 "database": "sqlite",          // or "postgres"
///                 "connections": 64, "users_per_s": 1000.0, "reporters": 2, "report_ms": 50,
///                 "soak_s": 600.0 },                 // --soak only
///   "rows": [{
///     "name": "fortunes_conn64",                 // fortunes_conn64 | seed004
///     "runtimes": {
///       "weft": { "status": "ok",                // failed: "status": "failed", "error": "…", "figures": null
///         "figures": {
///           "req_per_s": 9000.0,                 // /fortunes (or /users) answered in the window, per s
///           "latency": { "count": 45000, "p50_ms": 6.9, … },   // from send (closed loop) or arrival (open loop)
///           "reports_per_s": 24.8,               // seed004 only
///           "errors": 0,                         // failed requests or wrong answers, warm-up included
///           "generator_cpu_ms_per_s": 640.0,     // the load generator's process
///           "window_s": 5.0, "cpu_ms_per_s": 1890.0,   // the server process's CPU
///           "unfinished": 0, "others_cpu_pct": 3.0,
///           "soak": {                            // --soak only (seed004 alone)
///             "reference_after_s": 60.0,
///             "samples": [ { "t_s": 0.0, "rss_kib": 9000, "threads": 5, "fds": 12,
///                            "client_connections": 2,           // the generator's, to the server
///                            "users": 0, "reports": 0, "users_p99_ms": null, "cpu_ms_per_s": 0.0,
///                            "errors": { "status": 0, "io": 0, "timeout": 0 } }, … ],  // every 10 s and at the end
///             "verdict": { "reference_t_s": 60.0, "rss_ratio": 1.01, "threads_ratio": 1.0,
///                          "fds_ratio": 1.0, "errors": 0,     // fds: less client_connections "passed": true } } } },
///       "tokio": { … }
///     },
///     "ratios": { "req_per_s": { "peer": "tokio", "value": 1.02 }, … },   // weft's over tokio's
///     "targets": [ { "runtime": "weft", "target": "/fortunes req/s ≥ 1.0× tokio's",
///                    "figure": "req_per_s_vs_tokio", "limit": 1.0, "value": 1.02, "met": true } ]
///   }, …],
///   "others_cpu_pct": 4.0, "warnings": ["…"]
/// }
/// ```
pub type ServiceResult = SuiteResult<ServiceSettings, ServiceRow>;

/// How the service suite was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServiceSettings {
    #[serde(flatten)]
    pub suite: SuiteSettings,
    #[serde(flatten)]
    pub window: WindowSettings,
    /// `sqlite` or `postgres`.
    pub database: String,
    /// The `/fortunes` closed loop's connections.
    pub connections: usize,
    /// Seed 004's point reads per second (open loop).
    pub users_per_s: f64,
    /// Its closed-loop `/report` clients, and the CPU each report asks.
    pub reporters: usize,
    pub report_ms: u64,
    /// A soak's length, s (`--soak`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak_s: Option<f64>,
}

impl ServiceSettings {
    pub fn new(config: &ServiceConfig) -> ServiceSettings {
        ServiceSettings {
            suite: config.setup.settings(RuntimeKind::name),
            window: WindowSettings::new(
                config.plan.warmup,
                config.plan.measure,
                config.plan.drain_timeout,
            ),
            database: if config.database.is_some() {
                "postgres"
            } else {
                "sqlite"
            }
            .to_owned(),
            connections: config.connections,
            users_per_s: config.users_per_s,
            reporters: config.reporters,
            report_ms: config.report_ms,
            soak_s: config.soak.as_ref().map(|soak| soak.duration.as_secs_f64()),
        }
    }
}

/// One load on every runtime, with weft's ratio on each of its
/// [`figures`] and its [`targets`].
pub type ServiceRow = FigureRow<Figures>;

impl ServiceRow {
    /// The row of `load` from every runtime's run.
    pub fn of(load: Load, runtimes: BTreeMap<String, ServiceRun>) -> ServiceRow {
        FigureRow::new(load.name(), runtimes, figures(load.name()), targets(load))
    }
}

/// One runtime's run of a load.
pub type ServiceRun = Run<Figures>;

/// The figures of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Measured requests answered in the window, per second.
    pub req_per_s: f64,
    /// Their latencies; `None` if none finished.
    pub latency: Option<Percentiles>,
    /// `/report` answers in the window, per second (seed 004).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reports_per_s: Option<f64>,
    /// Failed requests and wrong answers, warm-up included.
    pub errors: u64,
    /// The first of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The load generator's process CPU over the window, ms per s.
    pub generator_cpu_ms_per_s: f64,
    /// The window; its `cpu_ms_per_s` is the *server* process's CPU.
    #[serde(flatten)]
    pub window: Window,
    /// A soak's samples and verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<Soak>,
}

skew::impl_windowed!(Figures);

impl ServiceRun {
    /// The figures of a generator's outcome on `load`.
    pub fn from_outcome(load: Load, outcome: &Outcome) -> ServiceRun {
        if outcome.finished == 0 {
            let why = outcome
                .first_error
                .as_deref()
                .unwrap_or("no request finished");
            return Run::failed(format!("nothing answered in the window: {why}"));
        }
        let window = outcome.readings.window();
        let per_s = |d: std::time::Duration| {
            d.as_secs_f64() * 1e3 / outcome.readings.cpu_window.as_secs_f64().max(1e-9)
        };
        Run::completed(Figures {
            req_per_s: window.per_s(outcome.finished),
            latency: outcome.latency.summary(),
            reports_per_s: (load == Load::Seed004).then(|| window.per_s(outcome.reports)),
            errors: outcome.errors,
            first_error: outcome.first_error.clone(),
            generator_cpu_ms_per_s: per_s(outcome.generator_cpu),
            window,
            soak: outcome.soak.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::figure::skew::Readings;
    use crate::common::latency::Recorder;
    use std::time::Duration;

    fn outcome(finished: u64, reports: u64, latency_ms: u64) -> Outcome {
        Outcome {
            finished,
            reports,
            latency: Recorder::hundred(Duration::from_millis(latency_ms)),
            readings: Readings::steady(Duration::from_secs(5), Duration::from_secs(8)),
            generator_cpu: Duration::from_secs(1),
            ..Outcome::default()
        }
    }

    fn runs(load: Load, values: &[(&str, u64, u64, u64)]) -> BTreeMap<String, ServiceRun> {
        values
            .iter()
            .map(|&(name, finished, reports, ms)| {
                let run = ServiceRun::from_outcome(load, &outcome(finished, reports, ms));
                (name.to_owned(), run)
            })
            .collect()
    }

    #[test]
    fn figures_are_per_second_of_the_window_and_the_servers_cpu() {
        let run = ServiceRun::from_outcome(Load::Seed004, &outcome(5_000, 100, 3));
        let f = run.ok().unwrap();
        assert_eq!((f.req_per_s, f.reports_per_s), (1_000.0, Some(20.0)));
        assert_eq!(f.window.cpu_ms_per_s, 1_600.0);
        assert_eq!(f.generator_cpu_ms_per_s, 200.0);
        assert!(
            ServiceRun::from_outcome(Load::Fortunes, &outcome(1, 9, 1))
                .ok()
                .unwrap()
                .reports_per_s
                .is_none()
        );
        assert!(
            ServiceRun::from_outcome(Load::Fortunes, &outcome(0, 0, 1))
                .ok()
                .is_none()
        );
    }

    #[test]
    fn the_targets_are_the_issues_against_tokio() {
        // weft: p99 4 ms (tokio 60 ms: 0.067×), reports 0.6× tokio's.
        let row = ServiceRow::of(
            Load::Seed004,
            runs(
                Load::Seed004,
                &[("weft", 5_000, 60, 4), ("tokio", 5_000, 100, 60)],
            ),
        );
        let verdicts: Vec<(&str, Option<bool>)> = row
            .targets
            .iter()
            .map(|c| (c.figure.as_str(), c.met))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("p99_ms", Some(true)),
                ("p99_ms_vs_tokio", Some(true)),
                ("reports_per_s_vs_tokio", Some(true)),
            ]
        );
        assert_eq!(row.ratios["reports_per_s"].peer, "tokio");
        // /fortunes at 0.9× tokio's req/s: missed.
        let row = ServiceRow::of(
            Load::Fortunes,
            runs(
                Load::Fortunes,
                &[("weft", 9_000, 0, 5), ("tokio", 10_000, 0, 5)],
            ),
        );
        assert_eq!(row.targets[0].met, Some(false));
        assert_eq!(GATED.figures("seed004")[1].name, "reports_per_s");
    }
}
