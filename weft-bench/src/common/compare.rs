//! `weft-bench compare BASE.json NEW.json`: the regression gate.
//!
//! Every lane of BASE is compared with NEW by the one gate of
//! [`crate::common::figure::gate`] (its rules: what is gated on which machine, the
//! tolerance, the floors, missing, failed and new rows), each with its own
//! figures: the scheduler lane's [`json::SCHEDULER`] (weft's median over
//! the best peer's and over tokio's, its context switches), the timers
//! lane's rows ([`crate::suites::timers::RowSpec`]), and the figures of the mixed,
//! echo, HTTP, file, service and stall lanes (`mixed::result::FIGURES`
//! and so on). Two documents
//! come from the same machine when they have the same core count and CPU
//! model; only then are weft's absolute values gated.
//!
//! The default tolerances come from re-runs of one build; the README gives
//! the numbers. The exit code is 1 when any row of any lane is missing,
//! failed or regressed, 2 when a file could not be read.

use std::path::Path;
use std::process::ExitCode;

use crate::common::figure::gate::{Gate, Tolerances};
use crate::common::figure::lane::LaneResult;
use crate::common::json::{self, Document};
use crate::suites::mixed::result::LoadResult;
use crate::suites::{echo, file, http, mixed, service, stall, timers};

/// Default tolerance of times, throughputs and ratios, percent: no re-run
/// of one build grew a ratio by more than 48% (README).
pub const DEFAULT_TOLERANCE_PCT: f64 = 50.0;

/// Default tolerance of context switches per iteration, percent.
pub const DEFAULT_CSW_TOLERANCE_PCT: f64 = 200.0;

