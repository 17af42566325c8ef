//! `read_dir`: a directory's entries, fetched in chunks on the blocking
//! pool.
//!
//! A `ReadDir` is idle with a chunk of entries fetched (possibly empty) and
//! the `std` iterator, or busy while a pool thread fetches the next chunk
//! (the iterator travels with it), or done. `next_entry` is cancel-safe: an
//! abandoned call leaves the fetch in flight and the next call takes its
//! result, so no entry is lost or repeated.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::future::{Future, poll_fn};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use crate::task::JoinHandle;

/// Entries fetched per pool call (tokio's chunk): one call per entry would
/// pay a pool round trip per name, one call per directory would hold a
/// thread and memory for a huge one.
const CHUNK: usize = 32;

/// Starts reading the entries of the directory at `path` (not `.` and
/// `..`), in the order the file system gives them: [`std::fs::read_dir`]
/// on the blocking pool.
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let mut entries = weft::fs::read_dir("src").await?;
/// let mut rust_files = 0;
/// while let Some(entry) = entries.next_entry().await? {
///     if entry.file_type().await?.is_file() && entry.path().extension() == Some("rs".as_ref()) {
///         rust_files += 1;
///     }
/// }
/// assert!(rust_files > 0);
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = super::owned(&path);
    let std = super::asyncify("read_dir", move || std::fs::read_dir(path)).await?;
    Ok(ReadDir(State::Idle(Chunk {
        entries: VecDeque::new(),
        std,
        more: true,
    })))
}

/// The entries of a directory, from [`read_dir`]: call
/// [`next_entry`](Self::next_entry) until it gives `Ok(None)`.
#[derive(Debug)]
pub struct ReadDir(State);

#[derive(Debug)]
enum State {
    Idle(Chunk),
    Busy(JoinHandle<Chunk>),
    /// Every entry was given out, or the runtime shut down during a fetch.
    Done,
}

#[derive(Debug)]
struct Chunk {
    entries: VecDeque<io::Result<DirEntry>>,
    std: std::fs::ReadDir,
    /// Whether `std` may have more entries.
    more: bool,
}

impl Chunk {
    /// Fetches up to `CHUNK` entries (on a pool thread).
    fn fetch(mut self) -> Chunk {
        for _ in 0..CHUNK {
            match self.std.next() {
                Some(entry) => self.entries.push_back(entry.map(DirEntry::new)),
                None => {
                    self.more = false;
                    break;
                }
            }
        }
        self
    }
}

impl ReadDir {
    /// The next entry, `Ok(None)` after the last; an error for an entry the
    /// OS could not read (the following entries still come). Cancel-safe.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry, as [`next_entry`](Self::next_entry); only
    /// the waker of the last call is woken.
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            match &mut self.0 {
                State::Idle(chunk) => {
                    if let Some(entry) = chunk.entries.pop_front() {
                        return Poll::Ready(entry.map(Some));
                    }
                    if !chunk.more {
                        self.0 = State::Done;
                        continue;
                    }
                    let State::Idle(chunk) = std::mem::replace(&mut self.0, State::Done) else {
                        unreachable!("matched Idle above")
                    };
                    self.0 =
                        State::Busy(super::spawn("ReadDir::next_entry", move || chunk.fetch()));
                }
                State::Busy(fetch) => match ready!(Pin::new(fetch).poll(cx)) {
                    Ok(chunk) => self.0 = State::Idle(chunk),
                    Err(error) => {
                        self.0 = State::Done;
                        return Poll::Ready(Err(super::not_run(error, "ReadDir::next_entry")));
                    }
                },
                State::Done => return Poll::Ready(Ok(None)),
            }
        }
    }
}

/// One entry of a directory, from [`ReadDir::next_entry`].
#[derive(Debug)]
pub struct DirEntry {
    std: Arc<std::fs::DirEntry>,
    /// Read with the entry on the pool thread; cheap on Linux, where the
    /// directory listing carries it.
    file_type: Option<FileType>,
}

impl DirEntry {
    fn new(std: std::fs::DirEntry) -> DirEntry {
        let file_type = std.file_type().ok();
        DirEntry {
            std: Arc::new(std),
            file_type,
        }
    }

    /// The full path: the path given to [`read_dir`] joined with the
    /// entry's name.
    pub fn path(&self) -> PathBuf {
        self.std.path()
    }

    /// The entry's name, without any leading path.
    pub fn file_name(&self) -> OsString {
        self.std.file_name()
    }

    /// The entry's inode number (no system call).
    #[cfg(unix)]
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.std)
    }

    /// The entry's metadata, not following a symbolic link:
    /// [`std::fs::DirEntry::metadata`] on the blocking pool.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        super::asyncify("DirEntry::metadata", move || std.metadata()).await
    }

    /// The entry's type, not following a symbolic link. Known already when
    /// the listing gave it (Linux file systems do); otherwise
    /// [`std::fs::DirEntry::file_type`] on the blocking pool.
    pub async fn file_type(&self) -> io::Result<FileType> {
        if let Some(file_type) = self.file_type {
            return Ok(file_type);
        }
        let std = self.std.clone();
        super::asyncify("DirEntry::file_type", move || std.file_type()).await
    }
}
