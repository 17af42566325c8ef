//! Figures: what every suite measures of a run, and how weft is judged on
//! it.
//!
//! A suite runs *rows* (a scheduler workload, a timers row, a mixed load,
//! an echo connection shape, the HTTP hello) on every runtime. Each
//! runtime's [`Attempt`] at a row either completed, with the suite's
//! figures, or failed, with an error; a [`Row`] holds them by runtime
//! name. A [`Figure`] is one number read from a completed run, described
//! once:
//!
//! | field | meaning |
//! |---|---|
//! | `name`, `unit` | as `compare` and the summary print it |
//! | `better` | [`Better::Lower`] (times, latency, CPU) or [`Better::Higher`] (throughput) |
//! | `peer` | what weft's value is divided by: the best peer, tokio, or nothing ([`Peer`]) |
//! | `format` | how `compare` prints a value ([`Format`]) |
//! | `floor`, `tolerance` | the change `compare` calls noise ([`Floor`], [`Tolerance`]) |
//!
//! From that one description come weft's ratio to the peer
//! ([`Figure::ratio`]), the gate's verdict and delta table between two
//! documents ([`gate`]) and the summary's lines (`crate::common::summary`).
//!
//! Beside the figures, what every suite shares: its rows' place in
//! `compare` and its JSON ([`rows`]: [`rows::Gated`], [`rows::SuiteResult`],
//! [`rows::RowKind`]), what may have skewed it ([`skew`]: the window a load
//! was measured over, the others' share of the machine, the warnings), and
//! the skeleton of its printed tables ([`table`]). A suite is then its
//! workload, its JSON and a short list of figures (`FIGURES` or `GATED`
//! in its result module: `scheduler::result::SCHEDULER`,
//! `timers::row_spec`, `mixed::result::FIGURES`, …); a suite whose ratios
//! are just those figures' keeps its rows as [`rows::FigureRow`]s (the
//! file, service and stall suites).
//!
//! Rules (correctness of every ratio; pinned by this module's tests):
//!
//! * weft is the runtime named [`WEFT`]. Its peers are the other runtimes
//!   of [`RuntimeKind`] (tokio, smol): weft's variants in the mixed suite
//!   and the mixed suite's oracle are neither, so no ratio names them.
//! * The best peer is the best in the figure's direction among the peers
//!   that completed the row and have the figure (the first in name order
//!   of equal lowest ones, the last of equal highest ones).
//! * A ratio divides by a positive value only: a peer at zero gives none.

pub mod gate;
pub mod rows;
mod run;
pub mod skew;
pub mod table;
pub mod target;

pub use run::{Attempt, FiguresOf, Row, Run, Status};
pub(crate) use run::{impl_attempt, impl_row};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::common::runtimes::RuntimeKind;

/// The runtime every ratio is about.
pub const WEFT: &str = "weft";

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Lower is better (time, latency, CPU, memory).
    Lower,
    /// Higher is better (throughput).
    Higher,
}

impl Better {
    /// How much worse `new` is than `base`, in the figure's unit
    /// (negative: better).
    pub fn worsening(self, base: f64, new: f64) -> f64 {
        match self {
            Better::Lower => new - base,
            Better::Higher => base - new,
        }
    }

    /// Whether `value` meets a target `limit`: at most it when lower is
    /// better, at least it when higher is.
    pub fn meets(self, value: f64, limit: f64) -> bool {
        match self {
            Better::Lower => value <= limit,
            Better::Higher => value >= limit,
        }
    }

    /// `lower better` / `higher better`.
    pub fn phrase(self) -> &'static str {
        match self {
            Better::Lower => "lower better",
            Better::Higher => "higher better",
        }
    }

    /// The best of `candidates`, `(name, value)`.
    pub fn best<'a>(
        self,
        candidates: impl Iterator<Item = (&'a str, f64)>,
    ) -> Option<(&'a str, f64)> {
        let candidates = candidates;
        match self {
            Better::Lower => candidates.min_by(|a, b| a.1.total_cmp(&b.1)),
            Better::Higher => candidates.max_by(|a, b| a.1.total_cmp(&b.1)),
        }
    }
}

/// What weft's value of a figure is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The best peer on this figure, in this row.
    Best,
    /// tokio, the runtime weft replaces.
    Tokio,
    /// Nothing: the figure is compared as weft's value only.
    None,
}

