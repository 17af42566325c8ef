//! The HTTP lane's part of `weft-bench compare`: the echo lane's rules
//! (`echo/compare.rs`: weft's req/s and p99 gated on the same machine only,
//! its ratios to the best peer always, each change beyond the tolerance
//! *and* the figure's floor), with this lane's floors.

use super::result::HttpResult;
use crate::echo::compare::EchoGate;

/// The change of `figure` (`req_per_s`, `p99_ms`), in its unit, below
/// which it is noise. FLOOR_NOTE
pub fn floor(figure: &str, _row: &str) -> f64 {
    match figure {
        "req_per_s" => 4_000.0,
        _ => 4.0,
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
