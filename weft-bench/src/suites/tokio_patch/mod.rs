//! The tokio-patch suite, `weft-bench tokio-patch`: what a tokio service
//! pays on weft through the `[patch]` line, against tokio itself, in the
//! same run. One program of plain tokio code (`examples/tokio-bench`: axum
//! and sqlx serving, reqwest calling) is built twice in release by
//! `scripts/tokio-bench.sh` (on tokio, and with tokio patched to
//! weft-tokio) and each build runs the same rows:
//!
//! - `get_c1`, `get_c64`: reqwest GETs of a constant route of the same
//!   build's server (another process), one and 64 at a time: the client
//!   process's CPU per request, p50, p99;
//! - `sqlx_c16`: point reads by primary key on a pool of 4 SQLite
//!   connections, 16 tasks, in one process: CPU per query, p50, p99;
//! - `users_beside_reports`: seed 004's mix over HTTP, 32 loops of
//!   `GET /users/{id}` (a sqlx point read) beside 2 loops of a report that
//!   holds its server worker for 55 ms of CPU: the users' p50, p99.
//!
//! Each round runs every row on both builds, the builds' order alternating
//! between rounds; a figure is the median of the rounds. weft's targets
//! (issue #48): client CPU per request at or below tokio's, and the users'
//! p99 beside reports at most 0.1× tokio's.

pub mod suite;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::common::figure::rows::{FigureRow, Gated, SuiteResult};
use crate::common::figure::skew::Skew;
use crate::common::figure::target::Target;
use crate::common::figure::{Figure, Run};
use crate::common::setup::{Profile, Setup, SuiteSettings};
use crate::common::stats::median;
use crate::common::table::Table;

pub use suite::TokioPatch;

/// The suite's name.
pub const NAME: &str = "tokio-patch";

/// The runtimes it compares: weft through the patch, and tokio.
pub const RUNTIMES: [&str; 2] = ["weft", "tokio"];

/// Its rows, in order.
pub const ROWS: [&str; 4] = ["get_c1", "get_c64", "sqlx_c16", "users_beside_reports"];

/// One build's figures on one row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figures {
    /// The measuring process's CPU (user + system, all threads) per
    /// request or query, µs; the median of the rounds.
    pub cpu_us_per_request: f64,
    /// Latency percentiles, µs; the medians of the rounds.
    pub p50_us: f64,
    pub p99_us: f64,
    /// Requests or queries measured per second of the window; the median.
    pub per_s: f64,
    /// Each round's CPU per request, µs.
    pub rounds_cpu_us: Vec<f64>,
    /// Each round's p99, µs.
    pub rounds_p99_us: Vec<f64>,
}

/// CPU per request, over tokio's.
pub const CPU: Figure<Figures> =
    Figure::lower("cpu_us_per_request", "µs", |f: &Figures| Some(f.cpu_us_per_request));

/// p99 latency, over tokio's.
pub const P99: Figure<Figures> = Figure::lower("p99_us", "µs", |f: &Figures| Some(f.p99_us));

/// p50 latency, over tokio's.
pub const P50: Figure<Figures> = Figure::lower("p50_us", "µs", |f: &Figures| Some(f.p50_us));

/// The figures `compare` gates, with floors below which a change is noise
/// on a 2-core machine: 15 µs of CPU per request, 2 ms of p99, 1 ms of
/// p50 (provisional, from the first runs: `docs/experiments.md`).
pub const FIGURES: [Figure<Figures>; 3] = [
    CPU.with_floor(15.0),
    P99.with_floor(2000.0),
    P50.with_floor(1000.0),
];

/// The suite in `compare`.
pub const GATED: Gated<Figures> = Gated::new(NAME, "row", &FIGURES);

/// weft's targets on the rows measuring CPU.
const CPU_TARGETS: [Target<Figures>; 1] =
    [Target::ratio("CPU per request ≤ tokio's", CPU, 1.0)];

/// weft's target on the mix.
const MIX_TARGETS: [Target<Figures>; 1] =
    [Target::ratio("/users p99 beside reports ≤ 0.1× tokio's", P99, 0.1)];

/// How the suite was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokioPatchSettings {
    #[serde(flatten)]
    pub suite: SuiteSettings,
    /// Rounds per build.
    pub rounds: usize,
    /// Requests at concurrency 1 and 64, and sqlx queries, per round.
    pub requests_c1: usize,
    pub requests_c64: usize,
    pub queries: usize,
    /// The mix's window per round, ms.
    pub mix_ms: u64,
}

/// One row.
pub type TokioPatchRow = FigureRow<Figures>;

