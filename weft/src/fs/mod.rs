//! Files and directories, on the runtime's blocking pool: tokio's `fs`.
//!
//! ```
//! use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = weft::runtime::Runtime::new()?;
//! rt.block_on(async {
//!     let dir = std::env::temp_dir().join(format!("weft-fs-doc-{}", std::process::id()));
//!     weft::fs::create_dir_all(&dir).await?;
//!
//!     weft::fs::write(dir.join("greeting"), "hello").await?;
//!     assert_eq!(weft::fs::read_to_string(dir.join("greeting")).await?, "hello");
//!
//!     let mut log = weft::fs::OpenOptions::new().append(true).create(true).open(dir.join("log")).await?;
//!     log.write_all(b"one line\n").await?;
//!     log.sync_all().await?;                       // waits for the write, then fsync
//!
//!     let mut text = String::new();
//!     weft::fs::File::open(dir.join("log")).await?.read_to_string(&mut text).await?;
//!     assert_eq!(text, "one line\n");
//!
//!     let mut entries = weft::fs::read_dir(&dir).await?;
//!     let mut names = Vec::new();
//!     while let Some(entry) = entries.next_entry().await? {
//!         names.push(entry.file_name());
//!     }
//!     names.sort();
//!     assert_eq!(names, ["greeting", "log"]);
//!
//!     weft::fs::remove_dir_all(&dir).await
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The operating system has no readiness for regular files (epoll refuses
//! them), so every call here runs the matching `std::fs` call on the
//! blocking pool of the runtime it is polled on, as
//! [`spawn_blocking`](crate::task::spawn_blocking) does: the pool's
//! threads, its cap (`max_blocking_threads`) and its metrics
//! (`blocking_tasks_spawned`, `blocking_queue_depth`, ...) count file work
//! with the rest.
//!
//! # Invariants
//!
//! - **Errors are the OS's.** Every `io::Error` is the one `std::fs`
//!   returned (`NotFound`, `PermissionDenied`, ...), with one exception: an
//!   operation the runtime's shutdown cancelled before a thread ran it fails
//!   with `ErrorKind::Other` and a message saying so.
//! - **A future does nothing until polled**, and looks up its runtime at its
//!   first poll (so `rt.block_on(weft::fs::read(path))` works). Polled
//!   outside any weft runtime it panics, saying where to call it from.
//! - **A started operation runs to its end.** Dropping the future of a call
//!   whose closure a thread has started does not stop the syscall (a write
//!   still lands); one still queued when the runtime shuts down never runs.
//!   Shutdown treats file work as any blocking work: it cancels what is
//!   queued and waits for what runs, up to its deadline.
//! - **A [`File`] runs one operation at a time, in the order they were
//!   started**, so writes land in order, a seek after a write happens after
//!   it, and `flush`, `sync_all` and `sync_data` wait for the writes before
//!   them. `file/state.rs` states the rules of its buffer and position.
//!
//! Nothing here holds a runtime lock while it runs user code or a syscall:
//! the blocking pool runs each closure outside its lock.

mod dir_builder;
mod file;
mod open_options;
mod read_dir;

use std::io;
use std::path::{Path, PathBuf};

pub use dir_builder::DirBuilder;
pub use file::File;
pub use open_options::OpenOptions;
pub use read_dir::{DirEntry, ReadDir, read_dir};
pub use std::fs::FileTimes;

use crate::task::{JoinError, JoinHandle};

/// The most bytes one blocking call of a [`File`] reads or writes by
/// default (tokio's `MAX_BUF`): larger reads and writes are split, so a task
/// that awaits a huge `write_all` does not hold a pool thread for all of it
/// and its memory stays bounded.
pub(crate) const MAX_BUF: usize = 2 * 1024 * 1024;

/// Runs `f` on the blocking pool of the current runtime. `what` names the
/// caller in the panic outside a runtime.
fn spawn<F, T>(what: &'static str, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let spawned = crate::runtime::context::with_current(|shared| {
        shared.map(|shared| crate::runtime::spawn_blocking_on(shared, f))
    });
    match spawned {
        Some(join) => join,
        None => outside_runtime(what),
    }
}

#[cold]
fn outside_runtime(what: &str) -> ! {
    crate::runtime::context::no_runtime(format_args!(
        "`weft::fs::{what}` polled outside of a weft runtime: await it in a task, inside \
         `Runtime::block_on`, or while a `Runtime::enter` guard is alive"
    ))
}

/// The error for an operation that did not run to its end: cancelled by
/// the runtime's shutdown (the panic of a `std::fs` call, which would be a
/// bug, is resumed instead).
fn not_run(error: JoinError, what: &str) -> io::Error {
    if error.is_panic() {
        std::panic::resume_unwind(error.into_panic());
    }
    if cfg!(feature = "tokio-messages") {
        return io::Error::other("background task failed");
    }
    io::Error::other(format!(
        "`weft::fs::{what}` did not run: its runtime shut down first"
    ))
}

/// Runs `f` on the blocking pool and gives its result.
async fn asyncify<F, T>(what: &'static str, f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    match spawn(what, f).await {
        Ok(result) => result,
        Err(error) => Err(not_run(error, what)),
    }
}

