//! `weft::fs`: round trips of every function, `File`'s reads, writes and
//! seeks checked byte for byte against `std` (through futures-io's and
//! tokio's traits), errors from the OS, many files at once, the blocking
//! pool's counts, and shutdown with file work in flight.

mod common;

use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use weft::fs::{self, File, OpenOptions};
use weft::runtime::{Builder, Handle, Runtime};

/// Far longer than any step here takes; only a broken pool reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("weft-fs-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .expect("runtime builds")
}

/// `len` bytes of a pattern that differs at every offset of a few MiB (so a
/// misplaced chunk shows), seeded by `seed`.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

#[test]
fn whole_file_functions_round_trip() {
    let dir = TempDir::new("whole");
    runtime(2).block_on(async {
        let path = dir.join("data");
        fs::write(&path, b"hello").await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), b"hello");
        assert_eq!(fs::read_to_string(&path).await.unwrap(), "hello");
        assert_eq!(fs::metadata(&path).await.unwrap().len(), 5);
        assert!(fs::try_exists(&path).await.unwrap());

        fs::write(&path, vec![0xff, 0xfe]).await.unwrap(); // truncates
        let not_utf8 = fs::read_to_string(&path).await.unwrap_err();
        assert_eq!(not_utf8.kind(), ErrorKind::InvalidData);

        let copy = dir.join("copy");
        assert_eq!(fs::copy(&path, &copy).await.unwrap(), 2);
        assert_eq!(fs::read(&copy).await.unwrap(), [0xff, 0xfe]);

        let renamed = dir.join("renamed");
        fs::rename(&copy, &renamed).await.unwrap();
        assert!(!fs::try_exists(&copy).await.unwrap());
        assert_eq!(fs::read(&renamed).await.unwrap(), [0xff, 0xfe]);

        let link = dir.join("link");
        fs::symlink(&renamed, &link).await.unwrap();
        assert_eq!(fs::read_link(&link).await.unwrap(), renamed);
        assert!(fs::symlink_metadata(&link).await.unwrap().is_symlink());
        assert!(fs::metadata(&link).await.unwrap().is_file());
        assert_eq!(
            fs::canonicalize(&link).await.unwrap(),
            std::fs::canonicalize(&renamed).unwrap()
        );
        fs::hard_link(&renamed, dir.join("hard")).await.unwrap();
        assert_eq!(fs::read(dir.join("hard")).await.unwrap(), [0xff, 0xfe]);

        let mut perm = fs::metadata(&renamed).await.unwrap().permissions();
        perm.set_readonly(true);
        fs::set_permissions(&renamed, perm).await.unwrap();
        assert!(
            fs::metadata(&renamed)
                .await
                .unwrap()
                .permissions()
                .readonly()
        );

        for name in ["renamed", "hard", "link", "data"] {
            fs::remove_file(dir.join(name)).await.unwrap();
        }
        assert!(!fs::try_exists(&path).await.unwrap());
    });
}

#[test]
fn directories_are_created_listed_and_removed() {
    let dir = TempDir::new("dirs");
    runtime(2).block_on(async {
        let deep = dir.join("a/b/c");
        fs::create_dir_all(&deep).await.unwrap();
        fs::create_dir_all(&deep).await.unwrap(); // exists: fine
        let exists = fs::create_dir(&deep).await.unwrap_err();
        assert_eq!(exists.kind(), ErrorKind::AlreadyExists);
        fs::create_dir(dir.join("a/empty")).await.unwrap();

        // More entries than one fetch of the listing holds.
        for i in 0..70 {
            fs::write(dir.join(&format!("a/f{i:02}")), i.to_string())
                .await
                .unwrap();
        }
        let mut entries = fs::read_dir(dir.join("a")).await.unwrap();
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        while let Some(entry) = entries.next_entry().await.unwrap() {
            let name = entry.file_name().into_string().unwrap();
            assert_eq!(entry.path(), dir.join("a").join(&name));
            let file_type = entry.file_type().await.unwrap();
            assert_eq!(file_type.is_dir(), entry.metadata().await.unwrap().is_dir());
            if file_type.is_dir() {
                dirs.push(name);
            } else {
                let i: usize = name[1..].parse().unwrap();
                let len = entry.metadata().await.unwrap().len();
                assert_eq!(len, i.to_string().len() as u64, "{name}");
                files.push(name);
            }
        }
        assert!(
            entries.next_entry().await.unwrap().is_none(),
            "the end stays the end"
        );
        files.sort();
        dirs.sort();
        assert_eq!(
            files,
            (0..70).map(|i| format!("f{i:02}")).collect::<Vec<_>>()
        );
        assert_eq!(dirs, ["b", "empty"]);

        let not_empty = fs::remove_dir(dir.join("a")).await.unwrap_err();
        assert_eq!(not_empty.kind(), ErrorKind::DirectoryNotEmpty);
        fs::remove_dir(dir.join("a/empty")).await.unwrap();
        fs::remove_dir_all(dir.join("a")).await.unwrap();
        assert!(!fs::try_exists(dir.join("a")).await.unwrap());
    });
}

