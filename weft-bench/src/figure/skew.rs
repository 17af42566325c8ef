//! What may have skewed a lane's figures: other processes busy on the
//! machine (it is shared), runtimes abandoned, windows left unfinished.
//! A lane [`Watch`]es itself while it runs and keeps the result, a
//! [`Skew`], beside its rows; the table prints it below the lane's tables.

use std::fmt::Write;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Run;
use crate::metrics::others::{self, CpuTimes};

/// Other processes using this share of the machine, percent, or more
/// during a window or a lane earn a warning.
pub const BUSY_OTHERS_PCT: f64 = 10.0;

/// What may have skewed a lane's figures. In JSON, beside the lane's rows:
/// `"others_cpu_pct": 0.4, "warnings": ["…"]` (each absent when empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// Percent of the machine other processes used during the lane, where
    /// `/proc` tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Anything that may have skewed the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Skew {
    /// The lines below a lane's tables.
    pub fn footer(&self) -> String {
        let mut out = String::new();
        if let Some(pct) = self.others_cpu_pct {
            let _ = writeln!(
                out,
                "other processes used {pct:.0}% of the machine meanwhile"
            );
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
        out
    }
}

/// Figures measured over a window of a load (the mixed, echo and HTTP
/// lanes').
pub trait Windowed {
    /// Percent of the machine other processes used during the window.
    fn others_cpu_pct(&self) -> Option<f64>;

    /// Requests of the window still out after the drain.
    fn unfinished(&self) -> u64;
}

/// A lane watching itself run: the machine's CPU at its start, and the
/// warnings gathered since.
pub struct Watch {
    lane: &'static str,
    start: Option<CpuTimes>,
    /// The warnings so far (a measurement abandoned pushes its own).
    pub warnings: Vec<String>,
}

impl Watch {
    /// Starts watching `lane`.
    pub fn start(lane: &'static str) -> Watch {
        Watch {
            lane,
            start: CpuTimes::now(),
            warnings: Vec::new(),
        }
    }

    /// Warns about one run's window (`what`: `echo: conn1_64b on weft`),
    /// if the run completed: other processes busy during it, requests
    /// (`units`) still out after the `drain`.
    pub fn window<F: Windowed>(&mut self, what: &str, run: &Run<F>, units: &str, drain: Duration) {
        let Some(figures) = run.ok() else {
            return;
        };
        if let Some(pct) = figures
            .others_cpu_pct()
            .filter(|&pct| pct >= BUSY_OTHERS_PCT)
        {
            self.warnings.push(format!(
                "{what}: other processes used {pct:.0}% of the machine during the window"
            ));
        }
        let unfinished = figures.unfinished();
        if unfinished > 0 {
            self.warnings.push(format!(
                "{what}: {unfinished} {units} of the window unfinished after the {} s drain; \
                 counted with their latency so far",
                drain.as_secs()
            ));
        }
    }

    /// What may have skewed the lane, as it ends.
    pub fn finish(mut self) -> Skew {
        let others_cpu_pct = others::since(self.start);
        if let Some(pct) = others_cpu_pct.filter(|&pct| pct >= BUSY_OTHERS_PCT) {
            self.warnings.push(format!(
                "other processes used {pct:.0}% of the machine during the {} lane",
                self.lane
            ));
        }
        Skew {
            others_cpu_pct,
            warnings: self.warnings,
        }
    }
}
