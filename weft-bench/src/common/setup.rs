//! How a suite is set up: its [`Profile`], and [`Setup`] (the profile, the
//! worker threads of every runtime, the runtimes in order); what every
//! suite's settings record of it ([`SuiteSettings`]), and of the window of
//! a suite that runs a load for a while ([`WindowSettings`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::common::runtimes::RuntimeKind;

/// How long a suite measures: quick (the default) or full (longer windows,
/// more rounds or repetitions; each suite says how much).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The default.
    Quick,
    /// Longer: each suite says how much.
    Full,
}

impl Profile {
    /// The profile's name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }
}

/// How a suite is set up: its profile, the worker threads of every runtime,
/// and the runtimes in the order it runs them (the mixed suite's are
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
    pub fn settings(&self, name: fn(K) -> &'static str) -> SuiteSettings {
        SuiteSettings::new(
            self.profile,
            self.workers,
            self.runtimes.iter().map(|&k| name(k)),
        )
    }
}

/// How every suite was run. In JSON, among the suite's settings:
/// `"profile": "quick", "workers": 2, "runtimes": ["weft", "tokio",
/// "smol"]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteSettings {
    /// `quick` or `full`.
    pub profile: String,
    /// Worker threads of every runtime.
    pub workers: usize,
    /// The runtimes, in the order each row ran them.
    pub runtimes: Vec<String>,
}

impl SuiteSettings {
    /// The settings of a suite run with `profile` on `workers` workers.
    pub fn new<'a>(
        profile: Profile,
        workers: usize,
        runtimes: impl IntoIterator<Item = &'a str>,
    ) -> SuiteSettings {
        SuiteSettings {
            profile: profile.name().to_owned(),
            workers,
            runtimes: runtimes.into_iter().map(str::to_owned).collect(),
        }
    }
}

/// The window of a suite that runs a load for a while (mixed, echo, HTTP).
/// In JSON, among the suite's settings: `"warmup_ms": 500.0, "measure_ms":
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

    /// `{warm-up} s warm-up, {measured} s measured`, as the suites' tables
    /// head it.
    pub fn describe(&self) -> String {
        format!(
            "{} s warm-up, {} s measured",
            self.warmup_ms / 1e3,
            self.measure_ms / 1e3
        )
    }
}
