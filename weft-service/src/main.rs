//! The `weft-service` binary: the command line, then `weft_service::run`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match weft_service::run(weft_service::Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("weft-service: {error}");
            ExitCode::FAILURE
        }
    }
}