/// One run of the suite: the `tokio-patch` field of the document.
///
/// ```jsonc
/// "tokio-patch": {
///   "settings": { "profile": "quick", "workers": 2, "runtimes": ["weft", "tokio"],
///                 "rounds": 3, "requests_c1": 2000, "requests_c64": 20000,
///                 "queries": 20000, "mix_ms": 3000 },
///   "rows": [{ "name": "get_c1",
///     "runtimes": { "weft": { "status": "ok", "figures": { "cpu_us_per_request": 61.2,
///                   "p50_us": 118.0, "p99_us": 210.5, "per_s": 8100.0,
///                   "rounds_cpu_us": [..], "rounds_p99_us": [..] } }, "tokio": { … } },
///     "ratios": { "cpu_us_per_request": { "peer": "tokio", "value": 1.04 }, … },
///     "targets": [ … ] }, …],
///   "others_cpu_pct": 3.1, "warnings": []
/// }
/// ```
pub type TokioPatchResult = SuiteResult<TokioPatchSettings, TokioPatchRow>;

/// One run's configuration.
#[derive(Debug, Clone)]
pub struct TokioPatchConfig {
    pub setup: Setup,
    pub rounds: usize,
}

impl TokioPatchConfig {
    pub fn new(setup: Setup) -> TokioPatchConfig {
        let rounds = match setup.profile {
            Profile::Quick => 3,
            Profile::Full => 7,
        };
        TokioPatchConfig { setup, rounds }
    }

    fn settings(&self) -> TokioPatchSettings {
        TokioPatchSettings {
            suite: SuiteSettings::new(self.setup.profile, self.setup.workers, RUNTIMES),
            rounds: self.rounds,
            requests_c1: REQUESTS_C1,
            requests_c64: REQUESTS_C64,
            queries: QUERIES,
            mix_ms: MIX_MS,
        }
    }
}

const REQUESTS_C1: usize = 2_000;
const REQUESTS_C64: usize = 20_000;
const QUERIES: usize = 20_000;
const MIX_MS: u64 = 3_000;

/// One measurement as the program prints it.
#[derive(Debug, Clone, Deserialize)]
struct Measured {
    requests: usize,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_request: f64,
    wall_ms: f64,
}

/// The repository's root (weft-bench's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("weft-bench sits in the repository")
        .to_owned()
}