/// Runs the comparison and prints its tables; the exit code says whether
/// NEW passed (2 if a file could not be read).
pub fn main(base: &Path, new: &Path, tolerances: Tolerances) -> ExitCode {
    let read = |path: &Path| {
        json::read(path)
            .map_err(|err| eprintln!("weft-bench: cannot read {}: {err}", path.display()))
    };
    let (Ok(base), Ok(new)) = (read(base), read(new)) else {
        return ExitCode::from(2);
    };
    let (text, passed) = check(&base, &new, tolerances);
    print!("{text}");
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What `compare` prints, and whether NEW passed.
pub fn check(base: &Document, new: &Document, tolerances: Tolerances) -> (String, bool) {
    let gate = Gate {
        tolerances,
        same_machine: base.machine.cores == new.machine.cores
            && base.machine.cpu_model == new.machine.cpu_model,
    };
    // The other lanes' results in the base and the new document.
    let (b, n) = (&base.lanes, &new.lanes);
    let lanes = [
        gate.check(&json::LANE, Some(&base.workloads), Some(&new.workloads)),
        gate.check(&timers::LANE, rows(&b.timers), rows(&n.timers)),
        gate.check(&mixed::result::LANE, loads(base), loads(new)),
        gate.check(&echo::result::LANE, rows(&b.echo), rows(&n.echo)),
        gate.check(&http::result::LANE, rows(&b.http), rows(&n.http)),
        gate.check(&file::result::LANE, rows(&b.file), rows(&n.file)),
        gate.check(&service::result::LANE, rows(&b.service), rows(&n.service)),
        gate.check(&stall::result::LANE, rows(&b.stall), rows(&n.stall)),
    ];
    let mut text = header(base, new, &gate);
    let mut passed = true;
    for (lane, lane_passed) in lanes {
        text.push_str(&lane);
        passed &= lane_passed;
    }
    (text, passed)
}

/// The rows of a lane, if the document has it.
pub fn rows<S, R>(lane: &Option<LaneResult<S, R>>) -> Option<&[R]> {
    lane.as_ref().map(|lane| &lane.rows[..])
}

/// The mixed lane's loads, if the document has the lane.
pub fn loads(document: &Document) -> Option<&[LoadResult]> {
    document.lanes.mixed.as_ref().map(|mixed| &mixed.loads[..])
}

/// The documents compared, what is gated, and the tolerances.
fn header(base: &Document, new: &Document, gate: &Gate) -> String {
    let describe = |doc: &Document| {
        let (s, m) = (&doc.settings, &doc.machine);
        let label = doc.versions.weft_label();
        format!(
            "{label}; {}, {} workers; {} cores, {}",
            s.lane.profile, s.lane.workers, m.cores, m.cpu_model
        )
    };
    let mut out = format!("base: {}\nnew:  {}\n", describe(base), describe(new));
    if !gate.same_machine {
        out.push_str("different machines: weft's own values are shown, not gated\n");
    }
    if base.settings.lane.workers != new.settings.lane.workers {
        out.push_str("warning: different worker counts; the ratios may not be comparable\n");
    }
    out.push_str(&format!(
        "tolerance: {:.0}% for times, throughputs and ratios, {:.0}% and more than {} for \
         csw_per_iter; ! = beyond tolerance\n",
        gate.tolerances.time_pct,
        gate.tolerances.csw_pct,
        json::CSW_FLOOR
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::common::figure::gate::Delta;
    use crate::common::json::{Iterations, RuntimeResult, WorkloadResult};
    use crate::suites::scheduler::stats;

    /// A workload whose runtimes took `ms` and switched `csw` times in
    /// every iteration.
    fn workload(name: &str, runtimes: &[(&str, f64, u64)]) -> WorkloadResult {
        let runtimes: BTreeMap<String, RuntimeResult> = runtimes
            .iter()
            .map(|&(runtime, ms, csw)| {
                let iterations = Iterations {
                    ms: vec![ms; 4],
                    csw_voluntary: vec![csw; 4],
                    csw_involuntary: vec![0; 4],
                    ..Iterations::default()
                };
                let result = RuntimeResult {
                    summary: stats::summarize(&iterations, 2),
                    iterations,
                    ..Default::default()
                };
                (runtime.to_owned(), result)
            })
            .collect();
        WorkloadResult {
            name: name.to_owned(),
            iterations_per_round: 2,
            comparison: stats::compare(&runtimes, |_| true),
            runtimes,
        }
    }

    fn deltas(base: &[(&str, f64, u64)], new: &[(&str, f64, u64)], same: bool) -> Vec<Delta> {
        let gate = Gate {
            tolerances: Tolerances {
                time_pct: 30.0,
                csw_pct: 200.0,
            },
            same_machine: same,
        };
        gate.compare(&json::LANE, &[workload("a", base)], &[workload("a", new)])
    }

    fn verdicts(deltas: &[Delta]) -> Vec<String> {
        let to = |d: &Delta| d.peers.as_ref().map_or("-".to_owned(), |p| p.1.clone());
        deltas
            .iter()
            .map(|d| format!("{} to {}: {}", d.name(), to(d), d.describe("workload")))
            .collect()
    }

    const BASE: &[(&str, f64, u64)] = &[("weft", 1.0, 10), ("tokio", 2.0, 10), ("smol", 1.5, 10)];

    #[test]
    fn a_slower_weft_regresses_against_the_best_peer_and_tokio() {
        let new = [("weft", 2.0, 10), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert_eq!(
            verdicts(&deltas(BASE, &new, true)),
            [
                "a median_ms to smol: REGRESSED: weft, ratio",
                "a median_ms to tokio: REGRESSED: ratio",
                "a csw_per_iter to -: ok"
            ]
        );
        // On another machine only the ratios are gated.
        let faster_peers = [("weft", 2.0, 10), ("tokio", 4.0, 10), ("smol", 3.0, 10)];
        assert!(deltas(BASE, &faster_peers, false).iter().all(Delta::passes));
    }

    #[test]
    fn context_switches_have_their_tolerance_and_floor() {
        // Three times as many, but 20 more per iteration: under the floor.
        let few = [("weft", 1.0, 30), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert!(deltas(BASE, &few, true).iter().all(Delta::passes));
        let many = [("weft", 1.0, 40), ("tokio", 2.0, 10), ("smol", 1.5, 10)];
        assert_eq!(
            verdicts(&deltas(BASE, &many, true))[2],
            "a csw_per_iter to -: REGRESSED: weft"
        );
    }
}