#[test]
fn a_file_is_written_flushed_synced_and_read_back() {
    let dir = TempDir::new("file");
    runtime(2).block_on(async {
        let path = dir.join("file");
        let mut file = File::create(&path).await.unwrap();
        // Larger than one pool call's 2 MiB: several writes, in order.
        let data = pattern(5 * 1024 * 1024 + 17, 1);
        file.write_all(&data).await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            data,
            "flush waited for every write"
        );
        file.write_all(b"tail").await.unwrap();
        file.sync_all().await.unwrap();
        file.sync_data().await.unwrap();
        assert_eq!(file.metadata().await.unwrap().len(), data.len() as u64 + 4);

        let mut file = File::open(&path).await.unwrap();
        let mut read_back = Vec::new();
        file.read_to_end(&mut read_back).await.unwrap();
        assert_eq!(&read_back[..data.len()], &data[..]);
        assert_eq!(&read_back[data.len()..], b"tail");

        assert_eq!(file.seek(SeekFrom::Start(1000)).await.unwrap(), 1000);
        let mut chunk = [0; 100];
        file.read_exact(&mut chunk).await.unwrap();
        assert_eq!(&chunk[..], &data[1000..1100]);
        assert_eq!(file.seek(SeekFrom::Current(-50)).await.unwrap(), 1050);
        file.read_exact(&mut chunk).await.unwrap();
        assert_eq!(&chunk[..], &data[1050..1150]);
        assert_eq!(
            file.seek(SeekFrom::End(-4)).await.unwrap(),
            data.len() as u64
        );
        let mut tail = String::new();
        file.read_to_string(&mut tail).await.unwrap();
        assert_eq!(tail, "tail");
        assert_eq!(
            file.read(&mut chunk).await.unwrap(),
            0,
            "the end of the file"
        );
        let before_start = file.seek(SeekFrom::Current(-(data.len() as i64) - 5)).await;
        assert_eq!(before_start.unwrap_err().kind(), ErrorKind::InvalidInput);
    });
}

#[test]
fn open_options_append_truncate_and_create_new() {
    let dir = TempDir::new("options");
    runtime(2).block_on(async {
        let path = dir.join("log");
        for line in ["one\n", "two\n", "three\n"] {
            let mut log = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .await
                .unwrap();
            log.seek(SeekFrom::Start(0)).await.unwrap(); // appending ignores the position
            log.write_all(line.as_bytes()).await.unwrap();
            log.flush().await.unwrap();
        }
        assert_eq!(
            fs::read_to_string(&path).await.unwrap(),
            "one\ntwo\nthree\n"
        );

        let exists = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await;
        assert_eq!(exists.unwrap_err().kind(), ErrorKind::AlreadyExists);
        let exists = File::create_new(&path).await;
        assert_eq!(exists.unwrap_err().kind(), ErrorKind::AlreadyExists);

        let mut file = File::options()
            .write(true)
            .truncate(true)
            .open(&path)
            .await
            .unwrap();
        file.write_all(b"new").await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(fs::read_to_string(&path).await.unwrap(), "new");

        let mut both = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();
        both.seek(SeekFrom::End(0)).await.unwrap();
        both.write_all(b"er").await.unwrap();
        both.seek(SeekFrom::Start(0)).await.unwrap();
        let mut text = String::new();
        both.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "newer");

        let no_access = OpenOptions::new().open(&path).await.unwrap_err();
        assert_eq!(no_access.kind(), ErrorKind::InvalidInput);
    });
}

#[test]
fn missing_paths_are_not_found() {
    let dir = TempDir::new("missing");
    let missing = dir.join("missing");
    runtime(1).block_on(async {
        let kinds = [
            fs::read(&missing).await.unwrap_err().kind(),
            fs::read_to_string(&missing).await.unwrap_err().kind(),
            fs::metadata(&missing).await.unwrap_err().kind(),
            fs::remove_file(&missing).await.unwrap_err().kind(),
            fs::remove_dir(&missing).await.unwrap_err().kind(),
            fs::rename(&missing, dir.join("x"))
                .await
                .unwrap_err()
                .kind(),
            fs::copy(&missing, dir.join("x")).await.unwrap_err().kind(),
            fs::read_dir(&missing).await.unwrap_err().kind(),
            fs::canonicalize(&missing).await.unwrap_err().kind(),
            File::open(&missing).await.unwrap_err().kind(),
            fs::write(dir.join("no/such/dir"), b"x")
                .await
                .unwrap_err()
                .kind(),
        ];
        assert!(
            kinds.iter().all(|&kind| kind == ErrorKind::NotFound),
            "{kinds:?}"
        );
        assert!(!fs::try_exists(&missing).await.unwrap());
    });
}

/// A path this process may not open for writing: a read-only file, or, if
/// the process can write it anyway (root), a read-only sysfs attribute,
/// which the kernel refuses to everyone.
fn unwritable(dir: &TempDir) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("read-only");
    std::fs::write(&path, b"x").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&path).is_err() {
        return path;
    }
    PathBuf::from("/sys/devices/system/cpu/online")
}

#[test]
fn a_refused_permission_is_permission_denied() {
    let dir = TempDir::new("perm");
    let path = unwritable(&dir);
    runtime(1).block_on(async {
        let opened = OpenOptions::new().write(true).open(&path).await;
        assert_eq!(opened.unwrap_err().kind(), ErrorKind::PermissionDenied);
        let written = fs::write(&path, b"y").await;
        assert_eq!(written.unwrap_err().kind(), ErrorKind::PermissionDenied);
    });
}

/// `/dev/full` opened for writing, with one write handed over (it fails
/// on the pool, to be reported later: rule 4 of `file/state.rs`).
async fn a_full_device_written_once() -> File {
    let mut full = OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .await
        .unwrap();
    full.write_all(b"no room").await.unwrap();
    full
}

