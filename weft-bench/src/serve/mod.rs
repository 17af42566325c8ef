//! What the echo and HTTP suites share: servers on each runtime (and the
//! floor, a server with no runtime) under one load generator outside them.
//!
//! A suite of servers runs each row on every runtime, one after the other,
//! and then on the floor ([`floor`]), each pair (server, load) on a thread
//! of its own that is abandoned (with a warning) if it does not answer in
//! time (`run_row`, `measure_pair`); only one server is ever alive.
//! [`server`] runs a runtime's accept loop, [`load`] is what every load
//! generator shares (its plan, pacing, window and outcome), [`cost`]
//! counts the server's own CPU and system calls with perf, [`result`] is
//! the rows' JSON and figures, [`report`] their tables.

pub mod cost;
pub mod floor;
pub mod load;
pub mod report;
pub mod result;
pub mod server;
pub mod summary;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::figure::skew::Watch;
use crate::common::figure::target::Target;
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::Profile;
use crate::common::setup::{Setup, SuiteSettings, WindowSettings};
use crate::common::thread::catch_panic;

use cost::Probe;
use floor::FLOOR;
use load::{Outcome, Plan, RunOptions};
use result::{Figures, Paced, ServedRun};
use server::Serving;

/// How long each (row, runtime) pair runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Excluded from every figure.
    pub warmup: Duration,
    /// The measured window.
    pub measure: Duration,
    /// Longest wait for the window's round trips after it.
    pub drain_timeout: Duration,
    /// Longest time without an echo before a server is taken for hung.
    pub stall_timeout: Duration,
}

impl Timing {
    /// A window of `quick` or `full` (by `profile`) after a warm-up of
    /// 0.5 s (1 s in full), with 5 s for the drain and for a stall (the
    /// HTTP suite's timing too).
    pub fn measuring(profile: Profile, quick: Duration, full: Duration) -> Timing {
        let (warmup, measure) = match profile {
            Profile::Quick => (Duration::from_millis(500), quick),
            Profile::Full => (Duration::from_secs(1), full),
        };
        Timing {
            warmup,
            measure,
            drain_timeout: Duration::from_secs(5),
            stall_timeout: Duration::from_secs(5),
        }
    }

    /// A generator's plan of `connections` sending `message_bytes` (the
    /// HTTP generator ignores them) on this timing, at `rate_per_s` if
    /// given.
    pub fn plan(&self, connections: usize, message_bytes: usize, rate_per_s: Option<f64>) -> Plan {
        Plan {
            connections,
            message_bytes,
            warmup: self.warmup,
            measure: self.measure,
            drain_timeout: self.drain_timeout,
            stall_timeout: self.stall_timeout,
            options: RunOptions {
                rate_per_s,
                probe: None,
            },
        }
    }

    /// The window as the document records it.
    pub fn window(&self) -> WindowSettings {
        WindowSettings::new(self.warmup, self.measure, self.drain_timeout)
    }

    /// Longest wait for one run's figures: its run and drain, a stall,
    /// and building the runtime, with room for a loaded machine.
    pub fn timeout(&self) -> Duration {
        self.warmup
            + self.measure
            + self.drain_timeout
            + self.stall_timeout
            + Duration::from_secs(30)
    }

    /// For smoke tests: every pair in a fraction of a second (not
    /// meaningful as measurements), with a window long enough that a run
    /// paced at a low rate on a loaded machine still completes requests.
    pub fn tiny() -> Timing {
        Timing {
            warmup: Duration::from_millis(30),
            measure: Duration::from_millis(300),
            drain_timeout: Duration::from_secs(5),
            stall_timeout: Duration::from_secs(5),
        }
    }
}
/// Longest wait for a server to stop once its generator is done.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A row of a suite of servers under one load generator (the echo suite's
/// rows, the HTTP suite's one), as its progress lines and warnings name it.
pub(crate) struct Served<'a> {
    /// The suite.
    pub suite: &'static str,
    /// The row's name in JSON.
    pub name: &'a str,
    /// Its label in tables.
    pub label: &'a str,
    /// What its requests are called (`round trips`).
    pub units: &'static str,
    /// A run's progress line.
    pub line: fn(&ServedRun) -> String,
}