/// Builds both programs; their paths by runtime name.
fn build() -> Result<BTreeMap<String, PathBuf>, String> {
    eprintln!("tokio-patch: building examples/tokio-bench on tokio and on weft (cached after the first run)");
    let output = Command::new("bash")
        .arg(root().join("scripts/tokio-bench.sh"))
        .arg("build")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run scripts/tokio-bench.sh: {e}"))?;
    if !output.status.success() {
        return Err(format!("scripts/tokio-bench.sh build failed ({})", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let paths: BTreeMap<String, PathBuf> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(name, path)| (name.to_owned(), PathBuf::from(path)))
        .collect();
    for runtime in RUNTIMES {
        if !paths.contains_key(runtime) {
            return Err(format!("scripts/tokio-bench.sh printed no {runtime} build"));
        }
    }
    Ok(paths)
}

/// A server process of one build, killed on drop.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(program: &Path) -> Result<Server, String> {
        let mut child = Command::new(program)
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("the server said nothing: {e}"))?;
        let addr = line
            .strip_prefix("listening ")
            .map(str::trim)
            .ok_or_else(|| format!("the server said {line:?}"))?;
        Ok(Server {
            base: format!("http://{addr}"),
            child,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `program` with `args`; its one line of JSON.
fn measure(program: &Path, args: &[String]) -> Result<Measured, String> {
    let output = Command::new(program)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !output.status.success() {
        return Err(format!("`tokio-bench {}` failed ({})", args.join(" "), output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).map_err(|e| format!("unreadable output {text:?}: {e}"))
}

/// One build's measurements of every row in one round.
fn round(program: &Path) -> Result<BTreeMap<&'static str, Measured>, String> {
    let server = Server::start(program)?;
    let base = server.base.clone();
    let s = |v: &str| v.to_owned();
    let mut out = BTreeMap::new();
    out.insert(
        "get_c1",
        measure(program, &[s("get"), base.clone(), s("/hello"), s("1"), REQUESTS_C1.to_string()])?,
    );
    out.insert(
        "get_c64",
        measure(program, &[s("get"), base.clone(), s("/hello"), s("64"), REQUESTS_C64.to_string()])?,
    );
    out.insert(
        "users_beside_reports",
        measure(
            program,
            &[s("mix"), base, s("32"), s("2"), s("55"), MIX_MS.to_string()],
        )?,
    );
    drop(server);
    out.insert("sqlx_c16", measure(program, &[s("sqlx"), s("16"), QUERIES.to_string()])?);
    Ok(out)
}

/// Runs the suite.
pub fn run(config: &TokioPatchConfig) -> Result<TokioPatchResult, String> {
    let programs = build()?;
    // rounds[runtime][row] = each round's measurement.
    let mut measured: BTreeMap<&str, BTreeMap<&str, Vec<Measured>>> = BTreeMap::new();
    let mut failed: BTreeMap<&str, String> = BTreeMap::new();
    for index in 0..config.rounds {
        let mut order = RUNTIMES;
        if index % 2 == 1 {
            order.reverse();
        }
        for runtime in order {
            if failed.contains_key(runtime) {
                continue;
            }
            eprintln!("tokio-patch: round {}/{} on {runtime}", index + 1, config.rounds);
            match round(&programs[runtime]) {
                Ok(rows) => {
                    for (row, m) in rows {
                        measured.entry(runtime).or_default().entry(row).or_default().push(m);
                    }
                }
                Err(error) => {
                    failed.insert(runtime, error);
                }
            }
        }
    }
    let rows = ROWS
        .iter()
        .map(|&row| {
            let runs = RUNTIMES
                .iter()
                .map(|&runtime| {
                    let run = match (failed.get(runtime), measured.get(runtime).and_then(|m| m.get(row))) {
                        (Some(error), _) => Run::failed(error.clone()),
                        (None, Some(rounds)) if !rounds.is_empty() => Run::completed(figures(rounds)),
                        _ => Run::failed("nothing measured".to_owned()),
                    };
                    (runtime.to_owned(), run)
                })
                .collect();
            let targets: &[Target<Figures>] = if row == "users_beside_reports" {
                &MIX_TARGETS
            } else {
                &CPU_TARGETS
            };
            FigureRow::new(row, runs, &FIGURES, targets)
        })
        .collect();
    Ok(SuiteResult {
        settings: config.settings(),
        rows,
        // Not the machine's other processes: this suite's own servers and
        // clients are other processes, so that share would be its own.
        skew: Skew::default(),
    })
}

/// The medians of `rounds` (never empty: the caller checks).
fn figures(rounds: &[Measured]) -> Figures {
    let pick = |f: fn(&Measured) -> f64| -> Vec<f64> { rounds.iter().map(f).collect() };
    let median = |values: &[f64]| median(values).unwrap_or(f64::NAN);
    let rounds_cpu_us = pick(|m| m.cpu_us_per_request);
    let rounds_p99_us = pick(|m| m.p99_us);
    Figures {
        cpu_us_per_request: median(&rounds_cpu_us),
        p50_us: median(&pick(|m| m.p50_us)),
        p99_us: median(&rounds_p99_us),
        per_s: median(&pick(|m| m.requests as f64 / (m.wall_ms / 1e3).max(1e-9))),
        rounds_cpu_us,
        rounds_p99_us,
    }
}

/// The suite's tables.
pub fn render(result: &TokioPatchResult) -> String {
    let s = &result.settings;
    let mut table = Table::new([
        "row", "runtime", "CPU µs/req", "p50 µs", "p99 µs", "per s", "CPU÷tokio", "p99÷tokio",
    ]);
    for row in &result.rows {
        for (index, runtime) in RUNTIMES.iter().enumerate() {
            let mut cells = vec![
                if index == 0 { row.name.clone() } else { String::new() },
                (*runtime).to_owned(),
            ];
            match row.runtimes.get(*runtime) {
                Some(run) => match run.ok() {
                    Some(f) => {
                        cells.extend([
                            format!("{:.1}", f.cpu_us_per_request),
                            format!("{:.0}", f.p50_us),
                            format!("{:.0}", f.p99_us),
                            format!("{:.0}", f.per_s),
                        ]);
                        if *runtime == "weft" {
                            let ratio = |name: &str| {
                                row.ratios.get(name).map_or("-".to_owned(), |r| format!("{:.2}", r.value))
                            };
                            cells.extend([ratio("cpu_us_per_request"), ratio("p99_us")]);
                        }
                    }
                    None => cells.push(format!("FAILED: {}", run.error.as_deref().unwrap_or("unknown"))),
                },
                None => cells.push("-".to_owned()),
            }
            table.row(cells);
        }
    }
    let title = format!(
        "tokio-patch suite: {} profile; examples/tokio-bench built on tokio and on weft \
         (tokio patched to weft-tokio); {} rounds, builds alternating",
        s.suite.profile, s.rounds
    );
    let legend = format!(
        "get_c1, get_c64: {} and {} reqwest GETs of /hello on the same build's server \
         (another process), 1 and 64 at a time; sqlx_c16: {} point reads on a pool of 4 \
         SQLite connections, 16 tasks; users_beside_reports: 32 loops of GET /users/ID beside \
         2 loops of a 55 ms report that holds its server worker, {} ms. CPU µs/req: the \
         measuring process's CPU (all threads) per request; p50, p99: latency; per s: \
         throughput; medians of the rounds; ÷tokio: weft's over tokio's. The machine's \
         other processes are not measured here: the suite's own servers and clients are \
         other processes",
        s.requests_c1, s.requests_c64, s.queries, s.mix_ms
    );
    let mut targets = String::new();
    for row in &result.rows {
        for check in &row.targets {
            targets.push_str(&format!("  {}: {}\n", row.name, check.line()));
        }
    }
    format!("\n{title}\n{}\n{legend}\nweft's targets\n{targets}", table.render())
}
