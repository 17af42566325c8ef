//! A suite as the shared code sees it: the one trait every suite
//! implements ([`Suite`]), and the same with its types erased
//! ([`AnySuite`], implemented for every `Suite`), which is what the list
//! in `crate::suites` holds and what the command line, the default run,
//! the document, `compare` and the summary iterate.
//!
//! A suite names its options (run alone, and in the default run), its
//! configuration and its results; it runs, renders its tables, says what
//! `compare` gates, adds its lines to the summary and says whether a
//! runtime failed. Its results are its section of the document: a field
//! named after it (`"echo": {…}`), or, for the scheduler suite, whose
//! fields predate the sections, fields at the document's top level.

use std::path::Path;
use std::process::ExitCode;

use clap::{ArgMatches, Args, Command, FromArgMatches};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::common::figure::gate::Gate;
use crate::common::json::Document;
use crate::common::run::{self, Profiled};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::summary::SummaryTable;

/// What the default run gives every suite beside its own options.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// `--quick` or `--full`.
    pub profile: Profile,
    /// `--runtimes`, each once, in order.
    pub runtimes: Vec<RuntimeKind>,
}

/// Another subcommand a suite brings (`http-serve`, the hidden
/// `timers-rss`): its command and what runs it.
pub struct Tool {
    /// The subcommand, with its arguments.
    pub command: Command,
    /// Runs it.
    pub main: fn(&ArgMatches) -> ExitCode,
}

// Options for a suite that has none in the default run. (A plain comment:
// clap reads a doc comment on an `Args` struct as its command's `about`.)
#[derive(Debug, Clone, Copy, Args)]
pub struct NoOptions {}

/// A suite of benchmarks: weft, tokio and smol on the same workloads,
/// with its tables, its part of the document, of `compare` and of the
/// summary. Adding one is a folder under `src/suites/` and a line in its
/// list (the README's "Adding a suite").
pub trait Suite: Sync + 'static {
    /// Its options run alone (`weft-bench NAME …`, beside `--quick`,
    /// `--full` and `--json`): the struct's doc comment is the
    /// subcommand's help.
    type Options: Args;
    /// Its options in the default run (`--echo-workers`): ids prefixed
    /// with its name so that no two suites' clash; [`NoOptions`] if none.
    type RunOptions: Args;
    /// How one run is set up.
    type Config;
    /// What one run measured: its section of the document.
    type Results: Serialize + DeserializeOwned + 'static;

    /// Its name: the subcommand that runs it alone, its field in the
    /// document, its value of `--lanes`, its tables' first word.
    const NAME: &'static str;
    /// What it measures, in a few words (`--lanes`'s help).
    const ABOUT: &'static str;
    /// Whether the default run runs it when `--lanes` is not given.
    const DEFAULT: bool = true;
    /// Whether its section is fields at the document's top level rather
    /// than a field of its name (only the scheduler suite's).
    const TOP_LEVEL: bool = false;
    /// Whether, run alone with `--json`, it writes its results as the
    /// whole document (a schema of its own) rather than as its section of
    /// the shared one.
    const OWN_DOCUMENT: bool = false;

    /// Its configuration run alone; `Err`: options that do not go together.
    fn alone(&self, options: Self::Options, profile: Profile) -> Result<Self::Config, String>;

    /// Its configuration in the default run.
    fn in_run(&self, options: Self::RunOptions, run: &RunContext) -> Self::Config;

    /// The profile, workers and runtimes of `config` (what the document
    /// records when this suite is the first to run).
    fn setup(&self, config: &Self::Config) -> Setup;

    /// Runs it, progress on stderr; `Err` when it could not run at all (a
    /// runtime that fails a row is in the results).
    fn run(&self, config: &Self::Config) -> Result<Self::Results, String>;

    /// Its tables.
    fn render(&self, results: &Self::Results) -> String;

    /// Writes what it writes beside the document (a chart), after its
    /// tables; `json` is `--json`'s file.
    fn after(&self, _config: &Self::Config, _results: &Self::Results, _json: Option<&Path>) {}

    /// Whether a runtime failed a row (the run then exits 1).
    fn failed(&self, results: &Self::Results) -> bool;

    /// `compare`'s table for it between two documents (either may lack
    /// it), and whether NEW passed.
    fn gate(
        &self,
        gate: &Gate,
        base: Option<&Self::Results>,
        new: Option<&Self::Results>,
    ) -> (String, bool);

    /// Adds its headline figures (and notes) to the default run's summary.
    fn summarize(&self, _results: &Self::Results, _table: &mut SummaryTable) {}

    /// Its section when it did not run, if the document must have one
    /// anyway (the scheduler suite's top-level fields, describing `setup`).
    fn absent(&self, _setup: &Setup) -> Option<Self::Results> {
        None
    }

    /// The other subcommands it brings.
    fn tools(&self) -> Vec<Tool> {
        Vec::new()
    }
}

