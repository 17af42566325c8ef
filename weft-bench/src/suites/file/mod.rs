//! The file suite, `weft-bench file` (and in the default
//! run): file reads and writes through each runtime's file API beside a
//! 1 ms ticker on the same runtime (issue #36, item 2).
//!
//! One scene, one row ([`ROW`]): 32 tasks each write a fresh 8 MiB file
//! and 32 tasks each read a pre-written 8 MiB one, all at once, in chunks
//! of 64 KiB to 1 MiB (task *k* of each kind uses the *k*-th size of
//! [`Sizes::chunk_bytes`], cycling), while a ticker task sleeps 1 ms in a
//! loop and records how late each sleep ended. The runtimes, 2 workers
//! each:
//!
//! * **weft**: `weft::fs::File` on weft's blocking pool, `weft::time`;
//! * **tokio**: `tokio::fs::File` on tokio's blocking pool, `tokio::time`;
//! * **smol**: `async_fs::File` on the `blocking` crate's pool (its pipe
//!   streams each file through one pool thread), `async_io::Timer`, on the
//!   scheduler suite's executor threads.
//!
//! Files live in a directory of their own under the OS temp dir, so every
//! runtime reads and writes the same filesystem; the read files are
//! written and synced before any runtime runs, so every read comes from
//! the page cache alike, and each pass's written files are checked (their
//! length) and removed after it. Each (round, runtime) runs on a runtime
//! built for it and dropped after it, on a thread of its own abandoned
//! (with a warning) if it does not answer within [`FileConfig::timeout`]:
//! first a warm-up pass (every task moves [`Sizes::warmup_bytes`]: it
//! starts the blocking pool's threads), then the measured pass. Rounds
//! alternate the runtimes, each round starting one runtime later (quick
//! 5, full 15): one pass lasts a few hundred ms, too short alone for a p99
//! of 1 ms ticks or a steady total.
//!
//! Per runtime: the pass's wall time (the median of the rounds), the
//! ticker's lateness percentiles over every measured pass, the process's
//! CPU over the pass; weft's ratio to the best peer on each, and its
//! targets: total time ≤ the best peer's, ticker p99 ≤ 2 ms. [`workload`]
//! is the scene, [`result`] the JSON, figures and targets, [`report`] the
//! table. A missed target never fails the run; a runtime that failed
//! does.

pub mod report;
pub mod result;
pub mod suite;
pub mod workload;

pub use suite::File;

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::common::figure::skew::Watch;
use crate::common::runtimes::{RuntimeKind, Smol, Tokio, Weft};
use crate::common::setup::Profile;
use crate::common::setup::Setup;
use crate::common::thread::on_thread;

use result::{FileResult, FileRow, FileRun, FileSettings};
use workload::{Pass, Plan};

/// The suite's one row in JSON, `compare` and the summary: 64 tasks on
/// 8 MiB files.
pub const ROW: &str = "rw64_8mib";

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// How much the suite moves; recorded in the document's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizes {
    /// Tasks writing a fresh file each.
    pub writers: usize,
    /// Tasks reading a pre-written file each.
    pub readers: usize,
    /// Bytes of every file.
    pub file_bytes: usize,
    /// The chunk sizes: the *k*-th writer and the *k*-th reader write or
    /// read in chunks of `chunk_bytes[k % len]`.
    pub chunk_bytes: Vec<usize>,
    /// Bytes every task moves in the warm-up pass before each measured one.
    pub warmup_bytes: usize,
    /// Measured passes per runtime, the runtimes alternating.
    pub rounds: usize,
    /// The ticker's period, µs.
    pub tick_us: u64,
}

impl Sizes {
    /// The sizes of `profile`: 32 writers and 32 readers of 8 MiB in
    /// 64 KiB-1 MiB chunks, 1 MiB each in the warm-up, a 1 ms ticker; five
    /// rounds (quick), fifteen (full).
    pub fn of(profile: Profile) -> Sizes {
        Sizes {
            writers: 32,
            readers: 32,
            file_bytes: 8 * MIB,
            chunk_bytes: vec![64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, MIB],
            warmup_bytes: MIB,
            rounds: match profile {
                Profile::Quick => 5,
                Profile::Full => 15,
            },
            tick_us: 1_000,
        }
    }