/// How `compare` prints a figure's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// About three significant digits ([`crate::common::table::ms`]).
    Plain,
    /// A whole number.
    Whole,
    /// Milliseconds printed as µs, unit included.
    Micros,
    /// A mean count ([`crate::common::table::count`]).
    Count,
}

impl Format {
    /// `value` as printed.
    pub fn show(self, value: f64) -> String {
        match self {
            Format::Plain => crate::common::table::ms(value),
            Format::Whole => format!("{value:.0}"),
            Format::Micros => format!("{} µs", crate::common::table::us(value)),
            Format::Count => crate::common::table::count(value),
        }
    }
}

/// The change of a figure, in its unit, below which `compare` calls it
/// noise however large it is relatively.
#[derive(Debug, Clone, Copy)]
pub enum Floor {
    /// The same on every row.
    Fixed(f64),
    /// Per row, by the row's name.
    ByRow(fn(row: &str) -> f64),
}

impl Floor {
    /// The floor on `row`.
    pub fn at(self, row: &str) -> f64 {
        match self {
            Floor::Fixed(floor) => floor,
            Floor::ByRow(floor) => floor(row),
        }
    }
}

/// Which of `compare`'s tolerances a figure answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// `--tolerance`: times, latencies, throughputs and every ratio.
    Time,
    /// `--csw-tolerance`: context switches, which swing far more.
    Switches,
}

/// One figure of a suite, read from the suite's figures `F` of a completed
/// run (module doc).
pub struct Figure<F> {
    /// Its name in `compare` (`req_per_s`).
    pub name: &'static str,
    /// The unit of its values (`req/s`).
    pub unit: &'static str,
    /// Which way it improves.
    pub better: Better,
    /// What weft's value is divided by.
    pub peer: Peer,
    /// How `compare` prints its values.
    pub format: Format,
    /// The change below which it is noise.
    pub floor: Floor,
    /// The tolerance it answers to.
    pub tolerance: Tolerance,
    /// Its value in a run's figures, if the run has it.
    pub value: fn(&F) -> Option<f64>,
}

// By hand: a derive would ask `F: Copy`, and `F` is only read through `value`.
impl<F> Clone for Figure<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for Figure<F> {}

impl<F> Figure<F> {
    /// A lower-is-better figure against the best peer, printed plain, with
    /// no floor.
    pub const fn lower(
        name: &'static str,
        unit: &'static str,
        value: fn(&F) -> Option<f64>,
    ) -> Self {
        Figure {
            name,
            unit,
            better: Better::Lower,
            peer: Peer::Best,
            format: Format::Plain,
            floor: Floor::Fixed(0.0),
            tolerance: Tolerance::Time,
            value,
        }
    }

    /// The same, higher-is-better.
    pub const fn higher(
        name: &'static str,
        unit: &'static str,
        value: fn(&F) -> Option<f64>,
    ) -> Self {
        Figure {
            better: Better::Higher,
            ..Figure::lower(name, unit, value)
        }
    }

    /// Divided by `peer` instead.
    pub const fn with_peer(self, peer: Peer) -> Self {
        Figure { peer, ..self }
    }

    /// Printed as `format`.
    pub const fn with_format(self, format: Format) -> Self {
        Figure { format, ..self }
    }

    /// With a floor of `floor` on every row.
    pub const fn with_floor(self, floor: f64) -> Self {
        Figure {
            floor: Floor::Fixed(floor),
            ..self
        }
    }

    /// With a floor per row.
    pub const fn with_floors(self, floor: fn(row: &str) -> f64) -> Self {
        Figure {
            floor: Floor::ByRow(floor),
            ..self
        }
    }

    /// Answering to `tolerance`.
    pub const fn with_tolerance(self, tolerance: Tolerance) -> Self {
        Figure { tolerance, ..self }
    }

    /// Its value in `run`, if the run completed and has it.
    pub fn of<A: Attempt<Figures = F>>(&self, run: &A) -> Option<f64> {
        (self.value)(run.ok()?)
    }

