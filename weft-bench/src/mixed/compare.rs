//! The mixed lane's part of `weft-bench compare`: for every load of BASE,
//! three figures of weft (the default variant; the others are diagnostic)
//! and its ratio to a peer, `base → new`, following the timers lane's rules
//! (`timers/compare.rs`):
//!
//! | figure | better | ratio to | floor |
//! |---|---|---|---|
//! | `short_p99_ms` | lower | the best peer's short p99 | 25 ms at 32+2 and open, 80 ms at 128+8 ([`short_p99_floor_ms`]) |
//! | `long_per_s` | higher | tokio's long throughput | 8 req/s |
//! | `cpu_ms_per_s` | lower | tokio's CPU | 400 ms/s |
//!
//! * weft's value is gated only when both documents come from the same
//!   machine: it regresses when it worsens by more than the tolerance *and*
//!   by more than the figure's floor.
//! * The ratio is recomputed over the peers that completed the load in
//!   both documents (a peer only NEW has cannot make weft regress) and
//!   gated on any machine: it regresses when it worsens by more than the
//!   tolerance *and* its change counted in the figure's unit at the new
//!   peer's value exceeds the floor.
//!
//! The floors come from quiet quick re-runs on the 2-core dev machine with
//! the stall monitor in (2026-11-23, six runs): weft's short p99 was
//! 12.8-17.3 ms at 32+2, 77-98 ms at 128+8 and 4.6-6.5 ms open loop, its
//! long throughput 17-23 req/s; each floor is above the widest swing seen.
//! (Before the monitor every runtime's p99 moved by whole 50 ms polls and
//! the floors were 400/250 ms.)
//!
//! A load weft failed in NEW, or that NEW lacks, fails; a load (or the
//! whole lane) that BASE lacks is listed as new and passes.

use std::collections::BTreeMap;

use super::Variant;
use super::result::{Figures, LoadResult, MixedResult, MixedRun, ratio, short_p99_vs_best};
use crate::json::Status;
use crate::runtimes::RuntimeKind;
use crate::table::{self, Table};

/// What may worsen, and by how much.
#[derive(Debug, Clone, Copy)]
pub struct MixedGate {
    /// Allowed worsening, percent, of weft's figures and ratios.
    pub tolerance_pct: f64,
    /// Whether weft's own figures (absolute) are gated.
    pub same_machine: bool,
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

/// A compared figure of weft.
#[derive(Debug, Clone, Copy)]
struct Spec {
    name: &'static str,
    better: Better,
    /// weft's value in `figures`.
    value: fn(&Figures) -> Option<f64>,
    /// Whether the ratio is to tokio (else to the best peer's short p99).
    to_tokio: bool,
}

const SPECS: [Spec; 3] = [
    Spec {
        name: "short_p99_ms",
        better: Better::Lower,
        value: |f| f.short.as_ref().map(|p| p.p99_ms),
        to_tokio: false,
    },
    Spec {
        name: "long_per_s",
        better: Better::Higher,
        value: |f| Some(f.long_per_s),
        to_tokio: true,
    },
    Spec {
        name: "cpu_ms_per_s",
        better: Better::Lower,
        value: |f| Some(f.cpu_ms_per_s),
        to_tokio: true,
    },
];

/// Growth of weft's short p99, ms, below which a change is noise: just
/// above the widest swings of quiet quick re-runs of one build (module
/// doc).
pub fn short_p99_floor_ms(load: &str) -> f64 {
    match load {
        "closed_128_8" => 80.0,
        _ => 25.0,
    }
}

impl Spec {
    /// The change, in the figure's unit, below which it is noise.
    fn floor(&self, load: &str) -> f64 {
        match self.name {
            "short_p99_ms" => short_p99_floor_ms(load),
            "long_per_s" => 8.0,
            _ => 400.0,
        }
    }

