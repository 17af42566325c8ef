//! `File`: an open file whose reads, writes and seeks run on the blocking
//! pool, one at a time (the state machine and its rules are in
//! `file/state.rs`).

mod state;

use std::fmt;
use std::fs::{File as StdFile, Metadata, Permissions};
use std::future::poll_fn;
use std::io::{self, IoSlice, Seek, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use state::{Inner, Job, Reply};

use crate::util::locks::{StdMutex, StdMutexGuard};

use super::{MAX_BUF, OpenOptions};

/// An open file, as tokio's `File`: reads, writes and seeks through
/// [`futures_io::AsyncRead`], [`AsyncWrite`](futures_io::AsyncWrite) and
/// [`AsyncSeek`](futures_io::AsyncSeek) (and, with the `tokio-io` feature,
/// tokio's three traits), each run on the blocking pool.
///
/// ```
/// use futures_lite::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
/// use std::io::SeekFrom;
/// use weft::fs::File;
///
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let path = std::env::temp_dir().join(format!("weft-file-doc-{}", std::process::id()));
/// let mut file = File::create(&path).await?;
/// file.write_all(b"hello, world").await?;
/// file.sync_all().await?;                      // the write has landed and is on disk
///
/// let mut file = File::open(&path).await?;
/// file.seek(SeekFrom::Start(7)).await?;
/// let mut word = String::new();
/// file.read_to_string(&mut word).await?;
/// assert_eq!(word, "world");
/// assert_eq!(file.metadata().await?.len(), 12);
/// weft::fs::remove_file(&path).await?;
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
///
/// # How it behaves
///
/// One operation runs at a time, in the order they are made; each moves a
/// buffer to a pool thread and back. So:
///
/// - `poll_write` copies up to [`max_buf_size`](Self::max_buf_size) bytes
///   (2 MiB by default), starts the write and returns: a write returning
///   `Ok(n)` has been *handed over*, not written. Writes land in order.
///   **Flush before you drop the file** (or call `sync_all`) if you need to
///   know they landed: a write still running when the `File` is dropped
///   completes, but its error is lost. An error is returned by the next
///   write, `flush`, `sync_all` or `sync_data`.
/// - A read fetches up to `min(buffer, max_buf_size)` bytes per pool call.
///   Bytes fetched and not yet taken (a read whose caller went away) are
///   returned first by the next read, and seeks and writes account for
///   them.
/// - A seek, `sync_all`, `sync_data`, `set_len`, `metadata` and
///   `try_clone` wait for the operation before them.
/// - The methods on `&self` may be called from several tasks at once (an
///   `Arc<File>`); they take turns.
///
/// Dropping a future of an operation a thread has started does not stop
/// it. At runtime shutdown an operation not yet started fails with
/// `ErrorKind::Other`; the `File` stays usable with another runtime.
pub struct File {
    std: Arc<StdFile>,
    turns: StdMutex<Turns>,
}

/// What the `&self` methods share (rule 6 of `file/state.rs`): the state
/// machine is taken out by the method holding the turn and put back when
/// it is done, so no waker is cloned, no `JoinHandle` polled and no
/// closure spawned under this lock (`crate::util::locks`).
struct Turns {
    /// The state machine, while no `&self` method holds the turn.
    inner: Option<Inner>,
    /// Tasks waiting for the turn.
    waiting: Vec<Waker>,
    /// `inner.max_buf`, readable while the machine is taken.
    max_buf: usize,
}

impl File {
    /// Opens a file for reading: [`std::fs::File::open`] on the blocking
    /// pool.
    ///
    /// ```
    /// # weft::runtime::Runtime::new()?.block_on(async {
    /// let missing = weft::fs::File::open("no such file").await.unwrap_err();
    /// assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    /// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        let path = super::owned(&path);
        let std = super::asyncify("File::open", move || StdFile::open(path)).await?;
        Ok(File::from_std(std))
    }

    /// Opens a file for writing, creating it or truncating it:
    /// [`std::fs::File::create`] on the blocking pool.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        let path = super::owned(&path);
        let std = super::asyncify("File::create", move || StdFile::create(path)).await?;
        Ok(File::from_std(std))
    }

    /// Creates a new file for reading and writing, failing with
    /// `AlreadyExists` if it exists: [`std::fs::File::create_new`] on the
    /// blocking pool.
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        let path = super::owned(&path);
        let std = super::asyncify("File::create_new", move || StdFile::create_new(path)).await?;
        Ok(File::from_std(std))
    }

    /// [`OpenOptions::new`], for other ways to open.
    pub fn options() -> OpenOptions {
        // `Default::default()` (a mutant) is this same call: equivalent.
        OpenOptions::new()
    }

    /// Wraps an open `std` file. Its operations will run on the blocking
    /// pool of the runtime they are polled on.
    pub fn from_std(std: StdFile) -> File {
        File {
            std: Arc::new(std),
            turns: StdMutex::new(Turns {
                inner: Some(Inner::new(MAX_BUF)),
                waiting: Vec::new(),
                max_buf: MAX_BUF,
            }),
        }
    }

    fn lock(&self) -> StdMutexGuard<'_, Turns> {
        // Every change under the lock is a single assignment or push:
        // poisoning is ignored.
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state machine, for a `&mut self` path: no `&self` method can
    /// hold the turn meanwhile, so it is in place, unless the future of
    /// one that held it was leaked (`mem::forget`) with it; the operation
    /// that one had in flight is then lost, and the file goes on from an
    /// idle machine.
    fn inner_mut(&mut self) -> (&Arc<StdFile>, &mut Inner) {
        let turns = self.turns.get_mut().unwrap_or_else(|e| e.into_inner());
        let max_buf = turns.max_buf;
        let inner = turns.inner.get_or_insert_with(|| Inner::new(max_buf));
        (&self.std, inner)
    }

    /// Takes the turn (rule 6), or registers the task to be woken when it
    /// is released. The waker is cloned outside the lock (it may be the
    /// program's), then looked at again under it.
    fn poll_turn(&self, cx: &mut Context<'_>) -> Poll<TurnGuard<'_>> {
        let turn = |inner| TurnGuard {
            file: self,
            inner: Some(inner),
        };
        {
            let mut turns = self.lock();
            if let Some(inner) = turns.inner.take() {
                return Poll::Ready(turn(inner));
            }
            if turns.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                return Poll::Pending;
            }
        }
        crate::util::locks::user_code("a waker's clone (File's turn)");
        let waker = cx.waker().clone();
        let mut turns = self.lock();
        match turns.inner.take() {
            Some(inner) => {
                drop(turns);
                crate::util::locks::user_code("a waker's drop (File's turn)");
                drop(waker);
                Poll::Ready(turn(inner))
            }
            None => {
                turns.waiting.push(waker);
                Poll::Pending
            }
        }
    }

    /// Runs a `&self` method's `job` after the operation in flight: takes
    /// the turn (the state machine's rule 6) and with it the machine,
    /// completes what runs, starts `job` and waits for it.
    async fn exclusive(&self, job: Job) -> io::Result<Reply> {
        let mut turn = poll_fn(|cx| self.poll_turn(cx)).await;
        let inner = turn.inner();
        poll_fn(|cx| inner.poll_idle(cx)).await;
        if job.reports_write_error() {
            if let Some(error) = inner.take_write_error() {
                return Err(error);
            }
        }
        inner.start_other(&self.std, job);
        poll_fn(|cx| inner.poll_other(cx)).await
    }

    /// Waits for the writes before it, then flushes the file's data and
    /// metadata to the device: [`std::fs::File::sync_all`] on the blocking
    /// pool. Returns the error of an earlier write not yet reported.
    pub async fn sync_all(&self) -> io::Result<()> {
        self.exclusive(Job::SyncAll).await.map(drop)
    }

    /// As [`sync_all`](Self::sync_all), without the metadata that reading
    /// the file back does not need: [`std::fs::File::sync_data`].
    pub async fn sync_data(&self) -> io::Result<()> {
        self.exclusive(Job::SyncData).await.map(drop)
    }

    /// Truncates or extends (with zeros) the file to `size` bytes, after the
    /// operations before it; the position does not change:
    /// [`std::fs::File::set_len`] on the blocking pool.
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        self.exclusive(Job::SetLen(size)).await.map(drop)
    }

    /// The file's metadata, after the operations before it (so its length
    /// counts every write handed over): [`std::fs::File::metadata`] on the
    /// blocking pool.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        match self.exclusive(Job::Metadata).await? {
            Reply::Metadata(metadata) => Ok(metadata),
            _ => unreachable!("a metadata job replies with metadata"),
        }
    }

    /// Changes the file's permissions: [`std::fs::File::set_permissions`]
    /// on the blocking pool.
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        self.exclusive(Job::SetPermissions(perm)).await.map(drop)
    }

    /// Changes the file's access and modification times, after the
    /// operations before it: [`std::fs::File::set_times`] on the blocking
    /// pool.
    pub async fn set_times(&self, times: std::fs::FileTimes) -> io::Result<()> {
        self.exclusive(Job::SetTimes(times)).await.map(drop)
    }

    /// Changes the file's modification time: `set_times` with that time
    /// alone.
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.set_times(std::fs::FileTimes::new().set_modified(time))
            .await
    }

    /// A new `File` for the same open file (the same position and flags)
    /// and the same [`max_buf_size`](Self::max_buf_size):
    /// [`std::fs::File::try_clone`] on the blocking pool, after the
    /// operations before it.
    pub async fn try_clone(&self) -> io::Result<File> {
        match self.exclusive(Job::TryClone).await? {
            Reply::File(std) => {
                let mut clone = File::from_std(std);
                // The clone keeps this file's setting, as tokio's does.
                clone.set_max_buf_size(self.max_buf_size());
                Ok(clone)
            }
            _ => unreachable!("a clone job replies with a file"),
        }
    }

    /// Waits for the operation in flight and gives back the `std` file,
    /// its position where this `File`'s reader was (bytes read ahead are
    /// given back to the OS). An earlier write's unreported error is lost:
    /// flush first to see it.
    pub async fn into_std(mut self) -> StdFile {
        let (std, inner) = self.inner_mut();
        poll_fn(|cx| inner.poll_idle(cx)).await;
        // `>=` (a mutant) adds a pool job that moves back by 0: a cost only.
        if inner.unread() > 0 {
            inner.start_other(std, Job::Rewind);
            // An unseekable file cannot move back; it stays where it is.
            let _ = poll_fn(|cx| inner.poll_other(cx)).await;
        }
        Arc::try_unwrap(self.std)
            .expect("only the operation in flight shares the std file, and none is in flight")
    }

    /// Gives back the `std` file at once, or `self` if an operation is in
    /// flight (or bytes read ahead cannot be given back). Bytes read ahead
    /// are given back by an `lseek`, which does not block.
    #[allow(clippy::result_large_err)]
    pub fn try_into_std(mut self) -> Result<StdFile, File> {
        let (std, inner) = self.inner_mut();
        if !inner.is_idle() {
            return Err(self);
        }
        let unread = inner.unread();
        if unread > 0 {
            // `unread` is at most one read's size, which fits a slice.
            if (&**std).seek(SeekFrom::Current(-(unread as i64))).is_err() {
                return Err(self);
            }
            inner.discard_unread();
        }
        Ok(Arc::try_unwrap(self.std)
            .expect("only the operation in flight shares the std file, and none is in flight"))
    }

    /// Sets the most bytes one pool call reads or writes (2 MiB by default).
    ///
    /// # Panics
    ///
    /// If `max_buf_size` is 0.
    #[track_caller]
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        self.inner_mut().1.max_buf = max_buf_size;
        self.turns
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .max_buf = max_buf_size;
    }

    /// The most bytes one pool call reads or writes.
    pub fn max_buf_size(&self) -> usize {
        self.lock().max_buf
    }
}

