//! A lane as `compare` and the document see it: its name, what its rows
//! are called and the figures gated on each ([`Lane`]); its kinds of row,
//! named in JSON and labelled in tables ([`RowKind`]); how it is set up
//! ([`Setup`]: profile, workers, runtimes); its part of the `--json`
//! document ([`LaneResult`]: settings, rows and what may have skewed
//! them), with the settings every lane shares ([`LaneSettings`],
//! [`WindowSettings`]), and the row of a lane whose ratios are its list of
//! figures ([`FigureRow`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::skew::Skew;
use super::target::{Check, Target, check_all};
use super::{Figure, PeerRatio, Row, Run};
use crate::common::runtimes::RuntimeKind;
use crate::suites::scheduler::Profile;

/// A lane in `compare`.
pub struct Lane<F: 'static> {
    /// Its name, heading its table (`echo`).
    pub name: &'static str,
    /// What its rows are called (`row`, `load`, `workload`).
    pub row: &'static str,
    figures: Figures<F>,
}

/// The figures gated on a lane's rows.
enum Figures<F: 'static> {
    /// The same on every row.
    Every(&'static [Figure<F>]),
    /// Per row, by its name (each timers row is its own figure).
    ByRow(fn(row: &str) -> &'static [Figure<F>]),
}

impl<F> Lane<F> {
    /// A lane gating `figures` on each of its rows.
    pub const fn new(name: &'static str, row: &'static str, figures: &'static [Figure<F>]) -> Self {
        let figures = Figures::Every(figures);
        Lane { name, row, figures }
    }

    /// A lane whose rows each have their own figures.
    pub const fn by_row(
        name: &'static str,
        row: &'static str,
        figures: fn(row: &str) -> &'static [Figure<F>],
    ) -> Self {
        let figures = Figures::ByRow(figures);
        Lane { name, row, figures }
    }

    /// The figures gated on the row called `row`.
    pub fn figures(&self, row: &str) -> &'static [Figure<F>] {
        match self.figures {
            Figures::Every(figures) => figures,
            Figures::ByRow(figures) => figures(row),
        }
    }
}

/// Declares a lane's rows: an enum whose variants each have a doc, a
/// name (in JSON and on the command line) and a label (in tables), with
/// [`RowKind`] and `ALL` (every row, in the order the lane runs them).
macro_rules! rows {
    (
        $(#[$meta:meta])*
        $vis:vis enum $kind:ident {
            $($(#[doc = $doc:literal])* $variant:ident = ($name:literal, $label:literal),)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
        $vis enum $kind {
            $($(#[doc = $doc])* #[value(name = $name)] $variant,)*
        }

        impl $crate::common::figure::lane::RowKind for $kind {
            fn names(self) -> (&'static str, &'static str) {
                match self {
                    $($kind::$variant => ($name, $label),)*
                }
            }
        }

        impl $kind {
            /// Every one, in the order the lane runs them.
            pub const ALL: &'static [$kind] = &[$($kind::$variant),*];
        }
    };
}

pub(crate) use rows;

/// A lane's kind of row (the echo lane's connection shapes, the mixed
/// lane's loads): its name in JSON, its label in tables.
pub trait RowKind: clap::ValueEnum + Copy + PartialEq + 'static {
    /// Every one, in the order the lane runs them.
    fn all() -> &'static [Self] {
        Self::value_variants()
    }

    /// Its name in JSON and its label in tables.
    fn names(self) -> (&'static str, &'static str);

    /// Its name in JSON.
    fn name(self) -> &'static str {
        self.names().0
    }

    /// Its label in tables and charts.
    fn label(self) -> &'static str {
        self.names().1
    }

    /// The one called `name` in JSON.
    fn from_name(name: &str) -> Option<Self> {
        Self::all().iter().copied().find(|kind| kind.name() == name)
    }

    /// The label of the row called `name` (the name itself for a row this
    /// build does not know).
    fn label_of(name: &str) -> &str {
        match Self::from_name(name) {
            Some(kind) => kind.label(),
            None => name,
        }
    }
}

/// One run of a lane whose rows are `R`, measured as `S` says. In JSON:
/// `{ "settings": {…}, "rows": […], "others_cpu_pct": 0.4, "warnings":
/// ["…"] }` (the last two as [`Skew`] says).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneResult<S, R> {
    /// How it was measured.
    pub settings: S,
    /// One entry per row, in the order measured.
    pub rows: Vec<R>,
    /// What may have skewed the figures.
    #[serde(flatten)]
    pub skew: Skew,
}

/// A row whose weft ratios are one per figure of the lane's list, by the
/// figure's name, and whose targets are checked on its runs (the file and
/// service lanes). In JSON: `{ "name": "…", "runtimes": { "weft": {…}, … },
/// "ratios": { "req_per_s": { "peer": "tokio", "value": 1.02 }, … },
/// "targets": [ … ] }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FigureRow<F> {
    /// Its name in JSON.
    pub name: String,
    /// Keyed by runtime name.
    pub runtimes: BTreeMap<String, Run<F>>,
    /// weft's ratio to each figure's peer, by figure name; empty when weft
    /// or every peer failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ratios: BTreeMap<String, PeerRatio>,
    /// weft's targets.
    #[serde(default)]
    pub targets: Vec<Check>,
}

