//! `weft-bench`: see the crate's README.

fn main() -> std::process::ExitCode {
    weft_bench::common::cli::main()
}