/// The share of tokio's req/s (at the suite's load, in the same run) that
/// a row's paced runs are sent.
pub const PACED_SHARE: f64 = 0.6;

/// What [`run_row`] needs of a suite's configuration.
pub(crate) trait ServeConfig {
    /// Profile, workers, runtimes.
    fn setup(&self) -> &Setup;
    /// Durations.
    fn timing(&self) -> &Timing;
    /// Whether the floor runs after the runtimes.
    fn floor(&self) -> bool;

    /// The servers a row runs on, in order: the runtimes, then (`None`)
    /// the floor.
    fn servers(&self) -> Vec<Option<RuntimeKind>> {
        let runtimes = self.setup().runtimes.iter().copied().map(Some);
        runtimes.chain(self.floor().then_some(None)).collect()
    }

    /// The suite's settings in the document: the floor is listed last.
    fn settings(&self) -> SuiteSettings {
        let names = self.servers().into_iter().map(server_name);
        let setup = self.setup();
        SuiteSettings::new(setup.profile, setup.workers, names)
    }
}

/// A server's name in the runs: its runtime's, or [`FLOOR`].
pub fn server_name(server: Option<RuntimeKind>) -> &'static str {
    server.map_or(FLOOR, RuntimeKind::name)
}

/// Runs `row` on every runtime of the suite, one after the other (and on
/// the floor, if the suite runs it), and then, if the row has `cost`
/// targets and tokio completed it, again on each of them at
/// [`PACED_SHARE`] of tokio's req/s. `measure` measures one server (`None`:
/// the floor) at a rate (`None`: the suite's load; a run it abandons warns
/// through the watch).
pub(crate) fn run_row(
    row: &Served,
    suite: &impl ServeConfig,
    watch: &mut Watch,
    cost: &'static [Target<Figures>],
    mut measure: impl FnMut(Option<RuntimeKind>, Option<f64>, &mut Watch) -> Result<Outcome, String>,
) -> (BTreeMap<String, ServedRun>, Option<Paced>) {
    let runs = run_runtimes(row, suite, watch, None, &mut measure);
    let tokio = runs.get(RuntimeKind::Tokio.name()).and_then(|r| r.ok());
    let rate = tokio
        .map(|f| f.req_per_s * PACED_SHARE)
        .filter(|_| !cost.is_empty());
    let paced = rate.map(|rate| {
        let paced = run_runtimes(row, suite, watch, Some(rate), &mut measure);
        Paced::new(row.name, rate, paced, cost)
    });
    (runs, paced)
}

/// Runs `row` on every server of the suite at `rate` (`None`: the suite's
/// load): prints each run's progress line and warns about its window.
fn run_runtimes(
    row: &Served,
    suite: &impl ServeConfig,
    watch: &mut Watch,
    rate: Option<f64>,
    measure: &mut impl FnMut(Option<RuntimeKind>, Option<f64>, &mut Watch) -> Result<Outcome, String>,
) -> BTreeMap<String, ServedRun> {
    let mut runs = BTreeMap::new();
    let paced = rate.map_or(String::new(), |r| format!(" at {r:.0}/s"));
    for server in suite.servers() {
        let name = server_name(server);
        let measured = measure(server, rate, watch);
        let run = measured.map_or_else(ServedRun::failed, |o| ServedRun::from_outcome(&o));
        let line = (row.line)(&run);
        eprintln!(
            "weft-bench: {}: {}{paced} on {name}: {line}",
            row.suite, row.label,
        );
        let what = format!("{}: {}{paced} on {name}", row.suite, row.name);
        watch.window(&what, &run, row.units, suite.timing().drain_timeout);
        runs.insert(name.to_owned(), run);
    }
    runs
}

/// What a pair's thread reports, in this order.
pub(crate) enum Report {
    /// The generator is done (its connections closed), or the server could
    /// not start (boxed: an outcome is a few hundred bytes).
    Measured(Box<Result<Outcome, String>>),
    /// The server stopped: its accept loop ended and its runtime is gone.
    Stopped(Result<(), String>),
    /// The thread panicked.
    Panicked(String),
}

