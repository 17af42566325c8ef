//! The command line.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// An axum service with a real database, on weft or on tokio.
#[derive(Debug, Parser)]
#[command(name = "weft-service", version)]
pub struct Args {
    /// The async runtime that serves the requests.
    #[arg(long, value_enum, default_value_t = RuntimeKind::Weft)]
    pub runtime: RuntimeKind,

    /// Worker threads [default: one per core].
    #[arg(long)]
    pub workers: Option<NonZeroUsize>,

    /// `postgres://user@host:port/db` for PostgreSQL; `sqlite` or nothing
    /// for the embedded SQLite database under `--data-dir`.
    #[arg(long)]
    pub database: Option<String>,

    /// The address to listen on (`:0` picks a free port; the first line
    /// printed says which).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Where the embedded database keeps its file.
    #[arg(long, default_value = "weft-service-data")]
    pub data_dir: PathBuf,

    /// Database connections in the pool, and (SQLite) the most queries on
    /// the blocking pool at once; further requests wait for one, as tasks
    /// [default: 2 per worker, at least 4].
    #[arg(long)]
    pub db_connections: Option<NonZeroUsize>,

    /// glibc's malloc arenas, the most the process may use (`mallopt`'s
    /// `M_ARENA_MAX`) [default: one per worker, unless `MALLOC_ARENA_MAX`
    /// or a `glibc.malloc.arena_max` tunable is set; ignored off glibc].
    #[arg(long)]
    pub malloc_arenas: Option<NonZeroUsize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeKind {
    Weft,
    Tokio,
}

/// Where the data lives, from `--database`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Args {
    pub fn workers(&self) -> usize {
        self.workers
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get)
    }

    /// SQLite's point reads are CPU work on the page cache, so more calls
    /// than cores in parallel buy nothing; twice as many keeps the cores
    /// busy while some calls block (a writer waiting for the WAL lock, a
    /// page read, a checkpoint's fsync), and the floor of 4 keeps a
    /// one-worker service's reads from queueing behind one such writer.
    /// PostgreSQL pipelines each connection's queries: a few per core
    /// keep its backends busy.
    pub fn db_connections(&self) -> usize {
        self.db_connections
            .map_or((2 * self.workers()).max(4), NonZeroUsize::get)
    }

    /// The arena cap to set, if any: `--malloc-arenas`, else one per
    /// worker unless the environment already sets glibc's (whose setting
    /// then stands).
    pub fn malloc_arenas(&self) -> Option<usize> {
        let env_sets_it = std::env::var_os("MALLOC_ARENA_MAX").is_some()
            || std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("malloc.arena_max"));
        self.malloc_arenas_unless(env_sets_it)
    }

    fn malloc_arenas_unless(&self, env_sets_it: bool) -> Option<usize> {
        match self.malloc_arenas {
            Some(arenas) => Some(arenas.get()),
            None if env_sets_it => None,
            None => Some(self.workers()),
        }
    }

    pub fn database(&self) -> Result<Database, String> {
        match self.database.as_deref() {
            None | Some("sqlite") => Ok(Database::Sqlite(self.data_dir.clone())),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Database::Postgres(url.to_owned()))
            }
            Some(other) => Err(format!(
                "--database {other:?}: expected `sqlite` or a postgres:// URL"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("weft-service").chain(line.iter().copied()))
    }

    #[test]
    fn malloc_arenas_as_given_else_one_per_worker_unless_the_environment_sets_them() {
        let given = args(&["--workers", "3", "--malloc-arenas", "5"]).unwrap();
        assert_eq!(given.malloc_arenas_unless(false), Some(5));
        assert_eq!(given.malloc_arenas_unless(true), Some(5));
        let default = args(&["--workers", "3"]).unwrap();
        assert_eq!(default.malloc_arenas_unless(false), Some(3));
        assert_eq!(default.malloc_arenas_unless(true), None);
        let zero = args(&["--malloc-arenas", "0"]).unwrap_err().to_string();
        assert!(zero.contains("--malloc-arenas"), "{zero}");
    }
}
