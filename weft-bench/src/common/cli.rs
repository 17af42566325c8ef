//! The command line, built from the list of suites (`crate::suites`):
//! `weft-bench [run] [OPTIONS]` (the default run: the suites `--lanes`
//! names, by default every suite of the default run, in the list's
//! order, each with its own options such as `--echo-workers`),
//! `weft-bench SUITE [OPTIONS]` (one suite alone: `scheduler`, `timers`,
//! `mixed`, `echo`, `http`, `file`, `service`, `stall`, `metrics`),
//! `weft-bench compare BASE.json NEW.json`, and the suites' other
//! subcommands (`http-serve`, `metrics-dump`; hidden: `timers-rss`,
//! `service-serve`, which the timers and service suites run in a process
//! of their own).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::common::compare;
use crate::common::figure::gate::Tolerances;
use crate::common::run::{self, Profiled, Runtimes, SUITES_ARG};
use crate::suites::ALL;

// `weft-bench compare BASE.json NEW.json`.
#[derive(Debug, Args)]
struct CompareArgs {
    /// The baseline document.
    base: PathBuf,
    /// The document to check against it.
    new: PathBuf,
    /// Allowed growth, percent, of weft's median and of its ratios.
    #[arg(long, default_value_t = compare::DEFAULT_TOLERANCE_PCT, value_name = "PCT")]
    tolerance: f64,
    /// Allowed growth, percent, of weft's context switches per iteration.
    #[arg(long, default_value_t = compare::DEFAULT_CSW_TOLERANCE_PCT, value_name = "PCT")]
    csw_tolerance: f64,
}

/// The whole command line.
pub fn command() -> Command {
    let mut cli = run_args(Command::new("weft-bench"))
        .version(env!("CARGO_PKG_VERSION"))
        .about("weft-bench: weft next to tokio and smol on the same workloads, in the same run")
        .args_conflicts_with_subcommands(true)
        .subcommand(run_args(Command::new("run")).about(run_about()).long_about(format!(
            "{}.\n\nQuick profile: the scheduler suite in well under two minutes, the whole \
             run in about six; full: about four times longer (each suite's help says how).",
            run_about()
        )));
    for suite in ALL {
        cli = cli.subcommand(suite.command());
        for tool in suite.tools() {
            cli = cli.subcommand(tool.command);
        }
    }
    let compare = Command::new("compare")
        .about("Compare two `--json` documents; exit 1 on a failure or regression");
    cli.subcommand(CompareArgs::augment_args(compare))
}

/// `run`'s help: the suites it runs.
fn run_about() -> String {
    let names: Vec<&str> = ALL
        .iter()
        .filter(|s| s.default_on())
        .map(|s| s.name())
        .collect();
    format!(
        "Run the {} suites, and print their tables (the default)",
        names.join(", ")
    )
}

/// `run`'s arguments on `command` (also the top level's: `run` is the
/// default): the profile, `--json`, `--runtimes`, `--lanes`, and each
/// suite's own.
fn run_args(command: Command) -> Command {
    let names: Vec<&'static str> = ALL.iter().map(|s| s.name()).collect();
    let defaults: Vec<&str> = ALL
        .iter()
        .filter(|s| s.default_on())
        .map(|s| s.name())
        .collect();
    let help: Vec<String> = ALL
        .iter()
        .map(|s| format!("{}: {}", s.name(), s.about()))
        .collect();
    let suites = Arg::new(SUITES_ARG)
        .long("lanes")
        .visible_alias("suites")
        .value_name("SUITES")
        .value_delimiter(',')
        .value_parser(names)
        .default_values(defaults)
        .help("The suites to run (always in the order listed)")
        .long_help(format!(
            "The suites to run, always in this order:\n{}",
            help.join("\n")
        ));
    let mut command = Runtimes::augment_args(Profiled::augment_args(command)).arg(suites);
    for suite in ALL {
        command = suite.run_args(command);
    }
    command
}

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let matches = command().get_matches();
    match matches.subcommand() {
        None => run::default_run(&matches),
        Some(("run", run)) => run::default_run(run),
        Some(("compare", args)) => compare_main(args),
        Some((name, args)) => dispatch(name, args),
    }
}

/// Runs the suite, or the suite's tool, called `name`.
fn dispatch(name: &str, args: &ArgMatches) -> ExitCode {
    for suite in ALL {
        if suite.name() == name {
            return suite.alone(args);
        }
        if let Some(tool) = suite
            .tools()
            .into_iter()
            .find(|t| t.command.get_name() == name)
        {
            return (tool.main)(args);
        }
    }
    unreachable!("clap accepted a subcommand no suite has: {name}")
}

fn compare_main(args: &ArgMatches) -> ExitCode {
    let args = CompareArgs::from_arg_matches(args).unwrap_or_else(|err| err.exit());
    let tolerances = Tolerances {
        time_pct: args.tolerance,
        csw_pct: args.csw_tolerance,
    };
    compare::main(&args.base, &args.new, tolerances)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn the_default_run_is_every_default_suite_in_the_lists_order() {
        let matches = command().try_get_matches_from(["weft-bench"]).unwrap();
        let chosen: Vec<&str> = matches
            .get_many::<String>(SUITES_ARG)
            .unwrap()
            .map(String::as_str)
            .collect();
        let defaults: Vec<&str> = ALL
            .iter()
            .filter(|s| s.default_on())
            .map(|s| s.name())
            .collect();
        assert_eq!(chosen, defaults);
        assert_eq!(chosen[..2], ["scheduler", "timers"]);
        assert!(!chosen.contains(&"metrics"));
    }

    #[test]
    fn the_readmes_commands_parse() {
        for line in [
            "weft-bench --full",
            "weft-bench --lanes timers,mixed",
            "weft-bench --suites timers,mixed --timer-workers 4",
            "weft-bench run --workers 2 --lanes scheduler --runtimes weft,smol",
            "weft-bench timers --only spread",
            "weft-bench mixed --no-oracle --chart /tmp/c.svg",
            "weft-bench echo --only conn1_64b --no-floor",
            "weft-bench http --connections 8",
            "weft-bench service --runtime weft --soak 60",
            "weft-bench stall --only one_blocked --json /tmp/s.json",
            "weft-bench metrics --only counting --full",
            "weft-bench metrics-dump --format prometheus",
            "weft-bench http-serve --runtime weft --seconds 1",
            "weft-bench compare a.json b.json --tolerance 40",
        ] {
            let args = line.split_whitespace();
            if let Err(err) = command().try_get_matches_from(args) {
                panic!("{line}: {err}");
            }
        }
    }
}