    /// For smoke tests: 4 writers and 4 readers of 256 KiB (not meaningful
    /// as measurements).
    pub fn tiny() -> Sizes {
        Sizes {
            writers: 4,
            readers: 4,
            file_bytes: 256 * KIB,
            chunk_bytes: vec![16 * KIB, 64 * KIB],
            warmup_bytes: 32 * KIB,
            rounds: 1,
            tick_us: 1_000,
        }
    }

    /// Bytes one pass reads and writes.
    pub fn pass_bytes(&self) -> usize {
        (self.writers + self.readers) * self.file_bytes
    }

    /// The largest chunk (at least one byte).
    fn max_chunk(&self) -> usize {
        self.chunk_bytes.iter().copied().max().unwrap_or(1).max(1)
    }
}

/// Everything a run of the file suite needs to know.
#[derive(Debug, Clone)]
pub struct FileConfig {
    /// Profile (recorded; the sizes say what is run), workers, runtimes in
    /// the order the first round runs them (each later round starts one
    /// runtime later).
    pub setup: Setup,
    /// How much it moves.
    pub sizes: Sizes,
    /// Where the suite's directory goes (the OS temp dir).
    pub parent: PathBuf,
    /// Longest wait for one runtime's warm-up and measured pass.
    pub timeout: Duration,
}

impl FileConfig {
    /// The default configuration of `setup`: the profile's sizes, the OS
    /// temp dir, 120 s per pass.
    pub fn new(setup: Setup) -> FileConfig {
        FileConfig {
            sizes: Sizes::of(setup.profile),
            setup,
            parent: std::env::temp_dir(),
            timeout: Duration::from_secs(120),
        }
    }
}

/// Runs the suite and returns what it measured.
pub fn run(config: &FileConfig) -> FileResult {
    let mut watch = Watch::start("file");
    let runs = match Scratch::create(&config.parent, &config.sizes) {
        Ok(scratch) => run_rounds(config, &scratch.plan, &mut watch.warnings),
        Err(err) => {
            let why = format!(
                "cannot prepare the files in {}: {err}",
                config.parent.display()
            );
            let failed =
                |kind: &RuntimeKind| (kind.name().to_owned(), FileRun::failed(why.clone()));
            config.setup.runtimes.iter().map(failed).collect()
        }
    };
    for (name, run) in &runs {
        let what = format!("file: {ROW} on {name}");
        watch.window(&what, run, "tasks", Duration::ZERO);
    }
    FileResult {
        settings: FileSettings::new(config),
        rows: vec![FileRow::of(runs)],
        skew: watch.finish(),
    }
}