/// rule 4 of `file/state.rs`: a write's error comes with the next flush
/// (or sync), after the write itself reported the bytes handed over.
#[test]
fn a_failed_write_is_reported_by_flush_and_sync() {
    runtime(1).block_on(async {
        let mut full = a_full_device_written_once().await;
        assert_eq!(
            full.flush().await.unwrap_err().kind(),
            ErrorKind::StorageFull
        );
        full.flush().await.unwrap(); // reported once
        full.write_all(b"again").await.unwrap();
        // Not `metadata`'s to report: the error waits for `sync_all`.
        full.metadata().await.unwrap();
        assert_eq!(
            full.sync_all().await.unwrap_err().kind(),
            ErrorKind::StorageFull
        );
        full.write_all(b"once more").await.unwrap();
        assert_eq!(
            full.sync_data().await.unwrap_err().kind(),
            ErrorKind::StorageFull
        );
        full.write_all(b"and again").await.unwrap();
        let next = full.write_all(b"next").await;
        assert_eq!(
            next.unwrap_err().kind(),
            ErrorKind::StorageFull,
            "the next write reports it"
        );
    });
}

#[test]
fn many_files_are_read_at_once() {
    const TASKS: usize = 64;
    const SIZE: usize = 1024 * 1024;
    let dir = TempDir::new("many");
    let rt = runtime(2);
    for i in 0..TASKS {
        std::fs::write(dir.join(&i.to_string()), pattern(SIZE, i as u64)).unwrap();
    }
    let before = rt.handle().metrics().blocking_tasks_spawned;
    let reads: Vec<_> = (0..TASKS)
        .map(|i| {
            let path = dir.join(&i.to_string());
            rt.spawn(async move {
                // Half whole-file reads, half through a `File` in 64 KiB reads.
                let bytes = if i % 2 == 0 {
                    fs::read(&path).await.unwrap()
                } else {
                    let mut file = File::open(&path).await.unwrap();
                    let mut bytes = Vec::new();
                    let mut chunk = vec![0; 64 * 1024];
                    loop {
                        match file.read(&mut chunk).await.unwrap() {
                            0 => break bytes,
                            n => bytes.extend_from_slice(&chunk[..n]),
                        }
                    }
                };
                (i, bytes == pattern(SIZE, i as u64))
            })
        })
        .collect();
    for read in reads {
        let (i, same) = rt.block_on(read).unwrap();
        assert!(same, "file {i} read back different bytes");
    }
    let spawned = rt.handle().metrics().blocking_tasks_spawned - before;
    // 32 `read`s; 32 opens and 32 × (16 chunks + the read of the end).
    assert_eq!(spawned, 32 + 32 * (1 + 16 + 1));
}

/// The blocking pool's metrics count file operations: one pool call per
/// function, per `File` operation, and per 2 MiB chunk of a large write.
#[test]
fn file_operations_are_counted_by_the_blocking_pool() {
    let dir = TempDir::new("metrics");
    let rt = runtime(2);
    let spawned = || rt.handle().metrics().blocking_tasks_spawned;
    let before = spawned();
    rt.block_on(async {
        fs::write(dir.join("a"), b"abc").await.unwrap();
        fs::read(dir.join("a")).await.unwrap();
    });
    assert_eq!(spawned() - before, 2);

    let before = spawned();
    rt.block_on(async {
        let mut file = File::create(dir.join("b")).await.unwrap(); // 1
        file.write_all(&vec![7; 5 * 1024 * 1024]).await.unwrap(); // 3 chunks
        file.flush().await.unwrap(); // waits, starts nothing
        assert_eq!(file.write(&[]).await.unwrap(), 0); // starts nothing
        file.sync_all().await.unwrap(); // 1
        assert_eq!(file.metadata().await.unwrap().len(), 5 * 1024 * 1024); // 1
    });
    assert_eq!(spawned() - before, 6);
    let metrics = rt.handle().metrics();
    assert_eq!(metrics.blocking_queue_depth, 0);
    assert!(metrics.blocking_threads >= 1, "the pool's threads ran them");
}

/// What one step of the interleaved sequence does, on the `File` under
/// test or on the `std` file beside it.
trait Steps {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Reads until `n` bytes or the end.
    async fn read_up_to(&mut self, n: usize) -> io::Result<Vec<u8>>;
    async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64>;
    async fn flush(&mut self) -> io::Result<()>;
}

struct ViaFutures(File);
struct ViaTokio(File);

impl Steps for ViaFutures {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        AsyncWriteExt::write_all(&mut self.0, bytes).await
    }
    async fn read_up_to(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        AsyncReadExt::take(&mut self.0, n as u64)
            .read_to_end(&mut out)
            .await?;
        Ok(out)
    }
    async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        AsyncSeekExt::seek(&mut self.0, pos).await
    }
    async fn flush(&mut self) -> io::Result<()> {
        AsyncWriteExt::flush(&mut self.0).await
    }
}

impl Steps for ViaTokio {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        tokio::io::AsyncWriteExt::write_all(&mut self.0, bytes).await
    }
    async fn read_up_to(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut limited = tokio::io::AsyncReadExt::take(&mut self.0, n as u64);
        tokio::io::AsyncReadExt::read_to_end(&mut limited, &mut out).await?;
        Ok(out)
    }
    async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        tokio::io::AsyncSeekExt::seek(&mut self.0, pos).await
    }
    async fn flush(&mut self) -> io::Result<()> {
        tokio::io::AsyncWriteExt::flush(&mut self.0).await
    }
}

impl AsMut<File> for ViaFutures {
    fn as_mut(&mut self) -> &mut File {
        &mut self.0
    }
}

impl AsMut<File> for ViaTokio {
    fn as_mut(&mut self) -> &mut File {
        &mut self.0
    }
}

/// Polls one read of up to `n` bytes once and lets it go: the read may
/// finish at once (then `std` reads the same bytes) or stay in flight, its
/// bytes left for the next operation (state.rs's rule 3).
fn abandon_a_read(file: &mut File, n: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0; n];
    let mut cx = Context::from_waker(Waker::noop());
    match futures_io::AsyncRead::poll_read(Pin::new(file), &mut cx, &mut buf) {
        Poll::Ready(read) => {
            let got = read.unwrap();
            buf.truncate(got);
            Some(buf)
        }
        Poll::Pending => None,
    }
}