    /// How much worse `new` is than `base` (negative: better).
    fn worsening(&self, base: f64, new: f64) -> f64 {
        match self.better {
            Better::Lower => new - base,
            Better::Higher => base - new,
        }
    }
}

/// One figure of one load compared.
#[derive(Debug, Clone)]
pub struct RowDelta {
    /// `load figure`.
    pub name: String,
    /// weft's value: base, new, whether it regressed.
    pub value: Option<(f64, f64, bool)>,
    /// weft's ratio to the peer: base, new, whether it regressed.
    pub ratio: Option<(f64, f64, bool)>,
    /// The peer in base and in new.
    pub peers: Option<(String, String)>,
    /// `None` when it passes; why it failed otherwise.
    pub failure: Option<String>,
    /// Only NEW has it.
    pub added: bool,
}

impl RowDelta {
    fn new(name: String) -> RowDelta {
        RowDelta {
            name,
            value: None,
            ratio: None,
            peers: None,
            failure: None,
            added: false,
        }
    }

    /// Whether the row passes the gate.
    pub fn passes(&self) -> bool {
        self.failure.is_none()
    }

    fn verdict(&self) -> String {
        match &self.failure {
            Some(why) => why.clone(),
            None if self.added => "new load".to_owned(),
            None => "ok".to_owned(),
        }
    }
}

impl MixedGate {
    /// Compares the mixed lanes of two documents: the delta table and its
    /// legend (nothing when neither has the lane), and whether NEW passed.
    pub fn check(self, base: Option<&MixedResult>, new: Option<&MixedResult>) -> (String, bool) {
        let deltas = compare(base, new, self);
        if deltas.is_empty() {
            return (String::new(), true);
        }
        let text = format!(
            "\n{}mixed: weft's value is gated on the same machine only, its ratio always; a \
             change below a figure's floor is noise (long/s: a fall is the regression)\n",
            table(&deltas).render()
        );
        (text, deltas.iter().all(RowDelta::passes))
    }
}

/// Compares the mixed lanes of two documents (either may lack it).
pub fn compare(
    base: Option<&MixedResult>,
    new: Option<&MixedResult>,
    gate: MixedGate,
) -> Vec<RowDelta> {
    let base_loads = base.map_or(&[][..], |b| &b.loads);
    let new_loads = new.map_or(&[][..], |n| &n.loads);
    let mut deltas = Vec::new();
    for b in base_loads {
        let n = new_loads.iter().find(|n| n.name == b.name);
        deltas.extend(compare_load(b, n, gate));
    }
    let added = new_loads
        .iter()
        .filter(|n| base_loads.iter().all(|b| b.name != n.name));
    deltas.extend(added.map(|n| RowDelta {
        added: true,
        ..RowDelta::new(n.name.clone())
    }));
    deltas
}

fn compare_load(base: &LoadResult, new: Option<&LoadResult>, gate: MixedGate) -> Vec<RowDelta> {
    let Some(new) = new else {
        let mut delta = RowDelta::new(base.name.clone());
        delta.failure = Some("FAILED: missing from NEW".to_owned());
        return vec![delta];
    };
    let Some(new_weft) = new.weft() else {
        let mut delta = RowDelta::new(base.name.clone());
        delta.failure = Some(format!("FAILED: {}", weft_error(new)));
        return vec![delta];
    };
    // A load weft failed in BASE has nothing to regress from.
    let Some(base_weft) = base.weft() else {
        return vec![RowDelta::new(base.name.clone())];
    };
    SPECS
        .iter()
        .map(|spec| compare_figure(spec, base, new, base_weft, new_weft, gate))
        .collect()
}

fn compare_figure(
    spec: &Spec,
    base: &LoadResult,
    new: &LoadResult,
    base_weft: &Figures,
    new_weft: &Figures,
    gate: MixedGate,
) -> RowDelta {
    let mut delta = RowDelta::new(format!("{} {}", base.name, spec.name));
    let floor = spec.floor(&base.name);
    let worse = |from: f64, to: f64| {
        let by = spec.worsening(from, to);
        by > from.abs() * gate.tolerance_pct / 100.0
    };
    if let (Some(b), Some(n)) = ((spec.value)(base_weft), (spec.value)(new_weft)) {
        let regressed = gate.same_machine && worse(b, n) && spec.worsening(b, n) > floor;
        delta.value = Some((b, n, regressed));
    }
    let in_both = |peer: &str| completed(&base.runtimes, peer) && completed(&new.runtimes, peer);
    let ratios = if spec.to_tokio {
        let tokio = RuntimeKind::Tokio.name();
        let of = |load: &LoadResult, own: &Figures| {
            let peer = load.runtimes.get(tokio)?.ok().filter(|_| in_both(tokio))?;
            let peer_value = (spec.value)(peer)?;
            Some((
                tokio.to_owned(),
                ratio((spec.value)(own)?, peer_value)?,
                peer_value,
            ))
        };
        of(base, base_weft).zip(of(new, new_weft))
    } else {
        let of = |load: &LoadResult, own: &Figures| {
            let best = short_p99_vs_best(own, &load.runtimes, in_both)?;
            let peer_value = (spec.value)(load.runtimes.get(&best.peer)?.ok()?)?;
            Some((best.peer, best.value, peer_value))
        };
        of(base, base_weft).zip(of(new, new_weft))
    };
    if let Some(((base_peer, b, _), (new_peer, n, new_peer_value))) = ratios {
        // The ratio's change in the figure's unit, at the new peer's value.
        let implied = spec.worsening(b, n) * new_peer_value;
        let regressed = worse(b, n) && implied > floor;
        delta.ratio = Some((b, n, regressed));
        delta.peers = Some((base_peer, new_peer));
    }
    let mut what = Vec::new();
    if delta.value.is_some_and(|v| v.2) {
        what.push("weft");
    }
    if delta.ratio.is_some_and(|r| r.2) {
        what.push("ratio");
    }
    if !what.is_empty() {
        delta.failure = Some(format!("REGRESSED: {}", what.join(", ")));
    }
    delta
}

fn completed(runtimes: &BTreeMap<String, MixedRun>, peer: &str) -> bool {
    runtimes.get(peer).is_some_and(|r| r.ok().is_some())
}

fn weft_error(load: &LoadResult) -> String {
    match load.runtimes.get(Variant::Weft.name()) {
        None => "weft did not run".to_owned(),
        Some(run) if run.status == Status::Failed => run
            .error
            .clone()
            .unwrap_or_else(|| "weft failed".to_owned()),
        Some(_) => "weft has no figures".to_owned(),
    }
}

/// The delta table of the mixed lane.
pub fn table(deltas: &[RowDelta]) -> Table {
    let mut table = Table::new(["mixed figure", "weft", "ratio", "to", "result"]);
    let cell = |figure: Option<(f64, f64, bool)>, format: fn(f64) -> String| {
        figure.map_or("-".to_owned(), |(base, new, regressed)| {
            let mark = if regressed { " !" } else { "" };
            let change = table::delta_pct(base, new);
            format!("{} → {} {change}{mark}", format(base), format(new))
        })
    };
    for delta in deltas {
        table.row(vec![
            delta.name.clone(),
            cell(delta.value, table::ms),
            cell(delta.ratio, |v| format!("{v:.2}")),
            match &delta.peers {
                Some((b, n)) if b == n => b.clone(),
                Some((b, n)) => format!("{b} → {n}"),
                None => "-".to_owned(),
            },
            delta.verdict(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed::Load;
    use crate::mixed::burn::Calibration;
    use crate::mixed::latency::Percentiles;
    use crate::mixed::result::MixedSettings;

    /// A run with this short p99 (ms), long throughput and CPU.
    fn run(p99: f64, long_per_s: f64, cpu: f64) -> MixedRun {
        MixedRun {
            figures: Some(Figures {
                window_s: 1.5,
                short_per_s: 1_000.0,
                long_per_s,
                short: Some(Percentiles {
                    count: 1_000,
                    p50_ms: p99 / 4.0,
                    p90_ms: p99 / 2.0,
                    p99_ms: p99,
                    p999_ms: p99 * 1.5,
                    max_ms: p99 * 2.0,
                    mean_ms: p99 / 4.0,
                }),
                long: None,
                cpu_ms_per_s: cpu,
                submit_lag_p99_ms: None,
                short_from_submit: None,
                unfinished: 0,
                others_cpu_pct: None,
                monitor: None,
            }),
            ..MixedRun::default()
        }
    }

    /// A lane with `loads`, each `[(runtime, run)]`.
    fn lane(loads: &[(Load, Vec<(&str, MixedRun)>)]) -> MixedResult {
        let loads = loads
            .iter()
            .map(|(load, runs)| {
                let runs = runs
                    .iter()
                    .map(|(name, run)| ((*name).to_owned(), run.clone()))
                    .collect();
                LoadResult::new(*load, runs)
            })
            .collect();
        let config = crate::mixed::MixedConfig::new(crate::harness::Profile::Quick, 2);
        MixedResult {
            settings: MixedSettings::new(&config, 1, std::time::Duration::ZERO),
            calibration: Calibration {
                iterations_per_us: 1.0,
                end_iterations_per_us: None,
                short_measured_us: 150.0,
                long_measured_ms: 50.0,
            },
            loads,
            others_cpu_pct: None,
            warnings: Vec::new(),
        }
    }

    fn verdicts(base: Option<&MixedResult>, new: Option<&MixedResult>, same: bool) -> Vec<String> {
        let gate = MixedGate {
            tolerance_pct: 50.0,
            same_machine: same,
        };
        compare(base, new, gate)
            .iter()
            .map(|d| format!("{}: {}", d.name, d.verdict()))
            .collect()
    }

    fn closed(weft: MixedRun) -> MixedResult {
        lane(&[(
            Load::Closed32x2,
            vec![
                ("weft", weft),
                ("tokio", run(100.0, 30.0, 1_900.0)),
                ("smol", run(60.0, 30.0, 1_900.0)),
            ],
        )])
    }

    #[test]
    fn a_rerun_within_tolerance_or_floor_passes() {
        let base = closed(run(8.0, 30.0, 1_900.0));
        // p99 8 → 30 ms: almost four times, but under the 25 ms floor.
        let new = closed(run(30.0, 25.0, 2_100.0));
        assert_eq!(
            verdicts(Some(&base), Some(&new), true),
            [
                "closed_32_2 short_p99_ms: ok",
                "closed_32_2 long_per_s: ok",
                "closed_32_2 cpu_ms_per_s: ok"
            ]
        );
    }

    #[test]
    fn a_slower_weft_regresses_and_a_fall_in_throughput_too() {
        let base = closed(run(8.0, 30.0, 1_900.0));
        let new = closed(run(500.0, 10.0, 1_900.0));
        assert_eq!(
            verdicts(Some(&base), Some(&new), true),
            [
                "closed_32_2 short_p99_ms: REGRESSED: weft, ratio",
                "closed_32_2 long_per_s: REGRESSED: weft, ratio",
                "closed_32_2 cpu_ms_per_s: ok"
            ]
        );
        // On another machine only the ratios are gated.
        assert_eq!(
            verdicts(Some(&base), Some(&new), false)[0],
            "closed_32_2 short_p99_ms: REGRESSED: ratio"
        );
    }

    #[test]
    fn missing_failed_new_and_absent_lanes() {
        let base = closed(run(8.0, 30.0, 1_900.0));
        let failed = closed(MixedRun::failed("no result within 41 s".to_owned()));
        assert_eq!(
            verdicts(Some(&base), Some(&failed), true),
            ["closed_32_2: FAILED: no result within 41 s"]
        );
        let other = lane(&[(Load::Open2000, vec![("weft", run(1.0, 10.0, 1_000.0))])]);
        assert_eq!(
            verdicts(Some(&base), Some(&other), true),
            [
                "closed_32_2: FAILED: missing from NEW",
                "open_2000: new load"
            ]
        );
        // A baseline from before the lane: every load is new; neither: nothing.
        assert_eq!(verdicts(None, Some(&base), true), ["closed_32_2: new load"]);
        let gate = MixedGate {
            tolerance_pct: 50.0,
            same_machine: true,
        };
        assert_eq!(gate.check(None, None), (String::new(), true));
    }

    #[test]
    fn a_peer_only_new_has_is_additive() {
        let base = lane(&[(
            Load::Closed32x2,
            vec![
                ("weft", run(8.0, 30.0, 1_900.0)),
                ("tokio", run(100.0, 30.0, 1_900.0)),
            ],
        )]);
        let new = closed(run(8.0, 30.0, 1_900.0));
        let deltas = compare(
            Some(&base),
            Some(&new),
            MixedGate {
                tolerance_pct: 50.0,
                same_machine: true,
            },
        );
        assert!(deltas.iter().all(RowDelta::passes));
        assert_eq!(
            deltas[0].peers,
            Some(("tokio".to_owned(), "tokio".to_owned()))
        );
    }
}
