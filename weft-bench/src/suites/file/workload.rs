//! The file suite's scene, written once for every runtime: each runtime's
//! file API behind [`FileRuntime`], and one pass ([`measure`]): a ticker
//! task, then every writer and reader task at once, timed from the
//! ticker's spawn until the last of them finished.
//!
//! A writer creates its file (`File::create`), writes its bytes with
//! `write_all` in chunks of its size and flushes, which on every runtime
//! waits until the writes have landed (no `fsync`: the suite measures the
//! runtimes, not the disk). A reader opens its file and reads chunks of its
//! size until it has its bytes. A task whose byte count comes out wrong
//! fails the pass, and so does a written file of the wrong length.
//!
//! The ticker sleeps until 1 ms after it woke, again and again, and
//! records how late each sleep ended (`now − deadline`): each stall counts
//! once, in the tick it delayed, and the next tick starts from the late
//! wake instead of firing at once to catch up.

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::Sizes;
use crate::common::latency::Recorder;
use crate::common::measure::process_cpu_time;
use crate::common::others::{self, CpuTimes};
use crate::common::runtimes::timer::TimerRuntime;
use crate::common::runtimes::{Counters, Smol, Spawner, Tokio, Weft};

/// A runtime's files.
pub trait FileRuntime: TimerRuntime {
    /// Creates `path` and writes `bytes` of `pattern` to it in chunks of
    /// `chunk` (at most the pattern's length), then flushes; gives the
    /// bytes written.
    fn write(
        path: PathBuf,
        bytes: usize,
        chunk: usize,
        pattern: Arc<[u8]>,
    ) -> impl Future<Output = io::Result<usize>> + Send + 'static;

    /// Opens `path` and reads it in chunks of `chunk` until `limit` bytes
    /// or its end; gives the bytes read.
    fn read(
        path: PathBuf,
        limit: usize,
        chunk: usize,
    ) -> impl Future<Output = io::Result<usize>> + Send + 'static;
}

/// Writes `$bytes` of `$chunk` to `$file`, one `write_all` per chunk,
/// then flushes; reads `$file` `$chunk` bytes at a time until `$limit` or
/// the end: through whichever extension traits are in scope
/// (futures-lite's for weft's and async-fs's files, tokio's for its own).
macro_rules! chunks {
    (write $file:ident, $bytes:expr, $chunk:expr) => {{
        let (chunk, mut left): (&[u8], usize) = ($chunk, $bytes);
        while left > 0 {
            let n = left.min(chunk.len());
            $file.write_all(&chunk[..n]).await?;
            left -= n;
        }
        $file.flush().await?;
        Ok($bytes)
    }};
    (read $file:ident, $limit:expr, $chunk:expr) => {{
        let (limit, chunk) = ($limit, $chunk);
        let mut buffer = vec![0; chunk];
        let mut total = 0;
        while total < limit {
            let want = chunk.min(limit - total);
            match $file.read(&mut buffer[..want]).await? {
                0 => break,
                n => total += n,
            }
        }
        Ok(total)
    }};
}

/// [`FileRuntime`] for a runtime whose files are `$file`, read and
/// written through the extension traits `$read` and `$write`.
macro_rules! file_runtime {
    ($($runtime:ty => $file:ty, $read:path, $write:path;)*) => {$(
        impl FileRuntime for $runtime {
            async fn write(
                path: PathBuf,
                bytes: usize,
                chunk: usize,
                pattern: Arc<[u8]>,
            ) -> io::Result<usize> {
                use $write;
                let mut file = <$file>::create(path).await?;
                chunks!(write file, bytes, &pattern[..chunk])
            }

            async fn read(path: PathBuf, limit: usize, chunk: usize) -> io::Result<usize> {
                use $read;
                let mut file = <$file>::open(path).await?;
                chunks!(read file, limit, chunk)
            }
        }
    )*};
}

file_runtime! {
    Weft => weft::fs::File, futures_lite::AsyncReadExt, futures_lite::AsyncWriteExt;
    Smol => async_fs::File, futures_lite::AsyncReadExt, futures_lite::AsyncWriteExt;
    Tokio => tokio::fs::File, tokio::io::AsyncReadExt, tokio::io::AsyncWriteExt;
}

/// What every pass works on: the suite's directory, its sizes, the bytes
/// written.
#[derive(Debug)]
pub struct Plan {
    /// The suite's directory.
    pub dir: PathBuf,
    /// How much is moved.
    pub sizes: Sizes,
    /// What the writers write (as long as the largest chunk).
    pub pattern: Arc<[u8]>,
}

/// Which pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Every task moves `warmup_bytes`, into files of its own.
    Warmup,
    /// Every task moves `file_bytes`.
    Measured,
}