/// A seeded sequence of writes, reads, abandoned reads, seeks, flushes,
/// `set_len`s and `metadata` calls on a `File` with a small `max_buf_size`
/// (so writes and reads split), each checked against the same call on a
/// `std` file; at the end both files hold the same bytes. Runs on a
/// runtime with one pool thread (`one_pool_thread`).
async fn interleaved_against_std<S: Steps + AsMut<File>>(
    dir: &TempDir,
    seed: u64,
    make: impl FnOnce(File) -> S,
) {
    let (ours_path, std_path) = (
        dir.join(&format!("ours{seed}")),
        dir.join(&format!("std{seed}")),
    );
    let open = |path: &Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap()
    };
    let mut ours = File::from_std(open(&ours_path));
    ours.set_max_buf_size(4096);
    let mut ours = make(ours);
    let mut theirs = open(&std_path);
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = |bound: u64| -> u64 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 16) % bound
    };
    let mut reads_left_in_flight = 0;
    for step in 0..400 {
        let what = next(8);
        match what {
            0 | 1 => {
                let bytes = pattern(next(10_000) as usize, seed * 1000 + step);
                ours.write_all(&bytes).await.unwrap();
                theirs.write_all(&bytes).unwrap();
            }
            2 | 3 => {
                let n = next(12_000) as usize;
                let got = ours.read_up_to(n).await.unwrap();
                let mut expected = Vec::new();
                (&mut theirs)
                    .take(n as u64)
                    .read_to_end(&mut expected)
                    .unwrap();
                assert_eq!(got, expected, "step {step}: a read of up to {n} bytes");
            }
            4 => {
                let n = 1 + next(12_000) as usize;
                // Half the time behind a blocker, so the read stays in flight.
                let release = (next(2) == 0).then(|| occupy_the_pool(&Handle::current()));
                let abandoned = abandon_a_read(ours.as_mut(), n);
                drop(release);
                match abandoned {
                    Some(got) => {
                        let mut expected = vec![0; got.len()];
                        theirs.read_exact(&mut expected).unwrap();
                        assert_eq!(got, expected, "step {step}: a read done at its first poll");
                    }
                    None if theirs.stream_position().unwrap()
                        < theirs.metadata().unwrap().len() =>
                    {
                        reads_left_in_flight += 1;
                    }
                    None => {}
                }
            }
            5 => {
                let here = theirs.stream_position().unwrap() as i64;
                let len = theirs.metadata().unwrap().len() as i64;
                // Mostly inside the file; sometimes past its end or before
                // its start (an error for both).
                let target =
                    next(len as u64 + 100) as i64 - if next(8) == 0 { len + 200 } else { 0 };
                let pos = match next(3) {
                    0 if target >= 0 => SeekFrom::Start(target as u64),
                    0 | 1 => SeekFrom::Current(target - here),
                    _ => SeekFrom::End(target - len),
                };
                let expected = theirs.seek(pos);
                let got = ours.seek(pos).await;
                match (got, expected) {
                    (Ok(got), Ok(expected)) => assert_eq!(got, expected, "step {step}: {pos:?}"),
                    (Err(_), Err(_)) => {}
                    (got, expected) => {
                        panic!("step {step}: {pos:?} from {here}: {got:?} vs {expected:?}")
                    }
                }
            }
            6 => {
                ours.flush().await.unwrap();
                let position = ours.seek(SeekFrom::Current(0)).await.unwrap();
                assert_eq!(position, theirs.stream_position().unwrap(), "step {step}");
            }
            _ => {
                if next(2) == 0 {
                    let len = next(theirs.metadata().unwrap().len() + 3000);
                    ours.as_mut().set_len(len).await.unwrap();
                    theirs.set_len(len).unwrap();
                }
                let len = ours.as_mut().metadata().await.unwrap().len();
                assert_eq!(
                    len,
                    theirs.metadata().unwrap().len(),
                    "step {step}: metadata after every write"
                );
            }
        }
    }
    ours.flush().await.unwrap();
    assert_eq!(
        std::fs::read(&ours_path).unwrap(),
        std::fs::read(&std_path).unwrap()
    );
    assert!(
        reads_left_in_flight >= 5,
        "only {reads_left_in_flight} abandoned reads had bytes to fetch: the sequence no longer covers them"
    );
}

#[test]
fn interleaved_writes_seeks_and_reads_match_std() {
    let dir = TempDir::new("interleaved");
    let rt = one_pool_thread();
    for seed in 1..=4 {
        rt.block_on(interleaved_against_std(&dir, seed, ViaFutures));
    }
}

#[test]
fn interleaved_writes_seeks_and_reads_match_std_through_tokio_traits() {
    let dir = TempDir::new("interleaved-tokio");
    let rt = one_pool_thread();
    for seed in 11..=14 {
        rt.block_on(interleaved_against_std(&dir, seed, ViaTokio));
    }
}

