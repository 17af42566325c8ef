//! `tokio::fs` on weft: file operations on weft's blocking pool. [`File`]
//! and [`OpenOptions`] wrap weft's, for tokio's I/O traits.

use std::io::{self, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

pub use weft::fs::{
    canonicalize, copy, create_dir, create_dir_all, hard_link, metadata, read, read_dir, read_link,
    read_to_string, remove_dir, remove_dir_all, remove_file, rename, set_permissions, symlink,
    symlink_metadata, try_exists, write, DirBuilder, DirEntry, FileTimes, ReadDir,
};

use crate::io_adapt::{impl_async_read, impl_async_write};

/// An open file: weft's, with tokio's `AsyncRead`, `AsyncWrite` and
/// `AsyncSeek`.
pub struct File {
    inner: weft::fs::File,
    /// The position `start_seek` asked for, until `poll_complete` is done.
    seeking: Option<SeekFrom>,
}

impl From<weft::fs::File> for File {
    fn from(inner: weft::fs::File) -> File {
        File {
            inner,
            seeking: None,
        }
    }
}

impl From<std::fs::File> for File {
    fn from(std: std::fs::File) -> File {
        File::from_std(std)
    }
}

/// weft's `Debug` under tokio's name: `tokio::fs::File { std: .. }`.
impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tokio::fs::")?;
        self.inner.fmt(f)
    }
}

impl_async_read!(File, inner);
crate::io_adapt::impl_fd!(File);

impl std::os::unix::io::FromRawFd for File {
    unsafe fn from_raw_fd(fd: std::os::unix::io::RawFd) -> File {
        // SAFETY: the caller's promise (an open descriptor it gives away)
        // is passed on.
        unsafe { weft::fs::File::from_raw_fd(fd) }.into()
    }
}
impl_async_write!(File, inner);

impl tokio_upstream::io::AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if this.seeking.is_some() {
            return Err(io::Error::other(
                "other file operation is pending, call poll_complete before start_seek",
            ));
        }
        this.seeking = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        let position = this.seeking.unwrap_or(SeekFrom::Current(0));
        let done = futures_io::AsyncSeek::poll_seek(Pin::new(&mut this.inner), cx, position);
        if done.is_ready() {
            this.seeking = None;
        }
        done
    }
}

impl File {
    /// Opens `path` for reading.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        weft::fs::File::open(path).await.map(File::from)
    }

    /// Creates (or truncates) `path` for writing.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        weft::fs::File::create(path).await.map(File::from)
    }

    /// Creates `path` for writing; fails if it exists.
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        weft::fs::File::create_new(path).await.map(File::from)
    }

    /// Options for opening a file.
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// A file from a std file.
    pub fn from_std(std: std::fs::File) -> File {
        weft::fs::File::from_std(std).into()
    }

    /// Writes everything to the disk, metadata included.
    pub async fn sync_all(&self) -> io::Result<()> {
        self.inner.sync_all().await
    }

    /// Writes the data to the disk.
    pub async fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data().await
    }

    /// Truncates or extends the file.
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        self.inner.set_len(size).await
    }

    /// The file's metadata.
    pub async fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.inner.metadata().await
    }

    /// Changes the file's permissions.
    pub async fn set_permissions(&self, perm: std::fs::Permissions) -> io::Result<()> {
        self.inner.set_permissions(perm).await
    }

    /// Changes the file's access and modification times.
    pub async fn set_times(&self, times: FileTimes) -> io::Result<()> {
        self.inner.set_times(times).await
    }

    /// Changes the file's modification time.
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.inner.set_modified(time).await
    }

    /// A second handle to the same open file.
    pub async fn try_clone(&self) -> io::Result<File> {
        self.inner.try_clone().await.map(File::from)
    }

    /// The std file, once pending operations are done.
    pub async fn into_std(self) -> std::fs::File {
        self.inner.into_std().await
    }

    /// The std file, if no operation is pending.
    // tokio's signature: the file comes back whole on failure.
    #[allow(clippy::result_large_err)]
    pub fn try_into_std(self) -> Result<std::fs::File, File> {
        self.inner.try_into_std().map_err(File::from)
    }

    /// The most bytes one blocking read or write moves.
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        self.inner.set_max_buf_size(max_buf_size)
    }

    /// See [`File::set_max_buf_size`].
    pub fn max_buf_size(&self) -> usize {
        self.inner.max_buf_size()
    }
}

/// Options for opening a file, as `std::fs::OpenOptions`.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    inner: weft::fs::OpenOptions,
}

macro_rules! option {
    ($(#[$doc:meta] $name:ident($ty:ty)),* $(,)?) => {
        $(
            #[$doc]
            pub fn $name(&mut self, value: $ty) -> &mut OpenOptions {
                self.inner.$name(value);
                self
            }
        )*
    };
}

impl OpenOptions {
    /// No access, no creation.
    pub fn new() -> OpenOptions {
        OpenOptions {
            inner: weft::fs::OpenOptions::new(),
        }
    }

    option! {
        /// Read access.
        read(bool),
        /// Write access.
        write(bool),
        /// Writes go to the end.
        append(bool),
        /// Truncate on open.
        truncate(bool),
        /// Create if missing.
        create(bool),
        /// Create; fail if it exists.
        create_new(bool),
        /// The permission bits of a created file.
        mode(u32),
        /// Extra `open(2)` flags.
        custom_flags(i32),
    }

    /// Opens `path` with these options.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        self.inner.open(path).await.map(File::from)
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions {
            inner: options.into(),
        }
    }
}
