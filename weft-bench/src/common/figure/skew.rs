//! What may have skewed a suite's figures: other processes busy on the
//! machine (it is shared), runtimes abandoned, windows left unfinished.
//! A suite [`Watch`]es itself while it runs and keeps the result, a
//! [`Skew`], beside its rows; the table prints it below the suite's tables.

use std::fmt::Write;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Run;
use crate::common::others::{self, CpuTimes};

/// Other processes using this share of the machine, percent, or more
/// during a window or a suite earn a warning.
pub const BUSY_OTHERS_PCT: f64 = 10.0;

/// What may have skewed a suite's figures. In JSON, beside the suite's rows:
/// `"others_cpu_pct": 0.4, "warnings": ["…"]` (each absent when empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// Percent of the machine other processes used during the suite, where
    /// `/proc` tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Anything that may have skewed the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Skew {
    /// The lines below a suite's tables.
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

/// The window over which a run of a load was measured (the mixed, echo
/// and HTTP suites). In JSON, among the run's figures: `"window_s": 1.5,
/// "cpu_ms_per_s": 1988.0, "unfinished": 0, "others_cpu_pct": 0.2`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The measured window, s.
    pub window_s: f64,
    /// The process's CPU over the window, ms per s of wall time.
    pub cpu_ms_per_s: f64,
    /// Requests of the window unfinished after the drain (their latency
    /// so far is in the percentiles).
    pub unfinished: u64,
    /// Percent of the machine other processes used during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
}

/// What a load generator read over its window (every suite's generator
/// keeps one in its outcome); its [`Window`] is computed from them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings {
    /// The window (the plan's `measure`): throughputs are per second of it.
    pub window: Duration,
    /// The measured process's CPU time between the generator's readings
    /// at the window's start and end (the service suite's: the server's).
    pub cpu: Duration,
    /// The wall time between those two readings (a little off the window
    /// when the generator woke late for one of them).
    pub cpu_window: Duration,
    /// Requests of the window still out at the drain deadline (recorded
    /// with their latency so far).
    pub unfinished: u64,
    /// Percent of the machine other processes used during the window,
    /// where `/proc` tells: this machine is shared, and a pair measured
    /// while something else ran is not comparable with the others.
    pub others_cpu_pct: Option<f64>,
}

impl Readings {
    /// A window `window` long over which the generator read `cpu` (tests,
    /// and a suite that measures passes rather than a timed window).
    pub fn steady(window: Duration, cpu: Duration) -> Readings {
        Readings {
            window,
            cpu,
            cpu_window: window,
            ..Readings::default()
        }
    }

    /// The window they describe.
    pub fn window(&self) -> Window {
        Window {
            window_s: self.window.as_secs_f64().max(1e-9),
            cpu_ms_per_s: self.cpu.as_secs_f64() * 1e3 / self.cpu_window.as_secs_f64().max(1e-9),
            unfinished: self.unfinished,
            others_cpu_pct: self.others_cpu_pct,
        }
    }
}

impl Window {
    /// `count` per second of the window.
    pub fn per_s(&self, count: u64) -> f64 {
        count as f64 / self.window_s
    }
}

/// Figures measured over a [`Window`].
pub trait Windowed {
    /// Their window.
    fn window(&self) -> &Window;
}

/// Implements [`Windowed`] for figures that keep their window in a
/// `window` field.
macro_rules! impl_windowed {
    ($($figures:ty),*) => {$(
        impl $crate::common::figure::skew::Windowed for $figures {
            fn window(&self) -> &$crate::common::figure::skew::Window {
                &self.window
            }
        }
    )*};
}

pub(crate) use impl_windowed;

/// A suite watching itself run: the machine's CPU at its start, and the
/// warnings gathered since.
pub struct Watch {
    suite: &'static str,
    start: Option<CpuTimes>,
    /// The warnings so far (a measurement abandoned pushes its own).
    pub warnings: Vec<String>,
}

impl Watch {
    /// Starts watching `suite`.
    pub fn start(suite: &'static str) -> Watch {
        Watch {
            suite,
            start: CpuTimes::now(),
            warnings: Vec::new(),
        }
    }

    /// Warns about one run's window (`what`: `echo: conn1_64b on weft`),
    /// if the run completed: other processes busy during it, requests
    /// (`units`) still out after the `drain`.
    pub fn window<F: Windowed>(&mut self, what: &str, run: &Run<F>, units: &str, drain: Duration) {
        let Some(window) = run.ok().map(Windowed::window) else {
            return;
        };
        if let Some(pct) = window.others_cpu_pct.filter(|&pct| pct >= BUSY_OTHERS_PCT) {
            self.warnings.push(format!(
                "{what}: other processes used {pct:.0}% of the machine during the window"
            ));
        }
        let unfinished = window.unfinished;
        if unfinished > 0 {
            self.warnings.push(format!(
                "{what}: {unfinished} {units} of the window unfinished after the {} s drain; \
                 counted with their latency so far",
                drain.as_secs()
            ));
        }
    }

    /// What may have skewed the suite, as it ends.
    pub fn finish(mut self) -> Skew {
        let others_cpu_pct = others::since(self.start);
        if let Some(pct) = others_cpu_pct.filter(|&pct| pct >= BUSY_OTHERS_PCT) {
            self.warnings.push(format!(
                "other processes used {pct:.0}% of the machine during the {} suite",
                self.suite
            ));
        }
        Skew {
            others_cpu_pct,
            warnings: self.warnings,
        }
    }
}