/// tokio's extension traits alone in scope (beside futures-lite's the
/// method names are ambiguous).
mod tokio_traits {
    use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn tokio_traits_read_write_and_seek() {
        let dir = TempDir::new("tokio");
        runtime(2).block_on(async {
            let path = dir.join("file");
            let mut file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .await
                .unwrap();
            let data = pattern(3 * 1024 * 1024, 9);
            file.write_all(&data).await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(
                file.seek(SeekFrom::Current(0)).await.unwrap(),
                data.len() as u64
            );
            file.rewind().await.unwrap();
            let mut head = [0; 10];
            file.read_exact(&mut head).await.unwrap();
            assert_eq!(&head[..], &data[..10]);
            assert_eq!(file.seek(SeekFrom::Current(-5)).await.unwrap(), 5);
            let mut rest = Vec::new();
            file.read_to_end(&mut rest).await.unwrap();
            assert_eq!(&rest[..], &data[5..]);
            file.seek(SeekFrom::Start(1)).await.unwrap();
            file.write_all(b"XY").await.unwrap();
            file.shutdown().await.unwrap(); // flushes

            let mut copy = File::create(dir.join("copy")).await.unwrap();
            let mut source = File::open(&path).await.unwrap();
            let copied = tokio::io::copy(&mut source, &mut copy).await.unwrap();
            copy.flush().await.unwrap();
            assert_eq!(copied, data.len() as u64);
            let mut expected = data.clone();
            expected[1..3].copy_from_slice(b"XY");
            assert_eq!(fs::read(dir.join("copy")).await.unwrap(), expected);
        });
    }
}

/// A pool with one thread, held by a closure until the returned sender
/// sends or is dropped: file operations queue behind it.
fn occupy_the_pool(rt: &Handle) -> mpsc::Sender<()> {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel();
    drop(rt.spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv();
    }));
    started_rx
        .recv_timeout(PATIENCE)
        .expect("the blocker started");
    release_tx
}

fn one_pool_thread() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .build()
        .unwrap()
}

/// A file of `pattern(1000, seed)` in a directory of its own, opened to
/// read and write on a runtime with one pool thread (`one_pool_thread`).
fn a_patterned_file(name: &str, seed: u64) -> (TempDir, PathBuf, Vec<u8>, Runtime, File) {
    let dir = TempDir::new(name);
    let path = dir.join("file");
    let data = pattern(1000, seed);
    std::fs::write(&path, &data).unwrap();
    let rt = one_pool_thread();
    let file = rt
        .block_on(File::options().read(true).write(true).open(&path))
        .unwrap();
    (dir, path, data, rt, file)
}

/// A read fetches 100 bytes for a caller that goes away; the next reads
/// get those bytes first, and the position, a write and `into_std` see
/// where the reader really is.
#[test]
fn bytes_read_ahead_come_first_and_seeks_and_writes_account_for_them() {
    let (_dir, path, data, rt, mut file) = a_patterned_file("ahead", 3);
    // Each abandoned read is queued behind a blocker, so it cannot finish
    // at its first poll.
    let abandon = |file: &mut File| {
        let release = occupy_the_pool(rt.handle());
        let _enter = rt.enter();
        assert!(
            abandon_a_read(file, 100).is_none(),
            "queued behind the blocker"
        );
        drop(release);
    };
    abandon(&mut file);
    rt.block_on(async {
        let mut small = [0; 10];
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[..10]);
        assert_eq!(
            file.seek(SeekFrom::Current(0)).await.unwrap(),
            10,
            "90 bytes read ahead"
        );
    });
    abandon(&mut file);
    rt.block_on(async {
        let mut small = [0; 10];
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[10..20]);
        file.write_all(b"HERE").await.unwrap(); // lands at 20, not 110
        file.flush().await.unwrap();
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[24..34]);
    });
    abandon(&mut file);
    rt.block_on(async {
        let mut small = [0; 10];
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[34..44]);
        // A seek that fails leaves the position where the reader was.
        let failed = file.seek(SeekFrom::Current(-100)).await;
        assert_eq!(failed.unwrap_err().kind(), ErrorKind::InvalidInput);
        assert_eq!(file.seek(SeekFrom::Current(0)).await.unwrap(), 44);
    });
    abandon(&mut file);
    rt.block_on(async {
        let mut small = [0; 10];
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[44..54]);
        let mut clone = file.try_clone().await.unwrap(); // the same position, shared
        assert_eq!(clone.seek(SeekFrom::Current(0)).await.unwrap(), 54);
    });
    abandon(&mut file);
    rt.block_on(async {
        let mut small = [0; 10];
        file.read_exact(&mut small).await.unwrap();
        assert_eq!(&small[..], &data[54..64]);
        let mut std_file = file.into_std().await;
        assert_eq!(std_file.stream_position().unwrap(), 64);
        let mut rest = Vec::new();
        std_file.read_to_end(&mut rest).unwrap();
        assert_eq!(&rest[..], &data[64..]);
    });
    let mut expected = data.clone();
    expected[20..24].copy_from_slice(b"HERE");
    assert_eq!(std::fs::read(&path).unwrap(), expected);
}

/// futures-io's `poll_seek` is polled again with the same position until
/// it completes: the seek in flight is the caller's, applied once. A seek
/// abandoned in flight is completed, not taken for the next, different one.
#[test]
fn a_seek_in_flight_is_applied_once_and_an_abandoned_one_is_not_taken_for_the_next() {
    let dir = TempDir::new("seek");
    let path = dir.join("file");
    std::fs::write(&path, pattern(1000, 6)).unwrap();
    let rt = one_pool_thread();
    let mut file = rt.block_on(File::open(&path)).unwrap();
    let poll_seek_once = |file: &mut File, pos| {
        let release = occupy_the_pool(rt.handle());
        let _enter = rt.enter();
        let mut cx = Context::from_waker(Waker::noop());
        let polled = futures_io::AsyncSeek::poll_seek(Pin::new(file), &mut cx, pos);
        assert!(polled.is_pending(), "queued behind the blocker");
        release
    };
    let release = poll_seek_once(&mut file, SeekFrom::Current(5));
    drop(release);
    rt.block_on(async {
        let mut seek = std::pin::pin!(std::future::poll_fn(|cx| {
            futures_io::AsyncSeek::poll_seek(Pin::new(&mut file), cx, SeekFrom::Current(5))
        }));
        assert_eq!(
            seek.as_mut().await.unwrap(),
            5,
            "the same seek, polled again"
        );
    });
    drop(poll_seek_once(&mut file, SeekFrom::Current(100)));
    rt.block_on(async {
        assert_eq!(file.seek(SeekFrom::Start(10)).await.unwrap(), 10);
        assert_eq!(file.seek(SeekFrom::Current(0)).await.unwrap(), 10);
    });
}

