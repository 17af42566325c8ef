//! A run's status: each runtime's [`Attempt`] at a row of a suite either
//! completed, with the suite's figures, or failed, with an error
//! ([`Status`]); the mixed, echo and HTTP suites keep theirs as [`Run`]s,
//! the scheduler and timers suites in types of their own
//! ([`impl_attempt!`]). A [`Row`] holds a row's runs by runtime name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::WEFT;

/// Whether a runtime completed a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It completed.
    #[default]
    Ok,
    /// It failed to build, panicked, timed out or measured nothing.
    Failed,
}

/// One runtime's attempt at one row: its figures if it completed, its
/// error if it failed.
pub trait Attempt {
    /// What a completed run measured.
    type Figures;

    /// The figures, if the run completed.
    fn ok(&self) -> Option<&Self::Figures>;

    /// Why it failed, if it says.
    fn error(&self) -> Option<&str>;
}

/// One runtime's run of a row of the mixed, echo and HTTP suites, in JSON
/// `{"status": "ok", "figures": {…}}` or `{"status": "failed", "error":
/// "…", "figures": null}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run<F> {
    /// Whether it completed.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it measured; present when `status` is `ok`.
    pub figures: Option<F>,
}

impl<F> Run<F> {
    /// A run that completed.
    pub fn completed(figures: F) -> Run<F> {
        Run {
            status: Status::Ok,
            error: None,
            figures: Some(figures),
        }
    }

    /// A run that failed.
    pub fn failed(error: String) -> Run<F> {
        Run {
            status: Status::Failed,
            error: Some(error),
            figures: None,
        }
    }

    /// The figures, if the run completed.
    pub fn ok(&self) -> Option<&F> {
        self.figures.as_ref().filter(|_| self.status == Status::Ok)
    }
}

impl<F> Attempt for Run<F> {
    type Figures = F;

    fn ok(&self) -> Option<&F> {
        Run::ok(self)
    }

    fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// Implements [`Attempt`] for a run type with `status: Status`, `error:
/// Option<String>` and its figures in an `Option` field:
/// `impl_attempt!(RuntimeResult, summary: Summary)`.
macro_rules! impl_attempt {
    ($run:ty, $field:ident: $figures:ty) => {
        impl $crate::common::figure::Attempt for $run {
            type Figures = $figures;

            fn ok(&self) -> Option<&$figures> {
                let ok = self.status == $crate::common::figure::Status::Ok;
                self.$field.as_ref().filter(|_| ok)
            }

            fn error(&self) -> Option<&str> {
                self.error.as_deref()
            }
        }
    };
}

/// Implements [`Row`] for a row type with `name: String` and its runs in
/// `runtimes: BTreeMap<String, Run>`: `impl_row!(RowResult, EchoRun)`.
macro_rules! impl_row {
    ($row:ty, $run:ty) => {
        impl $crate::common::figure::Row for $row {
            type Run = $run;

            fn name(&self) -> &str {
                &self.name
            }

            fn runs(&self) -> &std::collections::BTreeMap<String, $run> {
                &self.runtimes
            }
        }
    };
}

pub(crate) use {impl_attempt, impl_row};

/// The figures of a completed run of a row of type `R`.
pub type FiguresOf<R> = <<R as Row>::Run as Attempt>::Figures;

/// A row of a suite: its runs by runtime name.
pub trait Row {
    /// One runtime's run of it.
    type Run: Attempt;

    /// Its name in JSON.
    fn name(&self) -> &str;

    /// Its runs, keyed by runtime name.
    fn runs(&self) -> &BTreeMap<String, Self::Run>;

    /// weft's figures, if it completed the row.
    fn weft(&self) -> Option<&<Self::Run as Attempt>::Figures> {
        self.runs().get(WEFT)?.ok()
    }

    /// Why weft has no figures.
    fn weft_error(&self) -> String {
        match self.runs().get(WEFT) {
            None => "weft did not run".to_owned(),
            Some(run) => run.error().unwrap_or("weft has no figures").to_owned(),
        }
    }

    /// Whether a runtime failed the row.
    fn any_failed(&self) -> bool {
        self.runs().values().any(|run| run.ok().is_none())
    }
}
