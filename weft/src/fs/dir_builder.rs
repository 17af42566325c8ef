//! `DirBuilder`: tokio's builder for creating a directory with options,
//! [`std::fs::DirBuilder`] run on the blocking pool.

use std::io;
use std::path::Path;

/// Creates directories with options (tokio's `DirBuilder`): whether
/// missing parents are created too, and (Unix) the new directories' mode.
///
/// ```
/// # weft::runtime::Runtime::new()?.block_on(async {
/// let root = std::env::temp_dir().join(format!("weft-dir-builder-doc-{}", std::process::id()));
/// weft::fs::DirBuilder::new().recursive(true).create(root.join("a/b")).await?;
/// assert!(weft::fs::metadata(root.join("a/b")).await?.is_dir());
/// weft::fs::remove_dir_all(&root).await
/// # })?; Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct DirBuilder {
    recursive: bool,
    #[cfg(unix)]
    mode: Option<u32>,
}

impl DirBuilder {
    /// A builder that creates one directory (its parent must exist), with
    /// the default mode.
    pub fn new() -> DirBuilder {
        DirBuilder::default()
    }

    /// Whether missing parent directories are created too (and an existing
    /// directory is not an error). Default: no.
    pub fn recursive(&mut self, recursive: bool) -> &mut Self {
        self.recursive = recursive;
        self
    }

    /// Creates `path` with these options: [`std::fs::DirBuilder::create`]
    /// on the blocking pool. The path argument lives until the call ends.
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let mut std = std::fs::DirBuilder::new();
        std.recursive(self.recursive);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            std::os::unix::fs::DirBuilderExt::mode(&mut std, mode);
        }
        let path_buf = super::owned(&path);
        super::asyncify("DirBuilder::create", move || std.create(path_buf)).await
    }
}

#[cfg(unix)]
impl DirBuilder {
    /// The permission bits of the directories created (before the umask),
    /// as `std::os::unix::fs::DirBuilderExt::mode`. Default: 0o777.
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = Some(mode);
        self
    }
}