/// The turn of a `&self` method and the state machine it took; both are
/// given back when dropped (also when its future is dropped mid-way, or
/// unwinds).
struct TurnGuard<'a> {
    file: &'a File,
    inner: Option<Inner>,
}

impl TurnGuard<'_> {
    fn inner(&mut self) -> &mut Inner {
        self.inner
            .as_mut()
            .expect("the machine is given back only on drop")
    }
}

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        let waiting = {
            let mut turns = self.file.lock();
            turns.inner = self.inner.take();
            std::mem::take(&mut turns.waiting)
        };
        // Every waiter tries again; one gets the turn.
        for waker in waiting {
            crate::util::locks::user_code("a waker's wake (File's turn)");
            waker.wake();
        }
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File").field("std", &self.std).finish()
    }
}

impl From<StdFile> for File {
    fn from(std: StdFile) -> File {
        File::from_std(std)
    }
}

/// The file's descriptor: the operations a pool thread runs meanwhile use
/// it too, so a syscall made on it directly lands between them in no
/// fixed order (as with tokio's).
impl std::os::fd::AsRawFd for File {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.std.as_raw_fd()
    }
}

impl std::os::fd::AsFd for File {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.std.as_fd()
    }
}

impl std::os::fd::FromRawFd for File {
    /// `from_std` of the `std` file that owns `fd`.
    ///
    /// # Safety
    ///
    /// `fd` is an open file descriptor the caller owns and gives away
    /// ([`FromRawFd::from_raw_fd`](std::os::fd::FromRawFd::from_raw_fd)'s contract).
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> File {
        // SAFETY: the caller's promise, passed on unchanged.
        File::from_std(unsafe { StdFile::from_raw_fd(fd) })
    }
}