    /// The peer weft is divided by and its value, among the runs of `runs`
    /// that pass `include` (module doc: who is a peer, which is best).
    pub fn peer<'a, A: Attempt<Figures = F>>(
        &self,
        runs: &'a BTreeMap<String, A>,
        include: impl Fn(&str) -> bool,
    ) -> Option<(&'a str, f64)> {
        let mut candidates = runs
            .iter()
            .filter(|(name, _)| is_peer(name) && include(name))
            .filter_map(|(name, run)| Some((name.as_str(), self.of(run)?)));
        match self.peer {
            Peer::Best => self.better.best(candidates),
            Peer::Tokio => candidates.find(|(name, _)| *name == RuntimeKind::Tokio.name()),
            Peer::None => None,
        }
    }

    /// `own`'s value over the peer's in `runs` (among those passing
    /// `include`).
    pub fn ratio<A: Attempt<Figures = F>>(
        &self,
        own: &F,
        runs: &BTreeMap<String, A>,
        include: impl Fn(&str) -> bool,
    ) -> Option<PeerRatio> {
        let (peer, value) = self.peer(runs, include)?;
        Some(PeerRatio {
            peer: peer.to_owned(),
            value: ratio((self.value)(own)?, value)?,
        })
    }

    /// weft's ratio in `runs`, over every peer.
    pub fn weft_ratio<A: Attempt<Figures = F>>(
        &self,
        runs: &BTreeMap<String, A>,
    ) -> Option<PeerRatio> {
        self.ratio(runs.get(WEFT)?.ok()?, runs, |_| true)
    }
}

/// `a ÷ b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Whether `name` is one of weft's peers (module doc).
pub fn is_peer(name: &str) -> bool {
    name != WEFT && RuntimeKind::ALL.iter().any(|kind| kind.name() == name)
}

/// weft's value over a peer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerRatio {
    /// The peer.
    pub peer: String,
    /// weft's value ÷ the peer's.
    pub value: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs from `runtime=value` pairs; `runtime=-` failed.
    fn runs(values: &str) -> BTreeMap<String, Run<f64>> {
        values
            .split_whitespace()
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap();
                let run = match value.parse() {
                    Ok(value) => Run::completed(value),
                    Err(_) => Run::failed(format!("{name} failed")),
                };
                (name.to_owned(), run)
            })
            .collect()
    }

    const LOWER: Figure<f64> = Figure::lower("v", "ms", |v| Some(*v));
    const HIGHER: Figure<f64> = Figure::higher("v", "req/s", |v| Some(*v));

    #[test]
    fn the_best_peer_is_best_in_the_figures_direction() {
        let runs = runs("weft=2 tokio=4 smol=1");
        let lower = LOWER.weft_ratio(&runs).unwrap();
        assert_eq!((lower.peer.as_str(), lower.value), ("smol", 2.0));
        let higher = HIGHER.weft_ratio(&runs).unwrap();
        assert_eq!((higher.peer.as_str(), higher.value), ("tokio", 0.5));
        let tokio = LOWER.with_peer(Peer::Tokio).weft_ratio(&runs).unwrap();
        assert_eq!((tokio.peer.as_str(), tokio.value), ("tokio", 0.5));
        assert_eq!(LOWER.with_peer(Peer::None).weft_ratio(&runs), None);
        let without_smol = LOWER.ratio(&2.0, &runs, |peer| peer != "smol").unwrap();
        assert_eq!(without_smol.peer, "tokio");
    }

    #[test]
    fn failed_peers_variants_and_the_oracle_are_no_peers() {
        let runs = runs("weft=2 weft-no-demote=0.5 oracle=0.1 tokio=- smol=4");
        assert_eq!(LOWER.weft_ratio(&runs).unwrap().peer, "smol");
        assert!(!is_peer("weft") && !is_peer("oracle") && is_peer("tokio"));
    }

    #[test]
    fn no_ratio_to_a_zero_or_without_weft() {
        assert_eq!(LOWER.weft_ratio(&runs("weft=1 tokio=0")), None);
        assert_eq!(LOWER.weft_ratio(&runs("weft=- tokio=1")), None);
    }

    #[test]
    fn targets_and_worsening_follow_the_direction() {
        assert!(Better::Lower.meets(1.1, 1.1) && !Better::Lower.meets(1.2, 1.1));
        assert!(Better::Higher.meets(1.0, 1.0) && !Better::Higher.meets(0.9, 1.0));
        assert_eq!(Better::Lower.worsening(1.0, 3.0), 2.0);
        assert_eq!(Better::Higher.worsening(1.0, 3.0), -2.0);
        assert_eq!(Format::Micros.show(0.0474), "47 µs");
    }
}