/// Every round, the runtimes alternating within each, each round starting
/// one runtime later than the one before (so that over the rounds each
/// runtime runs first, and after each other one, alike: the runs were seen
/// to depend on their place); a runtime that failed a pass sits out the
/// rounds after it.
fn run_rounds(
    config: &FileConfig,
    plan: &Arc<Plan>,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, FileRun> {
    let mut passes: Vec<(RuntimeKind, Vec<Pass>, Option<String>)> = config
        .setup
        .runtimes
        .iter()
        .map(|&kind| (kind, Vec::new(), None))
        .collect();
    let rounds = config.sizes.rounds.max(1);
    for round in 1..=rounds {
        passes.rotate_left(usize::from(round > 1));
        for (kind, done, error) in passes.iter_mut().filter(|p| p.2.is_none()) {
            let measured = measure(*kind, config, plan, warnings);
            let line = match &measured {
                Ok(pass) => report::pass_line(pass, &config.sizes),
                Err(err) => format!("FAILED: {err}"),
            };
            let name = kind.name();
            eprintln!("weft-bench: file: {ROW} on {name}, round {round}/{rounds}: {line}");
            match measured {
                Ok(pass) => done.push(pass),
                Err(err) => *error = Some(err),
            }
        }
    }
    let runs = passes.into_iter().map(|(kind, done, error)| {
        let run = match error {
            None => FileRun::from_passes(&done, &config.sizes),
            Some(err) => FileRun::failed(err),
        };
        (kind.name().to_owned(), run)
    });
    runs.collect()
}

/// One round on `kind`: its warm-up and measured pass on a runtime built
/// for them, on a thread of its own, abandoned if it does not answer in
/// time.
fn measure(
    kind: RuntimeKind,
    config: &FileConfig,
    plan: &Arc<Plan>,
    warnings: &mut Vec<String>,
) -> Result<Pass, String> {
    let (workers, timeout, plan) = (config.setup.workers, config.timeout, plan.clone());
    let work = move || match kind {
        RuntimeKind::Weft => workload::measure::<Weft>(&plan, workers),
        RuntimeKind::Tokio => workload::measure::<Tokio>(&plan, workers),
        RuntimeKind::Smol => workload::measure::<Smol>(&plan, workers),
    };
    let abandoned = || {
        warnings.push(format!(
            "file: {} abandoned after {} s; it may still be running and disturb what follows",
            kind.name(),
            timeout.as_secs()
        ));
    };
    on_thread(format!("file-{}", kind.name()), timeout, work, abandoned)
}

/// The suite's directory under the OS temp dir, with the files the readers
/// read; removed, with everything in it, when dropped.
struct Scratch {
    plan: Arc<Plan>,
}

impl Scratch {
    /// A new directory under `parent` holding one file of
    /// `sizes.file_bytes` per reader, written and synced.
    fn create(parent: &Path, sizes: &Sizes) -> io::Result<Scratch> {
        static SCRATCH_DIRS: AtomicUsize = AtomicUsize::new(0);
        let index = SCRATCH_DIRS.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("weft-bench-file-{}-{index}", std::process::id()));
        fs::create_dir_all(&dir)?;
        // Built before the files, so that a failure below removes the directory.
        let scratch = Scratch {
            plan: Arc::new(Plan::new(dir, sizes.clone(), pattern(sizes.max_chunk()))),
        };
        for reader in 0..sizes.readers {
            write_reader_file(
                &scratch.plan.read_path(reader),
                sizes,
                &scratch.plan.pattern,
            )?;
        }
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // A thread abandoned mid-pass may still write here; what it leaves
        // is lost with the directory, and an error here loses nothing.
        let _ = fs::remove_dir_all(&self.plan.dir);
    }
}

/// `len` bytes that do not repeat within a chunk, the same in every run.
fn pattern(len: usize) -> Arc<[u8]> {
    let mut rng = fastrand::Rng::with_seed(36);
    (0..len).map(|_| rng.u8(..)).collect()
}

/// A reader's file, `sizes.file_bytes` of the pattern, synced so that no
/// write-back of it runs during a pass.
fn write_reader_file(path: &Path, sizes: &Sizes, pattern: &[u8]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    let mut left = sizes.file_bytes;
    while left > 0 {
        let n = left.min(pattern.len());
        file.write_all(&pattern[..n])?;
        left -= n;
    }
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiles_are_the_issues_scene() {
        let quick = Sizes::of(Profile::Quick);
        assert_eq!(
            (quick.writers, quick.readers, quick.file_bytes),
            (32, 32, 8 * MIB)
        );
        assert_eq!(quick.pass_bytes(), 512 * MIB);
        assert_eq!((quick.max_chunk(), quick.chunk_bytes[0]), (MIB, 64 * KIB));
        assert_eq!((quick.rounds, Sizes::of(Profile::Full).rounds), (5, 15));
    }

    #[test]
    fn the_scratch_directory_holds_the_read_files_and_goes_away() {
        let sizes = Sizes {
            readers: 2,
            file_bytes: 100 * KIB,
            ..Sizes::tiny()
        };
        let scratch = Scratch::create(&std::env::temp_dir(), &sizes).unwrap();
        let dir = scratch.plan.dir.clone();
        let read = fs::read(scratch.plan.read_path(1)).unwrap();
        assert_eq!(read.len(), 100 * KIB);
        assert_eq!(&read[..64 * KIB], &scratch.plan.pattern[..]);
        drop(scratch);
        assert!(!dir.exists());
    }
}
