//! `weft-bench compare BASE.json NEW.json`: the regression gate.
//!
//! Every suite of the list (`crate::suites`) compares its section of BASE
//! with NEW's ([`Suite::gate`]) by the one gate of
//! [`crate::common::figure::gate`] (its rules: what is gated on which
//! machine, the tolerance, the floors, missing, failed and new rows), each
//! with its own figures (`FIGURES` or `GATED` in the suite's result
//! module). Two documents come from the same machine when they have the
//! same core count and CPU model; only then are weft's absolute values
//! gated.
//!
//! The default tolerances come from re-runs of one build; the README gives
//! the numbers. The exit code is 1 when any row of any suite is missing,
//! failed or regressed, 2 when a file could not be read.
//!
//! [`Suite::gate`]: crate::common::suite::Suite::gate

use std::path::Path;
use std::process::ExitCode;

use crate::common::figure::gate::{Gate, Tolerances};
use crate::common::json::{self, Document};
use crate::suites::ALL;

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
    let mut text = header(base, new, &gate);
    let mut passed = true;
    for suite in ALL {
        let (table, suite_passed) = suite.gate(&gate, base, new);
        text.push_str(&table);
        passed &= suite_passed;
    }
    (text, passed)
}

/// The documents compared, what is gated, and the tolerances.
fn header(base: &Document, new: &Document, gate: &Gate) -> String {
    let describe = |doc: &Document| {
        let m = &doc.machine;
        let label = doc.versions.weft_label();
        format!("{label}; {} cores, {}", m.cores, m.cpu_model)
    };
    let mut out = format!("base: {}\nnew:  {}\n", describe(base), describe(new));
    if !gate.same_machine {
        out.push_str("different machines: weft's own values are shown, not gated\n");
    }
    out.push_str(&format!(
        "tolerance: {:.0}% for times, throughputs and ratios, {:.0}% for context switches; ! = \
         beyond tolerance\n",
        gate.tolerances.time_pct, gate.tolerances.csw_pct,
    ));
    out
}
