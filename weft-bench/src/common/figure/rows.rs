//! A suite's rows as `compare` and the document see them: what `compare`
//! gates on them ([`Gated`]: the suite's name, what its rows are called,
//! the figures on each); their kinds, named in JSON and labelled in
//! tables ([`RowKind`], declared with `rows!`); the suite's part of the
//! `--json` document ([`SuiteResult`]: settings, rows and what may have
//! skewed them, the settings every suite shares being
//! [`crate::common::setup::SuiteSettings`]), and the row of a suite whose
//! ratios are its list of figures ([`FigureRow`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::skew::Skew;
use super::target::{Check, Target, check_all};
use super::{Figure, PeerRatio, Row, Run};

/// A suite in `compare`.
pub struct Gated<F: 'static> {
    /// Its name, heading its table (`echo`).
    pub name: &'static str,
    /// What its rows are called (`row`, `load`, `workload`).
    pub row: &'static str,
    figures: Figures<F>,
}

/// The figures gated on a suite's rows.
enum Figures<F: 'static> {
    /// The same on every row.
    Every(&'static [Figure<F>]),
    /// Per row, by its name (each timers row is its own figure).
    ByRow(fn(row: &str) -> &'static [Figure<F>]),
}

impl<F> Gated<F> {
    /// A suite gating `figures` on each of its rows.
    pub const fn new(name: &'static str, row: &'static str, figures: &'static [Figure<F>]) -> Self {
        let figures = Figures::Every(figures);
        Gated { name, row, figures }
    }

    /// A suite whose rows each have their own figures.
    pub const fn by_row(
        name: &'static str,
        row: &'static str,
        figures: fn(row: &str) -> &'static [Figure<F>],
    ) -> Self {
        let figures = Figures::ByRow(figures);
        Gated { name, row, figures }
    }

    /// The figures gated on the row called `row`.
    pub fn figures(&self, row: &str) -> &'static [Figure<F>] {
        match self.figures {
            Figures::Every(figures) => figures,
            Figures::ByRow(figures) => figures(row),
        }
    }
}

/// Declares a suite's rows: an enum whose variants each have a doc, a
/// name (in JSON and on the command line) and a label (in tables), with
/// [`RowKind`] and `ALL` (every row, in the order the suite runs them).
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

        impl $crate::common::figure::rows::RowKind for $kind {
            fn names(self) -> (&'static str, &'static str) {
                match self {
                    $($kind::$variant => ($name, $label),)*
                }
            }
        }

        impl $kind {
            /// Every one, in the order the suite runs them.
            pub const ALL: &'static [$kind] = &[$($kind::$variant),*];
        }
    };
}

pub(crate) use rows;

/// A suite's kind of row (the echo suite's connection shapes, the mixed
/// suite's loads): its name in JSON, its label in tables.
pub trait RowKind: clap::ValueEnum + Copy + PartialEq + 'static {
    /// Every one, in the order the suite runs them.
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

/// One run of a suite whose rows are `R`, measured as `S` says. In JSON:
/// `{ "settings": {…}, "rows": […], "others_cpu_pct": 0.4, "warnings":
/// ["…"] }` (the last two as [`Skew`] says).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteResult<S, R> {
    /// How it was measured.
    pub settings: S,
    /// One entry per row, in the order measured.
    pub rows: Vec<R>,
    /// What may have skewed the figures.
    #[serde(flatten)]
    pub skew: Skew,
}

impl<S, R: Row> SuiteResult<S, R> {
    /// Whether a runtime failed a row.
    pub fn any_failed(&self) -> bool {
        self.rows.iter().any(Row::any_failed)
    }
}

/// The rows of a suite's results, if a document has them (what
/// [`super::gate::Gate::check`] compares).
pub fn rows_of<S, R>(results: Option<&SuiteResult<S, R>>) -> Option<&[R]> {
    results.map(|results| &results.rows[..])
}

/// A row whose weft ratios are one per figure of the suite's list, by the
/// figure's name, and whose targets are checked on its runs (the file and
/// service suites). In JSON: `{ "name": "…", "runtimes": { "weft": {…}, … },
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