/// The path a pool thread needs, copied from the caller's argument. Taken
/// by reference: the argument itself lives until the call's future ends
/// (tokio's behaviour), so a path whose drop removes its file (a
/// `tempfile::NamedTempFile`, say) still names it while the pool thread
/// works (`tests/fs.rs`'s `a_path_argument_lives_until_the_call_ends`).
fn owned(path: &impl AsRef<Path>) -> PathBuf {
    path.as_ref().to_owned()
}

/// Reads a whole file into a vector: [`std::fs::read`] on the blocking pool.
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let manifest = weft::fs::read("Cargo.toml").await?;
/// assert!(manifest.starts_with(b"["));
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = owned(&path);
    asyncify("read", move || std::fs::read(path)).await
}

/// Reads a whole file into a string: [`std::fs::read_to_string`] on the
/// blocking pool. Invalid UTF-8 is an `InvalidData` error.
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let manifest = weft::fs::read_to_string("Cargo.toml").await?;
/// assert!(manifest.contains("[package]"));
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = owned(&path);
    asyncify("read_to_string", move || std::fs::read_to_string(path)).await
}

/// Creates or truncates a file and writes `contents` to it:
/// [`std::fs::write`] on the blocking pool (the bytes are copied first, as
/// the pool thread needs them owned).
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let path = std::env::temp_dir().join(format!("weft-fs-write-{}", std::process::id()));
/// weft::fs::write(&path, b"bytes").await?;
/// assert_eq!(weft::fs::read(&path).await?, b"bytes");
/// weft::fs::remove_file(&path).await?;
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = owned(&path);
    let contents = contents.as_ref().to_owned();
    asyncify("write", move || std::fs::write(path, contents)).await
}

/// Copies the contents and permissions of `from` to `to`, returning the
/// number of bytes copied: [`std::fs::copy`] on the blocking pool (one
/// pool call; the kernel copies without the bytes entering user space
/// where it can).
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let (from, to) = (owned(&from), owned(&to));
    asyncify("copy", move || std::fs::copy(from, to)).await
}

/// Renames a file or directory, replacing `to` if it exists:
/// [`std::fs::rename`] on the blocking pool.
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let (from, to) = (owned(&from), owned(&to));
    asyncify("rename", move || std::fs::rename(from, to)).await
}

/// Creates a directory (its parent must exist): [`std::fs::create_dir`] on
/// the blocking pool.
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = owned(&path);
    asyncify("create_dir", move || std::fs::create_dir(path)).await
}

/// Creates a directory and every missing parent: [`std::fs::create_dir_all`]
/// on the blocking pool.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = owned(&path);
    asyncify("create_dir_all", move || std::fs::create_dir_all(path)).await
}

/// Removes a file: [`std::fs::remove_file`] on the blocking pool.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = owned(&path);
    asyncify("remove_file", move || std::fs::remove_file(path)).await
}

/// Removes an empty directory: [`std::fs::remove_dir`] on the blocking pool.
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = owned(&path);
    asyncify("remove_dir", move || std::fs::remove_dir(path)).await
}

/// Removes a directory and everything in it: [`std::fs::remove_dir_all`]
/// on the blocking pool, as one pool call.
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = owned(&path);
    asyncify("remove_dir_all", move || std::fs::remove_dir_all(path)).await
}

/// The metadata of a path, following symbolic links: [`std::fs::metadata`]
/// on the blocking pool.
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let metadata = weft::fs::metadata("Cargo.toml").await?;
/// assert!(metadata.is_file() && metadata.len() > 0);
/// let missing = weft::fs::metadata("no such file").await.unwrap_err();
/// assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<std::fs::Metadata> {
    let path = owned(&path);
    asyncify("metadata", move || std::fs::metadata(path)).await
}

/// The metadata of a path without following a final symbolic link:
/// [`std::fs::symlink_metadata`] on the blocking pool.
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<std::fs::Metadata> {
    let path = owned(&path);
    asyncify("symlink_metadata", move || std::fs::symlink_metadata(path)).await
}

/// The absolute path with every symbolic link and `.`/`..` resolved:
/// [`std::fs::canonicalize`] on the blocking pool.
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = owned(&path);
    asyncify("canonicalize", move || std::fs::canonicalize(path)).await
}

/// Whether a path exists (`Ok(false)` for a broken symbolic link, an error
/// if that cannot be told): [`std::fs::exists`] on the blocking pool.
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = owned(&path);
    asyncify("try_exists", move || std::fs::exists(path)).await
}

/// Creates a hard link `link` to `original`: [`std::fs::hard_link`] on the
/// blocking pool.
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (owned(&original), owned(&link));
    asyncify("hard_link", move || std::fs::hard_link(original, link)).await
}

/// Creates a symbolic link `link` pointing at `original`:
/// [`std::os::unix::fs::symlink`] on the blocking pool.
#[cfg(unix)]
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (owned(&original), owned(&link));
    asyncify("symlink", move || {
        std::os::unix::fs::symlink(original, link)
    })
    .await
}

/// What a symbolic link points at: [`std::fs::read_link`] on the blocking
/// pool.
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = owned(&path);
    asyncify("read_link", move || std::fs::read_link(path)).await
}

/// Changes the permissions of a path: [`std::fs::set_permissions`] on the
/// blocking pool.
pub async fn set_permissions(path: impl AsRef<Path>, perm: std::fs::Permissions) -> io::Result<()> {
    let path = owned(&path);
    asyncify("set_permissions", move || {
        std::fs::set_permissions(path, perm)
    })
    .await
}
