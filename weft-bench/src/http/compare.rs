//! The HTTP lane's part of `weft-bench compare`: the echo lane's rules
//! (`echo/compare.rs`: weft's req/s and p99 gated on the same machine only,
//! its ratios to the best peer always, each change beyond the tolerance
//! *and* the figure's floor), with this lane's floors.

use super::result::HttpResult;
use crate::echo::compare::EchoGate;

/// The change of `figure` (`req_per_s`, `p99_ms`), in its unit, below
/// which it is noise. From the first five quick runs on the shared 2-core
/// dev machine (2026-11-24, one build): with other processes at 3-15% of
/// the machine, weft's req/s was 113-144k and its p99 0.63-1.89 ms; with
/// 42%, 76k and 3.35 ms. Each floor is above the swing of the quieter
/// runs (31k req/s, 1.3 ms); tighten them from quiet runs.
pub fn floor(figure: &str, _row: &str) -> f64 {
    match figure {
        "req_per_s" => 40_000.0,
        _ => 3.0,
    }
}

/// Compares the HTTP lanes of two documents: the delta table (nothing
/// when neither has the lane), and whether NEW passed.
pub fn check(
    gate: EchoGate,
    base: Option<&HttpResult>,
    new: Option<&HttpResult>,
) -> (String, bool) {
    gate.check_rows(
        "http",
        base.map(|b| &b.rows[..]),
        new.map(|n| &n.rows[..]),
        floor,
    )
}
