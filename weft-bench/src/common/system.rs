//! Where and what a run measured: the machine (cores, CPU model, OS) and the
//! versions of weft, the peers and the compiler.
//!
//! Peer and compiler versions are fixed at build time by `build.rs` (from
//! `Cargo.lock` and `rustc --version`), so they name what is linked into
//! this binary. weft's commit is read at run time with `git`, with flags
//! saying whether the working tree differed from it (in weft or in the suite).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::json::{Machine, Versions};

const UNKNOWN: &str = "unknown";

impl Machine {
    /// Describes the machine this process runs on.
    pub fn detect() -> Machine {
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model: cpu_model().unwrap_or_else(|| UNKNOWN.to_owned()),
            os: os_name().unwrap_or_else(|| UNKNOWN.to_owned()),
            kernel: read_trimmed("/proc/sys/kernel/osrelease")
                .unwrap_or_else(|| UNKNOWN.to_owned()),
        }
    }
}

impl Versions {
    /// The versions linked into this binary and weft's current commit.
    pub fn detect() -> Versions {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        Versions {
            weft_commit: git(&workspace, &["rev-parse", "HEAD"])
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            weft_dirty: has_changes(&workspace, &["weft", "Cargo.lock"]),
            bench_dirty: has_changes(&workspace, &["weft-bench"]),
            tokio: env!("WEFT_BENCH_TOKIO_VERSION").to_owned(),
            async_executor: env!("WEFT_BENCH_ASYNC_EXECUTOR_VERSION").to_owned(),
            rustc: env!("WEFT_BENCH_RUSTC_VERSION").to_owned(),
        }
    }
}

impl Versions {
    /// `weft <short commit>`, with `+dirty` when weft differed from it and a
    /// note when the suite itself did.
    pub fn weft_label(&self) -> String {
        let commit: String = self.weft_commit.chars().take(10).collect();
        let dirty = if self.weft_dirty == Some(true) {
            "+dirty"
        } else {
            ""
        };
        let suite = if self.bench_dirty == Some(true) {
            " (weft-bench modified)"
        } else {
            ""
        };
        format!("weft {commit}{dirty}{suite}")
    }
}

/// Whether tracked files under `paths` differ from HEAD; `None` if git
/// cannot tell.
fn has_changes(workspace: &Path, paths: &[&str]) -> Option<bool> {
    let status = ["status", "--porcelain", "--untracked-files=no", "--"];
    let args: Vec<&str> = status.iter().chain(paths).copied().collect();
    git(workspace, &args).map(|changes| !changes.is_empty())
}

fn cpu_model() -> Option<String> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").ok()?;
    cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map(|(_, model)| model.trim().to_owned())
}

fn os_name() -> Option<String> {
    let release = fs::read_to_string("/etc/os-release").ok()?;
    release
        .lines()
        .find_map(|line| line.strip_prefix("PRETTY_NAME="))
        .map(|name| name.trim_matches('"').to_owned())
}

fn read_trimmed(path: &str) -> Option<String> {
    Some(fs::read_to_string(path).ok()?.trim().to_owned())
}

/// Runs `git args` in `dir`; its trimmed stdout, or `None` if it failed.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
