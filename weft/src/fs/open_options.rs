//! `OpenOptions`: `std`'s builder, opening on the blocking pool.

use std::io;
use std::path::Path;

use super::File;

/// Options for opening a file, as [`std::fs::OpenOptions`] (tokio's
/// builder): set the access and creation flags, then
/// [`open`](Self::open) a path.
///
/// ```
/// use futures_lite::io::AsyncWriteExt;
/// use weft::fs::OpenOptions;
///
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let path = std::env::temp_dir().join(format!("weft-open-options-{}", std::process::id()));
/// for line in ["first\n", "second\n"] {
///     let mut log = OpenOptions::new().append(true).create(true).open(&path).await?;
///     log.write_all(line.as_bytes()).await?;
///     log.flush().await?;                           // waits for the write to land
/// }
/// assert_eq!(weft::fs::read_to_string(&path).await?, "first\nsecond\n");
/// weft::fs::remove_file(&path).await?;
/// # Ok::<(), std::io::Error>(()) })?; Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// Options with every flag off (set at least one of `read`, `write`,
    /// `append` before opening).
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Open for writing.
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Open for appending: every write goes to the end of the file, whatever
    /// the position (implies `write`).
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncate the file to length 0 when it is opened (needs `write`).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Create the file if it does not exist (needs `write` or `append`).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Create the file, failing with `AlreadyExists` if it exists (atomic;
    /// `create` and `truncate` are then ignored).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// The permission bits of a file this call creates (before the umask).
    #[cfg(unix)]
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::mode(&mut self.0, mode);
        self
    }

    /// Extra `open(2)` flags (`O_NOFOLLOW`, ...); the access mode bits are
    /// masked off.
    #[cfg(unix)]
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
        self
    }

    /// Opens `path` with these options, on the blocking pool. Errors are
    /// the OS's (`NotFound`, `PermissionDenied`, `AlreadyExists`, and
    /// `InvalidInput` for a combination of flags that makes no sense).
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let options = self.0.clone();
        let path = super::owned(&path);
        let std = super::asyncify("OpenOptions::open", move || options.open(path)).await?;
        Ok(File::from_std(std))
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options)
    }
}