/// One task of a pass.
#[derive(Debug, Clone)]
enum Job {
    /// Write a fresh file.
    Write { path: PathBuf, chunk: usize },
    /// Read a pre-written file.
    Read { path: PathBuf, chunk: usize },
}

impl Plan {
    /// The plan of `sizes` in `dir`.
    pub fn new(dir: PathBuf, sizes: Sizes, pattern: Arc<[u8]>) -> Plan {
        Plan {
            dir,
            sizes,
            pattern,
        }
    }

    /// The file the `reader`-th reader reads.
    pub fn read_path(&self, reader: usize) -> PathBuf {
        self.dir.join(format!("read-{reader}"))
    }

    fn write_path(&self, writer: usize, stage: Stage) -> PathBuf {
        let stage = match stage {
            Stage::Warmup => "warmup",
            Stage::Measured => "write",
        };
        self.dir.join(format!("{stage}-{writer}"))
    }

    /// The bytes each task of `stage` moves.
    fn bytes(&self, stage: Stage) -> usize {
        match stage {
            Stage::Warmup => self.sizes.warmup_bytes.min(self.sizes.file_bytes),
            Stage::Measured => self.sizes.file_bytes,
        }
    }

    /// The tasks of `stage`, writers and readers interleaved, so that both
    /// kinds start together.
    fn jobs(&self, stage: Stage) -> Vec<Job> {
        let sizes = &self.sizes;
        let chunk = |k: usize| {
            let chunks = &sizes.chunk_bytes;
            let chunk = chunks.get(k % chunks.len().max(1)).copied().unwrap_or(1);
            chunk.clamp(1, self.pattern.len())
        };
        let mut jobs = Vec::with_capacity(sizes.writers + sizes.readers);
        for k in 0..sizes.writers.max(sizes.readers) {
            if k < sizes.writers {
                let path = self.write_path(k, stage);
                jobs.push(Job::Write {
                    path,
                    chunk: chunk(k),
                });
            }
            if k < sizes.readers {
                let path = self.read_path(k);
                jobs.push(Job::Read {
                    path,
                    chunk: chunk(k),
                });
            }
        }
        jobs
    }

    /// Checks that every writer's file of `stage` has its bytes, and
    /// removes them.
    fn check_and_remove_writes(&self, stage: Stage) -> Result<(), String> {
        let mut result = Ok(());
        for writer in 0..self.sizes.writers {
            let path = self.write_path(writer, stage);
            let len = std::fs::metadata(&path).map(|m| m.len());
            let expected = self.bytes(stage) as u64;
            match len {
                Ok(len) if len == expected => {}
                Ok(len) => {
                    result = Err(format!(
                        "{} has {len} bytes, not {expected}",
                        path.display()
                    ))
                }
                Err(err) => result = Err(format!("{}: {err}", path.display())),
            }
            let _ = std::fs::remove_file(&path);
        }
        result
    }
}

impl Job {
    /// Runs the job on `R`, `bytes` of it; an error if it moved another
    /// number of bytes.
    async fn run<R: FileRuntime>(self, bytes: usize, pattern: Arc<[u8]>) -> io::Result<()> {
        let (moved, path) = match self {
            Job::Write { path, chunk } => {
                (R::write(path.clone(), bytes, chunk, pattern).await, path)
            }
            Job::Read { path, chunk } => (R::read(path.clone(), bytes, chunk).await, path),
        };
        match moved {
            Ok(moved) if moved == bytes => Ok(()),
            Ok(moved) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: moved {moved} bytes, not {bytes}", path.display()),
            )),
            Err(err) => Err(io::Error::new(
                err.kind(),
                format!("{}: {err}", path.display()),
            )),
        }
    }
}

/// One round of one runtime: its warm-up and its measured pass.
#[derive(Debug, Clone)]
pub struct Pass {
    /// The measured pass, from the ticker's spawn to the last task's end.
    pub wall: Duration,
    /// The process's CPU over it.
    pub cpu: Duration,
    /// The ticker's lateness during it.
    pub ticks: Recorder,
    /// Percent of the machine other processes used during it.
    pub others_cpu_pct: Option<f64>,
    /// The warm-up pass's wall time (the blocking pool's threads start in
    /// it).
    pub warmup: Duration,
    /// weft's stall-monitor counters over the measured pass (`None` for
    /// the peers).
    pub monitor: Option<Counters>,
}

/// A pass's own figures.
struct Scene {
    wall: Duration,
    cpu: Duration,
    ticks: Recorder,
    others_cpu_pct: Option<f64>,
}