/// The write methods futures-io's and tokio's `AsyncWrite` share (their
/// signatures are the same); each trait's impl adds its own way to close.
macro_rules! write_methods {
    () => {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let (std, inner) = self.get_mut().inner_mut();
            inner.poll_write(std, cx, buf)
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            let (std, inner) = self.get_mut().inner_mut();
            inner.poll_write_vectored(std, cx, bufs)
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.get_mut().inner_mut().1.poll_flush(cx)
        }
    };
}

impl futures_io::AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let (std, inner) = self.get_mut().inner_mut();
        inner.poll_read(std, cx, buf.len(), |bytes| {
            buf[..bytes.len()].copy_from_slice(bytes)
        })
    }
}

impl futures_io::AsyncWrite for File {
    write_methods!();

    /// Flushes; the file stays open until the `File` is dropped.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner_mut().1.poll_flush(cx)
    }
}

impl futures_io::AsyncSeek for File {
    fn poll_seek(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        let (std, inner) = self.get_mut().inner_mut();
        inner.poll_seek(std, cx, pos)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (std, inner) = self.get_mut().inner_mut();
        // `put_slice` writes into the unfilled part without zeroing it first.
        let room = buf.remaining();
        std::task::ready!(inner.poll_read(std, cx, room, |bytes| buf.put_slice(bytes)))?;
        Poll::Ready(Ok(()))
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncWrite for File {
    write_methods!();

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// Flushes; the file stays open until the `File` is dropped.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner_mut().1.poll_flush(cx)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let (std, inner) = self.get_mut().inner_mut();
        inner.start_seek(std, position)
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.get_mut().inner_mut().1.poll_complete(cx)
    }
}

/// Never called: a compile-time check (emptying its body, a mutant,
/// changes no behaviour).
#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync + Unpin>() {}
    is::<File>();
    is::<super::OpenOptions>();
    is::<super::ReadDir>();
    is::<super::DirEntry>();
}