#[test]
fn try_into_std_refuses_while_an_operation_is_in_flight() {
    let dir = TempDir::new("try-into");
    let path = dir.join("file");
    std::fs::write(&path, pattern(100, 4)).unwrap();
    let rt = one_pool_thread();
    let mut file = rt.block_on(File::open(&path)).unwrap();
    let release = occupy_the_pool(rt.handle());
    {
        let _enter = rt.enter();
        assert!(abandon_a_read(&mut file, 50).is_none());
    }
    let mut file = file.try_into_std().expect_err("a read is in flight");
    drop(release);
    rt.block_on(async {
        let mut first = [0; 20];
        file.read_exact(&mut first).await.unwrap();
    });
    let mut std_file = file.try_into_std().expect("idle");
    assert_eq!(
        std_file.stream_position().unwrap(),
        20,
        "read-ahead given back"
    );
}

/// The `&self` methods take turns: many tasks sharing one `File` each get
/// their answer (a `JoinHandle` wakes one waiter, so without turns some
/// would wait for ever).
#[test]
fn shared_files_serve_every_caller() {
    let dir = TempDir::new("shared");
    let rt = runtime(2);
    let file = Arc::new(rt.block_on(async {
        let mut file = File::create(dir.join("file")).await.unwrap();
        file.write_all(&[1; 1000]).await.unwrap();
        file
    }));
    let tasks: Vec<_> = (0..64u64)
        .map(|i| {
            let file = file.clone();
            rt.spawn(async move {
                match i % 4 {
                    0 => file.sync_all().await.map(|()| 1000),
                    1 => file.sync_data().await.map(|()| 1000),
                    2 => file.try_clone().await.map(|_| 1000),
                    _ => file.metadata().await.map(|m| m.len()),
                }
            })
        })
        .collect();
    rt.block_on(async {
        for task in tasks {
            let len = weft::time::timeout(PATIENCE, task)
                .await
                .expect("answered")
                .unwrap()
                .unwrap();
            assert_eq!(len, 1000);
        }
    });
}

/// A write still running when its `File` is dropped completes.
#[test]
fn a_dropped_file_still_completes_its_write() {
    let dir = TempDir::new("dropped");
    let path = dir.join("file");
    let rt = runtime(2);
    rt.block_on(async {
        let mut file = File::create(&path).await.unwrap();
        file.write_all(&pattern(3 * 1024 * 1024, 5)).await.unwrap();
    });
    assert!(common::wait_until(PATIENCE, || std::fs::metadata(&path)
        .unwrap()
        .len()
        == 3 * 1024 * 1024));
    assert_eq!(std::fs::read(&path).unwrap(), pattern(3 * 1024 * 1024, 5));
}

#[test]
#[should_panic(expected = "`weft::fs::read` polled outside of a weft runtime")]
fn a_function_polled_outside_a_runtime_says_where_to_call_it() {
    let _ = futures_lite::future::block_on(fs::read("Cargo.toml"));
}

#[test]
#[should_panic(expected = "`weft::fs::File::poll_read` polled outside of a weft runtime")]
fn a_file_read_outside_a_runtime_says_where_to_call_it() {
    let mut file = File::from_std(std::fs::File::open("Cargo.toml").unwrap());
    let mut buf = [0; 10];
    let _ = futures_lite::future::block_on(file.read(&mut buf));
}