/// One round on `R` with `workers` workers: builds the runtime, runs the
/// warm-up pass and the measured pass on it, checks and removes the files
/// written, drops it.
pub fn measure<R: FileRuntime>(plan: &Arc<Plan>, workers: usize) -> Result<Pass, String> {
    let runtime =
        R::build_with_timers(workers).map_err(|err| format!("cannot build the runtime: {err}"))?;
    let spawner = runtime.spawner();
    let pass = |stage| {
        let scene = runtime.block_on(scene::<R>(&spawner, plan, stage));
        let checked = plan.check_and_remove_writes(stage);
        let scene = scene.map_err(|err| format!("{stage:?} pass: {err}"))?;
        checked.map(|()| scene)
    };
    let warmup = pass(Stage::Warmup)?;
    let monitor = runtime.monitor_counters();
    let measured = pass(Stage::Measured)?;
    let monitor = monitor
        .zip(runtime.monitor_counters())
        .map(|(before, after)| {
            let before = |name| before.iter().find(|c| c.0 == name).map_or(0, |c| c.1);
            let delta =
                |(name, value): (&'static str, u64)| (name, value.saturating_sub(before(name)));
            after.into_iter().map(delta).collect()
        });
    drop(runtime);
    Ok(Pass {
        wall: measured.wall,
        cpu: measured.cpu,
        ticks: measured.ticks,
        others_cpu_pct: measured.others_cpu_pct,
        warmup: warmup.wall,
        monitor,
    })
}

/// One pass of `stage` on `R`: the ticker, every job at once, all joined.
async fn scene<R: FileRuntime>(
    spawner: &R::Spawner,
    plan: &Plan,
    stage: Stage,
) -> io::Result<Scene> {
    let stop = Arc::new(AtomicBool::new(false));
    let cpu = process_cpu_time()?;
    let machine = CpuTimes::now();
    let start = Instant::now();
    let tick = Duration::from_micros(plan.sizes.tick_us.max(1));
    let ticker = spawner.spawn(ticker::<R>(stop.clone(), tick));
    let bytes = plan.bytes(stage);
    let tasks: Vec<_> = plan
        .jobs(stage)
        .into_iter()
        .map(|job| spawner.spawn(job.run::<R>(bytes, plan.pattern.clone())))
        .collect();
    // Every task is joined, even after an error, so that none still runs
    // when the files are checked.
    let mut result = Ok(());
    for task in tasks {
        result = result.and(task.await);
    }
    let wall = start.elapsed();
    let cpu = process_cpu_time()?.saturating_sub(cpu);
    let others_cpu_pct = others::since(machine);
    stop.store(true, Ordering::Relaxed);
    let ticks = ticker.await;
    result.map(|()| Scene {
        wall,
        cpu,
        ticks,
        others_cpu_pct,
    })
}

/// Sleeps `tick` after each wake until `stop`, recording each sleep's
/// lateness (module doc).
async fn ticker<R: TimerRuntime>(stop: Arc<AtomicBool>, tick: Duration) -> Recorder {
    let mut ticks = Recorder::new();
    while !stop.load(Ordering::Relaxed) {
        let deadline = Instant::now() + tick;
        R::sleep_until(deadline).await;
        ticks.record(Instant::now().saturating_duration_since(deadline));
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(sizes: Sizes) -> Plan {
        let pattern: Arc<[u8]> = vec![7; 64 * 1024].into();
        Plan::new(PathBuf::from("/nowhere"), sizes, pattern)
    }

    #[test]
    fn writers_and_readers_interleave_and_cycle_the_chunks() {
        let sizes = Sizes {
            writers: 3,
            readers: 2,
            chunk_bytes: vec![16 * 1024, 1024 * 1024],
            ..Sizes::tiny()
        };
        let jobs = plan(sizes).jobs(Stage::Measured);
        let shape: Vec<(char, usize)> = jobs
            .iter()
            .map(|job| match job {
                Job::Write { chunk, .. } => ('w', *chunk),
                Job::Read { chunk, .. } => ('r', *chunk),
            })
            .collect();
        // A chunk longer than the pattern is cut to it.
        let (small, cut) = (16 * 1024, 64 * 1024);
        assert_eq!(
            shape,
            [
                ('w', small),
                ('r', small),
                ('w', cut),
                ('r', cut),
                ('w', small)
            ]
        );
        let Job::Write { path, .. } = &plan(Sizes::tiny()).jobs(Stage::Warmup)[0] else {
            panic!("a writer first");
        };
        assert!(path.ends_with("warmup-0"));
    }

    #[test]
    fn the_warmup_moves_at_most_a_file() {
        let sizes = Sizes {
            warmup_bytes: 10 << 20,
            ..Sizes::tiny()
        };
        assert_eq!(plan(sizes).bytes(Stage::Warmup), 256 * 1024);
    }
}