/// A [`Suite`] with its types erased: what `crate::suites::ALL` holds.
/// Every `Suite` is one; the methods take the command line's matches and
/// whole documents.
pub trait AnySuite: Sync {
    /// [`Suite::NAME`].
    fn name(&self) -> &'static str;
    /// [`Suite::ABOUT`].
    fn about(&self) -> &'static str;
    /// [`Suite::DEFAULT`].
    fn default_on(&self) -> bool;
    /// Its subcommand: run alone.
    fn command(&self) -> Command;
    /// `run` with its default-run options added.
    fn run_args(&self, run: Command) -> Command;
    /// [`Suite::tools`].
    fn tools(&self) -> Vec<Tool>;
    /// Runs it alone from its subcommand's matches.
    fn alone(&self, matches: &ArgMatches) -> ExitCode;
    /// Runs it in the default run: prints its tables, adds its section;
    /// the setup it ran.
    fn in_run(
        &self,
        matches: &ArgMatches,
        context: &RunContext,
        document: &mut Document,
        json: Option<&Path>,
    ) -> Result<Setup, String>;
    /// Adds its [`Suite::absent`] section if the document lacks one.
    fn absent(&self, setup: &Setup, document: &mut Document);
    /// Its section as JSON, if the document has it: `(top level, text)`.
    fn write(&self, document: &Document) -> serde_json::Result<Option<(bool, String)>>;
    /// Reads its section from a document's fields, if there.
    fn read(&self, fields: &Map<String, Value>, document: &mut Document) -> serde_json::Result<()>;
    /// [`Suite::gate`] on two documents.
    fn gate(&self, gate: &Gate, base: &Document, new: &Document) -> (String, bool);
    /// [`Suite::summarize`], if the document has it.
    fn summarize(&self, document: &Document, table: &mut SummaryTable);
    /// [`Suite::failed`], if the document has it.
    fn failed(&self, document: &Document) -> bool;
}

impl<S: Suite> AnySuite for S {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn about(&self) -> &'static str {
        S::ABOUT
    }

    fn default_on(&self) -> bool {
        S::DEFAULT
    }

    fn command(&self) -> Command {
        Profiled::augment_args(S::Options::augment_args(Command::new(S::NAME)))
    }

    fn run_args(&self, run: Command) -> Command {
        S::RunOptions::augment_args(run)
    }

    fn tools(&self) -> Vec<Tool> {
        Suite::tools(self)
    }

    fn alone(&self, matches: &ArgMatches) -> ExitCode {
        let parsed = Profiled::from_arg_matches(matches)
            .and_then(|profiled| Ok((profiled, S::Options::from_arg_matches(matches)?)));
        let (profiled, options) = match parsed {
            Ok(parsed) => parsed,
            Err(err) => err.exit(),
        };
        match Suite::alone(self, options, profiled.profile()) {
            Ok(config) => run::alone(self, &config, profiled.json.as_deref()),
            Err(err) => {
                eprintln!("weft-bench: {err}");
                ExitCode::from(2)
            }
        }
    }

    fn in_run(
        &self,
        matches: &ArgMatches,
        context: &RunContext,
        document: &mut Document,
        json: Option<&Path>,
    ) -> Result<Setup, String> {
        let options = S::RunOptions::from_arg_matches(matches).map_err(|e| e.to_string())?;
        let config = Suite::in_run(self, options, context);
        run::one(self, &config, document, json)
    }

    fn absent(&self, setup: &Setup, document: &mut Document) {
        if document.get::<S>().is_none()
            && let Some(results) = Suite::absent(self, setup)
        {
            document.insert::<S>(results);
        }
    }

    fn write(&self, document: &Document) -> serde_json::Result<Option<(bool, String)>> {
        let Some(results) = document.get::<S>() else {
            return Ok(None);
        };
        Ok(Some((S::TOP_LEVEL, serde_json::to_string(results)?)))
    }

    fn read(&self, fields: &Map<String, Value>, document: &mut Document) -> serde_json::Result<()> {
        let section = if S::TOP_LEVEL {
            Some(Value::Object(fields.clone()))
        } else {
            fields.get(S::NAME).cloned()
        };
        if let Some(section) = section {
            document.insert::<S>(serde_json::from_value(section)?);
        }
        Ok(())
    }

    fn gate(&self, gate: &Gate, base: &Document, new: &Document) -> (String, bool) {
        Suite::gate(self, gate, base.get::<S>(), new.get::<S>())
    }

    fn summarize(&self, document: &Document, table: &mut SummaryTable) {
        if let Some(results) = document.get::<S>() {
            Suite::summarize(self, results, table);
        }
    }

    fn failed(&self, document: &Document) -> bool {
        document.get::<S>().is_some_and(|r| Suite::failed(self, r))
    }
}