impl<F> FigureRow<F> {
    /// The row called `name` from every runtime's run, with weft's ratio on
    /// each of `figures` and `targets` checked.
    pub fn new(
        name: &str,
        runtimes: BTreeMap<String, Run<F>>,
        figures: &[Figure<F>],
        targets: &[Target<F>],
    ) -> FigureRow<F> {
        FigureRow {
            name: name.to_owned(),
            ratios: figures
                .iter()
                .filter_map(|f| Some((f.name.to_owned(), f.weft_ratio(&runtimes)?)))
                .collect(),
            targets: check_all(targets, &runtimes),
            runtimes,
        }
    }
}

impl<F> Row for FigureRow<F> {
    type Run = Run<F>;

    fn name(&self) -> &str {
        &self.name
    }

    fn runs(&self) -> &BTreeMap<String, Run<F>> {
        &self.runtimes
    }
}

/// How a lane is set up: its profile, the worker threads of every runtime,
/// and the runtimes in the order it runs them (the mixed lane's are
/// variants of them).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup<K = RuntimeKind> {
    /// Quick or full.
    pub profile: Profile,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// The runtimes, in order.
    pub runtimes: Vec<K>,
}

impl<K: Copy> Setup<K> {
    /// `profile` on `workers` workers, with `runtimes`.
    pub fn new(profile: Profile, workers: usize, runtimes: &[K]) -> Setup<K> {
        let runtimes = runtimes.to_vec();
        Setup {
            profile,
            workers,
            runtimes,
        }
    }

    /// Its settings in the document, the runtimes named by `name`.
    pub fn settings(&self, name: fn(K) -> &'static str) -> LaneSettings {
        LaneSettings::new(
            self.profile,
            self.workers,
            self.runtimes.iter().map(|&k| name(k)),
        )
    }
}

/// How every lane was run. In JSON, among the lane's settings:
/// `"profile": "quick", "workers": 2, "runtimes": ["weft", "tokio",
/// "smol"]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// The runtimes, in the order each row ran them.
    pub runtimes: Vec<String>,
}

impl LaneSettings {
    /// The settings of a lane run with `profile` on `workers` workers.
    pub fn new<'a>(
        profile: Profile,
        workers: usize,
        runtimes: impl IntoIterator<Item = &'a str>,
    ) -> LaneSettings {
        LaneSettings {
            profile: profile.name().to_owned(),
            workers,
            runtimes: runtimes.into_iter().map(str::to_owned).collect(),
        }
    }
}

/// The window of a lane that runs a load for a while (mixed, echo, HTTP).
/// In JSON, among the lane's settings: `"warmup_ms": 500.0, "measure_ms":
/// 1500.0, "drain_timeout_ms": 5000.0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowSettings {
    /// Warm-up excluded from the figures, ms.
    pub warmup_ms: f64,
    /// The measured window, ms.
    pub measure_ms: f64,
    /// Longest wait for the window's requests after it, ms.
    pub drain_timeout_ms: f64,
}

impl WindowSettings {
    /// The window of these durations.
    pub fn new(warmup: Duration, measure: Duration, drain_timeout: Duration) -> WindowSettings {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        WindowSettings {
            warmup_ms: ms(warmup),
            measure_ms: ms(measure),
            drain_timeout_ms: ms(drain_timeout),
        }
    }

    /// `{warm-up} s warm-up, {measured} s measured`, as the lanes' tables
    /// head it.
    pub fn describe(&self) -> String {
        format!(
            "{} s warm-up, {} s measured",
            self.warmup_ms / 1e3,
            self.measure_ms / 1e3
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::echo::Row;
    use crate::suites::mixed::Load;

    fn names_round_trip<K: RowKind + std::fmt::Debug>() {
        for &kind in K::all() {
            assert_eq!(K::from_name(kind.name()), Some(kind));
            assert_eq!(K::label_of(kind.name()), kind.label());
        }
        assert_eq!(K::from_name("unknown"), None);
        assert_eq!(K::label_of("unknown"), "unknown");
    }

    #[test]
    fn row_names_round_trip_and_unknown_rows_keep_their_name() {
        names_round_trip::<Row>();
        names_round_trip::<Load>();
    }
}