/// Dropping a runtime whose tasks are in the middle of file operations
/// cancels the tasks and waits only for the pool calls already running.
#[test]
fn shutdown_with_file_work_in_flight_does_not_hang() {
    let dir = Arc::new(TempDir::new("shutdown"));
    let rt = runtime(2);
    let rounds = Arc::new(AtomicUsize::new(0));
    let drops = common::DropCounter::default();
    for i in 0..32 {
        let (dir, rounds, tracked) = (dir.clone(), rounds.clone(), drops.track());
        drop(rt.spawn(async move {
            let _tracked = tracked;
            let path = dir.join(&format!("f{i}"));
            let data = pattern(256 * 1024, i);
            loop {
                fs::write(&path, &data).await.unwrap();
                let mut file = File::open(&path).await.unwrap();
                let mut back = Vec::new();
                file.read_to_end(&mut back).await.unwrap();
                assert_eq!(back, data);
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    assert!(common::wait_until(PATIENCE, || rounds
        .load(Ordering::Relaxed)
        >= 64));
    let start = Instant::now();
    drop(rt);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "shutdown took {:?}",
        start.elapsed()
    );
    assert_eq!(drops.drops(), 32, "every task was dropped");
}

/// An operation queued on the pool when the runtime shuts down still runs
/// (as on tokio: accepted before the shutdown, it is not lost), after the
/// shutdown's deadline if need be; one called after the shutdown fails
/// with an error saying so, and never runs.
#[test]
fn an_operation_queued_at_shutdown_runs_and_a_later_one_fails() {
    let dir = TempDir::new("queued");
    let path = dir.join("queued");
    let late_path = dir.join("late");
    let rt = one_pool_thread();
    let release = occupy_the_pool(rt.handle());
    let handle = rt.handle().clone();
    let (result_tx, result_rx) = mpsc::channel();
    let queued_path = path.clone();
    let caller = std::thread::spawn(move || {
        result_tx
            .send(handle.block_on(fs::write(&queued_path, b"x")))
            .unwrap();
    });
    assert!(common::wait_until(PATIENCE, || rt
        .handle()
        .metrics()
        .blocking_queue_depth
        == 1));
    let handle = rt.handle().clone();
    rt.shutdown_timeout(Duration::from_millis(50));
    assert!(!path.exists(), "queued behind the busy pool thread");
    drop(release);
    let result = result_rx
        .recv_timeout(PATIENCE)
        .expect("the queued call returned");
    result.expect("the queued write ran");
    caller.join().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"x");
    let error = handle.block_on(fs::write(&late_path, b"y")).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Other);
    assert!(error.to_string().contains("runtime shut down"), "{error}");
    assert!(!late_path.exists(), "the late write never ran");
}

/// A pool call stuck in the kernel (opening a FIFO nobody writes to) holds
/// `shutdown_timeout` no longer than its deadline.
#[test]
fn an_operation_stuck_in_the_kernel_does_not_hold_shutdown_timeout() {
    let dir = TempDir::new("fifo");
    let fifo = dir.join("fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated string for the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let rt = runtime(1);
    drop(rt.spawn(fs::read(fifo.clone())));
    assert!(common::wait_until(PATIENCE, || {
        let m = rt.handle().metrics();
        m.blocking_threads == 1 && m.blocking_idle_threads == 0 && m.blocking_queue_depth == 0
    }));
    let start = Instant::now();
    rt.shutdown_timeout(Duration::from_millis(100));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    // Let the stuck open return, so the pool thread ends (non-blocking:
    // with no reader left this fails instead of waiting).
    use std::os::unix::fs::OpenOptionsExt;
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    drop(writer.expect("the pool thread still waits in open"));
}

/// `metadata`, `sync_all`, `sync_data` and `set_permissions` keep the bytes
/// read ahead (state.rs's rule 3): the reader gets those bytes next, not
/// what another handle wrote over them on disk meanwhile.
#[test]
fn calls_that_do_not_move_the_position_keep_the_bytes_read_ahead() {
    let (_dir, path, data, rt, mut file) = a_patterned_file("keep-ahead", 7);
    let release = occupy_the_pool(rt.handle());
    {
        let _enter = rt.enter();
        assert!(
            abandon_a_read(&mut file, 100).is_none(),
            "queued behind the blocker"
        );
    }
    drop(release);
    let mut small = [0; 10];
    rt.block_on(file.read_exact(&mut small)).unwrap();
    assert_eq!(&small[..], &data[..10]);
    // Bytes 10..100 wait in the file's buffer; on disk they change.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .write_all(&[0xAA; 100])
        .unwrap();
    rt.block_on(async {
        let permissions = file.metadata().await.unwrap().permissions();
        file.sync_all().await.unwrap();
        file.sync_data().await.unwrap();
        file.set_permissions(permissions).await.unwrap();
        let mut rest = [0; 90];
        file.read_exact(&mut rest).await.unwrap();
        assert_eq!(
            &rest[..],
            &data[10..100],
            "the bytes read ahead, not the disk's"
        );
    });
}

/// A read's error other than `Interrupted` is returned, not retried:
/// reading a directory opened as a file fails with the OS's error.
#[test]
fn a_read_error_is_returned_not_retried() {
    let dir = TempDir::new("read-error");
    let rt = runtime(1);
    let read = rt.block_on(async {
        let mut file = File::open(&dir.0).await.unwrap();
        let mut buf = [0; 16];
        weft::time::timeout(PATIENCE, file.read(&mut buf)).await
    });
    // A read retried forever would keep its pool thread.
    rt.shutdown_timeout(Duration::from_secs(1));
    let error = read.expect("the read returned").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::IsADirectory);
}

/// `File`'s own accessors: the buffer size it was given, `set_permissions`
/// on disk, its `Debug`; and `try_into_std` of a file that cannot seek.
#[test]
fn file_accessors_and_an_unseekable_file() {
    let dir = TempDir::new("accessors");
    let path = dir.join("file");
    runtime(1).block_on(async {
        let mut file = File::create(&path).await.unwrap();
        assert_eq!(file.max_buf_size(), 2 * 1024 * 1024);
        file.set_max_buf_size(4096);
        assert_eq!(file.max_buf_size(), 4096);
        let mut readonly = file.metadata().await.unwrap().permissions();
        readonly.set_readonly(true);
        file.set_permissions(readonly).await.unwrap();
        assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
        assert!(format!("{file:?}").starts_with("File { std: "), "{file:?}");
    });
    // A pipe has no position: with nothing read ahead, nothing moves back.
    let (reader, _writer) = std::io::pipe().unwrap();
    let file = File::from_std(std::fs::File::from(std::os::fd::OwnedFd::from(reader)));
    assert!(
        file.try_into_std().is_ok(),
        "refused a file with nothing read ahead"
    );
}

/// futures-io's `close` and tokio's `flush` and `shutdown` report a failed
/// write as `flush` does (rule 4 of `file/state.rs`).
#[test]
fn close_and_tokio_flush_and_shutdown_report_a_failed_write() {
    runtime(1).block_on(async {
        let mut full = a_full_device_written_once().await;
        assert_eq!(
            full.close().await.unwrap_err().kind(),
            ErrorKind::StorageFull
        );
        full.write_all(b"again").await.unwrap();
        let flushed = tokio::io::AsyncWriteExt::flush(&mut full).await;
        assert_eq!(flushed.unwrap_err().kind(), ErrorKind::StorageFull);
        full.write_all(b"and again").await.unwrap();
        let shut = tokio::io::AsyncWriteExt::shutdown(&mut full).await;
        assert_eq!(shut.unwrap_err().kind(), ErrorKind::StorageFull);
    });
}

/// `OpenOptions`' Unix settings reach the OS, options built from `std`'s
/// keep their settings, and `DirEntry::ino` is the file's inode.
#[test]
fn unix_open_options_options_from_std_and_inodes() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = TempDir::new("unix-options");
    runtime(1).block_on(async {
        let path = dir.join("mode");
        let options = OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o600)
            .clone();
        options.open(&path).await.unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let flagged = dir.join("flagged");
        std::fs::write(&flagged, b"a").unwrap();
        let mut file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_APPEND)
            .open(&flagged)
            .await
            .unwrap();
        file.write_all(b"b").await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&flagged).unwrap(), b"ab");
        let mut appending = std::fs::OpenOptions::new();
        appending.append(true);
        let mut file = OpenOptions::from(appending).open(&flagged).await.unwrap();
        file.write_all(b"c").await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(std::fs::read(&flagged).unwrap(), b"abc");
        let mut entries = fs::read_dir(&dir.0).await.unwrap();
        let mut seen = 0;
        while let Some(entry) = entries.next_entry().await.unwrap() {
            let inode = std::fs::metadata(entry.path()).unwrap().ino();
            assert_eq!(entry.ino(), inode);
            seen += 1;
        }
        assert_eq!(seen, 2);
    });
}