/// Runs `pair` (the server `name`, and its load) on a thread of its own,
/// `suite`'s `row`, and waits for its reports at most `timeout` for the
/// figures and then [`STOP_TIMEOUT`] for the server to stop; abandons the
/// thread (with a warning) if it does not answer in time. The HTTP suite
/// runs its pairs here too.
pub(crate) fn measure_pair(
    suite: &str,
    name: &str,
    row: &str,
    timeout: Duration,
    warnings: &mut Vec<String>,
    pair: impl FnOnce(&mpsc::Sender<Report>) + Send + 'static,
) -> Result<Outcome, String> {
    let (sender, receiver) = mpsc::channel();
    let thread = thread::Builder::new()
        .name(format!("{suite}-{name}"))
        .spawn(move || {
            if let Err(panic) = catch_panic(|| pair(&sender)) {
                let _ = sender.send(Report::Panicked(panic));
            }
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    let mut deadline = Instant::now() + timeout;
    let mut measured: Option<Result<Outcome, String>> = None;
    let stopped = loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(wait) {
            Ok(Report::Measured(result)) => {
                measured = Some(*result);
                deadline = Instant::now() + STOP_TIMEOUT;
            }
            Ok(Report::Stopped(result)) => break result,
            Ok(Report::Panicked(panic)) => break Err(panic),
            Err(RecvTimeoutError::Timeout) => {
                let what = if measured.is_some() {
                    "did not stop"
                } else {
                    "gave no figures"
                };
                warnings.push(format!(
                    "{suite}: {name} {what} in {row} in time; abandoned, it may still be running \
                     and disturb what follows",
                ));
                // The thread is never joined: a hang must not hang the run.
                return Err(match measured {
                    Some(Err(err)) => err,
                    _ => format!("{what} in time (hung?)"),
                });
            }
            Err(RecvTimeoutError::Disconnected) => break Err("its thread died".to_owned()),
        }
    };
    let _ = thread.join();
    match (measured, stopped) {
        (Some(Ok(outcome)), Ok(())) => Ok(outcome),
        (Some(Ok(_)), Err(err)) => Err(format!("the server did not stop cleanly: {err}")),
        (Some(Err(err)), _) | (None, Err(err)) => Err(err),
        (None, Ok(())) => Err("no figures".to_owned()),
    }
}

/// Starts a server with `start`, attaches perf to its threads ([`cost`]),
/// runs the load generator `load` against it from this thread (with the
/// probe, to count over its window), stops the server; reports each step
/// to `reports`.
pub(crate) fn serve_and_load<S: Serving>(
    start: impl FnOnce() -> std::io::Result<S>,
    load: impl FnOnce(std::net::SocketAddr, Option<Arc<Probe>>) -> std::io::Result<Outcome>,
    reports: &mpsc::Sender<Report>,
) {
    let before = cost::threads();
    let server = match start() {
        Ok(server) => server,
        Err(err) => {
            let _ = reports.send(Report::Measured(Box::new(Err(format!("server: {err}")))));
            let _ = reports.send(Report::Stopped(Ok(())));
            return;
        }
    };
    let mut tids: Vec<u32> = cost::threads().difference(&before).copied().collect();
    tids.extend(S::SHARED_THREADS.iter().flat_map(|name| cost::named(name)));
    let probe = Probe::attach(&tids).map(Arc::new);
    let outcome = load(server.address(), probe.as_ref().ok().cloned());
    let outcome = outcome.map(|mut outcome| {
        let failed = outcome.server.take().and_then(Result::err);
        let counts = probe.and_then(|probe| {
            let probe = Arc::into_inner(probe).ok_or("perf: its probe is still in use")?;
            failed.map_or_else(|| probe.finish(), Err)
        });
        outcome.server = Some(counts);
        outcome
    });
    let outcome = outcome.map_err(|err| format!("load generator: {err}"));
    let _ = reports.send(Report::Measured(Box::new(outcome)));
    let stopped = server.stop();
    let _ = reports.send(Report::Stopped(
        stopped.map_err(|err| format!("accept loop: {err}")),
    ));
}
