//! Records, for the JSON document, the versions linked into weft-bench:
//! tokio's and async-executor's from the workspace's `Cargo.lock`, and the
//! compiler's from `rustc --version`.

use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

fn main() {
    let lock_path = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("../Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock_path.display());
    let lock = fs::read_to_string(&lock_path).unwrap_or_default();
    for (package, var) in [
        ("tokio", "WEFT_BENCH_TOKIO_VERSION"),
        ("async-executor", "WEFT_BENCH_ASYNC_EXECUTOR_VERSION"),
    ] {
        println!("cargo::rustc-env={var}={}", locked_versions(&lock, package));
    }
    println!(
        "cargo::rustc-env=WEFT_BENCH_RUSTC_VERSION={}",
        rustc_version()
    );
}

/// The versions of `package` in `Cargo.lock` (comma-separated if several),
/// or `unknown`.
fn locked_versions(lock: &str, package: &str) -> String {
    let name_line = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    let mut versions = Vec::new();
    while let Some(line) = lines.next() {
        if line == name_line {
            let version = lines.next().and_then(|l| l.strip_prefix("version = "));
            versions.extend(version.map(|v| v.trim_matches('"').to_owned()));
        }
    }
    if versions.is_empty() {
        "unknown".to_owned()
    } else {
        versions.join(",")
    }
}

fn rustc_version() -> String {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}