/// A path whose drop removes its file, as `tempfile::NamedTempFile`'s does.
struct RemovedOnDrop(PathBuf);

impl AsRef<Path> for RemovedOnDrop {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for RemovedOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A path argument lives until the call's future ends, as in tokio: a
/// path whose drop removes its file still names it while the pool thread
/// opens, reads or stats it. Fails with the argument dropped when the path
/// is copied for the pool (each call then meets `NotFound`).
#[test]
fn a_path_argument_lives_until_the_call_ends() {
    let dir = TempDir::new("path-lives");
    let path = dir.join("file");
    let fresh = || {
        std::fs::write(&path, b"kept").unwrap();
        RemovedOnDrop(path.clone())
    };
    runtime(1).block_on(async {
        assert_eq!(fs::read(fresh()).await.unwrap(), b"kept");
        assert!(!path.exists(), "the argument was dropped after the call");
        assert_eq!(fs::read_to_string(fresh()).await.unwrap(), "kept");
        assert_eq!(fs::metadata(fresh()).await.unwrap().len(), 4);
        let mut text = String::new();
        let mut file = OpenOptions::new().read(true).open(fresh()).await.unwrap();
        file.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "kept");
        let mut file = File::open(fresh()).await.unwrap();
        text.clear();
        file.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "kept");
    });
}

/// A vectored write writes every slice, in order, up to `max_buf_size`
/// bytes in all (tokio's `File`), through futures-io's and tokio's traits.
/// Fails with the traits' default, which writes the first slice only.
#[test]
fn a_vectored_write_writes_every_slice() {
    use std::io::IoSlice;
    let dir = TempDir::new("vectored");
    let path = dir.join("file");
    runtime(1).block_on(async {
        let mut file = File::create(&path).await.unwrap();
        let slices = [
            IoSlice::new(b"hello "),
            IoSlice::new(b""),
            IoSlice::new(b"world"),
        ];
        assert_eq!(file.write_vectored(&slices).await.unwrap(), 11);
        let again = [IoSlice::new(b", "), IoSlice::new(b"again")];
        let written = tokio::io::AsyncWriteExt::write_vectored(&mut file, &again)
            .await
            .unwrap();
        assert_eq!(written, 7);
        assert!(tokio::io::AsyncWrite::is_write_vectored(&file));
        file.set_max_buf_size(3);
        let capped = [IoSlice::new(b"ab"), IoSlice::new(b"cd")];
        assert_eq!(file.write_vectored(&capped).await.unwrap(), 3);
        file.flush().await.unwrap();
    });
    assert_eq!(std::fs::read(&path).unwrap(), b"hello world, againabc");
}

/// A clone keeps the file's `max_buf_size`, as tokio's does. Fails with the
/// clone given the default size.
#[test]
fn a_clone_keeps_the_buffer_size() {
    let dir = TempDir::new("clone-buf");
    runtime(1).block_on(async {
        let mut file = File::create(dir.join("file")).await.unwrap();
        file.set_max_buf_size(4096);
        assert_eq!(file.try_clone().await.unwrap().max_buf_size(), 4096);
    });
}

/// `DirBuilder` as tokio's: one level needs its parent, `recursive` makes
/// the parents and accepts an existing directory, `mode` sets the bits
/// (before the umask).
#[test]
fn dir_builder_creates_with_its_options() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("dir-builder");
    runtime(1).block_on(async {
        let nested = dir.join("a/b/c");
        let missing_parent = fs::DirBuilder::new().create(&nested).await.unwrap_err();
        assert_eq!(missing_parent.kind(), ErrorKind::NotFound);
        fs::DirBuilder::new()
            .recursive(true)
            .create(&nested)
            .await
            .unwrap();
        assert!(nested.is_dir());
        fs::DirBuilder::new()
            .recursive(true)
            .create(&nested)
            .await
            .unwrap();
        let exists = fs::DirBuilder::new().create(&nested).await.unwrap_err();
        assert_eq!(exists.kind(), ErrorKind::AlreadyExists);
        let private = dir.join("private");
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&private)
            .await
            .unwrap();
        let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    });
}
