//! Running suites: the default run (the suites `--lanes` names, in the
//! list's order), a suite run alone, and what both end with: each suite's
//! tables as it finishes, then the summary, the document written to
//! `--json`, and the exit code (1 if a runtime failed a row anywhere or a
//! suite could not run; a missed target never fails a run).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgMatches, Args, FromArgMatches};

use crate::common::figure::table::header;
use crate::common::json::{self, Document};
use crate::common::runtimes::RuntimeKind;
use crate::common::setup::{Profile, Setup};
use crate::common::suite::{RunContext, Suite};
use crate::common::summary;
use crate::suites::ALL;

// The profile of a command that measures, and where its JSON goes. (A
// plain comment: clap reads a doc comment on an `Args` struct as its
// command's `about`.)
#[derive(Debug, Clone, Args)]
pub struct Profiled {
    /// Quick profile (the default; the command's help says how long).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Full profile: longer windows or more rounds (the command's help).
    #[arg(long)]
    pub full: bool,
    /// Also write the results to FILE as JSON (a suite run alone writes a
    /// document with its section only).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

impl Profiled {
    /// `--quick` or `--full`.
    pub fn profile(&self) -> Profile {
        if self.full {
            Profile::Full
        } else {
            Profile::Quick
        }
    }
}

// `--runtimes` of the default run.
#[derive(Debug, Clone, Args)]
pub struct Runtimes {
    /// The runtimes to run, in the order each suite runs them.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "weft,tokio,smol"
    )]
    pub runtimes: Vec<RuntimeKind>,
}

// What most suites take run alone: workers and runtimes.
#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// Worker threads of every runtime.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,
    #[command(flatten)]
    pub runtimes: Runtimes,
}

impl SuiteArgs {
    /// The runtimes asked for (each once), `profile` on these workers.
    pub fn setup(&self, profile: Profile) -> Setup {
        let runtimes = dedup(&self.runtimes.runtimes);
        Setup::new(profile, usize::from(self.workers), &runtimes)
    }
}

/// `all`, or those of them in `chosen` when any is (`--only`).
pub fn only<T: PartialEq + Copy>(all: &[T], chosen: &[T]) -> Vec<T> {
    let chosen = |item: &&T| chosen.is_empty() || chosen.contains(item);
    all.iter().filter(chosen).copied().collect()
}

/// `items` without repeats, in order.
pub fn dedup<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut unique = Vec::with_capacity(items.len());
    for &item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique
}

/// The default run: every suite `--lanes` names (each suite's options
/// from `matches`), in the list's order.
pub fn default_run(matches: &ArgMatches) -> ExitCode {
    let parsed = Profiled::from_arg_matches(matches)
        .and_then(|profiled| Ok((profiled, Runtimes::from_arg_matches(matches)?)));
    let (profiled, runtimes) = parsed.unwrap_or_else(|err| err.exit());
    let chosen: Vec<&String> = matches
        .get_many::<String>(SUITES_ARG)
        .map(Iterator::collect)
        .unwrap_or_default();
    let context = RunContext {
        profile: profiled.profile(),
        runtimes: dedup(&runtimes.runtimes),
    };
    let json = profiled.json.as_deref();
    let mut document = Document::new();
    let (mut first, mut failed) = (None, false);
    let suites = ALL.iter().filter(|s| chosen.iter().any(|c| *c == s.name()));
    for suite in suites {
        if first.is_none() {
            print!(
                "{}",
                header(suite.name(), &document.machine, &document.versions)
            );
        }
        match suite.in_run(matches, &context, &mut document, json) {
            Ok(setup) => {
                first.get_or_insert(setup);
            }
            Err(err) => {
                eprintln!("weft-bench: {}: {err}", suite.name());
                failed = true;
            }
        }
    }
    finish(document, first, json, failed)
}

/// The id of `--lanes`: the suites the default run runs.
pub const SUITES_ARG: &str = "suites";

/// Runs `suite` alone as `config` says: its tables, the summary, and its
/// document (or its own, [`Suite::OWN_DOCUMENT`]) to `json`.
pub fn alone<S: Suite>(suite: &S, config: &S::Config, json: Option<&Path>) -> ExitCode {
    let mut document = Document::new();
    if !S::OWN_DOCUMENT {
        print!("{}", header(S::NAME, &document.machine, &document.versions));
    }
    let setup = match one(suite, config, &mut document, json) {
        Ok(setup) => setup,
        Err(err) => {
            eprintln!("weft-bench: {} failed: {err}", S::NAME);
            return ExitCode::FAILURE;
        }
    };
    if !S::OWN_DOCUMENT {
        return finish(document, Some(setup), json, false);
    }
    let results = document.get::<S>().expect("the suite just ran");
    if let Some(path) = json {
        let text = serde_json::to_string(results).map_err(std::io::Error::other);
        if let Err(err) = text.and_then(|text| std::fs::write(path, text + "\n")) {
            eprintln!("weft-bench: cannot write {}: {err}", path.display());
            return ExitCode::FAILURE;
        }
        eprintln!("weft-bench: wrote {}", path.display());
    }
    exit_code(suite.failed(results))
}

/// Runs `suite` as `config` says, prints its tables, writes what it
/// writes beside the document and adds its section; the setup it ran.
pub fn one<S: Suite>(
    suite: &S,
    config: &S::Config,
    document: &mut Document,
    json: Option<&Path>,
) -> Result<Setup, String> {
    let results = suite.run(config)?;
    print!("{}", suite.render(&results));
    suite.after(config, &results, json);
    document.insert::<S>(results);
    Ok(suite.setup(config))
}

/// Ends a run: the sections of suites that must have one, the summary,
/// the document to `json`; exits 1 if `failed` (a suite could not run)
/// or a runtime failed a row.
fn finish(
    mut document: Document,
    first: Option<Setup>,
    json: Option<&Path>,
    failed: bool,
) -> ExitCode {
    if let Some(setup) = &first {
        for suite in ALL {
            suite.absent(setup, &mut document);
        }
    }
    print!("{}", summary::render(&document));
    if let Some(path) = json {
        if let Err(err) = json::write(path, &document) {
            eprintln!("weft-bench: cannot write {}: {err}", path.display());
            return ExitCode::FAILURE;
        }
        eprintln!("weft-bench: wrote {}", path.display());
    }
    exit_code(failed || ALL.iter().any(|suite| suite.failed(&document)))
}

fn exit_code(failed: bool) -> ExitCode {
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
